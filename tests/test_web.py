"""The receiver and the dashboard, in process (FastAPI's test client) against a real Redis.

Enqueued tasks are read back from the broker's own list in Redis, as a worker would get them.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from conftest import WEBHOOK_SECRET, webhook_headers
from fastapi.testclient import TestClient

from bot.config import Config, GitHubConfig, ServiceConfig
from bot.state import State, connect
from bot.web import MAX_BODY_BYTES, create_app, signature_ok

REPO = "octo-org/tvm-sandbox"


def config(redis_url: str) -> Config:
    return replace(
        Config(),
        github=GitHubConfig(webhook_secret=WEBHOOK_SECRET),
        service=ServiceConfig(redis_url=redis_url, key_prefix="w:", bot_login="reprobot-ci"),
    )


@pytest.fixture
def client(redis_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(config(redis_url))) as c:
        yield c


def opened(number: int = 3, title: str = "[Bug] Add of int and float") -> dict[str, Any]:
    return {
        "action": "opened",
        "issue": {"number": number, "title": title, "body": "...", "state": "open",
                  "user": {"login": "alice", "type": "User"}, "labels": []},
        "repository": {"full_name": REPO, "name": "tvm-sandbox"},
        "sender": {"login": "alice", "type": "User"},
    }


def post(c: TestClient, event: str, payload: Any = None, *, body: bytes | None = None,
         delivery: str | None = None, secret: str | None = WEBHOOK_SECRET,
         headers: dict[str, str] | None = None) -> Any:
    raw = body if body is not None else json.dumps(payload).encode()
    h = webhook_headers(event, raw, delivery=delivery, secret=secret)
    h.update(headers or {})
    return c.post("/webhook", content=raw, headers=h)


def queued(redis_url: str, queue: str = "triage") -> list[tuple[str, dict[str, Any]]]:
    """(task name, kwargs) of each message waiting in the broker's list, oldest first."""
    r = connect(redis_url)
    out = []
    for raw in reversed(r.lrange(queue, 0, -1)):  # type: ignore[arg-type]
        msg = json.loads(raw)
        args, kwargs, _ = json.loads(base64.b64decode(msg["body"]))
        out.append((msg["headers"]["task"], kwargs))
    return out


def test_signature_check():
    body = b'{"a": 1}'
    good = webhook_headers("issues", body)["X-Hub-Signature-256"]
    assert signature_ok(WEBHOOK_SECRET, body, good)
    assert not signature_ok(WEBHOOK_SECRET, body + b" ", good)
    assert not signature_ok("other-secret", body, good)
    assert not signature_ok(WEBHOOK_SECRET, body, good.replace("sha256=", "sha1="))
    assert not signature_ok(WEBHOOK_SECRET, body, None)
    assert not signature_ok("", body, good)


def test_opened_issue_is_queued_for_triage(client: TestClient, redis_url: str):
    r = post(client, "issues", opened(), delivery="dlv-1")
    assert r.status_code == 202, r.text
    assert r.json()["status"] == "queued" and r.json()["issue"] == f"{REPO}#3"
    assert queued(redis_url) == [
        ("reprobot.triage", {"repo": REPO, "number": 3, "reason": "opened", "delivery": "dlv-1"})
    ]
    assert queued(redis_url, "cpu") == []


def test_replayed_delivery_is_ignored(client: TestClient, redis_url: str):
    assert post(client, "issues", opened(), delivery="dlv-2").status_code == 202
    again = post(client, "issues", opened(), delivery="dlv-2")
    assert again.status_code == 202 and "duplicate delivery" in again.json()["reason"]
    replay = post(client, "issues", opened(), delivery="dlv-2-new-id")
    assert replay.status_code == 202 and "duplicate delivery" in replay.json()["reason"]
    assert len(queued(redis_url)) == 1


@pytest.mark.parametrize("secret", [None, "wrong-secret"])
def test_bad_or_missing_signature_is_401(client: TestClient, redis_url: str, secret: str | None):
    r = post(client, "issues", opened(), secret=secret)
    assert r.status_code == 401
    assert "X-Hub-Signature-256" in r.json()["error"]
    assert queued(redis_url) == []


def test_signature_over_another_body_is_401(client: TestClient):
    raw = json.dumps(opened()).encode()
    h = webhook_headers("issues", raw)
    r = client.post("/webhook", content=raw.replace(b"alice", b"mallo"), headers=h)
    assert r.status_code == 401


@pytest.mark.parametrize("body", [b"not json {", b"[1, 2, 3]", b'"text"', b"\xff\xfe"])
def test_malformed_body_is_400(client: TestClient, redis_url: str, body: bytes):
    r = post(client, "issues", body=body)
    assert r.status_code == 400
    assert "JSON" in r.json()["error"]
    assert queued(redis_url) == []


def test_missing_event_header_is_400(client: TestClient):
    raw = b"{}"
    h = webhook_headers("issues", raw)
    del h["X-GitHub-Event"]
    assert client.post("/webhook", content=raw, headers=h).status_code == 400


def test_oversized_body_is_413(client: TestClient):
    big = b"x" * (MAX_BODY_BYTES + 1)
    r = post(client, "issues", body=big)
    assert r.status_code == 413
    # Without a Content-Length (chunked), the size is checked while reading.
    h = webhook_headers("issues", big)

    def chunks() -> Iterator[bytes]:
        for i in range(0, len(big), 1 << 20):
            yield big[i:i + (1 << 20)]

    r = client.post("/webhook", content=chunks(), headers=h)
    assert r.status_code == 413


def test_ping_answers_with_hook_id(client: TestClient):
    r = post(client, "ping", {"zen": "Half measures are as bad as nothing at all.",
                              "hook_id": 987654, "hook": {"type": "App", "id": 987654}})
    assert r.status_code == 200
    assert r.json() == {"status": "pong", "hook_id": 987654}


def test_ignored_events_get_a_reason(client: TestClient, redis_url: str):
    r = post(client, "watch", {"action": "started", "repository": {"full_name": REPO}})
    assert r.status_code == 202 and "'watch' is not handled" in r.json()["reason"]
    r = post(client, "issues", opened(title="[Docs] typo"))
    assert r.status_code == 202 and "title prefixes" in r.json()["reason"]
    r = post(client, "issues", dict(opened(number=4), action="assigned"))
    assert r.status_code == 202 and r.json()["status"] == "ignored"
    assert queued(redis_url) == []
    # "closed" is acted on: the issue leaves the re-test set (a triage task with that reason).
    r = post(client, "issues", dict(opened(number=4), action="closed"))
    assert r.status_code == 202 and r.json()["status"] == "queued"


def test_redis_down_is_503_and_nothing_lost(redis_factory: Any):
    server = redis_factory()
    with TestClient(create_app(config(server.url))) as c:
        assert c.get("/healthz").status_code == 200
        server.stop()
        r = post(c, "issues", opened(), delivery="dlv-down")
        assert r.status_code == 503 and "Redis" in r.json()["error"]
        assert c.get("/healthz").status_code == 503
        assert c.get("/api/status").status_code == 503
        assert c.get("/").status_code == 503
        # GitHub redelivers the same delivery once Redis is back: it gets in.
        server.start()
        r = post(c, "issues", opened(), delivery="dlv-down")
        assert r.status_code == 202 and r.json()["status"] == "queued"
    assert [k["delivery"] for _, k in queued(server.url)] == ["dlv-down"]


def test_dashboard_and_status_api(client: TestClient, redis_url: str):
    st = State(connect(redis_url), "w:")
    st.heartbeat("reprobot-cpu-1@box", {
        "queues": ["cpu"], "concurrency": 2, "gpu": "",
        "environment": {"tvm_version": "0.27.0", "tvm_commit": "0123456789abcdef0123"},
    })
    st.new_job("j1", {"repo": REPO, "number": 12, "title": "[Bug] <script>x</script>",
                      "url": f"https://github.com/{REPO}/issues/12", "status": "done",
                      "worker": "cpu"})
    st.record_result("j1", REPO, 12, {
        "job_id": "j1", "title": "[Bug] <script>x</script>",
        "url": f"https://github.com/{REPO}/issues/12", "outcome": "internal-error",
        "verdict": "reproduced", "labels": ["repro: internal-error", "repro: reproduced"],
        "comment_id": 77, "tvm_version": "0.27.0"})
    st.r.lpush("cpu", "m")

    s = client.get("/api/status").json()
    assert s["queues"] == {"triage": 0, "cpu": 1, "gpu": 0, "build": 0}
    (w,) = s["workers"]
    assert w["name"] == "reprobot-cpu-1@box" and w["tvm_version"] == "0.27.0"
    assert 0 <= w["heartbeat_age_s"] < 5
    (res,) = s["results"]
    assert res["issue"] == f"{REPO}#12" and res["latest"]["outcome"] == "internal-error"
    assert res["status"] == "done" and res["updated"] <= time.time()

    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    assert "reprobot-cpu-1@box" in html and "0123456789ab" in html
    assert "internal-error" in html and "reproduced" in html
    assert f"https://github.com/{REPO}/issues/12#issuecomment-77" in html
    assert "<script>x</script>" not in html and "&lt;script&gt;" in html
    assert "<td>reproduced / internal-error</td><td>1</td>" in html  # the at-a-glance counts

    one = client.get(f"/api/issues/{REPO}/12").json()
    assert one["latest"]["verdict"] == "reproduced" and len(one["history"]) == 1
    assert client.get(f"/api/issues/{REPO}/99").status_code == 404
