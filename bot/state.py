"""The service's state in Redis, under one key prefix (``ServiceConfig.key_prefix``).

Key layout (``P`` = the prefix, ``R`` = ``owner/name``, ``N`` = issue number):

- ``P delivery:<id>``        webhook delivery ids seen (SET NX EX, 7 days): replays are ignored
- ``P body:<sha256>``        sha256 of delivered bodies seen (same TTL): a replay with a new id too
                             (both are written with the triage task's enqueue, atomically:
                             ``bot.intake``)
- ``P redelivery:<id>``      how often the sweeper asked GitHub to redeliver a failed delivery
- ``P issue:R#N:job``        the id of the newest job for the issue; an older job that sees another
                             id here is superseded and skips
- ``P issue:R#N:lock``       short lock while the issue is triaged / reported (one at a time)
- ``P issue:R#N:cooldown``   set for ``retest_cooldown_s`` after an accepted ``/retest``
- ``P issue:R#N:latest``     JSON of the latest result (outcome, verdict, labels, repro sha, ...)
- ``P issue:R#N:history``    list of result JSONs, newest first, at most ``history_len``
- ``P issues``               sorted set ``R#N`` -> time of the last update (dashboard index)
- ``P job:<id>``             JSON of one job (issue, plan, status, times, worker), 7 days
- ``P job:<id>:reported``    set once the job's result was recorded (a redelivered report skips)
- ``P worker:<name>``        JSON heartbeat of a worker (queues, TVM version/commit, GPU), short TTL

The Celery queues themselves live in the same Redis under the queue names (``triage``, ``cpu``,
``gpu``), as the broker keeps them.

This module is a thin shell over redis-py: no policy beyond "set once" and "newest wins".
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import redis

QUEUES = ("triage", "cpu", "gpu")
DELIVERY_TTL_S = 7 * 24 * 3600
JOB_TTL_S = 14 * 24 * 3600
HEARTBEAT_TTL_S = 60


class StateUnavailable(Exception):
    """Redis could not be reached (the receiver answers 503)."""


def connect(url: str, *, timeout_s: float = 2.0) -> redis.Redis:
    """A client that fails fast when Redis is down instead of hanging the caller."""
    return redis.Redis.from_url(
        url,
        socket_connect_timeout=timeout_s,
        socket_timeout=timeout_s,
        decode_responses=True,
        health_check_interval=30,
    )


def redacted(url: str) -> str:
    """The Redis URL without its password (for messages)."""
    import urllib.parse

    u = urllib.parse.urlsplit(url)
    if u.password:
        netloc = f"{u.username or ''}:***@{u.hostname}" + (f":{u.port}" if u.port else "")
        return urllib.parse.urlunsplit(u._replace(netloc=netloc))
    return url


def wait_for_redis(url: str, wait_s: float, *, interval_s: float = 1.0) -> None:
    """Return once Redis answers PING; StateUnavailable after ``wait_s`` seconds of trying."""
    deadline = time.monotonic() + max(wait_s, 0)
    client = connect(url, timeout_s=min(2.0, max(wait_s, 0.5)))
    while True:
        try:
            client.ping()
            return
        except redis.RedisError as e:
            if time.monotonic() >= deadline:
                raise StateUnavailable(
                    f"Redis at {redacted(url)} is not reachable (waited {wait_s:.0f} s): {e}"
                ) from e
        time.sleep(interval_s)


def issue_ref(repo: str, number: int) -> str:
    return f"{repo}#{number}"


class State:
    def __init__(self, client: redis.Redis, prefix: str = "reprobot:", *, history_len: int = 50):
        self.r = client
        self.prefix = prefix
        self.history_len = history_len

    # -- keys -------------------------------------------------------------------------------
    def _k(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    def _issue(self, repo: str, number: int, what: str) -> str:
        return self._k("issue", issue_ref(repo, number), what)

    # -- health ------------------------------------------------------------------------------
    def ping(self) -> bool:
        try:
            return bool(self.r.ping())
        except redis.RedisError as e:
            raise StateUnavailable(str(e)) from e

    # -- deliveries --------------------------------------------------------------------------
    def first_delivery(self, delivery_id: str, body_sha256: str) -> bool:
        """Record a delivery; False when its id or its exact body was seen before."""
        try:
            pipe = self.r.pipeline(transaction=False)
            if delivery_id:
                pipe.set(self._k("delivery", delivery_id), "1", nx=True, ex=DELIVERY_TTL_S)
            pipe.set(self._k("body", body_sha256), delivery_id or "1", nx=True, ex=DELIVERY_TTL_S)
            results = pipe.execute()
        except redis.RedisError as e:
            raise StateUnavailable(str(e)) from e
        return all(bool(x) for x in results)

    def delivery_seen(self, delivery_id: str) -> bool:
        """Whether the receiver queued this delivery (GitHub's GUID)."""
        return bool(self.r.exists(self._k("delivery", delivery_id)))

    def redelivery_asks(self, delivery_id: str) -> int:
        raw = self.r.get(self._k("redelivery", delivery_id))
        return int(str(raw)) if raw else 0

    def count_redelivery_ask(self, delivery_id: str) -> int:
        key = self._k("redelivery", delivery_id)
        pipe = self.r.pipeline()
        pipe.incr(key)
        pipe.expire(key, DELIVERY_TTL_S)
        n, _ = pipe.execute()
        return int(n)

    def forget_delivery(self, delivery_id: str, body_sha256: str) -> None:
        """Undo ``first_delivery`` (enqueueing failed: GitHub's redelivery must get through)."""
        try:
            keys = [self._k("body", body_sha256)]
            if delivery_id:
                keys.append(self._k("delivery", delivery_id))
            self.r.delete(*keys)
        except redis.RedisError:
            pass

    # -- jobs --------------------------------------------------------------------------------
    def new_job(self, job_id: str, record: dict[str, Any]) -> None:
        """Store the job and make it the issue's newest (older queued jobs are superseded)."""
        repo, number = record["repo"], int(record["number"])
        pipe = self.r.pipeline()
        pipe.set(self._k("job", job_id), json.dumps(record), ex=JOB_TTL_S)
        pipe.set(self._issue(repo, number, "job"), job_id)
        pipe.execute()

    def job(self, job_id: str) -> dict[str, Any] | None:
        raw = self.r.get(self._k("job", job_id))
        return json.loads(str(raw)) if raw else None

    def update_job(self, job_id: str, **fields: Any) -> dict[str, Any] | None:
        rec = self.job(job_id)
        if rec is None:
            return None
        rec.update(fields)
        self.r.set(self._k("job", job_id), json.dumps(rec), ex=JOB_TTL_S)
        return rec

    def current_job(self, repo: str, number: int) -> str | None:
        raw = self.r.get(self._issue(repo, number, "job"))
        return str(raw) if raw else None

    def is_superseded(self, job_id: str, repo: str, number: int) -> bool:
        current = self.current_job(repo, number)
        return current is not None and current != job_id

    def is_reported(self, job_id: str) -> bool:
        return bool(self.r.exists(self._k("job", job_id, "reported")))

    @contextmanager
    def issue_lock(self, repo: str, number: int, *, timeout_s: float = 120) -> Iterator[None]:
        """One triage / report of an issue at a time (expires by itself if its holder dies)."""
        lock = self.r.lock(
            self._issue(repo, number, "lock"), timeout=timeout_s, blocking_timeout=timeout_s
        )
        if not lock.acquire():
            raise TimeoutError(f"issue {issue_ref(repo, number)} stayed locked")
        try:
            yield
        finally:
            # Expired meanwhile: whoever holds it now keeps it.
            with contextlib.suppress(redis.exceptions.LockError):
                lock.release()

    # -- results -----------------------------------------------------------------------------
    def record_result(self, job_id: str, repo: str, number: int, result: dict[str, Any]) -> bool:
        """Store the job's result once: latest + history. False when it was already recorded."""
        if not self.r.set(self._k("job", job_id, "reported"), "1", nx=True, ex=JOB_TTL_S):
            return False
        data = json.dumps(result)
        hist = self._issue(repo, number, "history")
        pipe = self.r.pipeline()
        pipe.set(self._issue(repo, number, "latest"), data)
        pipe.lpush(hist, data)
        pipe.ltrim(hist, 0, max(self.history_len, 1) - 1)
        pipe.zadd(self._k("issues"), {issue_ref(repo, number): time.time()})
        pipe.execute()
        return True

    def latest(self, repo: str, number: int) -> dict[str, Any] | None:
        raw = self.r.get(self._issue(repo, number, "latest"))
        return json.loads(str(raw)) if raw else None

    def history(self, repo: str, number: int) -> list[dict[str, Any]]:
        raw = self.r.lrange(self._issue(repo, number, "history"), 0, -1)
        return [json.loads(x) for x in raw]

    def touch_issue(self, repo: str, number: int) -> None:
        self.r.zadd(self._k("issues"), {issue_ref(repo, number): time.time()})

    def recent_issues(self, limit: int = 100) -> list[tuple[str, float]]:
        rows: Any = self.r.zrevrange(self._k("issues"), 0, limit - 1, withscores=True)
        return [(str(ref), float(score)) for ref, score in rows]

    # -- /retest cooldown --------------------------------------------------------------------
    def start_cooldown(self, repo: str, number: int, seconds: int, *, token: str = "") -> bool:
        """True when no cooldown was running (one starts now), or it was started by ``token``
        (the same request, retried)."""
        if seconds <= 0:
            return True
        key = self._issue(repo, number, "cooldown")
        if self.r.set(key, token or "1", nx=True, ex=seconds):
            return True
        return bool(token) and self.r.get(key) == token

    def cooldown_left(self, repo: str, number: int) -> int:
        ttl: Any = self.r.ttl(self._issue(repo, number, "cooldown"))
        ttl = int(ttl)
        return max(ttl, 0)

    # -- workers -----------------------------------------------------------------------------
    def heartbeat(self, name: str, info: dict[str, Any], *, ttl_s: int = HEARTBEAT_TTL_S) -> None:
        data = dict(info, name=name, seen=time.time())
        self.r.set(self._k("worker", name), json.dumps(data), ex=ttl_s)

    def drop_worker(self, name: str) -> None:
        self.r.delete(self._k("worker", name))

    def workers(self) -> list[dict[str, Any]]:
        out = []
        for key in self.r.scan_iter(match=self._k("worker", "*"), count=200):
            raw = self.r.get(key)
            if raw:
                out.append(json.loads(str(raw)))
        return sorted(out, key=lambda w: str(w.get("name", "")))

    # -- queues ------------------------------------------------------------------------------
    def queue_lengths(self) -> dict[str, int]:
        """Messages waiting in each Celery queue (the broker's lists, priorities included)."""
        out: dict[str, int] = {}
        for q in QUEUES:
            total = 0
            # kombu keeps priority levels as "<queue>\x06\x16<n>" beside the plain list.
            for key in [q, *(f"{q}\x06\x16{p}" for p in range(10))]:
                n: Any = self.r.llen(key)
                total += int(n)
            out[q] = total
        return out
