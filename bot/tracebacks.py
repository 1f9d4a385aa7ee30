"""Reading what a run printed (or a reporter pasted): Python tracebacks, pytest failures, TVM's
C++ frames and where in TVM a failure happened.

Pure, and linear in its input: every scan here is one pass over the lines (no regex that can
backtrack over a whole line more than a bounded number of times), so 2 MiB of hostile output
costs what 2 MiB of plain text costs (``bench/bench_hostile.py`` measures it). Used by
:mod:`bot.classify` (the run), :mod:`bot.reported` (the reporter's paste) and
:mod:`bot.compare` (where two failures meet).
"""

from __future__ import annotations

import re

from bot import lazyre
from bot.records import record
from bot.vocabulary import LOG_ERROR_WORDS

TRACEBACK_HEAD = "Traceback (most recent call last):"
_FRAME_RE = lazyre.compile(r'^\s*File "(?P<path>[^"]*)", line (?P<line>\d+)(?:, in (?P<func>.*))?$')
_HEADER_RE = lazyre.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::(?P<msg>.*))?$")
# A bare exception line found without a traceback header (the tail may have cut it off).
LOOSE_HEADER_RE = lazyre.compile(
    r"^(?P<type>(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Failure|Interrupt))"
    r"(?::(?P<msg>.*))?$"
)
_LOG_LINE_RE = lazyre.compile(r"^\[\d{2}:\d{2}:\d{2}\] ")
BACKTRACE_NOTE = "note: run with `TVM_BACKTRACE=1`"

# The end of an install path; normalize_paths() finds where the path starts by one backward
# scan (a regex with an optional path prefix backtracks quadratically over runs of "/").
_SITE_END_RE = lazyre.compile(r"/(?:site|dist)-packages/")
_SITE_LEN = len("/site-packages/")
_PATH_RUN_RE = lazyre.compile(r"[^\s\"'()]+")


@record
class Frame:
    path: str
    line: int
    func: str
    source: str = ""

    @property
    def kind(self) -> str:
        """``tvm`` (TVM's Python or C++), ``lib`` (stdlib / other packages) or ``script``."""
        return frame_kind(self.path)


@record
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


def raised_in_tvm(err: PyError) -> bool:
    """Any TVM frame after the script's last frame (TVM code was running when it failed)."""
    seen_script = False
    for f in reversed(err.frames):
        if f.kind == "tvm":
            return True
        if f.kind == "script":
            seen_script = True
            break
    return not seen_script and any(f.kind == "tvm" for f in err.frames)


def normalize_paths(text: str) -> str:
    """Replace the worker's install paths with ``<site-packages>/`` (stable, and private):
    ``/usr/lib/python3/site-packages/tvm/x.py`` -> ``<site-packages>/tvm/x.py``.

    A path is a run of path characters (no space, quote or parenthesis); it is replaced from
    its first ``/`` to the end of its last ``/site-packages/`` (or ``dist-packages``). Linear,
    with every scan done by ``re``/``str`` in C over disjoint stretches (a regex with an
    optional path prefix backtracked quadratically over runs of ``/``)."""
    if "-packages/" not in text:
        return text
    rev = ""  # text reversed, made on first need: runs are found backwards in it
    n = len(text)
    out: list[str] = []
    done = 0  # text[:done] is written to out
    m = _SITE_END_RE.search(text)
    while m is not None:
        p = m.start()
        if not rev:
            rev = text[::-1]
        back = _PATH_RUN_RE.match(rev, n - p)
        run_start = n - back.end() if back else p
        fwd = _PATH_RUN_RE.match(text, p)
        run_end = fwd.end() if fwd else p + _SITE_LEN
        first_slash = text.find("/", run_start, p + 1)
        last = max(text.rfind("/site-packages/", p, run_end), text.rfind("/dist-packages/", p, run_end))
        out.append(text[done:first_slash])
        out.append("<site-packages>/")
        done = max(last, p) + _SITE_LEN
        m = _SITE_END_RE.search(text, run_end)
    out.append(text[done:])
    return "".join(out)


def split_lines(text: str) -> list[str]:
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
    return line.strip() == TRACEBACK_HEAD and not line.startswith("  |")


def parse_errors(text: str) -> list[PyError]:
    """Every exception printed with a traceback in ``text``, in order (a chain's causes first)."""
    lines = split_lines(text)
    out = []
    for i, line in enumerate(lines):
        if _is_traceback_head(line):
            err = _parse_traceback(lines, i)
            if err is not None:
                out.append(err)
    return out


def parse_last_error(text: str) -> PyError | None:
    """The last exception printed in ``text`` (a traceback, or a bare ``XxxError: ...`` line)."""
    lines = split_lines(text)
    start = None
    for i in range(len(lines) - 1, -1, -1) if TRACEBACK_HEAD in text else ():
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
    has_type = any(w in text for w in ("Error", "Exception", "Failure", "Interrupt"))
    for i in range(len(lines) - 1, -1, -1) if has_type else ():
        if not lines[i]:
            continue
        lm = LOOSE_HEADER_RE.match(lines[i].rstrip())
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


_PYTEST_E_RE = lazyre.compile(r"^E(?:\s+(.*))?$")
# Matched against right-stripped lines: a lazy ``(.+?)\s*$`` is quadratic over trailing spaces.
_PYTEST_LOC_RE = lazyre.compile(r"^(\S[^:]*?):(\d+):(?: in (.+)|\s*(\w[\w.]*)?)$")
_PYTEST_SECTION_RE = lazyre.compile(r"^_{3,} .+ _{3,}$")


def _parse_pytest(lines: list[str]) -> PyError | None:
    """The last failure in pytest's output (``E   XxxError: ...`` and ``path:line:`` lines)."""
    last_e = None
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith("E ") and _PYTEST_E_RE.match(lines[i]):
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
            if LOOSE_HEADER_RE.match(ln.strip())
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
        lm = _PYTEST_LOC_RE.match(ln.rstrip())
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


# A schedule primitive's refusal prints the IR (hundreds of lines) between its header and the
# line that says what is wrong: that line is kept however far down it comes.
_FAR_MESSAGE_PREFIX = "Error message:"
_FAR_MESSAGE_LINES = 2000


def _message_lines(lines: list[str], j: int, limit: int = 40) -> tuple[str, ...]:
    out = [lines[j].rstrip()]
    for k, line in enumerate(lines[j + 1 : j + _FAR_MESSAGE_LINES], start=1):
        s = line.rstrip()
        if _LOG_LINE_RE.match(s) or s.startswith(("During handling of", "The above exception")):
            break
        if s.strip() == TRACEBACK_HEAD:
            break
        if k < limit:
            out.append(s)
        elif s.startswith(_FAR_MESSAGE_PREFIX):
            out.append(s)
            break
    while len(out) > 1 and not out[-1].strip():
        out.pop()
    return tuple(out)


def first_nonempty(lines: tuple[str, ...]) -> str:
    return next((ln.strip() for ln in lines if ln.strip()), "")


# --------------------------------------------------------------------------------------------
# Where in TVM a failure happened: C++ source files, C++ functions and pass names. Carried as
# evidence lines ("TVM location: file fuse_ops.cc") by classify() and parse_reported(), read by
# compare(): two failures of one class that pass through the same TVM code are the same bug
# even when TVM reworded its message (or the reporter's paste lost the message).

LOCATION_PREFIX = "TVM location: "
LOCATION_KINDS = ("file", "function", "pass")


@record
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


def function_key(name: str) -> str:
    """``Class::method`` of a qualified C++ name, lower-case (namespaces move between versions:
    ``tvm::tir`` became ``tvm::tirx``)."""
    return "::".join(name.lower().split("::")[-2:])


# C++ frames: ``File "src/x.cc", line N, in FUNC`` (TVM >= 0.20), ``N: FUNC`` followed by
# ``at src/x.cc:N`` (older), ``[bt] (N) libtvm.so(FUNC+0x..)`` (oldest); log lines
# ``[hh:mm:ss] src/x.cc:N: Check failed`` name a file.
# (Matched against right-stripped lines, see _PYTEST_LOC_RE.)
_LOC_PY_FRAME_RE = lazyre.compile(r'^\s*File "(?P<path>[^"]+)", line \d+, in (?P<func>.+)$')
_LOC_NUM_FRAME_RE = lazyre.compile(r"^\s*(?P<n>\d+): (?P<func>\S.*)$")
_LOC_BT_FRAME_RE = lazyre.compile(r"^\s*\[bt\] \((?P<n>\d+)\) [^(\s]*\((?P<func>[^+)]+)")
_LOC_AT_RE = lazyre.compile(r"^\s*at (?P<path>\S+?\.(?:cc|cpp|cu|h|hpp)):\d+\s*$")
# A log line's ``src/relax/x.cc:12:`` followed (later on the line) by an error word. Found in
# steps that are each linear: the ``.cc:N:`` end, then the run of path characters before it.
_LOC_LOG_END_RE = lazyre.compile(r"\.(?:cc|cpp|cu):\d+:")
_LOC_LOG_WORD_RE = lazyre.compile(LOG_ERROR_WORDS)
_LOC_PATH_CHARS_RE = lazyre.compile(r"[\w/.\-]+")
_LOC_SRC_RE = lazyre.compile(r"(?:^|/)(?:src|include)/[\w.\-]")


def _log_location(line: str) -> str:
    """The ``src/.../x.cc`` path of an error log line (``[hh:mm:ss] src/x.cc:12: Check failed``),
    or ""."""
    if ".c" not in line:
        return ""
    words = [w.start() for w in _LOC_LOG_WORD_RE.finditer(line)]
    if not words:
        return ""
    last_word = words[-1]
    rev = ""
    for m in _LOC_LOG_END_RE.finditer(line):
        if m.end() > last_word:
            return ""
        if not rev:
            rev = line[::-1]
        back = _LOC_PATH_CHARS_RE.match(rev, len(line) - m.start())
        if back is None:
            continue
        path = line[len(line) - back.end() : m.start()] + m.group(0).split(":", 1)[0]
        src = _LOC_SRC_RE.search(path)
        if src is not None:
            start = src.start() + (1 if path[src.start()] == "/" else 0)
            # Leading components before src/ (``../src``, ``tvm/src``) stay, "//" cuts them.
            head = path[:start]
            cut = head.rfind("//")
            head = head[cut + 2 :] if cut >= 0 else head.lstrip("/")
            return head + path[start:]
    return ""
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
_GENERIC_FUNC_RE = lazyre.compile(
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
# (One quantifier per word part: ``(?:[A-Z][A-Za-z0-9]*)+`` meant the same and backtracked
# exponentially on a long capitalised word.)
_CAMEL = r"[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*"
_PASS_RE = lazyre.compile(
    rf"\btransform\.(?P<t>{_CAMEL})\b"
    rf"|(?<!\w)(?P<v>(?:{_PASS_VERBS})[A-Z][A-Za-z0-9]*)\b"
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


_MAX_FUNC = 8192  # a C++ frame's function text longer than this is not a symbol


def _strip_templates(s: str) -> str:
    """Drop every balanced ``<...>`` (nested too) in one pass; unbalanced brackets stay."""
    if "<" not in s:
        return s
    out: list[str] = []
    opens: list[int] = []
    for ch in s:
        if ch == "<":
            opens.append(len(out))
            out.append(ch)
        elif ch == ">" and opens:
            del out[opens.pop() :]
        else:
            out.append(ch)
    return "".join(out)


def _cpp_function(func: str) -> str:
    """``tvm::relax::Expr tvm::relax::Foo::Bar(tvm::Call)`` -> ``tvm::relax::Foo::Bar``."""
    s = _strip_templates(func[:_MAX_FUNC].split("::{lambda", 1)[0])
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
        line = line.rstrip()
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
        log_path = _log_location(line)
        if log_path:
            out.append((log_path, ""))
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
    a_funcs = {function_key(f): f for f in a.functions}
    b_funcs = {function_key(f): f for f in b.functions}
    for x, y in ((a.functions, b_funcs), (b.functions, a_funcs)):
        if x and function_key(x[-1]) in y:
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


# --------------------------------------------------------------------------------------------
# The stack of a crashed process: faulthandler's Python frames and native frames (glibc's
# backtrace, gdb's "#N 0x... in f () from lib", Python's C-stack dump, TVM's "[bt]" lines), each
# innermost first. Which frames are TVM's, the interpreter's internals, another library's or the
# script's own.

_FH_FRAME_RE = lazyre.compile(r'^\s*File "(?P<path>[^"]*)", line (?P<line>\d+) in (?P<func>\S+)')
_GDB_FRAME_RE = lazyre.compile(
    r"^\s*#\d+\s+(?:0x[0-9a-fA-F]+ in )?(?P<func>[^\s(]+) ?\([^)]{0,200}\)(?: (?:from|at) (?P<lib>\S+))?"
)
_GLIBC_FRAME_RE = lazyre.compile(r"^\s*(?P<lib>[^\s(\[]+)\((?P<func>[^+)\s]*)(?:\+0x[0-9a-fA-F]+)?\)\s*\[0x")
_BINARY_FRAME_RE = lazyre.compile(r'^\s*Binary file "(?P<lib>[^"]+)", at (?P<func>[^\s+]*)')
_BT_FRAME_RE = lazyre.compile(r"^\s*\[bt\] \(\d+\) (?P<lib>[^\s(]+)\((?P<func>[^+)\s]*)")
# The interpreter's own machinery: never where a bug is.
_INTERNAL_FUNC_RE = lazyre.compile(
    r"^(?:_?Py|_PyEval|_PyObject|_PyFunction|_PyVectorcall|method_vectorcall|cfunction_|"
    r"slot_tp_|vectorcall|call_function|run_mod|run_eval|pymain_|Py_RunMain|Py_BytesMain|"
    r"__libc_start|_start$|main$|_Py_DumpStack|faulthandler|<frozen)"
)
_INTERNAL_LIB_RE = lazyre.compile(r"(?:^|/)(?:libpython3[\w.]*\.so|python3(?:\.\d+)?)(?:[\s(]|$)|libc\.so|ld-linux")


@record
class CrashFrame:
    where: str  # "ctypes/__init__.py:502 in __call__", "libffi.so.8 ffi_call_unix64"
    kind: str  # tvm | internal | lib | script


def _native_kind(lib: str, func: str) -> str:
    low = f"{lib} {func}".lower()
    if "libtvm" in low or "tvm::" in low or "/tvm/" in low or "tvm_ffi" in low:
        return "tvm"
    if _INTERNAL_FUNC_RE.search(func) or (_INTERNAL_LIB_RE.search(lib) and not func):
        return "internal"
    if _INTERNAL_LIB_RE.search(lib + " "):
        return "internal"
    return "lib"


def crash_frames(text: str) -> list[CrashFrame]:
    """The frames a crash printed, innermost first (Python's and native ones, as printed)."""
    out: list[CrashFrame] = []
    for raw in split_lines(text):
        line = raw[:2000]
        m = _FH_FRAME_RE.match(line)
        if m:
            path, func = m["path"], m["func"]
            kind = frame_kind(path)
            if kind == "lib" and (path.startswith("<frozen") or "/runpy.py" in path):
                kind = "internal"
            short = "/".join(path.replace("\\", "/").split("/")[-2:])
            out.append(CrashFrame(f"{short}:{m['line']} in {func}", kind))
            continue
        n = (
            _BINARY_FRAME_RE.match(line)
            or _BT_FRAME_RE.match(line)
            or _GLIBC_FRAME_RE.match(line)
            or _GDB_FRAME_RE.match(line)
        )
        if n:
            lib = n["lib"] or ""
            func = n["func"] or ""
            name = lib.rsplit("/", 1)[-1]
            out.append(CrashFrame(f"{name} {func}".strip() or "??", _native_kind(lib, func)))
    return out
