"""Plain data shared by every stage of the pipeline.

Everything here is immutable, JSON-friendly and free of I/O. The stages are pure functions
over these types (see ``bot.pipeline``); the shell (CLI, Celery tasks, web app) moves them
between processes with ``to_dict`` / ``from_dict``.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import Any

from bot.builds import BuildInfo
from bot.records import asdict, field, record
from bot.runs import RunLimits as RunLimits  # (re-exported, with RunResult)
from bot.runs import RunResult as RunResult


class Outcome(StrEnum):
    """What running the repro did (exactly one per run)."""

    CRASH = "crash"  # killed by SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL
    INTERNAL_ERROR = "internal-error"  # TVM's own checks: InternalError, "Check failed:"
    TVM_ERROR = "tvm-error"  # another error raised inside TVM
    WRONG_RESULT = "wrong-result"  # the script's own numeric check failed
    PYTHON_ERROR = "python-error"  # the script's own code failed, not TVM
    API_MISMATCH = "api-mismatch"  # script targets another TVM API (tvm.* import/attr error)
    MISSING_DEPENDENCY = "missing-dependency"  # a non-TVM package is missing
    NEEDS_GPU = "needs-gpu"  # the device the script wants is absent on this worker
    RESOURCE_LIMIT = "resource-limit"  # memory / processes / output / disk limit hit
    TIMEOUT = "timeout"  # wall-time limit hit
    PASSED = "passed"  # exit 0
    NO_REPRO = "no-repro"  # nothing runnable in the issue
    INFRA_ERROR = "infra-error"  # OUR side failed (sandbox, interpreter, worker); never the user's


class Verdict(StrEnum):
    REPRODUCED = "reproduced"
    DIFFERENT_FAILURE = "different-failure"
    NOT_REPRODUCED = "not-reproduced"
    INCONCLUSIVE = "inconclusive"


# Outcomes that mean "the run tells us nothing about the reported bug".
INCONCLUSIVE_OUTCOMES = frozenset(
    {
        Outcome.NO_REPRO,
        Outcome.API_MISMATCH,
        Outcome.MISSING_DEPENDENCY,
        Outcome.TIMEOUT,
        Outcome.NEEDS_GPU,
        Outcome.RESOURCE_LIMIT,
        Outcome.INFRA_ERROR,
    }
)

# Outcomes that are a failure of the repro (the kind of thing a bug report describes).
FAILURE_OUTCOMES = frozenset(
    {
        Outcome.CRASH,
        Outcome.INTERNAL_ERROR,
        Outcome.TVM_ERROR,
        Outcome.WRONG_RESULT,
        Outcome.PYTHON_ERROR,
    }
)


@record
class Comment:
    author: str
    body: str


@record
class Issue:
    """An issue as the bot sees it: the GitHub REST/webhook ``issue`` object, reduced."""

    title: str
    body: str
    author: str = ""
    labels: tuple[str, ...] = ()
    comments: tuple[Comment, ...] = ()
    number: int | None = None
    repo: str = ""  # "owner/name", when known
    url: str = ""

    @classmethod
    def from_github(cls, data: dict[str, Any], repo: str = "") -> Issue:
        """Build from a GitHub issue object (REST or a webhook's ``issue`` field).

        Comments may be given inline as ``comments: [{"user": {"login": ...}, "body": ...}]``
        (a number there, as the REST API gives, means "not included").
        """
        raw_comments = data.get("comments")
        comments: tuple[Comment, ...] = ()
        if isinstance(raw_comments, list):
            comments = tuple(
                Comment(author=_login(c.get("user")), body=str(c.get("body") or ""))
                for c in raw_comments
                if isinstance(c, dict)
            )
        labels = tuple(
            str(lb.get("name", "")) if isinstance(lb, dict) else str(lb)
            for lb in (data.get("labels") or [])
        )
        number = data.get("number")
        return cls(
            title=str(data.get("title") or ""),
            body=str(data.get("body") or ""),
            author=_login(data.get("user")),
            labels=labels,
            comments=comments,
            number=int(number) if isinstance(number, int) else None,
            repo=repo,
            url=str(data.get("html_url") or ""),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Issue:
        return cls(
            title=d["title"],
            body=d["body"],
            author=d.get("author", ""),
            labels=tuple(d.get("labels", ())),
            comments=tuple(Comment(**c) for c in d.get("comments", ())),
            number=d.get("number"),
            repo=d.get("repo", ""),
            url=d.get("url", ""),
        )


def _login(user: Any) -> str:
    if isinstance(user, dict):
        return str(user.get("login") or "")
    return ""


@record
class Repro:
    """The runnable script found in an issue (or why none was found)."""

    found: bool
    script: str = ""
    # Which code blocks made the script: "body#0", "comment1#2", "body:unfenced", ...
    blocks: tuple[str, ...] = ()
    # Command-line arguments the author said to use.
    args: tuple[str, ...] = ()
    # fenced | multi-block | unfenced | shell-wrapped | interactive | none
    shape: str = "none"
    # Human-readable reason when not found (goes into the no-repro comment), or a note.
    reason: str = ""
    # The output the author shows the script printing (a block right after it, introduced as
    # its output): a run that prints the same shows the same result.
    shown_output: str = ""
    # The paste ends inside an unfinished statement: the script stops before it, and this is
    # the first line of the issue's script that was dropped (0: the script is whole).
    cut_at: int = 0

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.script.encode()).hexdigest() if self.found else ""

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["sha256"] = self.sha256
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Repro:
        return cls(
            found=d["found"],
            script=d.get("script", ""),
            blocks=tuple(d.get("blocks", ())),
            args=tuple(d.get("args", ())),
            shape=d.get("shape", "none"),
            reason=d.get("reason", ""),
            shown_output=d.get("shown_output", ""),
            cut_at=int(d.get("cut_at", 0)),
        )


@record
class Classification:
    outcome: Outcome
    # The line that decided it, e.g. "InternalError: Check failed: (x) is false: ..."
    signature: str = ""
    # Extra explanation for the comment, e.g. "`tvm.relay` was removed (Relax replaces it)".
    detail: str = ""
    evidence: tuple[str, ...] = ()
    # A crash outside TVM: the frames that matter (innermost first, interpreter internals
    # dropped), for the comment to show instead of the whole native backtrace.
    frames: tuple[str, ...] = ()


@record
class Reported:
    """What the reporter says they saw."""

    outcome: Outcome | None
    signature: str = ""
    evidence: tuple[str, ...] = ()
    # It ran to the end for the reporter, and the complaint is its speed ("40x slower than
    # numpy"): one run on a shared worker cannot confirm or refute that.
    about_speed: bool = False
    # Values the reporter quotes in inline code as what TVM gave ("TVM gives `[0. nan 2.]` but
    # numpy gives ..."): a run that prints them shows the same wrong result.
    values: tuple[str, ...] = ()
    # It ran to the end for the reporter, and the complaint is that TVM took it ("silently
    # accepts an out-of-range constant", "shouldn't TVM reject this?"): TVM refusing it now with
    # its own error is the fix the report asks for.
    about_acceptance: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "outcome": self.outcome.value if self.outcome else None,
            "signature": self.signature,
        }
        if self.about_speed:
            out["about_speed"] = True
        if self.values:
            out["values"] = list(self.values)
        if self.about_acceptance:
            out["about_acceptance"] = True
        return out


@record
class Comparison:
    verdict: Verdict
    evidence: tuple[str, ...] = ()


@record
class Triage:
    """The whole result for one issue; ``to_json`` is the stable ``--json`` interface."""

    outcome: Outcome
    verdict: Verdict
    repro: Repro
    needs: tuple[str, ...]
    run: RunResult | None
    classification: Classification
    reported: Reported | None
    evidence: tuple[str, ...]
    labels: tuple[str, ...]
    environment: dict[str, str] = field(default_factory=dict)
    comment: str = ""
    build: BuildInfo | None = None  # the TVM build it ran on (None: not run)

    def to_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome.value,
            "verdict": self.verdict.value,
            "repro": self.repro.to_dict(),
            "needs": list(self.needs),
            "run": self.run.to_dict() if self.run else None,
            "signature": self.classification.signature,
            "detail": self.classification.detail,
            "reported": self.reported.to_dict() if self.reported else None,
            "evidence": list(self.evidence),
            "labels": list(self.labels),
            "environment": dict(self.environment),
            "build": self.build.ref() if self.build else None,
            "comment": self.comment,
        }
