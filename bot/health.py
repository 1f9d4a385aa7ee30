"""``reprobot healthcheck``: is the reprobot process of this container doing its job?

The image has one HEALTHCHECK for every role, so the check first finds which ``reprobot``
command runs beside it (from the process table; :func:`find_role` is pure), then asks the
question that fits the role:

* ``serve``  -- the receiver answers ``GET /healthz`` with 200 (which means Redis answers too);
* ``worker`` -- the worker's own heartbeat (same host, same pid) is fresh in Redis;
* ``beat``   -- Redis answers (the process is alive: the table says so);
* nothing found -- unhealthy: the container's command is not running.
"""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.config import Config

ROLES = ("serve", "worker", "beat")
# A heartbeat older than this is stale (workers send one every few seconds).
HEARTBEAT_MAX_AGE_S = 120.0


@dataclass(frozen=True)
class Role:
    name: str  # serve | worker | beat
    pid: int
    argv: tuple[str, ...]

    def option(self, flag: str, default: str = "") -> str:
        """The value of ``--flag VALUE`` or ``--flag=VALUE`` in the command line."""
        args = self.argv
        for i, a in enumerate(args):
            if a == flag and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(flag + "="):
                return a[len(flag) + 1:]
        return default


def find_role(processes: Iterable[tuple[int, Sequence[str]]]) -> Role | None:
    """The first ``reprobot serve|worker|beat`` among (pid, argv) pairs, lowest pid first."""
    for pid, argv in sorted(processes, key=lambda p: p[0]):
        python = bool(argv) and os.path.basename(argv[0]).startswith("python")
        for i, arg in enumerate(argv[:4]):
            # reprobot ... | python .../reprobot ... | tini -- reprobot ... | python -m bot.cli ...
            console = os.path.basename(arg) == "reprobot" and (
                i == 0 or (i == 1 and python) or (i == 2 and argv[1] == "--"))
            module = arg == "bot.cli" and i == 2 and python and argv[1] == "-m"
            if not (console or module):
                continue
            rest = list(argv[i + 1:])
            # skip global options (``--config FILE``) before the subcommand
            while rest and rest[0].startswith("--"):
                rest = rest[2:] if rest[0] == "--config" else rest[1:]
            if rest and rest[0] in ROLES:
                return Role(rest[0], pid, tuple(rest[1:]))
    return None


def _processes() -> list[tuple[int, list[str]]]:
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            raw = (d / "cmdline").read_bytes()
        except OSError:
            continue
        argv = [a.decode(errors="replace") for a in raw.split(b"\0") if a]
        if argv:
            out.append((int(d.name), argv))
    return out


def check(
    cfg: Config,
    *,
    port: int = 0,
    processes: Iterable[tuple[int, Sequence[str]]] | None = None,
) -> tuple[bool, str]:
    """(healthy, one line saying why) for the reprobot process running beside this one."""
    role = find_role(_processes() if processes is None else processes)
    if role is None:
        return False, "unhealthy: no 'reprobot serve|worker|beat' process runs here"
    if role.name == "serve":
        use = port or int(role.option("--port", "8000"))
        url = f"http://127.0.0.1:{use}/healthz"
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:  # noqa: S310 - loopback
                body = resp.read(2000).decode(errors="replace")
        except urllib.error.HTTPError as e:
            return False, f"unhealthy: {url} answered {e.code}"
        except OSError as e:
            return False, f"unhealthy: {url}: {e}"
        return True, f"healthy: {url} {body.strip()}"

    from bot.state import State, connect

    try:
        state = State(connect(cfg.service.redis_url), cfg.service.key_prefix)
        state.ping()
        if role.name == "beat":
            return True, "healthy: beat is running and Redis answers"
        workers = state.workers()
    except Exception as e:  # process boundary: any failure here is the answer
        return False, f"unhealthy: Redis at {cfg.service.redis_url}: {e}"
    host = socket.gethostname()
    mine = [w for w in workers if w.get("host") == host]
    if not mine:
        return False, f"unhealthy: no worker heartbeat from {host} in Redis"
    age = time.time() - max(float(w.get("seen", 0)) for w in mine)
    if age > HEARTBEAT_MAX_AGE_S:
        return False, f"unhealthy: last heartbeat from {host} is {age:.0f} s old"
    names = json.dumps(sorted(str(w.get("name", "")) for w in mine))
    return True, f"healthy: heartbeat {age:.0f} s old from {names}"
