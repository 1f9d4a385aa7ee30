"""The warm start (tasks.runner.prestart / Prestarted, tasks/warm.py, tasks/warm_hook.py):
the same script gives the same RunResult cold and warm, in the real bwrap sandbox.

Most tests use a small interpreter of their own: a venv of the system Python (which has a real
``sitecustomize``, as Debian's does) with a ``tvm`` package written by the test, so that the
hook's preload is fast and can be made to warn, raise or crash. Those marked ``tvm`` use the
real apache-tvm of this interpreter.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
from dataclasses import asdict, replace
from pathlib import Path

import pytest
from procs import alive_in_group

from bot.config import SandboxConfig
from bot.models import RunLimits, RunResult
from tasks import warm
from tasks.backends import Sandbox, make_sandbox
from tasks.runner import Prestarted, prestart, run_script

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")
# the system interpreter (Debian's has a sitecustomize of its own), else this venv's base
SYSTEM_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else getattr(
    sys, "_base_executable", sys.executable)
LIMITS = RunLimits(timeout_s=60.0, memory_bytes=4 * 1024**3)

FAKE_TVM = """\
import sys
print("fake tvm: imported", file=sys.stderr)
__version__ = "0.0.fake"
"""

# What a script can see of how it was started; printed cold and warm, compared whole.
INTROSPECT = """\
import tvm
import hashlib, os, sys, warnings
def h(x):
    return hashlib.sha256(repr(x).encode()).hexdigest()[:16]
print("argv", sys.argv, sys.orig_argv[1:])
print("file", __file__, __name__, type(__loader__).__name__, __spec__, __cached__)
print("path", sys.path)
print("cwd", os.getcwd(), sorted(os.listdir(".")), sorted(os.listdir("/tmp")))
print("sitecustomize", getattr(sys.modules.get("sitecustomize"), "__file__", None))
print("env", sorted(os.environ.items()))
print("modules", len(sys.modules), h(sorted(sys.modules)))
print("importer cache", h(sorted(sys.path_importer_cache)))
print("warnings", h(warnings.filters))
fds = {}
for fd in sorted(os.listdir("/proc/self/fd")):
    try:
        fds[fd] = os.readlink(f"/proc/self/fd/{fd}").split("[")[0]
    except OSError:
        pass
print("fds", fds)
print("stat", oct(os.stat("repro.py").st_mode), os.stat("repro.py").st_size)
print("main keys", sorted(k for k in globals() if k.startswith("__")))
raise ValueError("the script's own error")
"""


REAL_SITECUSTOMIZE = """\
import sys
print("real sitecustomize ran", file=sys.stderr)
"""


def make_fake_python(root: Path, tvm_init: str = FAKE_TVM, *, base: str = SYSTEM_PYTHON,
                     sitecustomize: bool = True) -> str:
    """A venv of ``base`` with a ``tvm`` written here (and a real sitecustomize of its own)."""
    if not Path(base).exists():
        pytest.skip(f"no {base}")
    subprocess.run([base, "-m", "venv", "--without-pip", str(root)], check=True)
    site = next(root.glob("lib/python3*/site-packages"))
    (site / "tvm").mkdir()
    (site / "tvm" / "__init__.py").write_text(tvm_init)
    if sitecustomize:
        (site / "sitecustomize.py").write_text(REAL_SITECUSTOMIZE)
    (site / "fakenp.py").write_text("import sys\nprint('fakenp: imported', file=sys.stderr)\n")
    return str(root / "bin" / "python")


@pytest.fixture
def fake_python(tmp_path: Path) -> str:
    return make_fake_python(tmp_path / "venv")


@pytest.fixture
def box() -> Sandbox:
    return make_sandbox(SandboxConfig(backend="bwrap", limits=LIMITS))


def same(a: RunResult, b: RunResult) -> None:
    """Equal in every field but the time (and the addresses a crash dump prints: ASLR)."""
    da, db = asdict(a), asdict(b)
    da.pop("seconds"), db.pop("seconds")
    for d in (da, db):
        for k in ("stdout_tail", "stderr_tail"):
            d[k] = re.sub(r"0x[0-9a-f]{8,}", "0x...", d[k])
    assert da == db


def cold_and_warm(box, python: str, script: str, args: tuple[str, ...] = (),
                  used: str = "warm") -> tuple[RunResult, RunResult]:
    cold = run_script(script, python=python, sandbox=box, args=args)
    p = prestart(python, sandbox=box)
    assert isinstance(p, Prestarted)
    hot = p.go(script, args)
    assert p.used == used
    return cold, hot


@needs_bwrap
def test_the_script_sees_what_a_cold_run_shows(box: Sandbox, fake_python: str) -> None:
    args = ("--flag", "two words", "", "ünï")
    cold, hot = cold_and_warm(box, fake_python, INTROSPECT, args)
    same(cold, hot)
    assert cold.exit_code == 1
    out = cold.stdout_tail
    assert "argv ['repro.py', '--flag', 'two words', '', 'ünï']" in out
    assert "file /tmp/scratch/repro.py __main__ SourceFileLoader None None" in out
    assert "path ['/tmp/scratch'," in out and "/proc/self/fd" not in out
    assert "PYTHONPATH" not in out
    # the interpreter's real sitecustomize ran first and stands in sys.modules, as cold
    assert "sitecustomize /tmp/" in out and "site-packages/sitecustomize.py" in out
    assert hot.stderr_tail.startswith("real sitecustomize ran\nfake tvm: imported\n")
    assert "socket" not in out and "memfd" not in out  # the hook's fds are closed
    assert "fake tvm: imported" in hot.stderr_tail  # what tvm printed while preloaded is kept
    assert hot.stderr_tail.rstrip().endswith("ValueError: the script's own error")
    assert "/proc/self/fd" not in hot.stderr_tail and "warm" not in hot.stderr_tail


@needs_bwrap
def test_traceback_and_crash_dump_have_no_hook_frame(box: Sandbox, fake_python: str) -> None:
    script = textwrap.dedent("""\
        import tvm
        import ctypes


        def crash():
            ctypes.string_at(1)


        crash()
        """)
    cold, hot = cold_and_warm(box, fake_python, script)
    same(cold, hot)
    assert hot.signal == signal.SIGSEGV and hot.exit_code is None
    assert 'File "/tmp/scratch/repro.py", line 9 in <module>' in hot.stderr_tail
    assert "/proc/self/fd" not in hot.stderr_tail and "_preload" not in hot.stderr_tail


@needs_bwrap
def test_no_sitecustomize_means_none_is_left_behind(box: Sandbox, tmp_path: Path) -> None:
    py = make_fake_python(tmp_path / "v", sitecustomize=False)
    script = "import tvm\nimport sys\nprint('sitecustomize' in sys.modules)\n"
    cold, hot = cold_and_warm(box, py, script)
    same(cold, hot)
    assert hot.stdout_tail == "False\n"


@needs_bwrap
@pytest.mark.parametrize("tvm_init, why, runs_on", [
    ("raise RuntimeError('this tvm build is broken')\n", "importing tvm raises", False),
    ("import warnings\nwarnings.warn('old numpy', UserWarning, stacklevel=2)\n",
     "a warning names the importer's line", True),
    ("import ctypes\nctypes.string_at(1)\n", "importing tvm crashes", False),
    ("import os\nos._exit(3)\n", "importing tvm exits", False),
    ("import os\nos.chmod(os.getcwd(), 0o555)\n", "the scratch cannot take the script", True),
])
def test_a_start_that_is_not_equivalent_runs_the_script_cold(
        box: Sandbox, tmp_path: Path, tvm_init: str, why: str, runs_on: bool) -> None:
    py = make_fake_python(tmp_path / "venv", tvm_init)
    script = "import tvm\nprint('after')\n"
    cold, hot = cold_and_warm(box, py, script, used="cold")
    same(cold, hot)  # ... with the script's own frames and lines
    assert ("after" in hot.stdout_tail) == runs_on
    assert "/proc/self/fd" not in hot.stderr_tail and "_preload" not in hot.stderr_tail, why
    if "warn" in tvm_init:
        assert "repro.py:1: UserWarning: old numpy" in hot.stderr_tail


@needs_bwrap
def test_time_limit_counts_from_the_prestart(tmp_path: Path) -> None:
    py = make_fake_python(tmp_path / "venv")
    box = make_sandbox(SandboxConfig(backend="bwrap", limits=replace(LIMITS, timeout_s=3.0)))
    t0 = time.monotonic()
    p = prestart(py, sandbox=box)
    assert p is not None
    time.sleep(2.0)
    t1 = time.monotonic()
    res = p.go("import tvm\nimport time\ntime.sleep(30)\n")
    now = time.monotonic()
    assert p.used == "warm"
    assert res.timed_out and res.limit_hit == "time" and res.signal == signal.SIGKILL
    assert 3.0 <= res.seconds < 4.5  # honest: from the prestart to the kill
    assert now - t1 < 2.5 and now - t0 < 5.0


@needs_bwrap
def test_discard_leaves_nothing_behind(box: Sandbox, fake_python: str) -> None:
    for wait in (0.0, 1.5):  # while importing tvm, and while waiting for the script
        p = prestart(fake_python, sandbox=box)
        assert p is not None
        pid, paths, cgroup = p.run.proc.pid, list(p.launch.paths), p.launch.cgroup
        lease = p.launch.lease
        time.sleep(wait)
        # (the check sees a live one: the launcher names the interpreter once it has exec'd
        # bwrap, a few ms after prestart returns; on a loaded machine, later)
        deadline = time.monotonic() + 10
        while not _processes_naming(fake_python) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _processes_naming(fake_python)
        p.discard()
        p.discard()  # twice is harmless
        assert p.run.proc.poll() is not None
        assert not alive_in_group(pid)
        assert _processes_naming(fake_python) == []  # bwrap, its init, the interpreter
        assert all(not q.exists() for q in paths)
        if cgroup is not None:
            assert all(not d.exists() for d in cgroup.dirs.values())
        if lease is not None:
            assert lease.fd < 0 or not _fd_open(lease.fd)
        with pytest.raises(RuntimeError):
            p.go("import tvm\n")


def _processes_naming(text: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    if text.encode() in f.read():
                        found.append(int(name))
            except OSError:
                continue
    return found


def _fd_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


@needs_bwrap
def test_the_script_cannot_reach_the_channel(box: Sandbox, fake_python: str) -> None:
    script = textwrap.dedent("""\
        import tvm
        import os
        seen = []
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for fd in fds:
                try:
                    seen.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
                except OSError:
                    pass
        print("sockets", [s for s in seen if s.startswith("socket:")])
        print("memfds", [s for s in seen if "memfd" in s])
        """)
    cold, hot = cold_and_warm(box, fake_python, script)
    same(cold, hot)
    assert "sockets []" in hot.stdout_tail
    assert "reprobot-warm" not in hot.stdout_tail


def test_docker_cannot_prestart() -> None:
    docker = make_sandbox(SandboxConfig(backend="docker"))
    assert prestart(sys.executable, sandbox=docker) is None
    bwrap = make_sandbox(SandboxConfig(backend="bwrap"))
    # a PYTHONPATH the config passes would meet the hook's: cold
    assert prestart(sys.executable, sandbox=bwrap, pass_env={"PYTHONPATH": "/x"}) is None


def test_the_hook_zip_and_messages() -> None:
    data = warm.hook_zip(7)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert z.namelist() == ["sitecustomize.py"]
        source = z.read("sitecustomize.py").decode()
    assert "\n_CHANNEL_FD = 7\n" in source
    compile(source, "sitecustomize.py", "exec")
    # the imports come over the channel; the hook reads them back as the bot meant them
    preload = (("numpy", ()), ("tvm", ("te", "*")), ("tvm.relax.frontend", ("nn",)))
    msg = warm.preload_message(preload)
    assert msg == b"37\nnumpy \ntvm te,*\ntvm.relax.frontend nn"
    r, w = os.pipe()
    os.write(w, msg + b"more")
    hook: dict[str, object] = {"__name__": "hook"}
    exec(compile(source.replace("\n_CHANNEL_FD = 7\n", "\n_CHANNEL_FD = -1\n"), "h", "exec"),
         hook)  # (-1: its main part does not run here)
    hook["_CHANNEL_FD"] = r
    try:
        assert hook["_read_preload"]() == preload  # type: ignore[operator]
        assert os.read(r, 10) == b"more"  # not a byte past its own message
        os.close(w)
        assert hook["_read_preload"]() is None  # type: ignore[operator]  # EOF: cold
    finally:
        os.close(r)
    for bad in [("os; import x", ()), ("a", ("b)",)), ("", ())]:
        with pytest.raises(ValueError):
            warm.preload_message([bad])
    msg = warm.message("print('é')\n", ["a b", "", "--x"])
    head, _, rest = msg.partition(b"\n")
    assert rest[: int(head)].decode() == "print('é')\n"
    assert rest[int(head):] == b"a b\0\0--x\0"


@needs_bwrap
@pytest.mark.tvm
def test_real_tvm_cold_and_warm_agree() -> None:
    box = make_sandbox(SandboxConfig(backend="bwrap", limits=LIMITS))
    script = textwrap.dedent("""\
        import tvm
        from tvm import te
        import sys
        print(tvm.__version__, sys.argv[1:], "sitecustomize" in sys.modules)
        A = te.placeholder((4,), name="A")
        tvm.runtime.tensor([1.0]).copyfrom(tvm.runtime.tensor([1.0, 2.0, 3.0]))
        """)
    cold, hot = cold_and_warm(box, sys.executable, script, ("x",))
    same(cold, hot)
    assert hot.exit_code == 1 and "['x'] False" in hot.stdout_tail
    assert "Traceback" in hot.stderr_tail and "sitecustomize" not in hot.stderr_tail


@needs_bwrap
def test_a_limit_hit_while_importing_tvm_is_the_scripts_own_result(tmp_path: Path) -> None:
    py = make_fake_python(tmp_path / "venv", "import time\ntime.sleep(60)\n")
    box = make_sandbox(SandboxConfig(backend="bwrap", limits=replace(LIMITS, timeout_s=2.0)))
    p = prestart(py, sandbox=box)
    assert p is not None
    res = p.go("import tvm\nprint('never')\n")
    assert p.used == "warm"  # its first statement hung: no second run of 2 s more
    assert res.timed_out and res.limit_hit == "time" and 2.0 <= res.seconds < 3.5
    assert "never" not in res.stdout_tail


def test_none_backend_warm_start_runs_the_script(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    py = make_fake_python(tmp_path / "venv")
    box = make_sandbox(SandboxConfig(backend="none", limits=LIMITS))
    script = "import tvm\nimport sys\nprint(sys.argv[1:], __file__.endswith('/repro.py'))\n" \
             "raise SystemExit(4)\n"
    cold, hot = cold_and_warm(box, py, script, ("a",))
    assert hot.exit_code == cold.exit_code == 4
    assert hot.stdout_tail == cold.stdout_tail == "['a'] True\n"
    assert hot.stderr_tail == cold.stderr_tail


@needs_bwrap
def test_a_preload_of_the_scripts_leading_imports_keeps_their_order(
        box: Sandbox, fake_python: str) -> None:
    script = "import fakenp as np\nimport tvm\nimport sys\nprint(sorted(sys.modules)[-3:])\n"
    cold = run_script(script, python=fake_python, sandbox=box)
    p = prestart(fake_python, sandbox=box, preload=(("fakenp", ()), ("tvm", ())))
    assert p is not None
    hot = p.go(script)
    assert p.used == "warm"
    same(cold, hot)
    assert hot.stderr_tail == "real sitecustomize ran\nfakenp: imported\nfake tvm: imported\n"
    # a preload the script does not do: its own error, from its own run
    p = prestart(fake_python, sandbox=box, preload=(("no_such_module", ()), ("tvm", ())))
    assert p is not None
    res = p.go("import no_such_module\n")
    assert p.used == "cold" and "ModuleNotFoundError" in res.stderr_tail
    assert 'File "/tmp/scratch/repro.py", line 1' in res.stderr_tail
