"""The web app: the GitHub webhook receiver and the maintainers' dashboard.

- ``POST /webhook``  verify, deduplicate, route (``bot.events``), enqueue a ``triage`` task by
  name. It never runs a script and never calls GitHub, so it answers in milliseconds.
- ``GET /healthz``   200 when Redis answers, else 503.
- ``GET /``          dashboard (server-rendered HTML): queues, workers, latest result per issue.
- ``GET /api/status``  the same as JSON; ``GET /api/issues/{owner}/{name}/{number}`` one issue's
  latest result and history.

Statuses: 401 missing/invalid signature; 413 body over 25 MB; 400 not JSON / not an object /
no event header; 200 ping (with the hook id); 202 queued, ignored (with the reason) or a
duplicate delivery; 503 Redis (the broker) unreachable, so GitHub shows the delivery as failed
and it can be redelivered.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from bot.config import Config, require_github
from bot.events import IGNORE, PING, route
from bot.state import State, StateUnavailable, connect

log = logging.getLogger("reprobot.web")

MAX_BODY_BYTES = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB
TRIAGE_TASK = "reprobot.triage"
TRIAGE_QUEUE = "triage"

SendFn = Callable[[str, dict[str, Any]], None]


def signature_ok(secret: str, body: bytes, header: str | None) -> bool:
    """Check ``X-Hub-Signature-256: sha256=<hex>`` against HMAC-SHA256(secret, raw body)."""
    if not header or not header.startswith("sha256=") or not secret:
        return False
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), header.strip().encode())


def celery_sender(config: Config) -> SendFn:
    """Send a task by name through the broker. The web app never imports the task code (nor
    anything of ``tasks``): a bare Celery producer on the same broker and triage queue."""
    from celery import Celery
    from kombu import Queue

    app = Celery("reprobot-web", broker=config.service.redis_url)
    app.conf.update(
        task_queues=[Queue(TRIAGE_QUEUE, routing_key=TRIAGE_QUEUE)],
        task_default_queue=TRIAGE_QUEUE,
        task_serializer="json",
        accept_content=["json"],
        broker_connection_timeout=3,
        broker_transport_options={"socket_timeout": 10, "socket_connect_timeout": 3},
    )
    policy = {"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.5}

    def send(name: str, kwargs: dict[str, Any]) -> None:
        app.send_task(name, kwargs=kwargs, queue=TRIAGE_QUEUE, routing_key=TRIAGE_QUEUE,
                      retry=True, retry_policy=policy)

    return send


def _json(code: int, **body: Any) -> JSONResponse:
    return JSONResponse(body, status_code=code)


def create_app(
    config: Config,
    *,
    state: State | None = None,
    send: SendFn | None = None,
) -> FastAPI:
    svc = config.service
    the_state = state or State(connect(svc.redis_url), svc.key_prefix, history_len=svc.history_len)
    sender: list[SendFn] = [send] if send else []
    secret = config.github.webhook_secret

    def get_sender() -> SendFn:
        if not sender:
            sender.append(celery_sender(config))
        return sender[0]

    app = FastAPI(title="reprobot", docs_url=None, redoc_url=None, openapi_url=None)

    @app.post("/webhook")
    async def webhook(request: Request) -> Response:
        delivery = request.headers.get("x-github-delivery", "")
        event = request.headers.get("x-github-event", "")
        length = request.headers.get("content-length")
        if length is not None:
            try:
                if int(length) > MAX_BODY_BYTES:
                    return _json(413, error="payload too large (GitHub sends at most 25 MB)")
            except ValueError:
                return _json(400, error="bad Content-Length")
        chunks = bytearray()
        async for chunk in request.stream():
            chunks += chunk
            if len(chunks) > MAX_BODY_BYTES:
                return _json(413, error="payload too large (GitHub sends at most 25 MB)")
        body = bytes(chunks)
        sig = request.headers.get("x-hub-signature-256")
        if not sig:
            return _json(401, error="missing X-Hub-Signature-256")
        if not signature_ok(secret, body, sig):
            return _json(401, error="invalid X-Hub-Signature-256")
        if not event:
            return _json(400, error="missing X-GitHub-Event")
        try:
            payload = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return _json(400, error="body is not JSON")
        if not isinstance(payload, dict):
            return _json(400, error="body is not a JSON object")
        try:
            return await run_in_threadpool(_handle, delivery, event, body, payload)
        except Exception:  # process boundary: log with the delivery id, answer 500
            log.exception("webhook delivery %s (%s) failed", delivery, event)
            return _json(500, error="internal error", delivery=delivery)

    def _handle(delivery: str, event: str, body: bytes, payload: dict[str, Any]) -> Response:
        digest = hashlib.sha256(body).hexdigest()
        try:
            first = the_state.first_delivery(delivery, digest)
        except StateUnavailable as e:
            log.error("delivery %s: Redis unreachable: %s", delivery, e)
            return _json(503, error="state store (Redis) unreachable; redeliver later")
        if not first:
            return _json(202, status="ignored", reason="duplicate delivery, ignored",
                         delivery=delivery)
        decision = route(event, payload, config)
        if decision.action == PING:
            return _json(200, status="pong", hook_id=decision.hook_id)
        if decision.action == IGNORE:
            log.info("delivery %s (%s): ignored: %s", delivery, event, decision.reason)
            return _json(202, status="ignored", reason=decision.reason, delivery=delivery)
        task = dict(decision.task, delivery=delivery)
        try:
            get_sender()(TRIAGE_TASK, task)
        except Exception as e:  # broker down: undo the dedup record so a redelivery gets in
            the_state.forget_delivery(delivery, digest)
            log.error("delivery %s: cannot enqueue: %s", delivery, e)
            return _json(503, error="queue (Redis) unreachable; redeliver later")
        log.info("delivery %s (%s): queued triage of %s#%s (%s)", delivery, event,
                 task.get("repo"), task.get("number"), decision.reason)
        return _json(202, status="queued", reason=decision.reason, delivery=delivery,
                     issue=f"{task.get('repo')}#{task.get('number')}")

    @app.get("/healthz")
    def healthz() -> Response:
        try:
            the_state.ping()
        except StateUnavailable as e:
            return _json(503, ok=False, redis=False, error=str(e))
        return _json(200, ok=True, redis=True)

    @app.get("/api/status")
    def api_status() -> Response:
        try:
            return _json(200, **status_snapshot(the_state))
        except Exception as e:  # noqa: BLE001 - Redis errors of any kind -> 503
            return _json(503, error=f"state store (Redis) unreachable: {e}")

    @app.get("/api/issues/{owner}/{name}/{number}")
    def api_issue(owner: str, name: str, number: int) -> Response:
        repo = f"{owner}/{name}"
        try:
            latest = the_state.latest(repo, number)
            hist = the_state.history(repo, number)
            job_id = the_state.current_job(repo, number)
            job = the_state.job(job_id) if job_id else None
        except Exception as e:  # noqa: BLE001
            return _json(503, error=f"state store (Redis) unreachable: {e}")
        if latest is None and job is None:
            return _json(404, error=f"no result for {repo}#{number}")
        if job:
            job = {k: v for k, v in job.items() if k not in ("issue",)}
        return _json(200, latest=latest, history=hist, job=job)

    @app.get("/", response_class=HTMLResponse)
    def dashboard() -> Response:
        try:
            snap = status_snapshot(the_state)
        except Exception as e:  # noqa: BLE001
            return HTMLResponse(_page("<p class=err>State store (Redis) unreachable: "
                                      f"{html.escape(str(e))}</p>"), status_code=503)
        return HTMLResponse(render_dashboard(snap))

    return app


def status_snapshot(state: State, *, limit: int = 100) -> dict[str, Any]:
    now = time.time()
    workers = []
    for w in state.workers():
        env = w.get("environment") or {}
        workers.append({
            "name": w.get("name", ""),
            "queues": w.get("queues", []),
            "concurrency": w.get("concurrency"),
            "heartbeat_age_s": round(now - float(w.get("seen", now)), 1),
            "tvm_version": env.get("tvm_version", ""),
            "tvm_commit": env.get("tvm_commit", ""),
            "gpu": w.get("gpu") or env.get("gpu", ""),
            "sandbox": w.get("sandbox", ""),
        })
    results = []
    for ref, updated in state.recent_issues(limit):
        repo, _, num = ref.rpartition("#")
        number = int(num)
        latest = state.latest(repo, number)
        job_id = state.current_job(repo, number)
        job = state.job(job_id) if job_id else None
        pending = job is not None and job.get("status") in ("queued", "running")
        results.append({
            "issue": ref,
            "repo": repo,
            "number": number,
            "title": (latest or job or {}).get("title", ""),
            "url": (latest or job or {}).get("url", ""),
            "updated": updated,
            "status": job.get("status") if job else "",
            "pending_worker": job.get("worker") if pending and job else "",
            "latest": latest,
        })
    return {"queues": state.queue_lengths(), "workers": workers, "results": results,
            "time": now}


_CSS = """body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin-bottom:2em}td,th{border:1px solid #ccc;padding:4px 8px;
text-align:left;font-size:14px}th{background:#f4f4f4}.err{color:#b00}code{font-size:13px}"""


def _page(inner: str) -> str:
    return (f"<!doctype html><html><head><meta charset=utf-8><title>reprobot</title>"
            f"<meta http-equiv=refresh content=30><style>{_CSS}</style></head>"
            f"<body><h1>reprobot</h1>{inner}</body></html>")


def _age(seconds: float) -> str:
    s = int(seconds)
    return f"{s} s" if s < 120 else f"{s // 60} min" if s < 7200 else f"{s // 3600} h"


def render_dashboard(snap: dict[str, Any]) -> str:
    e = html.escape
    q = snap["queues"]
    parts = ["<h2>Queues</h2><table><tr><th>queue</th><th>waiting</th></tr>"]
    parts += [f"<tr><td>{e(name)}</td><td>{n}</td></tr>" for name, n in q.items()]
    parts.append("</table><h2>Workers</h2>")
    if snap["workers"]:
        parts.append("<table><tr><th>worker</th><th>queues</th><th>heartbeat</th>"
                     "<th>TVM</th><th>commit</th><th>GPU</th></tr>")
        for w in snap["workers"]:
            parts.append(
                f"<tr><td>{e(str(w['name']))}</td><td>{e(', '.join(w['queues']))}</td>"
                f"<td>{_age(w['heartbeat_age_s'])} ago</td><td>{e(str(w['tvm_version']))}</td>"
                f"<td><code>{e(str(w['tvm_commit'])[:12])}</code></td>"
                f"<td>{e(str(w['gpu']) or '-')}</td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p>No worker has sent a heartbeat in the last minute.</p>")
    parts.append("<h2>Issues</h2>")
    if snap["results"]:
        # At a glance: how the recent issues came out.
        counts: dict[str, int] = {}
        for r in snap["results"]:
            latest = r["latest"] or {}
            if latest:
                key = f"{latest.get('verdict', '')} / {latest.get('outcome', '')}"
                counts[key] = counts.get(key, 0) + 1
        if counts:
            parts.append("<table><tr><th>verdict / outcome</th><th>issues</th></tr>")
            parts += [f"<tr><td>{e(k)}</td><td>{n}</td></tr>"
                      for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
            parts.append("</table>")
        parts.append("<table><tr><th>issue</th><th>title</th><th>outcome</th><th>verdict</th>"
                     "<th>labels</th><th>TVM</th><th>state</th><th>updated</th><th>data</th></tr>")
        now = snap["time"]
        for r in snap["results"]:
            latest = r["latest"] or {}
            url = str(r["url"] or "")
            link = (f"<a href=\"{e(url)}\">{e(r['issue'])}</a>" if url.startswith("http")
                    else e(r["issue"]))
            comment = latest.get("comment_id")
            outcome = e(str(latest.get("outcome", "")))
            if comment and url.startswith("http"):
                outcome = f"<a href=\"{e(url)}#issuecomment-{e(str(comment))}\">{outcome}</a>"
            state = r["status"]
            if r["pending_worker"]:
                state = f"{state} ({r['pending_worker']})"
            owner_name = e(r["repo"])
            parts.append(
                f"<tr><td>{link}</td><td>{e(str(r['title'])[:80])}</td><td>{outcome}</td>"
                f"<td>{e(str(latest.get('verdict', '')))}</td>"
                f"<td>{e(', '.join(latest.get('labels', [])))}</td>"
                f"<td>{e(str(latest.get('tvm_version', '')))}</td><td>{e(state)}</td>"
                f"<td>{_age(now - r['updated'])} ago</td>"
                f"<td><a href=\"/api/issues/{owner_name}/{r['number']}\">json</a></td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p>No issue triaged yet.</p>")
    return _page("".join(parts))


def serve(config: Config, host: str, port: int) -> None:
    """``reprobot serve``: the receiver needs the webhook secret (and no GitHub API credentials)."""
    import uvicorn

    require_github(config, webhook=True, api=False)
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    uvicorn.run(create_app(config), host=host, port=port, log_level="info",
                proxy_headers=True, timeout_keep_alive=5)
