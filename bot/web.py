"""The web app: the GitHub webhook receiver and the maintainers' dashboard.

- ``POST /webhook``  signature first (a missing header is answered before the body is read;
  bodies are read in chunks within a budget for all unverified bodies together), then route
  (``bot.events``) and, for a triage, record-and-enqueue in one Redis script (``bot.intake``).
  It never runs a script, never calls GitHub and never leaves the event loop.
- ``GET /healthz``   200 when Redis answers, else 503.
- ``GET /``          dashboard (``bot.dashboard`` decides, ``bot.pages`` renders): the grid of open
  issues over builds, views, filters, queues, workers, builds; ``/issues/O/N/NUM`` one issue,
  ``/issues/O/N/NUM/run?build=..`` one run's output; ``GET /metrics`` Prometheus text.
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
import json
import logging
import time
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.requests import ClientDisconnect

from bot import dashboard as dash
from bot import pages
from bot.auth import check_exposure, install_auth
from bot.config import Config, require_github
from bot.events import IGNORE, PING, route
from bot.intake import Intake, IntakeUnavailable, connect_async
from bot.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from bot.metrics import delivery_increments, exposition
from bot.state import State, connect

log = logging.getLogger("reprobot.web")

MAX_BODY_BYTES = 25 * 1024 * 1024  # GitHub caps webhook payloads at 25 MB
# Not-yet-verified body bytes held at once, all requests together (two full-size payloads).
MAX_UNVERIFIED_BYTES = 2 * MAX_BODY_BYTES + (1 << 20)
BODY_READ_TIMEOUT_S = 10.0  # GitHub gives up on a delivery after 10 s anyway
TRIAGE_TASK = "reprobot.triage"
METRICS_FLUSH_S = 1.0  # the receiver adds its delivery counts to Redis this often


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

    counts: dict[str, float] = {}
    flushing: set[asyncio.Task[None]] = set()

    async def flush_counts() -> None:
        await asyncio.sleep(METRICS_FLUSH_S)
        batch = dict(counts)
        counts.clear()
        await intake().count("webhook", batch)

    async def timed_webhook(request: Request) -> Response:
        """The webhook, counted for /metrics (status, time to answer) after it answered.

        Counts are summed here and added to Redis once per ``METRICS_FLUSH_S`` (one pipeline
        for all deliveries of that second, not one per delivery)."""
        start = time.perf_counter()
        response = await webhook(request)
        for f, v in delivery_increments(response.status_code,
                                        time.perf_counter() - start).items():
            counts[f] = counts.get(f, 0.0) + v
        if not flushing:
            task = asyncio.get_running_loop().create_task(flush_counts())
            flushing.add(task)  # keep a reference until it is done
            task.add_done_callback(flushing.discard)
        return response

    # A plain Starlette route: no FastAPI parameter handling on the hot path.
    app.router.add_route("/webhook", timed_webhook, methods=["POST"])

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

    def unreachable(e: Exception) -> Response:
        return HTMLResponse(pages.error_page(f"State store (Redis) unreachable: {e}"),
                            status_code=503)

    @app.get("/", response_class=HTMLResponse)
    def dashboard(request: Request) -> Response:
        filters = dash.Filters.from_query(dict(request.query_params))
        try:
            now = time.time()
            raw = the_state.workers()
            builds = builds_snapshot(raw)
            issues = gather_issues(the_state)
            depths = the_state.queue_depths()
            sweep = sweep_snapshot(the_state, builds, config.retest.verdicts,
                                   sum(d["low"] for d in depths.values()))
        except Exception as e:  # noqa: BLE001 - Redis errors of any kind -> 503
            return unreachable(e)
        grid = dash.build_grid(issues, builds, filters)
        return HTMLResponse(pages.render_home(grid, dash.queue_rows(depths), sweep,
                                              workers_snapshot(raw, now), builds, now))

    @app.get("/issues/{owner}/{name}/{number}", response_class=HTMLResponse)
    def issue_page(owner: str, name: str, number: int) -> Response:
        repo = f"{owner}/{name}"
        try:
            issue = gather_issue(the_state, repo, number, history=True)
            plan = issue_plan(the_state, repo, number, issue)
        except Exception as e:  # noqa: BLE001
            return unreachable(e)
        if not issue.get("latest") and not issue.get("main"):
            return HTMLResponse(pages.error_page(f"no result for {repo}#{number}"),
                                status_code=404)
        runs = dash.issue_runs(issue, *_kinds(the_state))
        script = str(((plan or {}).get("repro") or {}).get("script") or "")
        comment = str((issue.get("main") or {}).get("comment") or "")
        return HTMLResponse(pages.render_issue(issue, runs, script, comment))

    @app.get("/issues/{owner}/{name}/{number}/run", response_class=HTMLResponse)
    def run_page(owner: str, name: str, number: int, build: str = "", commit: str = "",
                 version: str = "") -> Response:
        repo = f"{owner}/{name}"
        try:
            issue = gather_issue(the_state, repo, number, history=True)
            plan = issue_plan(the_state, repo, number, issue)
            runs = dash.issue_runs(issue, *_kinds(the_state))
            run = dash.find_run(runs, build, commit, version)
            result = run_output(the_state, plan, run)
        except Exception as e:  # noqa: BLE001
            return unreachable(e)
        status = 200 if run is not None else 404
        return HTMLResponse(pages.render_run(issue, run, result, issue.get("latest")),
                            status_code=status)

    @app.get("/metrics")
    def metrics() -> Response:
        try:
            snap = metrics_snapshot(the_state)
        except Exception as e:  # noqa: BLE001
            return Response(f"# state store (Redis) unreachable: {e}\n", status_code=503,
                            media_type="text/plain")
        return Response(exposition(snap, time.time()), media_type=METRICS_CONTENT_TYPE)

    return app


# -- reading the dashboard's data from Redis (no policy here: bot.dashboard decides) ------------
def gather_issue(state: State, repo: str, number: int, *, history: bool = True,
                 closed: set[str] | None = None) -> dict[str, Any]:
    latest = state.latest(repo, number)
    ref = f"{repo}#{number}"
    return {
        "repo": repo, "number": number,
        "title": (latest or {}).get("title", ""), "url": (latest or {}).get("url", ""),
        "latest": latest,
        "history": state.history(repo, number) if history else [],
        "matrix": state.matrix(repo, number),
        "main": state.main(repo, number),
        "bisect": state.bisect(repo, number),
        "closed": ref in (state.closed() if closed is None else closed),
    }


def gather_issues(state: State, limit: int = 200) -> list[dict[str, Any]]:
    """The most recently updated issues (newest first), as ``bot.dashboard`` takes them."""
    closed = state.closed()
    refs = []
    for ref, _ in state.recent_issues(limit):
        repo, _, num = ref.rpartition("#")
        if repo and num.isdigit():
            refs.append((repo, int(num)))
    out = state.issues_results(refs)
    for issue in out:
        latest = issue["latest"] or {}
        issue.update(title=latest.get("title", ""), url=latest.get("url", ""),
                     closed=f"{issue['repo']}#{issue['number']}" in closed)
    return out


def issue_plan(state: State, repo: str, number: int, issue: dict[str, Any]
               ) -> dict[str, Any] | None:
    """The issue's plan (its script): from its latest main result, else its newest job."""
    main = issue.get("main") or {}
    if main.get("plan"):
        return dict(main["plan"])
    job_id = state.current_job(repo, number)
    job = state.job(job_id) if job_id else None
    return dict(job["plan"]) if job and job.get("plan") else None


def run_output(state: State, plan: dict[str, Any] | None, run: dash.Run | None
               ) -> dict[str, Any] | None:
    """The stored run (``bot.state`` result cache) behind one cell of the grid."""
    from bot.builds import BuildInfo
    from bot.service import cache_key

    if run is None or not plan:
        return None
    repro = plan.get("repro") or {}
    build = BuildInfo(name=run.build, kind=run.kind, version=run.version, commit=run.commit)
    kinds = ["gpu", "cpu"] if plan.get("worker") == "gpu" else ["cpu", "gpu"]
    for gpu in kinds:
        key = cache_key({"script": repro.get("script") or "", "args": repro.get("args") or [],
                         "gpu": gpu == "gpu"}, build)
        if key is None:
            return None
        hit = state.cached_result(*key)
        if hit is not None:
            return hit
    return None


def _kinds(state: State) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """What the workers say of their builds: name -> kind, (name, commit) -> built_at."""
    builds = builds_snapshot(state.workers())
    kinds = {str(b.get("name")): str(b.get("kind")) for b in builds
             if b.get("kind") in ("release", "source")}
    built = {(str(b.get("name")), str(b.get("commit"))): str(b.get("built_at"))
             for b in builds if b.get("commit") and b.get("built_at")}
    return kinds, built


def sweep_snapshot(state: State, builds: list[dict[str, Any]], verdicts: tuple[str, ...],
                   low_waiting: int) -> dash.SweepProgress | None:
    current = dash.current_main(builds)
    if current is None:
        return None
    refs = state.tracked()
    mains = {f"{r}#{n}": m for (r, n), m in zip(refs, state.mains(refs), strict=True)}
    return dash.sweep_progress(mains, str(current.get("commit") or ""), verdicts, low_waiting)


def metrics_snapshot(state: State) -> dict[str, Any]:
    counts = state.metric_counts()
    workers = state.workers()
    return {**counts, "queues": state.queue_depths(), "builds": builds_snapshot(workers),
            "workers": len(workers)}


def workers_snapshot(raw: list[dict[str, Any]], now: float) -> list[dict[str, Any]]:
    """The workers' heartbeats as the dashboard and /api/status show them."""
    workers = []
    for w in raw:
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
            "builds": [b.get("name", "") for b in w.get("builds") or []
                       if b.get("python")],
        })
    return workers


def status_snapshot(state: State, *, limit: int = 100) -> dict[str, Any]:
    now = time.time()
    raw = state.workers()
    workers = workers_snapshot(raw, now)
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
            "waiting": job.get("waiting", "") if pending and job else "",
            "latest": latest,
        })
    return {"queues": state.queue_lengths(), "workers": workers, "results": results,
            "builds": builds_snapshot(raw), "time": now}


def builds_snapshot(workers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every build a worker's heartbeat reports, with the workers that have it ready."""
    seen: dict[tuple[str, str], dict[str, Any]] = {}
    for w in workers:
        for b in w.get("builds") or []:
            key = (str(b.get("name", "")), str(b.get("commit", "")))
            entry = seen.setdefault(key, {**b, "workers": []})
            if b.get("status") != "ready":  # one worker's failure or build in progress shows
                entry.update(status=b.get("status"), error=b.get("error", ""))
            if b.get("python"):
                entry["workers"].append(str(w.get("name", "")))
    return list(seen.values())


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
