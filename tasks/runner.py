"""Run one repro script in the configured sandbox and say what happened (a ``RunResult``).

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
import json
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bot.config import SandboxConfig
from bot.errors import InfraError
from bot.models import RunLimits, RunResult
from tasks import sandbox as sb

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
_READ_CHUNK = 1 << 16
_HOST_ENV = {"PATH": sb.SANDBOX_PATH, "LANG": "C.UTF-8"}


def run_script(
    script: str,
    *,
    python: str,
    args: Sequence[str] = (),
    sandbox: SandboxConfig,
    gpu: bool = False,
    pass_env: Mapping[str, str] = {},
    cache_dir: Path | None = None,
) -> RunResult:
    """Run ``script`` as ``repro.py`` in the sandbox; see the module docstring.

    ``cache_dir`` keeps what was learnt about the interpreter on disk between processes.
    """
    args = [str(a) for a in args]
    size = sum(len(a.encode("utf-8", "surrogateescape")) + 1 for a in args)
    if size > MAX_ARGS_BYTES:
        raise InfraError(
            f"the repro's command-line arguments are too long to run ({size} bytes; "
            f"at most {MAX_ARGS_BYTES})"
        )
    if any("\0" in a for a in args):
        raise InfraError("the repro's command-line arguments contain a NUL byte")
    backend = sandbox.backend
    if backend == "bwrap":
        return _run_bwrap(script, python=python, args=args, cfg=sandbox, gpu=gpu,
                          pass_env=pass_env, cache_dir=cache_dir)
    if backend == "none":
        return _run_none(script, python=python, args=args, cfg=sandbox, pass_env=pass_env)
    if backend == "docker":
        return _run_docker(script, python=python, args=args, cfg=sandbox, gpu=gpu,
                           pass_env=pass_env)
    raise InfraError(f"unknown sandbox backend {backend!r} (use bwrap, docker or none)")


def check_sandbox(sandbox: SandboxConfig) -> str:
    """Worker start-up check: can this backend run scripts here? Returns a one-line summary.

    Raises InfraError saying why not and how to fix it; never falls back to another backend.
    """
    backend = sandbox.backend
    if backend == "none":
        sb.warn_none_backend()
        return "sandbox: none (UNSANDBOXED, development only); " + _limits_summary()
    if backend == "docker":
        docker = shutil.which("docker")
        if docker is None:
            raise InfraError("sandbox backend 'docker' but no `docker` command on PATH")
        r = subprocess.run([docker, "image", "inspect", "--format", "{{.Id}}",
                            sandbox.docker_image], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise InfraError(
                f"docker cannot use image {sandbox.docker_image!r}: {r.stderr.strip()[-300:]} "
                "(build it: docker build -f deploy/Dockerfile.runner -t reprobot-runner .)"
            )
        return f"sandbox: docker image {sandbox.docker_image}"
    if backend != "bwrap":
        raise InfraError(f"unknown sandbox backend {backend!r} (use bwrap, docker or none)")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise InfraError(
            "sandbox backend 'bwrap' but no `bwrap` command: install bubblewrap "
            "(apt-get install bubblewrap), or choose sandbox.backend: docker"
        )
    try:
        _sandbox_host_uid(sandbox, None)  # refuses uid 0
        r = subprocess.run(sb.bwrap_smoke_argv(bwrap),
                           capture_output=True, text=True, timeout=30, env=_HOST_ENV)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InfraError(f"bwrap did not run: {e}. {sb.USERNS_HELP}") from e
    if "disable-userns" in r.stderr:  # unknown option: bubblewrap older than 0.8.0
        raise InfraError(
            f"bwrap is too old ({r.stderr.strip()[-200:]}): reprobot needs bubblewrap >= 0.8.0 "
            "for --disable-userns (a script in a nested user namespace could raise its own "
            "memory and process limits); upgrade bubblewrap or use sandbox.backend: docker"
        )
    if r.returncode != 0 or r.stdout.strip() != "ok":
        raise InfraError(
            f"bwrap cannot create its sandbox here ({r.stderr.strip()[-300:] or r.returncode}). "
            f"{sb.USERNS_HELP}"
        )
    version = subprocess.run([bwrap, "--version"], capture_output=True, text=True).stdout.strip()
    who = ("worker is root: sandbox runs as host uid "
           f"{sandbox.uid} when the interpreter is world-reachable, else as a capability-less "
           "host uid 0" if os.geteuid() == 0 else f"sandbox runs as host uid {os.geteuid()}")
    return (f"sandbox: {version or 'bwrap'} (user/pid/net/ipc/uts/cgroup namespaces ok; {who}); "
            + _limits_summary())


def _limits_summary() -> str:
    s = sb.cgroup_support()
    if s.version:
        return f"memory/process limits: cgroup v{s.version}"
    return f"memory/process limits: polled via /proc ({s.why})"


# --------------------------------------------------------------------------- backends


def _run_bwrap(script: str, *, python: str, args: list[str], cfg: SandboxConfig, gpu: bool,
               pass_env: Mapping[str, str], cache_dir: Path | None = None) -> RunResult:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise InfraError("no `bwrap` command: install bubblewrap (apt-get install bubblewrap)")
    interp = sb.interpreter_layout(python, cache_dir)
    limits = cfg.limits
    host_uid = _sandbox_host_uid(cfg, interp)
    setpriv = shutil.which("setpriv") if host_uid is not None else None
    if host_uid is not None and setpriv is None:
        raise InfraError("the worker runs as root but `setpriv` (util-linux) is missing: "
                         "install util-linux, or run the worker as a non-root user")
    cgroup: sb.Cgroup | None = None
    fds: list[int] = []
    status_r, status_w = os.pipe()
    try:
        script_fd = sb.data_fd(script.encode("utf-8", "surrogateescape"), sb.SCRIPT_NAME)
        fds.append(script_fd)
        etc = sb.etc_fds(cfg.uid)
        fds += etc.values()
        seccomp_fd = sb.data_fd(sb.seccomp_filter(), "seccomp")
        fds.append(seccomp_fd)
        env = sb.child_env(home=sb.SANDBOX_SCRATCH, tmpdir=sb.SANDBOX_TMP, pass_env=pass_env)
        inner = sb.bwrap_argv(
            interp=interp, script_fd=script_fd, args=args, env=env, limits=limits, uid=cfg.uid,
            etc_fds=etc, seccomp_fd=seccomp_fd, status_fd=status_w, gpu=gpu,
            gpu_devices=sb.gpu_device_nodes() if gpu else (), bwrap=bwrap,
            proc_hide=sb.proc_files_to_hide(),
        )
        if host_uid is not None and setpriv is not None:
            inner = sb.drop_privileges_argv(host_uid, inner, setpriv)
        cgroup = sb.make_cgroup(limits)
        argv = sb.join_cgroup_argv(
            cgroup.procs_files if cgroup else [], inner, status_fd=status_w,
            nproc=None if cgroup else limits.max_processes,
        )
        run = _Run(argv, limits=limits, pass_fds=(*fds, status_w), status_r=status_r,
                   cgroup=cgroup, watch_disk=True)
        sb.close_fds(fds)
        fds = []
        os.close(status_w)
        status_w = -1
        res = run.wait()
        status = _parse_status(res.status)
        if not res.killed_by_us and res.limit_hit is None and "exit-code" not in status:
            raise InfraError(_setup_failure("bwrap", res))
        code: int | None
        sig: int | None
        if res.killed_by_us:
            code, sig = None, int(signal.SIGKILL)
        elif isinstance(status.get("exit-code"), int):
            code, sig = _decode_shell_status(int(str(status["exit-code"])))
        elif res.returncode < 0:  # bwrap itself was killed (e.g. by the OOM killer)
            code, sig = None, -res.returncode
        else:  # the sandbox's init was killed before reporting: bwrap says 128+N
            code, sig = _decode_shell_status(res.returncode)
        return res.result(code, sig, "bwrap")
    finally:
        sb.close_fds(fds)
        if status_w >= 0:
            os.close(status_w)
        if cgroup is not None:
            cgroup.remove()


def _sandbox_host_uid(cfg: SandboxConfig, interp: sb.Interpreter | None) -> int | None:
    """The host uid to run bwrap as, when the worker is root: ``cfg.uid`` if that user can
    reach the interpreter (every directory above it searchable by others), else None: bwrap
    then runs as root and maps the sandbox user to host uid 0 without any capability (hardened
    by a read-only /proc/sys and the seccomp filter). Not root: None (our own uid)."""
    if cfg.uid == 0:
        raise InfraError("sandbox.uid must not be 0 (root)")
    if os.geteuid() != 0:
        return None
    if interp is not None and not all(sb.reachable_by_others(d) for d in interp.binds):
        return None
    return cfg.uid


def _run_none(script: str, *, python: str, args: list[str], cfg: SandboxConfig,
              pass_env: Mapping[str, str]) -> RunResult:
    sb.warn_none_backend()
    exe = sb._resolve_python(python)
    limits = cfg.limits
    scratch = Path(tempfile.mkdtemp(prefix="reprobot-scratch-"))
    cgroup: sb.Cgroup | None = None
    status_r, status_w = os.pipe()
    try:
        (scratch / sb.SCRIPT_NAME).write_text(script, encoding="utf-8",
                                              errors="surrogateescape")
        (scratch / "tmp").mkdir()
        env = sb.child_env(home=str(scratch), tmpdir=str(scratch / "tmp"), pass_env=pass_env)
        cgroup = sb.make_cgroup(limits)
        inner = [exe, "-X", "faulthandler", sb.SCRIPT_NAME, *args]
        argv = sb.join_cgroup_argv(cgroup.procs_files if cgroup else [],
                                   inner, status_fd=status_w,
                                   nproc=None if cgroup else limits.max_processes)
        run = _Run(argv, limits=limits, pass_fds=(status_w,), status_r=status_r, cgroup=cgroup,
                   cwd=str(scratch), env=env, watch_disk=False)
        os.close(status_w)
        status_w = -1
        res = run.wait()
        if not res.status.startswith(b"R"):
            raise InfraError(_setup_failure("the runner's launcher", res))
        code: int | None
        sig: int | None
        if res.killed_by_us:
            code, sig = None, int(signal.SIGKILL)
        else:
            code, sig = _decode_popen(res.returncode)
        return res.result(code, sig, "none")
    finally:
        if status_w >= 0:
            os.close(status_w)
        if cgroup is not None:
            cgroup.remove()
        shutil.rmtree(scratch, ignore_errors=True)


def _run_docker(script: str, *, python: str, args: list[str], cfg: SandboxConfig, gpu: bool,
                pass_env: Mapping[str, str]) -> RunResult:
    docker = shutil.which("docker")
    if docker is None:
        raise InfraError("sandbox backend 'docker' but no `docker` command on PATH")
    name = f"reprobot-{uuid.uuid4().hex[:16]}"
    argv = sb.docker_argv(image=cfg.docker_image, name=name, python=python, args=args,
                          env=sb.docker_env(pass_env), limits=cfg.limits, uid=cfg.uid, gpu=gpu,
                          docker=docker)

    def kill_container() -> None:
        subprocess.run([docker, "kill", name], capture_output=True, timeout=30)

    try:
        run = _Run(argv, limits=cfg.limits, stdin_data=script.encode("utf-8", "surrogateescape"),
                   on_kill=kill_container, watch_disk=False, poll_tree=False)
        res = run.wait()
        insp = subprocess.run(
            [docker, "inspect", "--format", "{{.State.OOMKilled}} {{.State.ExitCode}}", name],
            capture_output=True, text=True, timeout=60,
        )
        if insp.returncode != 0 and not res.killed_by_us:
            raise InfraError(_setup_failure("docker", res))
        oom = insp.stdout.split()[:1] == ["true"]
        code: int | None
        sig: int | None
        if oom and res.limit_hit is None:
            res.limit_hit = "memory"
        if res.killed_by_us:
            code, sig = None, int(signal.SIGKILL)
        elif res.returncode in (125, 126, 127) and not oom:
            raise InfraError(_setup_failure("docker", res))
        else:
            code, sig = _decode_shell_status(res.returncode)
        return res.result(code, sig, "docker")
    finally:
        subprocess.run([docker, "rm", "-f", name], capture_output=True, timeout=60)


# --------------------------------------------------------------------------- the watcher


class _Tail:
    """Keeps the last ``cap`` bytes of a stream and counts all of it."""

    def __init__(self, cap: int) -> None:
        self.cap = max(0, int(cap))
        self.buf = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.buf += chunk
        if len(self.buf) > 2 * self.cap + _READ_CHUNK:
            del self.buf[: len(self.buf) - self.cap]

    @property
    def truncated(self) -> bool:
        return self.total > self.cap

    def text(self) -> str:
        data = bytes(self.buf[-self.cap:]) if self.cap else b""
        return data.decode("utf-8", errors="replace")


@dataclass
class _Outcome:
    returncode: int
    seconds: float
    stdout: _Tail
    stderr: _Tail
    status: bytes
    killed_by_us: bool
    timed_out: bool
    limit_hit: str | None
    extra: dict[str, int] = field(default_factory=dict)

    def result(self, code: int | None, sig: int | None, backend: str) -> RunResult:
        return RunResult(
            exit_code=code,
            signal=sig,
            seconds=round(self.seconds, 3),
            timed_out=self.timed_out,
            stdout_tail=self.stdout.text(),
            stderr_tail=self.stderr.text(),
            stdout_truncated=self.stdout.truncated,
            stderr_truncated=self.stderr.truncated,
            limit_hit=self.limit_hit,
            sandbox=backend,
        )


class _Run:
    """Start ``argv`` in its own session and watch it until it ends or a limit kills it."""

    def __init__(
        self,
        argv: list[str],
        *,
        limits: RunLimits,
        pass_fds: Sequence[int] = (),
        status_r: int | None = None,
        cgroup: sb.Cgroup | None = None,
        cwd: str | None = None,
        env: Mapping[str, str] | None = None,
        stdin_data: bytes | None = None,
        on_kill: Callable[[], None] | None = None,
        watch_disk: bool = False,
        poll_tree: bool = True,
    ) -> None:
        self.limits = limits
        self.cgroup = cgroup
        self.status_r = status_r
        self.on_kill = on_kill
        self.watch_disk = watch_disk
        self.poll_tree = poll_tree and cgroup is None
        self.start = time.monotonic()
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=tuple(pass_fds),
                start_new_session=True,
                close_fds=True,
                # not the worker's own directory: the sandbox's init (bwrap) would show it as
                # $PWD in /proc/1/environ
                cwd=cwd if cwd is not None else "/",
                env=dict(env) if env is not None else dict(_HOST_ENV),
            )
        except OSError as e:
            if status_r is not None:
                os.close(status_r)
            raise InfraError(f"cannot start {argv[0]!r}: {e}") from e
        if stdin_data is not None:
            threading.Thread(target=self._feed, args=(stdin_data,), daemon=True).start()
        self.killed = False
        self.limit_hit: str | None = None
        self.timed_out = False
        self.disk_fds: dict[str, int] = {}
        self.status = bytearray()

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
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self.proc.kill()
        if self.cgroup is not None:
            self.cgroup.kill_all()
        if self.on_kill is not None:
            with contextlib.suppress(Exception):
                self.on_kill()

    def wait(self) -> _Outcome:
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
                # Pipes closed but the process lives on (it closed its stdout/stderr).
                remaining = deadline - time.monotonic()
                while self.proc.poll() is None and remaining > 0:
                    self._check_limits()
                    if self.killed:
                        break
                    time.sleep(min(TICK_S, remaining))
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
        return _Outcome(
            returncode=rc, seconds=seconds, stdout=out, stderr=err, status=bytes(self.status),
            killed_by_us=self.killed, timed_out=self.timed_out, limit_hit=self.limit_hit,
        )

    # -- limits

    def _check_limits(self) -> None:
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
        pid = _parse_status(bytes(self.status)).get("child-pid")
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


def _parse_status(data: bytes) -> dict[str, object]:
    """Merge the JSON documents bwrap wrote to --json-status-fd (after our launcher's "R")."""
    text = data.decode("utf-8", errors="replace")
    if text.startswith("R"):
        text = text[1:]
    dec = json.JSONDecoder()
    out: dict[str, object] = {}
    i = 0
    while True:
        while i < len(text) and text[i] in " \r\n\t":
            i += 1
        if i >= len(text):
            break
        try:
            obj, i = dec.raw_decode(text, i)
        except json.JSONDecodeError:
            break
        if isinstance(obj, dict):
            out.update(obj)
    return out


def _decode_shell_status(code: int) -> tuple[int | None, int | None]:
    """bwrap and docker report a child killed by signal N as exit status 128+N."""
    if 128 < code < 128 + 65:
        return None, code - 128
    return code, None


def _decode_popen(rc: int) -> tuple[int | None, int | None]:
    if rc < 0:
        return None, -rc
    return rc, None


def _setup_failure(what: str, res: _Outcome) -> str:
    msg = res.stderr.text().strip()[-600:] or f"exit status {res.returncode}"
    hint = ""
    if "namespace" in msg or "uid map" in msg or "Operation not permitted" in msg:
        hint = " " + sb.USERNS_HELP
    return f"{what} failed before the script started: {msg}{hint}"
