"""Shared fixtures: the real parts, started on loopback.

- ``redis_server``: a real ``redis-server`` on a free port (no persistence), one per session;
  ``redis_url`` flushes it for the test. ``RedisServer`` starts extra ones (to stop them).
- ``fake_github``: the project's fake GitHub REST server (tests/fake_github.py), a bot token and
  one repository.
- ``service``: a config file + environment pointing at those, and helpers to start real
  processes: ``service.worker(...)`` (``reprobot worker``) and ``service.receiver()`` (``reprobot serve`` under uvicorn); each is stopped at
  the end (and can be SIGKILLed with its whole process group).
- ``sign`` / ``post_webhook``: signed webhook deliveries.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from fake_github import FakeGitHub  # tests/ is on sys.path (pytest rootdir conftest)

REPO = "octo-org/tvm-sandbox"
BOT_TOKEN = "ghp_fake_bot_token_0123456789"
BOT_LOGIN = "reprobot-ci"
WEBHOOK_SECRET = "whsec-e2e-4b1d9f0c7a"
KEY_PREFIX = "rbtest:"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until(cond: Callable[[], Any], timeout: float, what: str, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


class RedisServer:
    """A real redis-server process on 127.0.0.1 (no RDB; AOF when ``aof``, as deploy runs it).

    ``restart()`` stops it (a clean shutdown) and starts it again on the same port and data
    directory.
    """

    def __init__(self, workdir: Path, *, aof: bool = False):
        self.workdir = workdir
        self.port = free_port()
        self.aof = aof
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, decode_responses=True,
                           socket_timeout=5)

    def start(self) -> RedisServer:
        exe = shutil.which("redis-server")
        if exe is None:
            pytest.skip("redis-server is not installed (apt install redis-server)")
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.proc = subprocess.Popen(
            [exe, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "yes" if self.aof else "no", "--appendfsync", "always",
             "--dir", str(self.workdir), "--protected-mode", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )

        def up() -> bool:
            try:
                return bool(self.client().ping())
            except redis.RedisError:
                return False

        wait_until(up, 10, "redis-server to answer PING")
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def restart(self) -> RedisServer:
        self.stop()
        return self.start()


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture
def redis_factory(tmp_path: Path) -> Iterator[Callable[[], RedisServer]]:
    """Start extra redis-servers (e.g. to stop one and see Redis down); stopped at the end."""
    started: list[RedisServer] = []

    def make() -> RedisServer:
        server = RedisServer(tmp_path / f"redis-{len(started)}").start()
        started.append(server)
        return server

    yield make
    for s in started:
        s.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    redis_server.client().flushall()
    return redis_server.url


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    gh = FakeGitHub().start()
    gh.add_token(BOT_TOKEN, BOT_LOGIN)
    gh.add_repo(REPO)
    yield gh
    gh.stop()


def sign(body: bytes, secret: str = WEBHOOK_SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def webhook_headers(event: str, body: bytes, *, delivery: str | None = None,
                    secret: str | None = WEBHOOK_SECRET) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "GitHub-Hookshot/test",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "X-GitHub-Hook-ID": "424242",
    }
    if secret is not None:
        headers["X-Hub-Signature-256"] = sign(body, secret)
    return headers


@dataclass
class Proc:
    """A started process, its log file, and its whole process group to kill."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def alive(self) -> bool:
        return self.popen.poll() is None

    def wait_for(self, text: str, timeout: float) -> None:
        def seen() -> bool:
            if text in self.output():
                return True
            if not self.alive():
                raise AssertionError(f"{self.name} exited ({self.popen.returncode}):\n"
                                     + self.output()[-4000:])
            return False

        wait_until(seen, timeout, f"{self.name} to log {text!r}", interval=0.2)

    def kill(self) -> None:
        """SIGKILL the process and everything it started (a machine lost mid-run)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(10)

    def stop(self) -> None:
        if not self.alive():
            return
        try:
            os.killpg(self.popen.pid, signal.SIGTERM)
            self.popen.wait(15)
        except subprocess.TimeoutExpired:
            self.kill()
        except ProcessLookupError:
            pass
        # Reap what is left of the group (pool children of a worker stopped mid-task).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)


@dataclass
class Service:
    """Configuration and process launchers for the end-to-end tests."""

    tmp: Path
    redis_url: str
    github: FakeGitHub
    cache_dir: Path
    timeout_s: float = 20.0
    cooldown_s: int = 120
    procs: list[Proc] = field(default_factory=list)
    receiver_url: str = ""
    # Extra ``service:`` keys of reprobot.yml (e.g. {"redis_wait_s": 2}).
    service_extra: dict[str, Any] = field(default_factory=dict)
    # Extra top-level YAML appended to reprobot.yml (e.g. a ``dashboard:`` section).
    extra_yaml: str = ""

    @property
    def config_path(self) -> Path:
        return self.config_file()

    def config_file(self, visibility_timeout: int | None = None) -> Path:
        name = f"reprobot-vt{visibility_timeout}.yml" if visibility_timeout else "reprobot.yml"
        path = self.tmp / name
        if not path.exists():
            vt = f"  visibility_timeout_s: {visibility_timeout}\n" if visibility_timeout else ""
            path.write_text(
                "sandbox:\n"
                "  backend: bwrap\n"
                "  limits:\n"
                f"    timeout_s: {self.timeout_s}\n"
                "    memory_bytes: 4GiB\n"
                "    output_bytes: 64KiB\n"
                "service:\n"
                f"  key_prefix: '{KEY_PREFIX}'\n"
                f"  retest_cooldown_s: {self.cooldown_s}\n"
                f"  bot_login: {BOT_LOGIN}\n"
                f"{vt}"
                + "".join(f"  {k}: {v}\n" for k, v in self.service_extra.items())
                + "filters:\n"
                f"  repositories: [{REPO}]\n"
                + self.extra_yaml
            )
        return path

    def env(self, *, github: bool = True) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.tmp),
            "XDG_CACHE_HOME": str(self.cache_dir),
            "REPROBOT_CONFIG": str(self.config_path),
            "REDIS_URL": self.redis_url,
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
        }
        if github:
            env.update({
                "GITHUB_API_URL": self.github.url,
                "GITHUB_TOKEN": BOT_TOKEN,
                "GITHUB_WEBHOOK_SECRET": WEBHOOK_SECRET,
            })
        return env

    def config(self) -> Any:
        from bot.config import load_config

        return load_config(self.config_path, self.env())

    def state(self) -> Any:
        from bot.state import State, connect

        return State(connect(self.redis_url), KEY_PREFIX)

    def _start(self, name: str, argv: list[str], env: dict[str, str]) -> Proc:
        log = self.tmp / f"{name}-{len(self.procs)}.log"
        fh = open(log, "wb")  # noqa: SIM115 - handed to the child
        popen = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, env=env,
                                 cwd=self.tmp, start_new_session=True)
        fh.close()
        proc = Proc(name, popen, log)
        self.procs.append(proc)
        return proc

    def worker(self, queues: str = "triage,cpu", *, concurrency: int = 2,
               visibility_timeout: int | None = None, github: bool = True,
               extra_env: dict[str, str] | None = None) -> Proc:
        # The real console command, as an operator starts it.
        argv = [sys.executable, "-m", "bot.cli", "worker", "--queues", queues,
                "--concurrency", str(concurrency)]
        env = self.env(github=github)
        env["REPROBOT_CONFIG"] = str(self.config_file(visibility_timeout))
        env.update(extra_env or {})
        proc = self._start(f"worker-{queues.replace(',', '-')}", argv, env)
        proc.wait_for(" ready.", 120)
        return proc

    def receiver(self, *, extra_env: dict[str, str] | None = None) -> Proc:
        port = free_port()
        argv = [sys.executable, "-m", "bot.cli", "serve", "--host", "127.0.0.1",
                "--port", str(port)]
        proc = self._start("receiver", argv, {**self.env(), **(extra_env or {})})
        self.receiver_url = f"http://127.0.0.1:{port}"

        def up() -> bool:
            if not proc.alive():
                raise AssertionError("receiver exited:\n" + proc.output()[-4000:])
            try:
                return httpx.get(self.receiver_url + "/healthz", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(up, 30, "the receiver to answer /healthz", interval=0.2)
        return proc

    def post(self, event: str, payload: Any, *, delivery: str | None = None,
             secret: str | None = WEBHOOK_SECRET, body: bytes | None = None) -> httpx.Response:
        raw = body if body is not None else json.dumps(payload).encode()
        headers = webhook_headers(event, raw, delivery=delivery, secret=secret)
        return httpx.post(self.receiver_url + "/webhook", content=raw, headers=headers,
                          timeout=15)

    def stop_all(self) -> None:
        for p in reversed(self.procs):
            p.stop()


@pytest.fixture(scope="session")
def probe_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One environment-probe cache for the session (the probe imports TVM: ~2 s)."""
    return tmp_path_factory.mktemp("cache")


# --------------------------------------------------------------------------------------------
# Release builds from the real apache-tvm wheels (made once: by .ci/run, or here)

RELEASE_SPECS = {"0.26.0": "apache-tvm==0.26.0", "0.27.0.post1": "apache-tvm==0.27.0.post1"}


@pytest.fixture(scope="session")
def release_builds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A builds directory holding both releases: ``REPROBOT_TEST_RELEASE_BUILDS`` when
    ``.ci/run`` made it (pip needs the network, the tests do not), else made here once."""
    given = os.environ.get("REPROBOT_TEST_RELEASE_BUILDS")
    where = Path(given) if given else tmp_path_factory.mktemp("release-builds")
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "bot.cli", "builds", "--builds-dir",
                               str(where), *args], capture_output=True, text=True, env=env,
                              timeout=900, cwd=root)

    for name, spec in RELEASE_SPECS.items():
        ok = cli("list", "--json")
        have = {b["name"]: b for b in json.loads(ok.stdout or "[]")} if ok.returncode == 0 else {}
        if have.get(name, {}).get("status") == "ready":
            continue
        made = cli("add", name, "--pip", spec, "--pip", "numpy")
        assert made.returncode == 0, made.stderr[-3000:]
    return where
