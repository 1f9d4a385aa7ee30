"""`reprobot healthcheck`: the image's one HEALTHCHECK, for every role."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from bot.config import Config, ServiceConfig
from bot.health import check, find_role
from bot.state import State, connect
from tests.conftest import Service
from tests.fake_github import FakeGitHub

PREFIX = "rbhealth:"


@pytest.mark.parametrize(
    ("argv", "role", "rest"),
    [
        (["tini", "--", "reprobot", "serve", "--host", "0.0.0.0"], "serve",
         ("--host", "0.0.0.0")),
        (["/opt/reprobot/bin/python", "/opt/reprobot/bin/reprobot", "worker", "--queues", "cpu"],
         "worker", ("--queues", "cpu")),
        (["/opt/reprobot/bin/python", "/opt/reprobot/bin/reprobot", "--config", "/x.yml",
          "beat"], "beat", ()),
        (["python3", "-m", "bot.cli", "serve", "--port", "9000"], "serve", ("--port", "9000")),
    ],
)
def test_role_is_found_in_the_process_table(argv: list[str], role: str,
                                            rest: tuple[str, ...]) -> None:
    found = find_role([(1, ["sh"]), (7, argv), (9, ["sleep", "1"])])
    assert found is not None
    assert (found.name, found.pid, found.argv) == (role, 7, rest)


@pytest.mark.parametrize(
    "argv",
    [
        ["reprobot", "triage", "issue.md"],          # a one-off command is not a service
        ["reprobot", "app", "manifest", "--url", "https://h"],
        ["python3", "bot.cli", "serve"],             # not run as a module
        ["grep", "reprobot", "serve"],               # the words, not the command
        ["sh", "-c", "echo a b c reprobot serve"],
        [],
    ],
)
def test_no_role_in_other_processes(argv: list[str]) -> None:
    assert find_role([(5, argv)]) is None


def test_lowest_pid_wins() -> None:
    found = find_role([(40, ["reprobot", "worker"]), (1, ["tini", "--", "reprobot", "beat"])])
    assert found is not None and found.name == "beat"


def test_option_forms() -> None:
    found = find_role([(1, ["reprobot", "serve", "--port=8123"])])
    assert found is not None and found.option("--port") == "8123"
    assert found.option("--host", "d") == "d"


def _cfg(redis_url: str) -> Config:
    return replace(Config(), service=ServiceConfig(redis_url=redis_url, key_prefix=PREFIX))


def test_nothing_running_is_unhealthy() -> None:
    ok, why = check(Config(), processes=[(1, ["sh"])])
    assert not ok and "no 'reprobot serve|worker|beat'" in why


def test_worker_is_healthy_only_with_its_own_fresh_heartbeat(redis_url: str) -> None:
    cfg = _cfg(redis_url)
    procs: list[tuple[int, Sequence[str]]] = [(1, ["tini", "--", "reprobot", "worker"])]
    ok, why = check(cfg, processes=procs)
    assert not ok and "no worker heartbeat" in why

    state = State(connect(redis_url), PREFIX)
    state.heartbeat("reprobot-cpu-1@elsewhere", {"host": "elsewhere"})
    ok, why = check(cfg, processes=procs)
    assert not ok, "another machine's heartbeat does not count"

    host = socket.gethostname()
    state.heartbeat(f"reprobot-cpu-1@{host}", {"host": host})
    ok, why = check(cfg, processes=procs)
    assert ok, why
    assert f"reprobot-cpu-1@{host}" in why

    state.heartbeat(f"reprobot-cpu-1@{host}", {"host": host})
    raw = state.r.get(f"{PREFIX}worker:reprobot-cpu-1@{host}")
    assert raw is not None
    stale = raw.decode() if isinstance(raw, bytes) else str(raw)
    data = json.loads(stale)
    data["seen"] = time.time() - 3600
    state.r.set(f"{PREFIX}worker:reprobot-cpu-1@{host}", json.dumps(data))
    ok, why = check(cfg, processes=procs)
    assert not ok and "old" in why


def test_worker_and_beat_without_redis_are_unhealthy(tmp_path: Path) -> None:
    from tests.conftest import free_port

    cfg = _cfg(f"redis://127.0.0.1:{free_port()}/0")
    for role in ("worker", "beat"):
        ok, why = check(cfg, processes=[(1, ["reprobot", role])])
        assert not ok and "Redis" in why


def test_beat_is_healthy_when_redis_answers(redis_url: str) -> None:
    ok, why = check(_cfg(redis_url), processes=[(1, ["reprobot", "beat"])])
    assert ok, why


@pytest.mark.service
def test_receiver_healthy_then_unhealthy_when_redis_goes(tmp_path: Path, probe_cache: Path,
                                                         fake_github: FakeGitHub) -> None:
    from tests.conftest import RedisServer

    server = RedisServer(tmp_path / "redis").start()
    svc = Service(tmp_path, server.url, fake_github, probe_cache)
    try:
        proc = svc.receiver()
        port = svc.receiver_url.rsplit(":", 1)[1]
        argv = [str(a) for a in proc.popen.args]  # type: ignore[union-attr]
        assert "--port" in argv and port in argv
        procs = [(proc.popen.pid, argv)]
        ok, why = check(Config(), processes=procs)
        assert ok, why
        server.stop()
        ok, why = check(Config(), processes=procs)
        assert not ok and "503" in why
        proc.stop()
        ok, why = check(Config(), processes=procs)
        assert not ok
    finally:
        svc.stop_all()
        server.stop()
