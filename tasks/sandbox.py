"""Sandbox backends for running untrusted repro scripts: bwrap (default), docker, none.

This module builds command lines and manages the kernel objects that enforce limits (cgroups);
``tasks.runner`` starts the process, watches it and turns what happened into a ``RunResult``.

Layout of a bwrap sandbox (see :func:`bwrap_argv`):

* new user, pid, ipc, uts, net and cgroup namespaces (``--unshare-all``, no ``--share-net``):
  no network at all, not even the host's loopback services; no view of host processes;
* a root made of read-only binds of ``/usr`` (+ the ``/bin``, ``/lib*`` links), a minimal
  generated ``/etc`` (fake user, ``localhost`` only) and the target interpreter's own prefixes
  (e.g. the venv and the pyenv it was made from), nothing else of the host: no home, no repo,
  no config files, no sockets; the root itself is remounted read-only;
* a fresh ``/proc`` (sandbox processes only), a minimal ``/dev``;
* one writable place: a size-limited tmpfs on ``/tmp`` holding the scratch directory
  ``/tmp/scratch`` (cwd and ``HOME``) with ``repro.py`` copied into it; ``/dev/shm`` is
  another size-limited tmpfs;
* a non-root uid, ``--die-with-parent``, ``--new-session``, ``--clearenv`` + an allow-listed env.

Limits for the whole process tree (memory, processes) come from a cgroup (v1 or v2) created
per run under the worker's own cgroup, when the host lets us write there; otherwise the runner
falls back to polling the tree through ``/proc`` (see ``tasks.runner``).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from bot.errors import InfraError
from bot.models import RunLimits

# Paths inside the bwrap sandbox.
SANDBOX_TMP = "/tmp"
SANDBOX_SCRATCH = "/tmp/scratch"
SCRIPT_NAME = "repro.py"
# The size-limited writable tmpfs mounts (each of ``RunLimits.disk_bytes``).
SANDBOX_TMPFS = (SANDBOX_TMP, "/dev/shm")

# Environment variables the child always gets (values fixed here or computed per run).
BASE_ENV_NAMES = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TVM_BACKTRACE", "PYTHONFAULTHANDLER")
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
# Names that never reach the child, whatever the config says.
_NEVER_PASS_PREFIXES = ("GITHUB_", "REDIS", "REPROBOT_", "CELERY", "AWS_", "SSH_", "GPG_")

# Host files that are copied (read-only) into the sandbox's /etc when present. They hold no
# secrets: the dynamic linker cache, time zone, the alternatives links (/usr/bin/cc ->
# /etc/alternatives/cc), protocol/service names and the OS release.
_ETC_RO_BINDS = (
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/etc/alternatives",
    "/etc/protocols",
    "/etc/services",
    "/etc/os-release",
)


# --------------------------------------------------------------------------- environment


def child_env(
    *, home: str, tmpdir: str, pass_env: Mapping[str, str] = {}, path: str = SANDBOX_PATH
) -> dict[str, str]:
    """The child's whole environment: an allow-list, never a copy of the bot's.

    ``pass_env`` holds the extra variables the config names (values taken by the caller from the
    bot's environment); names that look like the bot's own secrets are dropped anyway.
    """
    env = {
        "PATH": path,
        "HOME": home,
        "TMPDIR": tmpdir,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TVM_BACKTRACE": "1",
        "PYTHONFAULTHANDLER": "1",
        "PYTHONUNBUFFERED": "1",
    }
    for name, value in pass_env.items():
        if name in env or name.upper().startswith(_NEVER_PASS_PREFIXES):
            continue
        if not name or "=" in name or "\0" in name or "\0" in value:
            continue
        env[name] = value
    return env


# --------------------------------------------------------------------------- interpreter


@dataclass(frozen=True)
class Interpreter:
    """What the sandbox must make visible for one Python interpreter to run."""

    executable: str  # absolute path as it will be called (may be a venv symlink)
    binds: tuple[str, ...]  # host directories to bind read-only at the same path
    version: str = ""


_LAYOUT_PROBE = (
    "import sys, site, json;"
    "sp = getattr(site, 'getsitepackages', lambda: [])();"
    "print(json.dumps({'prefix': sys.prefix, 'base_prefix': sys.base_prefix,"
    " 'exec_prefix': sys.exec_prefix, 'base_exec_prefix': sys.base_exec_prefix,"
    " 'site': sp, 'executable': sys.executable, 'version': sys.version.split()[0]}))"
)
_layout_cache: dict[tuple[str, float], Interpreter] = {}

# Directories already bound wholesale (anything under them needs no extra bind).
_SYSTEM_RO = ("/usr",)


def interpreter_layout(python: str) -> Interpreter:
    """Find which host directories the interpreter needs (memoised per path and mtime).

    Runs the interpreter once, outside the sandbox (it is our trusted interpreter, not the
    user's script). Raises InfraError when it is missing or does not run.
    """
    exe = _resolve_python(python)
    real = os.path.realpath(exe)
    try:
        mtime = os.stat(real).st_mtime
    except OSError as e:
        raise InfraError(f"TVM interpreter {python!r} cannot be read: {e.strerror}") from e
    key = (exe, mtime)
    if key in _layout_cache:
        return _layout_cache[key]
    try:
        out = subprocess.run(
            [exe, "-I", "-c", _LAYOUT_PROBE],
            capture_output=True,
            text=True,
            timeout=60,
            env={"PATH": SANDBOX_PATH, "LANG": "C.UTF-8"},
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InfraError(f"TVM interpreter {exe!r} does not run: {e}") from e
    if out.returncode != 0:
        raise InfraError(
            f"TVM interpreter {exe!r} does not run (exit {out.returncode}): "
            f"{out.stderr.strip()[-500:]}"
        )
    info = json.loads(out.stdout)
    dirs: list[str] = [os.path.dirname(exe), os.path.dirname(real)]
    for k in ("prefix", "base_prefix", "exec_prefix", "base_exec_prefix"):
        dirs.append(info[k])
    dirs.extend(info.get("site") or [])
    binds = _minimal_binds(dirs)
    layout = Interpreter(executable=exe, binds=binds, version=str(info.get("version", "")))
    _layout_cache[key] = layout
    return layout


def _resolve_python(python: str) -> str:
    if os.sep in python:
        exe = os.path.abspath(python)
    else:
        found = _which(python)
        if found is None:
            raise InfraError(f"TVM interpreter {python!r} not found on PATH")
        exe = found
    if not os.path.isfile(exe) or not os.access(exe, os.X_OK):
        raise InfraError(
            f"TVM interpreter {exe!r} does not exist or is not executable "
            "(set tvm.python / --tvm-python / REPROBOT_TVM_PYTHON)"
        )
    return exe


def _which(name: str) -> str | None:
    import shutil

    return shutil.which(name)


def _minimal_binds(dirs: Sequence[str]) -> tuple[str, ...]:
    """Existing dirs, deduplicated, without those inside another one or inside /usr."""
    clean: list[str] = []
    for d in dirs:
        if not d:
            continue
        p = os.path.normpath(os.path.abspath(d))
        if not os.path.isdir(p):
            continue
        if p == "/":
            raise InfraError(
                "the TVM interpreter's prefix is '/', which would expose the whole host; "
                "use a venv or a separate install prefix"
            )
        clean.append(p)
    out: list[str] = []
    for p in sorted(set(clean), key=len):
        if any(_is_within(p, q) for q in (*_SYSTEM_RO, *out)):
            continue
        out.append(p)
    return tuple(out)


def _is_within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


# --------------------------------------------------------------------------- generated /etc


def etc_files(uid: int) -> dict[str, str]:
    """Contents of the generated /etc files: a fake user, localhost only, files-only NSS."""
    return {
        "passwd": f"root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
        f"repro:x:{uid}:{uid}:repro:{SANDBOX_SCRATCH}:/bin/sh\n",
        "group": f"root:x:0:\nrepro:x:{uid}:\n",
        "hosts": "127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n",
        "hostname": "reprobot-sandbox\n",
        "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\nnetworks: files\n",
    }


def write_etc(dest: Path, uid: int) -> dict[str, str]:
    """Write the generated /etc files into ``dest``; return {sandbox path: host path}."""
    dest.mkdir(parents=True, exist_ok=True)
    out: dict[str, str] = {}
    for name, text in etc_files(uid).items():
        p = dest / name
        p.write_text(text)
        p.chmod(0o644)
        out[f"/etc/{name}"] = str(p)
    return out


# --------------------------------------------------------------------------- bwrap


def gpu_device_nodes() -> tuple[str, ...]:
    """The NVIDIA device nodes of this host (``/dev/nvidia*``, ``/dev/nvidia-caps``)."""
    return tuple(sorted(glob.glob("/dev/nvidia*")))


def bwrap_argv(
    *,
    interp: Interpreter,
    script_fd: int,
    args: Sequence[str],
    env: Mapping[str, str],
    limits: RunLimits,
    uid: int,
    etc: Mapping[str, str],
    status_fd: int | None = None,
    gpu: bool = False,
    gpu_devices: Sequence[str] = (),
    bwrap: str = "bwrap",
) -> list[str]:
    """The full bwrap command line for one run (pure: no I/O)."""
    a: list[str] = [
        bwrap,
        "--unshare-all",  # user, ipc, pid, net, uts, cgroup; no --share-net: no network
        "--die-with-parent",
        "--new-session",
        "--uid", str(uid),
        "--gid", str(uid),
        "--hostname", "reprobot-sandbox",
        "--ro-bind", "/usr", "/usr",
    ]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        a += _top_level(top)
    for d in interp.binds:
        a += ["--ro-bind", d, d]
    for dest, src in sorted(etc.items()):
        a += ["--ro-bind", src, dest]
    for src in _ETC_RO_BINDS:
        if src not in etc:
            a += ["--ro-bind-try", src, src]
    a += ["--ro-bind-try", "/sys/devices/system/cpu", "/sys/devices/system/cpu"]
    a += ["--proc", "/proc", "--dev", "/dev"]
    if gpu:
        for dev in gpu_devices:
            a += ["--dev-bind", dev, dev]
        # The CUDA driver and NVML read PCI and driver information from /sys.
        a += ["--ro-bind-try", "/sys", "/sys"]
    size = str(int(limits.disk_bytes))
    a += ["--size", size, "--tmpfs", "/dev/shm"]
    a += ["--size", size, "--perms", "1777", "--tmpfs", SANDBOX_TMP]
    a += ["--dir", SANDBOX_SCRATCH]
    a += ["--perms", "0644", "--file", str(script_fd), f"{SANDBOX_SCRATCH}/{SCRIPT_NAME}"]
    a += ["--remount-ro", "/"]
    if status_fd is not None:
        a += ["--json-status-fd", str(status_fd)]
    a += ["--chdir", SANDBOX_SCRATCH, "--clearenv"]
    for k, v in sorted(env.items()):
        a += ["--setenv", k, v]
    a += ["--", interp.executable, "-X", "faulthandler", SCRIPT_NAME, *args]
    return a


def _top_level(path: str) -> list[str]:
    """/bin, /lib... are links into /usr on merged-/usr systems, real dirs elsewhere."""
    if os.path.islink(path):
        return ["--symlink", os.readlink(path), path]
    if os.path.isdir(path):
        return ["--ro-bind", path, path]
    return []


# --------------------------------------------------------------------------- docker

DOCKER_SCRATCH = "/scratch"


def docker_argv(
    *,
    image: str,
    name: str,
    python: str,
    args: Sequence[str],
    env: Mapping[str, str],
    limits: RunLimits,
    uid: int,
    gpu: bool = False,
    docker: str = "docker",
) -> list[str]:
    """``docker run`` for one run. The script arrives on stdin and is written to the scratch
    tmpfs by the container's own shell before ``exec python``; nothing of the host is mounted."""
    size = int(limits.disk_bytes)
    a = [
        docker, "run", "--name", name, "-i",
        "--network", "none",
        "--read-only",
        "--memory", str(int(limits.memory_bytes)),
        "--memory-swap", str(int(limits.memory_bytes)),
        "--pids-limit", str(int(limits.max_processes)),
        "--user", f"{uid}:{uid}",
        "--cap-drop", "ALL",
        "--security-opt", "no-new-privileges",
        "--ipc", "private",
        "--tmpfs", f"{DOCKER_SCRATCH}:rw,exec,size={size},mode=1777",
        "--tmpfs", f"/tmp:rw,exec,size={size},mode=1777",
        "--tmpfs", f"/dev/shm:rw,size={size},mode=1777",
        "--workdir", DOCKER_SCRATCH,
        "--ulimit", "core=0",
        "--log-driver", "none",
    ]
    if gpu:
        a += ["--gpus", "all"]
    for k, v in sorted(env.items()):
        a += ["--env", f"{k}={v}"]
    inner = f'cat > {SCRIPT_NAME} && exec {shlex.quote(python)} -X faulthandler {SCRIPT_NAME} "$@"'
    a += ["--entrypoint", "/bin/sh", image, "-c", inner, "sh", *args]
    return a


def docker_env(pass_env: Mapping[str, str]) -> dict[str, str]:
    return child_env(home=DOCKER_SCRATCH, tmpdir="/tmp", pass_env=pass_env)


# --------------------------------------------------------------------------- cgroups


@dataclass
class Cgroup:
    """One per-run cgroup (v1: a dir in the memory and pids hierarchies; v2: one dir)."""

    version: int
    dirs: dict[str, Path]  # controller ("memory", "pids", or "unified") -> directory

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs.values()]

    def _read(self, controller: str, name: str) -> str:
        d = self.dirs.get(controller) or self.dirs.get("unified")
        if d is None:
            return ""
        try:
            return (d / name).read_text()
        except OSError:
            return ""

    def _kv(self, controller: str, name: str) -> dict[str, int]:
        out: dict[str, int] = {}
        for line in self._read(controller, name).splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1].lstrip("-").isdigit():
                out[parts[0]] = int(parts[1])
        return out

    def oom_killed(self) -> bool:
        if self.version == 2:
            ev = self._kv("memory", "memory.events")
            return ev.get("oom_kill", 0) > 0 or ev.get("oom", 0) > 0
        ctl = self._kv("memory", "memory.oom_control")
        return ctl.get("oom_kill", 0) > 0 or ctl.get("under_oom", 0) > 0

    def pids_limited(self) -> bool:
        return self._kv("pids", "pids.events").get("max", 0) > 0

    def memory_peak(self) -> int:
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        text = self._read("memory", name).strip()
        return int(text) if text.isdigit() else 0

    def pids(self) -> set[int]:
        out: set[int] = set()
        for f in self.procs_files:
            with contextlib.suppress(OSError):
                out.update(int(x) for x in Path(f).read_text().split())
        return out

    def kill_all(self) -> None:
        if self.version == 2:
            d = self.dirs["unified"]
            with contextlib.suppress(OSError):
                (d / "cgroup.kill").write_text("1")
        for _ in range(50):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.01)

    def remove(self) -> None:
        self.kill_all()
        for d in self.dirs.values():
            for _ in range(100):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


@dataclass(frozen=True)
class CgroupSupport:
    version: int  # 0: none usable, 1 or 2
    parents: dict[str, Path]  # controller -> parent dir where per-run cgroups are made
    why: str = ""  # when version == 0: why not


_support_cache: list[CgroupSupport] = []


def cgroup_support(refresh: bool = False) -> CgroupSupport:
    """Can this process make per-run cgroups with memory and pids limits? (memoised)"""
    if _support_cache and not refresh:
        return _support_cache[0]
    s = _detect_cgroups()
    _support_cache[:] = [s]
    return s


def _detect_cgroups() -> CgroupSupport:
    try:
        own = Path("/proc/self/cgroup").read_text().splitlines()
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError as e:
        return CgroupSupport(0, {}, f"cannot read cgroup info: {e}")
    v1_mounts: dict[str, str] = {}
    v2_mount = ""
    for line in mounts:
        left, _, right = line.partition(" - ")
        fields = left.split()
        rf = right.split()
        if len(fields) < 5 or len(rf) < 3:
            continue
        point = fields[4]
        if rf[0] == "cgroup2":
            v2_mount = v2_mount or point
        elif rf[0] == "cgroup":
            for opt in rf[2].split(","):
                if opt in ("memory", "pids"):
                    v1_mounts[opt] = point
    own_paths: dict[str, str] = {}
    for line in own:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for c in parts[1].split(",") if parts[1] else ["unified"]:
            own_paths[c] = parts[2]

    # v1: memory and pids hierarchies, both writable under our own cgroup.
    if "memory" in v1_mounts and "pids" in v1_mounts:
        parents = {
            c: Path(v1_mounts[c] + own_paths.get(c, "/").rstrip("/")) for c in ("memory", "pids")
        }
        why = _probe_mkdir(parents)
        if not why:
            return CgroupSupport(1, parents)
        v1_why = why
    else:
        v1_why = "no cgroup v1 memory+pids hierarchies"

    # v2: needs memory and pids delegated to our cgroup's subtree.
    if v2_mount:
        base = Path(v2_mount + own_paths.get("unified", "/").rstrip("/"))
        try:
            ctrls = (base / "cgroup.controllers").read_text().split()
        except OSError:
            ctrls = []
        if "memory" in ctrls and "pids" in ctrls:
            why = _probe_v2(base)
            if not why:
                return CgroupSupport(2, {"unified": base})
            return CgroupSupport(0, {}, f"{v1_why}; cgroup v2 at {base}: {why}")
        return CgroupSupport(
            0, {}, f"{v1_why}; cgroup v2 at {base} lacks the memory/pids controllers"
        )
    return CgroupSupport(0, {}, v1_why)


def _probe_mkdir(parents: Mapping[str, Path]) -> str:
    name = f"reprobot-probe-{uuid.uuid4().hex[:8]}"
    made: list[Path] = []
    try:
        for p in parents.values():
            d = p / name
            d.mkdir()
            made.append(d)
        return ""
    except OSError as e:
        return f"cannot create cgroups under {', '.join(map(str, parents.values()))}: {e.strerror}"
    finally:
        for d in made:
            with contextlib.suppress(OSError):
                d.rmdir()


def _probe_v2(base: Path) -> str:
    # Controllers must be enabled for children; that fails if our cgroup holds processes and is
    # not the root ("no internal processes"), unless a delegated, empty parent is used.
    try:
        sub = (base / "cgroup.subtree_control").read_text().split()
        if not {"memory", "pids"} <= set(sub):
            (base / "cgroup.subtree_control").write_text("+memory +pids")
        name = f"reprobot-probe-{uuid.uuid4().hex[:8]}"
        (base / name).mkdir()
        (base / name).rmdir()
        return ""
    except OSError as e:
        return f"cannot enable memory/pids for child cgroups: {e.strerror}"


def make_cgroup(limits: RunLimits) -> Cgroup | None:
    """Create a per-run cgroup with the memory and pids limits; None when unsupported."""
    s = cgroup_support()
    if s.version == 0:
        return None
    name = f"reprobot-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    mem = str(int(limits.memory_bytes))
    try:
        if s.version == 1:
            dirs = {c: p / name for c, p in s.parents.items()}
            for d in dirs.values():
                d.mkdir()
            m = dirs["memory"]
            (m / "memory.limit_in_bytes").write_text(mem)
            if (m / "memory.memsw.limit_in_bytes").exists():
                with contextlib.suppress(OSError):
                    (m / "memory.memsw.limit_in_bytes").write_text(mem)
            with contextlib.suppress(OSError):
                (m / "memory.swappiness").write_text("0")
            (dirs["pids"] / "pids.max").write_text(str(int(limits.max_processes)))
            return Cgroup(1, dirs)
        d = s.parents["unified"] / name
        d.mkdir()
        (d / "memory.max").write_text(mem)
        with contextlib.suppress(OSError):
            (d / "memory.swap.max").write_text("0")
        with contextlib.suppress(OSError):
            (d / "memory.oom.group").write_text("1")
        (d / "pids.max").write_text(str(int(limits.max_processes)))
        return Cgroup(2, {"unified": d})
    except OSError as e:
        raise InfraError(f"cannot set up the run's cgroup {name}: {e}") from e


def join_cgroup_argv(procs_files: Sequence[str], inner: Sequence[str], *, status_fd: int | None,
                     nproc: int | None = None, close_status: bool = False) -> list[str]:
    """Prefix ``inner`` with a tiny shell that moves itself into the cgroups (so that every
    descendant starts inside them: no race), sets rlimits, tells the status pipe it is ready,
    and execs ``inner``."""
    lines = ["ulimit -c 0"]
    if nproc is not None:
        lines.append(f"ulimit -p {int(nproc)} 2>/dev/null")
    n = len(procs_files)
    lines.append(
        f'i=0; while [ $i -lt {n} ]; do echo $$ > "$1" || '
        '{ echo "reprobot-sandbox: cannot join cgroup $1" >&2; exit 125; }; '
        "shift; i=$((i+1)); done"
    )
    if status_fd is not None:
        lines.append(f"echo R >&{status_fd}")
        if close_status:  # the script itself must not inherit the status pipe
            lines.append(f"exec {status_fd}>&-")
    lines.append('exec "$@"')
    return ["/bin/sh", "-c", "; ".join(lines), "reprobot-sandbox", *procs_files, *inner]


# --------------------------------------------------------------------------- checks

USERNS_HELP = (
    "bwrap cannot create user namespaces on this host. Fix one of: "
    "(1) `sysctl -w kernel.unprivileged_userns_clone=1` (Debian/Ubuntu kernels); "
    "(2) `sysctl -w user.max_user_namespaces=15000` if it is 0; "
    "(3) on Ubuntu >= 23.10: `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`, or an "
    "AppArmor profile granting `userns` to /usr/bin/bwrap; "
    "(4) inside Docker: run the worker container with "
    "`--security-opt seccomp=unconfined --security-opt apparmor=unconfined` (or --privileged), "
    "or use `sandbox.backend: docker` on the host instead. "
    "Never run untrusted scripts with backend 'none'."
)


def bwrap_smoke_argv(bwrap: str = "bwrap") -> list[str]:
    return [
        bwrap, "--unshare-all", "--die-with-parent", "--new-session",
        "--uid", "65534", "--gid", "65534",
        "--ro-bind", "/usr", "/usr",
        *_top_level("/bin"), *_top_level("/lib"), *_top_level("/lib64"),
        "--proc", "/proc", "--dev", "/dev", "--size", "1048576", "--tmpfs", "/tmp",
        "--remount-ro", "/",
        "--", "/bin/sh", "-c", "echo ok",
    ]


def warn_none_backend() -> None:
    bar = "!" * 78
    sys.stderr.write(
        f"{bar}\n!! reprobot: sandbox backend 'none': the repro script runs UNSANDBOXED with\n"
        f"!! this user's rights, files and network. Development only; never on a bot.\n{bar}\n"
    )
    sys.stderr.flush()
