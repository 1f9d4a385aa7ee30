"""Stage 5: what did the run do? Exactly one :class:`~bot.models.Outcome` per run.

Pure: reads only the :class:`~bot.models.RunResult` (and the packaged API-change table).
The order of the rules matters and is the policy:

1. the sandbox cut the run: ``timeout`` (wall time) or ``resource-limit`` (memory, processes,
   output, disk);
2. the process died by a signal (or a shell's ``128+N`` exit code, or faulthandler's
   "Fatal Python error: Segmentation fault" with no Python traceback after it): ``crash``
   (``needs-gpu`` when it aborted on an absent device runtime; a crash with no TVM frame on its
   stack carries the frames that matter in ``Classification.frames``);
3. exit status 0: ``passed`` (warnings on stderr do not matter) -- unless the script only
   imports, or its module-level code reads names it never binds: ``no-repro`` (bot.fragments);
4. the first failure is a ``NameError`` on a name the script never binds anywhere, or a
   ``return`` outside a function: the script is a fragment, ``no-repro`` with the names;
5. otherwise the last Python exception decides, in this order: the device the script wants is
   absent (``needs-gpu``), an import/attribute error about a ``tvm.*`` name (``api-mismatch``,
   also when TVMScript's parser or another wrapper re-raised it as its own error), a missing
   non-TVM package (``missing-dependency``; an ImportError's chained causes and "X is
   required / pip install X" messages count), a failed numeric check in the script
   (``wrong-result``), TVM's own checks (``internal-error``), any other error raised inside TVM
   (``tvm-error``), and everything else is the script's own (``python-error``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from bot import lazyre
from bot.api_changes import lookup, lookup_keyword, lookup_member
from bot.fragments import (
    bound_only_in_functions,
    fragment_reason,
    imports_only,
    never_bound,
    quoted_names,
    read_before_bound,
    unbound_names,
    unused_module,
)
from bot.models import Classification, Outcome, Reported, RunResult
from bot.needs import GPU_DEVICES
from bot.printed import (
    ATOM_RE,
    check_within_rounding,
    printed_chunks,
    printed_pair_differs,
    same_atoms,
    within_rounding,
)
from bot.records import replace
from bot.tracebacks import (
    LOOSE_HEADER_RE,
    TRACEBACK_HEAD,
    Frame,
    Locations,
    PyError,
    cpp_frames,
    crash_frames,
    first_nonempty,
    frame_kind,
    locations_of,
    normalize_paths,
    parse_errors,
    parse_last_error,
    pass_names,
    raised_in_tvm,
    same_location,
    split_lines,
)
from bot.vocabulary import (
    BACKTRACE_NOTE,
    CANNOT_IMPORT_RE,
    CRASH_CONTEXT_RE,
    CRASH_SIGNALS,
    DEVICE_FAILURE_LINE_RE,
    DEVICE_WORD_RE,
    EXIST_CHECK_RE,
    FATAL_RE,
    FATAL_TO_SIGNAL,
    FAULTHANDLER_FRAME_RE,
    IMPORT_REPORT_RE,
    MODULE_ALIASES,
    MODULE_ATTR_RE,
    NAME_ERROR_RE,
    NO_MODULE_RE,
    NO_SUCH_FILE_RE,
    NO_SUCH_FILE_TYPES,
    OBJECT_ATTR_RE,
    OUT_OF_RANGE_INDEX_RE,
    OUTSIDE_FUNCTION_RE,
    REMOVED_FORM_RE,
    SCRIPT_ERROR_TYPES,
    SIGNAL_NAMES,
    SUBNORMAL_RE,
    TARGET_AS_DEVICE_RE,
    TESTING_MSG_RE,
    TESTING_PATH_RE,
    TVM_ERROR_TYPES,
    UNCHECKED_INDEX_WARNING,
    UNEXPECTED_KEYWORD_RE,
    VM_ARGUMENT_CHECK,
    WRAPPER_TYPES,
    WRONG_RESULT_RE,
    device_absent,
    is_tvm_name,
    required_package,
    shared_library,
)

# Re-exported: these lived here before bot.tracebacks / bot.vocabulary existed.
__all__ = [
    "CRASH_SIGNALS",
    "SIGNAL_NAMES",
    "WRONG_RESULT_RE",
    "Frame",
    "Locations",
    "PyError",
    "account_for_absent_device",
    "account_for_import_only",
    "account_for_shown_output",
    "account_for_printed_check",
    "account_for_varied_output",
    "classify",
    "cpp_frames",
    "frame_kind",
    "locations_of",
    "normalize_paths",
    "parse_errors",
    "parse_last_error",
    "pass_names",
    "same_location",
]

def _crash_signal(run: RunResult, stderr: str) -> int | None:
    if run.signal is not None and run.signal in CRASH_SIGNALS:
        return run.signal
    code = run.exit_code
    if code is not None:
        if -code in CRASH_SIGNALS:
            return -code
        if code - 128 in CRASH_SIGNALS:
            return code - 128
    if run.signal is None and code not in (0, None):
        # faulthandler printed a fatal error and no Python traceback came after it.
        matches = list(FATAL_RE.finditer(stderr))
        if matches:
            last = matches[-1]
            if TRACEBACK_HEAD not in stderr[last.end() :]:
                return FATAL_TO_SIGNAL[last.group(1)]
    return None





def _crash(sig: int, run: RunResult) -> Classification:
    name = CRASH_SIGNALS.get(sig, f"signal {sig}")
    evidence: list[str] = []
    for text in (run.stderr_tail, run.stdout_tail):
        for line in split_lines(text):
            if CRASH_CONTEXT_RE.search(line) and line.strip() not in evidence:
                evidence.append(normalize_paths(line.strip()))
    # faulthandler's innermost Python frame, if printed.
    for raw in split_lines(run.stderr_tail):
        fh = FAULTHANDLER_FRAME_RE.match(raw[:2000])
        if fh:
            evidence.append(normalize_paths(raw.strip()))
            break
    if not evidence:
        evidence = list(_tail_evidence(run))
    if "std::bad_alloc" in run.stderr_tail:
        return Classification(
            Outcome.RESOURCE_LIMIT,
            signature="std::bad_alloc (out of memory)",
            detail="memory: the process ran out of memory (std::bad_alloc) and aborted",
            evidence=tuple(evidence[:6]),
        )
    detail = f"The process was killed by {SIGNAL_NAMES.get(sig, f'signal {sig}')}."
    frames = crash_frames(run.stderr_tail) or crash_frames(run.stdout_tail)
    shown: tuple[str, ...] = ()
    if frames and not any(f.kind == "tvm" for f in frames) and not _tvm_in_crash_text(run):
        # No TVM frame on the crashing stack: say where it faults instead, without the
        # interpreter's own frames (the innermost few, and the script's line).
        top = [f for f in frames if f.kind == "lib"][:4]
        script = next((f for f in frames if f.kind == "script"), None)
        shown = tuple(normalize_paths(f.where) for f in (*top, *([script] if script else [])))
        where = f" It faults in {top[0].where}" if top else ""
        called = f", called from {script.where}" if script else ""
        detail += (
            " No TVM frame is on the crashing stack: the faulting frames are outside TVM "
            f"(in the interpreter or another library).{where}{called}."
        ).replace("..", ".")
    return Classification(
        Outcome.CRASH,
        signature=f"{name} (signal {sig})",
        detail=detail,
        evidence=tuple(evidence[:6]),
        frames=shown,
    )


def _uncaught_before_crash(run: RunResult) -> PyError | None:
    """The error a crashed run's script had already died of: stderr ends with a whole uncaught
    traceback (its last line the exception) and nothing after it -- no fatal-error report, no
    TVM segfault banner, no native frames. The crash came at interpreter shutdown (freeing a
    deep expression, a library's destructor), after the script had failed."""
    text = run.stderr_tail.rstrip()
    if (TRACEBACK_HEAD not in text or FATAL_RE.search(text) or _tvm_in_crash_text(run)
            or run.stderr_truncated):
        return None
    err = parse_last_error(text)
    if err is None or not err.frames or err.short_type in ("KeyboardInterrupt", "SystemExit"):
        return None
    last = split_lines(text)[-1].strip()
    return err if last and err.lines and last == err.lines[-1].strip() else None


_CAUGHT_NOTE = " The script caught this error itself and exited normally (exit code 0)."
# TVM's diagnostic as ``print(err)`` shows it: "error: <message>" over " --> file:line:col".
_PRINTED_DIAGNOSTIC_RE = lazyre.compile(r"^error: ([^\n]+)\n\s*--> [^\n]*:\d+:\d+\s*$", re.M)
# What may follow the caught error at the end of the output: TVM's own log lines.
# A log line, not printed output: TVM's "[12:00:01] file.cc:12: ...", a "Warning: ..." line.
_LOG_LINE_RE = lazyre.compile(r"^\[\d\d:\d\d:\d\d\] |^(?:\w+)?Warning: ")


def _tree(script: str) -> ast.Module | None:
    """``script`` parsed, or None when it does not parse."""
    try:
        return ast.parse(script)
    except (SyntaxError, ValueError):
        return None


def _catches(script: str) -> bool:
    tree = _tree(script)
    if tree is None:
        return False
    return any(isinstance(n, ast.Try) and n.handlers for n in ast.walk(tree))


def _try_is_last(script: str) -> bool:
    """The script's last top-level statement (or the last of its ``if __name__ ...`` block) is
    a ``try`` with handlers: nothing runs after the error it catches."""
    tree = _tree(script)
    if tree is None:
        return False
    body = tree.body
    while body and isinstance(body[-1], ast.If) and not body[-1].orelse:
        body = body[-1].body
    return bool(body) and isinstance(body[-1], ast.Try) and bool(body[-1].handlers)


def _after(text: str, last: str) -> list[str]:
    """The lines of ``text`` after its last line equal to ``last``, TVM's log lines left out."""
    lines = split_lines(text)
    at = max((i for i, ln in enumerate(lines) if ln.strip() == last.strip()), default=-1)
    return [ln for ln in lines[at + 1:] if ln.strip() and not _LOG_LINE_RE.match(ln)]


def _caught_at_the_end(run: RunResult, script: str, needs: tuple[str, ...],
                       env: Mapping[str, str]) -> Classification | None:
    """An exit-0 run of a script that catches errors, whose output ends with the error it
    caught: a traceback it printed (``traceback.print_exc()``), TVM's diagnostic or a missing
    device's message printed with ``print(err)``. The script failed there, and says so itself."""
    if not script or not _catches(script):
        return None
    absent = _device_absent_failure(run)
    if absent and not any(_after(t, absent) for t in (run.stdout_tail, run.stderr_tail)
                          if absent in t):
        cls = _needs_gpu(absent, needs, (absent,))
        return replace(cls, detail=f"{cls.detail}{_CAUGHT_NOTE}".strip())
    for text in (run.stderr_tail, run.stdout_tail) if _try_is_last(script) else ():
        err = parse_last_error(text)
        if err is None or not err.frames or not err.lines or _after(text, err.lines[-1]):
            continue
        failed = classify(replace(run, exit_code=1, stderr_tail=text, stdout_tail=""),
                          script=script, needs=needs, environment=env)
        if failed.outcome in (Outcome.PASSED, Outcome.INFRA_ERROR):
            return None
        return replace(failed, detail=f"{failed.detail}{_CAUGHT_NOTE}".strip())
    for m in _PRINTED_DIAGNOSTIC_RE.finditer(run.stdout_tail):
        rest = run.stdout_tail[m.end():]
        if not [ln for ln in split_lines(rest) if ln.strip() and not ln.lstrip().startswith(
                ("|", "^")) and not re.match(r"^\s*\d+ \|", ln) and not _LOG_LINE_RE.match(ln)]:
            sig = f"DiagnosticError: error: {m.group(1).strip()}"
            return Classification(Outcome.TVM_ERROR, signature=normalize_paths(sig)[:300],
                                  detail=f"TVM rejected the program.{_CAUGHT_NOTE}",
                                  evidence=(normalize_paths(m.group(0).split(chr(10))[0]),))
    return None


def _tvm_in_crash_text(run: RunResult) -> bool:
    """TVM named itself in the crash output (its segfault handler, ``libtvm``, ``tvm::``)."""
    text = run.stderr_tail
    return "Segfault encountered" in text or "libtvm" in text or "tvm::" in text


_LIMIT_DETAIL = {
    "memory": "memory: the run went over the worker's memory limit",
    "processes": "processes: the run started more processes/threads than the worker allows",
    "output": "output: the run printed more output than the worker keeps",
    "disk": "disk: the run wrote more to disk than the worker allows",
}


def _worker_has_gpu(environment: Mapping[str, str]) -> bool:
    gpu = str(environment.get("gpu", "")).strip().lower()
    cuda = str(environment.get("cuda_enabled", "")).strip().lower()
    if gpu in {"", "none", "no", "n/a", "false", "0", "-", "unknown"}:
        return False
    return cuda not in {"false", "no", "off", "0", "disabled"} and "no driver" not in cuda


# The script picks a device to run on (``tvm.cuda(0)``, ``tvm.device("cuda")``, ``dev =
# tvm.gpu()``): what it computes there needs that device.
_RUNS_ON_DEVICE_RE = lazyre.compile(
    r"\btvm\.(?:cuda|gpu|rocm|vulkan|metal|opencl|cl|device|runtime\.device)\s*\("
    r"|\b(?:device|dev)\s*\(\s*['\"]\w+|\bdev(?:ice)?\s*=\s*tvm\.\w+\s*\(")
_ASKS_DEVICE_RE = lazyre.compile(r"\.exist\b|\bis_available\s*\(|\bdevice_count\s*\(")


def account_for_absent_device(
    cls: Classification,
    reported: Reported | None,
    needs: tuple[str, ...],
    environment: Mapping[str, str] | None,
    script: str = "",
) -> Classification:
    """A run that passed on a worker without the device the script wants cannot speak for a
    failure the reporter saw while running on that device (a crash, a wrong result, a hang):
    that is ``needs-gpu``, not "passed". A reported compile-time error stays comparable, since
    compiling for a device needs no device. A script that asks whether the device is there
    (``tvm.cuda(0).exist``) gets "no" on such a worker, whatever the report says."""
    if cls.outcome != Outcome.PASSED:
        return cls
    devices = [n for n in needs if n in GPU_DEVICES]
    if not devices or _worker_has_gpu(environment or {}):
        return cls
    if _ASKS_DEVICE_RE.search(script):
        return Classification(
            Outcome.NEEDS_GPU,
            detail=(f"The script asks whether a {devices[0]} device is there; this worker has "
                    "none, so its answer here says nothing about the reporter's machine."),
            evidence=cls.evidence,
        )
    if reported is None:
        return cls
    if reported.outcome not in _DEVICE_RUNTIME_FAILURES:
        return cls
    if script and not _RUNS_ON_DEVICE_RE.search(script):
        return cls  # (it only builds targets or compiles: no device is needed, the pass counts)
    return Classification(
        Outcome.NEEDS_GPU,
        detail=(
            f"The script ran to the end here, but the reported {reported.outcome.value} happens "
            f"when it runs on a {devices[0]} device, which this worker does not have; a GPU "
            "worker is needed to check it."
        ),
        evidence=cls.evidence,
    )


def account_for_import_only(
    cls: Classification, script: str, title: str, reported: Reported | None, *,
    ran_as_command: bool = False,
) -> Classification:
    """A run of a script that only imports, and passed, is no repro of a problem that is not
    about importing: a traceback's or an environment check's imports, lifted into a script, run
    nothing that could show the bug. (When the title or the reported error is about importing,
    or the reporter ran these imports themselves as a command (``python -c "import tvm"``,
    ``ran_as_command``) and showed what it did, "it imports fine here" is the answer, and the
    pass stands.)"""
    if cls.outcome != Outcome.PASSED:
        return cls
    about_import = ran_as_command or bool(IMPORT_REPORT_RE.search(title[:1000])) or (
        reported is not None and bool(IMPORT_REPORT_RE.search(reported.signature[:1000]))
    )
    if about_import:
        return cls
    return _not_a_repro(script, cls) or cls


# numpy's and TVM's assertions of values: ``np.testing.assert_array_equal(out, np.round(x))``.
_VALUE_ASSERTS = frozenset({"assert_allclose", "assert_array_equal", "assert_equal",
                            "assert_almost_equal", "assert_array_almost_equal",
                            "assert_array_almost_equal_nulp", "assert_array_max_ulp"})


def passing_value_check(script: str) -> str:
    """The script's own check of its values against a reference, made where the script runs
    (top level, in a loop or ``with`` block there, or under ``if __name__ == "__main__":``), not
    wrapped in a ``try``: after a run that exited 0 it passed (the values equal the script's
    reference). Its source, or ""."""
    tree = _tree(script)
    if tree is None:
        return ""
    body: list[ast.stmt] = []
    todo = list(tree.body)
    while todo:  # (the main guard's body runs too, and a loop's or a with block's)
        stmt = todo.pop(0)
        body.append(stmt)
        if isinstance(stmt, ast.For | ast.While | ast.With) or (
                isinstance(stmt, ast.If) and "__main__" in ast.dump(stmt.test)):
            todo.extend(stmt.body)
    for stmt in body:
        node: ast.expr | None = None
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            f = stmt.value.func
            if isinstance(f, ast.Attribute) and f.attr in _VALUE_ASSERTS:
                node = stmt.value
        elif isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Call):
            f = stmt.test.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if name in ("allclose", "array_equal", "array_equiv"):
                node = stmt.test
        if node is None:
            continue
        text = ast.get_source_segment(script, stmt) or ""
        if ".shape" in text or ".dtype" in text or ".ndim" in text:
            continue  # (a check of the shape says nothing of the values)
        return text
    return ""


def account_for_shown_output(
    cls: Classification, run: RunResult | None, shown: str, reported: Reported | None,
    script: str = "",
) -> Classification:
    """A run that passed but printed the very lines the report shows as the wrong result
    (``Repro.shown_output``, with numbers in it) shows the same wrong result: the script has no
    check of its own, the reporter's words are the check. Output read from uninitialized memory
    changes from run to run: when the report shows float32 subnormals (``3.1e-41``) and the run
    prints some too, it shows the same wrong result."""
    if cls.outcome != Outcome.PASSED or run is None:
        return cls
    if reported is None or reported.outcome != Outcome.WRONG_RESULT:
        return cls
    check = passing_value_check(script) if run.exit_code == 0 else ""
    if check:
        # The values the report calls wrong are what the script's own reference holds too
        # (``np.round`` rounds half to even, as TVM does): its check passed.
        return replace(cls, detail=(
            "The script ran to the end, and its own check of the values passed "
            f"(`{check[:120]}`): TVM's result equals the script's reference, whatever the "
            "report expected."))
    printed = _printed_value(run.stdout_tail, reported.values)
    if printed:
        return _printed_wrong(printed, "The script ran to the end and printed the value the "
                              "report quotes as TVM's wrong result.")
    if not shown:
        return cls
    want = [ln for ln in (_squash_ws(x) for x in shown.split("\n"))
            if ln and not ln.startswith(("$ ", ">>> ", "# ")) and not _LOG_LINE_RE.match(ln)
            and ln.strip(" .…[]") != ""  # (and not "..." standing for lines left out,
            and not (("..." in ln or "…" in ln) and not ATOM_RE.search(ln))]  # or for a cut)
    if not want or len(want) > 40 or not any(
            any(ch.isdigit() for ch in ln) or ATOM_RE.search(ln) for ln in want):
        return cls  # (values: a digit somewhere, or nan/inf, True/False -- not words alone)
    got = iter(_squash_ws(x) for x in run.stdout_tail.split("\n"))
    if not all(any(_same_printed(g, w) for g in got) for w in want) and not _same_numbers(
            run.stdout_tail, want):  # in order, each line whole; else the same numbers in order
        junk = SUBNORMAL_RE.search(run.stdout_tail)
        if junk is None or not SUBNORMAL_RE.search(shown):
            return cls
        # Uninitialized memory read as float32 differs from run to run, but has a fingerprint:
        # subnormal numbers (3.1e-41, 1.4e-45), which no real computation here prints.
        return Classification(
            Outcome.WRONG_RESULT,
            signature=f"printed {junk.group(0)}, like the output the report shows",
            detail="The script ran to the end and printed values that look like uninitialized "
            f"memory (subnormal float32 numbers such as {junk.group(0)}), as the output the "
            "report shows does.",
            evidence=tuple(ln for ln in run.stdout_tail.split("\n")
                           if SUBNORMAL_RE.search(ln))[:5],
        )
    tiny = within_rounding(want)
    if tiny is not None:
        return replace(cls, detail=(
            "The script printed the output the report shows, but the differences it prints are "
            f"at most {tiny:g}, within float32 rounding: results equal to float precision, not "
            "a wrong result."))
    return Classification(
        Outcome.WRONG_RESULT,
        signature=f"printed {want[0]}"[:200],
        detail="The script ran to the end and printed the same output the report shows as "
        "the wrong result.",
        evidence=tuple(want[:5]),
    )


# A comparison whose value the script prints: ``np.allclose(a, b)``, ``(a == b).all()``.
_CHECK_CALLS = frozenset({"allclose", "array_equal", "array_equiv", "isclose", "equal",
                          "all", "assert_allclose", "testing"})


def _is_check(node: ast.expr) -> bool:
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        return name in _CHECK_CALLS
    return False


def _printed_checks(script: str) -> list[str]:
    """For each ``print(...)`` of ``script`` that prints a comparison's value: the text printed
    before it ("match:"), or "" when it is printed alone."""
    tree = _tree(script)
    if tree is None:
        return []
    out: list[str] = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "print"):
            continue
        for k, arg in enumerate(node.args):
            if _is_check(arg):
                label = " ".join(a.value for a in node.args[:k]
                                 if isinstance(a, ast.Constant) and isinstance(a.value, str))
                out.append(label.strip())
                break
    return out


def _printed_wrong(line: str, detail: str) -> Classification:
    """A wrong result shown by the line the run printed."""
    return Classification(Outcome.WRONG_RESULT, signature=f"printed {line}"[:200], detail=detail,
                          evidence=(line,))


def account_for_printed_check(
    cls: Classification, run: RunResult | None, script: str, reported: Reported | None
) -> Classification:
    """A script that prints its own comparison (``print("match:", np.allclose(out, ref))``)
    and printed ``False``, where the report says the result is wrong: its check failed, it only
    did not raise."""
    if (cls.outcome != Outcome.PASSED or run is None or reported is None
            or reported.outcome != Outcome.WRONG_RESULT):
        return cls
    lines = [ln.strip() for ln in run.stdout_tail.split("\n")]
    for label in _printed_checks(script):
        hit = next((ln for ln in lines
                    if ln.startswith(label) and ln[len(label):].strip() == "False"), "")
        if hit:
            return _printed_wrong(hit, "The script's own comparison of the result printed "
                                  "False (it prints the check instead of asserting it).")
    pair = printed_pair_differs(lines) or _last_prints_differ(script, run.stdout_tail)
    if pair:
        return _printed_wrong(pair, "The script printed TVM's result next to the reference's "
                              "(numpy, torch), and the two differ.")
    return cls


def _printed_arg(stmt: ast.stmt) -> ast.expr | None:
    """The value a top-level ``print(x)`` / ``print(repr(x))`` statement prints, or None."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == "print"
            and len(stmt.value.args) == 1 and not stmt.value.keywords):
        return None
    arg = stmt.value.args[0]
    if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id in (
            "repr", "str") and len(arg.args) == 1:
        arg = arg.args[0]
    return arg


def _last_prints_differ(script: str, stdout: str) -> str:
    """The script ends printing TVM's result (``....numpy()``) and then numpy's for the same
    input (``np.sign(x)``), one value each; the two printed values differ: TVM's, else ""."""
    tree = _tree(script)
    if tree is None or len(tree.body) < 2:
        return ""
    tvm_arg, ref_arg = _printed_arg(tree.body[-2]), _printed_arg(tree.body[-1])
    if tvm_arg is None or ref_arg is None or _is_check(ref_arg):
        return ""  # (``print(np.array_equal(out, ref))`` is the check, not numpy's value)
    ref_src, tvm_src = ast.unparse(ref_arg), ast.unparse(tvm_arg)
    if not re.match(r"(?:np|numpy)\.\w+\(", ref_src) or not re.search(
            r"\.(?:numpy|asnumpy)\(\)", tvm_src):
        return ""
    chunks = [c for c in printed_chunks(stdout.rstrip("\n").split("\n")[-200:]) if c.strip()]
    if len(chunks) < 2:
        return ""
    got, want = ATOM_RE.findall(chunks[-2]), ATOM_RE.findall(chunks[-1])
    if not got or not want or same_atoms(got, want):
        return ""
    return chunks[-2]


# What makes a script's own output differ between runs: random inputs, clocks, addresses.
_OWN_VARIATION_RE = lazyre.compile(
    r"\brandom\b|\brand(?:n|int|om_sample|perm)?\s*\(|\buniform\s*\(|\bnormal\s*\(|\bshuffle\s*\("
    r"|\bdefault_rng\b|\btime\.(?:time|perf_counter|monotonic)|\bdatetime\b|\btimeit\b|\bid\s*\("
    r"|\bgetpid\b|\buuid\b|\bthreading\b|\bconcurrent\b|\bbenchmark\b|\btime_evaluator\b")


def account_for_unchecked_index(
    cls: Classification, run: RunResult | None, reported: Reported | None
) -> Classification:
    """A run that passed with TVM's own warning that its fast mode does not check indices
    (``UNCHECKED_INDEX_WARNING``, from take/gather), where the report calls the result wrong for
    an index out of range: the run took that index without an error, as reported -- the values
    it read past the end are whatever memory held this time (zeros, junk, other junk)."""
    if (cls.outcome != Outcome.PASSED or run is None or reported is None
            or reported.outcome != Outcome.WRONG_RESULT
            or UNCHECKED_INDEX_WARNING not in run.stderr_tail + run.stdout_tail
            or not any(OUT_OF_RANGE_INDEX_RE.search(t)
                       for t in (reported.signature, *reported.evidence))):
        return cls
    warning = next((ln.strip() for ln in (run.stderr_tail + "\n" + run.stdout_tail).split("\n")
                    if UNCHECKED_INDEX_WARNING in ln), UNCHECKED_INDEX_WARNING)
    return Classification(
        Outcome.WRONG_RESULT,
        signature="took an out-of-range index without an error",
        detail="The script ran to the end: TVM took the out-of-range index the report is about "
        "without an error (it warns that its fast mode does not check indices), so the values "
        "it returned for it were read from memory past the end of the tensor.",
        evidence=(normalize_paths(warning)[:300],),
    )


def account_for_varied_output(
    cls: Classification, run: RunResult | None, script: str, reported: Reported | None
) -> Classification:
    """A script with no randomness or clock of its own, run twice on the same input because the
    report says its values change from run to run, that printed other values the second time
    (``RunResult.output_varied``): the same wrong result -- TVM hands back memory it never
    wrote."""
    if (cls.outcome != Outcome.PASSED or run is None or not run.output_varied
            or reported is None or reported.outcome != Outcome.WRONG_RESULT
            or _OWN_VARIATION_RE.search(script)):
        return cls
    return Classification(
        Outcome.WRONG_RESULT,
        signature="printed different values on two runs of the same script",
        detail="The script ran to the end twice on the same input and printed different values "
        "each time, as the report says: TVM returns memory it never wrote (uninitialized or "
        "out-of-bounds reads).",
        evidence=tuple(ln for ln in run.stdout_tail.split("\n") if ln.strip())[-3:],
    )


# The exception's class in front of a reported message ("TypeError: ..."), not part of what a
# script that catches the error prints with ``print(err)``.
_ERROR_CLASS_RE = lazyre.compile(r"^(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception):\s*")


# A printed line in which the script calls what it caught the right thing.
_SAYS_OK_RE = lazyre.compile(r"^\W{0,3}(?:ok|okay|pass(?:ed)?|good|fine|correct|success|expected)\b",
                             re.IGNORECASE)


def account_for_caught_error(
    cls: Classification, run: RunResult | None, script: str, reported: Reported | None
) -> Classification:
    """A run that passed because the script caught the error in its own ``try``/``except`` and
    printed it: when what it printed holds the very message the report quotes, TVM failed the
    way reported (exit 0 is the script's doing, not a pass)."""
    if cls.outcome != Outcome.PASSED or run is None or reported is None:
        return cls
    if reported.outcome not in (Outcome.TVM_ERROR, Outcome.INTERNAL_ERROR):
        return cls
    if not re.search(r"^\s*except\b", script, re.M):
        return cls
    want = _squash_ws(_ERROR_CLASS_RE.sub("", reported.signature.strip()))
    if len(want) < 12:
        return cls
    printed = [_squash_ws(x) for x in run.stdout_tail.split("\n") + run.stderr_tail.split("\n")]
    if want not in " ".join(printed):
        return cls
    line = next((ln for ln in printed if ln and (ln in want or want in ln)), want)
    if _SAYS_OK_RE.match(line):
        return cls  # ("ok, got ValueError: boom": the script's own words call it the right error)
    return Classification(
        reported.outcome,
        signature=line[:200],
        detail="The script caught the error in its own try/except and printed it, so it "
        "exited 0; the message is the one the report quotes.",
        evidence=(line[:200],),
    )


_NUMBER_RE = lazyre.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def _printed_value(stdout: str, values: tuple[str, ...]) -> str:
    """The first printed line whose value is one of ``values`` (the reporter's quoted wrong
    result): the same atoms in the same order, numbers equal to the precision the reporter
    wrote them (``0.333`` is ``0.33333334``). A line may carry a label before the value
    ("TVM  : [ 0. nan  2.]"), not other numbers."""
    wants = [w for w in (ATOM_RE.findall(v) for v in values) if w]
    if not wants:
        return ""
    for line in printed_chunks(stdout.split("\n")[-400:]):
        got = ATOM_RE.findall(line)
        if got and any(same_atoms(got, w) for w in wants):
            return " ".join(line.split())
    # One distinctive number the report says TVM printed ("the second value prints
    # -3.4028235e+38 and not -inf"): that number among a printed line's values.
    rare = [w[0] for w in wants if len(w) == 1 and _distinctive(w[0])]
    for line in printed_chunks(stdout.split("\n")[-400:]) if rare else ():
        got = ATOM_RE.findall(line)
        if any(same_atoms([g], [r]) for g in got for r in rare):
            return " ".join(line.split())
    return ""


def _distinctive(atom: str) -> bool:
    """A number no run prints by chance: seven significant digits or more (``-3.4028235e+38``,
    ``0.33333334``), not ``1``, ``0.5`` or ``nan``."""
    return sum(ch.isdigit() for ch in atom.lower().split("e")[0].lstrip("-+0.")) >= 7


# numpy 2 prints a scalar's repr with its type (``np.int64(400)``), numpy 1 as ``400``.
_NP_SCALAR_RE = lazyre.compile(
    r"\bnp\.(?:u?int\d+|float\d+|bool_?|complex\d+|longlong|intc|double|single)\(([^()]*)\)")


def _same_printed(got: str, want: str) -> bool:
    """The same printed line, the numbers compared as numbers: numpy 1 prints a float32 sum as
    ``16777216.0`` and numpy 2 as ``1.6777216e+07``, a scalar as ``400`` where numpy 2 prints
    ``np.int64(400)``."""
    if got == want:
        return True
    got, want = _NP_SCALAR_RE.sub(r"\1", got), _NP_SCALAR_RE.sub(r"\1", want)
    if _NUMBER_RE.sub("#", got) != _NUMBER_RE.sub("#", want):
        return False
    for a, b in zip(_NUMBER_RE.findall(got), _NUMBER_RE.findall(want), strict=True):
        x, y = float(a), float(b)
        if x != y and abs(x - y) > 1e-6 * max(abs(x), abs(y)):
            return False
    return True


# Fewer numbers than this in the shown output say too little to match on numbers alone.
_MIN_ATOMS = 6
_MAX_ATOMS = 5000


_WORD_RE = lazyre.compile(r"\b[A-Za-z_][A-Za-z_]+\b")
# Words a printed array carries beside its numbers (``array([1., 2.], dtype=float32)``).
_VALUE_WORDS = frozenset({"array", "dtype", "tensor", "nan", "inf", "true", "false", "tvm",
                          "numpy", "np", "torch", "ref", "out", "expected", "got", "max", "min",
                          "diff", "shape", "e"})


def _same_numbers(stdout: str, want: list[str]) -> bool:
    """The numbers (and nan/inf) of the shown lines ``want`` appear in this order, one after
    the other, in the run's output: the same array printed at another line width ("[[-3.4e+38
    0. 2.]" wrapped after four numbers here, after five in the report)."""
    want_atoms = [a for ln in want for a in ATOM_RE.findall(ln)
                  if a not in ("True", "False")][:100]
    if len(want_atoms) < _MIN_ATOMS:
        return False
    words = [w for ln in want for w in _WORD_RE.findall(ln) if w.lower() not in _VALUE_WORDS]
    if len(words) > len(want_atoms):
        return False  # text with numbers in it (printed IR: shapes, not values)
    got_atoms = [a for a in ATOM_RE.findall(stdout[-400_000:]) if a not in ("True", "False")]
    got_atoms = got_atoms[-_MAX_ATOMS:]
    n = len(want_atoms)
    for k in range(len(got_atoms) - n + 1):
        if (got_atoms[k] == want_atoms[0] or same_atoms([got_atoms[k]], [want_atoms[0]])) \
                and same_atoms(got_atoms[k:k + n], want_atoms):
            return True
    return False


def _squash_ws(line: str) -> str:
    return " ".join(line.split())


_DEVICE_RUNTIME_FAILURES = frozenset(
    {Outcome.CRASH, Outcome.WRONG_RESULT, Outcome.TIMEOUT, Outcome.RESOURCE_LIMIT}
)


def classify(
    run: RunResult,
    *,
    script: str = "",
    needs: tuple[str, ...] = (),
    environment: Mapping[str, str] | None = None,
) -> Classification:
    """Classify one run into exactly one outcome (see the module docstring for the order)."""
    env: Mapping[str, str] = environment or {}
    if run.timed_out or run.limit_hit == "time":
        return Classification(
            Outcome.TIMEOUT,
            signature=f"timed out after {run.seconds:.0f} s",
            detail="The script did not finish within the wall-time limit; it was stopped.",
            evidence=_tail_evidence(run),
        )
    if run.limit_hit:
        detail = _LIMIT_DETAIL.get(run.limit_hit, f"{run.limit_hit}: a sandbox limit was hit")
        return Classification(
            Outcome.RESOURCE_LIMIT,
            signature=f"{run.limit_hit} limit hit",
            detail=detail,
            evidence=_tail_evidence(run),
        )
    sig = _crash_signal(run, run.stderr_tail)
    if sig is not None:
        absent = _device_absent_failure(run)
        if absent:  # it aborted because the device is absent: not a TVM crash
            return _needs_gpu(absent, needs, (absent,))
        ended = _uncaught_before_crash(run)
        if ended is not None:
            # The script had already ended in an uncaught error; the crash came after it, while
            # the interpreter shut down: the error is the run's outcome.
            exited = replace(run, exit_code=1, signal=None)
            cls = classify(exited, script=script, needs=needs, environment=environment)
            note = (f"The process then crashed while shutting down "
                    f"({SIGNAL_NAMES.get(sig, f'signal {sig}')}), after the error.")
            return replace(cls, detail=f"{cls.detail} {note}".strip())
        return _crash(sig, run)
    if run.signal == 9 or run.exit_code in (137, -9):
        return Classification(
            Outcome.RESOURCE_LIMIT,
            signature="killed by SIGKILL",
            detail="memory: the process was killed by SIGKILL, most likely for running out of memory",
            evidence=_tail_evidence(run),
        )
    if run.signal is not None:
        return Classification(
            Outcome.CRASH,
            signature=f"killed by {SIGNAL_NAMES.get(run.signal, 'signal')} (signal {run.signal})",
            detail=f"The process was killed by signal {run.signal}.",
            evidence=_tail_evidence(run),
        )
    if run.exit_code == 0:
        caught_end = _caught_at_the_end(run, script, needs, env)
        if caught_end is not None:
            return caught_end
        last = _last_line(run.stdout_tail)
        evidence = [normalize_paths(last)] if last else []
        detail = ""
        caught = parse_last_error(run.stderr_tail) or parse_last_error(run.stdout_tail)
        if caught is not None and caught.frames:
            # The script printed a traceback it caught, and still exited normally.
            detail = "The script exited normally, but printed an error it caught."
            evidence.append(normalize_paths(caught.header))
        passed = Classification(
            Outcome.PASSED, signature="exit code 0", detail=detail, evidence=tuple(evidence)
        )
        return _not_a_repro(script, passed, import_report=True) or passed
    err = parse_last_error(run.stderr_tail) or parse_last_error(run.stdout_tail)
    if err is None:
        return _no_traceback(run, needs, env)
    return _incomplete(err, run, script) or _with_locations(
        _classify_error(err, run, script, needs, env), err
    )


# --------------------------------------------------------------------------------------------
# Not a repro: a fragment of a longer program, or imports and nothing else (bot.fragments).


def _read_before_bound_names(script: str) -> tuple[str, ...]:
    """The module-level names whose first binding statement reads them first (``mod =
    seq(mod)`` with no ``mod`` above)."""
    tree = _tree(script)
    if tree is None:
        return ()
    names: list[str] = []
    for stmt in ast.walk(tree):
        if isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names += [t.id for t in targets if isinstance(t, ast.Name) and t.id not in names]
    return tuple(n for n in names[:50] if read_before_bound(script, n))


def _fragment(names: tuple[str, ...], signature: str, evidence: tuple[str, ...]) -> Classification:
    return Classification(
        Outcome.NO_REPRO, signature=signature, detail=fragment_reason(names), evidence=evidence
    )


def _unbound_first(script: str, name: str) -> tuple[str, ...]:
    """``name`` first, then the script's other never-bound names (when the analysis is sure)."""
    u = unbound_names(script)
    rest = tuple(n for n in u.names if n != name) if u.sure else ()
    return (name, *rest)


def _binds(script: str, name: str) -> bool:
    """``script`` binds ``name`` somewhere (an import, an assignment, a def, an argument), or
    cannot be read."""
    tree = _tree(script)
    if tree is None:
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id == name:
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
            return True
        if isinstance(node, ast.alias) and node.name == "*":
            return True
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) \
                and node.name == name:
            return True
        if isinstance(node, ast.arg) and node.arg == name:
            return True
    return False


_UNDEFINED_MODULE_RE = lazyre.compile(r"\berror: Undefined variable: (\w+)\b")
# Calls that build or run a TVM program: once one of them ran, the script is a program, not a
# fragment that lacks the module it works on.
_COMPILES_RE = lazyre.compile(
    r"\b(?:compile|build|VirtualMachine|Executable|create_executor|evaluate)\s*\("
    r"|\bvm\s*\[|\b(?:time_evaluator|export_library|load_module)\s*\(")


def _compiled_before(script: str, err: PyError) -> bool:
    """Before the module-level line where ``err`` was raised, a module-level statement of
    ``script`` built or ran a TVM program (:data:`_COMPILES_RE`), itself or by calling one of
    the script's functions that does."""
    line = next((f.line for f in err.frames if f.kind == "script"), 0)
    if not line:
        return False
    tree = _tree(script)
    if tree is None:
        return False
    lines = script.split("\n")

    def source(node: ast.stmt) -> str:
        return "\n".join(lines[node.lineno - 1: node.end_lineno or node.lineno])

    # raised inside one of the script's functions (a pasted pytest test): the statements of that
    # function above the failing line count too
    deepest = next((f.line for f in reversed(err.frames) if f.kind == "script"), 0)
    for func in ast.walk(tree):
        if isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef) and func.lineno < deepest \
                <= (func.end_lineno or func.lineno):
            for stmt in func.body:
                if stmt.lineno >= deepest:
                    break
                if _COMPILES_RE.search(source(stmt)):
                    return True
    # the script's own functions that build or run the program (`def run(opt_level): ...
    # tvm.compile(...)`): a module-level call to one of them counts as the build
    builders = {f.name for f in tree.body
                if isinstance(f, ast.FunctionDef) and _COMPILES_RE.search(source(f))}
    for stmt in tree.body:
        if stmt.lineno >= line:
            return False
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if _COMPILES_RE.search(source(stmt)) or any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in builders
                for n in ast.walk(stmt)):
            return True
    return False


def _incomplete(err: PyError, run: RunResult, script: str) -> Classification | None:
    """The run failed on a name the script never binds anywhere (Python's ``NameError``), or on
    a ``return`` outside any function: the script is a fragment, and its failure says nothing
    about the reported bug. (TVMScript's "Undefined variable" stays TVM's: reports about the
    parser's handling of undefined names are common.)"""
    if not script:
        return None
    undefined = _UNDEFINED_MODULE_RE.search(err.text) if err.short_type in (
        "DiagnosticError", "ParserError") else None
    if undefined and undefined.group(1) in MODULE_ALIASES and not _binds(script,
                                                                       undefined.group(1)):
        # TVMScript met `np.float16(...)` with no `import numpy as np` in the script: the
        # script's own forgotten import, which the parser reports in its own words
        name = undefined.group(1)
        return Classification(
            Outcome.PYTHON_ERROR, signature=normalize_paths(err.header)[:300],
            detail=(f"The script uses `{name}` inside TVMScript without importing it; TVMScript's "
                    "parser reports that as an undefined variable. Add the import and comment "
                    "`/retest`."),
            evidence=(normalize_paths(err.header),))
    for e in (err, *_chained_causes(run)):
        m = NAME_ERROR_RE.search(e.text) if e.short_type == "NameError" else None
        if m and _compiled_before(script, e):
            # The script built and ran its TVM program before this name stopped it (a slip in
            # its reference check: `refs` for `ref`, a forgotten `eps`): the script's own error,
            # not a fragment of a longer program.
            return None
        if m and unused_module(script):
            # `LegalizeOps()(mod)` beside an `@I.ir_module class Conv` nothing uses: the module
            # the script wrote is the one it meant (its own slip), not a missing part.
            return None
        at_module = bool(e.frames) and e.frames[-1].kind == "script" and \
            e.frames[-1].func == "<module>"
        if m and (never_bound(script, m.group(1)) or read_before_bound(script, m.group(1)) or (
                at_module and bound_only_in_functions(script, m.group(1)))):
            names = _unbound_first(script, m.group(1))
            return _fragment(names, normalize_paths(e.header), (normalize_paths(e.header),))
        if m and m.group(1) in MODULE_ALIASES:
            # A forgotten ``import tvm`` stopped it first, but the script also reads names it
            # never defines (``mod``, ``onnx_model``): a fragment all the same.
            u = unbound_names(script)
            # (or reads one before the statement that binds it: ``mod = seq(mod)``)
            first_read = _read_before_bound_names(script)
            if u.sure and (u.module_level or first_read):
                return _fragment(u.module_level or first_read, normalize_paths(e.header),
                                 (normalize_paths(e.header),))
        if e.short_type == "SyntaxError":
            om = OUTSIDE_FUNCTION_RE.search(e.text)
            if om:
                return Classification(
                    Outcome.NO_REPRO,
                    signature=normalize_paths(e.header),
                    detail=(
                        f"The script is the body of a function pasted alone (`{om.group(1)}` "
                        "outside any function). Please add the whole function and the code that "
                        "calls it, so the bot can run it."
                    ),
                    evidence=(normalize_paths(e.header),),
                )
    return None


def _not_a_repro(
    script: str, passed: Classification, *, import_report: bool = False
) -> Classification | None:
    """A run that passed says nothing when the script only imports (unless the report is about
    importing: ``import_report``), or when its module-level code reads names it never binds
    (their ``NameError`` was caught, or their code skipped)."""
    if not script:
        return None
    mods = imports_only(script)
    if mods and not import_report:
        return Classification(
            Outcome.NO_REPRO,
            signature="the script only imports modules",
            detail=(
                f"The script only imports {quoted_names(mods)} (they import fine here) and runs "
                "nothing else, so it cannot show the reported problem. Please add the code that "
                "fails after the imports."
            ),
            evidence=passed.evidence,
        )
    u = unbound_names(script)
    if u.sure and u.module_level:
        return _fragment(
            u.names, f"uses {', '.join(u.module_level[:6])} without defining them", passed.evidence
        )
    return None


def _with_locations(cls: Classification, err: PyError) -> Classification:
    """A TVM-side failure's evidence gains where in TVM it failed (see :class:`Locations`)."""
    if cls.outcome not in (Outcome.INTERNAL_ERROR, Outcome.TVM_ERROR):
        return cls
    frames = [(f.path, f.func) for f in err.frames] + cpp_frames(list(err.lines))
    text = err.text
    frame = _innermost_script_frame(err)
    if frame is not None and len(pass_names(frame.source)) == 1:
        # The script's line that called into TVM runs one pass: the failure is inside it.
        text = f"{frame.source}\n{text}"
    loc = locations_of(frames, text)
    return replace(cls, evidence=(*cls.evidence, *loc.evidence())) if loc else cls


def _last_line(text: str) -> str:
    return next((ln.strip() for ln in reversed(split_lines(text)) if ln.strip()), "")


def _tail_evidence(run: RunResult, n: int = 3) -> tuple[str, ...]:
    text = run.stderr_tail if run.stderr_tail.strip() else run.stdout_tail
    lines: list[str] = []
    for ln in reversed(split_lines(text)):  # only the last few non-blank lines are needed
        if ln.strip():
            lines.append(ln.rstrip())
            if len(lines) == n:
                break
    return tuple(normalize_paths(ln) for ln in reversed(lines))


def _device_absent_failure(run: RunResult) -> str:
    """The line that says the run failed because the device (or its runtime) is absent."""
    for text in (run.stderr_tail, run.stdout_tail):
        if not device_absent(text):  # one pass over the whole text first
            continue
        for line in split_lines(text):
            if line and device_absent(line) and DEVICE_FAILURE_LINE_RE.search(line):
                return line.strip()
    return ""


def _no_traceback(run: RunResult, needs: tuple[str, ...], env: Mapping[str, str]) -> Classification:
    both = split_lines(run.stderr_tail) + split_lines(run.stdout_tail)
    code = run.exit_code
    absent = _device_absent_failure(run)
    if absent:  # "Check failed: ... Device API cuda is not enabled" is no TVM bug
        return _needs_gpu(absent, needs, (absent,))
    for line in both:
        if "Check failed" in line:
            loc = locations_of(cpp_frames(both), line)
            return Classification(
                Outcome.INTERNAL_ERROR,
                signature=normalize_paths(line.strip()),
                evidence=(normalize_paths(line.strip()), *loc.evidence()),
            )
    for line in both if device_absent(run.stderr_tail) or device_absent(run.stdout_tail) else ():
        if line and device_absent(line):
            return _needs_gpu(line.strip(), needs, (line.strip(),))
    for line in both:
        if BACKTRACE_NOTE in line:
            return Classification(
                Outcome.TVM_ERROR,
                signature=line.strip(),
                detail=(
                    "TVM raised a diagnostic error but hid its message "
                    "(TVM_BACKTRACE was not set for the run)."
                ),
                evidence=(line.strip(),),
            )
    tail = _tail_evidence(run)
    for line in reversed(tail):
        if WRONG_RESULT_RE.search(line):
            return Classification(
                Outcome.WRONG_RESULT,
                signature=line.strip(),
                detail=f"The script reported a wrong result and exited with code {code}.",
                evidence=tail,
            )
    return Classification(
        Outcome.PYTHON_ERROR,
        signature=f"exit code {code}",
        detail=f"The script exited with code {code} without a Python traceback.",
        evidence=tail or (f"exit code {code}, no output",),
    )


_DID_YOU_MEAN_RE = lazyre.compile(r"Did you mean:? '(\w+)'\?")


def _typo_of(attr: str, message: str) -> str:
    """The name Python suggests for a missing attribute when it is one or two keystrokes from
    what the script wrote (``sofmax`` for ``softmax``), else ""."""
    m = _DID_YOU_MEAN_RE.search(message)
    if m is None:
        return ""
    want = m.group(1)
    return want if _edits(attr.lower(), want.lower()) <= 2 and len(attr) >= 4 else ""


def _edits(a: str, b: str) -> int:
    """Levenshtein distance of two short names (names, not texts: bounded by their length)."""
    if abs(len(a) - len(b)) > 2 or len(a) > 80 or len(b) > 80:
        return 99
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def _needs_gpu(line: str, needs: tuple[str, ...], evidence: tuple[str, ...]) -> Classification:
    wanted = [n for n in needs if n in GPU_DEVICES]
    m = re.search(r"\b(cuda|rocm|vulkan|metal|opencl)\b", line, re.IGNORECASE)
    device = wanted[0] if wanted else (m.group(1).lower() if m else "a GPU")
    return Classification(
        Outcome.NEEDS_GPU,
        signature=normalize_paths(line),
        detail=f"The script needs {device}, which this worker does not have.",
        evidence=tuple(normalize_paths(e) for e in evidence),
    )


def _innermost_script_frame(err: PyError) -> Frame | None:
    return next((f for f in reversed(err.frames) if f.kind == "script"), None)







def _api_mismatch(err: PyError, name: str, evidence: tuple[str, ...]) -> Classification:
    change = lookup(name)
    if change is not None:
        detail = change.describe(name)
    else:
        detail = f"`{name}` does not exist in this TVM; the script targets another TVM version."
    return Classification(
        Outcome.API_MISMATCH,
        signature=normalize_paths(err.header),
        detail=detail,
        evidence=evidence,
    )





def _classify_error(
    err: PyError,
    run: RunResult,
    script: str,
    needs: tuple[str, ...],
    env: Mapping[str, str],
) -> Classification:
    short = err.short_type
    text = err.text
    frame = _innermost_script_frame(err)
    evidence = [normalize_paths(ln) for ln in err.lines[:5] if ln.strip()]
    if frame is not None:
        evidence.append(
            normalize_paths(f'File "{frame.path}", line {frame.line}: {frame.source}'.rstrip(": "))
        )
    ev = tuple(evidence)
    signature = normalize_paths(
        err.header
        if err.message or len(err.lines) == 1
        else f"{err.header.rstrip()} {first_nonempty(err.lines[1:])}".strip()
    )
    if err.message.startswith(TRACEBACK_HEAD):
        # TVM's own C++ backtrace ("TVMError: Traceback ...", "  0: tvm::...", "[bt] (0) ..."):
        # the message is the exception line after it.
        inner = next(
            (ln.strip() for ln in reversed(err.lines[1:]) if LOOSE_HEADER_RE.match(ln.strip())),
            "",
        )
        if inner:
            signature = normalize_paths(inner)

    if short == "MemoryError":
        return Classification(
            Outcome.RESOURCE_LIMIT,
            signature=signature,
            detail="memory: the script ran out of memory (MemoryError)",
            evidence=ev,
        )

    # 0. The script reads an input file (a model, data) that the issue does not include.
    missing_file = _missing_input_file(short, text, script)
    if missing_file:
        return _missing(
            missing_file, signature, ev,
            detail=f"The script reads `{missing_file}`, which is not in the issue: attach it, "
            "or build it in the script, so the bot can get further.",
        )

    # 1. The device is absent on this worker (TVM or the driver says so).
    if device_absent(text):
        return _needs_gpu(signature, needs, ev)

    # 2./3. Import and attribute errors: another TVM API, or a missing package.
    if short in {"ModuleNotFoundError", "ImportError"}:
        nm = NO_MODULE_RE.search(text)
        if nm:
            mod = nm.group(1)
            if mod == "tvm":
                return Classification(
                    Outcome.INFRA_ERROR,
                    signature=signature,
                    detail="The TVM under test could not be imported on this worker.",
                    evidence=ev,
                )
            if is_tvm_name(mod):
                return _api_mismatch(err, mod, ev)
            return _missing(mod.split(".")[0], signature, ev)
        cm = CANNOT_IMPORT_RE.search(text)
        if cm:
            name, mod = cm.group(1), cm.group(2)
            if "partially initialized module" in text:
                pass  # a circular import: the script's own doing
            elif is_tvm_name(mod):
                return _api_mismatch(err, f"{mod}.{name}", ev)
            elif mod.split(".")[0] not in {"__main__"}:
                return _missing(
                    mod.split(".")[0],
                    signature,
                    ev,
                    detail=f"The installed `{mod.split('.')[0]}` has no `{name}` (another version is expected).",
                )
        lib = shared_library(text)
        if lib:
            return _missing(lib, signature, ev)
        # A frontend re-raises "X is required ... pip install X" from "No module named 'X'".
        pkg = required_package(text)
        if pkg is not None:
            return _missing(pkg, signature, ev)
        for cause in _chained_causes(run):
            cm2 = NO_MODULE_RE.search(cause.text)
            if cm2 is None:
                continue
            mod = cm2.group(1)
            if is_tvm_name(mod):
                return _api_mismatch(err, mod, (*ev, normalize_paths(cause.header)))
            if mod.split(".")[0] != "__main__":
                return _missing(mod.split(".")[0], signature, (*ev, normalize_paths(cause.header)))
    elif "install" in err.message.lower():
        # TVM checks for an optional package itself ("RuntimeError: psutil is required by the
        # meta schedule search. Install it with: pip install psutil").
        pkg = required_package(err.message)
        if pkg is not None:
            return _missing(pkg, signature, ev)
    if short == "AttributeError":
        am = MODULE_ATTR_RE.search(text)
        if am and is_tvm_name(am.group(1)):
            mod, attr = am.group(1), am.group(2)
            script_refers = frame is not None and attr in frame.source
            if _typo_of(attr, err.message) and lookup(f"{mod}.{attr}") is None:
                # "'tvm.relax.op.nn' has no attribute 'sofmax'. Did you mean: 'softmax'?": the
                # script's own slip of the keyboard, not an API of another TVM
                return Classification(
                    Outcome.PYTHON_ERROR, signature=signature,
                    detail=f"The script misspells a TVM name: `{mod}.{attr}` (Python suggests "
                    f"`{_typo_of(attr, err.message)}`).", evidence=ev)
            if script_refers or not raised_in_tvm(err):
                return _api_mismatch(err, f"{mod}.{attr}", ev)
        om = OBJECT_ATTR_RE.search(text)
        if om:
            owner = (om.group(1) or om.group(2) or om.group(3) or "").rsplit(".", 1)[-1]
            change = lookup_member(owner, om.group(4))
            if change is not None:
                return Classification(
                    Outcome.API_MISMATCH,
                    signature=signature,
                    detail=change.describe(change.name),
                    evidence=ev,
                )

    # A keyword argument TVM renamed ("call_tir() got an unexpected keyword argument
    # 'out_sinfo'"), raised as it is or through TVMScript's parser.
    km = UNEXPECTED_KEYWORD_RE.search(text)
    if km:
        kw_change = lookup_keyword(km.group(1), km.group(2))
        if kw_change is not None:
            return Classification(Outcome.API_MISMATCH, signature=signature,
                                  detail=kw_change.describe(), evidence=ev)
        # Any other keyword a TVM callable does not take (``relax.VirtualMachine(ex, dev,
        # profile=True)``), passed by the script's own line: written for another TVM.
        owner = _tvm_callable_given(text, km.group(2), script)
        if owner:
            return Classification(
                Outcome.API_MISMATCH, signature=signature,
                detail=f"This TVM's `{owner}` takes no `{km.group(2)}=` argument: the script was "
                "written for another TVM version.", evidence=ev)

    # TVMScript's parser (or another TVM wrapper) re-raised an import/attribute error about a
    # ``tvm.*`` name that the script's own source uses: the script targets another TVM API.
    if short not in {"AttributeError", "ModuleNotFoundError", "ImportError"}:
        stale = _stale_tvm_name(err, script)
        if stale is not None:
            return _api_mismatch(err, stale, ev)

    # TVM's deprecation warning, raised as an error because the script turns warnings into
    # errors (``warnings.simplefilter("error")``): the script uses an API on its way out.
    if short.endswith("Warning") and "deprecat" in err.message.lower() and (
            raised_in_tvm(err) or "tvm" in err.message):
        return Classification(
            Outcome.API_MISMATCH,
            signature=signature,
            detail="TVM deprecated what the script uses, and the script turns warnings into "
            "errors: " + normalize_paths(err.message.strip())[:300],
            evidence=ev,
        )

    # TVM says the form the script uses is gone (a removed target-string form, a dropped
    # argument): another TVM API, not a bug in this one.
    if REMOVED_FORM_RE.search(err.message) and (
        raised_in_tvm(err) or is_tvm_name(err.type)
        or short in TVM_ERROR_TYPES
    ):
        return Classification(
            Outcome.API_MISMATCH,
            signature=signature,
            detail="The current TVM no longer accepts what the script uses: "
            + normalize_paths(err.message.strip())[:300],
            evidence=ev,
        )

    renamed = _renamed_config_option(err.message)
    if renamed is not None:
        return Classification(Outcome.API_MISMATCH, signature=signature, detail=renamed,
                              evidence=ev)

    if TARGET_AS_DEVICE_RE.search(err.message) and raised_in_tvm(err):
        return Classification(
            Outcome.API_MISMATCH,
            signature=signature,
            detail="The current TVM no longer takes a target's name as a device: "
            '`tvm.device("llvm")` is `tvm.cpu()` (or `tvm.device("cpu")`) now.',
            evidence=ev,
        )

    # The script's own device check failed ("assert dev.exist", "raise RuntimeError('no GPU')").
    if any(n in GPU_DEVICES for n in needs) and not _worker_has_gpu(env) and frame is not None:
        own = err.frames[-1] is frame and not raised_in_tvm(err)
        if own and (
            (short == "AssertionError" and EXIST_CHECK_RE.search(frame.source))
            # (an assert's message naming cuda is the script's check of what it built: "no
            # device module generated for target cuda" is a wrong result, not a missing GPU)
            or (short not in SCRIPT_ERROR_TYPES and short != "AssertionError"
                and DEVICE_WORD_RE.search(err.message))
        ):
            return _needs_gpu(signature, needs, ev)

    # 4. The script's own numeric check failed.
    if (short == "AssertionError" or TESTING_MSG_RE.search(text)) and (
        TESTING_MSG_RE.search(text)
        or any(TESTING_PATH_RE.search(f.path.replace("\\", "/")) for f in err.frames)
        or (err.frames and err.frames[-1].kind == "script")
        or not err.frames
    ):
        near = check_within_rounding(text)
        if near is not None:
            # (``rtol=1e-5`` and no ``atol``: a value near zero right to float precision fails)
            return Classification(
                Outcome.PASSED,
                signature=f"max difference {near[0]:g} (relative {near[1]:g})",
                detail="The script's own check of the result failed, but only by float32 "
                f"rounding: the largest difference is {near[0]:g} (relative {near[1]:g}). The "
                "results agree to float precision; this is not a wrong result.",
                evidence=ev,
            )
        return Classification(
            Outcome.WRONG_RESULT,
            signature=_wrong_signature(err, signature),
            detail="The script's own check of the result failed.",
            evidence=ev,
        )
    if (
        frame is not None
        and err.frames
        and err.frames[-1] is frame
        and (frame.source.startswith(("raise", "sys.exit", "exit(")) or not frame.source)
        and WRONG_RESULT_RE.search(err.message)
        and not raised_in_tvm(err)
    ):
        return Classification(
            Outcome.WRONG_RESULT,
            signature=signature,
            detail="The script's own check of the result failed.",
            evidence=ev,
        )

    # 5. TVM's own checks. (A check TVM raises as ValueError -- "ValueError: Check failed: ...
    # Literal value 3000000000 exceeds range of int32" -- is TVM refusing the input on purpose:
    # a user-facing error, below. A TypeError "Check failed: ... mismatched types" stays TVM's
    # own check, as triagers read it. The VM's check of the arguments against the function's
    # signature -- "Check failed: input_shape[i] == reg (17 vs. 16) : ErrorContext(fn=main,
    # loc=param[0], ...)" -- is the caller's wrong input refused: a user-facing error too.)
    if (short == "InternalError" or ("Check failed" in text and short not in _USER_CHECK_TYPES)) \
            and VM_ARGUMENT_CHECK not in text:
        check = next((ln.strip() for ln in err.lines if "Check failed" in ln), "")
        return Classification(
            Outcome.INTERNAL_ERROR,
            signature=signature
            if "Check failed" in signature or not check
            else normalize_paths(check),
            detail="A TVM internal check failed.",
            evidence=ev,
        )

    # 6. Any other error raised inside TVM.
    if (
        is_tvm_name(err.type)
        or short in TVM_ERROR_TYPES
        or raised_in_tvm(err)
    ):
        extra = next((ln.strip() for ln in err.lines if ln.startswith("Error message:")), "")
        if extra and extra not in ev:
            ev = (*ev, normalize_paths(extra))
        return Classification(
            Outcome.TVM_ERROR,
            signature=signature,
            detail=f"TVM raised `{short}`.",
            evidence=ev,
        )

    # 6b. The script's own exception, raised by a ``raise`` of its own while handling a TVM
    # error (``raise Failed(...) from e``): TVM's failure under the script's name.
    wrapped = _reraised_tvm_error(err, run, frame)
    if wrapped is not None:
        internal = wrapped.short_type == "InternalError" or "Check failed" in wrapped.text
        return Classification(
            Outcome.INTERNAL_ERROR if internal else Outcome.TVM_ERROR,
            signature=signature,
            detail=f"The script raised `{short}` from a TVM error: "
            + normalize_paths(wrapped.header.strip())[:300],
            evidence=(*ev, normalize_paths(wrapped.header)),
        )

    # 6c. The script's own ``except`` block failed (``print(e.msg)``) while handling a TVM error:
    # TVM's failure is what happened; the handler's slip came after it.
    handled = _handler_failed_on_tvm_error(err, run, frame)
    if handled is not None:
        internal = handled.short_type == "InternalError" or "Check failed" in handled.text
        return Classification(
            Outcome.INTERNAL_ERROR if internal else Outcome.TVM_ERROR,
            signature=normalize_paths(handled.header.strip())[:300],
            detail=f"TVM raised this; then the script's own error handler failed with {signature}",
            evidence=(normalize_paths(handled.header), *ev),
        )

    # 7. The script's own code.
    return Classification(
        Outcome.PYTHON_ERROR,
        signature=signature,
        detail=f"The script itself raised `{short}` (not TVM).",
        evidence=ev,
    )





def _reraised_tvm_error(err: PyError, run: RunResult, frame: Frame | None) -> PyError | None:
    """The TVM error that the script's ``raise`` statement (its innermost frame, where the
    last exception was raised) turned into its own exception, when the one chained right
    before the last is raised in TVM."""
    if frame is None or not err.frames or err.frames[-1] is not frame or \
            not frame.source.startswith("raise"):
        return None
    causes = _chained_causes(run)
    if not causes:
        return None
    cause = causes[0]
    if is_tvm_name(cause.type) or cause.short_type in TVM_ERROR_TYPES or raised_in_tvm(cause) \
            or "Check failed" in cause.text:
        return cause
    return None


_USER_CHECK_TYPES = frozenset({"ValueError"})
_CALLABLE_KEYWORD_RE = lazyre.compile(r"([\w.]+)\(\) got an unexpected keyword argument '(\w+)'")


def _tvm_callable_given(text: str, keyword: str, script: str) -> str:
    """The TVM callable (``VirtualMachine``) that refused ``keyword``, when the script calls it
    through a ``tvm`` name with that keyword on the same line; else ""."""
    m = _CALLABLE_KEYWORD_RE.search(text)
    if m is None:
        return ""
    parts = [p for p in m.group(1).split(".") if p and not p.startswith("__")]
    if not parts:
        return ""
    name = parts[-1]
    call = re.search(rf"(?m)^[^#\n]*?\b([\w.]*\.)?{re.escape(name)}\s*\([^\n]*\b{re.escape(keyword)}\s*=",
                     script)
    if call is None:
        return ""
    prefix = re.escape((call.group(1) or "").split(".")[0] or name)
    # ``tvm.X(...)``, or a name imported from tvm: ``from tvm import relax``, ``import tvm.relax
    # as rx``, ``from tvm.relax import VirtualMachine``
    if prefix == "tvm" or re.search(
            rf"(?m)^\s*(?:from\s+tvm[\w.]*\s+import\b[^\n]*\b{prefix}\b"
            rf"|import\s+tvm[\w.]*\s+as\s+{prefix}\b)", script):
        return name
    return ""


def _handler_failed_on_tvm_error(err: PyError, run: RunResult, frame: Frame | None
                                 ) -> PyError | None:
    """The TVM error the script's ``except`` block was handling when the block's own code
    failed ("During handling of the above exception, another exception occurred")."""
    if frame is None or not err.frames or err.frames[-1] is not frame:
        return None
    if not any("During handling of the above exception" in t
               for t in (run.stderr_tail, run.stdout_tail)):
        return None
    causes = _chained_causes(run)
    if not causes:
        return None
    cause = causes[0]
    # (TVM's own error types only: a KeyError somewhere in TVM's Python may be control flow
    # the script's handler was meant to see)
    if is_tvm_name(cause.type) or cause.short_type in TVM_ERROR_TYPES | {"InternalError"} \
            or "Check failed" in cause.text:
        return cause
    return None


def _chained_causes(run: RunResult) -> list[PyError]:
    """The exceptions chained before the last one ("The above exception was the direct cause
    of the following exception", "During handling of the above exception"), innermost first."""
    for text in (run.stderr_tail, run.stdout_tail):
        errors = parse_errors(text)
        if errors:
            return errors[:-1][::-1]
    return []


_CONFIG_OPTION_RE = lazyre.compile(
    r"Invalid config option '(?P<name>[\w.]+)'\s*candidates are:(?P<cands>[^\n]{0,20000})")


def _renamed_config_option(message: str) -> str | None:
    """TVM refuses a ``PassContext`` config option and lists the ones it has: when none of them
    lives under the option's namespace any more (``tir.ptx_ldg32`` where there are only
    ``tirx.*`` and ``s_tir.*`` options), the namespace was renamed: the script was written for
    another TVM. An unknown option in a namespace that still exists is the script's own
    misspelling and stays TVM's error. The comment names the new spelling when one option
    has the same last part."""
    m = _CONFIG_OPTION_RE.search(message)
    if m is None or "." not in m.group("name"):
        return None
    name = m.group("name")
    cands = [c.strip() for c in m.group("cands").split(",") if c.strip()]
    space, leaf = name.split(".", 1)[0], name.rsplit(".", 1)[-1]
    if not cands or any(c.split(".", 1)[0] == space for c in cands):
        return None
    same = [c for c in cands if c.rsplit(".", 1)[-1] == leaf]
    new = f" It is `{same[0]}` now." if len(same) == 1 else ""
    return (f"This TVM has no `{space}.*` pass options: `{name}` was written for another TVM "
            f"version.{new}")


def _stale_tvm_name(err: PyError, script: str) -> str | None:
    """``tvm.X.Y`` when the message is an import/attribute error about a ``tvm.*`` name that the
    script uses (a wrapper such as TVMScript's parser re-raised it as its own error type)."""
    am = MODULE_ATTR_RE.search(err.text)
    if am and is_tvm_name(am.group(1)):
        mod, attr = am.group(1), am.group(2)
        if err.short_type in WRAPPER_TYPES and (
            err.short_type in {"DiagnosticError", "ParserError"}
            or re.search(rf"\.{re.escape(attr)}\b", script)
        ):
            return f"{mod}.{attr}"
    cm = CANNOT_IMPORT_RE.search(err.text)
    if cm and is_tvm_name(cm.group(2)) and re.search(rf"\b{re.escape(cm.group(1))}\b", script):
        return f"{cm.group(2)}.{cm.group(1)}"
    return None


def _wrong_signature(err: PyError, fallback: str) -> str:
    for line in err.lines:
        if line.strip().startswith("Mismatched elements"):
            return line.strip()
    return fallback





def _missing_input_file(short: str, text: str, script: str) -> str:
    """The file a FileNotFoundError (or TVM's "cannot find file") names, when the script names
    it as a literal (an input the reporter had and did not share); "" otherwise."""
    if short not in NO_SUCH_FILE_TYPES:
        return ""
    m = NO_SUCH_FILE_RE.search(text)
    if not m:
        return ""
    path = m.group(1) or m.group(2)
    name = path.rsplit("/", 1)[-1]
    if not name or (path not in script and name not in script):
        return ""
    return path


def _missing(
    package: str, signature: str, evidence: tuple[str, ...], *, detail: str = ""
) -> Classification:
    return Classification(
        Outcome.MISSING_DEPENDENCY,
        signature=signature,
        detail=detail or f"`{package}` is not installed on this worker.",
        evidence=evidence,
    )

