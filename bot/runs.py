"""A run of a script: the limits it runs under and what it did (plain data).

Its own small module so that the sandbox side (``tasks.runner``, the config's
``sandbox.limits``) loads only this, not every model of the pipeline. ``bot.models``
re-exports both.
"""

from __future__ import annotations

from bot.records import field_names, record, replace

TYPE_CHECKING = False  # typing's, without importing typing (5 ms): see bot/records.py
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

#: How many runs a report gets that says its failure comes only sometimes ("crashes randomly,
#: about half the runs"): a run that passes is made again, up to this many in all.
INTERMITTENT_RUNS = 5
#: How many runs a report gets that says its printed values change from run to run: up to
#: three (memory read before it was written can hold the same junk twice in a row; a third run
#: is made only then).
VARYING_RUNS = 3
#: ...but no run is started once the runs so far took this long together.
RERUN_BUDGET_S = 120.0


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
    # How many runs were made (this is the last): more than one only for a report that says its
    # failure is intermittent, where each run that passed was made again.
    runs: int = 1
    # A run made again because the report says its values change from run to run: this run
    # passed, like the one before it, and printed other output (see ``again_while_clean``).
    output_varied: bool = False
    # Why runs were made again (more than one): "intermittent" (the report says the failure
    # comes only sometimes) or "varying" (it says the printed values change from run to run).
    rerun_for: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in field_names(self)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunResult:
        return cls(**d)


def ran_clean(run: RunResult) -> bool:
    """Exit 0, no signal, no limit: a run worth making again when the failure is intermittent."""
    return (run.exit_code == 0 and run.signal is None and not run.timed_out
            and run.limit_hit is None)


def again_while_clean(first: RunResult, again: Callable[[], RunResult], attempts: int,
                      reason: str = "intermittent") -> RunResult:
    """``first``, or, while the runs pass and fewer than ``attempts`` were made (and they took
    under :data:`RERUN_BUDGET_S`), the next run from ``again``: the first that fails, or the last
    that passed, with ``runs`` saying how many were made."""
    run, made, spent = first, 1, first.seconds
    while made < attempts and ran_clean(run) and spent < RERUN_BUDGET_S:
        before = run
        run = again()
        made += 1
        spent += run.seconds
        if ran_clean(run) and run.stdout_tail != before.stdout_tail:
            # two clean runs printed different output: that is what the rerun was for
            return replace(run, runs=made, output_varied=True, rerun_for=reason)
    return replace(run, runs=made, rerun_for=reason) if made > 1 else run
