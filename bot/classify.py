"""Stage 5: what did the run do? Exactly one :class:`~bot.models.Outcome` per run.

Pure: reads only the :class:`~bot.models.RunResult` (and the packaged API-change table).
The order of the rules matters and is the policy:

1. the sandbox cut the run: ``timeout`` (wall time) or ``resource-limit`` (memory, processes,
   output, disk);
2. the process died by a signal (or a shell's ``128+N`` exit code, or faulthandler's
   "Fatal Python error: Segmentation fault" with no Python traceback after it): ``crash``;
3. exit status 0: ``passed`` (warnings on stderr do not matter);
4. otherwise the last Python exception decides, in this order: the device the script wants is
   absent (``needs-gpu``), an import/attribute error about a ``tvm.*`` name (``api-mismatch``,
   also when TVMScript's parser or another wrapper re-raised it as its own error), a missing
   non-TVM package (``missing-dependency``; an ImportError's chained causes and "X is
   required / pip install X" messages count), a failed numeric check in the script
   (``wrong-result``), TVM's own checks (``internal-error``), any other error raised inside TVM
   (``tvm-error``), and everything else is the script's own (``python-error``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from bot.api_changes import lookup, lookup_member
from bot.models import Classification, Outcome, Reported, RunResult
from bot.needs import GPU_DEVICES

# Signals that mean the process crashed (not killed by us).
CRASH_SIGNALS: dict[int, str] = {
    4: "Illegal instruction",
    5: "Trace/breakpoint trap",
    6: "Aborted",
    7: "Bus error",
    8: "Floating point exception",
    11: "Segmentation fault",
}
SIGNAL_NAMES: dict[int, str] = {
    4: "SIGILL",
    5: "SIGTRAP",
    6: "SIGABRT",
    7: "SIGBUS",
    8: "SIGFPE",
    9: "SIGKILL",
    11: "SIGSEGV",
    15: "SIGTERM",
}
_FATAL_RE = re.compile(
    r"Fatal Python error: (Segmentation fault|Aborted|Bus error|Floating point exception|"
    r"Illegal instruction)"
)
_FATAL_TO_SIGNAL = {name: sig for sig, name in CRASH_SIGNALS.items()}


_TRACEBACK_HEAD = "Traceback (most recent call last):"
_FRAME_RE = re.compile(r'^\s*File "(?P<path>[^"]*)", line (?P<line>\d+)(?:, in (?P<func>.*))?$')
_HEADER_RE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::(?P<msg>.*))?$")
# A bare exception line found without a traceback header (the tail may have cut it off).
_LOOSE_HEADER_RE = re.compile(
    r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Failure|Interrupt))"
    r"(?::(?P<msg>.*))?$"
)
_LOG_LINE_RE = re.compile(r"^\[\d{2}:\d{2}:\d{2}\] ")
_BACKTRACE_NOTE = "note: run with `TVM_BACKTRACE=1`"

# The device the script wants is absent on this worker.
_DEVICE_ABSENT_RE = re.compile(
    r"Device API (?:cuda|rocm|vulkan|metal|opencl|gpu) is not enabled"
    r"|no CUDA-capable device"
    r"|CUDA_ERROR_NO_DEVICE|cudaErrorNoDevice|hipErrorNoDevice"
    r"|Found no NVIDIA driver|NVIDIA driver on your system is too old"
    r"|CUDA driver version is insufficient"
    r"|Torch not compiled with CUDA enabled"
    r"|lib(?:cuda|cudart|nvrtc|cublas|cudnn|nvinfer|amdhip64|vulkan|OpenCL)[\w.\-]*: cannot open shared object"
    r"|(?:cannot|can't|could not|unable to) find[^\n]{0,40}\b(?:cuda|nvcc|rocm|hip|vulkan|opencl|gpu)\b"
    r"|CUDA_ERROR_(?:NOT_INITIALIZED|INVALID_DEVICE|NO_DEVICE)|cudaErrorInsufficientDriver"
    r"|cudaErrorInitializationError|CUDA: initialization error"
    r"|No such file or directory: '(?:nvcc|nvidia-smi|hipcc|rocm-smi)'"
    r"|\b(?:cuda|gpu|rocm|vulkan|opencl|metal|nvcc|hipcc)\b[^\n]{0,40}\b(?:is |are )?(?:not available|unavailable|"
    r"not enabled|not found|not detected|not present|does not exist|doesn't exist)",
    re.IGNORECASE,
)
_DEVICE_WORD_RE = re.compile(r"\b(?:cuda|gpu|rocm|vulkan|opencl|metal|nvcc)\b", re.IGNORECASE)
_EXIST_CHECK_RE = re.compile(r"\.exist\b|is_available\(\)|device_count\(\)")

# Words that say "the numbers are wrong".
WRONG_RESULT_RE = re.compile(
    r"mismatch|not equal|not close|are not (?:the )?same|differ|"
    r"wrong (?:result|output|answer|value)|incorrect (?:result|output|value|answer)|"
    r"inconsistent|results? (?:do not|don't) match",
    re.IGNORECASE,
)
_TESTING_PATH_RE = re.compile(r"numpy/testing/|/tvm/testing/|torch/testing/|/unittest/case\.py")
_TESTING_MSG_RE = re.compile(
    r"Mismatched elements|Not equal to tolerance|Arrays are not (?:almost )?equal|"
    r"Items are not equal|Tensor-likes are not (?:close|equal)|Scalars are not (?:close|equal)",
)

_SITE_RE = re.compile(r"(?:/[^\s\"'()]*)?/(?:site|dist)-packages/")


@dataclass(frozen=True)
class Frame:
    path: str
    line: int
    func: str
    source: str = ""

    @property
    def kind(self) -> str:
        """``tvm`` (TVM's Python or C++), ``lib`` (stdlib / other packages) or ``script``."""
        return frame_kind(self.path)


@dataclass(frozen=True)
class PyError:
    """The last Python exception printed in an output stream."""

    type: str  # as printed, e.g. "tvm.error.InternalError"
    message: str  # the first line of the message (may be "")
    lines: tuple[str, ...]  # the header line and the message lines after it
    frames: tuple[Frame, ...] = ()

    @property
    def short_type(self) -> str:
        return self.type.rsplit(".", 1)[-1]

    @property
    def header(self) -> str:
        return self.lines[0] if self.lines else self.type

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def frame_kind(path: str) -> str:
    p = path.replace("\\", "/")
    if (
        "/tvm/" in p
        or "/tvm_ffi/" in p
        or p.startswith(("tvm/", "tvm_ffi/", "python/tvm"))
        or p.endswith((".cc", ".h", ".cpp", ".cu", ".hpp", ".pxi", ".pyx"))
        or p == "<unknown>"
    ):
        return "tvm"
    if "-packages/" in p or "/lib/python3" in p or p.startswith("<frozen") or "/lib64/python3" in p:
        return "lib"
    return "script"


def normalize_paths(text: str) -> str:
    """Replace the worker's install paths with ``<site-packages>/`` (stable, and private)."""
    return _SITE_RE.sub("<site-packages>/", text)


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _parse_traceback(lines: list[str], start: int) -> PyError | None:
    """The exception of the traceback whose header is ``lines[start]``."""
    frames: list[Frame] = []
    j = start + 1
    while j < len(lines):
        line = lines[j]
        m = _FRAME_RE.match(line)
        if m and line.startswith(" "):
            frames.append(Frame(m["path"], int(m["line"]), (m["func"] or "").strip()))
        elif line.startswith((" ", "\t")) or not line.strip():
            src = line.strip()
            if frames and not frames[-1].source and src and not set(src) <= set("^~ "):
                f = frames[-1]
                frames[-1] = Frame(f.path, f.line, f.func, src)
        else:
            break
        j += 1
    if j < len(lines):
        hm = _HEADER_RE.match(lines[j].rstrip())
        if hm:
            return PyError(
                type=hm["type"],
                message=(hm["msg"] or "").strip(),
                lines=_message_lines(lines, j),
                frames=tuple(frames),
            )
    return None


def _is_traceback_head(line: str) -> bool:
    return line.strip() == _TRACEBACK_HEAD and not line.startswith("  |")


def parse_errors(text: str) -> list[PyError]:
    """Every exception printed with a traceback in ``text``, in order (a chain's causes first)."""
    lines = _lines(text)
    out = []
    for i, line in enumerate(lines):
        if _is_traceback_head(line):
            err = _parse_traceback(lines, i)
            if err is not None:
                out.append(err)
    return out


def parse_last_error(text: str) -> PyError | None:
    """The last exception printed in ``text`` (a traceback, or a bare ``XxxError: ...`` line)."""
    lines = _lines(text)
    start = None
    for i in range(len(lines) - 1, -1, -1):
        if _is_traceback_head(lines[i]):
            start = i
            break
    if start is not None:
        err = _parse_traceback(lines, start)
        if err is not None:
            return err
    # A pytest run (``tvm.testing.main()``): the last failure's "E   " lines.
    pytest_err = _parse_pytest(lines)
    if pytest_err is not None:
        return pytest_err
    # No traceback header (cut off, or SyntaxError printed without one): the last
    # exception-looking line at column 0.
    for i in range(len(lines) - 1, -1, -1):
        lm = _LOOSE_HEADER_RE.match(lines[i].rstrip())
        if lm:
            frames = []
            for k in range(max(0, i - 6), i):
                fm = _FRAME_RE.match(lines[k])
                if fm:
                    src = lines[k + 1].strip() if k + 1 < i else ""
                    frames.append(
                        Frame(fm["path"], int(fm["line"]), (fm["func"] or "").strip(), src)
                    )
            return PyError(
                type=lm["type"],
                message=(lm["msg"] or "").strip(),
                lines=_message_lines(lines, i),
                frames=tuple(frames),
            )
    return None


_PYTEST_E_RE = re.compile(r"^E(?:\s+(.*))?$")
_PYTEST_LOC_RE = re.compile(r"^(\S[^:]*?):(\d+):(?: in (.+?)|\s*(\w[\w.]*)?)\s*$")
_PYTEST_SECTION_RE = re.compile(r"^_{3,} .+ _{3,}$")


def _parse_pytest(lines: list[str]) -> PyError | None:
    """The last failure in pytest's output (``E   XxxError: ...`` and ``path:line:`` lines)."""
    last_e = None
    for i in range(len(lines) - 1, -1, -1):
        if _PYTEST_E_RE.match(lines[i]) and lines[i].startswith("E "):
            last_e = i
            break
    if last_e is None:
        return None
    first_e = last_e
    while first_e > 0 and _PYTEST_E_RE.match(lines[first_e - 1]):
        first_e -= 1
    e_lines = [
        (m.group(1) or "") if (m := _PYTEST_E_RE.match(ln)) else ""
        for ln in lines[first_e : last_e + 1]
    ]
    head = next(
        (
            k
            for k, ln in enumerate(e_lines)
            if _LOOSE_HEADER_RE.match(ln.strip())
            or _HEADER_RE.match(ln.strip())
            and "." in ln.split(":", 1)[0]
        ),
        None,
    )
    if head is None:
        return None
    hm = _HEADER_RE.match(e_lines[head].strip())
    if hm is None:
        return None
    section = 0
    for i in range(first_e, -1, -1):
        if _PYTEST_SECTION_RE.match(lines[i]) and "_ _ _" not in lines[i]:
            section = i
            break
    frames: list[Frame] = []
    for ln in lines[section : min(len(lines), last_e + 4)]:
        lm = _PYTEST_LOC_RE.match(ln)
        if lm and not ln.startswith(("E ", "FAILED", "ERROR")):
            frames.append(
                Frame(lm.group(1), int(lm.group(2)), (lm.group(3) or lm.group(4) or "").strip())
            )
    # The location line after the E block names where it was raised: make it innermost.
    return PyError(
        type=hm["type"],
        message=(hm["msg"] or "").strip(),
        lines=tuple(ln.rstrip() for ln in e_lines[head:]),
        frames=tuple(frames),
    )


def _message_lines(lines: list[str], j: int, limit: int = 40) -> tuple[str, ...]:
    out = [lines[j].rstrip()]
    for line in lines[j + 1 : j + limit]:
        s = line.rstrip()
        if _LOG_LINE_RE.match(s) or s.startswith(("During handling of", "The above exception")):
            break
        if s.strip() == _TRACEBACK_HEAD:
            break
        out.append(s)
    while len(out) > 1 and not out[-1].strip():
        out.pop()
    return tuple(out)


def _first_nonempty(lines: tuple[str, ...]) -> str:
    return next((ln.strip() for ln in lines if ln.strip()), "")


# --------------------------------------------------------------------------------------------
# Where in TVM a failure happened: C++ source files, C++ functions and pass names. Carried as
# evidence lines ("TVM location: file fuse_ops.cc") by classify() and parse_reported(), read by
# compare(): two failures of one class that pass through the same TVM code are the same bug
# even when TVM reworded its message (or the reporter's paste lost the message).

LOCATION_PREFIX = "TVM location: "
LOCATION_KINDS = ("file", "function", "pass")


@dataclass(frozen=True)
class Locations:
    """TVM locations, each tuple ordered outermost first (the deepest last)."""

    files: tuple[str, ...] = ()  # C++ source file names: "fuse_ops.cc"
    functions: tuple[str, ...] = ()  # C++ functions: "tvm::relax::FuseOpsMutator::VisitExpr_"
    passes: tuple[str, ...] = ()  # pass names: "FuseOps"

    def __bool__(self) -> bool:
        return bool(self.files or self.functions or self.passes)

    def evidence(self) -> tuple[str, ...]:
        return (
            *(f"{LOCATION_PREFIX}file {f}" for f in self.files),
            *(f"{LOCATION_PREFIX}function {f}" for f in self.functions),
            *(f"{LOCATION_PREFIX}pass {p}" for p in self.passes),
        )

    @classmethod
    def from_evidence(cls, evidence: tuple[str, ...]) -> Locations:
        got: dict[str, list[str]] = {k: [] for k in LOCATION_KINDS}
        for line in evidence:
            if line.startswith(LOCATION_PREFIX):
                kind, _, name = line[len(LOCATION_PREFIX) :].partition(" ")
                if kind in got and name:
                    got[kind].append(name)
        return cls(tuple(got["file"]), tuple(got["function"]), tuple(got["pass"]))


def location_key(name: str) -> str:
    """``fuse_ops.cc``, ``FuseOps`` and ``tvm::relax::transform::FuseOps`` all key to
    ``fuseops`` (the last ``::`` segment, extension dropped, case and underscores ignored)."""
    last = name.rsplit("::", 1)[-1]
    last = re.sub(r"\.(?:cc|cpp|cu|cxx|c)$", "", last)
    return re.sub(r"[^a-z0-9]", "", last.lower())


def _function_key(name: str) -> str:
    """``Class::method`` of a qualified C++ name, lower-case (namespaces move between versions:
    ``tvm::tir`` became ``tvm::tirx``)."""
    return "::".join(name.lower().split("::")[-2:])


# C++ frames: ``File "src/x.cc", line N, in FUNC`` (TVM >= 0.20), ``N: FUNC`` followed by
# ``at src/x.cc:N`` (older), ``[bt] (N) libtvm.so(FUNC+0x..)`` (oldest); log lines
# ``[hh:mm:ss] src/x.cc:N: Check failed`` name a file.
_LOC_PY_FRAME_RE = re.compile(r'^\s*File "(?P<path>[^"]+)", line \d+, in (?P<func>.+?)\s*$')
_LOC_NUM_FRAME_RE = re.compile(r"^\s*(?P<n>\d+): (?P<func>\S.*?)\s*$")
_LOC_BT_FRAME_RE = re.compile(r"^\s*\[bt\] \((?P<n>\d+)\) [^(\s]*\((?P<func>[^+)]+)")
_LOC_AT_RE = re.compile(r"^\s*at (?P<path>\S+?\.(?:cc|cpp|cu|h|hpp)):\d+\s*$")
_LOC_LOG_RE = re.compile(
    r"(?P<path>(?:[\w.\-]+/)*(?:src|include)/[\w/.\-]+\.(?:cc|cpp|cu)):\d+:"
    r"(?=[^\n]*(?:Check failed|[Ee]rror|[Cc]annot|[Uu]nable|not supported|[Ii]nvalid))"
)
_LOC_SOURCE_EXTS = (".cc", ".cpp", ".cu", ".cxx")
# Files and functions every failure passes through (error machinery, pass infrastructure,
# generic IR visitors): they say nothing about where the bug is.
_GENERIC_FILE_KEYS = frozenset(
    {
        "transform",
        "cruntimeapi",
        "logging",
        "function",
        "registry",
        "packedfunc",
        "object",
        "exprfunctor",
        "stmtfunctor",
        "typefunctor",
        "structinfofunctor",
        "blockbuilder",
        "module",
        "traceback",
        "backtrace",
        "error",
        "passinstrument",
        "irbuilder",
        "core",
    }
)
_GENERIC_FUNC_RE = re.compile(
    r"^(?:tvm::(?:runtime|ffi|transform|detail|support)::|TVM|std::|__|_Py|Py)"
    r"|(?:^|::)(?:Py)?(?:Expr|Stmt|StmtExpr|Type|StructInfo|Pattern|Dataflow|Attr|IR|Block)?"
    r"(?:Functor|Mutator|MutatorBase|Visitor|Rewriter)(?:<[^:]*>)?::"
    r"|(?:^|::)(?:BlockBuilder\w*|Normalizer|LogFatal|LogCheck\w*|PassNode|ModulePassNode"
    r"|FunctionPassNode|PrimFuncPassNode|SequentialNode|Pass)::"
)
# Verbs TVM's pass names start with (``FuseOps``, ``LegalizeOps``, ``UnrollLoop``, ...).
_PASS_VERBS = (
    "Fuse|Defuse|Legalize|Fold|Simplify|Eliminate|Convert|Lower|Inject|Unroll|Vectorize"
    "|Canonicalize|Decompose|Specialize|Annotate|Bind|Flatten|Inline|Hoist|Narrow|Partition|Plan"
    "|Rewrite|Alter|Combine|Expand|Remove|Split|Merge|Lift|Compact|Make|Attach|Normalize|Update"
    "|Dead|Static|Storage|Common|Infer|Instrument|Thread|Loop|Renew|Unify|Realize|Reorder|Layout"
    "|Manifest|Replace|Allocate|Kill|Dispatch|Bundle|Gradient|Lazy|Propagate|Force|Transform|To"
)
_CAMEL = r"[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+"
_PASS_RE = re.compile(
    rf"\btransform\.(?P<t>{_CAMEL})\b"
    rf"|(?<!\w)(?P<v>(?:{_PASS_VERBS})(?:[A-Z][A-Za-z0-9]*)+)\b"
)
_NOT_PASSES = frozenset(
    {
        "PassContext",
        "PassInfo",
        "PassInstrument",
        "ModulePass",
        "FunctionPass",
        "PrimFuncPass",
        "DataflowBlockPass",
        "Sequential",
    }
)


def pass_names(text: str) -> tuple[str, ...]:
    """Pass names in ``text`` (``relax.transform.FuseOps``, ``LegalizeOps``, ``tir.UnrollLoop``)."""
    out: list[str] = []
    for m in _PASS_RE.finditer(text):
        name = m.group("t") or m.group("v")
        if name and name not in _NOT_PASSES and name not in out:
            out.append(name)
    return tuple(out)


def _cpp_function(func: str) -> str:
    """``tvm::relax::Expr tvm::relax::Foo::Bar(tvm::Call)`` -> ``tvm::relax::Foo::Bar``."""
    s = func.split("::{lambda", 1)[0]
    prev = None
    while prev != s:
        prev, s = s, re.sub(r"<[^<>]*>", "", s)
    s = s.split("(", 1)[0].strip()
    s = s.split()[-1] if s.split() else ""
    return s if "::" in s and re.fullmatch(r"[\w:~]+", s) else ""


def cpp_frames(lines: list[str]) -> list[tuple[str, str]]:
    """``(path, function)`` of every C++ frame in ``lines``, outermost first."""
    out: list[tuple[str, str]] = []
    run: list[tuple[int, str, str]] = []  # a numbered backtrace: (n, path, func)

    def flush() -> None:
        if run:
            ordered = sorted(run, key=lambda r: -r[0])  # the highest number is outermost
            out.extend((p, f) for _, p, f in ordered)
            run.clear()

    for line in lines:
        m = _LOC_PY_FRAME_RE.match(line)
        if m:
            flush()
            out.append((m["path"], m["func"]))
            continue
        n = _LOC_NUM_FRAME_RE.match(line) or _LOC_BT_FRAME_RE.match(line)
        if n:
            run.append((int(n["n"]), "", n["func"]))
            continue
        at = _LOC_AT_RE.match(line)
        if at and run:
            k, _, f = run[-1]
            run[-1] = (k, at["path"], f)
            continue
        flush()
        lg = _LOC_LOG_RE.search(line)
        if lg:
            out.append((lg["path"], ""))
    flush()
    return out


def locations_of(frames: list[tuple[str, str]], text: str = "") -> Locations:
    """The specific TVM locations of some C++ frames (generic machinery dropped, deduplicated
    keeping the deepest occurrence), and the pass names ``text`` names."""
    files: list[str] = []
    funcs: list[str] = []
    for path, func in frames:
        p = path.replace("\\", "/")
        name = p.rsplit("/", 1)[-1]
        if p.endswith(_LOC_SOURCE_EXTS) and location_key(name) not in _GENERIC_FILE_KEYS:
            if name in files:
                files.remove(name)
            files.append(name)
        fn = _cpp_function(func) if func else ""
        if fn.startswith("tvm::") and not _GENERIC_FUNC_RE.search(fn):
            if fn in funcs:
                funcs.remove(fn)
            funcs.append(fn)
    return Locations(tuple(files[-6:]), tuple(funcs[-6:]), pass_names(text)[:6])


def same_location(a: Locations, b: Locations) -> str:
    """What two failures share in TVM ("" when nothing): the deepest C++ file or function of
    one among the other's, or a pass name (matched also against file and function names)."""
    a_files = {location_key(f): f for f in a.files}
    b_files = {location_key(f): f for f in b.files}
    for x, y in ((a.files, b_files), (b.files, a_files)):
        if x and location_key(x[-1]) in y:
            return f"both fail in {x[-1]}"
    a_funcs = {_function_key(f): f for f in a.functions}
    b_funcs = {_function_key(f): f for f in b.functions}
    for x, y in ((a.functions, b_funcs), (b.functions, a_funcs)):
        if x and _function_key(x[-1]) in y:
            return f"both fail in {x[-1]}"

    def named(loc: Locations) -> set[str]:
        keys = {location_key(p) for p in loc.passes} | {location_key(f) for f in loc.files}
        for fn in loc.functions:
            keys |= {re.sub(r"[^a-z0-9]", "", s.lower()) for s in fn.split("::")}
        return keys

    for side, other in ((a, b), (b, a)):
        keys = named(other)
        for p in side.passes:
            if location_key(p) in keys:
                return f"both fail in the {p} pass"
    return ""


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
        matches = list(_FATAL_RE.finditer(stderr))
        if matches:
            last = matches[-1]
            if _TRACEBACK_HEAD not in stderr[last.end() :]:
                return _FATAL_TO_SIGNAL[last.group(1)]
    return None


_CRASH_CONTEXT_RE = re.compile(
    r"free\(\)|double free|corrupted|malloc\(\)|munmap_chunk|terminate called|"
    r"what\(\):|Check failed|Fatal Python error|Segmentation fault|core dumped|"
    r"stack smashing|AddressSanitizer|heap-buffer-overflow|Segfault encountered|"
    r"Aborted|Bus error|Floating point exception|Illegal instruction",
)


def _crash(sig: int, run: RunResult) -> Classification:
    name = CRASH_SIGNALS.get(sig, f"signal {sig}")
    evidence: list[str] = []
    for text in (run.stderr_tail, run.stdout_tail):
        for line in _lines(text):
            if _CRASH_CONTEXT_RE.search(line) and line.strip() not in evidence:
                evidence.append(normalize_paths(line.strip()))
    # faulthandler's innermost Python frame, if printed.
    fh = re.findall(r'^\s+File "([^"]*)", line (\d+) in (.*)$', run.stderr_tail, re.M)
    if fh:
        path, line, func = fh[0]
        evidence.append(normalize_paths(f'File "{path}", line {line} in {func}'))
    if not evidence:
        evidence = list(_tail_evidence(run))
    if "std::bad_alloc" in run.stderr_tail:
        return Classification(
            Outcome.RESOURCE_LIMIT,
            signature="std::bad_alloc (out of memory)",
            detail="memory: the process ran out of memory (std::bad_alloc) and aborted",
            evidence=tuple(evidence[:6]),
        )
    return Classification(
        Outcome.CRASH,
        signature=f"{name} (signal {sig})",
        detail=f"The process was killed by {SIGNAL_NAMES.get(sig, f'signal {sig}')}.",
        evidence=tuple(evidence[:6]),
    )


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


def account_for_absent_device(
    cls: Classification,
    reported: Reported | None,
    needs: tuple[str, ...],
    environment: Mapping[str, str] | None,
) -> Classification:
    """A run that passed on a worker without the device the script wants cannot speak for a
    failure the reporter saw while running on that device (a crash, a wrong result, a hang):
    that is ``needs-gpu``, not "passed". A reported compile-time error stays comparable, since
    compiling for a device needs no device."""
    if cls.outcome != Outcome.PASSED or reported is None:
        return cls
    devices = [n for n in needs if n in GPU_DEVICES]
    if not devices or _worker_has_gpu(environment or {}):
        return cls
    if reported.outcome not in _DEVICE_RUNTIME_FAILURES:
        return cls
    return Classification(
        Outcome.NEEDS_GPU,
        detail=(
            f"The script ran to the end here, but the reported {reported.outcome.value} happens "
            f"when it runs on a {devices[0]} device, which this worker does not have; a GPU "
            "worker is needed to check it."
        ),
        evidence=cls.evidence,
    )


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
        last = _last_line(run.stdout_tail)
        evidence = [normalize_paths(last)] if last else []
        detail = ""
        caught = parse_last_error(run.stderr_tail) or parse_last_error(run.stdout_tail)
        if caught is not None and caught.frames:
            # The script printed a traceback it caught, and still exited normally.
            detail = "The script exited normally, but printed an error it caught."
            evidence.append(normalize_paths(caught.header))
        return Classification(
            Outcome.PASSED, signature="exit code 0", detail=detail, evidence=tuple(evidence)
        )
    err = parse_last_error(run.stderr_tail) or parse_last_error(run.stdout_tail)
    if err is None:
        return _no_traceback(run, needs, env)
    return _with_locations(_classify_error(err, run, script, needs, env), err)


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
    return next((ln.strip() for ln in reversed(_lines(text)) if ln.strip()), "")


def _tail_evidence(run: RunResult, n: int = 3) -> tuple[str, ...]:
    text = run.stderr_tail if run.stderr_tail.strip() else run.stdout_tail
    lines = [ln.rstrip() for ln in _lines(text) if ln.strip()]
    return tuple(normalize_paths(ln) for ln in lines[-n:])


def _no_traceback(run: RunResult, needs: tuple[str, ...], env: Mapping[str, str]) -> Classification:
    both = _lines(run.stderr_tail) + _lines(run.stdout_tail)
    code = run.exit_code
    for line in both:
        if "Check failed" in line:
            loc = locations_of(cpp_frames(both), line)
            return Classification(
                Outcome.INTERNAL_ERROR,
                signature=normalize_paths(line.strip()),
                evidence=(normalize_paths(line.strip()), *loc.evidence()),
            )
    for line in both:
        if _DEVICE_ABSENT_RE.search(line):
            return _needs_gpu(line.strip(), needs, (line.strip(),))
    for line in both:
        if _BACKTRACE_NOTE in line:
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


def _raised_in_tvm(err: PyError) -> bool:
    """Any TVM frame after the script's last frame (TVM code was running when it failed)."""
    seen_script = False
    for f in reversed(err.frames):
        if f.kind == "tvm":
            return True
        if f.kind == "script":
            seen_script = True
            break
    return not seen_script and any(f.kind == "tvm" for f in err.frames)


# Packages that once shipped with TVM itself (``import nnvm``, ``import topi``): a script that
# imports one targets an old TVM, not a missing third-party package.
_HISTORIC_TVM_PACKAGES = frozenset({"nnvm", "topi", "vta"})


def _is_tvm_name(name: str) -> bool:
    return (name == "tvm" or name.startswith(("tvm.", "tvm_ffi"))
            or name.split(".")[0] in _HISTORIC_TVM_PACKAGES)


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


_NO_MODULE_RE = re.compile(r"No module named '([^']+)'")
_CANNOT_IMPORT_RE = re.compile(r"cannot import name '([^']+)' from '([^']+)'")
_MODULE_ATTR_RE = re.compile(r"module '([^']+)' has no attribute '([^']+)'")
_OBJECT_ATTR_RE = re.compile(
    r"(?:'([\w.]+)' object|type object '([\w.]+)') has no attribute '([^']+)'"
)
_SHARED_LIB_RE = re.compile(r"([\w.+\-]+\.so[\w.]*): cannot open shared object file")


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
        else f"{err.header.rstrip()} {_first_nonempty(err.lines[1:])}".strip()
    )
    if err.message.startswith(_TRACEBACK_HEAD):
        # TVM's own C++ backtrace ("TVMError: Traceback ...", "  0: tvm::...", "[bt] (0) ..."):
        # the message is the exception line after it.
        inner = next(
            (ln.strip() for ln in reversed(err.lines[1:]) if _LOOSE_HEADER_RE.match(ln.strip())),
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
    if _DEVICE_ABSENT_RE.search(text):
        return _needs_gpu(signature, needs, ev)

    # 2./3. Import and attribute errors: another TVM API, or a missing package.
    if short in {"ModuleNotFoundError", "ImportError"}:
        nm = _NO_MODULE_RE.search(text)
        if nm:
            mod = nm.group(1)
            if mod == "tvm":
                return Classification(
                    Outcome.INFRA_ERROR,
                    signature=signature,
                    detail="The TVM under test could not be imported on this worker.",
                    evidence=ev,
                )
            if _is_tvm_name(mod):
                return _api_mismatch(err, mod, ev)
            return _missing(mod.split(".")[0], signature, ev)
        cm = _CANNOT_IMPORT_RE.search(text)
        if cm:
            name, mod = cm.group(1), cm.group(2)
            if "partially initialized module" in text:
                pass  # a circular import: the script's own doing
            elif _is_tvm_name(mod):
                return _api_mismatch(err, f"{mod}.{name}", ev)
            elif mod.split(".")[0] not in {"__main__"}:
                return _missing(
                    mod.split(".")[0],
                    signature,
                    ev,
                    detail=f"The installed `{mod.split('.')[0]}` has no `{name}` (another version is expected).",
                )
        lm = _SHARED_LIB_RE.search(text)
        if lm:
            return _missing(lm.group(1), signature, ev)
        # A frontend re-raises "X is required ... pip install X" from "No module named 'X'".
        pkg = _required_package(text)
        if pkg is not None:
            return _missing(pkg, signature, ev)
        for cause in _chained_causes(run):
            cm2 = _NO_MODULE_RE.search(cause.text)
            if cm2 is None:
                continue
            mod = cm2.group(1)
            if _is_tvm_name(mod):
                return _api_mismatch(err, mod, (*ev, normalize_paths(cause.header)))
            if mod.split(".")[0] != "__main__":
                return _missing(mod.split(".")[0], signature, (*ev, normalize_paths(cause.header)))
    if short == "AttributeError":
        am = _MODULE_ATTR_RE.search(text)
        if am and _is_tvm_name(am.group(1)):
            mod, attr = am.group(1), am.group(2)
            script_refers = frame is not None and attr in frame.source
            if script_refers or not _raised_in_tvm(err):
                return _api_mismatch(err, f"{mod}.{attr}", ev)
        om = _OBJECT_ATTR_RE.search(text)
        if om:
            owner = (om.group(1) or om.group(2) or "").rsplit(".", 1)[-1]
            change = lookup_member(owner, om.group(3))
            if change is not None:
                return Classification(
                    Outcome.API_MISMATCH,
                    signature=signature,
                    detail=change.describe(change.name),
                    evidence=ev,
                )

    # TVMScript's parser (or another TVM wrapper) re-raised an import/attribute error about a
    # ``tvm.*`` name that the script's own source uses: the script targets another TVM API.
    if short not in {"AttributeError", "ModuleNotFoundError", "ImportError"}:
        stale = _stale_tvm_name(err, script)
        if stale is not None:
            return _api_mismatch(err, stale, ev)

    # The script's own device check failed ("assert dev.exist", "raise RuntimeError('no GPU')").
    if any(n in GPU_DEVICES for n in needs) and not _worker_has_gpu(env) and frame is not None:
        own = err.frames[-1] is frame and not _raised_in_tvm(err)
        if own and (
            (short == "AssertionError" and _EXIST_CHECK_RE.search(frame.source))
            or (short not in {"NameError", "SyntaxError"} and _DEVICE_WORD_RE.search(err.message))
        ):
            return _needs_gpu(signature, needs, ev)

    # 4. The script's own numeric check failed.
    if (short == "AssertionError" or _TESTING_MSG_RE.search(text)) and (
        _TESTING_MSG_RE.search(text)
        or any(_TESTING_PATH_RE.search(f.path.replace("\\", "/")) for f in err.frames)
        or (err.frames and err.frames[-1].kind == "script")
        or not err.frames
    ):
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
        and not _raised_in_tvm(err)
    ):
        return Classification(
            Outcome.WRONG_RESULT,
            signature=signature,
            detail="The script's own check of the result failed.",
            evidence=ev,
        )

    # 5. TVM's own checks.
    if short == "InternalError" or "Check failed" in text:
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
        _is_tvm_name(err.type)
        or short in {"TVMError", "DiagnosticError", "ScheduleError", "ParserError"}
        or _raised_in_tvm(err)
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

    # 7. The script's own code.
    return Classification(
        Outcome.PYTHON_ERROR,
        signature=signature,
        detail=f"The script itself raised `{short}` (not TVM).",
        evidence=ev,
    )


_REQUIRED_RE = re.compile(
    r"^\s*(?:[\w.]+:\s*)?`?([A-Za-z_][\w.\-]*)`? (?:package )?is required\b"
    r"|\b(?:pip3?|conda|python3? -m pip) install (?:-U |--upgrade |--user )*['\"`]?([A-Za-z_][\w.\-]*)"
    r"|\brequires (?:the )?`?([A-Za-z_][\w\-]*)`? (?:package|module|library)\b",
    re.MULTILINE,
)
_WRAPPER_TYPES = frozenset({"DiagnosticError", "ParserError", "TVMError", "RuntimeError"})


def _required_package(text: str) -> str | None:
    """The non-TVM package an import error's message asks for ("onnx is required", "pip install
    onnx"), if any."""
    for m in _REQUIRED_RE.finditer(text):
        name = next(g for g in m.groups() if g)
        top = name.split("[")[0].split(".")[0]
        if top and not _is_tvm_name(top) and top.lower() not in {"apache-tvm", "tvm", "it", "this"}:
            return top
    return None


def _chained_causes(run: RunResult) -> list[PyError]:
    """The exceptions chained before the last one ("The above exception was the direct cause
    of the following exception", "During handling of the above exception"), innermost first."""
    for text in (run.stderr_tail, run.stdout_tail):
        errors = parse_errors(text)
        if errors:
            return errors[:-1][::-1]
    return []


def _stale_tvm_name(err: PyError, script: str) -> str | None:
    """``tvm.X.Y`` when the message is an import/attribute error about a ``tvm.*`` name that the
    script uses (a wrapper such as TVMScript's parser re-raised it as its own error type)."""
    am = _MODULE_ATTR_RE.search(err.text)
    if am and _is_tvm_name(am.group(1)):
        mod, attr = am.group(1), am.group(2)
        if err.short_type in _WRAPPER_TYPES and (
            err.short_type in {"DiagnosticError", "ParserError"}
            or re.search(rf"\.{re.escape(attr)}\b", script)
        ):
            return f"{mod}.{attr}"
    cm = _CANNOT_IMPORT_RE.search(err.text)
    if cm and _is_tvm_name(cm.group(2)) and re.search(rf"\b{re.escape(cm.group(1))}\b", script):
        return f"{cm.group(2)}.{cm.group(1)}"
    return None


def _wrong_signature(err: PyError, fallback: str) -> str:
    for line in err.lines:
        if line.strip().startswith("Mismatched elements"):
            return line.strip()
    return fallback


_NO_SUCH_FILE_RE = re.compile(r"No such file or directory: '([^']+)'")


def _missing_input_file(short: str, text: str, script: str) -> str:
    """The file a FileNotFoundError names, when the script names it as a literal (an input the
    reporter had and did not share); "" otherwise."""
    if short not in {"FileNotFoundError", "OSError", "IOError"}:
        return ""
    m = _NO_SUCH_FILE_RE.search(text)
    if not m:
        return ""
    path = m.group(1)
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
