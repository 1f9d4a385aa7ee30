"""The sandbox backends behind one small interface, chosen once at start.

A backend is an object (the shape of Read the Docs' build environments): made once from the
typed config by :func:`make_sandbox`, checked once at worker start (:meth:`Sandbox.check`),
then asked for each run to

* ``prepare(spec)``: everything the run needs (command line, fds, cgroup, leased uid, scratch)
  as a :class:`Launch`; the runner (``tasks.runner``) starts and watches it the same way for
  every backend (time, output, memory/process/disk limits);
* ``exit_status(launch, watched)``: decode how the run ended, or raise ``InfraError`` when
  the sandbox itself failed before the script started;
* ``cleanup(launch)``: release everything, whatever happened.

Backends: ``bwrap`` (bubblewrap namespaces + cgroup; the default), ``docker`` (one container
per run from ``sandbox.docker_image``) and ``none`` (no isolation, development only).
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from bot.config import SandboxConfig
from bot.errors import InfraError
from bot.records import field, record, replace
from bot.runs import RunLimits, RunResult
from tasks import launch as launch_mod
from tasks import sandbox as sb
from tasks.launch import RECIPE_VERSION, ph
from tasks.watched import Watched, decode_shell_status, parse_status, setup_failure

TYPE_CHECKING = False  # typing's, without importing typing (5 ms): see bot/records.py
if TYPE_CHECKING:
    from typing import Any, ClassVar

HOST_ENV = launch_mod.HOST_ENV  # the launcher's own environment (PATH = sb.SANDBOX_PATH)


@record
class RunSpec:
    """One run, as the runner asks for it."""

    script: str
    python: str
    args: tuple[str, ...] = ()
    gpu: bool = False
    pass_env: Mapping[str, str] = field(default_factory=dict)
    cache_dir: Path | None = None
    # A warm start (``tasks.warm``): the script is not known yet; the interpreter gets the
    # hook's zip (memfd) on its PYTHONPATH and the channel's fd (both the caller's), and the
    # hook writes repro.py.
    warm: WarmFds | None = None


@record
class WarmFds:
    """The fds a warm start hands into the sandbox."""

    hook_zip: int  # memfd: the zip holding sitecustomize.py
    channel: int  # the hook's end of the AF_UNIX socket pair

    def env(self) -> dict[str, str]:
        return {"PYTHONPATH": f"/proc/self/fd/{self.hook_zip}"}


def _warm_fds(spec: RunSpec) -> tuple[int, ...]:
    """The warm start's fds the run inherits (the caller owns and closes them)."""
    return () if spec.warm is None else (spec.warm.hook_zip, spec.warm.channel)


@record(frozen=False)
class Launch:
    """What the runner starts and watches for one run (made by ``Sandbox.prepare``)."""

    argv: list[str]
    pass_fds: tuple[int, ...] = ()
    status_r: int | None = None  # read end of the launcher's status pipe
    cgroup: sb.Cgroup | None = None
    cwd: str | None = None
    env: Mapping[str, str] | None = None
    stdin_data: bytes | None = None
    on_kill: Callable[[], None] | None = None
    watch_disk: bool = False  # the runner reads the sandbox's tmpfs fill level
    poll_tree: bool = True  # without a cgroup, poll the process tree through /proc
    close_after_start: list[int] = field(default_factory=list)  # our copies of passed fds
    # Finds a cgroup made by someone else (docker) once the run has started; watched, not owned.
    find_cgroup: Callable[[], sb.Cgroup | None] | None = None
    # Backend-private things to release in cleanup().
    lease: sb.UidLease | None = None
    paths: list[Path] = field(default_factory=list)
    name: str = ""

    def started(self) -> None:
        """The process runs: close our copies of the fds it inherited."""
        sb.close_fds(self.close_after_start)
        self.close_after_start = []


class Sandbox(ABC):
    """One sandbox backend (see the module docstring)."""

    name: ClassVar[str]
    # Does the scripts' interpreter (tvm.python) live on this host (bwrap, none), or inside
    # the sandbox's own image (docker)?
    host_interpreter: ClassVar[bool] = True
    # Can ``prepare`` start a run before its script is known (``RunSpec.warm``)?
    warm_start: ClassVar[bool] = False

    def __init__(self, config: SandboxConfig, *, cache_dir: Path | None = None) -> None:
        self.config = config
        self.cache_dir = cache_dir

    @property
    def limits(self) -> RunLimits:
        return self.config.limits

    @abstractmethod
    def check(self) -> str:
        """Can this backend run scripts here? A one-line summary, or InfraError with how to
        fix it (never a fallback to another backend)."""

    @abstractmethod
    def prepare(self, spec: RunSpec) -> Launch:
        """Make everything one run needs; InfraError when our side cannot."""

    def recipe(self, spec: RunSpec) -> dict[str, Any] | None:
        """The run's launch as plain data (``tasks.launch``), for a backend that has one."""
        return None

    def launch_of(self, recipe: dict[str, Any], spec: RunSpec,
                  made: launch_mod.Made | None = None) -> Launch:
        raise NotImplementedError(f"backend {self.name!r} has no launch recipes")

    @abstractmethod
    def exit_status(self, launch: Launch, watched: Watched) -> tuple[int | None, int | None]:
        """(exit code, signal) of the script; InfraError when the sandbox failed to start it."""

    def environment(self, python: str, run: Callable[..., RunResult]) -> dict[str, str]:
        """What the scripts' interpreter runs (TVM, CUDA, GPU...): ``tasks.probe``'s facts,
        probed with our own trusted script where the interpreter lives (here: on the host).
        ``run`` is the runner's ``run_script``, for a backend that must probe inside itself."""
        from tasks.probe import probe_environment

        return dict(probe_environment(python, cache_dir=self.cache_dir))

    def cleanup(self, launch: Launch) -> None:
        """Release what ``prepare`` made (always called, also after errors)."""
        launch.started()
        if launch.status_r is not None:
            with contextlib.suppress(OSError):
                os.close(launch.status_r)
            launch.status_r = None
        if launch.cgroup is not None:
            launch.cgroup.remove()
        for p in launch.paths:
            with contextlib.suppress(OSError):
                if p.is_dir():
                    shutil.rmtree(p)  # our own run directories (empty, or a cid file)
                else:
                    p.unlink()
        if launch.lease is not None:
            launch.lease.release()


def nofile_limit() -> int:
    """The run's open-files limit: ``SANDBOX_NOFILE``, or less if our own hard limit is."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard == resource.RLIM_INFINITY:
        return sb.SANDBOX_NOFILE
    return max(64, min(sb.SANDBOX_NOFILE, int(hard)))


def limits_summary() -> str:
    s = sb.cgroup_support()
    if s.version:
        return f"memory/process limits: cgroup v{s.version}"
    return f"memory/process limits: polled via /proc ({s.why})"


# --------------------------------------------------------------------------- bwrap


class BwrapSandbox(Sandbox):
    """bubblewrap: new user/pid/net/ipc/uts/cgroup namespaces, a read-only root of /usr and the
    interpreter, a size- and inode-limited scratch, seccomp, a per-run cgroup; a root worker
    runs each sandbox as a host uid of its own (see ``tasks.sandbox``)."""

    name = "bwrap"
    warm_start = True

    def __init__(self, config: SandboxConfig, *, cache_dir: Path | None = None,
                 gpu_layout: Callable[[], sb.GpuLayout] = sb.gpu_layout) -> None:
        super().__init__(config, cache_dir=cache_dir)
        self.gpu_layout = gpu_layout  # what a GPU run binds (tests pass a fake sysfs tree)

    def _bwrap(self) -> str:
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise InfraError(
                "sandbox backend 'bwrap' but no `bwrap` command: install bubblewrap "
                "(apt-get install bubblewrap), or choose sandbox.backend: docker"
            )
        return bwrap

    def check(self) -> str:
        bwrap = self._bwrap()
        try:
            self._host_uid(None)  # refuses uid 0
            r = subprocess.run(sb.bwrap_smoke_argv(bwrap),
                               capture_output=True, text=True, timeout=30, env=HOST_ENV)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise InfraError(f"bwrap did not run: {e}. {sb.USERNS_HELP}") from e
        if "disable-userns" in r.stderr:  # unknown option: bubblewrap older than 0.8.0
            raise InfraError(
                f"bwrap is too old ({r.stderr.strip()[-200:]}): reprobot needs bubblewrap "
                ">= 0.8.0 for --disable-userns (a script in a nested user namespace could "
                "raise its own memory and process limits); upgrade bubblewrap or use "
                "sandbox.backend: docker"
            )
        if r.returncode != 0 or r.stdout.strip() != "ok":
            raise InfraError(
                f"bwrap cannot create its sandbox here "
                f"({r.stderr.strip()[-300:] or r.returncode}). {sb.USERNS_HELP}"
            )
        unshare = shutil.which("unshare")
        if unshare is None:
            raise InfraError("the bwrap backend needs `unshare` (util-linux) for the run's "
                             "own namespace limits: install util-linux")
        # The run's own user namespace: scratch tmpfs with an inode limit, inotify limits.
        scratch = Path(tempfile.mkdtemp(prefix="reprobot-check-"))
        try:
            scratch.chmod(0o755)
            argv = sb.limits_wrapper_argv(str(scratch), self.limits,
                                          ["/bin/sh", "-c", "echo ok"], unshare=unshare)
            w = subprocess.run(argv, capture_output=True, text=True, timeout=30, env=HOST_ENV,
                               cwd="/")
        except (OSError, subprocess.TimeoutExpired) as e:
            raise InfraError(f"the run's user namespace cannot be set up: {e}") from e
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        if w.returncode != 0 or w.stdout.strip() != "ok":
            raise InfraError(
                "the run's own user namespace (scratch tmpfs with an inode limit, inotify "
                f"limits) cannot be set up here: {w.stderr.strip()[-300:] or w.returncode}. "
                f"{sb.USERNS_HELP}"
            )
        version = subprocess.run([bwrap, "--version"], capture_output=True,
                                 text=True).stdout.strip()
        who = (f"worker is root: each sandbox runs as its own host uid from a pool of "
               f"{sb.UID_POOL_SIZE} when the interpreter is world-reachable, else as a "
               "capability-less host uid 0" if os.geteuid() == 0
               else f"sandbox runs as host uid {os.geteuid()}")
        return (f"sandbox: {version or 'bwrap'} (user/pid/net/ipc/uts/cgroup namespaces ok; "
                f"{who}; nofile {nofile_limit()}, inotify "
                f"{sb.SANDBOX_INOTIFY_INSTANCES}); " + limits_summary())

    def _host_uid(self, interp: sb.Interpreter | None) -> bool:
        """Whether to run bwrap as a leased host uid: only a root worker can, and only when
        that uid can reach the interpreter (every directory above it searchable by others);
        otherwise bwrap runs as our own uid (as root: mapped to a capability-less uid 0,
        hardened by a read-only /proc/sys and the seccomp filter)."""
        if self.config.uid == 0:
            raise InfraError("sandbox.uid must not be 0 (root)")
        if os.geteuid() != 0:
            return False
        return interp is None or all(sb.reachable_by_others(d) for d in interp.binds)

    def recipe(self, spec: RunSpec) -> dict[str, Any]:
        """This run's launch as plain data (``tasks.launch``): the command line with
        placeholders for what each run makes anew, the bytes of its data fds, its cgroup's
        limits. Equal recipes start equal runs."""
        bwrap = self._bwrap()
        unshare = shutil.which("unshare")
        if unshare is None:
            raise InfraError("no `unshare` command: install util-linux")
        interp = sb.interpreter_layout(spec.python, spec.cache_dir or self.cache_dir)
        limits, cfg = self.limits, self.config
        setpriv = None
        if self._host_uid(interp):
            setpriv = shutil.which("setpriv")
            if setpriv is None:
                raise InfraError("the worker runs as root but `setpriv` (util-linux) is "
                                 "missing: install util-linux, or run the worker as a "
                                 "non-root user")
        blobs = {f"/etc/{name}": text.encode() for name, text in sb.etc_files(cfg.uid).items()}
        blobs["seccomp"] = sb.seccomp_filter()
        script_fd = None
        if spec.warm is None:
            blobs["script"] = spec.script.encode("utf-8", "surrogateescape")
            script_fd = ph("blob:script")
        env = sb.child_env(home=sb.SANDBOX_SCRATCH, tmpdir=sb.SANDBOX_TMP,
                           pass_env=spec.pass_env)
        if spec.warm is not None:
            env.update(WarmFds(hook_zip=ph("hook"), channel=-1).env())  # type: ignore[arg-type]
        inner = sb.bwrap_argv(
            interp=interp, script_fd=script_fd, args=spec.args, env=env, limits=limits,
            uid=cfg.uid, etc_fds={k: ph(f"blob:{k}") for k in blobs if k.startswith("/etc/")},
            seccomp_fd=ph("blob:seccomp"), status_fd=ph("status"),
            gpu=spec.gpu, gpu_binds=self.gpu_layout() if spec.gpu else None, bwrap=bwrap,
            proc_hide=sb.proc_files_to_hide(), scratch_mount=ph("scratch"),
        )
        inner = sb.limits_wrapper_argv(ph("scratch"), limits, inner, unshare=unshare,
                                       prlimit=shutil.which("prlimit"))
        if setpriv is not None:
            inner = sb.drop_privileges_argv(ph("uid"), inner, setpriv)
        cgroup = sb.cgroup_plan(limits)
        argv = sb.join_cgroup_argv(
            [ph(f"join:{c}") for c in cgroup["parents"]] if cgroup else [], inner,
            status_fd=ph("status"), nproc=None if cgroup else limits.max_processes,
            nofile=nofile_limit(),
        )
        return {"v": RECIPE_VERSION, "argv": argv, "blobs": blobs,
                "scratch": (tempfile.gettempdir(), RUN_DIR_PREFIX), "cgroup": cgroup,
                "lease": setpriv is not None, "warm": spec.warm is not None,
                "env": dict(HOST_ENV)}

    def prepare(self, spec: RunSpec) -> Launch:
        return self.launch_of(self.recipe(spec), spec)

    def launch_of(self, recipe: dict[str, Any], spec: RunSpec,
                  made: launch_mod.Made | None = None) -> Launch:
        """The ``Launch`` of ``recipe``: made now (``tasks.launch.make``), or the one
        ``made`` already, by an early start (``tasks.launch.Early``)."""
        launch = Launch(argv=[], watch_disk=True, name="bwrap", env=recipe["env"])
        try:
            if made is None:
                if recipe["lease"]:
                    launch.lease = sb.lease_uid()
                _remove_stale_run_dirs()
                for parent in (recipe["cgroup"] or {}).get("parents", {}).values():
                    sb._remove_stale(Path(parent))
                given = {} if spec.warm is None else {"hook": spec.warm.hook_zip,
                                                       "channel": spec.warm.channel}
                try:
                    made = launch_mod.make(recipe, given,
                                           uid=launch.lease.uid if launch.lease else None)
                except OSError as e:
                    raise InfraError(f"cannot set up the run's sandbox: {e}") from e
            launch.argv = made.argv
            launch.status_r, made.status_r = made.status_r, -1
            launch.close_after_start, made.pass_fds = list(made.pass_fds), []
            launch.pass_fds = (*launch.close_after_start, *made.given_fds)
            launch.paths.append(Path(made.scratch))
            if made.cgroup_dirs:
                launch.cgroup = sb.Cgroup(made.cgroup_version,
                                          {c: Path(d) for c, d in made.cgroup_dirs.items()})
        except BaseException:
            self.cleanup(launch)
            raise
        return launch

    def exit_status(self, launch: Launch, watched: Watched) -> tuple[int | None, int | None]:

        status = parse_status(watched.status)
        if not watched.killed_by_us and watched.limit_hit is None and "exit-code" not in status:
            raise InfraError(setup_failure("bwrap", watched))
        if watched.killed_by_us:
            return None, int(signal.SIGKILL)
        if isinstance(status.get("exit-code"), int):
            return decode_shell_status(int(str(status["exit-code"])))
        if watched.returncode < 0:  # bwrap itself was killed (e.g. by the OOM killer)
            return None, -watched.returncode
        # the sandbox's init was killed before reporting: bwrap says 128+N
        return decode_shell_status(watched.returncode)


RUN_DIR_PREFIX = "reprobot-run-"


def _remove_stale_run_dirs() -> None:
    """Remove the empty mount points of runs whose worker died (killed mid-run): named
    ``reprobot-run-<worker pid>-*``, only when that pid is gone (a live run's directory is
    empty on the host too: its tmpfs exists only in the run's own mount namespace)."""
    base = Path(tempfile.gettempdir())
    try:
        names = [n for n in os.listdir(base) if n.startswith(RUN_DIR_PREFIX)]
    except OSError:
        return
    for n in names:
        owner = n[len(RUN_DIR_PREFIX):].split("-")[0]
        if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
            with contextlib.suppress(OSError):
                (base / n).rmdir()


# --------------------------------------------------------------------------- docker


class DockerSandbox(Sandbox):
    """One ``docker run`` per run: no network, read-only root, size- and inode-limited tmpfs,
    memory/pids/nofile limits, no capabilities, a host uid of its own; the script comes on
    stdin. Nothing of the host is mounted."""

    name = "docker"
    host_interpreter = False
    _probed: ClassVar[dict[tuple[str, str], dict[str, str]]] = {}

    def _docker(self) -> str:
        docker = shutil.which("docker")
        if docker is None:
            raise InfraError("sandbox backend 'docker' but no `docker` command on PATH")
        return docker

    def check(self) -> str:
        docker = self._docker()
        image = self.config.docker_image
        try:
            r = subprocess.run([docker, "image", "inspect", "--format", "{{.Id}}", image],
                               capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise InfraError(f"docker did not answer: {e}") from e
        if r.returncode != 0:
            raise InfraError(
                f"docker cannot use image {image!r}: {r.stderr.strip()[-300:]} "
                "(build it: docker build -f deploy/Dockerfile.runner -t reprobot-runner .)"
            )
        return (f"sandbox: docker image {image} (no network, read-only root, a host uid per "
                f"run from a pool of {sb.UID_POOL_SIZE}, nofile {nofile_limit()})")

    def environment(self, python: str, run: Callable[..., RunResult]) -> dict[str, str]:
        """The interpreter lives in the image: the probe script runs in a container of it
        (remembered per image id and interpreter), through the runner's ``run``."""

        from tasks.probe import KEYS, PROBE_SCRIPT, PROBE_TIMEOUT_S

        image_id = subprocess.run(
            [self._docker(), "image", "inspect", "--format", "{{.Id}}",
             self.config.docker_image], capture_output=True, text=True, timeout=60,
        ).stdout.strip()
        key = (image_id, python)
        if image_id and key in self._probed:
            return dict(self._probed[key])
        limits = replace(self.limits, timeout_s=PROBE_TIMEOUT_S)
        box = DockerSandbox(replace(self.config, limits=limits))
        res = run(PROBE_SCRIPT.read_text(), python=python, sandbox=box)
        try:
            raw = json.loads(res.stdout_tail.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError) as e:
            raise InfraError(f"environment probe in {self.config.docker_image} printed no "
                             f"result: {res.stderr_tail.strip()[-400:]}") from e
        info = {k: str(raw.get(k, "") or "") for k in KEYS}
        if image_id:
            self._probed[key] = info
        return dict(info)

    def prepare(self, spec: RunSpec) -> Launch:
        docker = self._docker()
        name = f"reprobot-{os.urandom(8).hex()}"
        # watch_disk: the runner finds the container's /tmp and /dev/shm through its cgroup
        launch = Launch(argv=[], name=name, watch_disk=True, poll_tree=False)
        try:
            launch.lease = sb.lease_uid()
            run_dir = Path(tempfile.mkdtemp(prefix="reprobot-docker-"))
            launch.paths.append(run_dir)
            cidfile = run_dir / "cid"
            profile = run_dir / "seccomp.json"
            profile.write_text(json.dumps(sb.docker_seccomp_profile()))
            launch.argv = sb.docker_argv(
                image=self.config.docker_image, name=name, python=spec.python,
                args=spec.args, env=sb.docker_env(spec.pass_env), limits=self.limits,
                uid=launch.lease.uid, gpu=spec.gpu, docker=docker, nofile=nofile_limit(),
                cidfile=str(cidfile), owner=os.getpid(),
                gpu_binds=sb.gpu_layout() if spec.gpu else None, seccomp_profile=str(profile),
            )
        except BaseException:
            self.cleanup(launch)
            raise
        launch.stdin_data = spec.script.encode("utf-8", "surrogateescape")

        def kill_container() -> None:
            subprocess.run([docker, "kill", name], capture_output=True, timeout=30)

        def find_cgroup() -> sb.Cgroup | None:
            try:
                return sb.docker_cgroup(cidfile.read_text())
            except OSError:
                return None

        launch.on_kill = kill_container
        launch.find_cgroup = find_cgroup
        return launch

    def exit_status(self, launch: Launch, watched: Watched) -> tuple[int | None, int | None]:

        insp = subprocess.run(
            [self._docker(), "inspect", "--format", "{{.State.OOMKilled}} {{.State.ExitCode}}",
             launch.name], capture_output=True, text=True, timeout=60,
        )
        if insp.returncode != 0 and not watched.killed_by_us:
            raise InfraError(setup_failure("docker", watched))
        oom = insp.stdout.split()[:1] == ["true"]
        if oom and watched.limit_hit is None:
            watched.limit_hit = "memory"
        if watched.killed_by_us:
            return None, int(signal.SIGKILL)
        if watched.returncode in (125, 126, 127) and not oom:
            raise InfraError(setup_failure("docker", watched))
        if _ENOSPC in watched.stderr.text() and watched.returncode != 0 and \
                watched.limit_hit is None:
            # the only writable places are the size- and inode-limited tmpfs mounts
            watched.limit_hit = "disk"
        return decode_shell_status(watched.returncode)

    def cleanup(self, launch: Launch) -> None:
        try:
            if launch.name:
                with contextlib.suppress(OSError, subprocess.SubprocessError):
                    subprocess.run([self._docker(), "rm", "-f", launch.name],
                                   capture_output=True, timeout=60)
        finally:
            super().cleanup(launch)


_ENOSPC = "No space left on device"


# --------------------------------------------------------------------------- none


class NoSandbox(Sandbox):
    """No isolation at all: the script runs as the worker's user (development only)."""

    name = "none"
    warm_start = True

    def check(self) -> str:
        sb.warn_none_backend()
        return "sandbox: none (UNSANDBOXED, development only); " + limits_summary()

    def prepare(self, spec: RunSpec) -> Launch:
        sb.warn_none_backend()
        exe = sb._resolve_python(spec.python)
        limits = self.limits
        launch = Launch(argv=[], name="none", watch_disk=False)
        try:
            scratch = Path(tempfile.mkdtemp(prefix="reprobot-scratch-"))
            launch.cwd = str(scratch)
            if spec.warm is None:
                (scratch / sb.SCRIPT_NAME).write_text(spec.script, encoding="utf-8",
                                                      errors="surrogateescape")
            (scratch / "tmp").mkdir()
            env = sb.child_env(home=str(scratch), tmpdir=str(scratch / "tmp"),
                               pass_env=spec.pass_env)
            if spec.warm is not None:
                env.update(spec.warm.env())
            launch.env = env
            status_r, status_w = os.pipe()
            launch.status_r = status_r
            launch.close_after_start.append(status_w)
            launch.cgroup = sb.make_cgroup(limits)
            launch.argv = sb.join_cgroup_argv(
                launch.cgroup.join_files if launch.cgroup else [],
                [exe, "-X", "faulthandler", sb.SCRIPT_NAME, *spec.args], status_fd=status_w,
                nproc=None if launch.cgroup else limits.max_processes, nofile=nofile_limit(),
            )
            launch.pass_fds = tuple(launch.close_after_start) + _warm_fds(spec)
        except BaseException:
            self.cleanup(launch)
            raise
        return launch

    def exit_status(self, launch: Launch, watched: Watched) -> tuple[int | None, int | None]:

        if not watched.status.startswith(b"R"):
            raise InfraError(setup_failure("the runner's launcher", watched))
        if watched.killed_by_us:
            return None, int(signal.SIGKILL)
        if watched.returncode < 0:
            return None, -watched.returncode
        return watched.returncode, None

    def cleanup(self, launch: Launch) -> None:
        try:
            if launch.cwd:
                shutil.rmtree(launch.cwd, ignore_errors=True)
        finally:
            super().cleanup(launch)


# --------------------------------------------------------------------------- choosing

BACKENDS: dict[str, type[Sandbox]] = {
    cls.name: cls for cls in (BwrapSandbox, DockerSandbox, NoSandbox)
}


def make_sandbox(config: SandboxConfig, *, cache_dir: Path | None = None) -> Sandbox:
    """The backend ``config.backend`` names (made once at start and reused for every run)."""
    cls = BACKENDS.get(config.backend)
    if cls is None:
        raise InfraError(f"unknown sandbox backend {config.backend!r} "
                         f"(use {', '.join(BACKENDS)})")
    return cls(config, cache_dir=cache_dir)


def backend_names() -> Sequence[str]:
    return tuple(BACKENDS)
