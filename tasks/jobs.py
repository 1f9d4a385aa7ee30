"""Celery tasks: thin wrappers taking ids or JSON and calling one function of ``bot.service``.

This is a process boundary: the only place (with the webhook handler) where broad exceptions
are caught, always logged with the job id. A task on the triage queue that fails (GitHub down
past the client's own retries, Redis hiccup) is retried with back-off; a run task never fails:
anything unexpected becomes an ``infra_error`` report, so a job never ends silently.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any

from celery import Task, shared_task
from celery.exceptions import Retry, SoftTimeLimitExceeded

from bot import service, sweep
from tasks import builder
from tasks.app import (
    TASK_BISECT,
    TASK_BISECTED,
    TASK_BUILD,
    TASK_REPORT,
    TASK_RUN,
    TASK_STATUS,
    TASK_SWEEP,
    TASK_SWEEP_DELIVERIES,
    TASK_TRIAGE,
    runtime,
)

log = logging.getLogger("reprobot.tasks")

MAX_RETRIES = 6
# A run that failed on our side is tried this many more times before it is reported.
INFRA_RETRIES = 2


TRIAGE_TOO_LONG = "reading the issue took longer than the triage time limit"
REPORT_TOO_LONG = "concluding the run took longer than the report time limit"


def _give_up(svc: Any, repo: str, number: int, why: str, **kw: Any) -> dict[str, Any]:
    """Report an infra error for work that ran past its soft time limit (never a retry)."""
    try:
        return service.give_up(svc, repo, number, why, **kw)
    except Exception:  # task boundary: the give-up itself failed (GitHub or Redis down)
        log.exception("could not report the time-out of %s#%s", repo, number)
        return {"status": "failed", "why": why}


def _backoff(task: Task) -> int:
    return int(min(5 * 2 ** task.request.retries, 300))


def _retry(task: Task, exc: Exception, what: str) -> Retry:
    log.exception("%s failed (attempt %d): %s", what, task.request.retries + 1, exc)
    return task.retry(exc=exc, countdown=_backoff(task), max_retries=MAX_RETRIES)


@shared_task(name=TASK_TRIAGE, bind=True)
def triage(
    self: Task,
    repo: str,
    number: int,
    reason: str,
    requested_by: str = "",
    comment_id: int | None = None,
    delivery: str = "",
    target: str = "",
) -> dict[str, Any]:
    svc = runtime(self.app).services
    try:
        return service.triage_issue(
            svc, repo, int(number), reason,
            requested_by=requested_by, comment_id=comment_id, delivery=delivery, target=target,
        )
    except SoftTimeLimitExceeded:
        # The same work would take as long again: report "our side failed", never retry.
        log.error("triage %s#%s (delivery %s) exceeded its time limit", repo, number, delivery)
        return _give_up(svc, repo, int(number), TRIAGE_TOO_LONG, reason=reason,
                        delivery=delivery)
    except Exception as e:  # task boundary
        raise _retry(self, e, f"triage {repo}#{number} (delivery {delivery}, {reason})") from e


# A job for a build this worker does not have goes back to its queue this many times (with
# back-off) before it is reported as an infrastructure error.
BUILD_WAIT_RETRIES = 20


@shared_task(name=TASK_RUN, bind=True)
def run(self: Task, job: dict[str, Any]) -> dict[str, Any]:
    rt = runtime(self.app)
    job_id = str(job.get("job_id", "?"))
    hostname = str(self.request.hostname or rt.hostname)
    timed_out = False
    try:
        with builder.use_for_job(rt.config, str(job.get("build") or "")) as build:
            if self.request.retries:
                with contextlib.suppress(Exception):  # best effort, as above
                    rt.state.update_job(job_id, waiting="")
            result = service.run_job(
                job,
                config=rt.config,
                state=rt.state,
                runner=rt.runner,
                hostname=hostname,
                cache_dir=rt.services.cache_dir,
                notify=rt.enqueue,
                python=build.python,
                build=build,
            )
            result["build"] = build.to_json()
    except builder.BuildError as e:
        # This worker does not have the build (yet): the job waits in its queue.
        if self.request.retries < BUILD_WAIT_RETRIES:
            log.warning("run job %s waits for build %r: %s", job_id, job.get("build"), e)
            with contextlib.suppress(Exception):  # the note on the dashboard is best effort
                rt.state.update_job(job_id, status="queued",
                                    waiting=f"waiting for build {job.get('build')!r}: {e}")
            raise self.retry(countdown=min(30 * 2 ** self.request.retries, 600),
                             max_retries=BUILD_WAIT_RETRIES) from e
        result = {"job_id": job_id, "worker_name": hostname, "run": None, "environment": {},
                  "infra_error": f"no worker has build {job.get('build')!r}: {e}"}
    except SoftTimeLimitExceeded:
        log.error("run job %s exceeded the task's time limit", job_id)
        result = {"job_id": job_id, "worker_name": hostname, "run": None, "environment": {},
                  "infra_error": "the worker's time limit for the run was exceeded"}
        timed_out = True
    except Exception as e:  # task boundary: becomes an infra-error report, never silence
        log.exception("run job %s failed on our side", job_id)
        result = {"job_id": job_id, "worker_name": hostname, "run": None, "environment": {},
                  "infra_error": f"worker error: {type(e).__name__}: {e}"}
    # A run past its time limit is reported at once: trying it again would take as long.
    if result.get("infra_error") and not timed_out and self.request.retries < INFRA_RETRIES:
        # Our side failed (sandbox, interpreter, worker): try again before saying so.
        log.warning("run job %s: infra error, retrying: %s", job_id, result["infra_error"])
        raise self.retry(countdown=_backoff(self), max_retries=INFRA_RETRIES)
    rt.enqueue(TASK_REPORT, [result], "triage")
    return {"job_id": job_id, "skipped": result.get("skipped", "")}


@shared_task(name=TASK_STATUS, bind=True)
def status(self: Task, job_id: str, worker_name: str = "") -> dict[str, Any]:
    svc = runtime(self.app).services
    try:
        return service.mark_running(svc, job_id, worker_name)
    except Exception as e:  # task boundary: a missed "running" note is not worth a retry storm
        log.exception("status of job %s failed: %s", job_id, e)
        return {"status": "failed", "job_id": job_id}


@shared_task(name=TASK_BUILD, bind=True)
def build_update(self: Task, names: list[str] | None = None) -> dict[str, Any]:
    """``builds update NAME...`` on a build worker (trusted code only, no GitHub credentials)."""
    rt = runtime(self.app)
    out = builder.update_builds(rt.config, list(names or []))
    for info in out.values():
        # A source build that is ready: its open issues are re-tested there (once per commit;
        # the sweep itself skips a commit it has seen).
        if info.get("kind") == "source" and info.get("status") == "ready" and info.get("commit"):
            rt.enqueue(TASK_SWEEP, [info], "triage")
    return out


def _retried(task: Task, work: Callable[[Any, dict[str, Any]], dict[str, Any]],
             payload: dict[str, Any], what: str) -> dict[str, Any]:
    """``work(services, payload)``, retried with backoff when it fails (a task boundary)."""
    svc = runtime(task.app).services
    try:
        return work(svc, payload)
    except Exception as e:  # task boundary
        raise _retry(task, e, what) from e


@shared_task(name=TASK_SWEEP, bind=True)
def sweep_new_main(self: Task, build: dict[str, Any]) -> dict[str, Any]:
    return _retried(self, sweep.sweep_new_main, build,
                    f"sweep of build {build.get('name')}@{build.get('commit')}")


@shared_task(name=TASK_BISECT, bind=True)
def bisect(self: Task, request: dict[str, Any]) -> dict[str, Any]:
    """Bisect between two main builds on this run worker (builds + sandboxed runs)."""
    from tasks.bisect import bisect_job

    rt = runtime(self.app)
    job_id = str(request.get("job_id", "?"))
    try:
        result = bisect_job(rt.config, request, state=rt.state,
                            cache_dir=rt.services.cache_dir)
    except Exception as e:  # task boundary: the failure is reported, never silence
        log.exception("bisection %s failed", job_id)
        result = {"job_id": job_id, "repo": request.get("repo"), "number": request.get("number"),
                  "error": f"{type(e).__name__}: {e}"}
    rt.enqueue(TASK_BISECTED, [result], "triage")
    return {"job_id": job_id, "commit": result.get("commit", "")}


@shared_task(name=TASK_BISECTED, bind=True)
def bisected(self: Task, result: dict[str, Any]) -> dict[str, Any]:
    return _retried(self, sweep.report_bisect, result,
                    f"bisection report {result.get('job_id', '?')}")


@shared_task(name=TASK_REPORT, bind=True)
def report(self: Task, result: dict[str, Any]) -> dict[str, Any]:
    svc = runtime(self.app).services
    try:
        return service.report(svc, result)
    except SoftTimeLimitExceeded:
        job_id = str(result.get("job_id") or "")
        log.error("report of job %s exceeded its time limit", job_id)
        job = svc.state.job(job_id) if job_id else None
        if job is None:
            return {"status": "unknown-job", "job_id": job_id}
        return _give_up(svc, str(job["repo"]), int(job["number"]), REPORT_TOO_LONG,
                        job_id=job_id)
    except Exception as e:  # task boundary
        raise _retry(self, e, f"report of job {result.get('job_id', '?')}") from e


@shared_task(name=TASK_SWEEP_DELIVERIES, bind=True)
def sweep_deliveries(self: Task) -> dict[str, Any]:
    svc = runtime(self.app).services
    try:
        return service.sweep_deliveries(svc)
    except Exception as e:  # task boundary: the next sweep tries again (no retry here)
        log.exception("redelivery sweep failed: %s", e)
        return {"status": "failed", "error": f"{type(e).__name__}: {e}"}
