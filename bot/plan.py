"""The first half of the pipeline: what to run and where (extract + needs + worker kind).

Kept apart from ``bot.pipeline`` (classification, comparison, rendering) so that a caller can
start the run as soon as the plan is known and load the rest while the script runs.
"""

from __future__ import annotations

import re
from typing import Any

from bot import lazyre
from bot.extract import extract_repro
from bot.fragments import fragment_at_start, fragment_reason
from bot.models import Issue, Repro
from bot.needs import GPU_DEVICES, detect_needs, device_of_string, needs_from_text
from bot.records import record
from bot.runs import INTERMITTENT_RUNS, VARYING_RUNS
from bot.vocabulary import INTERMITTENT_RE, VARYING_OUTPUT_RE


@record
class Plan:
    repro: Repro
    needs: tuple[str, ...]
    worker: str  # "cpu" | "gpu"
    # Runs to make while they pass: more than one when the report says its failure is
    # intermittent ("crashes in about half the runs"); see ``bot.runs.again_while_clean``.
    attempts: int = 1
    # Why more than one: "intermittent", or "varying" (the printed values change between runs)
    rerun_for: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"repro": self.repro.to_dict(), "needs": list(self.needs), "worker": self.worker,
                "attempts": self.attempts, "rerun_for": self.rerun_for}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Plan:
        return cls(Repro.from_dict(d["repro"]), tuple(d["needs"]), d["worker"],
                   int(d.get("attempts") or 1), str(d.get("rerun_for") or ""))


def worker_kind(needs: tuple[str, ...]) -> str:
    """A run that wants a GPU device goes to a GPU worker; everything else to a CPU one."""
    return "gpu" if any(n in GPU_DEVICES for n in needs) else "cpu"


def plan(issue: Issue) -> Plan:
    repro = extract_repro(issue)
    if repro.found:
        missing = fragment_at_start(repro.script)
        if missing:
            # It would stop on a NameError before anything runs: part of a longer program,
            # not a repro (the comment names what is missing; nothing is run).
            repro = Repro(found=False, blocks=repro.blocks, shape="none",
                          reason=fragment_reason(missing))
    if repro.found:
        # (and the device an argument names: `python repro.py cuda`, `--target "cuda -arch=..."`)
        needs = tuple(sorted({*detect_needs(repro.script),
                              *(d for a in repro.args if (d := device_of_string(a)))}))
    else:
        # Nothing to run: what the report itself says it needs (frameworks, build flags).
        own = [c.body for c in issue.comments if not issue.author or c.author == issue.author]
        needs = needs_from_text("\n".join([issue.title, issue.body, *own]))
    attempts, why = 1, ""
    if repro.found and says_intermittent(issue):
        attempts, why = INTERMITTENT_RUNS, "intermittent"
    elif repro.found and says_output_varies(issue):
        attempts, why = VARYING_RUNS, "varying"
    return Plan(repro=repro, needs=needs, worker=worker_kind(needs), attempts=attempts,
                rerun_for=why)


# A fenced block (code, logs): not the reporter's prose.
_FENCED_RE = lazyre.compile(r"^ {0,3}(`{3,}|~{3,}).*?(?:^ {0,3}\1[ \t]*$|\Z)", re.M | re.S)


def _own_prose(issue: Issue) -> list[str]:
    """The reporter's texts (title, body, own comments) without their code blocks and logs."""
    own = [c.body for c in issue.comments if not issue.author or c.author == issue.author]
    return [_FENCED_RE.sub("", text) for text in (issue.title, issue.body, *own)]


def says_output_varies(issue: Issue) -> bool:
    """The reporter's prose says the values it prints change from run to run ("random numbers,
    different every time"): a second run that prints other values shows it."""
    return any(VARYING_OUTPUT_RE.search(text) for text in _own_prose(issue))


def says_intermittent(issue: Issue) -> bool:
    """The reporter's prose (title, body, own comments; not code or logs) says the failure
    comes only in some runs."""
    return any(INTERMITTENT_RE.search(text) for text in _own_prose(issue))
