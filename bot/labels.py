"""The bot's marker, labels and fixed messages (constants only).

Every label the bot sets is ``<prefix><suffix>`` (prefix configurable, default ``"repro: "``):
one per outcome, one per verdict, and ``needs-gpu`` when the script wants a GPU device. The bot
only ever adds or removes labels that :func:`is_own_label` recognises.
"""

from __future__ import annotations

from bot.models import Outcome, Verdict
from bot.records import record

# First line of every comment the bot writes: later runs find it and edit it in place.
MARKER = "<!-- reprobot -->"
DEFAULT_PREFIX = "repro: "
NEEDS_GPU_SUFFIX = "needs-gpu"


@record
class LabelSpec:
    suffix: str
    color: str  # 6 hex digits, no '#', as the GitHub API wants it
    description: str  # at most 100 characters (GitHub's limit)

    def name(self, prefix: str = DEFAULT_PREFIX) -> str:
        return f"{prefix}{self.suffix}"


OUTCOME_LABELS: dict[Outcome, LabelSpec] = {
    Outcome.CRASH: LabelSpec(
        "crash", "b60205", "The repro crashes the process (SIGSEGV, SIGABRT, ...)"
    ),
    Outcome.INTERNAL_ERROR: LabelSpec(
        "internal-error",
        "d93f0b",
        "The repro trips a TVM internal check (Check failed / InternalError)",
    ),
    Outcome.TVM_ERROR: LabelSpec(
        "tvm-error", "e99695", "The repro fails with an error raised inside TVM"
    ),
    Outcome.WRONG_RESULT: LabelSpec(
        "wrong-result", "fbca04", "The repro's own check of the result fails"
    ),
    Outcome.PYTHON_ERROR: LabelSpec(
        "python-error", "c5def5", "The repro fails in its own Python code, not in TVM"
    ),
    Outcome.API_MISMATCH: LabelSpec(
        "api-mismatch", "bfd4f2", "The repro uses a TVM API that the current TVM removed or renamed"
    ),
    Outcome.MISSING_DEPENDENCY: LabelSpec(
        "missing-dependency", "d4c5f9", "The repro needs a package the worker does not have"
    ),
    Outcome.NEEDS_GPU: LabelSpec(NEEDS_GPU_SUFFIX, "5319e7", "The repro needs a GPU device"),
    Outcome.RESOURCE_LIMIT: LabelSpec(
        "resource-limit",
        "f9d0c4",
        "The repro hit a sandbox limit (memory, processes, output, disk)",
    ),
    Outcome.TIMEOUT: LabelSpec(
        "timeout", "fef2c0", "The repro did not finish within the time limit"
    ),
    Outcome.PASSED: LabelSpec("passed", "0e8a16", "The repro runs to the end without failing"),
    Outcome.NO_REPRO: LabelSpec(
        "no-repro", "ededed", "No runnable repro script was found in the issue"
    ),
    Outcome.INFRA_ERROR: LabelSpec(
        "infra-error", "000000", "The bot's own infrastructure failed; not a result of the repro"
    ),
}

VERDICT_LABELS: dict[Verdict, LabelSpec] = {
    Verdict.REPRODUCED: LabelSpec(
        "reproduced", "b60205", "The bot reproduced the reported failure"
    ),
    Verdict.DIFFERENT_FAILURE: LabelSpec(
        "different-failure", "fbca04", "The repro fails, but not as reported"
    ),
    Verdict.NOT_REPRODUCED: LabelSpec(
        "not-reproduced", "0e8a16", "The repro runs without failing on the current TVM"
    ),
    Verdict.INCONCLUSIVE: LabelSpec(
        "inconclusive", "cccccc", "The run could not confirm or refute the report"
    ),
}

ALL_LABELS: tuple[LabelSpec, ...] = (*OUTCOME_LABELS.values(), *VERDICT_LABELS.values())
_OWN_SUFFIXES = frozenset(spec.suffix for spec in ALL_LABELS)


def label_specs(prefix: str = DEFAULT_PREFIX) -> tuple[tuple[str, str, str], ...]:
    """``(name, color, description)`` of every label the bot may set, for creating them."""
    return tuple((spec.name(prefix), spec.color, spec.description) for spec in ALL_LABELS)


def is_own_label(name: str, prefix: str = DEFAULT_PREFIX) -> bool:
    """True only for labels this bot manages (its prefix and one of its suffixes)."""
    return bool(prefix) and name.startswith(prefix) and name[len(prefix) :] in _OWN_SUFFIXES


# ---------------------------------------------------------------------------------------------
# Fixed messages

RERUN_HINT = (
    "To run it again (after editing the issue, or on a newer TVM), the issue author or a "
    "maintainer can comment `/retest`."
)
NO_REPRO_ASK = (
    "Could you add a minimal, self-contained Python script that shows the problem, in a "
    "```` ```python ```` code block? The bot will run it against the current TVM and report back."
)
INFRA_MESSAGE = (
    "Our side failed: the bot could not run the script, and trying again did not help. This "
    "is not a result of your script. A maintainer can comment `/retest` once it is fixed."
)
API_MISMATCH_ASK = (
    "The script stops on a TVM API that no longer exists, so it cannot show the reported "
    "problem on the current TVM. Could you port it to the current API?"
)
MISSING_DEPENDENCY_NOTE = (
    "The script stops on a package the worker does not have, before it reaches the reported "
    "problem. If the problem can be shown with TVM alone, a script without that package "
    "would let the bot check it."
)
NEEDS_GPU_NOTE = "The script needs a GPU device that this worker does not have."
UNCHECKED_RESULT_NOTE = (
    "The script does not check its own result, so a clean run cannot rule out the reported "
    "wrong result: compare its output below with what you expected, or add an assertion "
    "(e.g. `numpy.testing.assert_allclose`) and comment `/retest`."
)
STATUS_QUEUED = "queued"
STATUS_RUNNING = "running"
