"""The pieces of the sandboxes that run untrusted repro scripts: command lines (bwrap, docker),
cgroups, the seccomp filter, the host uid pool, the GPU bind list.

``tasks.backends`` puts them together, one backend object per worker; ``tasks.runner`` starts
the process, watches it and turns what happened into a ``RunResult``.

Layout of a bwrap sandbox (see :func:`bwrap_argv`):

* new user, pid, ipc, uts, net and cgroup namespaces (``--unshare-all``, no ``--share-net``):
  no network at all, not even the host's loopback services; no view of host processes;
* a root made of read-only binds of ``/usr`` (+ the ``/bin``, ``/lib*`` links), a minimal
  generated ``/etc`` (fake user, ``localhost`` only) and the target interpreter's own prefixes
  (e.g. the venv and the pyenv it was made from), nothing else of the host: no home, no repo,
  no config files, no sockets; the root itself is remounted read-only;
* a fresh ``/proc`` (sandbox processes only), a minimal ``/dev``;
* one writable place: a size- and inode-limited tmpfs (mounted by
  :func:`limits_wrapper_argv` in the run's own user namespace) whose ``tmp`` is ``/tmp``, holding
  the scratch directory ``/tmp/scratch`` (cwd and ``HOME``) with ``repro.py`` copied into it, and
  whose ``shm`` is ``/dev/shm``;
* no host-wide ``/sys``: only the CPU topology, and for a GPU run what :func:`gpu_layout` names;
* a non-root uid, ``--die-with-parent``, ``--new-session``, ``--clearenv`` + an allow-listed env;
  per-user kernel counters of its own (see "per-user kernel counters" below).

Limits for the whole process tree (memory, processes) come from a cgroup (v1 or v2) created
per run under the worker's own cgroup, when the host lets us write there; otherwise the runner
falls back to polling the tree through ``/proc`` (see ``tasks.runner``).
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from bot.errors import InfraError
from bot.records import record
from bot.runs import RunLimits
from tasks.launch import close_quietly, data_fd  # (callers use sb.data_fd too)

TYPE_CHECKING = False  # typing's, without importing typing (5 ms): see bot/records.py
if TYPE_CHECKING:
    from typing import Any

# Paths inside the bwrap sandbox.
SANDBOX_TMP = "/tmp"
SANDBOX_SCRATCH = "/tmp/scratch"
SCRIPT_NAME = "repro.py"
# The size-limited writable tmpfs mounts (each of ``RunLimits.disk_bytes``).
SANDBOX_TMPFS = (SANDBOX_TMP, "/dev/shm")

# Per-run caps on per-user kernel counters (see "per-user kernel counters" below).
UID_POOL_START = 2_100_000_000  # far above login users, subuid ranges and systemd's dynamic uids
UID_POOL_SIZE = 1024
SANDBOX_NOFILE = 1024
SANDBOX_INOTIFY_INSTANCES = 16
SANDBOX_INOTIFY_WATCHES = 8192
SANDBOX_SIGPENDING = 1024  # queued signals (RLIMIT_SIGPENDING; counted per user namespace level)
# One inode of the scratch tmpfs per this many bytes of its size (at least SCRATCH_MIN_INODES).
SCRATCH_BYTES_PER_INODE = 16 * 1024
SCRATCH_MIN_INODES = 4096

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


@record
class Interpreter:
    """What the sandbox must make visible for one Python interpreter to run."""

    executable: str  # absolute path as it will be called (may be a venv symlink)
    binds: tuple[str, ...]  # host directories to bind read-only at the same path
    version: str = ""
    site: tuple[str, ...] = ()  # its site-packages directories


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


def interpreter_layout(python: str, cache_dir: Path | None = None) -> Interpreter:
    """Find which host directories the interpreter needs (memoised per path and mtime).

    Runs the interpreter once, outside the sandbox (it is our trusted interpreter, not the
    user's script). With ``cache_dir`` the answer is also kept on disk, so a fresh process (one
    ``reprobot triage``) does not pay for starting the interpreter an extra time. Raises
    InfraError when it is missing or does not run.
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
    disk = _layout_disk_path(cache_dir, exe, real, mtime)
    disk_key = _layout_key(exe, real, mtime)
    info = _read_layout(disk, disk_key) if disk is not None else None
    if info is None:
        info = _layout_probe(exe)
        if disk is not None:
            _write_layout(disk, info, disk_key)
    dirs: list[str] = [os.path.dirname(exe), os.path.dirname(real)]
    for k in ("prefix", "base_prefix", "exec_prefix", "base_exec_prefix"):
        dirs.append(info[k])
    dirs.extend(info.get("site") or [])
    binds = _minimal_binds(dirs)
    site = tuple(str(d) for d in info.get("site") or [] if os.path.isdir(d))
    layout = Interpreter(executable=exe, binds=binds, version=str(info.get("version", "")),
                         site=site)
    _layout_cache[key] = layout
    return layout


def _layout_probe(exe: str) -> dict[str, Any]:
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
    info: dict[str, Any] = json.loads(out.stdout)
    return info


def _layout_key(exe: str, real: str, mtime: float) -> str:
    return f"layout-v2\0{exe}\0{real}\0{mtime}"


def _layout_disk_path(cache_dir: Path | None, exe: str, real: str, mtime: float) -> Path | None:
    """The cache file of an interpreter's layout. Its name is a checksum of the key (zlib's,
    loaded already: hashlib would add 4 ms to every triage's start); the file holds the key
    itself, so two keys with one name only cost a probe (:func:`_read_layout`)."""
    if cache_dir is None:
        return None
    key = _layout_key(exe, real, mtime).encode()
    name = f"{zlib.crc32(key):08x}{zlib.adler32(key):08x}"
    return Path(cache_dir) / f"layout-{name}.json"


def _read_layout(path: Path, key: str) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key or "prefix" not in data:
        return None
    return data


def _write_layout(path: Path, info: dict[str, Any], key: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({**info, "key": key}))
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written only costs time


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


def etc_fds(uid: int) -> dict[str, int]:
    """The generated /etc files as sealed-size memory files: {sandbox path: fd}. Close them."""
    out: dict[str, int] = {}
    try:
        for name, text in etc_files(uid).items():
            out[f"/etc/{name}"] = data_fd(text.encode(), name)
    except OSError:
        close_fds(out.values())
        raise
    return out


def close_fds(fds: Iterable[int]) -> None:
    close_quietly(*fds)


def reachable_by_others(path: str) -> bool:
    """Can a user with no relation to the owners reach and read ``path``? (o+x on every
    directory above it, o+rx on it)"""
    p = os.path.abspath(path)
    try:
        if os.stat(p).st_mode & 0o005 != 0o005:
            return False
        while p != "/":
            p = os.path.dirname(p)
            if not os.stat(p).st_mode & 0o001:
                return False
    except OSError:
        return False
    return True


# --------------------------------------------------------------------------- seccomp

# struct seccomp_data: nr at offset 0, arch at offset 4, args[0] at offset 16 (low half on
# little-endian machines).
_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
# Syscalls denied with EPERM: the kernel keyrings (the sandbox user is a host uid whose
# keyrings may hold the worker's keys), namespace/mount/kernel-level operations, and io_uring
# (a large kernel attack surface no repro needs; Docker's default profile denies it too).
_DENIED_SYSCALLS = {
    "x86_64": {"add_key": 248, "request_key": 249, "keyctl": 250, "kexec_load": 246,
               "init_module": 175, "finit_module": 313, "delete_module": 176, "bpf": 321,
               "perf_event_open": 298, "userfaultfd": 323, "open_by_handle_at": 304,
               "name_to_handle_at": 303, "kexec_file_load": 320, "fanotify_init": 300,
               "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427},
    "aarch64": {"add_key": 217, "request_key": 218, "keyctl": 219, "kexec_load": 104,
                "init_module": 105, "finit_module": 273, "delete_module": 106, "bpf": 280,
                "perf_event_open": 241, "userfaultfd": 282, "open_by_handle_at": 265,
                "name_to_handle_at": 264, "kexec_file_load": 294, "fanotify_init": 262,
                "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427},
}
_SOCKET_NR = {"x86_64": 41, "aarch64": 198}
# Socket families that network namespaces do not isolate: AF_VSOCK (40) reaches the
# hypervisor host and every vsock listener of the VM the worker runs in; AF_BLUETOOTH (31).
# socket() with them fails with EAFNOSUPPORT, as on a kernel without them.
_DENIED_SOCKET_FAMILIES = (31, 40)
_SECCOMP_RET_ALLOW = 0x7FFF0000
_SECCOMP_RET_ERRNO = 0x00050000
_EPERM = 1
_EAFNOSUPPORT = 97


def seccomp_filter(machine: str | None = None) -> bytes:
    """A classic-BPF seccomp program (for ``bwrap --seccomp``): the syscalls above fail with
    EPERM, sockets of the families above with EAFNOSUPPORT; calls of another ABI (32-bit int
    0x80, x32) fail too; everything else is allowed."""
    import struct

    m = machine or os.uname().machine  # (platform.machine(): the same, 5 ms of imports)
    if m not in _AUDIT_ARCH:
        return b""
    nrs = sorted(set(_DENIED_SYSCALLS[m].values()))
    families = sorted(set(_DENIED_SOCKET_FAMILIES))
    ld_w_abs, jeq_k, jge_k, ret_k = 0x20, 0x15, 0x35, 0x06

    def ins(code: int, jt: int, jf: int, k: int) -> bytes:
        return struct.pack("<HBBI", code, jt, jf, k)

    deny = _SECCOMP_RET_ERRNO | _EPERM
    prog = [ins(ld_w_abs, 0, 0, 4)]  # A = arch
    prog.append(ins(jeq_k, 1, 0, _AUDIT_ARCH[m]))  # native arch: skip the next
    prog.append(ins(ret_k, 0, 0, deny))
    prog.append(ins(ld_w_abs, 0, 0, 0))  # A = nr
    if m == "x86_64":
        prog.append(ins(jge_k, 0, 1, 0x40000000))  # x32 ABI
        prog.append(ins(ret_k, 0, 0, deny))
    # socket(): jump over the syscall list, the allow and the deny to the family checks
    prog.append(ins(jeq_k, len(nrs) + 2, 0, _SOCKET_NR[m]))
    for i, nr in enumerate(nrs):
        # jump to the "deny" when equal; the allow return sits right after the list
        to_deny = len(nrs) - i
        prog.append(ins(jeq_k, to_deny, 0, nr))
    prog.append(ins(ret_k, 0, 0, _SECCOMP_RET_ALLOW))
    prog.append(ins(ret_k, 0, 0, deny))
    prog.append(ins(ld_w_abs, 0, 0, 16))  # A = socket's family (args[0])
    for i, fam in enumerate(families):
        to_refuse = len(families) - i
        prog.append(ins(jeq_k, to_refuse, 0, fam))
    prog.append(ins(ret_k, 0, 0, _SECCOMP_RET_ALLOW))
    prog.append(ins(ret_k, 0, 0, _SECCOMP_RET_ERRNO | _EAFNOSUPPORT))
    return b"".join(prog)


# Namespace-making calls a docker run never needs (bwrap's --disable-userns and dropped
# capabilities cover them there): a user namespace would hand the script every capability
# over new mount/cgroup namespaces. clone3 cannot be filtered by its flags: ENOSYS makes the C
# library fall back to clone, whose flags are.
_DOCKER_DENIED = ("unshare", "setns", "mount", "umount2", "pivot_root", "fsopen", "fsmount",
                  "open_tree", "move_mount")
_CLONE_NS_FLAGS = 0x7E020000  # NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
_ENOSYS = 38


def docker_seccomp_profile(machine: str | None = None) -> dict[str, Any]:
    """A seccomp profile for ``docker run --security-opt seccomp=FILE``: what bwrap's filter
    denies (:func:`seccomp_filter`: keyrings, bpf, perf, userfaultfd, io_uring, AF_VSOCK and
    AF_BLUETOOTH sockets...) plus namespace creation; everything else is allowed (the container
    has no capabilities and no new privileges)."""
    m = machine or os.uname().machine
    names = sorted(_DENIED_SYSCALLS.get(m, _DENIED_SYSCALLS["x86_64"]))
    arch = {"x86_64": ["SCMP_ARCH_X86_64"], "aarch64": ["SCMP_ARCH_AARCH64"]}.get(m, [])
    rules: list[dict[str, Any]] = [
        {"names": [*names, *_DOCKER_DENIED], "action": "SCMP_ACT_ERRNO", "errnoRet": _EPERM},
        {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": _ENOSYS},
    ]
    # clone with any namespace flag: one rule per flag ((flags & f) == f)
    bit = 1
    while bit <= _CLONE_NS_FLAGS:
        if _CLONE_NS_FLAGS & bit:
            rules.append({"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": _EPERM,
                          "args": [{"index": 0, "value": bit, "valueTwo": bit,
                                    "op": "SCMP_CMP_MASKED_EQ"}]})
        bit <<= 1
    for fam in _DENIED_SOCKET_FAMILIES:
        rules.append({"names": ["socket"], "action": "SCMP_ACT_ERRNO",
                      "errnoRet": _EAFNOSUPPORT,
                      "args": [{"index": 0, "value": fam, "op": "SCMP_CMP_EQ"}]})
    return {"defaultAction": "SCMP_ACT_ALLOW", "architectures": arch, "syscalls": rules}


def drop_privileges_argv(uid: int | str, inner: Sequence[str],
                         setpriv: str = "setpriv") -> list[str]:
    """Run ``inner`` (bwrap) as host uid/gid ``uid`` with no groups, capabilities or new
    privileges. Used when the worker runs as root: otherwise bwrap maps the sandbox user to host
    root (kuid 0), which owns every root-owned file it can see and passes the kernel's
    "is root" checks on /proc/sys and keyrings."""
    return [
        setpriv, f"--reuid={_int_or_placeholder(uid)}", f"--regid={_int_or_placeholder(uid)}",
        "--clear-groups",
        "--inh-caps=-all", "--no-new-privs", "--", *inner,
    ]


# --------------------------------------------------------------------------- bwrap


# /proc files readable only by root (mode 0400, no capability check in the kernel): kernel
# heap and physical-page layout, useful to a kernel exploit. When the worker is root and the
# interpreter is not reachable by other users, the sandbox user is host uid 0 (without any
# capability) and could read them; they are covered with an empty file in every sandbox.
_PROC_ROOT_ONLY = (
    "/proc/slabinfo", "/proc/kpagecount", "/proc/kpageflags", "/proc/kpagecgroup",
    "/proc/vmallocinfo", "/proc/pagetypeinfo", "/proc/timer_list", "/proc/sched_debug",
    "/proc/kmsg", "/proc/kcore", "/proc/mtrr", "/proc/sysrq-trigger",
)


def proc_files_to_hide() -> tuple[str, ...]:
    """The files of ``_PROC_ROOT_ONLY`` this kernel has (the sandbox's /proc shows the same)."""
    return tuple(f for f in _PROC_ROOT_ONLY if os.path.lexists(f))


def gpu_device_nodes(dev_root: str = "/dev") -> tuple[str, ...]:
    """The NVIDIA device nodes of this host (``/dev/nvidia*``, ``/dev/nvidia-caps``)."""
    return tuple(sorted(glob.glob(os.path.join(dev_root, "nvidia*"))))


# ----------------------------------------------------------------- what a GPU run may see
#
# A GPU run gets exactly what the CUDA driver (libcuda) and NVML read, nothing host-wide:
#
# * the device nodes ``/dev/nvidia0..N``, ``/dev/nvidiactl``, ``/dev/nvidia-uvm(-tools)``,
#   ``/dev/nvidia-modeset`` and ``/dev/nvidia-caps/*`` (MIG): the driver's only interface;
# * ``/proc/driver/nvidia`` (``params``, ``version``, ``gpus/<bdf>/information``,
#   ``capabilities``): libcuda reads the module parameters and the MIG capabilities there,
#   NVML the per-GPU information;
# * per GPU, its PCI device directory ``/sys/bus/pci/devices/<bdf>`` (a link to
#   ``/sys/devices/pci.../<bdf>``, bound at its real path): NVML and libcuda read
#   ``numa_node``, ``local_cpulist``, ``vendor``/``device``, link speed and width, ``power/``;
# * ``/sys/devices/system/node`` (NUMA topology, for CPU/memory affinity) next to
#   ``/sys/devices/system/cpu``, which every run already gets;
# * ``/sys/module/nvidia/version`` (the driver version, read by some NVML builds).
#
# Never the rest of ``/sys``: not the cgroup tree (other runs' cgroups), not ``kernel/slab``,
# ACPI tables, ``class/net``, other PCI devices. As for ``/proc``, files only root can read
# (the PCI ``resource*`` BARs, ``rom``, ``reset``...) are covered with an empty file.

NVIDIA_PCI_VENDOR = "0x10de"
# PCI class 0x03xxxx: display controllers (VGA 0x0300, 3D controller 0x0302); NVIDIA audio
# functions and USB controllers on the same card are not needed.
_GPU_PCI_CLASS_PREFIX = "0x03"
# How deep to look for root-only files inside a bound sysfs directory.
_HIDE_SCAN_DEPTH = 4


@record
class GpuLayout:
    """What a GPU run binds: each a (host source, path in the sandbox) pair, all read-only
    except ``devices`` (device nodes, bound as devices)."""

    devices: tuple[tuple[str, str], ...] = ()  # (host node, path in the sandbox)
    ro_binds: tuple[tuple[str, str], ...] = ()
    symlinks: tuple[tuple[str, str], ...] = ()  # (link target, link path in the sandbox)
    hide: tuple[str, ...] = ()  # sandbox paths covered with an empty file (root-only on host)


def gpu_pci_devices(sys_root: str = "/sys") -> tuple[str, ...]:
    """The PCI addresses (``0000:01:00.0``) of the NVIDIA GPUs under ``sys_root``."""
    base = os.path.join(sys_root, "bus", "pci", "devices")
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return ()
    out = []
    for bdf in names:
        vendor = _read_small(os.path.join(base, bdf, "vendor"))
        cls = _read_small(os.path.join(base, bdf, "class"))
        if vendor == NVIDIA_PCI_VENDOR and cls.startswith(_GPU_PCI_CLASS_PREFIX):
            out.append(bdf)
    return tuple(out)


def gpu_layout(sys_root: str = "/sys", proc_root: str = "/proc",
               dev_root: str = "/dev") -> GpuLayout:
    """The binds of a GPU run on this host (see above). ``*_root`` name where the host's
    sysfs, procfs and /dev are (tests pass a fake tree); sandbox paths are always the real
    ones (``/sys``, ``/proc``, ``/dev``)."""
    binds: list[tuple[str, str]] = []
    links: list[tuple[str, str]] = []
    hide: list[str] = []

    def sandbox_path(host: str, root: str, real: str) -> str:
        rel = os.path.relpath(host, root)
        return real if rel == "." else os.path.join(real, rel)

    def bind_dir(host: str, root: str, real: str) -> None:
        dest = sandbox_path(host, root, real)
        binds.append((host, dest))
        hide.extend(sandbox_path(f, root, real) for f in _root_only_files(host))

    devices = [(d, sandbox_path(d, dev_root, "/dev")) for d in gpu_device_nodes(dev_root)]
    sys_real = os.path.realpath(sys_root)
    for bdf in gpu_pci_devices(sys_root):
        link = os.path.join(sys_root, "bus", "pci", "devices", bdf)
        real = os.path.realpath(link)
        if not _is_within(real, sys_real) or not os.path.isdir(real):
            continue  # a link out of sysfs: never follow it
        bind_dir(real, sys_real, "/sys")
        links.append((sandbox_path(real, sys_real, "/sys"),
                      f"/sys/bus/pci/devices/{bdf}"))
    if binds:  # only with a GPU: NUMA topology and the driver version
        for extra in (("devices", "system", "node"), ("module", "nvidia", "version")):
            host = os.path.join(sys_root, *extra)
            if os.path.exists(host) and not os.path.islink(host):
                if os.path.isdir(host):
                    bind_dir(host, sys_root, "/sys")
                elif _world_readable(host):
                    binds.append((host, sandbox_path(host, sys_root, "/sys")))
    nv = os.path.join(proc_root, "driver", "nvidia")
    if (binds or devices) and os.path.isdir(nv):
        bind_dir(nv, proc_root, "/proc")
    return GpuLayout(devices=tuple(devices), ro_binds=tuple(binds), symlinks=tuple(links),
                     hide=tuple(sorted(set(hide))))


def _read_small(path: str) -> str:
    try:
        with open(path) as f:
            return f.read(64).strip()
    except (OSError, UnicodeDecodeError):
        return ""


def _world_readable(path: str) -> bool:
    try:
        return bool(os.stat(path).st_mode & 0o004)
    except OSError:
        return False


def _root_only_files(top: str, depth: int = _HIDE_SCAN_DEPTH) -> list[str]:
    """Regular files under ``top`` (not following links) that others cannot read."""
    out: list[str] = []
    try:
        entries = list(os.scandir(top))
    except OSError:
        return out
    for e in entries:
        try:
            if e.is_symlink():
                continue
            if e.is_dir(follow_symlinks=False):
                if depth > 0:
                    out.extend(_root_only_files(e.path, depth - 1))
            elif not e.stat(follow_symlinks=False).st_mode & 0o004:
                out.append(e.path)
        except OSError:
            continue
    return out


def bwrap_argv(
    *,
    interp: Interpreter,
    script_fd: int | str | None,
    args: Sequence[str],
    env: Mapping[str, str],
    limits: RunLimits,
    uid: int,
    etc_fds: Mapping[str, int | str],
    seccomp_fd: int | str | None = None,
    status_fd: int | str | None = None,
    gpu: bool = False,
    gpu_devices: Sequence[str] = (),
    gpu_binds: GpuLayout | None = None,
    proc_hide: Sequence[str] = (),
    scratch_mount: str | None = None,
    bwrap: str = "bwrap",
) -> list[str]:
    """The full bwrap command line for one run (pure: no I/O). An fd may be given as a
    ``tasks.launch`` placeholder (a string), filled in when the run is made.

    ``etc_fds``: sandbox path -> fd holding the generated file (copied in with ``--file``).
    ``seccomp_fd``: fd holding the BPF program of :func:`seccomp_filter`.
    ``proc_hide``: files of the sandbox's /proc covered by an empty file
    (:func:`proc_files_to_hide`).
    ``gpu``: bind what a GPU run needs: ``gpu_binds`` (:func:`gpu_layout`), or only the
    device nodes ``gpu_devices``.
    ``scratch_mount``: a tmpfs mounted by :func:`limits_wrapper_argv` (size- and
    inode-limited) whose ``tmp`` and ``shm`` become ``/tmp`` and ``/dev/shm``; without it bwrap
    mounts two tmpfs of ``disk_bytes`` each (no inode limit).
    """
    a: list[str] = [
        bwrap,
        "--unshare-all",  # user, ipc, pid, net, uts, cgroup; no --share-net: no network
        # No nested user namespaces: inside one the script would hold every capability over
        # its own namespaces and could mount the host's cgroup v1 hierarchies (rooted at its
        # own per-run cgroup, whose files its host uid may own) and raise its own memory and
        # pids limits; or mount size-unlimited tmpfs and overlays.
        "--unshare-user", "--disable-userns",  # (--unshare-all only *tries* a user namespace)
        "--die-with-parent",
        "--new-session",
        "--uid", str(uid),
        "--gid", str(uid),
        "--hostname", "reprobot-sandbox",
        "--ro-bind", "/usr", "/usr",
    ]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        a += _top_level(top)
    # Interpreter directories under /tmp or /dev/shm (a checkout in /tmp, say) are bound after
    # the private tmpfs mounts below, which would otherwise hide them.
    late = [d for d in interp.binds if _under(d, SANDBOX_TMP) or _under(d, "/dev/shm")]
    for d in interp.binds:
        if d not in late:
            a += ["--ro-bind", d, d]
    for src in _ETC_RO_BINDS:
        if src not in etc_fds:
            a += ["--ro-bind-try", src, src]
    for dest, fd in sorted(etc_fds.items()):
        a += ["--perms", "0644", "--file", str(fd), dest]
    a += ["--ro-bind-try", "/sys/devices/system/cpu", "/sys/devices/system/cpu"]
    a += ["--proc", "/proc", "--dev", "/dev"]
    # bwrap leaves /proc/sys writable by a sandbox user that is host uid 0 (worker run as root):
    # cover it with a read-only bind (sysctl values are shown per the reader's namespaces).
    a += ["--ro-bind", "/proc/sys", "/proc/sys"]
    a += ["--ro-bind", "/dev/null", "/proc/keys", "--ro-bind", "/dev/null", "/proc/key-users"]
    for f in proc_hide:
        a += ["--ro-bind", "/dev/null", f]
    if gpu:
        layout = gpu_binds if gpu_binds is not None else GpuLayout(
            devices=tuple((d, d) for d in gpu_devices))
        for src, dest in layout.devices:
            a += ["--dev-bind", src, dest]
        # Only the GPUs' own PCI directories, NUMA nodes and driver files (see gpu_layout).
        for src, dest in layout.ro_binds:
            a += ["--ro-bind", src, dest]
        for target, link in layout.symlinks:
            a += ["--symlink", target, link]
        for f in layout.hide:
            a += ["--ro-bind", "/dev/null", f]
    if scratch_mount is not None:
        a += ["--bind", f"{scratch_mount}/shm", "/dev/shm"]
        a += ["--bind", f"{scratch_mount}/tmp", SANDBOX_TMP]
    else:
        size = str(int(limits.disk_bytes))
        a += ["--size", size, "--tmpfs", "/dev/shm"]
        a += ["--size", size, "--perms", "1777", "--tmpfs", SANDBOX_TMP]
    a += ["--remount-ro", "/dev"]  # /dev/shm (its own tmpfs) stays writable
    for d in late:
        a += ["--ro-bind", d, d]
    a += ["--dir", SANDBOX_SCRATCH]
    if script_fd is not None:  # (None: a warm start, whose hook writes the script there)
        a += ["--perms", "0644", "--file", str(script_fd), f"{SANDBOX_SCRATCH}/{SCRIPT_NAME}"]
    a += ["--remount-ro", "/"]
    if status_fd is not None:
        a += ["--json-status-fd", str(status_fd)]
    if seccomp_fd is not None:
        a += ["--seccomp", str(seccomp_fd)]
    a += ["--chdir", SANDBOX_SCRATCH, "--clearenv"]
    for k, v in sorted(env.items()):
        a += ["--setenv", k, v]
    a += ["--", interp.executable, "-X", "faulthandler", SCRIPT_NAME, *args]
    return a


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _top_level(path: str) -> list[str]:
    """/bin, /lib... are links into /usr on merged-/usr systems, real dirs elsewhere."""
    if os.path.islink(path):
        return ["--symlink", os.readlink(path), path]
    if os.path.isdir(path):
        return ["--ro-bind", path, path]
    return []


# --------------------------------------------------------------------------- docker

DOCKER_SCRATCH = SANDBOX_SCRATCH  # /tmp/scratch, as in bwrap


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
    nofile: int = SANDBOX_NOFILE,
    cidfile: str | None = None,
    owner: int | None = None,
    gpu_binds: GpuLayout | None = None,
    seccomp_profile: str | None = None,
) -> list[str]:
    """``docker run`` for one run. The script arrives on stdin and is written to the scratch
    tmpfs by the container's own shell before ``exec python``; nothing of the host is mounted.
    ``uid`` is the run's own host uid (a container shares the host's per-user counters)."""
    size = int(limits.disk_bytes)
    inodes = scratch_inodes(size)
    a = [
        docker, "run", "--name", name, "-i",
        "--network", "none",
        "--hostname", "reprobot-sandbox",
        "--read-only",
        "--memory", str(int(limits.memory_bytes)),
        "--memory-swap", str(int(limits.memory_bytes)),
        "--pids-limit", str(int(limits.max_processes)),
        "--user", f"{uid}:{uid}",
        "--cap-drop", "ALL",
        "--security-opt", "no-new-privileges",
        "--ipc", "private",
        # Like bwrap: scratch is a directory of the size- and inode-limited /tmp (a tmpfs on
        # a directory of the image would take the image directory's owner and mode).
        "--tmpfs", f"/tmp:rw,exec,size={size},nr_inodes={inodes},mode=1777",
        "--tmpfs", f"/dev/shm:rw,size={size},nr_inodes={inodes},mode=1777",
        "--ulimit", "core=0",
        "--ulimit", f"nofile={int(nofile)}:{int(nofile)}",
        "--ulimit", f"sigpending={SANDBOX_SIGPENDING}:{SANDBOX_SIGPENDING}",
        "--log-driver", "none",
    ]
    if seccomp_profile is not None:  # a file with docker_seccomp_profile()
        a += ["--security-opt", f"seccomp={seccomp_profile}"]
    if cidfile is not None:
        a += ["--cidfile", cidfile]  # the container's id, to find its cgroup
    if owner is not None:
        a += ["--label", f"{DOCKER_OWNER_LABEL}={int(owner)}"]
    # No host-wide /sys (other containers' cgroups, slab, ACPI, class/net): an empty /sys
    # with only the CPU topology, as in bwrap; a GPU run adds what gpu_layout names.
    a += ["--tmpfs", "/sys:rw,size=64k,mode=0555",
          "--volume", "/sys/devices/system/cpu:/sys/devices/system/cpu:ro"]
    if gpu:
        a += ["--gpus", "all"]
        layout = gpu_binds or GpuLayout()
        host_of = dict((dest, src) for src, dest in layout.ro_binds)
        for src, dest in layout.ro_binds:
            a += ["--volume", f"{src}:{dest}:ro"]
        for target, link in layout.symlinks:  # docker makes no links: bind at the link path
            if target in host_of:
                a += ["--volume", f"{host_of[target]}:{link}:ro"]
        for f in layout.hide:
            a += ["--volume", f"/dev/null:{f}:ro"]
    for k, v in sorted(env.items()):
        a += ["--env", f"{k}={v}"]
    # Exit status 125 when the launcher cannot set up scratch: our failure, never the script's.
    inner = (f"{{ mkdir -p {DOCKER_SCRATCH} && cd {DOCKER_SCRATCH} && cat > {SCRIPT_NAME}; }} "
             f"|| exit 125; exec {shlex.quote(python)} -X faulthandler {SCRIPT_NAME} \"$@\"")
    a += ["--entrypoint", "/bin/sh", image, "-c", inner, "sh", *args]
    return a


def docker_env(pass_env: Mapping[str, str]) -> dict[str, str]:
    return child_env(home=DOCKER_SCRATCH, tmpdir="/tmp", pass_env=pass_env)


DOCKER_OWNER_LABEL = "reprobot.worker-pid"


def docker_cgroup(container_id: str, root: str = "/sys/fs/cgroup") -> Cgroup | None:
    """The cgroup docker made for a running container (cgroupfs or systemd driver, cgroup v1 or
    v2), to read its OOM and pids events while it runs; None until it exists."""
    cid = container_id.strip()
    if not cid or "/" in cid or cid.startswith("."):
        return None
    for rel in (f"docker/{cid}", f"system.slice/docker-{cid}.scope"):
        v1 = {c: Path(root, c, rel) for c in ("memory", "pids")}
        if all((d / "cgroup.procs").exists() for d in v1.values()):
            return Cgroup(1, v1)
        v2 = Path(root, rel)
        if (v2 / "cgroup.procs").exists() and (v2 / "pids.events").exists():
            return Cgroup(2, {"unified": v2})
    return None


# ------------------------------------------------------------- per-user kernel counters
#
# The kernel counts some resources per user, across all of that user's processes: inotify
# instances and watches, pipe buffers, pending signals, message queues, RLIMIT_NPROC. A run
# that exhausts one would starve every other run of the same host uid, and the worker. So:
#
# * each run leases its own host uid from a pool (a root worker: bwrap is started as that uid
#   with setpriv; the docker backend: ``--user``), so its counters are its own;
# * each bwrap run starts in a user namespace of its own (:func:`limits_wrapper_argv`) whose
#   inotify limits are small: the kernel charges a child namespace's use to the parent's
#   counter of the namespace's owner, capped by the child's own limit;
# * the open-files limit (soft and hard) is low, so the tree cannot fill the system file
#   table (at most ``max_processes`` x ``SANDBOX_NOFILE`` open files, all charged to the
#   run's memory cgroup);
# * the scratch tmpfs has an inode limit: millions of empty files (or links, or
#   directories) fill it like bytes do, long before the memory limit.

# (the numbers are at the top of this module)


def scratch_inodes(disk_bytes: int) -> int:
    """How many files, directories and links the scratch tmpfs may hold."""
    return max(SCRATCH_MIN_INODES, int(disk_bytes) // SCRATCH_BYTES_PER_INODE)


@record(frozen=False)
class UidLease:
    """A host uid held for one run (an flock on its lock file); ``release`` when done."""

    uid: int
    fd: int

    def release(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1


def default_uid_lock_dir() -> Path:
    if os.geteuid() == 0:
        return Path("/run/reprobot/uid-pool")
    base = os.environ.get("XDG_RUNTIME_DIR") or f"/tmp/reprobot-{os.geteuid()}"
    return Path(base) / "uid-pool"


def lease_uid(lock_dir: Path | None = None, *, start: int = UID_POOL_START,
              size: int = UID_POOL_SIZE) -> UidLease:
    """Lease a host uid no other run of this host holds (lock files shared by all workers of
    the host). Raises InfraError when all are taken."""
    d = lock_dir or default_uid_lock_dir()
    try:
        d.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as e:
        raise InfraError(f"cannot make the sandbox uid pool's lock directory {d}: {e}") from e
    first = int.from_bytes(os.urandom(2), "little") % size
    for i in range(size):
        uid = start + (first + i) % size
        try:
            fd = os.open(d / f"{uid}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as e:
            raise InfraError(f"cannot use the sandbox uid pool in {d}: {e}") from e
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        return UidLease(uid, fd)
    raise InfraError(f"all {size} sandbox uids are in use (lock files in {d})")


def limits_wrapper_argv(scratch: str, limits: RunLimits, inner: Sequence[str], *,
                        unshare: str = "unshare", prlimit: str | None = None) -> list[str]:
    """Start ``inner`` (bwrap) in a new user + mount namespace of its own, after mounting the
    run's scratch tmpfs (size and inode limits) on the empty host directory ``scratch`` and
    lowering the namespace's inotify limits. The mount exists only in that namespace."""
    script = (
        'mount -t tmpfs -o "size=$2,nr_inodes=$3,mode=0755" reprobot-scratch "$1" '
        '&& mkdir -m 1777 "$1/tmp" "$1/shm" '
        f"&& echo {SANDBOX_INOTIFY_INSTANCES} > /proc/sys/user/max_inotify_instances "
        f"&& echo {SANDBOX_INOTIFY_WATCHES} > /proc/sys/user/max_inotify_watches "
        "|| { echo \"reprobot-sandbox: cannot set up the run's namespace limits\" >&2; "
        "exit 125; }; shift 3; exec \"$@\""
    )
    if prlimit is not None:
        # Queued signals are counted per user at every namespace level, each level checked
        # against the limit its namespace was created with. Lowered here, inside the run's
        # namespace (created with the worker's limit): the run may queue SANDBOX_SIGPENDING,
        # and runs sharing a host uid still share the worker's whole allowance, not this one.
        n = SANDBOX_SIGPENDING
        inner = [prlimit, f"--sigpending={n}:{n}", "--", *inner]
    return [unshare, "--user", "--map-root-user", "--mount", "--propagation", "private", "--",
            "/bin/sh", "-c", script, "reprobot-limits", scratch, str(int(limits.disk_bytes)),
            str(scratch_inodes(limits.disk_bytes)), *inner]


# --------------------------------------------------------------------------- cgroups


@record(frozen=False)
class Cgroup:
    """One per-run cgroup (v1: a dir in the memory and pids hierarchies; v2: one dir)."""

    version: int
    dirs: dict[str, Path]  # controller ("memory", "pids", or "unified") -> directory

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs.values()]

    @property
    def join_files(self) -> list[str]:
        """Where a process joins by writing ``0`` (itself): see ``JOIN_FILE``."""
        name = JOIN_FILE[self.version]
        return [str(d / name) for d in self.dirs.values()]

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

    def kill_all(self, spare: int | None = None) -> None:
        """SIGKILL every process in the cgroup, and wait (up to 0.5 s) until none is left;
        ``spare``: all but that one (the launcher, bwrap, which then reaps them)."""
        if self.version == 2 and spare is None:
            d = self.dirs["unified"]
            with contextlib.suppress(OSError):
                (d / "cgroup.kill").write_text("1")
        for _ in range(50):
            pids = self.pids() - {spare}
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


# The file a process writes ``0`` to, to join a cgroup (join_cgroup_argv). In v1 that is
# ``tasks``: moving the writing thread alone (the launcher's shell has one) skips the global
# lock ``cgroup.procs`` takes for a whole process, whose first use after a pause waits for an
# RCU grace period (7-26 ms measured, on every run's start; ~1 ms this way).
JOIN_FILE = {1: "tasks", 2: "cgroup.procs"}


@record
class CgroupSupport:
    """What this host's cgroups allow: the version and the parents of per-run cgroups."""

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
    name = f"reprobot-probe-{os.urandom(4).hex()}"
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
        name = f"reprobot-probe-{os.urandom(4).hex()}"
        (base / name).mkdir()
        (base / name).rmdir()
        return ""
    except OSError as e:
        return f"cannot enable memory/pids for child cgroups: {e.strerror}"


def cgroup_plan(limits: RunLimits) -> dict[str, Any] | None:
    """A per-run cgroup with the memory and pids limits, as ``tasks.launch`` makes it:
    ``{"version", "parents": {controller: dir}, "writes": [(controller, file, value,
    required)]}``; None when unsupported."""
    s = cgroup_support()
    if s.version == 0:
        return None
    mem, pids = str(int(limits.memory_bytes)), str(int(limits.max_processes))
    if s.version == 1:
        writes = [("memory", "memory.limit_in_bytes", mem, True),
                  ("memory", "memory.memsw.limit_in_bytes", mem, False),  # (without swap acct.)
                  ("memory", "memory.swappiness", "0", False),
                  ("pids", "pids.max", pids, True)]
    else:
        writes = [("unified", "memory.max", mem, True),
                  ("unified", "memory.swap.max", "0", False),
                  ("unified", "memory.oom.group", "1", False),
                  ("unified", "pids.max", pids, True)]
    return {"version": s.version, "parents": {c: str(p) for c, p in s.parents.items()},
            "writes": writes, "join": JOIN_FILE[s.version]}


def make_cgroup(limits: RunLimits) -> Cgroup | None:
    """Create a per-run cgroup with the memory and pids limits; None when unsupported."""
    from tasks import launch

    plan = cgroup_plan(limits)
    if plan is None:
        return None
    for parent in plan["parents"].values():
        _remove_stale(Path(parent))
    try:
        dirs = launch.make_cgroup(plan)
    except OSError as e:
        raise InfraError(f"cannot set up the run's cgroup: {e}") from e
    return Cgroup(plan["version"], {c: Path(d) for c, d in dirs.items()})


def _remove_stale(parent: Path) -> None:
    """Remove empty per-run cgroups left by a worker that was killed mid-run."""
    try:
        names = [n for n in os.listdir(parent) if n.startswith("reprobot-") and
                 not n.startswith("reprobot-probe-")]
    except OSError:
        return
    for n in names:
        owner = n.split("-")[1]
        if owner.isdigit() and not os.path.exists(f"/proc/{owner}"):
            with contextlib.suppress(OSError):
                (parent / n).rmdir()


def join_cgroup_argv(join_files: Sequence[str], inner: Sequence[str], *,
                     status_fd: int | str | None,
                     nproc: int | None = None, nofile: int | None = None) -> list[str]:
    """Prefix ``inner`` with a tiny shell that moves itself into the cgroups (``join_files``:
    ``Cgroup.join_files``; so that every descendant starts inside them: no race), sets rlimits
    (``nofile``: soft and hard), tells the status pipe it is ready, and execs ``inner``."""
    lines = ["ulimit -c 0"]
    if nofile is not None:
        lines.append(f"ulimit -n {int(nofile)}")
    if nproc is not None:
        lines.append(f"ulimit -p {int(nproc)} 2>/dev/null")
    n = len(join_files)
    lines.append(
        f'i=0; while [ $i -lt {n} ]; do echo 0 > "$1" || '
        '{ echo "reprobot-sandbox: cannot join cgroup $1" >&2; exit 125; }; '
        "shift; i=$((i+1)); done"
    )
    if status_fd is not None:
        # (dash only redirects single-digit fds: write through /proc instead)
        lines.append(f"echo R > /proc/self/fd/{_int_or_placeholder(status_fd)}")
    lines.append('exec "$@"')
    return ["/bin/sh", "-c", "; ".join(lines), "reprobot-sandbox", *join_files, *inner]


def _int_or_placeholder(value: int | str) -> str:
    """A number for a command line, or a ``tasks.launch`` placeholder (``\\0name\\0``) that
    ``tasks.launch.make`` fills with one."""
    if isinstance(value, str):
        if not (value.startswith("\0") and value.endswith("\0") and value.count("\0") == 2):
            raise ValueError(f"not a number or a placeholder: {value!r}")
        return value
    return str(int(value))


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


def bwrap_smoke_argv(bwrap: str = "bwrap", *, uid: int | None = None,
                     setpriv: str = "setpriv") -> list[str]:
    """A minimal sandbox that prints "ok"; as ``uid`` when the worker must drop root."""
    a = [
        bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
        "--new-session",
        "--uid", "65534", "--gid", "65534",
        "--ro-bind", "/usr", "/usr",
        *_top_level("/bin"), *_top_level("/lib"), *_top_level("/lib64"),
        "--proc", "/proc", "--dev", "/dev", "--size", "1048576", "--tmpfs", "/tmp",
        "--remount-ro", "/",
        "--", "/bin/sh", "-c", "echo ok",
    ]
    return drop_privileges_argv(uid, a, setpriv) if uid is not None else a


def warn_none_backend() -> None:
    bar = "!" * 78
    sys.stderr.write(
        f"{bar}\n!! reprobot: sandbox backend 'none': the repro script runs UNSANDBOXED with\n"
        f"!! this user's rights, files and network. Development only; never on a bot.\n{bar}\n"
    )
    sys.stderr.flush()
