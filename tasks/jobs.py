"""Celery tasks: thin wrappers taking ids or JSON and calling one function of ``bot.service``.

This is a process boundary: the only place (with the webhook handler) where broad exceptions
are caught, always logged with the job id. A task on the triage queue that fails (GitHub down
past the client's own retries, Redis hiccup) is retried with back-off; a run task never fails:
anything unexpected becomes an ``infra_error`` report, so a job never ends silently.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Task, shared_task
from celery.exceptions import Retry, SoftTimeLimitExceeded

from bot import service
from tasks.app import TASK_REPORT, TASK_RUN, TASK_STATUS, TASK_TRIAGE, runtime

log = logging.getLogger("reprobot.tasks")

MAX_RETRIES = 6
# A run that failed on our side is tried this many more times before it is reported.
INFRA_RETRIES = 2


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
) -> dict[str, Any]:
    svc = runtime(self.app).services
    try:
        return service.triage_issue(
            svc, repo, int(number), reason,
            requested_by=requested_by, comment_id=comment_id, delivery=delivery,
        )
    except Exception as e:  # task boundary
        raise _retry(self, e, f"triage {repo}#{number} (delivery {delivery}, {reason})") from e


@shared_task(name=TASK_RUN, bind=True)
def run(self: Task, job: dict[str, Any]) -> dict[str, Any]:
    rt = runtime(self.app)
    job_id = str(job.get("job_id", "?"))
    hostname = str(self.request.hostname or rt.hostname)
    try:
        result = service.run_job(
            job,
            config=rt.config,
            state=rt.state,
            runner=rt.runner,
            hostname=hostname,
            cache_dir=rt.services.cache_dir,
            notify=rt.enqueue,
        )
    except SoftTimeLimitExceeded:
        log.error("run job %s exceeded the task's time limit", job_id)
        result = {"job_id": job_id, "worker_name": hostname, "run": None, "environment": {},
                  "infra_error": "the worker's time limit for the run was exceeded"}
    except Exception as e:  # task boundary: becomes an infra-error report, never silence
        log.exception("run job %s failed on our side", job_id)
        result = {"job_id": job_id, "worker_name": hostname, "run": None, "environment": {},
                  "infra_error": f"worker error: {type(e).__name__}: {e}"}
    if result.get("infra_error") and self.request.retries < INFRA_RETRIES:
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


@shared_task(name=TASK_REPORT, bind=True)
def report(self: Task, result: dict[str, Any]) -> dict[str, Any]:
    svc = runtime(self.app).services
    try:
        return service.report(svc, result)
    except Exception as e:  # task boundary
        raise _retry(self, e, f"report of job {result.get('job_id', '?')}") from e
