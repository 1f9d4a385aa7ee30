"""The receiver's one write: record a delivery as seen AND enqueue its triage task, atomically.

One Lua script does both in Redis: if neither the delivery id nor the body's sha256 was seen,
it records both (7 days) and pushes the task message onto the ``triage`` queue; otherwise it
does nothing. So a delivery is recorded as seen only once its task is queued (a failure in
between cannot drop GitHub's redelivery as a duplicate), and a queued task is never lost to a
crash between two commands. With AOF on, Redis logs the script as one unit.

The message is Celery's task message (protocol 2) as kombu's Redis transport stores it, built
here so the receiver needs neither Celery nor a broker connection per request: one asyncio
Redis client (a small connection pool that reconnects after Redis restarts) serves every
request without leaving the event loop.
"""

from __future__ import annotations

import base64
import json
import socket
import uuid
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from bot.state import DELIVERY_TTL_S

TRIAGE_QUEUE = "triage"

# KEYS: delivery key ('' -> none), body key, queue.  ARGV: ttl, delivery id, message.
# The push comes first: a script that fails midway (Redis does not roll back) has then recorded
# nothing, and the one after it cannot fail on keys of the right type.
_ACCEPT = """
if KEYS[1] ~= '' and redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('LPUSH', KEYS[3], ARGV[3])
if KEYS[1] ~= '' then redis.call('SET', KEYS[1], '1', 'EX', ARGV[1]) end
redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[1])
return 1
"""


class IntakeUnavailable(Exception):
    """Redis could not be reached: the receiver answers 503 so GitHub shows a failed delivery."""


def task_message(name: str, kwargs: dict[str, Any], queue: str, *, task_id: str = "",
                 origin: str = "") -> str:
    """Celery protocol-2 message for ``name(**kwargs)`` in kombu's Redis envelope (JSON)."""
    tid = task_id or str(uuid.uuid4())
    body = json.dumps([[], kwargs, {"callbacks": None, "errbacks": None, "chain": None,
                                    "chord": None}])
    headers: dict[str, Any] = {
        "lang": "py", "task": name, "id": tid, "shadow": None, "eta": None, "expires": None,
        "group": None, "group_index": None, "retries": 0, "timelimit": [None, None],
        "root_id": tid, "parent_id": None, "argsrepr": "()", "kwargsrepr": repr(kwargs)[:1024],
        "origin": origin or f"reprobot-receiver@{socket.gethostname()}",
        "ignore_result": True, "replaced_task_nesting": 0, "stamped_headers": None,
        "stamps": {},
    }
    envelope = {
        "body": base64.b64encode(body.encode()).decode(),
        "content-encoding": "utf-8",
        "content-type": "application/json",
        "headers": headers,
        "properties": {
            "correlation_id": tid,
            "reply_to": str(uuid.uuid4()),
            "delivery_mode": 2,
            "delivery_info": {"exchange": "", "routing_key": queue},
            "priority": 0,
            "body_encoding": "base64",
            "delivery_tag": str(uuid.uuid4()),
        },
    }
    return json.dumps(envelope)


def connect_async(url: str, *, timeout_s: float = 5.0, max_connections: int = 128) -> Any:
    """One asyncio client per receiver process: gives up within ``timeout_s`` when Redis is
    down or overloaded (GitHub waits 10 s for an answer) and reconnects (a retry on a fresh
    connection) once it is back."""
    # A blocking pool: a burst of requests waits for a free connection instead of failing.
    pool = aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=max_connections,
        timeout=timeout_s,
        socket_connect_timeout=min(timeout_s, 2.0),
        socket_timeout=timeout_s,
        health_check_interval=30,
        # A connection dropped by a Redis restart: once more on a fresh one. A timeout is not
        # retried (GitHub stops waiting after 10 s; it is answered 503 and redelivered).
        retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 2),
        retry_on_error=[RedisConnectionError],
        decode_responses=True,
    )
    return aioredis.Redis(connection_pool=pool)


class Intake:
    """Deduplicate-and-enqueue for the receiver (asyncio)."""

    def __init__(self, client: Any, prefix: str) -> None:
        self.r = client
        self.prefix = prefix
        self._accept = client.register_script(_ACCEPT)

    async def accept(self, delivery: str, body_sha256: str, task_name: str,
                     kwargs: dict[str, Any]) -> bool:
        """Queue the task unless this delivery (id or body) was seen; True when queued."""
        keys = [
            f"{self.prefix}delivery:{delivery}" if delivery else "",
            f"{self.prefix}body:{body_sha256}",
            TRIAGE_QUEUE,
        ]
        message = task_message(task_name, kwargs, TRIAGE_QUEUE)
        try:
            done = await self._accept(keys=keys, args=[DELIVERY_TTL_S, delivery or "1", message])
        except (RedisConnectionError, RedisTimeoutError, OSError) as e:
            raise IntakeUnavailable(str(e) or type(e).__name__) from e
        # Any other RedisError (a script error) is the caller's 500: nothing was recorded.
        return bool(done)

    async def ping(self) -> None:
        try:
            await self.r.ping()
        except (RedisError, OSError) as e:
            raise IntakeUnavailable(str(e) or type(e).__name__) from e

    async def close(self) -> None:
        await self.r.aclose()
