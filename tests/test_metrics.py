"""bot.metrics and GET /metrics: counts kept in Redis, one registry per scrape."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from conftest import WEBHOOK_SECRET, webhook_headers
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from bot.config import Config, DashboardConfig, GitHubConfig, ServiceConfig
from bot.metrics import delivery_increments, exposition, run_increments
from bot.state import State, connect
from bot.web import create_app

TOKEN = "metrics-token-1a2b3c4d5e"
REPO = "octo-org/tvm-sandbox"


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


# -- pure: what a record / a delivery adds ---------------------------------------------------
@pytest.mark.parametrize("record,runs,seconds_count", [
    ({"build": "main", "outcome": "crash", "seconds": 3.0}, {("main", "crash"): 1}, 1),
    ({"build": "", "outcome": "passed", "seconds": 0.2}, {("default", "passed"): 1}, 1),
    ({"build": "main", "outcome": "crash", "seconds": 3.0, "cached": True},
     {("main", "crash"): 1}, 0),  # a cache hit is not a run's time
    ({"build": "main", "outcome": "infra-error", "seconds": None},
     {("main", "infra-error"): 1}, 0),
    ({"outcome": "crash", "seconds": 9.0,
      "matrix": [{"build": "main", "outcome": "crash", "seconds": 2.0},
                 {"build": "0.26.0", "outcome": "passed", "seconds": 1.0},
                 {"build": "0.25.0", "outcome": "passed", "seconds": None}]},
     {("main", "crash"): 1, ("0.26.0", "passed"): 1, ("0.25.0", "passed"): 1}, 2),
    ({"build": "main", "outcome": "passed", "seconds": float("nan")},
     {("main", "passed"): 1}, 0),
])
def test_run_increments(record: dict[str, Any], runs: dict[tuple[str, str], int],
                        seconds_count: int):
    inc = run_increments(record)
    got = {tuple(k.split("\x1f")[1:]): v for k, v in inc.items() if k.startswith("runs\x1f")}
    assert got == runs
    assert inc.get("secondscount", 0) == seconds_count


def test_delivery_increments_fill_cumulative_buckets():
    inc = delivery_increments(202, 0.003)
    assert inc["status\x1f202"] == 1 and inc["count"] == 1 and inc["sum"] == 0.003
    assert "le\x1f0.0025" not in inc and inc["le\x1f0.005"] == 1 and inc["le\x1f+Inf"] == 1


def test_exposition_from_a_snapshot():
    snap = {
        "webhook": {**delivery_increments(202, 0.003), "status\x1f401": 2.0},
        "runs": run_increments({"build": "main", "outcome": "crash", "seconds": 12.0}),
        "queues": {"cpu": {"total": 5, "low": 3}, "triage": {"total": 0, "low": 0}},
        "builds": [{"name": "main", "commit": "a" * 40, "built_at": "2026-11-30T00:00:00Z",
                    "status": "ready", "workers": ["w1", "w2"]},
                   {"name": "0.26.0", "commit": "", "built_at": "", "status": "failed",
                    "workers": []}],
        "workers": 2,
    }
    s = samples(exposition(snap, 1795996800.0 + 60).decode())
    assert s[("reprobot_webhook_deliveries_total", (("status", "202"),))] == 1
    assert s[("reprobot_webhook_deliveries_total", (("status", "401"),))] == 2
    assert s[("reprobot_webhook_seconds_bucket", (("le", "0.005"),))] == 1
    assert s[("reprobot_webhook_seconds_count", ())] == 1
    assert s[("reprobot_queue_depth", (("priority", "low"), ("queue", "cpu")))] == 3
    assert s[("reprobot_queue_depth", (("priority", "normal"), ("queue", "cpu")))] == 2
    assert s[("reprobot_runs_total", (("build", "main"), ("outcome", "crash")))] == 1
    assert s[("reprobot_run_seconds_bucket", (("le", "10.0"),))] == 0
    assert s[("reprobot_run_seconds_bucket", (("le", "20.0"),))] == 1
    assert s[("reprobot_run_seconds_sum", ())] == 12.0
    assert s[("reprobot_build_age_seconds", (("build", "main"), ("commit", "a" * 12)))] == 60
    assert s[("reprobot_build_failed", (("build", "0.26.0"),))] == 1
    assert s[("reprobot_build_failed", (("build", "main"),))] == 0
    assert s[("reprobot_build_workers", (("build", "main"),))] == 2
    assert s[("reprobot_workers", ())] == 2


# -- the endpoint: real Redis, the receiver's and the triage's writes -------------------------
def config(redis_url: str, **dash: Any) -> Config:
    return replace(Config(), github=GitHubConfig(webhook_secret=WEBHOOK_SECRET),
                   service=ServiceConfig(redis_url=redis_url, key_prefix="m:"),
                   dashboard=DashboardConfig(**dash))


@pytest.fixture
def state(redis_url: str) -> Iterator[State]:
    st = State(connect(redis_url), "m:")
    yield st
    for key in st.r.scan_iter(match="m:*"):
        st.r.delete(key)


def _post(c: TestClient, event: str, payload: Any, delivery: str) -> Any:
    raw = json.dumps(payload).encode()
    return c.post("/webhook", content=raw, headers=webhook_headers(event, raw, delivery=delivery))


def test_metrics_count_deliveries_runs_and_queues_across_apps(redis_url: str, state: State):
    # Two app instances (two receiver processes) share the counts through Redis.
    with TestClient(create_app(config(redis_url))) as a, \
            TestClient(create_app(config(redis_url))) as b:
        ping = {"zen": "hi", "hook_id": 7}
        assert _post(a, "ping", ping, "d1").status_code == 200
        assert _post(b, "ping", ping, "d2").status_code == 200
        bad = b.post("/webhook", content=b"{}", headers={"X-Hub-Signature-256": "sha256=" + "0" * 64,
                                                          "X-GitHub-Event": "ping"})
        assert bad.status_code == 401
        state.record_result("j1", REPO, 1, {"build": "main", "outcome": "crash",
                                            "verdict": "reproduced", "seconds": 4.0})
        state.record_result("j1", REPO, 1, {"build": "main", "outcome": "crash",
                                            "seconds": 4.0})  # a redelivery: not again
        state.r.lpush("cpu", "m")
        state.r.lpush("cpu\x06\x169", "m")  # a re-test at low priority

        def text() -> str:
            r = a.get("/metrics")
            assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
            return r.text

        deadline = time.time() + 5
        while True:  # the receiver counts right after it answered
            s = samples(text())
            if s.get(("reprobot_webhook_deliveries_total", (("status", "200"),))) == 2 \
                    or time.time() > deadline:
                break
            time.sleep(0.05)
    assert s[("reprobot_webhook_deliveries_total", (("status", "200"),))] == 2
    assert s[("reprobot_webhook_deliveries_total", (("status", "401"),))] == 1
    assert s[("reprobot_webhook_seconds_count", ())] == 3
    assert s[("reprobot_runs_total", (("build", "main"), ("outcome", "crash")))] == 1
    assert s[("reprobot_run_seconds_count", ())] == 1
    assert s[("reprobot_queue_depth", (("priority", "normal"), ("queue", "cpu")))] == 1
    assert s[("reprobot_queue_depth", (("priority", "low"), ("queue", "cpu")))] == 1


def test_metrics_behind_the_login_unless_made_public(redis_url: str, state: State):
    with TestClient(create_app(config(redis_url, auth="token", token=TOKEN),
                               auth_mode="token")) as c:
        assert c.get("/metrics").status_code == 401
        ok = c.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200 and "reprobot_queue_depth" in ok.text
    with TestClient(create_app(config(redis_url, auth="token", token=TOKEN,
                                      metrics_public=True), auth_mode="token")) as c:
        assert c.get("/metrics").status_code == 200
        assert c.get("/").status_code in (401, 303)  # only /metrics is opened


def test_metrics_when_redis_is_down():
    with TestClient(create_app(config("redis://127.0.0.1:1/0"))) as c:
        r = c.get("/metrics")
        assert r.status_code == 503 and "unreachable" in r.text
