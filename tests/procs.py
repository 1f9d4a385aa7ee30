"""Process checks shared by the tests that start sandboxes."""

from __future__ import annotations

import os


def alive_in_group(pgid: int) -> bool:
    """A process of the group still runs (a zombie, dead and waiting for the host's init to
    reap it, is not running)."""
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.getpgid(int(name)) != pgid:
                    continue
                with open(f"/proc/{name}/stat") as f:
                    state = f.read().rpartition(")")[2].split()[0]
            except (OSError, IndexError):
                continue
            if state != "Z":
                return True
    return False
