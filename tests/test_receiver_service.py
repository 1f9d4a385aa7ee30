"""The receiver and the triage worker as real processes, under attack and through Redis restarts.

Real ``reprobot serve`` and ``reprobot worker --queues triage`` processes, a real redis-server
(with AOF where restarts are tested), the fake GitHub. Issues here have no script, so the
triage worker reports them itself (no sandbox needed).
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import BOT_LOGIN, REPO, RedisServer, Service, free_port, wait_until
from fake_github import FakeGitHub

pytestmark = [pytest.mark.service]

NO_SCRIPT = "When I build my model with TVM it crashes somewhere in the compiler."


def bot_comments(gh: FakeGitHub, number: int) -> list[dict[str, Any]]:
    return [c for c in gh.comments(REPO, number) if c["user"]["login"] == BOT_LOGIN]


def raw_request(port: int, head: str, body: bytes = b"") -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(head.encode() + body)
    return s


def status_of(s: socket.socket, timeout: float) -> int | None:
    """The status of the answer if one arrives within ``timeout`` s, else None."""
    s.settimeout(timeout)
    try:
        data = s.recv(4096)
    except TimeoutError:
        return None
    except ConnectionResetError:
        return -1
    return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else None


def head(port: int, length: int, *, signed: bool) -> str:
    sig = "X-Hub-Signature-256: sha256=" + "0" * 64 + "\r\n" if signed else ""
    return ("POST /webhook HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{port}\r\n"
            "Content-Type: application/json\r\n"
            "X-GitHub-Event: issues\r\n"
            "X-GitHub-Delivery: attack\r\n"
            f"{sig}Content-Length: {length}\r\n\r\n")


@pytest.fixture
def svc(tmp_path: Path, fake_github: FakeGitHub, probe_cache: Path) -> Any:
    server = RedisServer(tmp_path / "redis", aof=True).start()
    service = Service(tmp_path, server.url, fake_github, probe_cache)
    service.redis = server  # type: ignore[attr-defined]
    yield service
    service.stop_all()
    server.stop()


def test_unsigned_request_is_answered_before_its_body(svc: Service):
    svc.receiver()
    port = int(svc.receiver_url.rsplit(":", 1)[1])
    # 25 MB announced, nothing sent: the answer must not wait for the body.
    s = raw_request(port, head(port, 25_000_000, signed=False))
    assert status_of(s, 5) == 401
    s.close()


def test_unverified_bodies_beyond_the_budget_are_turned_away(svc: Service):
    svc.receiver()
    port = int(svc.receiver_url.rsplit(":", 1)[1])
    # Ten clients without the secret send 6 MB each and stall: 60 MB > the 51 MB budget, so at
    # least two are turned away (503) while their bytes arrive.
    socks = [raw_request(port, head(port, 20_000_000, signed=True)) for _ in range(10)]
    for s in socks:
        s.settimeout(10)
        with contextlib.suppress(OSError):  # already answered 503 and closed
            s.sendall(b" " * 6_000_000)
    statuses = [status_of(s, 3) for s in socks]
    # A client still sending when the 503 came may only see the connection reset (-1); one
    # that stalled past GitHub's 10 s gets 408. None is answered 401 before its body is in.
    assert set(statuses) <= {None, 503, -1, 408}, statuses
    assert statuses.count(503) + statuses.count(-1) >= 2, statuses
    for s in socks:
        s.close()
    # Their disconnect gives the budget back: GitHub's deliveries get in.
    n = svc.github.add_issue(REPO, title="[Bug] after the attack", body=NO_SCRIPT)

    def accepted() -> bool:
        r = svc.post("issues", svc.github.webhook_payload("issues", "opened", REPO, n))
        return r.status_code == 202

    wait_until(accepted, 10, "a signed delivery to be accepted again")


def test_redis_restart_loses_nothing_and_everyone_reconnects(svc: Service):
    server: RedisServer = svc.redis  # type: ignore[attr-defined]
    gh = svc.github
    st = svc.state()
    svc.receiver()
    n1 = gh.add_issue(REPO, title="[Bug] one", body=NO_SCRIPT)
    n2 = gh.add_issue(REPO, title="[Bug] two", body=NO_SCRIPT)
    assert svc.post("issues", gh.webhook_payload("issues", "opened", REPO, n1),
                    delivery="restart-1").json()["status"] == "queued"
    assert svc.post("issues", gh.webhook_payload("issues", "opened", REPO, n2),
                    delivery="restart-2").json()["status"] == "queued"

    # Restart 1, nothing consuming yet: the queued tasks and the delivery records survive.
    server.restart()
    assert server.client().llen("triage") == 2
    again = svc.post("issues", gh.webhook_payload("issues", "opened", REPO, n1),
                     delivery="restart-1")
    assert again.status_code == 202 and "duplicate" in again.json()["reason"]

    svc.worker("triage", concurrency=1)
    for n in (n1, n2):
        wait_until(lambda n=n: st.latest(REPO, n), 60, f"the result of #{n}")
    assert len(bot_comments(gh, n1)) == 1 and "no-repro" in st.latest(REPO, n1)["outcome"]

    # Restart 2, with the worker and the receiver running: both reconnect by themselves.
    server.restart()
    n3 = gh.add_issue(REPO, title="[Bug] three", body=NO_SCRIPT)
    r = svc.post("issues", gh.webhook_payload("issues", "opened", REPO, n3), delivery="restart-3")
    assert r.status_code == 202 and r.json()["status"] == "queued", r.text
    wait_until(lambda: st.latest(REPO, n3), 90, "the worker to reconnect and report #3")
    # What was recorded before the restarts is still there, once.
    assert len(st.history(REPO, n1)) == 1 and len(st.history(REPO, n2)) == 1
    assert len(bot_comments(gh, n3)) == 1


@pytest.mark.parametrize("queues", ["triage", "cpu"])
def test_worker_without_redis_says_so_and_exits(svc: Service, queues: str):
    svc.service_extra = {"redis_wait_s": 2}
    env = svc.env(github=queues == "triage")
    env["REDIS_URL"] = f"redis://:hunter2@127.0.0.1:{free_port()}/0"
    t = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "bot.cli", "worker", "--queues", queues],
                         env=env, cwd=svc.tmp, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr[-2000:]
    assert "Redis at redis://:***@127.0.0.1" in out.stderr and "not reachable" in out.stderr
    assert "hunter2" not in out.stderr + out.stdout
    assert time.monotonic() - t < 60


def test_triage_past_its_time_limit_is_reported_not_retried(svc: Service):
    svc.service_extra = {"triage_time_limit_s": 2}
    gh = svc.github
    st = svc.state()
    n = gh.add_issue(REPO, title="[Bug] slow", body=NO_SCRIPT)
    # Fetching the issue takes longer than the triage task's soft time limit.
    gh.fail_next("GET", rf"/repos/{REPO}/issues/{n}$", None, delay=4)
    svc.worker("triage", concurrency=1)
    svc.receiver()
    assert svc.post("issues", gh.webhook_payload("issues", "opened", REPO, n)).status_code == 202
    latest = wait_until(lambda: st.latest(REPO, n), 60, "the time-out to be reported")
    assert latest["outcome"] == "infra-error" and latest["verdict"] == "inconclusive"
    assert "time limit" in latest["infra_error"]
    (c,) = bot_comments(gh, n)
    assert "our side" in c["body"]
    # No retry of the same work: the issue is not fetched again (a retry comes after 5 s).
    time.sleep(8)
    assert len(gh.requests_to("GET", rf"/repos/{REPO}/issues/{n}$")) == 1
    assert len(st.history(REPO, n)) == 1
