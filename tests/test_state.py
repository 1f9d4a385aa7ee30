"""bot.state against a real redis-server: dedup, supersede, record-once, cooldown, heartbeats."""

from __future__ import annotations

import threading
import time

import pytest

from bot.state import State, StateUnavailable, connect

REPO = "octo-org/tvm-sandbox"


@pytest.fixture
def state(redis_url: str) -> State:
    return State(connect(redis_url), "t:", history_len=3)


def test_delivery_recorded_once_by_id_and_by_body(state: State):
    assert state.first_delivery("d-1", "sha-a")
    assert not state.first_delivery("d-1", "sha-a")  # GitHub redelivery
    assert not state.first_delivery("d-2", "sha-a")  # same body replayed under a new id
    assert state.first_delivery("d-3", "sha-b")
    state.forget_delivery("d-3", "sha-b")
    assert state.first_delivery("d-3", "sha-b")
    ttl = state.r.ttl("t:delivery:d-1")
    assert 6 * 24 * 3600 < int(ttl) <= 7 * 24 * 3600  # type: ignore[arg-type]


def test_newest_job_supersedes_older(state: State):
    state.new_job("j1", {"repo": REPO, "number": 5, "status": "queued"})
    assert not state.is_superseded("j1", REPO, 5)
    state.new_job("j2", {"repo": REPO, "number": 5, "status": "queued"})
    assert state.is_superseded("j1", REPO, 5)
    assert not state.is_superseded("j2", REPO, 5)
    assert state.current_job(REPO, 5) == "j2"
    assert state.update_job("j2", status="running")["status"] == "running"  # type: ignore[index]
    assert state.job("j2")["status"] == "running"  # type: ignore[index]
    assert state.update_job("nope", status="x") is None


def test_result_recorded_once_and_history_bounded(state: State):
    for i in range(5):
        assert state.record_result(f"j{i}", REPO, 9, {"job_id": f"j{i}", "outcome": "passed"})
    assert not state.record_result("j4", REPO, 9, {"job_id": "j4", "outcome": "crash"})
    assert state.is_reported("j4") and not state.is_reported("j9")
    assert state.latest(REPO, 9) == {"job_id": "j4", "outcome": "passed"}
    assert [h["job_id"] for h in state.history(REPO, 9)] == ["j4", "j3", "j2"]
    assert [ref for ref, _ in state.recent_issues()] == [f"{REPO}#9"]


def test_cooldown(state: State):
    assert state.start_cooldown(REPO, 1, 60, token="c1")
    assert not state.start_cooldown(REPO, 1, 60, token="c2")
    assert state.start_cooldown(REPO, 1, 60, token="c1")  # the same request, retried
    assert 0 < state.cooldown_left(REPO, 1) <= 60
    assert state.start_cooldown(REPO, 2, 0)  # no cooldown configured
    assert state.cooldown_left(REPO, 3) == 0


def test_issue_lock_serialises(state: State):
    order: list[str] = []

    def other() -> None:
        with state.issue_lock(REPO, 4, timeout_s=10):
            order.append("other")

    with state.issue_lock(REPO, 4, timeout_s=10):
        t = threading.Thread(target=other)
        t.start()
        time.sleep(0.3)
        order.append("first")
    t.join(10)
    assert order == ["first", "other"]


def test_heartbeats_expire(state: State):
    state.heartbeat("w1", {"queues": ["cpu"], "environment": {"tvm_version": "0.27"}}, ttl_s=1)
    state.heartbeat("w2", {"queues": ["triage"]}, ttl_s=30)
    ws = state.workers()
    assert [w["name"] for w in ws] == ["w1", "w2"]
    assert ws[0]["environment"]["tvm_version"] == "0.27" and ws[0]["seen"] <= time.time()
    time.sleep(1.6)
    assert [w["name"] for w in state.workers()] == ["w2"]
    state.drop_worker("w2")
    assert state.workers() == []


def test_queue_lengths_read_the_broker_lists(state: State):
    state.r.lpush("cpu", "m1", "m2")
    state.r.lpush("triage\x06\x163", "m3")
    assert state.queue_lengths() == {"triage": 1, "cpu": 2, "gpu": 0, "build": 0}


def test_unreachable_redis_is_a_clear_error(redis_factory):
    server = redis_factory()
    st = State(connect(server.url, timeout_s=0.5), "t:")
    assert st.ping()
    server.stop()
    with pytest.raises(StateUnavailable):
        st.ping()
    with pytest.raises(StateUnavailable):
        st.first_delivery("d", "sha")


# -- results over builds -------------------------------------------------------------------
def test_result_cache_is_keyed_by_script_build_commit_and_worker_kind(state: State):
    assert state.cached_result("s1", "main", "c1", "cpu") is None
    assert state.store_result("s1", "main", "c1", "cpu", {"run": {"seconds": 1.5}}) == 1
    assert state.cached_result("s1", "main", "c1", "cpu") == {"run": {"seconds": 1.5}}
    for other in (("s2", "main", "c1", "cpu"), ("s1", "0.26.0", "c1", "cpu"),
                  ("s1", "main", "c2", "cpu"), ("s1", "main", "c1", "gpu")):
        assert state.cached_result(*other) is None, other
    assert state.cached_result("", "main", "c1", "cpu") is None  # no script: never cached
    assert state.store_result("s1", "main", "c1", "cpu", {"run": {"seconds": 2.0}}) == 2
    assert state.cached_result("s1", "main", "c1", "cpu") == {"run": {"seconds": 2.0}}
    assert state.result_runs("s1", "main", "c1", "cpu") == 2


def test_result_cache_survives_a_new_client(state: State, redis_url: str):
    state.store_result("s1", "main", "c1", "cpu", {"run": None, "environment": {"a": "b"}})
    again = State(connect(redis_url), "t:")  # a restarted worker
    assert again.cached_result("s1", "main", "c1", "cpu") == {"run": None,
                                                              "environment": {"a": "b"}}


def test_retest_set_main_and_matrix(state: State):
    state.track(REPO, 1)
    state.track(REPO, 2)
    state.track(REPO, 1)
    assert state.tracked() == [(REPO, 1), (REPO, 2)]
    assert state.untrack(REPO, 1) and not state.untrack(REPO, 1)
    assert state.tracked() == [(REPO, 2)]
    assert state.main(REPO, 2) is None
    state.set_main(REPO, 2, {"commit": "c1", "verdict": "reproduced"})
    assert state.main(REPO, 2) == {"commit": "c1", "verdict": "reproduced"}
    state.set_matrix_row(REPO, 2, "0.26.0", {"outcome": "passed"})
    state.set_matrix_row(REPO, 2, "main", {"outcome": "crash"})
    assert state.matrix(REPO, 2) == {"0.26.0": {"outcome": "passed"}, "main": {"outcome": "crash"}}


def test_sweep_once_per_build_and_hourly_cap(state: State):
    assert state.start_sweep("main", "c1")
    assert not state.start_sweep("main", "c1")
    assert state.start_sweep("main", "c2")
    assert [state.take_retest_slot(7, 2) for _ in range(4)] == [True, True, False, False]
    assert state.take_retest_slot(8, 2)
    assert state.take_retest_slot(7, 0)  # 0 = no cap


def test_closed_issues_leave_the_dashboard_until_a_new_job(state: State):
    state.track("o/closing", 1)
    assert state.untrack("o/closing", 1) is True
    assert "o/closing#1" in state.closed() and ("o/closing", 1) not in state.tracked()
    state.new_job("reopen-1", {"repo": "o/closing", "number": 1})  # reopened: triaged again
    assert "o/closing#1" not in state.closed()


def test_queue_depths_count_low_priority_messages_apart(state: State):
    for key in ("build", "build\x06\x163", "build\x06\x169", "build\x06\x169"):
        state.r.lpush(key, "m")
    try:
        assert state.queue_depths()["build"] == {"total": 4, "low": 2}
        assert state.queue_lengths()["build"] == 4
    finally:
        state.r.delete("build", "build\x06\x163", "build\x06\x169")
