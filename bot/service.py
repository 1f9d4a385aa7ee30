"""The plain functions behind the Celery tasks (tests call them directly).

    triage_issue  (triage queue)  fetch the issue, plan, post "queued", send the run job
    run_job       (cpu/gpu queue) run the script in the sandbox, probe the environment
    mark_running  (triage queue)  comment "running on a <kind> worker"
    report        (triage queue)  conclude, edit the one comment, set labels, record the result

Only ``run_job`` runs on a cpu/gpu worker, and it touches neither GitHub nor the issue: it gets
the script and its arguments as JSON and returns the run as JSON.

Idempotency: every request becomes a job with a fresh id stored as the issue's newest job. A job
that is no longer the newest skips (superseded). A report is recorded once per job id (a
redelivered run or report posts nothing twice; the comment is found by its marker and edited).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from bot import sweep
from bot.builds import BuildInfo
from bot.config import Config
from bot.errors import InfraError
from bot.events import ONLY_IF_CHANGED, REASON_CLOSED, REASON_RETEST, is_bot_comment
from bot.history import BuildInfo as HistoryBuild
from bot.history import (
    MatrixRow,
    match_build,
    parse_reported_version,
    row_from_build,
    row_to_store,
    with_matrix,
)
from bot.labels import MARKER, STATUS_QUEUED, STATUS_RUNNING
from bot.models import Comment, Issue, Repro, RunResult
from bot.pipeline import Plan, conclude, plan
from bot.render import render_status
from bot.runs import again_while_clean
from bot.state import State

log = logging.getLogger("reprobot.service")

RETEST_ROLES = frozenset({"triage", "write", "maintain", "admin"})
REACTION_ACK = "eyes"

MSG_RETEST_DENIED = (
    "@{user} `/retest` can be asked for by the issue's author or by someone with triage, "
    "write, maintain or admin permission on this repository."
)
MSG_RETEST_COOLDOWN = (
    "@{user} a run of this issue was asked for less than {cooldown} s ago; "
    "please try `/retest` again in {left} s."
)

EnqueueFn = Callable[[str, list[Any], str], None]


class ScriptRunner(Protocol):
    """What a cpu/gpu worker runs scripts with (``tasks.runner.SandboxRunner``: the sandbox
    backend chosen once at start). Injected by the caller: ``bot`` never imports ``tasks``."""

    def run(self, script: str, *, python: str, args: Sequence[str], gpu: bool,
            pass_env: Mapping[str, str]) -> RunResult: ...

    def environment(self, python: str) -> dict[str, str]: ...


@dataclass
class Services:
    """What the functions need, made once per worker process by ``tasks.app``."""

    config: Config
    state: State
    github_factory: Callable[[], Any]
    enqueue: EnqueueFn
    hostname: str = ""
    cache_dir: Path | None = None

    @property
    def github(self) -> Any:
        return self.github_factory()


# -- triage queue ------------------------------------------------------------------------------
def fetch_issue(svc: Services, repo: str, number: int) -> Issue:
    """The issue with its comments, less the bot's own comments (they are not the report)."""
    gh = svc.github
    data = gh.get_issue(repo, number)
    me = gh.bot_login() or svc.config.service.bot_login
    comments = tuple(
        Comment(author=str((c.get("user") or {}).get("login") or ""), body=str(c.get("body") or ""))
        for c in gh.get_comments(repo, number)
        if not is_bot_comment(c, me)
    )
    issue = Issue.from_github(data, repo=repo)
    return Issue(
        title=issue.title,
        body=issue.body,
        author=issue.author,
        labels=issue.labels,
        comments=comments,
        number=number,
        repo=repo,
        url=issue.url,
    )


def triage_issue(
    svc: Services,
    repo: str,
    number: int,
    reason: str,
    *,
    requested_by: str = "",
    comment_id: int | None = None,
    delivery: str = "",
    target: str = "",
) -> dict[str, Any]:
    """Decide whether and where to run the issue's script; returns what was done.

    ``target`` (from ``/retest all`` or ``/retest 0.26.0``): ``all`` runs on every ready build,
    a build name on that build; '' on the default build (and on the build of the version the
    report names, when there is one).
    """
    if reason == REASON_CLOSED:
        return sweep.forget(svc, repo, number)
    gh = svc.github
    if reason == REASON_RETEST and comment_id is not None:
        gh.react(repo, comment_id, REACTION_ACK)  # acknowledge at once
    issue = fetch_issue(svc, repo, number)

    if reason == REASON_RETEST:
        refused = _check_retest(svc, repo, number, issue, requested_by, comment_id)
        if refused:
            return {"status": refused}
    builds = run_builds(svc, issue, target)
    if builds is None:
        gh.reply(repo, number, MSG_NO_SUCH_BUILD.format(
            user=requested_by or "someone", build=target,
            builds=", ".join(f"`{b.name}`" for b in available_builds(svc.state)) or "none"))
        return {"status": "no-such-build"}

    with svc.state.issue_lock(repo, number):
        the_plan = plan(issue)
        sha = the_plan.repro.sha256
        if reason in ONLY_IF_CHANGED:
            current = svc.state.current_job(repo, number)
            job = svc.state.job(current) if current else None
            if job is not None and job.get("repro_sha256") == sha:
                return {"status": "unchanged", "job_id": current}
        job_id = uuid.uuid4().hex
        record = {
            "job_id": job_id,
            "repo": repo,
            "number": number,
            "title": issue.title,
            "url": issue.url,
            "reason": reason,
            "requested_by": requested_by,
            "delivery": delivery,
            "issue": issue.to_dict(),
            "plan": the_plan.to_dict(),
            "worker": the_plan.worker,
            "repro_sha256": sha,
            "status": "queued",
            "created": time.time(),
            "builds": builds,
            "force": reason == REASON_RETEST,
        }
        svc.state.new_job(job_id, record)
        svc.state.touch_issue(repo, number)
        if not the_plan.repro.found:
            summary = _finish(svc, record, None, {}, "")
            return {"status": "reported", "job_id": job_id, **summary}
        gh.upsert_bot_comment(
            repo, number, render_status(STATUS_QUEUED, the_plan.worker, the_plan.repro), MARKER
        )
        for slot, name in enumerate(builds):
            request = run_request(record, the_plan, name)
            request.update(slot=slot, force=record["force"])
            svc.enqueue("reprobot.run", [request], the_plan.worker)
        return {"status": "queued", "job_id": job_id, "worker": the_plan.worker,
                "builds": builds}


MSG_NO_SUCH_BUILD = (
    "@{user} there is no ready build named `{build}`; the builds are: {builds}."
)


def available_builds(state: State) -> list[BuildInfo]:
    """The usable builds the run workers have (from their heartbeats), one per name."""
    from bot.builds import order_builds

    seen: dict[str, BuildInfo] = {}
    for w in state.workers():
        for b in w.get("builds") or []:
            # usable = it has a current install (a failed update keeps the previous one)
            if isinstance(b, dict) and b.get("python") and b.get("name"):
                seen.setdefault(str(b["name"]), BuildInfo.from_json(b))
    return order_builds(seen.values())


def run_builds(svc: Services, issue: Issue, target: str) -> list[str] | None:
    """The builds a triage runs on, the default first ('' = the worker's default build);
    None when ``target`` names a build no worker has."""
    from bot.builds import default_build

    ready = available_builds(svc.state)
    names = [b.name for b in ready]
    default = default_build(ready, svc.config.builds.default) or svc.config.builds.default
    if target == "all":
        if not names:
            return [default]
        return [default, *[n for n in names if n != default]] if default in names else names
    if target:
        return [target] if target in names else None
    out = [default]
    also = match_build(parse_reported_version(f"{issue.title}\n{issue.body}"),
                       [HistoryBuild.from_dict(b.to_json()) for b in ready])
    if also and also != default:
        out.append(also)
    return out


def _check_retest(
    svc: Services,
    repo: str,
    number: int,
    issue: Issue,
    user: str,
    comment_id: int | None,
) -> str:
    """'' when the retest may go ahead; otherwise why not (after one short reply)."""
    gh = svc.github
    allowed = bool(user) and user.lower() == issue.author.lower()
    if not allowed and user:
        allowed = str(gh.permission(repo, user)).lower() in RETEST_ROLES
    if not allowed:
        gh.reply(repo, number, MSG_RETEST_DENIED.format(user=user or "someone"))
        return "denied"
    cooldown = svc.config.service.retest_cooldown_s
    if not svc.state.start_cooldown(repo, number, cooldown, token=str(comment_id or "")):
        left = svc.state.cooldown_left(repo, number)
        gh.reply(repo, number, MSG_RETEST_COOLDOWN.format(user=user, cooldown=cooldown, left=left))
        return "cooldown"
    return ""


def give_up(
    svc: Services,
    repo: str,
    number: int,
    why: str,
    *,
    job_id: str = "",
    reason: str = "",
    delivery: str = "",
) -> dict[str, Any]:
    """End a request whose triage or report ran past its time limit with an ``infra-error``
    report ("our side failed"), instead of trying the same work again.

    Bounded work only: the conclusion is drawn from the title alone (no body, no comments, no
    run output), so whatever was slow is not run again here.
    """
    with svc.state.issue_lock(repo, number, timeout_s=30):
        job = svc.state.job(job_id) if job_id else None
        if job is not None and (svc.state.is_reported(job_id)
                                or svc.state.is_superseded(job_id, repo, number)):
            return {"status": "skipped", "job_id": job_id}
        if job is None:
            job_id = uuid.uuid4().hex
            job = {"job_id": job_id, "repo": repo, "number": number, "title": "", "url": "",
                   "reason": reason, "delivery": delivery, "worker": "",
                   "plan": Plan(Repro(found=True, shape="none"), (), "cpu").to_dict(),
                   "repro_sha256": "", "status": "queued", "created": time.time()}
            svc.state.new_job(job_id, job)
            svc.state.touch_issue(repo, number)
        issue = Issue(title=str(job.get("title") or ""), body="", number=number, repo=repo,
                      url=str(job.get("url") or ""))
        bounded = dict(job, issue=issue.to_dict())
        summary = _finish(svc, bounded, None, {}, why)
    return {"status": "gave-up", "job_id": job_id, **summary}


def sweep_deliveries(svc: Services, *, now: float | None = None) -> dict[str, Any]:
    """Ask GitHub to redeliver the App's failed deliveries the bot never queued."""
    from bot.events import ROUTER
    from bot.redeliver import pick_redeliveries

    gh = svc.github
    items = gh.hook_deliveries()
    picks = pick_redeliveries(
        items, events=ROUTER, handled=svc.state.delivery_seen, asks=svc.state.redelivery_asks,
        now=time.time() if now is None else now,
    )
    asked = []
    for p in picks:
        svc.state.count_redelivery_ask(p.guid)
        gh.redeliver(p.delivery_id)
        log.warning("asked GitHub to redeliver %s (%s, %s)", p.guid, p.event, p.why)
        asked.append(p.guid)
    return {"status": "swept", "listed": len(items), "redelivered": asked}


def run_request(record: dict[str, Any], the_plan: Plan, build: str = "") -> dict[str, Any]:
    """The JSON a cpu/gpu worker gets: the script, how to run it and on which TVM build ("" =
    the worker's default build); nothing else."""
    return {
        "build": build,
        "job_id": record["job_id"],
        "repo": record["repo"],
        "number": record["number"],
        "script": the_plan.repro.script,
        "args": list(the_plan.repro.args),
        "needs": list(the_plan.needs),
        "gpu": the_plan.worker == "gpu",
        "attempts": the_plan.attempts,
        "rerun_for": the_plan.rerun_for,
    }


def mark_running(svc: Services, job_id: str, worker_name: str) -> dict[str, Any]:
    job = svc.state.job(job_id)
    if job is None:
        return {"status": "unknown-job"}
    repo, number = job["repo"], int(job["number"])
    with svc.state.issue_lock(repo, number):
        if svc.state.is_reported(job_id) or svc.state.is_superseded(job_id, repo, number):
            return {"status": "skipped"}
        the_plan = Plan.from_dict(job["plan"])
        svc.github.upsert_bot_comment(
            repo, number, render_status(STATUS_RUNNING, the_plan.worker, the_plan.repro), MARKER
        )
    return {"status": "running"}


def report(svc: Services, result: dict[str, Any]) -> dict[str, Any]:
    """Conclude a run and publish it, once per job."""
    job_id = str(result.get("job_id") or "")
    if result.get("skipped"):
        return {"status": "skipped", "job_id": job_id, "why": result.get("skipped")}
    job = svc.state.job(job_id)
    if job is None:
        return {"status": "unknown-job", "job_id": job_id}
    repo, number = job["repo"], int(job["number"])
    if job.get("reason") == sweep.REASON_NEW_MAIN:
        with svc.state.issue_lock(repo, number):
            if not svc.state.mark_reported(job_id):
                return {"status": "duplicate", "job_id": job_id}
            return sweep.report_retest(svc, job, result)
    with svc.state.issue_lock(repo, number):
        if svc.state.is_reported(job_id):
            return {"status": "duplicate", "job_id": job_id}
        expected = len(job.get("builds") or [""])
        if expected > 1:
            got = svc.state.add_job_run(job_id, int(result.get("slot") or 0), result)
            if len(got) < expected:
                return {"status": "partial", "job_id": job_id, "runs": len(got)}
            result = got[0]
            job["other_runs"] = [got[i] for i in sorted(got) if i != 0]
        if svc.state.is_superseded(job_id, repo, number):
            svc.state.update_job(job_id, status="superseded")
            return {"status": "superseded", "job_id": job_id}
        run = RunResult.from_dict(result["run"]) if result.get("run") else None
        env = {str(k): str(v) for k, v in (result.get("environment") or {}).items()}
        infra = str(result.get("infra_error") or "")
        if run is None and not infra:
            infra = "the worker returned no run result"
        job["worker_name"] = result.get("worker_name", "")
        build = BuildInfo.from_json(result["build"]) if result.get("build") else None
        summary = _finish(svc, job, run, env, infra, build, cached=bool(result.get("cached")))
    return {"status": "reported", "job_id": job_id, **summary}


def _finish(
    svc: Services,
    job: dict[str, Any],
    run: RunResult | None,
    environment: dict[str, str],
    infra_error: str,
    build: BuildInfo | None = None,
    *,
    cached: bool = False,
) -> dict[str, Any]:
    """Conclude, edit the comment, set the labels, record the result (caller holds the lock)."""
    cfg = svc.config
    repo, number, job_id = job["repo"], int(job["number"]), job["job_id"]
    issue = Issue.from_dict(job["issue"])
    the_plan = Plan.from_dict(job["plan"])
    triage = conclude(
        issue, the_plan, run, environment, label_prefix=cfg.label_prefix, infra_error=infra_error,
        build=build,
    )
    prefix = cfg.label_prefix
    rows = [_row(build, triage.outcome.value, triage.verdict.value, run)]
    for other in job.get("other_runs") or []:
        rows.append(_other_row(other, issue, the_plan, prefix))
    comment = triage.comment
    history = None
    matrix: list[dict[str, Any]] = []
    if len(rows) > 1:
        view = with_matrix(comment, rows, f"{issue.title}\n{issue.body}")
        comment, history = view.comment, view.history
        matrix = [r.to_json() for r in view.rows]
    main_before = svc.state.main(repo, number) or {}
    fixed_on_main = bool(main_before.get("fixed_on_main")) and triage.outcome.value == "passed"
    labels = list(triage.labels) + ([sweep.fixed_label(prefix)] if fixed_on_main else [])
    gh = svc.github
    comment_id = gh.upsert_bot_comment(repo, number, comment, MARKER)
    gh.set_bot_labels(repo, number, labels, is_own=sweep.is_own(prefix),
                      specs=sweep.label_colors(prefix))
    for r in rows:
        if r.build:
            svc.state.set_matrix_row(repo, number, r.build, row_to_store(r))
        if r.kind == "source" and r.build and (r.state or r.verdict != "inconclusive"):
            sweep.remember_main(svc, repo, number, r, issue=job["issue"], plan=job["plan"],
                                comment=comment, fixed_on_main=fixed_on_main)
    record = {
        "job_id": job_id,
        "repo": repo,
        "number": number,
        "title": job.get("title", ""),
        "url": job.get("url", ""),
        "comment_id": comment_id,
        "reason": job.get("reason", ""),
        "requested_by": job.get("requested_by", ""),
        "outcome": triage.outcome.value,
        "verdict": triage.verdict.value,
        "labels": labels,
        "signature": triage.classification.signature,
        "needs": list(triage.needs),
        "worker": job.get("worker", ""),
        "worker_name": job.get("worker_name", ""),
        "repro_sha256": job.get("repro_sha256", ""),
        "seconds": run.seconds if run else None,
        "tvm_version": environment.get("tvm_version", ""),
        "tvm_commit": (build.commit if build and build.commit
                       else environment.get("tvm_commit", "")),
        "build": build.name if build else "",
        "cached": cached,
        "matrix": matrix,
        "history": history.to_json() if history else None,
        "gpu": environment.get("gpu", ""),
        "infra_error": infra_error,
        "created": job.get("created"),
        "finished": time.time(),
    }
    first = svc.state.record_result(job_id, repo, number, record)
    svc.state.update_job(job_id, status="done", outcome=record["outcome"],
                         verdict=record["verdict"], finished=record["finished"])
    return {"outcome": record["outcome"], "verdict": record["verdict"], "first": first}


def _row(build: BuildInfo | None, outcome: str, verdict: str, run: RunResult | None
         ) -> MatrixRow:
    return row_from_build(build, outcome, verdict, run.seconds if run else None)


def _other_row(result: dict[str, Any], issue: Issue, the_plan: Plan, prefix: str) -> MatrixRow:
    """A matrix row for one more build's run (concluded like the main one, not rendered)."""
    run = RunResult.from_dict(result["run"]) if result.get("run") else None
    env = {str(k): str(v) for k, v in (result.get("environment") or {}).items()}
    infra = str(result.get("infra_error") or "") or ("" if run else "no run result")
    build = BuildInfo.from_json(result["build"]) if result.get("build") else None
    t = conclude(issue, the_plan, run, env, label_prefix=prefix, infra_error=infra, build=build)
    return _row(build, t.outcome.value, t.verdict.value, run)


# -- cpu / gpu queue ---------------------------------------------------------------------------
def run_job(
    job: dict[str, Any],
    *,
    config: Config,
    state: State,
    runner: ScriptRunner,
    hostname: str = "",
    cache_dir: Path | None = None,
    notify: EnqueueFn | None = None,
    python: str | None = None,
    build: BuildInfo | None = None,
) -> dict[str, Any]:
    """Run one job's script in the sandbox (``runner``) and probe the environment; JSON in,
    JSON out. (``cache_dir`` is kept for callers; the runner has its own.)

    ``python`` is the interpreter of the job's build, resolved once by the caller before the
    run (default: ``tvm.python``), so a run that started on a build finishes on it.

    Our own failures (the sandbox could not start, the interpreter is missing) come back as
    ``infra_error``, never as a result of the user's script.
    """
    job_id = str(job["job_id"])
    repo, number = str(job["repo"]), int(job["number"])
    base = {"job_id": job_id, "worker_name": hostname, "slot": int(job.get("slot") or 0)}
    side = bool(job.get("side"))  # a re-test: never superseded, never says "running"
    if not side and state.is_superseded(job_id, repo, number):
        return {**base, "skipped": "superseded by a newer request"}
    if state.is_reported(job_id):
        return {**base, "skipped": "already reported"}
    # The result cache: the same script on the same build (name + commit) by the same worker
    # kind is run once; /retest forces a new run.
    key = cache_key(job, build)
    if key is not None and not job.get("force"):
        hit = state.cached_result(*key)
        if hit is not None:
            state.update_job(job_id, status="running", worker_name=hostname, cached=True)
            return {**base, **hit, "cached": True}
    state.update_job(job_id, status="running", worker_name=hostname, started=time.time())
    if notify is not None and not side:
        notify("reprobot.status", [job_id, hostname], "triage")

    python = python or config.tvm.python
    pass_env = {k: os.environ[k] for k in config.tvm.pass_env if k in os.environ}
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            probe = pool.submit(runner.environment, python)
            def run_once() -> RunResult:
                return runner.run(
                    str(job["script"]),
                    python=python,
                    args=tuple(job.get("args") or ()),
                    gpu=bool(job.get("gpu")),
                    pass_env=pass_env,
                )

            # (a report of an intermittent failure: run again while it passes)
            run = again_while_clean(run_once(), run_once, int(job.get("attempts") or 1),
                                    str(job.get("rerun_for") or "intermittent"))
            environment = probe.result()
    except InfraError as e:
        return {**base, "run": None, "environment": {}, "infra_error": str(e)}
    out = {"run": run.to_dict(), "environment": dict(environment), "infra_error": ""}
    if key is not None:  # our own failures above are never cached
        state.store_result(*key, out)
    return {**base, **out, "cached": False}


def cache_key(job: dict[str, Any], build: BuildInfo | None) -> tuple[str, str, str, str] | None:
    """(script sha256, build name, build commit or version, worker kind); None when the build
    has no identity (an ad-hoc interpreter) or there is no script."""
    script = str(job.get("script") or "")
    if build is None or not script or build.kind not in ("release", "source"):
        return None
    ident = build.commit or build.version
    if not ident:
        return None
    sha = hashlib.sha256(script.encode()).hexdigest()
    args = tuple(job.get("args") or ())
    if args:  # the same script with other arguments is another run
        sha = hashlib.sha256((sha + "\0" + "\0".join(args)).encode()).hexdigest()
    attempts = int(job.get("attempts") or 1)
    if attempts > 1:  # runs made again while they pass: another result than one run's
        sha = hashlib.sha256(f"{sha}\0attempts={attempts}".encode()).hexdigest()
    return sha, build.name, ident, "gpu" if job.get("gpu") else "cpu"
