"""The runner with real scripts against the installed apache-tvm (bwrap backend, and none)."""

from __future__ import annotations

import shutil
import signal
import sys
import textwrap
from dataclasses import replace

import pytest

from bot.config import SandboxConfig
from bot.models import RunLimits, RunResult
from tasks.runner import run_script

PY = sys.executable
CFG = SandboxConfig(backend="bwrap", limits=RunLimits(timeout_s=60.0, memory_bytes=4 * 1024**3))
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")


def run(script: str, args: tuple[str, ...] = ()) -> RunResult:
    return run_script(textwrap.dedent(script), python=PY, sandbox=CFG, args=args)


@needs_bwrap
@pytest.mark.tvm
def test_real_tvm_script_passes() -> None:
    res = run_script(
        textwrap.dedent(
            """
            import numpy as np
            import tvm
            from tvm import te

            n = 16
            A = te.placeholder((n,), name="A")
            B = te.compute((n,), lambda i: A[i] * 2.0 + 1.0, name="B")
            f = tvm.build(te.create_prim_func([A, B]), target="llvm")
            a = tvm.runtime.tensor(np.arange(n, dtype="float32"))
            b = tvm.runtime.tensor(np.zeros(n, dtype="float32"))
            f(a, b)
            np.testing.assert_allclose(b.numpy(), np.arange(n) * 2.0 + 1.0)
            print("tvm ok", tvm.__version__)
            """
        ),
        python=PY,
        sandbox=CFG,
    )
    assert res.exit_code == 0, res.stderr_tail
    assert res.signal is None and res.limit_hit is None and not res.timed_out
    assert "tvm ok 0.27" in res.stdout_tail
    assert res.sandbox == "bwrap"


@needs_bwrap
@pytest.mark.tvm
def test_tvm_error_message_is_visible_with_backtrace_env() -> None:
    res = run_script(
        textwrap.dedent(
            """
            import os
            import tvm
            print("TVM_BACKTRACE", os.environ.get("TVM_BACKTRACE"))
            tvm.runtime.tensor([1.0]).copyfrom(tvm.runtime.tensor([1.0, 2.0, 3.0]))
            """
        ),
        python=PY,
        sandbox=CFG,
    )
    assert "TVM_BACKTRACE 1" in res.stdout_tail
    assert res.exit_code == 1
    assert "Error" in res.stderr_tail and "Traceback" in res.stderr_tail


@needs_bwrap
def test_segfault_through_ctypes_is_signal_11() -> None:
    res = run("import ctypes\nctypes.string_at(1)\n")
    assert res.signal == signal.SIGSEGV and res.exit_code is None
    assert "Segmentation fault" in res.stderr_tail  # faulthandler
    assert 'File "/tmp/scratch/repro.py", line 2' in res.stderr_tail


@needs_bwrap
def test_abort_is_signal_6() -> None:
    res = run("import os\nos.abort()\n")
    assert res.signal == signal.SIGABRT and res.exit_code is None
    assert res.limit_hit is None


@needs_bwrap
def test_exit_code_is_kept() -> None:
    res = run("import sys\nprint('bye')\nsys.exit(3)\n")
    assert res.exit_code == 3 and res.signal is None
    assert res.stdout_tail == "bye\n"
    res = run("raise ValueError('boom')\n")
    assert res.exit_code == 1
    assert "ValueError: boom" in res.stderr_tail


@needs_bwrap
def test_runs_as_main_from_a_real_file_with_args() -> None:
    res = run(
        """
        import os, sys, inspect
        def main():
            print(__name__, os.path.basename(__file__), sys.argv[1:])
            print(inspect.getsource(main).splitlines()[0])  # needs a real file
            print(os.getcwd() == os.path.dirname(os.path.abspath(__file__)))
        if __name__ == "__main__":
            main()
        """,
        args=("--size", "8", "two words"),
    )
    assert res.exit_code == 0, res.stderr_tail
    lines = res.stdout_tail.splitlines()
    assert lines[0] == "__main__ repro.py ['--size', '8', 'two words']"
    assert lines[1] == "def main():" and lines[2] == "True"


@needs_bwrap
def test_script_can_import_a_helper_it_writes_next_to_itself() -> None:
    res = run(
        """
        open("helper.py", "w").write("VALUE = 42\\n")
        import helper
        print(helper.VALUE)
        """
    )
    assert res.stdout_tail == "42\n", res.stderr_tail


@needs_bwrap
def test_unicode_and_interleaved_streams() -> None:
    res = run("import sys\nprint('héllo ✓')\nprint('warn ✗', file=sys.stderr)\n")
    assert res.stdout_tail == "héllo ✓\n" and res.stderr_tail == "warn ✗\n"


def test_none_backend_still_kills_on_time_and_caps_output(capfd: pytest.CaptureFixture[str]) -> None:
    cfg = replace(CFG, backend="none", limits=RunLimits(timeout_s=2.0, output_bytes=1024))
    res = run_script("import time\nprint('x' * 5000)\ntime.sleep(60)\n", python=PY, sandbox=cfg)
    assert res.timed_out and res.limit_hit == "time" and res.sandbox == "none"
    assert res.stdout_truncated and len(res.stdout_tail) <= 1024
    assert "UNSANDBOXED" in capfd.readouterr().err  # the loud warning
    res = run_script("import os\nos.abort()\n", python=PY, sandbox=cfg)
    assert res.signal == signal.SIGABRT
    res = run_script("import os\nprint(os.environ.get('TVM_BACKTRACE'), os.environ.get('GITHUB_TOKEN'))",
                     python=PY, sandbox=cfg)
    assert res.stdout_tail == "1 None\n"
