"""A run of a script: the limits it runs under and what it did (plain data).

Its own small module so that the sandbox side (``tasks.runner``, the config's
``sandbox.limits``) loads only this, not every model of the pipeline. ``bot.models``
re-exports both.
"""

from __future__ import annotations

from bot.records import field_names, record

TYPE_CHECKING = False  # typing's, without importing typing (5 ms): see bot/records.py
if TYPE_CHECKING:
    from typing import Any


@record
class RunLimits:
    """What one run may use: wall time, memory, processes, output kept, disk."""

    timeout_s: float = 300.0
    memory_bytes: int = 8 * 1024**3
    max_processes: int = 512
    output_bytes: int = 2 * 1024**2  # kept per stream (the tail)
    disk_bytes: int = 1024**3


@record
class RunResult:
    """What one run of a script did. Produced by ``tasks.runner``; pure data."""

    exit_code: int | None  # None when killed by a signal
    signal: int | None  # e.g. 11 for SIGSEGV
    seconds: float
    timed_out: bool = False
    stdout_tail: str = ""
    stderr_tail: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    # Which limit cut the run, if any: "time" | "memory" | "processes" | "output" | "disk"
    limit_hit: str | None = None
    sandbox: str = ""  # backend that ran it: bwrap | docker | none

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in field_names(self)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunResult:
        return cls(**d)
