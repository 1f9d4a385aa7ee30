"""The ``reprobot`` console script.

For ``reprobot triage``, the sandbox is started first, from the launch recipe the last triage
saved (``tasks.launch.quick_start``), before any of the bot's own modules are imported: the
bot takes that run if the recipe is still the one it computes, and kills it unused otherwise.
Then ``bot.cli`` runs the command. Everything else goes straight to ``bot.cli``.
"""

import os
import sys


def console() -> None:
    from tasks.launch import quick_start

    early = quick_start(sys.argv[1:], os.environ)

    from bot.cli import console as run

    run(early)
