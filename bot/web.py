"""The web app: the GitHub webhook receiver and the maintainers' dashboard.

- ``POST /webhook``  signature first (a missing header is answered before the body is read;
  bodies are read in chunks within a budget for all unverified bodies together), then route
  (``bot.events``) and, for a triage, record-and-enqueue in one Redis script (``bot.intake``).
  It never runs a script, never calls GitHub and never leaves the event loop.
- ``GET /healthz``   200 when Redis answers, else 503.
- ``GET /``          dashboard (server-rendered HTML): queues, workers, latest result per issue.
- ``GET /api/status``  the same as JSON; ``GET /api/issues/{owner}/{name}/{number}`` one issue's
  latest result and history.
- Everything but ``/webhook`` and ``/healthz`` is behind the optional login of ``bot.auth``.

Statuses: 401 missing/invalid signature; 413 body over 25 MB; 408 body too slow; 400 not JSON,
too deep, not an object, no event header, or a payload not shaped like GitHub's; 200 ping (with
the hook id); 202 queued, ignored (with the reason) or a duplicate delivery; 503 Redis
unreachable or the unverified-body budget spent (GitHub shows the delivery as failed and it is
redelivered); 500 our bug, with nothing recorded.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import html
import json
import logging
import time
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.requests import ClientDisconnect

from bot.auth import check_exposure, install_auth
from bot.config import Config, require_github
from bot.events import IGNORE, PING, route
from bot.intake import Intake, IntakeUnavailable, connect_async
from bot.state import State, connect

log = logging.getLogger("reprobot.web")

MAX_BODY_BYTES = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB
# Not-yet-verified body bytes held at once, all requests together (two full-size payloads).
MAX_UNVERIFIED_BYTES = 2 * MAX_BODY_BYTES + (1 << 20)
BODY_READ_TIMEOUT_S = 10.0  # GitHub gives up on a delivery after 10 s anyway
TRIAGE_TASK = "reprobot.triage"


def signature_ok(secret: str, body: bytes, header: str | None) -> bool:
    """Check ``X-Hub-Signature-256: sha256=<hex>`` against HMAC-SHA256(secret, raw body)."""
    if not header or not secret:
        return False
    mac = hmac.new(secret.encode(), body, hashlib.sha256)
    return _digest_ok(mac, header)


def _digest_ok(mac: hmac.HMAC, header: str) -> bool:
    if not header.startswith("sha256="):
        return False
    expected = "sha256=" + mac.hexdigest()
    return hmac.compare_digest(expected.encode(), header.strip().encode())


class BodyBudget:
    """Bytes of not-yet-verified request bodies held at once, over all requests.

    Bytes are taken as they arrive and given back when the body is verified or refused: all
    clients without the secret together can pin at most ``limit`` bytes of the receiver's
    memory, however many connections they open; a chunk past it gets 503 at once (the sweeper
    has GitHub redeliver).
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def take(self, n: int) -> bool:
        if self.used + n > self.limit:
            return False
        self.used += n
        return True

    def give(self, n: int) -> None:
        self.used = max(0, self.used - n)


def _json(code: int, **body: Any) -> JSONResponse:
    return JSONResponse(body, status_code=code)


def _too_large() -> JSONResponse:
    return _json(413, error="payload too large (GitHub sends at most 25 MB)")


def _busy() -> JSONResponse:
    r = _json(503, error="too many webhook bodies being read at once; redeliver later")
    r.headers["Retry-After"] = "5"
    return r


def create_app(
    config: Config,
    *,
    state: State | None = None,
    body_budget_bytes: int = MAX_UNVERIFIED_BYTES,
    auth_mode: str | None = None,
) -> FastAPI:
    svc = config.service
    the_state = state or State(connect(svc.redis_url), svc.key_prefix, history_len=svc.history_len)
    secret = config.github.webhook_secret
    budget = BodyBudget(body_budget_bytes)
    intakes: dict[int, Intake] = {}

    def intake() -> Intake:
        """One asyncio Redis client per event loop (uvicorn runs one; tests may run several)."""
        loop = id(asyncio.get_running_loop())
        if loop not in intakes:
            intakes[loop] = Intake(connect_async(svc.redis_url), svc.key_prefix)
        return intakes[loop]

    app = FastAPI(title="reprobot", docs_url=None, redoc_url=None, openapi_url=None)
    install_auth(app, config, auth_mode)

    async def webhook(request: Request) -> Response:
        delivery = request.headers.get("x-github-delivery", "")[:200]
        event = request.headers.get("x-github-event", "")[:100]
        sig = request.headers.get("x-hub-signature-256")
        # Signature first: nothing is read from a request that cannot be signed.
        if not sig:
            return _json(401, error="missing X-Hub-Signature-256")
        if not sig.startswith("sha256=") or len(sig) != len("sha256=") + 64:
            return _json(401, error="invalid X-Hub-Signature-256")
        length_header = request.headers.get("content-length")
        length: int | None = None
        if length_header is not None:
            try:
                length = int(length_header)
            except ValueError:
                return _json(400, error="bad Content-Length")
            if length < 0:
                return _json(400, error="bad Content-Length")
            if length > MAX_BODY_BYTES:
                return _too_large()
        # Bytes are taken from the budget as they arrive (not as announced): an idle client
        # that announces 25 MB holds nothing.
        reserved = 0
        mac = hmac.new(secret.encode(), digestmod=hashlib.sha256)
        body = bytearray()
        try:
            async with asyncio.timeout(BODY_READ_TIMEOUT_S):
                async for chunk in request.stream():
                    if not chunk:
                        continue
                    if len(body) + len(chunk) > MAX_BODY_BYTES:
                        return _too_large()
                    if len(body) + len(chunk) > reserved:
                        more = len(body) + len(chunk) - reserved
                        if not budget.take(more):
                            return _busy()
                        reserved += more
                    mac.update(chunk)
                    body += chunk
        except TimeoutError:
            return _json(408, error="the body took too long to arrive")
        except ClientDisconnect:
            return _json(400, error="client disconnected")
        finally:
            budget.give(reserved)
        if not secret or not _digest_ok(mac, sig):
            return _json(401, error="invalid X-Hub-Signature-256")
        if not event:
            return _json(400, error="missing X-GitHub-Event")
        try:
            payload = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return _json(400, error="body is not JSON (or nests too deeply)")
        if not isinstance(payload, dict):
            return _json(400, error="body is not a JSON object")
        try:
            decision = route(event, payload, config)
        except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as e:
            # A signed payload that is not shaped like GitHub's: refused, not a server error.
            log.warning("delivery %s (%s): malformed payload: %s", delivery, event, e)
            return _json(400, error=f"malformed {event} payload: {type(e).__name__}",
                         delivery=delivery)
        if decision.action == PING:
            return _json(200, status="pong", hook_id=decision.hook_id)
        if decision.action == IGNORE:
            log.info("delivery %s (%s): ignored: %s", delivery, event, decision.reason)
            return _json(202, status="ignored", reason=decision.reason, delivery=delivery)
        task = dict(decision.task, delivery=delivery)
        digest = hashlib.sha256(body).hexdigest()
        try:
            queued = await intake().accept(delivery, digest, TRIAGE_TASK, task)
        except IntakeUnavailable as e:
            log.error("delivery %s: Redis unreachable: %s", delivery, e)
            return _json(503, error="state store (Redis) unreachable or too slow; redeliver later")
        except Exception:  # process boundary: nothing was recorded, so a redelivery gets in
            log.exception("webhook delivery %s (%s) failed", delivery, event)
            return _json(500, error="internal error", delivery=delivery)
        if not queued:
            return _json(202, status="ignored", reason="duplicate delivery, ignored",
                         delivery=delivery)
        log.info("delivery %s (%s): queued triage of %s#%s (%s)", delivery, event,
                 task.get("repo"), task.get("number"), decision.reason)
        return _json(202, status="queued", reason=decision.reason, delivery=delivery,
                     issue=f"{task.get('repo')}#{task.get('number')}")

    # A plain Starlette route: no FastAPI parameter handling on the hot path.
    app.router.add_route("/webhook", webhook, methods=["POST"])

    @app.get("/healthz")
    async def healthz() -> Response:
        try:
            await intake().ping()
        except IntakeUnavailable as e:
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
    mode = check_exposure(config, host)  # refuses a public dashboard without a login
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log.info("dashboard login: %s", mode)
    # No access log: every delivery is logged once by the handler, with its id and outcome.
    uvicorn.run(create_app(config, auth_mode=mode), host=host, port=port, log_level="info",
                proxy_headers=True, timeout_keep_alive=5, access_log=False, backlog=2048)
