"""Results over time in the service: re-test on a new main build, notify on change, bisect.

The plain functions behind the tasks (tests call them directly, as ``bot.service``'s):

    sweep_new_main (triage queue)  a new main build is current: send a low-priority re-test
                                   run for every open triaged issue that still fails on main
    report_retest  (triage queue)  a re-test run came back: change -> edit the comment, the
                                   label, one short comment, a bisection; no change -> nothing
    report_bisect  (triage queue)  a bisection came back: put its commit into the comment

Decisions are ``bot.history``'s (pure); this module only moves data between Redis, the queues
and GitHub.
"""

from __future__ import annotations

import logging
import time
import uuid
from typing import Any

from bot.history import (
    FIXED_ON_MAIN_COLOR,
    FIXED_ON_MAIN_DESCRIPTION,
    FIXED_ON_MAIN_SUFFIX,
    BisectResult,
    Change,
    History,
    HistoryKind,
    MatrixRow,
    change_message,
    history_line,
    insert_section,
    main_change,
    render_matrix,
    row_from_json,
    row_to_store,
    should_retest,
    with_bisection,
)
from bot.labels import MARKER, label_specs
from bot.models import Issue, RunResult
from bot.pipeline import Plan, conclude
from bot.render import is_own_label

log = logging.getLogger("reprobot.sweep")

REASON_NEW_MAIN = "new-main"
TASK_RUN = "reprobot.run"
TASK_BISECT = "reprobot.bisect"
# Celery priority of re-test and bisection messages (Redis: 0 is served first, 9 last), so a
# sweep waits behind every new issue on the same worker queue.
LOW_PRIORITY = 9


def fixed_label(prefix: str) -> str:
    return f"{prefix}{FIXED_ON_MAIN_SUFFIX}"


def is_own(prefix: str) -> Any:
    """The labels the bot manages: its outcome/verdict labels and fixed-on-main."""
    fixed = fixed_label(prefix).lower()
    return lambda name: is_own_label(name, prefix) or name.lower() == fixed


def label_colors(prefix: str) -> dict[str, tuple[str, str]]:
    specs = {name: (color, desc) for name, color, desc in label_specs(prefix)}
    specs[fixed_label(prefix)] = (FIXED_ON_MAIN_COLOR, FIXED_ON_MAIN_DESCRIPTION)
    return specs


def is_main(build: dict[str, Any] | None) -> bool:
    return bool(build) and str((build or {}).get("kind")) == "source"


# -- after every triage on main: remember it (the re-test set) --------------------------------
def remember_main(svc: Any, repo: str, number: int, row: MatrixRow, *, issue: dict[str, Any],
                  plan: dict[str, Any], comment: str, fixed_on_main: bool) -> None:
    """Store the issue's latest main result and put it into the re-test set."""
    record = {**row_to_store(row), "fixed_on_main": fixed_on_main, "issue": issue,
              "plan": plan, "comment": comment, "updated": time.time()}
    svc.state.set_main(repo, number, record)
    svc.state.set_matrix_row(repo, number, row.build, row_to_store(row))
    if plan.get("repro", {}).get("found"):
        svc.state.track(repo, number)


def forget(svc: Any, repo: str, number: int) -> dict[str, Any]:
    """The issue was closed: it leaves the re-test set (its results stay)."""
    return {"status": "untracked" if svc.state.untrack(repo, number) else "not-tracked"}


# -- a new main build --------------------------------------------------------------------------
def sweep_new_main(svc: Any, build: dict[str, Any], *, now: float | None = None
                   ) -> dict[str, Any]:
    """Send a re-test run on ``build`` for each tracked issue that still fails on main.

    Once per build commit. Runs go to the issue's worker queue at low priority; at most
    ``retest.per_hour`` are sent per hour (the rest wait for the next main build).
    """
    name, commit = str(build.get("name") or ""), str(build.get("commit") or "")
    if not name or not commit:
        return {"status": "no-commit"}
    if not svc.state.start_sweep(name, commit):
        return {"status": "already-swept"}
    cfg = svc.config
    hour = int((time.time() if now is None else now) // 3600)
    sent: list[str] = []
    capped = 0
    for repo, number in svc.state.tracked():
        main = svc.state.main(repo, number)
        if not main or main.get("commit") == commit:
            continue
        if not should_retest(str(main.get("verdict")), cfg.retest.verdicts,
                             fixed_on_main=bool(main.get("fixed_on_main"))):
            continue
        if not svc.state.take_retest_slot(hour, cfg.retest.per_hour):
            capped += 1
            continue
        the_plan = Plan.from_dict(main["plan"])
        job_id = uuid.uuid4().hex
        record = {
            "job_id": job_id, "repo": repo, "number": number, "reason": REASON_NEW_MAIN,
            "issue": main["issue"], "plan": main["plan"], "worker": the_plan.worker,
            "repro_sha256": the_plan.repro.sha256, "build": name,
            "previous": {k: main.get(k) for k in ("build", "version", "commit", "outcome",
                                                  "verdict", "seconds", "kind", "built_at")},
            "status": "queued", "created": time.time(),
        }
        svc.state.new_side_job(job_id, record)
        request = {
            "job_id": job_id, "repo": repo, "number": number,
            "script": the_plan.repro.script, "args": list(the_plan.repro.args),
            "needs": list(the_plan.needs), "gpu": the_plan.worker == "gpu", "build": name,
            "side": True,
        }
        svc.enqueue(TASK_RUN, [request], the_plan.worker, priority=LOW_PRIORITY)
        sent.append(f"{repo}#{number}")
    log.info("sweep of %s@%s: %d re-tests sent, %d over the hourly cap", name, commit[:12],
             len(sent), capped)
    return {"status": "swept", "sent": sent, "capped": capped}


# -- a re-test came back -----------------------------------------------------------------------
def report_retest(svc: Any, job: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """Compare the re-test on the new main with the old main; say something only on change.

    The caller holds the issue's lock and has checked that the job was not reported yet.
    """
    cfg = svc.config
    prefix = cfg.label_prefix
    repo, number, job_id = job["repo"], int(job["number"]), job["job_id"]
    issue = Issue.from_dict(job["issue"])
    the_plan = Plan.from_dict(job["plan"])
    run = RunResult.from_dict(result["run"]) if result.get("run") else None
    env = {str(k): str(v) for k, v in (result.get("environment") or {}).items()}
    infra = str(result.get("infra_error") or "")
    build = dict(result.get("build") or {"name": job.get("build", ""), "kind": "source"})
    triage = conclude(issue, the_plan, run, env, label_prefix=prefix,
                      infra_error=infra or ("" if run else "the worker returned no run result"))
    new = row_from_json({**build, "build": build.get("name"), "outcome": triage.outcome.value,
                         "verdict": triage.verdict.value,
                         "seconds": run.seconds if run else None})
    old = row_from_json(job.get("previous") or {})
    main = svc.state.main(repo, number) or {}
    was_fixed = bool(main.get("fixed_on_main"))
    change = main_change(old, new, fixed_on_main=was_fixed, verdicts=cfg.retest.verdicts)
    svc.state.record_result(job_id, repo, number, {
        "job_id": job_id, "repo": repo, "number": number, "reason": REASON_NEW_MAIN,
        "outcome": new.outcome, "verdict": new.verdict, "build": new.build,
        "commit": new.commit, "change": change.value, "seconds": new.seconds,
        "repro_sha256": job.get("repro_sha256", ""), "finished": time.time(),
        "labels": list(triage.labels), "title": issue.title, "url": issue.url,
    })
    svc.state.update_job(job_id, status="done", outcome=new.outcome, verdict=new.verdict,
                         change=change.value)
    fixed_now = change == Change.FIXED or (was_fixed and change == Change.NONE)
    if change == Change.NONE:
        # Nothing to tell anyone: no comment, no edit. The stored main result moves on only
        # when the run says something (an inconclusive run keeps the last real one).
        if new.state or new.verdict in cfg.retest.verdicts:
            remember_main(svc, repo, number, new, issue=job["issue"], plan=job["plan"],
                          comment=str(main.get("comment") or ""), fixed_on_main=fixed_now)
        return {"status": "no-change", "job_id": job_id, "outcome": new.outcome,
                "verdict": new.verdict}

    history = History(kind=HistoryKind.FIXED if change == Change.FIXED
                      else HistoryKind.REGRESSED, older=old, newer=new)
    comment = insert_section(triage.comment, render_matrix([new, old], history))
    gh = svc.github
    gh.upsert_bot_comment(repo, number, comment, MARKER)
    labels = list(triage.labels) + ([fixed_label(prefix)] if fixed_now else [])
    gh.set_bot_labels(repo, number, labels, is_own=is_own(prefix), specs=label_colors(prefix))
    gh.reply(repo, number, change_message(change, old, new, label=fixed_label(prefix)))
    remember_main(svc, repo, number, new, issue=job["issue"], plan=job["plan"],
                  comment=comment, fixed_on_main=fixed_now)
    bisect = _send_bisect(svc, job, the_plan, old, new)
    return {"status": "changed", "change": change.value, "job_id": job_id,
            "outcome": new.outcome, "verdict": new.verdict, "bisect": bisect}


def _send_bisect(svc: Any, job: dict[str, Any], the_plan: Plan, old: MatrixRow,
                 new: MatrixRow) -> str:
    if not (old.commit and new.commit and old.kind == "source" and new.kind == "source"
            and old.state and new.state and old.state != new.state):
        return ""
    bisect_id = uuid.uuid4().hex
    request = {
        "job_id": bisect_id, "parent": job["job_id"], "repo": job["repo"],
        "number": int(job["number"]), "build": new.build, "old": row_to_store(old),
        "new": row_to_store(new), "old_state": old.state,
        "max_steps": svc.config.bisect.max_steps, "issue": job["issue"], "plan": job["plan"],
        "gpu": the_plan.worker == "gpu",
    }
    svc.state.new_side_job(bisect_id, {**request, "reason": "bisect", "status": "queued",
                                       "created": time.time()})
    svc.enqueue(TASK_BISECT, [request], the_plan.worker, priority=LOW_PRIORITY)
    return bisect_id


# -- a bisection came back ---------------------------------------------------------------------
def report_bisect(svc: Any, result: dict[str, Any]) -> dict[str, Any]:
    """Put "fixed by <sha>" (or the narrowed range) into the sticky comment, once."""
    repo, number = str(result["repo"]), int(result["number"])
    job_id = str(result["job_id"])
    with svc.state.issue_lock(repo, number):
        if not svc.state.mark_reported(job_id):
            return {"status": "duplicate", "job_id": job_id}
        if result.get("error"):
            svc.state.update_job(job_id, status="failed", error=str(result["error"]))
            log.warning("bisection %s of %s#%s failed: %s", job_id, repo, number,
                        result["error"])
            return {"status": "failed", "job_id": job_id}
        bis = BisectResult(good=str(result.get("good") or ""), bad=str(result.get("bad") or ""),
                           commit=str(result.get("commit") or ""),
                           subject=str(result.get("subject") or ""),
                           steps=int(result.get("steps") or 0),
                           kind=HistoryKind(str(result.get("kind") or "fixed")))
        old, new = row_from_json(result["old"]), row_from_json(result["new"])
        history = with_bisection(History(kind=bis.kind, older=old, newer=new), bis)
        main = svc.state.main(repo, number) or {}
        comment = str(main.get("comment") or "")
        svc.state.update_job(job_id, status="done", **bis.to_json())
        svc.state.set_bisect(repo, number, {**bis.to_json(), "old": result["old"],
                                            "new": result["new"], "finished": time.time()})
        if not comment or (main.get("commit") and main.get("commit") != new.commit):
            return {"status": "stale", "job_id": job_id, **bis.to_json()}
        lines = comment.split("\n")
        at = next((i for i, x in enumerate(lines) if x.startswith("**History:**")), None)
        if at is None:
            comment = insert_section(comment, [history_line(history)])
        else:
            lines[at] = history_line(history)
            comment = "\n".join(lines)
        svc.github.upsert_bot_comment(repo, number, comment, MARKER)
        svc.state.set_main(repo, number, {**main, "comment": comment})
    return {"status": "reported", "job_id": job_id, **bis.to_json()}
