"""classify(): every outcome, from real runs of tiny scripts against the installed apache-tvm
(where a real run can show it) and from RunResults for what only the sandbox produces."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bot.classify import (
    Locations,
    classify,
    cpp_frames,
    frame_kind,
    locations_of,
    normalize_paths,
    parse_last_error,
    pass_names,
)
from bot.compare import compare
from bot.models import Issue, Outcome, Reported, Repro, RunResult, Verdict
from bot.reported import parse_reported

NO_GPU = {"gpu": "", "cuda_enabled": "false"}

# name -> script; each runs as a real file, as __main__, like the runner does.
SCRIPTS: dict[str, str] = {
    "check_failed": """
        import tvm
        from tvm import relax
        bb = relax.BlockBuilder()
        x = relax.Var("x", relax.TensorType((2, 3), "float32"))
        bb.emit(relax.op.add(x, x))  # no block is being built
    """,
    "tvm_value_error": """
        import tvm
        from tvm import relax
        x = relax.Var("x", relax.TensorType((2, 3), "float32"))
        y = relax.Var("y", relax.TensorType((4, 5), "float32"))
        bb = relax.BlockBuilder()
        with bb.function("main", [x, y]):
            out = bb.emit(relax.op.matmul(x, y))
            bb.emit_func_output(out)
    """,
    "diagnostic": """
        import tvm
        from tvm.script import tirx as T

        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            for i in range(4):
                A[i] = B[i]
    """,
    "segfault": """
        import ctypes
        ctypes.string_at(0)
    """,
    "segfault_with_tvm": """
        import ctypes
        import tvm
        ctypes.string_at(0)
    """,
    "abort": """
        import os
        os.abort()
    """,
    "np_mismatch": """
        import numpy as np
        import tvm
        from tvm import te
        A = te.placeholder((4,), name="A")
        B = te.compute((4,), lambda i: A[i] * 2.0, name="B")
        f = tvm.compile(te.create_prim_func([A, B]), target="llvm")
        a = tvm.runtime.tensor(np.arange(4, dtype="float32"))
        b = tvm.runtime.tensor(np.zeros(4, dtype="float32"))
        f(a, b)
        np.testing.assert_allclose(b.numpy(), np.arange(4, dtype="float32") * 3.0)
    """,
    # float32 matmul against numpy's, with rtol alone: a value near zero differs in its 5th
    # digit, right to float precision -- the check fails, the result is not wrong
    "np_mismatch_by_rounding": """
        import numpy as np
        out = np.array([[1.725232, 0.0], [2.597570e-04, 4.166133]], dtype="float32")
        ref = np.array([[1.725232, 0.0], [2.597249e-04, 4.166133]], dtype="float32")
        np.testing.assert_allclose(out, ref, rtol=1e-5)
    """,
    "tvm_testing_mismatch": """
        import numpy as np
        import tvm.testing
        tvm.testing.assert_allclose(np.ones(3), np.array([1.0, 1.0, 2.0]))
    """,
    "bare_assert": """
        import numpy as np
        import tvm
        x = tvm.runtime.tensor(np.array([1, 2, 3], dtype="int32")).numpy()
        assert (x == np.array([1, 2, 4])).all(), "results differ"
    """,
    "missing_module": """
        import numpy
        import reprobot_surely_missing_pkg
    """,
    "relay_import": """
        import tvm
        from tvm import relay
    """,
    "relay_module": """
        import tvm.relay
    """,
    "script_tir": """
        from tvm.script import tir as T
    """,
    "nd_array": """
        import numpy as np
        import tvm
        a = tvm.nd.array(np.zeros(3))
    """,
    "create_schedule": """
        import tvm
        from tvm import te
        A = te.placeholder((3,), name="A")
        s = te.create_schedule(A.op)
    """,
    "tvm_var": """
        import tvm
        n = tvm.var("n")
    """,
    "tvm_gpu": """
        import tvm
        dev = tvm.gpu(0)
    """,
    "struct_info": """
        import tvm
        from tvm import relax
        x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
    """,
    "name_error": """
        import tvm
        y = used_before_assignment + 1  # bound below: the script's own bug, not a fragment
        used_before_assignment = 1
    """,
    # A fragment: the reporter's model-building code is not in the issue.
    "fragment_relax_build": """
        import tvm
        from tvm import relax
        from tvm.relax.frontend import nn
        ex = relax.build(mod, target="llvm")
        vm = relax.VirtualMachine(ex, tvm.cpu())
        print(vm["main"](data, *params))
    """,
    # A fragment whose NameError the script itself catches: it passes, says nothing.
    "fragment_caught": """
        import tvm
        try:
            lib = tvm.compile(onnx_mod, target="llvm")
        except Exception as err:
            print("compile failed:", err)
    """,
    # Imports, a version print, and nothing else.
    "imports_only": """
        import numpy as np
        import tvm
        from tvm import relax
        print(tvm.__version__)
    """,
    # A method body pasted alone.
    "method_body": """
        import tvm
        out = tvm.relax.op.nn.relu(x)
        return out
    """,
    "syntax_error": """
        import tvm
        x = (1,
    """,
    "script_type_error": """
        import tvm
        len(5)
    """,
    # TVMScript of the 0.2x years: `out_sinfo=` was renamed `out_ty=`.
    "renamed_keyword": """
        import tvm
        from tvm.script import ir as I, relax as R, tirx as T

        @I.ir_module
        class Mod:
            @T.prim_func
            def add_one(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
                for i in range(4):
                    b[i] = a[i] + T.float32(1)

            @R.function
            def main(x: R.Tensor((4,), "float32")):
                cls = Mod
                y = R.call_tir(cls.add_one, (x,), out_sinfo=R.Tensor((4,), "float32"))
                return y
    """,
    # The reporter's helper turns TVM's error into its own (raise ... from e): still TVM's.
    "reraised_tvm_error": """
        import tvm
        from tvm import te

        class LoweringFailed(RuntimeError):
            pass

        def lower(func):
            try:
                sch = tvm.s_tir.Schedule(func)
                sch.get_sblock("no_such_block")
            except Exception as e:
                raise LoweringFailed("could not schedule the kernel") from e

        A = te.placeholder((8,), name="A")
        B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
        lower(te.create_prim_func([A, B]))
    """,
    # ... but a script error re-raised the same way stays the script's.
    "reraised_script_error": """
        import tvm

        class ConfigError(RuntimeError):
            pass

        def read(cfg):
            try:
                return int(cfg["tiles"])
            except (KeyError, ValueError) as e:
                raise ConfigError("bad tiles setting") from e

        read({"tiles": "four"})
    """,
    "passes_with_warnings": """
        import sys
        import warnings
        import tvm
        warnings.warn("this API is deprecated")
        print("warning: something on stderr", file=sys.stderr)
        print("done")
    """,
    "needs_cuda": """
        import sys
        import numpy as np
        import tvm
        dev = tvm.cuda(0)
        if dev.exist:
            print("this machine has a GPU")
            sys.exit(0)
        tvm.runtime.tensor(np.zeros(3, dtype="float32"), dev)
    """,
    "exit_with_message": """
        import sys
        import tvm
        sys.exit("Results mismatch between llvm and c")
    """,
    "pytest_check_failed": """
        import tvm
        import tvm.testing
        from tvm import relax

        def test_emit_outside_block():
            bb = relax.BlockBuilder()
            x = relax.Var("x", relax.TensorType((2, 3), "float32"))
            bb.emit(relax.op.add(x, x))

        def test_fine():
            assert True

        if __name__ == "__main__":
            tvm.testing.main()
    """,
    "pytest_mismatch": """
        import numpy as np
        import tvm.testing

        def test_values():
            tvm.testing.assert_allclose(np.ones(4), np.array([1.0, 1.0, 1.0, 5.0]))

        if __name__ == "__main__":
            tvm.testing.main()
    """,
    "exit_silently": """
        import sys
        sys.exit(3)
    """,
}


def real_run(script: str, tmp: Path, *, backtrace: bool = True) -> RunResult:
    """Run ``script`` as the runner does (a real file, ``-X faulthandler``, TVM_BACKTRACE=1)."""
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "repro.py").write_text(textwrap.dedent(script))
    # TVM prints full tracebacks whenever it sees PYTEST_CURRENT_TEST; the runner's child
    # never has it, so neither does this one.
    env = {k: v for k, v in os.environ.items() if k not in ("TVM_BACKTRACE", "PYTEST_CURRENT_TEST")}
    if backtrace:
        env["TVM_BACKTRACE"] = "1"
    p = subprocess.run(
        [sys.executable, "-X", "faulthandler", "repro.py"],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    code = p.returncode
    return RunResult(
        exit_code=code if code >= 0 else None,
        signal=-code if code < 0 else None,
        seconds=1.0,
        stdout_tail=p.stdout,
        stderr_tail=p.stderr,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, RunResult]:
    base = tmp_path_factory.mktemp("runs")
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {name: pool.submit(real_run, src, base / name) for name, src in SCRIPTS.items()}
        return {name: f.result() for name, f in futures.items()}


pytestmark = pytest.mark.tvm


# (script, expected outcome, a piece of the signature, a piece of the detail)
REAL_TABLE = [
    ("check_failed", Outcome.INTERNAL_ERROR, "Check failed: (!block_stack_.empty()) is false", ""),
    ("tvm_value_error", Outcome.TVM_ERROR, "Matmul requires the reduction length", ""),
    ("diagnostic", Outcome.TVM_ERROR, "DiagnosticError: error: Undefined variable: B", ""),
    ("segfault", Outcome.CRASH, "Segmentation fault (signal 11)", "SIGSEGV"),
    ("segfault_with_tvm", Outcome.CRASH, "Segmentation fault (signal 11)", "SIGSEGV"),
    ("abort", Outcome.CRASH, "Aborted (signal 6)", "SIGABRT"),
    ("np_mismatch", Outcome.WRONG_RESULT, "Mismatched elements: 3 / 4", ""),
    ("np_mismatch_by_rounding", Outcome.PASSED, "max difference 3.2", "float32 rounding"),
    ("tvm_testing_mismatch", Outcome.WRONG_RESULT, "Mismatched elements: 1 / 3", ""),
    ("bare_assert", Outcome.WRONG_RESULT, "AssertionError: results differ", ""),
    (
        "missing_module",
        Outcome.MISSING_DEPENDENCY,
        "No module named 'reprobot_surely_missing_pkg'",
        "`reprobot_surely_missing_pkg` is not installed",
    ),
    ("relay_import", Outcome.API_MISMATCH, "cannot import name 'relay' from 'tvm'", "Relax"),
    ("relay_module", Outcome.API_MISMATCH, "No module named 'tvm.relay'", "Relax"),
    ("script_tir", Outcome.API_MISMATCH, "cannot import name 'tir'", "tvm.script.tirx"),
    ("nd_array", Outcome.API_MISMATCH, "has no attribute 'nd'", "tvm.runtime.tensor"),
    (
        "create_schedule",
        Outcome.API_MISMATCH,
        "has no attribute 'create_schedule'",
        "tvm.s_tir.Schedule",
    ),
    ("tvm_var", Outcome.API_MISMATCH, "module 'tvm' has no attribute 'var'", "tvm.te.var"),
    ("tvm_gpu", Outcome.API_MISMATCH, "has no attribute 'gpu'", "tvm.cuda"),
    ("struct_info", Outcome.API_MISMATCH, "TensorStructInfo", "tvm.relax.TensorType"),
    (
        "name_error",
        Outcome.PYTHON_ERROR,
        "NameError: name 'used_before_assignment' is not defined",
        "",
    ),
    ("syntax_error", Outcome.PYTHON_ERROR, "SyntaxError", ""),
    (
        "fragment_relax_build",
        Outcome.NO_REPRO,
        "NameError: name 'mod' is not defined",
        "uses `mod`, `data`, `params` that the issue never defines",
    ),
    ("fragment_caught", Outcome.NO_REPRO, "onnx_mod", "uses `onnx_mod` that the issue never"),
    # classify alone cannot know what the report is about: account_for_import_only decides.
    ("imports_only", Outcome.PASSED, "exit code 0", ""),
    ("method_body", Outcome.NO_REPRO, "'return' outside function", "the body of a function"),
    ("script_type_error", Outcome.PYTHON_ERROR, "TypeError: object of type 'int' has no len()", ""),
    ("renamed_keyword", Outcome.API_MISMATCH, "unexpected keyword argument 'out_sinfo'",
     "`out_ty=`"),
    ("reraised_tvm_error", Outcome.TVM_ERROR, "LoweringFailed: could not schedule the kernel",
     "from a TVM error"),
    ("reraised_script_error", Outcome.PYTHON_ERROR, "ConfigError: bad tiles setting", ""),
    ("passes_with_warnings", Outcome.PASSED, "exit code 0", ""),
    (
        "pytest_check_failed",
        Outcome.INTERNAL_ERROR,
        "Check failed: (!block_stack_.empty()) is false",
        "",
    ),
    ("pytest_mismatch", Outcome.WRONG_RESULT, "Mismatched elements: 1 / 4", ""),
    ("exit_with_message", Outcome.WRONG_RESULT, "Results mismatch between llvm and c", ""),
    ("exit_silently", Outcome.PYTHON_ERROR, "exit code 3", "without a Python traceback"),
]


@pytest.mark.parametrize(
    ("name", "outcome", "sig", "detail"), REAL_TABLE, ids=[r[0] for r in REAL_TABLE]
)
def test_real_run_is_classified(
    runs: dict[str, RunResult], name: str, outcome: Outcome, sig: str, detail: str
) -> None:
    run = runs[name]
    cls = classify(run, script=textwrap.dedent(SCRIPTS[name]), environment=NO_GPU)
    assert cls.outcome == outcome, (cls, run.stderr_tail[-2000:])
    assert sig in cls.signature
    assert detail in cls.detail
    if outcome != Outcome.PASSED:
        assert cls.evidence, "a failure must quote the lines that decided it"


def test_needs_gpu_from_real_tvm_error(runs: dict[str, RunResult]) -> None:
    run = runs["needs_cuda"]
    if run.exit_code == 0:
        pytest.skip("this machine has a CUDA device")
    cls = classify(run, needs=("cuda",), environment=NO_GPU)
    assert cls.outcome == Outcome.NEEDS_GPU
    assert "Device API cuda is not enabled" in cls.signature or "cuda" in cls.signature
    assert "cuda" in cls.detail
    # The same failure is still "needs-gpu" when the needs detector missed the device.
    assert classify(run, environment=NO_GPU).outcome == Outcome.NEEDS_GPU


def test_real_outputs_keep_install_paths_private(runs: dict[str, RunResult]) -> None:
    cls = classify(runs["relay_import"], environment=NO_GPU)
    assert "site-packages/tvm/__init__.py" in runs["relay_import"].stderr_tail
    assert "<site-packages>/tvm/__init__.py" in cls.signature
    assert sys.prefix not in cls.signature


RELAX_PARSE_ERROR = """
    import tvm
    from tvm.script import relax as R

    @tvm.script.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor((2, 3), "float32")):
            y = undefined_thing(x)
            return y
"""


def test_tvm_error_without_backtrace_env(tmp_path: Path) -> None:
    """Without TVM_BACKTRACE, TVM 0.27 hides some messages: still a tvm-error, said so."""
    run = real_run(RELAX_PARSE_ERROR, tmp_path, backtrace=False)
    assert "Traceback" not in run.stderr_tail
    assert run.exit_code == 1
    cls = classify(run)
    assert cls.outcome == Outcome.TVM_ERROR
    assert "TVM_BACKTRACE" in cls.signature
    # With TVM_BACKTRACE=1 (as the runner sets it) the real message is there.
    full = classify(real_run(RELAX_PARSE_ERROR, tmp_path / "bt"))
    assert full.outcome == Outcome.TVM_ERROR
    assert "DiagnosticError: error: Undefined variable: undefined_thing" in full.signature


# ---------------------------------------------------------------------------------------------
# What only the sandbox produces (limits, signals reported by a shell), as RunResults.


def _run(**kw: object) -> RunResult:
    base: dict[str, object] = {"exit_code": 1, "signal": None, "seconds": 1.0}
    base.update(kw)
    return RunResult(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("run", "outcome", "sig"),
    [
        (
            _run(exit_code=None, signal=9, timed_out=True, limit_hit="time", seconds=300.0),
            Outcome.TIMEOUT,
            "timed out after 300 s",
        ),
        (_run(exit_code=None, timed_out=True, seconds=12.0), Outcome.TIMEOUT, "12 s"),
        (_run(limit_hit="memory"), Outcome.RESOURCE_LIMIT, "memory"),
        (_run(limit_hit="processes"), Outcome.RESOURCE_LIMIT, "processes"),
        (_run(limit_hit="output", exit_code=None, signal=9), Outcome.RESOURCE_LIMIT, "output"),
        (_run(limit_hit="disk"), Outcome.RESOURCE_LIMIT, "disk"),
        (_run(exit_code=None, signal=9), Outcome.RESOURCE_LIMIT, "SIGKILL"),
        (_run(exit_code=139), Outcome.CRASH, "Segmentation fault (signal 11)"),
        (_run(exit_code=134), Outcome.CRASH, "Aborted (signal 6)"),
        (_run(exit_code=-11), Outcome.CRASH, "signal 11"),
        (_run(exit_code=None, signal=7), Outcome.CRASH, "Bus error (signal 7)"),
        (_run(exit_code=None, signal=8), Outcome.CRASH, "Floating point exception (signal 8)"),
        (_run(exit_code=None, signal=4), Outcome.CRASH, "Illegal instruction (signal 4)"),
        (
            _run(
                exit_code=1,
                stderr_tail="Fatal Python error: Segmentation fault\n\nCurrent thread:\n",
            ),
            Outcome.CRASH,
            "Segmentation fault",
        ),
        (
            _run(
                exit_code=None,
                signal=6,
                stderr_tail="terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\n",
            ),
            Outcome.RESOURCE_LIMIT,
            "bad_alloc",
        ),
        (
            _run(exit_code=0, stderr_tail="UserWarning: x\n  warnings.warn(\n"),
            Outcome.PASSED,
            "exit code 0",
        ),
        (
            _run(
                stdout_tail="note: run with `TVM_BACKTRACE=1` environment variable to display a backtrace.\n"
            ),
            Outcome.TVM_ERROR,
            "TVM_BACKTRACE",
        ),
        (
            _run(stderr_tail="[10:00:00] /src/x.cc:12: Check failed: a == b: boom\n"),
            Outcome.INTERNAL_ERROR,
            "Check failed: a == b",
        ),
        (
            _run(
                stderr_tail='Traceback (most recent call last):\n  File "repro.py", line 3, in <module>\n'
                "    raise RuntimeError('CUDA device 0 is not available')\n"
                "RuntimeError: CUDA device 0 is not available\n"
            ),
            Outcome.NEEDS_GPU,
            "CUDA device 0 is not available",
        ),
        (
            _run(
                stderr_tail='Traceback (most recent call last):\n  File "repro.py", line 3, in <module>\n'
                "    import tvm\nModuleNotFoundError: No module named 'tvm'\n"
            ),
            Outcome.INFRA_ERROR,
            "No module named 'tvm'",
        ),
        (
            _run(
                stderr_tail='Traceback (most recent call last):\n  File "repro.py", line 2, in <module>\n'
                "    sch.get_block('B')\nAttributeError: 'Schedule' object has no attribute 'get_block'\n"
            ),
            Outcome.API_MISMATCH,
            "get_block",
        ),
    ],
)
def test_sandbox_results(run: RunResult, outcome: Outcome, sig: str) -> None:
    cls = classify(run)
    assert cls.outcome == outcome, cls
    assert sig in cls.signature or sig in cls.detail


def test_more_shapes() -> None:
    tb = 'Traceback (most recent call last):\n  File "/w/repro.py", line 3, in <module>\n    f()\n'
    mem = classify(_run(stderr_tail=tb + "MemoryError: Unable to allocate 64 GiB\n"))
    assert mem.outcome == Outcome.RESOURCE_LIMIT and "memory" in mem.detail
    assert classify(_run(exit_code=137, stderr_tail="Killed\n")).outcome == Outcome.RESOURCE_LIMIT
    nvcc = classify(
        _run(stderr_tail=tb + "FileNotFoundError: [Errno 2] No such file or directory: 'nvcc'\n"),
        needs=("cuda",),
    )
    assert nvcc.outcome == Outcome.NEEDS_GPU
    caught = classify(
        _run(exit_code=0, stdout_tail=tb + "tvm.error.InternalError: Check failed: x\ndone\n")
    )
    assert caught.outcome == Outcome.PASSED
    assert "caught" in caught.detail and any("Check failed" in e for e in caught.evidence)


def test_assert_on_device_existence_is_needs_gpu_only_without_a_gpu() -> None:
    run = _run(
        stderr_tail='Traceback (most recent call last):\n  File "/w/repro.py", line 2, in <module>\n'
        "    assert tvm.cuda(0).exist\nAssertionError\n"
    )
    assert classify(run, needs=("cuda",), environment=NO_GPU).outcome == Outcome.NEEDS_GPU
    gpu_env = {"gpu": "NVIDIA H100", "cuda_enabled": "true"}
    assert classify(run, needs=("cuda",), environment=gpu_env).outcome == Outcome.WRONG_RESULT


def test_a_cuda_compile_error_on_a_cpu_worker_is_still_a_tvm_failure() -> None:
    """A script that targets cuda can hit a real TVM bug without a GPU: not needs-gpu."""
    run = _run(
        stderr_tail='Traceback (most recent call last):\n  File "/w/repro.py", line 9, in <module>\n'
        '    tvm.compile(mod, target="cuda")\n'
        '  File "/x/site-packages/tvm/driver/build_module.py", line 80, in compile\n'
        "    return f(mod)\n"
        "tvm.error.InternalError: Check failed: (is_cuda_kernel) is false: cuda codegen broke\n"
    )
    cls = classify(run, needs=("cuda",), environment=NO_GPU)
    assert cls.outcome == Outcome.INTERNAL_ERROR


@pytest.mark.parametrize(("where", "outcome"), [
    # TVM's own deprecation warning, raised because the script made warnings errors
    ("/x/site-packages/tvm/driver/build_module.py", Outcome.API_MISMATCH),
    # the script's own (or numpy's) deprecation is not a TVM API change
    ("/x/site-packages/numpy/core/numeric.py", Outcome.PYTHON_ERROR),
])
def test_a_deprecation_warning_raised_as_an_error(where: str, outcome: Outcome) -> None:
    msg = ("build is deprecated. Use `tvm.compile` instead." if "tvm" in where
           else "alltrue is deprecated. Use all instead.")
    run = _run(
        stderr_tail='Traceback (most recent call last):\n  File "/w/repro.py", line 9, in <module>\n'
        "    f = api(s)\n"
        f'  File "{where}", line 40, in api\n'
        "    warnings.warn(msg, DeprecationWarning)\n"
        f"DeprecationWarning: {msg}\n"
    )
    assert classify(run).outcome == outcome


_SCHEDULE_ERROR = (
    'Traceback (most recent call last):\n  File "/w/repro.py", line 9, in <module>\n'
    "    sch.cache_inplace(block, 0, 'global')\n"
    '  File "/x/site-packages/tvm/s_tir/schedule/schedule.py", line 80, in cache_inplace\n'
    "    return _ffi_api.ScheduleCacheInplace(self, block, idx, scope)\n"
    "tvm.s_tir.schedule.schedule.ScheduleError: ScheduleError: An error occurred in the "
    "schedule primitive 'cache-buffer'.\n\n")


@pytest.mark.parametrize(("between", "last", "outcome"), [
    # the script's except block slipped while handling TVM's error: TVM's error happened
    ("During handling of the above exception, another exception occurred:",
     '  File "/w/repro.py", line 11, in <module>\n    print(e.msg)\n'
     "AttributeError: 'ScheduleError' object has no attribute 'msg'\n", Outcome.TVM_ERROR),
    # ...not when the last error is raised inside a library the handler called
    ("During handling of the above exception, another exception occurred:",
     '  File "/w/repro.py", line 11, in <module>\n    np.save(path, x)\n'
     '  File "/x/site-packages/numpy/lib/npyio.py", line 5, in save\n    open(f)\n'
     "FileNotFoundError: no such dir\n", Outcome.PYTHON_ERROR),
])
def test_an_except_block_that_fails_while_handling_a_tvm_error(
        between: str, last: str, outcome: Outcome) -> None:
    run = _run(stderr_tail=_SCHEDULE_ERROR + between + "\n\nTraceback (most recent call last):\n"
               + last)
    cls = classify(run, script="try:\n    sch.cache_inplace(block, 0, 'global')\nexcept "
                   "Exception as e:\n    print(e.msg)\n")
    assert cls.outcome == outcome, cls
    if outcome == Outcome.TVM_ERROR:
        assert cls.signature.startswith("tvm.s_tir.schedule.schedule.ScheduleError")


@pytest.mark.parametrize(("script", "outcome"), [
    # a keyword this TVM's callable does not take: a script for another TVM
    ("from tvm import relax\nvm = relax.VirtualMachine(ex, dev, profile=True)\n",
     Outcome.API_MISMATCH),
    ("from tvm.relax import VirtualMachine\nvm = VirtualMachine(ex, dev, profile=True)\n",
     Outcome.API_MISMATCH),
    # the script's own function (or numpy's) refused it: the script's error
    ("import numpy as np\nimport tvm\nvm = np.VirtualMachine(ex, dev, profile=True)\n",
     Outcome.PYTHON_ERROR),
])
def test_an_unexpected_keyword_to_a_tvm_callable(script: str, outcome: Outcome) -> None:
    run = _run(stderr_tail='Traceback (most recent call last):\n  File "/w/repro.py", line 2, in '
               "<module>\n    vm = relax.VirtualMachine(ex, dev, profile=True)\nTypeError: "
               "VirtualMachine.__init__() got an unexpected keyword argument 'profile'\n")
    assert classify(run, script=script).outcome == outcome


def test_exception_line_is_found_before_trailing_log_lines() -> None:
    run = _run(
        stderr_tail='Traceback (most recent call last):\n  File "/w/repro.py", line 7, in <module>\n'
        "    out = bb.emit(x)\n"
        '  File "/project/src/relax/op/tensor/linear_algebra.cc", line 140, in InferTypeMatmul\n'
        "ValueError: Matmul requires the reduction length of the operands to be equal.\n"
        "[16:18:10] /project/src/relax/ir/block_builder.cc:67: Warning: BlockBuilder destroyed\n"
    )
    cls = classify(run)
    assert cls.outcome == Outcome.TVM_ERROR
    assert cls.signature.startswith("ValueError: Matmul requires")


def test_value_error_in_numpy_called_by_the_script_is_python_error() -> None:
    run = _run(
        stderr_tail='Traceback (most recent call last):\n  File "/w/repro.py", line 3, in <module>\n'
        "    np.reshape(a, (5,))\n"
        '  File "/usr/lib/python3/dist-packages/numpy/core/fromnumeric.py", line 285, in reshape\n'
        "    return _wrapfunc(a, 'reshape', newshape)\n"
        "ValueError: cannot reshape array of size 4 into shape (5,)\n"
    )
    assert classify(run).outcome == Outcome.PYTHON_ERROR


def test_chained_exceptions_use_the_last_one() -> None:
    text = (
        'Traceback (most recent call last):\n  File "/x/site-packages/tvm/a.py", line 1, in f\n'
        "    g()\nKeyError: 'x'\n\nDuring handling of the above exception, another exception occurred:\n\n"
        'Traceback (most recent call last):\n  File "/w/repro.py", line 4, in <module>\n    h()\n'
        "NameError: name 'h' is not defined\n"
    )
    err = parse_last_error(text)
    assert err is not None and err.type == "NameError"
    assert classify(_run(stderr_tail=text)).outcome == Outcome.PYTHON_ERROR


def test_tail_without_traceback_header_still_finds_the_error() -> None:
    text = "    return f(x)\n           ^^^^\ntvm.error.InternalError: Check failed: (n > 0) is false: bad\n"
    err = parse_last_error(text)
    assert err is not None and err.short_type == "InternalError"
    assert classify(_run(stderr_tail=text)).outcome == Outcome.INTERNAL_ERROR


def test_frame_kinds_and_path_normalisation() -> None:
    assert frame_kind("/venv/lib/python3.11/site-packages/tvm/relax/op.py") == "tvm"
    assert frame_kind("/project/src/relax/ir/block_builder.cc") == "tvm"
    assert frame_kind("python/tvm_ffi/cython/function.pxi") == "tvm"
    assert frame_kind("/usr/lib/python3.11/inspect.py") == "lib"
    assert frame_kind("/tmp/scratch/repro.py") == "script"
    assert (
        normalize_paths("(/home/u/.venv/lib/python3.11/site-packages/tvm/__init__.py)")
        == "(<site-packages>/tvm/__init__.py)"
    )


# ---------------------------------------------------------------------------------------------
# Wrapped import and attribute errors: a frontend or the TVMScript parser re-raises them.


def _onnx_installed() -> bool:
    p = subprocess.run([sys.executable, "-c", "import onnx"], capture_output=True, timeout=120)
    return p.returncode == 0


def test_real_frontend_without_its_package_is_missing_dependency(tmp_path: Path) -> None:
    """The ONNX frontend re-raises "No module named 'onnx'" as its own ImportError."""
    if _onnx_installed():
        pytest.skip("onnx is installed here")
    script = "from tvm.relax.frontend.onnx import from_onnx\nprint(from_onnx)\n"
    run = real_run(script, tmp_path)
    cls = classify(run, script=script, needs=("onnx",), environment=NO_GPU)
    assert cls.outcome == Outcome.MISSING_DEPENDENCY, (cls, run.stderr_tail[-2000:])
    assert "`onnx`" in cls.detail


OLD_TVMSCRIPT = '''
import tvm

src = """
@I.ir_module
class Module:
    @T.prim_func
    def main(x: T.Buffer((8,), "float32"), y: T.Buffer((8,), "float32")):
        for i in range(8):
            with T.block("copy"):
                vi = T.axis.spatial(8, i)
                y[vi] = x[vi]
"""
mod = tvm.script.from_source(src)
'''


def test_real_tvmscript_with_a_removed_builder_is_api_mismatch(tmp_path: Path) -> None:
    """The parser reports ``T.block`` (now ``T.sblock``) as a DiagnosticError."""
    run = real_run(OLD_TVMSCRIPT, tmp_path)
    assert "DiagnosticError" in run.stderr_tail
    cls = classify(run, script=OLD_TVMSCRIPT, environment=NO_GPU)
    assert cls.outcome == Outcome.API_MISMATCH, (cls, run.stderr_tail[-2000:])
    assert "has no attribute 'block'" in cls.signature
    assert "T.sblock" in cls.detail


_TB = 'Traceback (most recent call last):\n  File "/w/repro.py", line 9, in <module>\n    f(a)\n'
_FRONTEND = (
    "Traceback (most recent call last):\n"
    '  File "/v/lib/python3.11/site-packages/tvm/relax/frontend/x/impl.py", line 12, in <module>\n'
    "    import thepkg\n"
)


@pytest.mark.parametrize(
    ("stderr", "outcome", "detail"),
    [
        (  # the cause names a non-TVM package
            _FRONTEND + "ModuleNotFoundError: No module named 'paddle'\n\n"
            "During handling of the above exception, another exception occurred:\n\n"
            + _TB
            + "ImportError: the frontend could not be loaded\n",
            Outcome.MISSING_DEPENDENCY,
            "`paddle`",
        ),
        (  # the cause names a removed TVM module
            _FRONTEND + "ModuleNotFoundError: No module named 'tvm.relay'\n\n"
            "The above exception was the direct cause of the following exception:\n\n"
            + _TB
            + "ImportError: the frontend could not be loaded\n",
            Outcome.API_MISMATCH,
            "Relax",
        ),
        (  # no cause printed, the message names the package
            _TB + "ImportError: The frontend requires the tflite package. "
            "Please run: pip install tflite==2.4.0\n",
            Outcome.MISSING_DEPENDENCY,
            "`tflite`",
        ),
        (
            _TB + "ImportError: torch is required by the PyTorch frontend.\n",
            Outcome.MISSING_DEPENDENCY,
            "`torch`",
        ),
        (  # a wrapper re-raising an attribute error about a name the script uses
            _TB + '  File "/v/site-packages/tvm/x.py", line 3, in f\n    g()\n'
            "RuntimeError: module 'tvm.relax.op' has no attribute 'old_op'\n",
            Outcome.API_MISMATCH,
            "tvm.relax.op.old_op",
        ),
        (  # not a TVM name: still TVM's diagnostic
            _TB + "tvm.error.DiagnosticError: error: module 'numpy' has no attribute 'float'\n",
            Outcome.TVM_ERROR,
            "DiagnosticError",
        ),
    ],
)
def test_wrapped_import_and_attribute_errors(stderr: str, outcome: Outcome, detail: str) -> None:
    cls = classify(_run(stderr_tail=stderr), script="y = relax.op.old_op(x)\n")
    assert cls.outcome == outcome, cls
    assert detail in cls.detail


def test_old_style_tvm_backtraces() -> None:
    """TVM before 0.8 embedded its C++ backtrace in the message ("[bt] (0) ...", "  0: tvm::")."""
    ffi = (
        '  File "/v/site-packages/tvm/_ffi/_ctypes/function.py", line 207, in __call__\n'
        "    raise get_last_ffi_error()\n"
    )
    bt = classify(
        _run(
            stderr_tail=_TB + ffi + "tvm._ffi.base.TVMError: Traceback (most recent call last):\n"
            "  [bt] (1) /tvm/build/libtvm.so(tvm::codegen::Build()+0x1) [0x7f00]\n"
            "  [bt] (0) /tvm/build/libtvm.so(dmlc::LogMessageFatal::~LogMessageFatal()+0x4) [0x7f]\n"
            '  File "/tvm/src/target/codegen.cc", line 58\n'
            "TVMError: Check failed: bf != nullptr: target.build.foo is not enabled\n"
        )
    )
    assert bt.outcome == Outcome.INTERNAL_ERROR
    assert "Check failed: bf != nullptr" in bt.signature
    st = classify(
        _run(
            stderr_tail=_TB + ffi + "tvm._ffi.base.TVMError: Traceback (most recent call last):\n"
            "  1: tvm::codegen::Build(tvm::IRModule)\n"
            "  0: tvm::runtime::detail::LogFatal::Entry::Finalize()\n"
            '  File "/tvm/src/target/codegen.cc", line 58\n'
            "TVMError: unknown target kind\n"
        )
    )
    assert st.outcome == Outcome.TVM_ERROR
    assert st.signature == "TVMError: unknown target kind"


def test_cuda_errors() -> None:
    nodev = classify(
        _run(
            stderr_tail=_TB + '  File "/v/site-packages/tvm/runtime/x.py", line 1, in empty\n'
            "    g()\nRuntimeError: CUDA error: no CUDA-capable device is detected\n"
        ),
        needs=("cuda",),
        environment=NO_GPU,
    )
    assert nodev.outcome == Outcome.NEEDS_GPU
    illegal = classify(
        _run(
            stderr_tail=_TB + '  File "/v/site-packages/tvm/runtime/x.py", line 1, in sync\n'
            "    g()\nRuntimeError: CUDA error: an illegal memory access was encountered\n"
        ),
        needs=("cuda",),
        environment={"gpu": "NVIDIA H100", "cuda_enabled": "true"},
    )
    assert illegal.outcome == Outcome.TVM_ERROR


def test_missing_input_file_is_a_missing_dependency_not_a_script_error():
    run = RunResult(
        exit_code=1, signal=None, seconds=0.5,
        stderr_tail=(
            "Traceback (most recent call last):\n"
            '  File "/tmp/scratch/repro.py", line 3, in <module>\n'
            '    model = onnx.load("model.onnx")\n'
            "FileNotFoundError: [Errno 2] No such file or directory: 'model.onnx'\n"
        ),
    )
    cls = classify(run, script='import onnx\nmodel = onnx.load("model.onnx")\n')
    assert cls.outcome == Outcome.MISSING_DEPENDENCY
    assert "model.onnx" in cls.detail
    # A file the script does not name (its own bug) stays the script's error.
    other = classify(run, script="import onnx\nmodel = onnx.load(path_from_elsewhere)\n")
    assert other.outcome == Outcome.PYTHON_ERROR


@pytest.mark.parametrize(("device", "outcome"), [
    ("llvm", Outcome.API_MISMATCH),  # older TVM took a target's name for the CPU
    ("gpu0", Outcome.TVM_ERROR),  # never a device name: TVM's error stands
])
def test_a_target_name_given_as_a_device_is_another_api(device: str, outcome: Outcome):
    run = RunResult(
        exit_code=1, signal=None, seconds=0.5,
        stderr_tail=(
            "Traceback (most recent call last):\n"
            '  File "/tmp/scratch/repro.py", line 2, in <module>\n'
            f'    dev = tvm.device("{device}", 0)\n'
            '  File "/venv/lib/python3.11/site-packages/tvm_ffi/_tensor.py", line 110, in device\n'
            "    return core._CLASS_DEVICE(device_type, index)\n"
            '  File "python/tvm_ffi/cython/device.pxi", line 144, in '
            "tvm_ffi.core.Device.__init__\n"
            f"ValueError: Unknown device: {device}\n"
        ),
    )
    cls = classify(run, script=f'import tvm\ndev = tvm.device("{device}", 0)\n')
    assert cls.outcome == outcome, cls
    if outcome == Outcome.API_MISMATCH:
        assert "tvm.cpu()" in cls.detail


def test_a_module_tvm_cannot_find_is_a_missing_input_file_too():
    """``tvm.runtime.load_module`` says it in its own words (a ValueError raised in TVM)."""
    run = RunResult(
        exit_code=1, signal=None, seconds=0.5,
        stderr_tail=(
            "Traceback (most recent call last):\n"
            '  File "/tmp/scratch/repro.py", line 5, in <module>\n'
            '    lib = tvm.runtime.load_module("build/encoder_x86.so")\n'
            '  File "/venv/lib/python3.11/site-packages/tvm/runtime/module.py", line 445, '
            "in load_module\n"
            '    raise ValueError(f"cannot find file {path}")\n'
            "ValueError: cannot find file build/encoder_x86.so\n"
        ),
    )
    script = 'import tvm\nlib = tvm.runtime.load_module("build/encoder_x86.so")\n'
    cls = classify(run, script=script)
    assert cls.outcome == Outcome.MISSING_DEPENDENCY
    assert "build/encoder_x86.so" in cls.detail
    # A path the script builds itself (its own output, gone missing) is TVM's error to report.
    built = classify(run, script="import tvm\nlib = tvm.runtime.load_module(out_path)\n")
    assert built.outcome == Outcome.TVM_ERROR


# --- where in TVM it failed -----------------------------------------------------------------


def test_real_tvm_error_names_its_cpp_location(runs: dict[str, RunResult]) -> None:
    cls = classify(runs["tvm_value_error"], script=SCRIPTS["tvm_value_error"], environment=NO_GPU)
    assert cls.outcome == Outcome.TVM_ERROR
    loc = Locations.from_evidence(cls.evidence)
    assert loc.files and all(f.endswith(".cc") for f in loc.files), cls.evidence
    assert loc.functions and all(f.startswith("tvm::") for f in loc.functions), cls.evidence
    assert "matmul" in loc.functions[-1].lower()


def test_a_real_cut_report_of_the_same_failure_is_reproduced(
    runs: dict[str, RunResult],
) -> None:
    # The reporter pasted the frames of the same real failure but lost the message line.
    run = runs["tvm_value_error"]
    cls = classify(run, script=SCRIPTS["tvm_value_error"], environment=NO_GPU)
    frames = [ln for ln in run.stderr_tail.splitlines() if '.cc", line' in ln]
    assert frames, run.stderr_tail
    body = "```python\nprint(1)\n```\n\n```\nTraceback (most recent call last):\n" + "\n".join(
        frames
    )
    issue = Issue(title="[Bug] matmul of two odd tensors", body=body + "\n```\n")
    reported = parse_reported(issue, Repro(found=True, script="print(1)\n"))
    assert reported is not None and reported.outcome == Outcome.INTERNAL_ERROR
    assert compare(reported, cls).verdict == Verdict.REPRODUCED


def _tvm_run(stderr: str) -> RunResult:
    return RunResult(exit_code=1, signal=None, seconds=1.0, stderr_tail=stderr)


def test_old_style_backtrace_locations_deepest_last() -> None:
    stderr = (
        "Traceback (most recent call last):\n"
        '  File "/tmp/s/repro.py", line 7, in <module>\n'
        "    mod = relay.transform.LowerGizmos()(mod)\n"
        '  File "/opt/venv/lib/python3.11/site-packages/tvm/ir/transform.py", line 160, in __call__\n'
        "    return _ffi_transform_api.RunPass(self, mod)\n"
        "tvm._ffi.base.TVMError: Traceback (most recent call last):\n"
        "  2: tvm::transform::Pass::operator()(tvm::IRModule) const\n"
        "        at /src/tvm/src/ir/transform.cc:258\n"
        "  1: tvm::relay::GizmoLowerer::Lower(tvm::relay::Call const&)\n"
        "        at /src/tvm/src/relay/transforms/gizmo_lowering.cc:77\n"
        "  0: tvm::runtime::detail::LogFatal::Entry::Finalize()\n"
        "        at /src/tvm/include/tvm/runtime/logging.h:590\n"
        "TVMError: the gizmo has no sprocket\n"
    )
    cls = classify(_tvm_run(stderr))
    assert cls.outcome == Outcome.TVM_ERROR
    loc = Locations.from_evidence(cls.evidence)
    assert loc.files == ("gizmo_lowering.cc",)
    assert loc.functions == ("tvm::relay::GizmoLowerer::Lower",)
    assert loc.passes == ("LowerGizmos",), "the script's line runs one pass"


def test_a_bt_backtrace_and_a_log_line() -> None:
    frames = cpp_frames(
        [
            "Stack trace:",
            "  [bt] (0) /x/libtvm.so(tvm::runtime::Backtrace[abi:cxx11]()+0x1f) [0x7f]",
            "  [bt] (1) /x/libtvm.so(tvm::tir::SprocketChecker::Visit(tvm::tir::Stmt)+0x2a) [0x7f]",
            "  [bt] (2) /x/libtvm.so(tvm::tir::LowerSprockets(tvm::tir::PrimFunc)+0x9) [0x7f]",
            "[10:00:00] /src/tvm/src/tir/transforms/lower_sprockets.cc:41: Check failed: n > 0",
        ]
    )
    loc = locations_of(frames)
    # [bt] (0) is the innermost frame: it comes last; the runtime's Backtrace is dropped.
    assert loc.functions == ("tvm::tir::LowerSprockets", "tvm::tir::SprocketChecker::Visit")
    assert loc.files == ("lower_sprockets.cc",)


def test_pass_names() -> None:
    text = (
        "with tvm.transform.PassContext(opt_level=3): relax.transform.FoldWidgets()(mod); "
        "then LegalizeOps and tir.UnrollLoop; IRModule, TensorType and PrimFunc are not passes"
    )
    assert pass_names(text) == ("FoldWidgets", "LegalizeOps", "UnrollLoop")


def test_non_tvm_failures_carry_no_locations() -> None:
    stderr = (
        "Traceback (most recent call last):\n"
        '  File "/tmp/s/repro.py", line 3, in <module>\n'
        "    relax.transform.FoldWidgets(undefined)\n"
        "NameError: name 'undefined' is not defined\n"
    )
    cls = classify(_tvm_run(stderr))
    assert cls.outcome == Outcome.PYTHON_ERROR
    assert not Locations.from_evidence(cls.evidence)


@pytest.mark.parametrize(
    "reported, needs, env, outcome",
    [
        # A runtime failure seen on a GPU, a pass on a machine without one: cannot tell.
        (Outcome.CRASH, ("cuda",), {"gpu": "", "cuda_enabled": "no"}, Outcome.NEEDS_GPU),
        (Outcome.WRONG_RESULT, ("cuda",), {}, Outcome.NEEDS_GPU),
        # A compile-time error needs no device: the pass speaks for it.
        (Outcome.INTERNAL_ERROR, ("cuda",), {}, Outcome.PASSED),
        # No device wanted, or the worker has it: passed is passed.
        (Outcome.CRASH, (), {}, Outcome.PASSED),
        (Outcome.CRASH, ("cuda",), {"gpu": "NVIDIA H200", "cuda_enabled": "12.8"}, Outcome.PASSED),
        (None, ("cuda",), {}, Outcome.PASSED),
    ],
)
def test_a_pass_without_the_device_cannot_speak_for_a_runtime_failure(reported, needs, env, outcome):
    from bot.classify import account_for_absent_device
    from bot.models import Reported

    passed = classify(RunResult(exit_code=0, signal=None, seconds=1.0), needs=needs, environment=env)
    assert passed.outcome == Outcome.PASSED
    rep = Reported(reported, "Segmentation fault") if reported else None
    assert account_for_absent_device(passed, rep, needs, env).outcome == outcome


# ------------------------------------------------------------------------------------------
# No device runtime on this worker is no TVM error (whatever the script's detected needs).

_NO_RUNTIME = [
    "RuntimeError: CUDA runtime is not linked into this build",
    "tvm.error.InternalError: Check failed: (allow_missing) is false: Device API cuda is not "
    "enabled.",
    "RuntimeError: No CUDA GPUs are available",
    "RuntimeError: no CUDA-capable device is detected",
    "ValueError: Target rocm is not enabled",
    "tvm._ffi.base.TVMError: Vulkan runtime is not enabled in this build",
    "RuntimeError: OpenCL runtime not available: no OpenCL platforms found",
    "TVMError: Metal runtime is not linked",
    # a module exported with CUDA code, loaded where no CUDA runtime registers its loader
    "RuntimeError: Library binary was created using {cuda} but a loader of that name is not "
    "registered. Make sure to have runtime that registers ffi.Module.load_from_bytes.cuda",
]


@pytest.mark.parametrize("message", _NO_RUNTIME)
@pytest.mark.parametrize("needs", [(), ("cuda",)])
def test_an_absent_device_runtime_is_needs_gpu(message: str, needs: tuple[str, ...]) -> None:
    stderr = _TB + '  File "/opt/venv/lib/python3.11/site-packages/tvm/runtime/x.py", line 3\n'
    cls = classify(_tvm_run(stderr + message + "\n"), script="import tvm\n", needs=needs,
                   environment=NO_GPU)
    assert cls.outcome == Outcome.NEEDS_GPU, cls
    # ... also when TVM's check aborted the process, and with no traceback at all.
    abort = RunResult(exit_code=None, signal=6, seconds=1.0, stderr_tail=(
        "terminate called after throwing an instance of 'tvm::runtime::InternalError'\n"
        f"  what():  {message}\n"))
    assert classify(abort, needs=needs, environment=NO_GPU).outcome == Outcome.NEEDS_GPU
    bare = RunResult(exit_code=1, signal=None, seconds=1.0, stderr_tail=f"[12:00:00] {message}\n")
    assert classify(bare, needs=needs, environment=NO_GPU).outcome == Outcome.NEEDS_GPU


def test_a_warning_about_cuda_does_not_hide_a_real_crash() -> None:
    run = RunResult(exit_code=None, signal=11, seconds=1.0, stderr_tail=(
        "UserWarning: CUDA initialization: Found no NVIDIA driver on your system.\n"
        "Fatal Python error: Segmentation fault\n"))
    assert classify(run).outcome == Outcome.CRASH


# ------------------------------------------------------------------------------------------
# A crash with no TVM frame: still a crash, and the comment shows where it faults.

_CTYPES_CRASH = """Fatal Python error: Segmentation fault

Current thread 0x00007f3a1c8a9740 (most recent call first):
  File "/usr/lib/python3.11/ctypes/__init__.py", line 519 in string_at
  File "/tmp/run/repro.py", line 7 in read_buffer
  File "/tmp/run/repro.py", line 12 in <module>
  File "<frozen runpy>", line 88 in _run_code

Current thread's C stack trace (most recent call first):
  Binary file "/usr/lib/x86_64-linux-gnu/libc.so.6", at __memmove_avx_unaligned_erms+0x7a
  Binary file "/usr/lib/python3.11/lib-dynload/_ctypes.cpython-311-x86_64-linux-gnu.so", at +0x9d52
  Binary file "/usr/lib/x86_64-linux-gnu/libffi.so.8", at ffi_call_unix64+0x55
  Binary file "/usr/bin/python3.11", at _PyObject_MakeTpCall+0x87
  Binary file "/usr/bin/python3.11", at _PyEval_EvalFrameDefault+0x6a3
  Binary file "/usr/bin/python3.11", at PyEval_EvalCode+0x97
  Binary file "/usr/bin/python3.11", at _start+0x25
"""


def test_a_crash_outside_tvm_names_the_frames_that_matter() -> None:
    run = RunResult(exit_code=None, signal=11, seconds=1.0, stderr_tail=_CTYPES_CRASH)
    cls = classify(run, script="import ctypes\n")
    assert cls.outcome == Outcome.CRASH
    assert "outside TVM" in cls.detail
    assert "repro.py:7 in read_buffer" in cls.detail
    assert cls.frames and any("ctypes" in f for f in cls.frames)
    assert not any("_PyEval" in f or "PyEval_EvalCode" in f or "_start" in f for f in cls.frames)
    assert len(cls.frames) <= 5


def test_a_crash_inside_tvm_keeps_its_plain_detail() -> None:
    stderr = (
        "!!!!!!! Segfault encountered !!!!!!!\n"
        '  File "./../src/relax/transform/fuse_ops.cc", line 0, in tvm::relax::FuseMutator::Visit\n'
        "Fatal Python error: Segmentation fault\n"
    )
    cls = classify(RunResult(exit_code=None, signal=11, seconds=1.0, stderr_tail=stderr))
    assert cls.outcome == Outcome.CRASH and "outside TVM" not in cls.detail and not cls.frames


@pytest.mark.parametrize(
    ("title", "reported", "outcome"),
    [
        # Imports lifted from a traceback, for a report about a compile error: no repro.
        ("[Bug] FuseOps fails on a conv2d + relu", Reported(Outcome.TVM_ERROR, "TVMError: x"),
         Outcome.NO_REPRO),
        ("[Relax] wrong output of softmax", None, Outcome.NO_REPRO),
        # A report about importing: "it imports fine here" is the answer.
        ("[Bug] Failed to import tvm.relax after building from source",
         Reported(Outcome.API_MISMATCH, "AttributeError: x"), Outcome.PASSED),
        ("[Bug] segfault on startup", Reported(Outcome.MISSING_DEPENDENCY,
         "ModuleNotFoundError: No module named 'tvm_ffi'"), Outcome.PASSED),
        # Loading TVM's library is part of importing it.
        ("[Bug] undefined symbol _ZN3tvm3ffi5ReprX in libtvm_compiler.so",
         Reported(Outcome.TVM_ERROR, "OSError: <env>/site-packages/tv"), Outcome.PASSED),
        ("[Bug] nightly wheel on Windows", Reported(
            Outcome.TVM_ERROR, "FileNotFoundError: Could not find module 'C:\\env\\tvm\\tvm.dll'"),
         Outcome.PASSED),
        # TVM's loader found no library in the reporter's own build: it loads here
        ("[Build] Cannot find libraries: ['libtvm.so'] after a successful cmake build",
         Reported(Outcome.TVM_ERROR, "RuntimeError: Cannot find libraries: ['libtvm.so']"),
         Outcome.PASSED),
        # ... but a .so the script builds itself says nothing about importing.
        ("[Bug] export_library output is empty", Reported(Outcome.WRONG_RESULT, "empty file"),
         Outcome.NO_REPRO),
    ],
)
def test_a_passing_import_only_script(title: str, reported: Reported | None, outcome: Outcome):
    from bot.classify import account_for_import_only

    script = "import numpy as np\nimport tvm\nfrom tvm import relax\nprint(tvm.__version__)\n"
    run = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail="0.27.0\n")
    cls = account_for_import_only(classify(run, script=script), script, title, reported)
    assert cls.outcome == outcome
    if outcome == Outcome.NO_REPRO:
        assert "only imports `numpy`, `tvm`" in cls.detail


def test_a_forgotten_import_is_the_scripts_own_error_not_a_fragment() -> None:
    script = 'a = tir.Var("a", "int32")\nana = tvm.arith.Analyzer()\nprint(T.max(a, a))\n'
    stderr = (
        'Traceback (most recent call last):\n  File "/w/repro.py", line 1, in <module>\n'
        "NameError: name 'tir' is not defined. Did you mean: 'dir'?\n"
    )
    cls = classify(RunResult(exit_code=1, signal=None, seconds=1.0, stderr_tail=stderr),
                   script=script)
    assert cls.outcome == Outcome.PYTHON_ERROR


def test_a_forgotten_import_does_not_hide_names_the_issue_never_defines() -> None:
    # The run stops on `tvm` first, but `onnx_model` and `shape_dict` are never built either:
    # the script is part of a longer program (no-repro naming them), not a python-error.
    script = ("x = 1\nif x:\n    mod, params = tvm.relax.frontend.onnx.from_onnx("
              "onnx_model, shape_dict)\n")
    stderr = (
        'Traceback (most recent call last):\n  File "/w/repro.py", line 3, in <module>\n'
        "NameError: name 'tvm' is not defined\n"
    )
    cls = classify(RunResult(exit_code=1, signal=None, seconds=1.0, stderr_tail=stderr),
                   script=script)
    assert cls.outcome == Outcome.NO_REPRO
    assert "`onnx_model`, `shape_dict` that the issue never defines" in cls.detail


@pytest.mark.parametrize(
    ("stderr", "outcome"),
    [
        # TVM refuses a form it dropped: the script targets another TVM API.
        ('Traceback (most recent call last):\n  File "/w/repro.py", line 9, in <module>\n'
         '    ex = tvm.compile(mod, target="llvm -mcpu=skylake")\n'
         '  File "/venv/lib/python3.11/site-packages/tvm/target/target.py", line 120, in '
         "__init__\n    raise ValueError(msg)\n"
         'ValueError: Cannot parse target string "llvm -mcpu=skylake". CLI target string form '
         '(e.g. "llvm -mcpu=xxx") is no longer supported. Please use a dict.\n',
         Outcome.API_MISMATCH),
        # The same words raised by the script's own code are the script's.
        ('Traceback (most recent call last):\n  File "/w/repro.py", line 3, in <module>\n'
         '    raise ValueError("mode is no longer supported")\n'
         "ValueError: mode is no longer supported\n", Outcome.PYTHON_ERROR),
        # A TVM error without such words stays a TVM error.
        ('Traceback (most recent call last):\n  File "/w/repro.py", line 9, in <module>\n'
         '  File "/venv/lib/python3.11/site-packages/tvm/target/target.py", line 120, in '
         "__init__\nValueError: Cannot parse target string \"llvm -foo\"\n", Outcome.TVM_ERROR),
        # A schedule's loop that a split consumed "no longer exists": no API is gone.
        ('Traceback (most recent call last):\n  File "/w/repro.py", line 13, in tile\n'
         '  File "/venv/lib/python3.11/site-packages/tvm/s_tir/schedule/schedule.py", line 828, '
         "in split\nValueError: The loop no longer exists in the IRModule\n", Outcome.TVM_ERROR),
    ],
)
def test_a_form_tvm_no_longer_accepts_is_an_api_mismatch(stderr: str, outcome: Outcome) -> None:
    run = RunResult(exit_code=1, signal=None, seconds=1.0, stderr_tail=stderr)
    assert classify(run, script="import tvm\n").outcome == outcome


_SHOWN = "tvm  : 2\nnumpy: 2.5\n"
_WRONG = Reported(Outcome.WRONG_RESULT, "should be 2.5 but returns 2")


@pytest.mark.parametrize(
    ("stdout", "shown", "reported", "outcome"),
    [
        ("tvm  : 2\nnumpy: 2.5\n", _SHOWN, _WRONG, Outcome.WRONG_RESULT),
        # extra lines around, spacing differs: still the same printed lines, in order
        ("building...\ntvm : 2\nnumpy:   2.5\ndone\n", _SHOWN, _WRONG, Outcome.WRONG_RESULT),
        # the numbers changed: what the report calls wrong is not printed any more
        ("tvm  : 2.5\nnumpy: 2.5\n", _SHOWN, _WRONG, Outcome.PASSED),
        # the lines out of order are not the same output
        ("numpy: 2.5\ntvm  : 2\n", _SHOWN, _WRONG, Outcome.PASSED),
        # the report does not call it wrong
        ("tvm  : 2\nnumpy: 2.5\n", _SHOWN, Reported(Outcome.CRASH, "segfault"), Outcome.PASSED),
        ("tvm  : 2\nnumpy: 2.5\n", _SHOWN, None, Outcome.PASSED),
        # nothing shown, or nothing numeric shown
        ("tvm  : 2\n", "", _WRONG, Outcome.PASSED),
        ("ok\n", "ok\n", _WRONG, Outcome.PASSED),
        # one value the text says it printed ("It prints 32."): the run's own line
        ("32\n", "32", _WRONG, Outcome.WRONG_RESULT),
        ("20000\n", "32", _WRONG, Outcome.PASSED),
        # the same numbers printed by another numpy (1.x: 16777216.0, 2.x: 1.6777216e+07)
        ("tvm sum: 1.6777216e+07\nnumpy sum: 2e+07\n", "tvm sum: 16777216.0\nnumpy sum: 20000000.0",
         _WRONG, Outcome.WRONG_RESULT),
        ("tvm sum: 2e+07\nnumpy sum: 2e+07\n", "tvm sum: 16777216.0\nnumpy sum: 20000000.0",
         _WRONG, Outcome.PASSED),
        # uninitialized memory: other junk each run, but float32 subnormals in both
        ("max: [3.6e+09 3.084678e-41 8.55e-29]\n", "max: [4.5867e-41 0.0000e+00 1.2612e-44]\n",
         _WRONG, Outcome.WRONG_RESULT),
        # ...not when the run prints none (the identity now: fixed) or the report shows none
        ("max: [-inf -inf -inf]\n", "max: [4.5867e-41 0.0000e+00 1.2612e-44]\n", _WRONG,
         Outcome.PASSED),
        ("max: [3.084678e-41]\n", "max: [7.5 0.5]\n", _WRONG, Outcome.PASSED),
        # 1e-4 and 2e-30 are ordinary small numbers, not subnormals
        ("max: [1e-4 2e-30]\n", "max: [1.4e-45 2e-30]\n", _WRONG, Outcome.PASSED),
        # a line the reporter cut short ("...") carries no value of its own: the rest is compared
        ('metal\n{"kind":"llvm","keys":["arm_cpu"],"a":1,"mcpu":"apple-m2"}\n1024\n256\n',
         'metal\n{"kind":"llvm",...,"mcpu":"apple-m2"}\n1024\n256', _WRONG, Outcome.WRONG_RESULT),
        # the same numbers at another line width: the same array
        ("[[-3.4e+38  0.  2.  5.]\n [ 1.  7.  8.  9.]]\n",
         "[[-3.4e+38  0.  2.\n   5.  1.  7.\n   8.  9.]]", _WRONG, Outcome.WRONG_RESULT),
        # printed IR: its shapes' numbers in order are not the same text (the line the report
        # shows, `unused = ...`, is gone)
        ('with R.dataflow():\n    a: R.Tensor((2, 3), dtype="float32") = R.add(x, x)\n'
         '    c: R.Tensor((2, 3), dtype="float32") = R.multiply(a, a)\n    R.output(c)\n',
         'with R.dataflow():\n    a: R.Tensor((2, 3), dtype="float32") = R.add(x, x)\n'
         '    unused: R.Tensor((2, 3), dtype="float32") = R.subtract(x, x)\n'
         '    c: R.Tensor((2, 3), dtype="float32") = R.multiply(a, a)\n    R.output(c)',
         _WRONG, Outcome.PASSED),
        # a warning TVM logged (to stderr) among the lines shown is no printed output
        ("[1. 0.]\n", "Warning: Fast mode segfaults when there are out-of-bounds indices.\n[1. 0.]",
         _WRONG, Outcome.WRONG_RESULT),
        # differences the report shows, printed again, but all within float32 rounding
        ("output[0] shape=(2, 32) max_abs_diff=8.195639e-08 equal=False\nMISMATCH FOUND\n",
         "output[0] shape=(2, 32) max_abs_diff=8.195639e-08 equal=False\nMISMATCH FOUND",
         _WRONG, Outcome.PASSED),
        ("output[0] shape=(2, 32) max_abs_diff=0.0117 equal=False\nMISMATCH FOUND\n",
         "output[0] shape=(2, 32) max_abs_diff=0.0117 equal=False\nMISMATCH FOUND",
         _WRONG, Outcome.WRONG_RESULT),
        ('metal\n{"kind":"llvm","keys":["arm_cpu"],"a":1,"mcpu":"apple-m2"}\n1024\n1024\n',
         'metal\n{"kind":"llvm",...,"mcpu":"apple-m2"}\n1024\n256', _WRONG, Outcome.PASSED),
    ],
)
def test_a_passing_run_that_prints_what_the_report_calls_wrong(
    stdout: str, shown: str, reported: Reported | None, outcome: Outcome
) -> None:
    from bot.classify import account_for_shown_output

    run = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail=stdout)
    assert account_for_shown_output(classify(run), run, shown, reported).outcome == outcome


@pytest.mark.parametrize(("check", "outcome"), [
    # the script's own check of the values passed: they equal its reference (numpy rounds half
    # to even too), whatever the report expected
    ("np.testing.assert_array_equal(out, np.round(x))\n", Outcome.PASSED),
    ("assert np.allclose(out, ref)\n", Outcome.PASSED),
    ("if __name__ == '__main__':\n    np.testing.assert_allclose(out, ref)\n", Outcome.PASSED),
    ("for name, ref in [('a', out)]:\n    np.testing.assert_allclose(out, ref)\n", Outcome.PASSED),
    # not a check of the values, or not one that must have run
    ("np.testing.assert_equal(out.shape, (6,))\n", Outcome.WRONG_RESULT),
    ("try:\n    np.testing.assert_allclose(out, ref)\nexcept AssertionError:\n    pass\n",
     Outcome.WRONG_RESULT),
    ("def check():\n    np.testing.assert_allclose(out, ref)\n", Outcome.WRONG_RESULT),
    ("", Outcome.WRONG_RESULT),
])
def test_printed_output_the_report_calls_wrong_beside_a_check_that_passed(
        check: str, outcome: Outcome) -> None:
    from bot.classify import account_for_shown_output

    script = "import numpy as np\nout = np.round(x)\nprint(out)\n" + check
    run = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail="[ 0.  2.  2. -0. -2.  3.]\n")
    got = account_for_shown_output(classify(run), run, "[ 0.  2.  2. -0. -2.  3.]", _WRONG, script)
    assert got.outcome == outcome, got
    if outcome == Outcome.PASSED:
        assert "its own check of the values passed" in got.detail


_CATCHES = "try:\n    f(a, b)\nexcept Exception as err:\n    print(err)\n"
_MISMATCH = Reported(Outcome.TVM_ERROR, "Mismatched A.dtype on argument #0")


@pytest.mark.parametrize(
    ("stdout", "script", "reported", "outcome"),
    [
        # the script caught the error and printed it: TVM failed as reported, exit 0 or not
        ("call failed:\nMismatched A.dtype on argument #0 when calling:\n  expected float32\n",
         _CATCHES, _MISMATCH, Outcome.TVM_ERROR),
        # the reported class in front is not what print(err) shows
        ("Check failed: (n > 0) is false: empty tile\n", _CATCHES,
         Reported(Outcome.INTERNAL_ERROR, "InternalError: Check failed: (n > 0) is false: empty tile"),
         Outcome.INTERNAL_ERROR),
        # another message printed: a pass
        ("call failed:\nsomething else entirely went wrong\n", _CATCHES, _MISMATCH, Outcome.PASSED),
        # no try/except: the script printed the text itself, not a caught error
        ("Mismatched A.dtype on argument #0\n", "print('Mismatched A.dtype on argument #0')\n",
         _MISMATCH, Outcome.PASSED),
        # a wrong-result report is another rule's (the printed values)
        ("Mismatched A.dtype on argument #0\n", _CATCHES,
         Reported(Outcome.WRONG_RESULT, "Mismatched A.dtype on argument #0"), Outcome.PASSED),
        # too short to tell
        ("bad dtype\n", _CATCHES, Reported(Outcome.TVM_ERROR, "bad dtype"), Outcome.PASSED),
        # the script's own words call what it caught the right error: its check passed
        ("ok, got ValueError: boom\n",
         "try:\n    f()\nexcept ValueError as e:\n    print('ok, got ValueError:', e)\n",
         Reported(Outcome.TVM_ERROR, "TVMError: ValueError: boom"), Outcome.PASSED),
    ],
)
def test_a_passing_run_that_printed_the_reported_error_it_caught(
    stdout: str, script: str, reported: Reported, outcome: Outcome
) -> None:
    from bot.classify import account_for_caught_error

    run = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail=stdout)
    got = account_for_caught_error(classify(run), run, script, reported)
    assert got.outcome == outcome
    if outcome != Outcome.PASSED:
        assert compare(reported, got).verdict.value == "reproduced"


def test_imports_the_reporter_ran_as_a_command_are_their_repro() -> None:
    from bot.classify import account_for_import_only

    # `python -c "import tvm; print(tvm.__file__)"` printed errors for them; here it passes.
    script = "import tvm; print(tvm.__file__)\n"
    run = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail="/x/tvm/__init__.py\n")
    said = Reported(Outcome.TVM_ERROR, "Error: Using LLVM 19 with -mcpu=apple-latest is not valid")
    title = "[Bug] Default installation has LLVM errors"
    assert account_for_import_only(classify(run, script=script), script, title, said,
                                   ran_as_command=True).outcome == Outcome.PASSED
    assert account_for_import_only(classify(run, script=script), script, title,
                                   said).outcome == Outcome.NO_REPRO


# ----------------------------------------------------------------------------- quoted values


_VALUES = Reported(Outcome.WRONG_RESULT, "wrong", values=("[0. nan 2.]",))


@pytest.mark.parametrize(
    ("stdout", "reported", "outcome"),
    [
        # the run prints the value the report quotes as TVM's (a label in front, other spacing)
        ("TVM  : [ 0. nan  2.]\nnumpy: [nan nan  2.]\n", _VALUES, Outcome.WRONG_RESULT),
        # ... as a list, the numbers to the precision the reporter wrote them
        ("[0.0, nan, 2.0000001]\n", _VALUES, Outcome.WRONG_RESULT),
        ("x: 0.33333334\n", Reported(Outcome.WRONG_RESULT, "w", values=("0.333",)),
         Outcome.WRONG_RESULT),
        # TVM prints the right value now: fixed
        ("TVM  : [nan nan  2.]\nnumpy: [nan nan  2.]\n", _VALUES, Outcome.PASSED),
        ("x: 0.33433334\n", Reported(Outcome.WRONG_RESULT, "w", values=("0.333",)),
         Outcome.PASSED),
        # more numbers on the line, another order, booleans against numbers: not the same value
        ("step 3: [0. nan 2.]\n", _VALUES, Outcome.PASSED),
        ("[2. nan 0.]\n", _VALUES, Outcome.PASSED),
        ("[True, False]\n", Reported(Outcome.WRONG_RESULT, "w", values=("[1, 0]",)),
         Outcome.PASSED),
        # an array numpy prints over several lines
        ("tvm:\n[[1. 1. 1.]\n [1. 1. 1.]]\n",
         Reported(Outcome.WRONG_RESULT, "w", values=("[[1,1,1],[1,1,1]]",)), Outcome.WRONG_RESULT),
        ("tvm:\n[[2. 2. 2.]\n [2. 2. 2.]]\n",
         Reported(Outcome.WRONG_RESULT, "w", values=("[[1,1,1],[1,1,1]]",)), Outcome.PASSED),
        # an infinity is no tiny number's neighbour
        ("max diff 4.7683716e-07\n", Reported(Outcome.WRONG_RESULT, "w", values=("-inf",)),
         Outcome.PASSED),
        ("out: -inf\n", Reported(Outcome.WRONG_RESULT, "w", values=("-inf",)),
         Outcome.WRONG_RESULT),
        # the report does not call it wrong
        ("TVM  : [ 0. nan  2.]\n", Reported(Outcome.CRASH, "segfault", values=("[0. nan 2.]",)),
         Outcome.PASSED),
    ],
)
def test_a_passing_run_that_prints_the_value_the_report_quotes(
    stdout: str, reported: Reported, outcome: Outcome
) -> None:
    from bot.classify import account_for_shown_output

    run = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail=stdout)
    got = account_for_shown_output(classify(run), run, "", reported)
    assert got.outcome == outcome
    if outcome == Outcome.WRONG_RESULT:
        assert "printed" in got.signature


def test_numpy_2_scalar_reprs_print_the_same_as_numpy_1() -> None:
    from bot.classify import account_for_shown_output

    run = RunResult(exit_code=0, signal=None, seconds=1.0,
                    stdout_tail="array(-112, dtype=int8)\nnp.int64(400)\n")
    wrong = Reported(Outcome.WRONG_RESULT, "overflows")
    shown = "array(-112, dtype=int8)\n400"
    assert account_for_shown_output(classify(run), run, shown, wrong).outcome == \
        Outcome.WRONG_RESULT
    fixed = RunResult(exit_code=0, signal=None, seconds=1.0,
                      stdout_tail="array(400, dtype=int32)\nnp.int64(400)\n")
    assert account_for_shown_output(classify(fixed), fixed, shown, wrong).outcome == \
        Outcome.PASSED


def _tb(last: str) -> str:
    return ("Traceback (most recent call last):\n"
            '  File "/tmp/repro.py", line 9, in <module>\n'
            "    f(x)\n"
            '  File "/site-packages/tvm/ir/transform.py", line 80, in __init__\n'
            "    self.__init_handle_by_constructor__(f, cfg)\n" + last + "\n")


@pytest.mark.parametrize(
    ("stderr", "outcome", "detail"),
    [
        # a pass option under a namespace this TVM no longer has: written for another TVM
        (_tb("AttributeError: Invalid config option 'tir.ptx_ldg32' candidates are: "
             "tirx.UnrollLoop ,s_tir.LoopPartition ,relax.FuseOps.max_depth"),
         Outcome.API_MISMATCH, "`tir.*`"),
        (_tb("AttributeError: Invalid config option 'tir.UnrollLoop' candidates are: "
             "tirx.UnrollLoop ,s_tir.LoopPartition"),
         Outcome.API_MISMATCH, "`tirx.UnrollLoop` now"),
        # a misspelt option in a namespace that exists: TVM's error about the script's input
        (_tb("AttributeError: Invalid config option 'relax.FuseOps.max_dept' candidates are: "
             "tirx.UnrollLoop ,relax.FuseOps.max_depth"),
         Outcome.TVM_ERROR, ""),
        # TVM asks for an optional package itself
        (_tb("RuntimeError: psutil is required by the meta schedule search. Install it with: "
             "pip install psutil"),
         Outcome.MISSING_DEPENDENCY, "psutil"),
        # a GPU library this TVM was built without
        (_tb("ValueError: Cannot find global function tvm.contrib.cudnn.conv.forward_find_algo"),
         Outcome.NEEDS_GPU, ""),
        # ... not any global function
        (_tb("ValueError: Cannot find global function relax.op.my_custom_op"),
         Outcome.TVM_ERROR, ""),
    ],
)
def test_errors_that_say_the_run_cannot_judge(stderr: str, outcome: Outcome, detail: str) -> None:
    got = classify(_run(stderr_tail=stderr), script="import tvm\nf(x)\n")
    assert got.outcome == outcome, got
    assert detail in got.detail


def test_a_crash_at_shutdown_after_an_uncaught_error_is_that_error(tmp_path: Path) -> None:
    # The script dies of a stale name; then the interpreter crashes while shutting down (a deep
    # expression freed at exit overflows the stack: no fatal-error report is printed).
    run = real_run("""\
        import atexit, faulthandler, os, signal
        import tvm
        def _crash_at_exit():
            faulthandler.disable()
            os.kill(os.getpid(), signal.SIGSEGV)
        atexit.register(_crash_at_exit)
        print(tvm.arith.Analyzer())
        """, tmp_path)
    assert run.signal == signal.SIGSEGV
    cls = classify(run, script="import tvm\nprint(tvm.arith.Analyzer())\n")
    assert cls.outcome == Outcome.API_MISMATCH, cls
    assert "crashed while shutting down (SIGSEGV)" in cls.detail
    # a crash with faulthandler's report after the error is the crash, as before
    fatal = RunResult(exit_code=None, signal=11, seconds=1.0, stderr_tail=(
        "Traceback (most recent call last):\n  File \"repro.py\", line 3, in <module>\n"
        "    f()\nValueError: bad\nFatal Python error: Segmentation fault\n\n"
        "Current thread 0x1 (most recent call first):\n  File \"repro.py\", line 9 in g\n"))
    assert classify(fatal).outcome == Outcome.CRASH
    # ... and so is a crash with no traceback at all
    bare = RunResult(exit_code=139, signal=None, seconds=1.0, stderr_tail="")
    assert classify(bare).outcome == Outcome.CRASH


@pytest.mark.parametrize(("last", "outcome"), [
    # TVM refuses the input on purpose, as a ValueError: a user-facing error
    ("ValueError: Check failed: (small.has_value()) is false: Literal value 3000000000 exceeds "
     "range of int32", Outcome.TVM_ERROR),
    # the same check raised as InternalError, or inside a diagnostic: TVM's own check failed
    ("tvm.error.InternalError: Check failed: pb->value != 0 (0 vs. 0) : Divide by zero",
     Outcome.INTERNAL_ERROR),
    ("tvm.error.DiagnosticError: error: Check failed: pb->value != 0 (0 vs. 0) : Divide by zero",
     Outcome.INTERNAL_ERROR),
    # the VM checking the caller's arguments against the signature: the input refused
    ("RuntimeError: Check failed: input_shape[i] == reg (17 vs. 16) : ErrorContext(fn=main, "
     'loc=param[0], param=x, annotation=R.Tensor((batch, 16), dtype="float32"))',
     Outcome.TVM_ERROR),
])
def test_a_check_is_internal_unless_tvm_raises_it_as_a_value_error(last: str,
                                                                  outcome: Outcome) -> None:
    stderr = ("Traceback (most recent call last):\n"
              '  File "/tmp/repro.py", line 2, in <module>\n'
              '    c = tvm.tirx.const(3000000000, "int32")\n'
              '  File "/site-packages/tvm/runtime/object_generic.py", line 68, in const\n'
              "    return _ffi_node_api._const(value, dtype, span)\n"
              '  File "/project/src/ir/expr.cc", line 824, in tvm::IntImm::IntImm\n' + last + "\n")
    got = classify(RunResult(exit_code=1, signal=None, seconds=1.0, stderr_tail=stderr),
                   script='import tvm\nc = tvm.tirx.const(3000000000, "int32")\n')
    assert got.outcome == outcome, got


def test_a_slip_after_the_program_ran_is_the_scripts_own_error(tmp_path: Path) -> None:
    # The script builds and runs its TVM program; its reference check then uses `refs` for
    # `ref`: a complete script with a bug of its own, not a fragment.
    script = """\
        import numpy as np
        import tvm
        from tvm import relax
        from tvm.script import ir as I, relax as R

        @I.ir_module
        class Mod:
            @R.function
            def main(x: R.Tensor((2,), "float32")):
                return R.add(x, x)

        vm = relax.VirtualMachine(tvm.compile(Mod, target="llvm"), tvm.cpu())
        x = np.ones(2, "float32")
        out = vm["main"](tvm.runtime.tensor(x)).numpy()
        ref = x + x
        print("max diff", np.abs(out - refs).max())
        """
    run = real_run(script, tmp_path)
    cls = classify(run, script=textwrap.dedent(script))
    assert cls.outcome == Outcome.PYTHON_ERROR and "refs" in cls.signature, cls
    # the build inside the script's own function, called before the slip (`res_3` for `res3`)
    in_function = textwrap.dedent(script).replace(
        'vm = relax.VirtualMachine(tvm.compile(Mod, target="llvm"), tvm.cpu())\n',
        'def run():\n    vm = relax.VirtualMachine(tvm.compile(Mod, target="llvm"), tvm.cpu())\n'
        '    return vm["main"](tvm.runtime.tensor(x)).numpy()\n').replace(
        'out = vm["main"](tvm.runtime.tensor(x)).numpy()\n', 'res3 = run()\n').replace(
        "np.abs(out - refs)", "np.abs(res_3 - ref)")
    assert "def run" in in_function and "res_3" in in_function
    run = real_run(in_function, tmp_path / "g")
    cls = classify(run, script=in_function)
    assert cls.outcome == Outcome.PYTHON_ERROR and "res_3" in cls.signature, cls
    # `mod` read beside a module the script wrote and never used: the module it meant
    unused = textwrap.dedent(script).split("vm = relax")[0] + \
        "mod = relax.transform.LegalizeOps()(mod)\nprint(mod)\n"
    run = real_run(unused, tmp_path / "u")
    cls = classify(run, script=unused)
    assert cls.outcome == Outcome.PYTHON_ERROR and "mod" in cls.signature, cls
    # the same name used before anything was built is a fragment, as before
    fragment = "import tvm\nfrom tvm import relax\nex = tvm.compile(mod, target='llvm')\n"
    run = real_run(fragment, tmp_path / "f")
    assert classify(run, script=fragment).outcome == Outcome.NO_REPRO


_TRY = "def run():\n    pass\ntry:\n    run()\nexcept Exception as e:\n    print('FAIL:', e)\n"
_PRINTED_TB = ('Traceback (most recent call last):\n  File "/w/repro.py", line 5, in <module>\n'
               "    s = te.create_schedule(B.op)\n"
               "AttributeError: module 'tvm.te' has no attribute 'create_schedule'\n")


@pytest.mark.parametrize(("stdout", "stderr", "script", "outcome"), [
    # the script caught a missing device's error and printed it last
    ("FAIL: Check failed: (allow_missing) is false: Device API cuda is not enabled.\n", "",
     _TRY, Outcome.NEEDS_GPU),
    # ... a traceback it printed with traceback.print_exc(), then TVM's log lines only
    ("", _PRINTED_TB + "[11:04:14] /project/src/x.cc:67: Warning: something\n", _TRY,
     Outcome.API_MISMATCH),
    # ... TVM's diagnostic, as print(err) shows it
    ("FAIL\nerror: Reshape expects the new shape to be convertible from the old shape\n"
     " --> /w/repro.py:11:13\n    |  \n 11 |     return R.reshape(x, (4, 2))\n"
     "    |     ^^^^^^^^^^^^^^^^^^^^^^\n", "", _TRY, Outcome.TVM_ERROR),
    # the script went on after the error it caught: its run passed
    ("done\n", _PRINTED_TB, _TRY + "print('done')\n", Outcome.PASSED),
    # no try/except in the script: it printed the text itself
    ("FAIL: Check failed: (allow_missing) is false: Device API cuda is not enabled.\n", "",
     "print('x')\n", Outcome.PASSED),
])
def test_an_error_the_script_caught_last_is_how_it_ended(stdout: str, stderr: str, script: str,
                                                          outcome: Outcome) -> None:
    got = classify(_run(exit_code=0, stdout_tail=stdout, stderr_tail=stderr), script=script)
    assert got.outcome == outcome, got
    if outcome != Outcome.PASSED:
        assert "caught this error itself" in got.detail


@pytest.mark.parametrize(("script", "stdout", "outcome"), [
    ('print("match:", np.allclose(out, ref))\n', "match: False\n", Outcome.WRONG_RESULT),
    ("print(np.array_equal(out, ref))\n", "False\n", Outcome.WRONG_RESULT),
    ('print("same", (out == ref).all())\n', "same False\n", Outcome.WRONG_RESULT),
    # the check held
    ('print("match:", np.allclose(out, ref))\n', "match: True\n", Outcome.PASSED),
    # False printed, but not by a comparison
    ('print("cached:", cache.hit)\n', "cached: False\n", Outcome.PASSED),
    # TVM's value and numpy's printed under their labels, and they differ
    ('print("tvm  :", out)\nprint("numpy:", ref)\n', "tvm  : 2\nnumpy: 1\n", Outcome.WRONG_RESULT),
    ('print("tvm:", out)\nprint("numpy:", ref)\n', "tvm: 0.33333334\nnumpy: 0.3333333333333333\n",
     Outcome.PASSED),  # (float32 against float64: the same value)
])
def test_a_printed_comparison_that_printed_false_is_a_failed_check(script: str, stdout: str,
                                                                  outcome: Outcome) -> None:
    from bot.classify import account_for_printed_check

    script = "import numpy as np\nout = ref = cache = np.ones(2)\n" + script
    run = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail=stdout)
    wrong = Reported(Outcome.WRONG_RESULT, "wrong values")
    assert account_for_printed_check(classify(run), run, script, wrong).outcome == outcome
    # a report that does not call the result wrong says nothing of the printed check
    assert account_for_printed_check(classify(run), run, script,
                                     Reported(Outcome.CRASH, "segfault")).outcome == Outcome.PASSED


def test_a_module_tvmscript_cannot_find_is_the_scripts_forgotten_import(tmp_path: Path) -> None:
    script = """\
        import tvm
        from tvm.script import ir as I, relax as R

        @I.ir_module
        class Module:
            @R.function
            def main(x: R.Tensor((2,), "float16")):
                return R.add(x, R.const(np.float16(1.0)))
        """
    run = real_run(script, tmp_path)
    cls = classify(run, script=textwrap.dedent(script))
    assert cls.outcome == Outcome.PYTHON_ERROR and "without importing it" in cls.detail, cls
    # an undefined name in TVMScript that is no module's alias stays TVM's diagnostic
    stale = textwrap.dedent(script).replace("R.const(np.float16(1.0))", "y_unknown")
    run = real_run(stale, tmp_path / "stale")
    assert classify(run, script=stale).outcome == Outcome.TVM_ERROR


def test_the_same_array_printed_at_another_width_is_the_same_output() -> None:
    from bot.classify import account_for_shown_output

    shown = ("[[-3.4028235e+38 -3.4028235e+38 -3.4028235e+38 -3.4028235e+38 -3.4028235e+38]\n"
             " [-3.4028235e+38  0.0000000e+00  2.0000000e+00  3.0000000e+00 -3.4028235e+38]\n"
             " ...\n[12:01:44] /project/src/x.cc:1: Warning: fast mode\n")
    printed = ("[[-3.4028235e+38 -3.4028235e+38 -3.4028235e+38 -3.4028235e+38\n"
               "  -3.4028235e+38]\n [-3.4028235e+38  0.0000000e+00  2.0000000e+00  3.0000000e+00\n"
               "  -3.4028235e+38]\n [-3.4028235e+38  8.0000000e+00  1.0000000e+01  1.1000000e+01\n"
               "  -3.4028235e+38]]\n")
    wrong = Reported(Outcome.WRONG_RESULT, "full of -3.4e38")
    run = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail=printed)
    assert account_for_shown_output(classify(run), run, shown, wrong).outcome == \
        Outcome.WRONG_RESULT
    # other numbers: fixed
    fixed = RunResult(exit_code=0, signal=None, seconds=1.0,
                      stdout_tail=printed.replace("-3.4028235e+38", "0.0000000e+00"))
    assert account_for_shown_output(classify(fixed), fixed, shown, wrong).outcome == \
        Outcome.PASSED


def test_a_script_that_asks_whether_the_device_is_there_needs_the_device() -> None:
    from bot.classify import account_for_absent_device

    script = "import tvm\nprint(tvm.cuda(0).exist)\n"
    passed = classify(RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail="False\n"),
                      script=script, needs=("cuda",), environment={})
    for rep in (None, Reported(Outcome.WRONG_RESULT, "exist is False")):
        got = account_for_absent_device(passed, rep, ("cuda",), {}, script)
        assert got.outcome == Outcome.NEEDS_GPU and "asks whether" in got.detail
    # on a worker with the GPU the answer stands
    gpu = {"gpu": "NVIDIA H200", "cuda_enabled": "12.8"}
    assert account_for_absent_device(passed, None, ("cuda",), gpu, script).outcome == \
        Outcome.PASSED


def test_a_schedule_errors_message_after_a_long_ir_dump_is_kept() -> None:
    # The IR with diagnostics can run to hundreds of lines between the header and the line
    # that says what is wrong: the comparison needs that line.
    ir = "".join(f"    line {k} of the printed IR\n" for k in range(120))
    run = _run(stderr_tail=_SCHEDULE_ERROR + "The IR with diagnostic is:\n" + ir
               + "Error message: The block s_tir.SBlock#0 is an output block\n")
    cls = classify(run, script="sch.compute_at(c, bi)\n")
    assert cls.outcome == Outcome.TVM_ERROR
    assert "Error message: The block s_tir.SBlock#0 is an output block" in cls.evidence
    said = Reported(Outcome.TVM_ERROR, "ScheduleError: The block s_tir.SBlock#0 is an output block")
    assert compare(said, cls).verdict == Verdict.REPRODUCED


@pytest.mark.parametrize(("owner", "outcome"), [
    ("FloatImm", Outcome.API_MISMATCH),  # expressions have .ty now, not .dtype
    ("FloorDiv", Outcome.API_MISMATCH),
    ("Frobnicator", Outcome.PYTHON_ERROR),  # not a TVM expression: the script's own slip
])
def test_an_expressions_dtype_attribute_is_an_api_of_another_tvm(owner: str, outcome: Outcome) -> None:
    run = _run(stderr_tail=(
        'Traceback (most recent call last):\n  File "/w/repro.py", line 4, in <module>\n'
        "    print(e.dtype)\n"
        f"AttributeError: '{owner}' object has no attribute 'dtype'. Did you mean: 'astype'?\n"))
    cls = classify(run, script="import tvm\ne = make()\nprint(e.dtype)\n")
    assert cls.outcome == outcome, cls


@pytest.mark.parametrize(("values", "stdout", "outcome"), [
    # the reporter's one distinctive number among the printed values
    (("-3.4028235e+38",), "[ 4.0000000e+00 -3.4028235e+38]\n", Outcome.WRONG_RESULT),
    # a plain small number among others proves nothing
    (("2",), "[1 2 3]\n", Outcome.PASSED),
    # TVM's value then numpy's, as "gives -112, numpy says 400" quotes them
    (("-112", "-112 400"), "-112 400\n", Outcome.WRONG_RESULT),
])
def test_a_value_the_report_quotes_in_words_printed_by_the_run(
        values: tuple[str, ...], stdout: str, outcome: Outcome) -> None:
    from bot.classify import account_for_shown_output

    run = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail=stdout)
    said = Reported(Outcome.WRONG_RESULT, "wrong", values=values)
    assert account_for_shown_output(classify(run), run, "", said).outcome == outcome


_TUNE_FRAGMENT = """\
import logging
import tvm
logging.basicConfig(level=logging.INFO)

def tune(mod, params, target):
    return tvm.compile(mod, target=target)

db = tune(mod, params, "llvm")
"""


@pytest.mark.parametrize(("script", "line", "func", "name", "outcome"), [
    # module level reads `mod`, which only a function's parameter names: a fragment
    (_TUNE_FRAGMENT, 8, "<module>", "mod", Outcome.NO_REPRO),
    # a pytest test that compiled and ran before its own slip: the script's error
    ("import tvm\n\ndef test_x():\n    ex = tvm.compile(Mod, target='llvm')\n"
     "    expected = inp + 1\n\ntest_x()\n", 5, "test_x", "inp", Outcome.PYTHON_ERROR),
    # a standard module used without its import: the script's own slip
    ("import tvm\nd = tempfile.mkdtemp()\n", 2, "<module>", "tempfile", Outcome.PYTHON_ERROR),
])
def test_name_errors_fragment_or_slip(script: str, line: int, func: str, name: str,
                                      outcome: Outcome) -> None:
    run = _run(stderr_tail=(
        f'Traceback (most recent call last):\n  File "/w/repro.py", line {line}, in {func}\n'
        f"    x\nNameError: name '{name}' is not defined\n"))
    assert classify(run, script=script).outcome == outcome


@pytest.mark.parametrize(("script", "stdout", "outcome"), [
    # TVM's result, then numpy's for the same input, printed last: they differ
    ("import numpy as np\nx = np.ones(4)\nprint(vm['main'](x).numpy())\nprint(np.sign(x))\n",
     "[-1.  0.  0.  1.]\n[-1.  0. nan  1.]\n", Outcome.WRONG_RESULT),
    # ... and agree
    ("import numpy as np\nx = np.ones(4)\nprint(vm['main'](x).numpy())\nprint(np.sign(x))\n",
     "[1. 1.]\n[1. 1.]\n", Outcome.PASSED),
    # two prints that are not TVM's result against numpy's
    ("import numpy as np\nprint(np.ones(2))\nprint(np.zeros(2))\n", "[1. 1.]\n[0. 0.]\n",
     Outcome.PASSED),
    # the last print is the comparison itself, and it held
    ("import numpy as np\nx = np.ones(4)\nprint(repr(t.numpy()))\n"
     "print(np.array_equal(t.numpy(), x))\n", "array([1., 1.], dtype=float32)\nTrue\n",
     Outcome.PASSED),
])
def test_a_script_that_ends_printing_tvms_result_then_numpys(script: str, stdout: str,
                                                            outcome: Outcome) -> None:
    from bot.classify import account_for_printed_check

    run = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail=stdout)
    wrong = Reported(Outcome.WRONG_RESULT, "wrong values")
    assert account_for_printed_check(classify(run), run, script, wrong).outcome == outcome


@pytest.mark.parametrize(("message", "outcome"), [
    # a slip of the keyboard Python itself points out
    ("module 'tvm.relax.op.nn' has no attribute 'sofmax'. Did you mean: 'softmax'?",
     Outcome.PYTHON_ERROR),
    # a name another TVM had
    ("module 'tvm.te' has no attribute 'create_schedule'", Outcome.API_MISMATCH),
    # a removed name Python happens to find close to another (the table knows it)
    ("module 'tvm' has no attribute 'tir'. Did you mean: 'ir'?", Outcome.API_MISMATCH),
])
def test_a_misspelt_tvm_name_is_the_scripts_slip(message: str, outcome: Outcome) -> None:
    run = _run(stderr_tail=(
        'Traceback (most recent call last):\n  File "/w/repro.py", line 3, in <module>\n'
        f"    y = relax.op.nn.sofmax(x)\nAttributeError: {message}\n"))
    assert classify(run, script="import tvm\nfrom tvm import relax\ny = relax.op.nn.sofmax(x)\n"
                    ).outcome == outcome


@pytest.mark.parametrize(("script", "outcome"), [
    # only builds a Target: no device is needed, the pass counts
    ('import tvm\nt = tvm.target.Target("nvidia/geforce-rtx-4090")\nprint(t.attrs["arch"])\n',
     Outcome.PASSED),
    # runs on the device: a pass on a worker without it says nothing
    ('import tvm\ndev = tvm.cuda(0)\nprint(dev)\n', Outcome.NEEDS_GPU),
])
def test_a_pass_without_the_gpu_counts_when_no_device_is_used(script: str,
                                                              outcome: Outcome) -> None:
    from bot.classify import account_for_absent_device

    run = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail="sm_89\n")
    said = Reported(Outcome.WRONG_RESULT, "arch is sm_50")
    got = account_for_absent_device(classify(run), said, ("cuda",), NO_GPU, script)
    assert got.outcome == outcome


def test_an_assert_naming_cuda_is_a_check_of_what_was_built_not_a_missing_gpu() -> None:
    script = ('import tvm\nlib = tvm.compile(mod, target="cuda")\n'
              'assert len(lib.mod.imports) > 0, "no device module generated for target cuda"\n')
    run = _run(stderr_tail=(
        'Traceback (most recent call last):\n  File "/w/repro.py", line 3, in <module>\n'
        '    assert len(lib.mod.imports) > 0, "no device module generated for target cuda"\n'
        "AssertionError: no device module generated for target cuda\n"))
    got = classify(run, script=script, needs=("cuda",), environment=NO_GPU)
    assert got.outcome == Outcome.WRONG_RESULT, got


@pytest.mark.parametrize(("func", "replacement"), [
    ("get_source", "inspect_source"),
    ("imported_modules", "imports"),
])
def test_a_runtime_module_function_another_tvm_had(func: str, replacement: str) -> None:
    # a runtime Module says "has no function", not "has no attribute"
    run = _run(stderr_tail=(
        'Traceback (most recent call last):\n  File "/w/repro.py", line 5, in <module>\n'
        f"    print(lib.mod.{func}())\n"
        f"AttributeError: Module has no function '{func}'\n"))
    cls = classify(run, script=f"import tvm\nprint(lib.mod.{func}())\n")
    assert cls.outcome == Outcome.API_MISMATCH
    assert replacement in cls.detail


def test_shown_booleans_printed_the_same_are_the_same_wrong_result() -> None:
    from bot.classify import account_for_shown_output

    run = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail="True\nFalse\n")
    said = Reported(Outcome.WRONG_RESULT, "structural_hash disagrees with structural_equal")
    assert account_for_shown_output(classify(run), run, "True\nFalse", said).outcome == \
        Outcome.WRONG_RESULT
    # words alone are no value to compare
    run = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail="done\n")
    assert account_for_shown_output(classify(run), run, "done", said).outcome == Outcome.PASSED


def test_shown_dtype_lines_with_digits_still_count() -> None:
    from bot.classify import account_for_shown_output

    run = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail="object\n()\nfloat32\n")
    said = Reported(Outcome.WRONG_RESULT, "asarray returns an object array")
    assert account_for_shown_output(classify(run), run, "object\n()\nfloat32", said).outcome == \
        Outcome.WRONG_RESULT


@pytest.mark.parametrize(("stderr", "said", "wrong"), [
    # TVM's warning that fast mode does not check indices, a report about an out-of-range index
    ("[10:00:00] /project/include/tvm/topi/transform.h:1261: Warning: Fast mode segfaults when "
     "there are out-of-bounds indices. Make sure input indices are in bound",
     "R.take with out of range index silently returns garbage", True),
    # ... not a report about other wrong values of the same op
    ("Warning: Fast mode segfaults when there are out-of-bounds indices.",
     "R.take returns the rows in the wrong order", False),
    # ... nor a run without the warning
    ("", "R.take with out of range index silently returns garbage", False),
])
def test_an_out_of_range_index_taken_without_an_error(stderr: str, said: str, wrong: bool) -> None:
    from bot.classify import account_for_unchecked_index

    run = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail="[2. 0.]\n",
                    stderr_tail=stderr)
    reported = Reported(Outcome.WRONG_RESULT, signature=said, evidence=(said,))
    got = account_for_unchecked_index(classify(run, script="print(1)\n"), run, reported)
    assert (got.outcome == Outcome.WRONG_RESULT) is wrong, got
    if wrong:
        assert "out-of-range index" in got.signature and "Fast mode" in got.evidence[0]
