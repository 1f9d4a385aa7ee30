"""Find the runnable repro script in an issue: ``extract_repro(issue) -> Repro``.

Pure: markdown text in, a :class:`bot.models.Repro` out (no I/O; Python is only *parsed*).
See :mod:`bot.extract.pipeline` for the order of search.
"""

from __future__ import annotations

from bot.extract.pipeline import extract_repro

__all__ = ["extract_repro"]
