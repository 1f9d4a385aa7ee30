"""The triage pipeline composed from its pure stages.

``plan`` (extract + needs + worker kind, in ``bot.plan``) runs before the script; ``conclude``
(classify, compare, labels, render) runs after it. Both are pure: the run itself and the environment probe are done
by the caller (the CLI, or the Celery tasks) and passed in as plain data.
"""

from __future__ import annotations

from bot.builds import BuildInfo
from bot.classify import (
    account_for_absent_device,
    account_for_caught_error,
    account_for_import_only,
    account_for_printed_check,
    account_for_shown_output,
    account_for_unchecked_index,
    account_for_varied_output,
    classify,
)
from bot.compare import account_for_cut_script, compare
from bot.models import (
    Classification,
    Issue,
    Outcome,
    Reported,
    RunResult,
    Triage,
    Verdict,
)
from bot.plan import Plan, plan, worker_kind
from bot.records import replace
from bot.render import labels_for, render_comment
from bot.reported import parse_reported

__all__ = ["UNREAD", "Plan", "conclude", "plan", "read_report", "worker_kind"]


class Unread:
    """``conclude``'s default for ``reported``: not read yet (``None`` is an answer: the issue
    says nothing specific)."""


UNREAD = Unread()


def read_report(issue: Issue, the_plan: Plan) -> Reported | None:
    """What the reporter saw: the part of ``conclude`` that needs no run, so a caller can do it
    while the script runs."""
    return parse_reported(issue, the_plan.repro)


def conclude(
    issue: Issue,
    the_plan: Plan,
    run: RunResult | None,
    environment: dict[str, str],
    *,
    label_prefix: str = "repro: ",
    infra_error: str = "",
    build: BuildInfo | None = None,
    reported: Reported | None | Unread = UNREAD,
) -> Triage:
    """Classify the run, compare it with the report, pick labels and render the comment.

    ``infra_error`` is set when OUR side failed (the sandbox could not start, the worker died):
    the outcome is then ``infra-error`` and the verdict ``inconclusive``, never a result of the
    user's script. ``build`` is the TVM build it ran on (named, with its commit, in the comment).
    ``reported``: :func:`read_report`'s answer when the caller has it already (the CLI reads the
    report beside the running script); by default it is read here.
    """
    repro = the_plan.repro
    if not repro.found:
        cls = Classification(Outcome.NO_REPRO, detail=repro.reason)
    elif infra_error or run is None:
        cls = Classification(Outcome.INFRA_ERROR, signature=infra_error or "no run result")
    else:
        cls = classify(run, script=repro.script, needs=the_plan.needs, environment=environment)
    if isinstance(reported, Unread):
        reported = read_report(issue, the_plan)
    cls = account_for_absent_device(cls, reported, the_plan.needs, environment, repro.script)
    cls = account_for_import_only(cls, repro.script, issue.title, reported,
                                  ran_as_command=repro.shape == "shell-wrapped")
    cls = account_for_shown_output(cls, run, repro.shown_output, reported, repro.script)
    cls = account_for_varied_output(cls, run, repro.script, reported)
    cls = account_for_unchecked_index(cls, run, reported)
    cls = account_for_printed_check(cls, run, repro.script, reported)
    cls = account_for_caught_error(cls, run, repro.script, reported)
    comparison = account_for_cut_script(compare(reported, cls), cls, repro.cut_at)
    verdict = comparison.verdict
    if cls.outcome == Outcome.INFRA_ERROR:
        verdict = Verdict.INCONCLUSIVE
    labels = labels_for(cls.outcome, verdict, the_plan.needs, prefix=label_prefix)
    triage = Triage(
        outcome=cls.outcome,
        verdict=verdict,
        repro=repro,
        needs=the_plan.needs,
        run=run if repro.found else None,
        classification=cls,
        reported=reported,
        evidence=comparison.evidence,
        labels=labels,
        environment=dict(environment),
        build=build if repro.found else None,
    )
    return replace(triage, comment=render_comment(triage, label_prefix=label_prefix))
