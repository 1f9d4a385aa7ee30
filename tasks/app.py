"""The Celery app: Redis broker + result backend, explicit queues, safe settings for long jobs.

``make_celery(config)`` builds the app from the typed config (the web app uses it only to
``send_task`` by name; it never imports the task code). ``run_worker(config, queues,
concurrency)`` starts a worker in this process: the checks a worker needs at start (GitHub
credentials for ``triage`` only; a working sandbox for ``cpu``/``gpu``; a GPU for ``gpu``), a
heartbeat thread that publishes the worker's environment to Redis for the dashboard, then
Celery's own worker.

Queues:
- ``triage``: ``reprobot.triage`` (fetch, extract, pick the worker kind), ``reprobot.status``
  (comment "running"), ``reprobot.report`` (classify, compare, render, edit comment + labels).
  The only queue that talks to GitHub.
- ``cpu`` / ``gpu``: ``reprobot.run`` (run the script in the sandbox, probe the environment).
  No GitHub credentials there.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import subprocess
import threading
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import Any

from celery import Celery
from kombu import Queue

from bot.config import Config, GitHubConfig, require_github
from bot.errors import ReprobotError

log = logging.getLogger("reprobot.worker")

QUEUES = ("triage", "cpu", "gpu", "build")
TASK_TRIAGE = "reprobot.triage"
TASK_BUILD = "reprobot.build_update"
BUILD_SOFT_LIMIT_S = 8 * 3600  # a first TVM build on a small machine takes hours
BUILD_HARD_LIMIT_S = BUILD_SOFT_LIMIT_S + 600
TASK_RUN = "reprobot.run"
TASK_STATUS = "reprobot.status"
TASK_REPORT = "reprobot.report"
TASK_SWEEP = "reprobot.sweep"  # a new main build: re-test open issues (triage queue)
TASK_BISECT = "reprobot.bisect"  # bisect between two main builds (cpu/gpu queue, low priority)
TASK_BISECTED = "reprobot.bisected"  # a bisection's result into the comment (triage queue)
TASK_SWEEP_DELIVERIES = "reprobot.sweep_deliveries"

# Tasks on the triage queue only talk to GitHub and Redis (GitHub retries with back-off inside).
TRIAGE_SOFT_LIMIT_S = 240
TRIAGE_HARD_LIMIT_S = 300
HEARTBEAT_INTERVAL_S = 15


def run_time_limits(config: Config) -> tuple[int, int]:
    """(soft, hard) limits of a run task: above the sandbox's own wall-time limit, so the sandbox
    always kills the script first and reports a timeout; the task limit only catches our bugs."""
    timeout = int(config.sandbox.limits.timeout_s)
    return timeout + 60, timeout + 120


def triage_time_limits(config: Config) -> tuple[int, int]:
    """(soft, hard) limits of a triage-queue task."""
    soft = int(getattr(config.service, "triage_time_limit_s", 0) or TRIAGE_SOFT_LIMIT_S)
    return soft, soft + (TRIAGE_HARD_LIMIT_S - TRIAGE_SOFT_LIMIT_S)


def visibility_timeout(config: Config, override: int | None = None) -> int:
    """How long an unacknowledged message waits before Redis hands it to another worker.

    With late acks a message is acknowledged only when its task ends, so this must exceed the
    longest task or a still-running job would be started twice. It is also how long a job of a
    worker killed outright (the whole process, not just a pool child) waits to be redone.
    """
    if override:
        return int(override)
    configured = getattr(config.service, "visibility_timeout_s", 0)
    if configured:
        return int(configured)
    return max(run_time_limits(config)[1], triage_time_limits(config)[1]) + 60


def make_celery(config: Config, *, visibility_timeout_s: int | None = None) -> Celery:
    url = config.service.redis_url
    app = Celery("reprobot", broker=url, backend=url, include=["tasks.jobs"])
    soft, hard = run_time_limits(config)
    vt = visibility_timeout(config, visibility_timeout_s)
    app.conf.update(
        task_queues=[Queue(q, routing_key=q) for q in QUEUES],
        task_default_queue="triage",
        task_create_missing_queues=False,
        task_routes={
            TASK_TRIAGE: {"queue": "triage"},
            TASK_STATUS: {"queue": "triage"},
            TASK_REPORT: {"queue": "triage"},
            TASK_SWEEP_DELIVERIES: {"queue": "triage"},
            TASK_BUILD: {"queue": "build"},
            TASK_SWEEP: {"queue": "triage"},
            TASK_BISECTED: {"queue": "triage"},
            # reprobot.run: the queue (cpu or gpu) is chosen per job by the triage task.
        },
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_prefetch_multiplier=1,
        task_soft_time_limit=triage_time_limits(config)[0],
        task_time_limit=triage_time_limits(config)[1],
        task_annotations={
            TASK_RUN: {"soft_time_limit": soft, "time_limit": hard},
            TASK_BUILD: {"soft_time_limit": BUILD_SOFT_LIMIT_S, "time_limit": BUILD_HARD_LIMIT_S},
            # A bisection builds up to bisect.max_steps commits and runs the script on each.
            TASK_BISECT: {"soft_time_limit": BUILD_SOFT_LIMIT_S, "time_limit": BUILD_HARD_LIMIT_S},
        },
        task_serializer="json",
        accept_content=["json"],
        result_serializer="json",
        result_expires=24 * 3600,
        task_ignore_result=True,  # results live in our own state keys; no one waits on them
        broker_connection_retry_on_startup=True,
        # Once started, a worker that loses Redis (a restart) reconnects, however long it takes
        # (at start, require_redis has already waited a bounded time).
        broker_connection_max_retries=None,
        broker_connection_timeout=3,
        broker_transport_options={
            "visibility_timeout": vt,
            # How often a worker looks for messages of dead workers to hand out again.
            "unacked_restore_interval": max(1, min(10, vt // 3)),
            "unacked_restore_throttle": 1,
            "socket_timeout": 10,
            "socket_connect_timeout": 3,
        },
        result_backend_transport_options={"visibility_timeout": vt},
        worker_send_task_events=False,
        worker_hijack_root_logger=False,
        worker_cancel_long_running_tasks_on_connection_loss=False,
    )
    app.conf.beat_schedule = beat_schedule(config)
    app.reprobot = Runtime(config, app)
    return app


def beat_schedule(config: Config) -> dict[str, Any]:
    """Periodic tasks (``reprobot worker --beat`` runs the scheduler in one worker)."""
    schedule: dict[str, Any] = {}
    every = int(getattr(config.service, "redelivery_sweep_s", 0) or 0)
    gh = config.github
    if every > 0 and gh.app_id and gh.private_key:  # the deliveries API is the App's
        schedule["redelivery-sweep"] = {
            "task": TASK_SWEEP_DELIVERIES, "schedule": float(every),
            "options": {"queue": "triage", "expires": float(every)},
        }
    return schedule


def build_schedule(config: Config) -> dict[str, Any]:
    """``reprobot beat``: ``builds update main`` every ``builds.update_every`` on the build queue."""
    every = float(config.builds.update_every_s)
    return {
        "update-main-build": {
            "task": TASK_BUILD,
            "schedule": every,
            "args": [["main"]],
            "options": {"queue": "build", "routing_key": "build", "expires": every},
        }
    }


class Runtime:
    """What the tasks of one worker process share: the config and lazily made clients.

    Clients are made on first use, i.e. in the pool process after the fork.
    """

    def __init__(self, config: Config, app: Celery, *, hostname: str = ""):
        self.config = config
        self.app = app
        self.hostname = hostname or socket.gethostname()

    @cached_property
    def state(self) -> Any:
        from bot.state import State, connect

        svc = self.config.service
        return State(connect(svc.redis_url), svc.key_prefix, history_len=svc.history_len)

    @cached_property
    def github(self) -> Any:
        from bot.github import GitHubClient

        return GitHubClient.from_config(self.config.github, bot_login=self.config.service.bot_login)

    def enqueue(self, name: str, args: list[Any], queue: str, *,
                priority: int | None = None) -> None:
        """Send a task; ``priority`` 9 = served after everything else on that queue (Redis
        keeps each priority level as its own list, emptied in order)."""
        if priority is None:
            self.app.send_task(name, args=args, queue=queue, routing_key=queue)
        else:
            self.app.send_task(name, args=args, queue=queue, routing_key=queue,
                               priority=priority)

    @cached_property
    def runner(self) -> Any:
        """The script runner of a cpu/gpu worker: its sandbox backend is chosen here, once."""
        from tasks.runner import SandboxRunner

        return SandboxRunner(self.config.sandbox, cache_dir=probe_cache_dir())

    @cached_property
    def services(self) -> Any:
        from bot.service import Services

        return Services(
            config=self.config,
            state=self.state,
            github_factory=lambda: self.github,
            enqueue=self.enqueue,
            hostname=self.hostname,
            cache_dir=probe_cache_dir(),
        )


def probe_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "reprobot"


def runtime(app: Celery) -> Runtime:
    rt = getattr(app, "reprobot", None)
    if not isinstance(rt, Runtime):
        raise ReprobotError("the Celery app was not made by tasks.app.make_celery(config)")
    return rt


def find_gpu() -> str | None:
    """The GPU this machine has (``nvidia-smi -L`` first line, or the device node), or None."""
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=20)
            line = next((x for x in out.stdout.splitlines() if x.strip()), "")
            if out.returncode == 0 and line:
                return line.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    for dev in ("/dev/nvidia0", "/dev/kfd"):
        if os.path.exists(dev):
            return dev
    return None


def prepare_worker(config: Config, queues: list[str]) -> tuple[Config, dict[str, Any]]:
    """The checks at start; returns the config the worker runs with and its environment info."""
    bad = [q for q in queues if q not in QUEUES]
    if not queues or bad:
        raise ReprobotError(f"queues must be triage, cpu, gpu and/or build (got {queues!r})")
    info: dict[str, Any] = {"queues": list(queues), "pid": os.getpid(), "host": socket.gethostname()}
    if "triage" in queues:
        require_github(config, webhook=False, api=True)
    else:
        gh = config.github
        if gh.token or gh.private_key:
            log.warning(
                "this worker serves only %s and needs no GitHub credentials: they are dropped "
                "(do not give them to run workers)", ",".join(queues)
            )
        config = replace(config, github=GitHubConfig(api_url=config.github.api_url))
    if "gpu" in queues:
        gpu = find_gpu()
        if gpu is None:
            raise ReprobotError(
                "this worker serves the gpu queue but no GPU was found "
                "(no nvidia-smi device, no /dev/nvidia0): serve cpu only"
            )
        log.warning("GPU: %s", gpu)
        info["gpu"] = gpu
    if "build" in queues and "triage" in queues:
        raise ReprobotError("the build queue runs trusted builds with no GitHub credentials: "
                            "serve it from another worker than the triage queue")
    if "build" in queues:
        from tasks.backends import make_sandbox

        # the smoke test of a new build runs in the sandbox: raises InfraError with how to fix
        info["sandbox"] = make_sandbox(config.sandbox).check()
    if "cpu" in queues or "gpu" in queues or "build" in queues:
        info["builds_dir"] = config.builds.dir or "default"
        info["builds"] = builds_summary(config)
    if "cpu" in queues or "gpu" in queues:
        from tasks.backends import make_sandbox
        from tasks.probe import probe_environment

        # raises InfraError with how to fix
        info["sandbox"] = make_sandbox(config.sandbox).check()
        try:
            env = probe_environment(config.tvm.python, cache_dir=probe_cache_dir())
        except ReprobotError as e:
            raise ReprobotError(f"cannot probe the TVM environment: {e}") from e
        info["environment"] = env
        info.setdefault("gpu", env.get("gpu", ""))
    return config, info


def builds_summary(config: Config) -> list[dict[str, Any]]:
    """The builds on this worker's disk as the heartbeat publishes them (list entries)."""
    from tasks.builder import registry_for

    try:
        return [b.to_json() for b in registry_for(config).list()]
    except (OSError, ReprobotError) as e:
        log.warning("cannot read the builds in %s: %s", config.builds.dir, e)
        return []


def require_redis(config: Config) -> None:
    """At start: Redis (the broker) must answer within ``service.redis_wait_s``; otherwise say
    so and stop (exit 2) instead of retrying silently forever. Once started, a worker that
    loses Redis reconnects by itself."""
    from bot.state import StateUnavailable, redacted, wait_for_redis

    svc = config.service
    log.warning("connecting to Redis at %s (waiting up to %d s)", redacted(svc.redis_url),
                svc.redis_wait_s)
    try:
        wait_for_redis(svc.redis_url, svc.redis_wait_s)
    except StateUnavailable as e:
        raise ReprobotError(f"{e}; start redis-server or fix REDIS_URL / service.redis_url") from e


def _beat_args(config: Config) -> list[str]:
    """Run the periodic scheduler inside this worker (start exactly one such worker)."""
    path = probe_cache_dir() / "celerybeat-schedule"
    path.parent.mkdir(parents=True, exist_ok=True)
    return ["--beat", "--schedule", str(path)]


class Heartbeat(threading.Thread):
    def __init__(self, config: Config, name: str, info: dict[str, Any]):
        super().__init__(name="reprobot-heartbeat", daemon=True)
        self.config, self.worker_name, self.info = config, name, info
        self.stopped = threading.Event()

    def run(self) -> None:
        from bot.state import State, connect

        svc = self.config.service
        state = State(connect(svc.redis_url), svc.key_prefix)
        while not self.stopped.is_set():
            if "builds_dir" in self.info:  # builds change while the worker runs
                self.info["builds"] = builds_summary(self.config)
            try:
                state.heartbeat(self.worker_name, self.info, ttl_s=HEARTBEAT_INTERVAL_S * 4)
            except Exception as e:  # process boundary: the heartbeat must never kill the worker
                log.warning("heartbeat to Redis failed: %s", e)
            self.stopped.wait(HEARTBEAT_INTERVAL_S)
        with contextlib.suppress(Exception):  # process boundary (shutdown)
            state.drop_worker(self.worker_name)


def run_beat(config: Config, *, loglevel: str = "INFO") -> None:
    """Start Celery beat in this process (one per deployment); returns when it stops."""
    logging.basicConfig(level=getattr(logging, loglevel, logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    app = make_celery(config)
    app.conf.beat_schedule = build_schedule(config)  # the sweep runs in a triage --beat
    schedule = probe_cache_dir() / "celerybeat-schedule"
    schedule.parent.mkdir(parents=True, exist_ok=True)
    app.start(["beat", "--loglevel", loglevel, "--schedule", str(schedule)])


def run_worker(
    config: Config,
    queues: list[str],
    concurrency: int,
    *,
    loglevel: str = "INFO",
    with_beat: bool = False,
) -> None:
    """Start a Celery worker in this process serving ``queues``; returns when it stops."""
    logging.basicConfig(level=getattr(logging, loglevel, logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config, info = prepare_worker(config, queues)  # what is wrong with the config: first
    require_redis(config)
    name = f"reprobot-{'-'.join(queues)}-{os.getpid()}@{socket.gethostname()}"
    info["concurrency"] = concurrency
    app = make_celery(config)
    app.reprobot = Runtime(config, app, hostname=name)
    beat = Heartbeat(config, name, info)
    beat.start()
    try:
        app.worker_main([
            "worker",
            "--queues", ",".join(queues),
            "--concurrency", str(concurrency),
            "--hostname", name,
            "--loglevel", loglevel,
            "--pool", "prefork",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            *(_beat_args(config) if with_beat else []),
        ])
    finally:
        beat.stopped.set()
        beat.join(timeout=5)
