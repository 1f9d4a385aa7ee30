"""Run one repro script in the sandbox and say what happened (a ``RunResult``).

The backend (``tasks.backends``: bwrap, docker, none) is an object made once at start; it
prepares each run's command line and kernel objects and decodes how it ended, while this module
starts and watches every backend's run the same way (``_Run``).

``run_script`` writes the script as a real file ``repro.py`` in a fresh scratch directory and
runs ``python -X faulthandler repro.py ARGS`` there (as ``__main__``, never from stdin), with an
allow-listed environment, under the limits of ``SandboxConfig.limits``:

* time: the whole tree is killed at the deadline (``timed_out``, ``limit_hit="time"``);
* memory / processes: a per-run cgroup when the host allows one (OOM kill or pids.max),
  otherwise the tree is polled through /proc and killed when over;
* output: both streams are read concurrently (no pipe stall); the last ``output_bytes`` of each
  are kept (``*_truncated`` when more came). Output over the cap is only truncation; a flood
  that goes on past ``OUTPUT_FLOOD_FACTOR`` x the cap on one stream is a limit hit
  (``limit_hit="output"``) and the run is killed, so an endless flood costs bounded time;
* scratch disk: the writable tmpfs has the size limit; filling it is ``limit_hit="disk"``.

``InfraError`` is raised when OUR side failed (interpreter missing, bwrap could not set up its
namespaces, the cgroup could not be joined); never for anything the script did.
"""

from __future__ import annotations

import contextlib
import os
import select
import selectors
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from bot.config import SandboxConfig
from bot.errors import InfraError
from bot.runs import RunLimits, RunResult
from tasks import sandbox as sb
from tasks.backends import HOST_ENV, Launch, RunSpec, Sandbox, make_sandbox
from tasks.watched import (  # noqa: F401  (parse_status, decode_shell_status: runner's names too)
    _READ_CHUNK,
    Watched,
    _Tail,
    decode_shell_status,
    parse_status,
    setup_failure,
)

TYPE_CHECKING = False  # typing's, without importing typing (5 ms): see bot/records.py
if TYPE_CHECKING:
    from typing import Any

    from tasks.launch import Early, Spawned

# A stream producing more than this many times its kept tail is an output flood: killed.
OUTPUT_FLOOD_FACTOR = 50
# How often limits are checked while the script runs.
TICK_S = 0.05
# After the main process exits, how long to wait for the pipes to close (none backend only:
# bwrap's pid namespace dies with its main process).
DRAIN_GRACE_S = 0.5
# A scratch tmpfs with less free space than this counts as full.
DISK_FULL_SLACK = 64 * 1024
# The repro's command-line arguments, all together (the kernel's own limit is ~2 MiB, 128 KiB
# per argument); longer is refused with InfraError before anything starts.
MAX_ARGS_BYTES = 64 * 1024


def run_script(
    script: str,
    *,
    python: str,
    args: Sequence[str] = (),
    sandbox: Sandbox | SandboxConfig,
    gpu: bool = False,
    pass_env: Mapping[str, str] = {},
    cache_dir: Path | None = None,
) -> RunResult:
    """Run ``script`` as ``repro.py`` in the sandbox; see the module docstring.

    ``sandbox`` is the backend made once at start (``tasks.backends.make_sandbox``); a
    ``SandboxConfig`` is accepted too (the backend is then made for this call).
    ``cache_dir`` keeps what was learnt about the interpreter on disk between processes.
    """
    args = _check_args(args)
    box = sandbox if isinstance(sandbox, Sandbox) else make_sandbox(sandbox)
    spec = RunSpec(script=script, python=python, args=tuple(args), gpu=gpu,
                   pass_env=dict(pass_env), cache_dir=cache_dir)
    launch = box.prepare(spec)
    try:
        run = _Run(launch, limits=box.limits)
        launch.started()
        watched = run.wait()
        code, sig = box.exit_status(launch, watched)
        return watched.result(code, sig, box.name)
    finally:
        box.cleanup(launch)


def _check_args(args: Sequence[str]) -> list[str]:
    args = [str(a) for a in args]
    size = sum(len(a.encode("utf-8", "surrogateescape")) + 1 for a in args)
    if size > MAX_ARGS_BYTES:
        raise InfraError(
            f"the repro's command-line arguments are too long to run ({size} bytes; "
            f"at most {MAX_ARGS_BYTES})"
        )
    if any("\0" in a for a in args):
        raise InfraError("the repro's command-line arguments contain a NUL byte")
    return args


class SandboxRunner:
    """Runs scripts with one sandbox backend, made once at start; implements
    ``bot.service.ScriptRunner`` (what a cpu/gpu worker and ``reprobot triage`` inject)."""

    def __init__(self, sandbox: Sandbox | SandboxConfig, *, cache_dir: Path | None = None):
        self.sandbox = (sandbox if isinstance(sandbox, Sandbox)
                        else make_sandbox(sandbox, cache_dir=cache_dir))
        if self.sandbox.cache_dir is None:
            self.sandbox.cache_dir = cache_dir
        self.cache_dir = cache_dir

    def run(self, script: str, *, python: str, args: Sequence[str] = (), gpu: bool = False,
            pass_env: Mapping[str, str] = {}) -> RunResult:
        return run_script(script, python=python, args=args, sandbox=self.sandbox, gpu=gpu,
                          pass_env=pass_env, cache_dir=self.cache_dir)

    def environment(self, python: str) -> dict[str, str]:
        return self.sandbox.environment(python, run_script)

    def prestart(self, python: str, *, pass_env: Mapping[str, str] = {},
                 preload: Sequence[tuple[str, Sequence[str]]] = (("tvm", ()),),
                 early: Early | None = None) -> Prestarted | None:
        """Start a CPU run on ``python`` before its script is known (see ``Prestarted``), or
        None where this backend cannot (docker) or a passed PYTHONPATH would meet the hook's.
        ``preload``: the imports it does meanwhile, ``(module, fromlist)`` in order.
        InfraError when the sandbox cannot be set up (a cold run would say the same).
        ``early``: the run ``reprobot triage``'s console entry started from the last recipe
        (``tasks.launch``): used when its recipe is this run's, else killed unused."""
        return prestart(python, sandbox=self.sandbox, pass_env=pass_env,
                        cache_dir=self.cache_dir, preload=preload, early=early)

    def check(self) -> str:
        return self.sandbox.check()


def check_sandbox(sandbox: Sandbox | SandboxConfig) -> str:
    """Worker start-up check: can this backend run scripts here? Returns a one-line summary.

    Raises InfraError saying why not and how to fix it; never falls back to another backend.
    """
    box = sandbox if isinstance(sandbox, Sandbox) else make_sandbox(sandbox)
    return box.check()


# --------------------------------------------------------------------------- warm start


def prestart(python: str, *, sandbox: Sandbox, pass_env: Mapping[str, str] = {},
             cache_dir: Path | None = None,
             preload: Sequence[tuple[str, Sequence[str]]] = (("tvm", ()),),
             early: Early | None = None) -> Prestarted | None:
    """See ``SandboxRunner.prestart``."""
    if not sandbox.warm_start or "PYTHONPATH" in pass_env:
        if early is not None:
            early.discard(forget=True)
        return None
    from tasks import warm
    from tasks.backends import WarmFds

    message = warm.preload_message(preload)  # (ValueError for a name that is no import)
    spec = RunSpec(script="", python=python, pass_env=dict(pass_env), cache_dir=cache_dir,
                   warm=WarmFds(hook_zip=-1, channel=-1))
    recipe = sandbox.recipe(spec)
    taken = None
    if early is not None:
        if recipe is None:
            early.discard(forget=True)  # (a backend without recipes: none to save)
        else:
            taken = early.take(recipe)
    launch: Launch | None = None
    if taken is not None:  # started from this very recipe before the bot's modules loaded
        made, proc, channel, started_at = taken
        assert recipe is not None
        try:
            launch = sandbox.launch_of(recipe, spec, made)
            run = _Run(launch, limits=sandbox.limits, proc=(proc, started_at))
            ours = socket.socket(fileno=channel)
        except BaseException:  # (not left to --die-with-parent: its cgroup and scratch too)
            from tasks.launch import kill_unused

            kill_unused(made, proc, channel)
            raise
    else:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        hook_fd = -1
        try:
            hook_fd = sb.data_fd(warm.hook_zip(theirs.fileno()), "warm-hook")
            spec = RunSpec(script="", python=python, pass_env=dict(pass_env),
                           cache_dir=cache_dir, warm=WarmFds(hook_zip=hook_fd,
                                                              channel=theirs.fileno()))
            launch = (sandbox.launch_of(recipe, spec) if recipe is not None
                      else sandbox.prepare(spec))
            run = _Run(launch, limits=sandbox.limits)
            launch.started()
        except BaseException:
            ours.close()
            if launch is not None:
                sandbox.cleanup(launch)
            raise
        finally:
            theirs.close()  # the run holds its own copies now (or never will)
            if hook_fd >= 0:
                os.close(hook_fd)
    assert launch is not None
    with contextlib.suppress(OSError):  # (it died meanwhile: go() sees how)
        ours.sendall(message)
    started = Prestarted(sandbox, launch, run, ours, python=python, pass_env=dict(pass_env),
                         cache_dir=cache_dir)
    started.preload = tuple((m, tuple(f)) for m, f in preload)
    return started


class Prestarted:
    """A CPU run started before its script is known: the interpreter runs in the sandbox with
    the same limits, environment and command line as a run, has done the ``preload`` imports
    (tvm's; the warm hook, ``tasks/warm_hook.py``) and waits. Its watcher runs from the start, so the time limit
    counts from the prestart and ``seconds`` is from the prestart to the exit.

    ``go(script, args)`` hands it the script and returns its ``RunResult``; when the hook says
    the start is not equivalent (importing tvm raised, a real usercustomize...) the script
    runs cold instead. ``discard()`` kills it and releases everything. Use only for a script
    whose leading imports begin with the preload (``bot.warmstart.warm_start_eligible``).
    """

    def __init__(self, sandbox: Sandbox, launch: Launch, run: _Run, channel: Any, *,
                 python: str, pass_env: dict[str, str], cache_dir: Path | None) -> None:
        self.sandbox, self.launch, self.run = sandbox, launch, run
        self.channel = channel
        self.python, self.pass_env, self.cache_dir = python, pass_env, cache_dir
        self.watched: Watched | None = None
        self.error: BaseException | None = None
        self.done = False
        # how go() ran the script: "warm" (here), "cold" (a run of its own), or None (not yet)
        self.used: str | None = None
        self.preload: tuple[tuple[str, tuple[str, ...]], ...] = (("tvm", ()),)
        self.thread = threading.Thread(target=self._watch, name="reprobot-warm", daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        try:
            self.watched = self.run.wait()
        except BaseException as e:  # handed to the caller of go()
            self.error = e

    def _hook_says(self) -> bytes:
        """The hook's next byte (``tasks.warm``: 1, 0, 2), or b"" when the run ended first
        (died, killed, limit)."""
        while True:
            ready, _, _ = select.select([self.channel], [], [], TICK_S)
            if ready:
                try:
                    return bytes(self.channel.recv(1))
                except OSError:
                    return b""
            if not self.thread.is_alive():
                return b""

    def go(self, script: str, args: Sequence[str] = ()) -> RunResult:
        if self.done:
            raise RuntimeError("this prestarted run was already used")
        from tasks import warm

        try:
            args = _check_args(args)
        except InfraError:
            self.discard()
            raise
        said = self._hook_says()
        if said == b"" and self.thread.is_alive():
            self.thread.join()  # (the channel closed as the run ended)
        died = said == b"" and (self.watched is None or not (
            self.watched.timed_out or self.watched.limit_hit is not None))
        if said == warm.NOT_EQUIVALENT or died:
            # Not equivalent, or it ended by itself while importing tvm (a crash, an exit):
            # the script's own run shows it with its own frames (no hook frame in a dump).
            self.discard()
            self.used = "cold"
            return run_script(script, python=self.python, args=args, sandbox=self.sandbox,
                              pass_env=self.pass_env, cache_dir=self.cache_dir)
        if said == warm.READY:
            with contextlib.suppress(OSError):  # (it died meanwhile: its own result)
                self.channel.sendall(warm.message(script, args))
                self.channel.shutdown(socket.SHUT_WR)
            if self._hook_says() == warm.NOT_EQUIVALENT:  # it could not write the script
                self.discard()
                self.used = "cold"
                return run_script(script, python=self.python, args=args,
                                  sandbox=self.sandbox, pass_env=self.pass_env,
                                  cache_dir=self.cache_dir)
        # else (b""): a limit (time, memory...) ended it while importing tvm, the script's
        # own first statement: that is its result
        self.done = True
        self.used = "warm"
        try:
            self.channel.close()
            self.thread.join()
            if self.error is not None:
                raise self.error
            assert self.watched is not None
            code, sig = self.sandbox.exit_status(self.launch, self.watched)
            return self.watched.result(code, sig, self.sandbox.name)
        finally:
            self._release()

    def discard(self) -> None:
        """Kill the prestarted run (whole tree) and release its cgroup, uid and scratch."""
        if self.done:
            return
        self.done = True
        self.channel.close()  # the hook exits at once on EOF
        self.run.kill(None)
        self._release()

    def _release(self) -> None:
        with contextlib.suppress(OSError):
            self.channel.close()
        if self.thread.is_alive():
            self.thread.join()
        self.sandbox.cleanup(self.launch)


# --------------------------------------------------------------------------- the watcher


class _Run:
    """Start a backend's ``Launch`` in its own session and watch it until it ends or a limit
    kills it (the same for every backend)."""

    def __init__(self, launch: Launch, *, limits: RunLimits,
                 proc: tuple[Spawned, float] | None = None) -> None:
        """``proc``: the launch's process and its start (``time.monotonic()``), when it was
        started already (``tasks.launch.Early``)."""
        self.limits = limits
        self.cgroup = launch.cgroup
        self.status_r = launch.status_r
        self.on_kill = launch.on_kill
        self.watch_disk = launch.watch_disk
        self.poll_tree = launch.poll_tree and launch.cgroup is None
        self.find_cgroup = launch.find_cgroup
        self.start = time.monotonic()
        stdin_data = launch.stdin_data
        self.proc: subprocess.Popen[bytes] | Spawned
        if proc is not None:
            self.proc, self.start = proc
        else:
            self.proc = self._spawn(launch)
        # the watcher owns the status pipe's read end from here on
        launch.status_r = None
        if stdin_data is not None:
            threading.Thread(target=self._feed, args=(stdin_data,), daemon=True).start()
        self.killed = False
        self.limit_hit: str | None = None
        self.timed_out = False
        self.disk_fds: dict[str, int] = {}
        self.status = bytearray()

    @staticmethod
    def _spawn(launch: Launch) -> subprocess.Popen[bytes]:
        # (tasks.launch.spawn starts an early one the same way)
        stdin_data = launch.stdin_data
        try:
            return subprocess.Popen(
                launch.argv,
                stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=tuple(launch.pass_fds),
                start_new_session=True,
                close_fds=True,
                # not the worker's own directory: the sandbox's init (bwrap) would show it as
                # $PWD in /proc/1/environ
                cwd=launch.cwd if launch.cwd is not None else "/",
                env=dict(launch.env) if launch.env is not None else dict(HOST_ENV),
            )
        except OSError as e:
            raise InfraError(f"cannot start {launch.argv[0]!r}: {e}") from e

    def _feed(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        with contextlib.suppress(OSError):
            self.proc.stdin.write(data)
        with contextlib.suppress(OSError):
            self.proc.stdin.close()

    def kill(self, reason: str | None) -> None:
        if reason is not None and self.limit_hit is None:
            self.limit_hit = reason
        if self.killed:
            return
        self.killed = True
        if self.cgroup is not None:
            # first the sandbox's own processes: the launcher (bwrap), still alive, reaps
            # them, rather than leaving them to the host's init
            self.cgroup.kill_all(spare=self.proc.pid)
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.proc.kill()
        if self.on_kill is not None:
            with contextlib.suppress(Exception):
                self.on_kill()

    def wait(self) -> Watched:
        lim = self.limits
        out, err = _Tail(lim.output_bytes), _Tail(lim.output_bytes)
        flood = max(lim.output_bytes, 1) * OUTPUT_FLOOD_FACTOR
        sel = selectors.DefaultSelector()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        tails: dict[int, _Tail | None] = {
            self.proc.stdout.fileno(): out, self.proc.stderr.fileno(): err,
        }
        for fd in tails:
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ)
        if self.status_r is not None:
            os.set_blocking(self.status_r, False)
            sel.register(self.status_r, selectors.EVENT_READ)
            tails[self.status_r] = None
        deadline = self.start + lim.timeout_s
        exited_at: float | None = None
        next_check = 0.0
        try:
            while sel.get_map():
                now = time.monotonic()
                if now >= deadline and not self.killed:
                    self.timed_out = True
                    self.kill("time")
                if exited_at is None and self.proc.poll() is not None:
                    exited_at = now
                if exited_at is not None and now - exited_at > DRAIN_GRACE_S:
                    # Something outside the main process still holds the pipes (a daemon of
                    # the none backend): kill the group and stop reading.
                    self.kill(None)
                    if now - exited_at > DRAIN_GRACE_S * 2:
                        break
                if now >= next_check and not self.killed:
                    self._check_limits()
                    next_check = now + TICK_S
                timeout = max(0.0, min(TICK_S, deadline - now))
                for key, _ in sel.select(timeout):
                    fd = int(key.fd)
                    try:
                        chunk = os.read(fd, _READ_CHUNK)
                    except BlockingIOError:
                        continue
                    except OSError:
                        chunk = b""
                    if not chunk:
                        sel.unregister(fd)
                        continue
                    tail = tails[fd]
                    if tail is None:
                        self.status += chunk
                        continue
                    tail.add(chunk)
                    if tail.total > flood and not self.killed:
                        self.kill("output")
            if not self.killed and self.proc.poll() is None:
                # Pipes closed but the process lives on: it closed its stdout/stderr, or (most
                # often) the script has exited and the sandbox's own processes are ending. Wait
                # on the process itself (Popen.wait polls from 0.5 ms up), not a fixed tick: a
                # 50 ms sleep here was up to 50 ms added to every run.
                remaining = deadline - time.monotonic()
                while self.proc.poll() is None and remaining > 0:
                    self._check_limits()
                    if self.killed:
                        break
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        self.proc.wait(timeout=min(TICK_S, remaining))
                    remaining = deadline - time.monotonic()
                if self.proc.poll() is None and not self.killed:
                    self.timed_out = True
                    self.kill("time")
            rc = self.proc.wait()
            seconds = time.monotonic() - self.start
            self._final_checks(rc)
            if self.limit_hit is None and self.watch_disk and rc != 0 and _ENOSPC in err.text():
                # The only writable places are our size-limited tmpfs mounts, so ENOSPC there is
                # the disk limit, even when the script filled it and exited before the watcher
                # could look (a script that prints it falsely only makes itself inconclusive).
                self.limit_hit = "disk"
        finally:
            sel.close()
            for f in (self.proc.stdout, self.proc.stderr, self.proc.stdin):
                if f is not None:
                    with contextlib.suppress(OSError):
                        f.close()
            if self.status_r is not None:
                with contextlib.suppress(OSError):
                    os.close(self.status_r)
            for fd in self.disk_fds.values():
                os.close(fd)
            self.disk_fds.clear()
        return Watched(
            returncode=rc, seconds=seconds, stdout=out, stderr=err, status=bytes(self.status),
            killed_by_us=self.killed, timed_out=self.timed_out, limit_hit=self.limit_hit,
        )

    # -- limits

    def _check_limits(self) -> None:
        if self.cgroup is None and self.find_cgroup is not None:
            self.cgroup = self.find_cgroup()
        cg = self.cgroup
        if cg is not None:
            if cg.pids_limited():
                self.kill("processes")
                return
            if cg.oom_killed():
                self.kill("memory")
                return
        elif self.poll_tree:
            rss, tasks = _tree_usage(self.proc.pid)
            if tasks > self.limits.max_processes:
                self.kill("processes")
                return
            if rss > self.limits.memory_bytes:
                self.kill("memory")
                return
        if self.watch_disk and self._disk_full():
            self.kill("disk")

    def _disk_full(self) -> bool:
        if len(self.disk_fds) < len(sb.SANDBOX_TMPFS):
            self._open_disks()
        return any(_disk_full(fd) for fd in self.disk_fds.values())

    def _open_disks(self) -> None:
        """Hold fds on the sandbox's size-limited tmpfs mounts (recognised by their exact
        size), so that their fill level can be read even after the sandbox has ended."""
        pid = parse_status(bytes(self.status)).get("child-pid")
        if not isinstance(pid, int) and self.cgroup is not None:
            # (docker) any process of the container's cgroup sees its mounts
            pid = min(self.cgroup.pids(), default=None)
        if not isinstance(pid, int):
            return
        want = int(self.limits.disk_bytes)
        for mount in sb.SANDBOX_TMPFS:
            if mount in self.disk_fds:
                continue
            try:
                fd = os.open(f"/proc/{pid}/root{mount}", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                st = os.fstatvfs(fd)
            except OSError:
                os.close(fd)
                continue
            if abs(st.f_blocks * st.f_frsize - want) < max(st.f_frsize, 4096):
                self.disk_fds[mount] = fd
            else:
                os.close(fd)  # not set up yet: still the host's directory

    def _final_checks(self, rc: int) -> None:
        if self.limit_hit is not None:
            return
        cg = self.cgroup
        if cg is not None:
            if cg.oom_killed():
                self.limit_hit = "memory"
                return
            if cg.pids_limited():
                self.limit_hit = "processes"
                return
        if self.watch_disk and self._disk_full():
            self.limit_hit = "disk"


_ENOSPC = "No space left on device"


def _disk_full(fd: int) -> bool:
    try:
        st = os.fstatvfs(fd)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < DISK_FULL_SLACK or st.f_favail == 0


def _tree_usage(root: int) -> tuple[int, int]:
    """(resident bytes, tasks) of ``root`` and all its descendants, read from /proc."""
    children: dict[int, list[int]] = {}
    info: dict[int, tuple[int, int]] = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        rest = stat[stat.rfind(b")") + 2:].split()
        # rest[0]=state, rest[1]=ppid, ..., rest[17]=num_threads, rest[21]=rss (pages)
        try:
            pid, ppid = int(name), int(rest[1])
            info[pid] = (int(rest[21]) * page, int(rest[17]))
        except (IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(pid)
    rss = tasks = 0
    stack = [root]
    seen: set[int] = set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        r, t = info.get(p, (0, 0))
        rss += r
        tasks += t
        stack.extend(children.get(p, ()))
    return rss, tasks


# --------------------------------------------------------------------------- decoding


