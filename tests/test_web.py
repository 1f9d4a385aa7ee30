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
    r = post(client, "issues", dict(opened(number=4), action="closed"))
    assert r.status_code == 202 and r.json()["status"] == "ignored"
    assert queued(redis_url) == []


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
    assert s["queues"] == {"triage": 0, "cpu": 1, "gpu": 0}
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


# -- under attack: signature first, bounded bodies, malformed payloads ------------------------
def _deep(n: int) -> bytes:
    return b"[" * n + b"]" * n


def _payload(**issue_over: Any) -> dict[str, Any]:
    p = opened(number=5)
    p["issue"].update(issue_over)
    return p


MALFORMED: list[tuple[str, str, bytes]] = [
    ("deep list", "issues", _deep(100_000)),
    ("deep object", "issues", b'{"a":' * 100_000 + b"1" + b"}" * 100_000),
    ("deep issue", "issues", b'{"action":"opened","issue":' + _deep(50_000) + b"}"),
    ("number with 5000 digits", "issues",
     b'{"action":"opened","issue":{"number":' + b"9" * 5000 + b"}}"),
]
for _name, _over in [
    ("labels: 5", {"labels": 5}),
    ("labels: string", {"labels": "type: bug"}),
    ("labels of numbers", {"labels": [1, [2], {"name": 3}]}),
    ("number: true", {"number": True}),
    ("number: huge", {"number": 10**30}),
    ("number: negative", {"number": -3}),
    ("number: float", {"number": 3.0}),
    ("number: string", {"number": "3"}),
    ("title: 5", {"title": 5}),
    ("title: list", {"title": ["[Bug] x"]}),
    ("state: 7", {"state": 7}),
    ("user: 5", {"user": 5}),
    ("pull_request: list", {"pull_request": [1]}),
]:
    MALFORMED.append((_name, "issues", json.dumps(_payload(**_over)).encode()))
for _name, _payload_obj in [
    ("repository: 5", dict(opened(), repository=5)),
    ("full_name: list", dict(opened(), repository={"full_name": [REPO]})),
    ("full_name: not owner/name", dict(opened(), repository={"full_name": "../../x y"})),
    ("issue: list", dict(opened(), issue=[1, 2])),
    ("action: 5", dict(opened(), action=5)),
    ("changes: 5", dict(opened(), action="edited", changes=5)),
    ("label: 5", dict(opened(), action="labeled", label=5)),
    ("comment: string", dict(opened(), action="created", comment="/retest")),
    ("comment body: 5", dict(opened(), action="created", comment={"body": 5, "id": True})),
    ("comment id: true", dict(opened(), action="created",
                              comment={"body": "/retest", "id": True, "user": 5})),
]:
    _event = "issue_comment" if _payload_obj.get("action") == "created" else "issues"
    MALFORMED.append((_name, _event, json.dumps(_payload_obj).encode()))
MALFORMED.append(("ping hook_id: true", "ping", b'{"zen": 5, "hook_id": true}'))


@pytest.mark.parametrize("name,event,body", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_signed_malformed_payload_is_refused_with_a_reason(client: TestClient, redis_url: str,
                                                           name: str, event: str, body: bytes):
    r = post(client, event, body=body)
    assert r.status_code in (200, 400, 202), (name, r.status_code, r.text)
    data = r.json()
    assert data.get("reason") or data.get("error") or data.get("status") == "pong", data
    # What did get queued (a wrong-typed field the decision does not need is ignored) is well-formed: a positive 32-bit issue number of a real repo name.
    for _, kw in queued(redis_url):
        assert kw["repo"] == REPO and type(kw["number"]) is int and 0 < kw["number"] < 2**31
    # The receiver is still fine afterwards.
    ok = post(client, "issues", opened(number=77))
    assert ok.status_code == 202 and ok.json()["status"] == "queued"


def test_comment_id_true_is_not_a_comment_id(client: TestClient, redis_url: str):
    p = dict(opened(), action="created",
             comment={"body": "/retest", "id": True, "user": {"login": "alice"}})
    r = post(client, "issue_comment", p)
    assert r.status_code == 202 and r.json()["status"] == "queued"
    (_, kw), = queued(redis_url)
    assert kw["comment_id"] is None and kw["reason"] == "retest"


def test_failed_handling_is_not_recorded_as_seen(client: TestClient, redis_url: str):
    """A delivery that could not be queued is not a duplicate when GitHub redelivers it."""
    r = connect(redis_url)
    r.set("triage", "not a list")  # the queue key has the wrong type: the enqueue fails
    first = post(client, "issues", opened(), delivery="dlv-fails")
    assert first.status_code == 500 and first.json()["delivery"] == "dlv-fails"
    assert r.keys("w:delivery:*") == [] and r.keys("w:body:*") == []
    r.delete("triage")
    again = post(client, "issues", opened(), delivery="dlv-fails")
    assert again.status_code == 202 and again.json()["status"] == "queued"
    assert [k["delivery"] for _, k in queued(redis_url)] == ["dlv-fails"]


def test_unverified_bodies_are_held_within_a_budget(redis_url: str):
    budget = 64 * 1024
    with TestClient(create_app(config(redis_url), body_budget_bytes=budget)) as c:
        small = json.dumps(dict(opened(), pad="x" * 1000)).encode()
        assert post(c, "issues", body=small).status_code == 202
        big = json.dumps(dict(opened(number=8), pad="x" * budget)).encode()
        r = post(c, "issues", body=big)
        assert r.status_code == 503 and r.headers["retry-after"]
        # Without a Content-Length the budget is taken chunk by chunk.
        h = webhook_headers("issues", big)

        def chunks() -> Iterator[bytes]:
            for i in range(0, len(big), 4096):
                yield big[i:i + 4096]

        assert c.post("/webhook", content=chunks(), headers=h).status_code == 503
        # The budget came back: the small one still gets in.
        again = json.dumps(dict(opened(number=9), pad="y" * 1000)).encode()
        assert post(c, "issues", body=again).json()["status"] == "queued"
