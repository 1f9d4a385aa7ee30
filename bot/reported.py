"""Stage 6a: what did the reporter say they saw?

Pure: reads the issue's title, body and the author's own comments, minus the lines that made
the repro script, and looks for (strongest evidence first):

1. a crash: glibc/abort messages ("free(): invalid pointer"), "Segmentation fault", "core
   dumped", "Aborted", crash exit codes (-11, 139, 134, -6, Windows -1073740940 / 0xC0000374,
   0xC0000005, ...), "segfaults";
2. TVM's own checks: "Check failed: ...", ``InternalError``;
3. numeric mismatches printed by test helpers ("Mismatched elements: ...");
4. the reported exception line (``XxxError: ...``, a TVMScript ``error: ...`` diagnostic): an
   import of a ``tvm.*`` name that fails is ``api-mismatch``, another missing module is
   ``missing-dependency``, ``NameError``/``SyntaxError`` are ``python-error``, an
   ``AssertionError`` is ``wrong-result``, anything else is ``tvm-error``. Within one
   traceback chain the last exception counts; of several separate tracebacks in the body, the
   first (an interactive session's first failure);
5. a traceback cut before its exception line whose last frames are TVM's C++ (``in tvm::...``):
   ``internal-error``, named by the title; TVM's own diagnostics without an ``XxxError:`` line
   (the ``TVM_BACKTRACE`` note, an ``[hh:mm:ss] src/....cc:NN:`` error log, Relay's type-checker
   message, ``LLVM ERROR``): ``tvm-error`` — with or without a repro;
6. wrong-result language ("wrong result", "incorrect output", "mismatch" but not a compiler's
   "type/shape mismatch", "not equal", "inconsistent results", "accuracy", "not accurate",
   "differs from onnxruntime", "garbage", ...);
7. only when the issue has a repro: general failure language ("fails to parse", "error",
   "crashes");
8. "works" / "no error" / a question, only when no failure wording appears anywhere; never from
   an expectation ("Expected behavior: no error") or another time or version ("previously it
   worked", "with 0.18 it runs fine"): ``passed``.

Nothing found: ``None`` when the issue has a repro, ``Reported(no-repro)`` when it has neither a
repro nor a report (an empty template), which is how a human triager records it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.classify import cpp_frames, locations_of, normalize_paths, parse_last_error
from bot.models import Issue, Outcome, Reported, Repro

# --------------------------------------------------------------------------------------------
# Patterns (rank: lower is more specific)

_CRASH_PATTERNS: tuple[tuple[int, re.Pattern[str]], ...] = (
    (
        0,
        re.compile(
            r"(?:free|malloc|realloc|calloc|munmap_chunk|malloc_consolidate)\(\): [^\n]+"
            r"|double free or corruption[^\n]*"
            r"|corrupted (?:size vs\. prev_size|double-linked list|top size)[^\n]*"
            r"|stack smashing detected"
            r"|terminate called after throwing an instance of[^\n]*"
            r"|AddressSanitizer: [\w-]+[^\n]*"
        ),
    ),
    (
        1,
        re.compile(
            r"Fatal Python error: (?:Segmentation fault|Aborted|Bus error|Floating point exception|Illegal instruction)"
        ),
    ),
    (
        2,
        re.compile(
            r"Segmentation fault(?: \(core dumped\))?|Aborted \(core dumped\)"
            r"|Illegal instruction(?: \(core dumped\))?|Bus error(?: \(core dumped\))?"
            r"|Floating point exception(?: \(core dumped\))?|\bSIG(?:SEGV|ABRT|BUS|FPE|ILL)\b"
            r"|Segfault encountered|^\s*Aborted\s*$"
        ),
    ),
    (
        3,
        re.compile(
            r"(?:exit(?:ed)?|exits|return(?:ed)?|status|code|LASTEXITCODE|returncode|signal|\$\?)"
            r"[\w ]{0,20}?[:=]?\s*(?:-11|139|134|-6|-4|132|-1073740940|-1073741819|-1073741571"
            r"|-1073740791|3221226356|3221225477)\b"
            r"|\b0x[cC]00003(?:74|0[0-9])\b|\b0x[cC]0000005\b|\b0x[cC]00000[fF][dD]\b|\b0x[cC]0000409\b"
            r"|heap corruption|access violation|interrupted by signal (?:11|6|7|8|4)\b",
            re.IGNORECASE,
        ),
    ),
    (
        4,
        re.compile(
            r"\bseg[ -]?fault(?:s|ed|ing)?\b|\bcore[ -]?dump(?:s|ed)?\b",
            re.IGNORECASE,
        ),
    ),
)
# "crashes" alone is loose talk for any failure as often as not: weaker than an error line.
_LOOSE_CRASH_RE = re.compile(r"\bcrash(?:es|ed|ing)?\b|\babort(?:s|ed|ing)?\b", re.IGNORECASE)
_HANG_RE = re.compile(
    r"\bhangs?\b|\bhanging\b|\bhung\b|\bstuck\b|\binfinite loop\b|\bdeadlock(?:s|ed)?\b"
    r"|\bnever (?:finish|end|terminate|return|complete|stop|halt)(?:e?s|e?d)?\b|\btime[sd] out\b"
    r"|\bfreezes\b|\b(?:runs?|running|goes on|going on|compiles?|compiling|continues?) "
    r"(?:forever|indefinitely|endlessly)\b|\btak(?:es?|ing) (?:forever|an eternity)\b"
    # runaway compilation: "continuous compilation", "compiles continuously", "endless compile"
    r"|\b(?:continuous(?:ly)?|endless(?:ly)?|infinite(?:ly)?|never-ending) compil\w*"
    r"|\bcompil\w* (?:continuously|endlessly|without end)\b",
    re.IGNORECASE,
)
# Runaway memory, with no word about time: the run would hit the worker's memory limit.
_MEMORY_RE = re.compile(
    r"\bmemory (?:usage |use |consumption |footprint )?(?:keeps?|kept|continues|continued|is|was)?"
    r" ?(?:slowly |steadily |constantly |rapidly |quickly )?(?:increas|grow|ris|climb|explod)\w*"
    r"|\b(?:increasing|growing|unbounded|exploding|excessive|huge) memory\b"
    r"|\b(?:runs?|running|ran|goes|went) out of (?:memory|RAM)\b|\bOOM(?:-killed)?\b"
    r"|\bout-of-memory\b|\bmemory (?:leak|explosion|blow-?up)s?\b",
    re.IGNORECASE,
)
# "the machine crashed" (under a runaway compile) is not the process crashing.
_MACHINE_CRASH_RE = re.compile(
    r"\b(?:machine|system|computer|kernel|pc|laptop|server|host|os)(?:'s)? "
    r"(?:(?:has|had|would|will|eventually|finally) )?(?:crash|abort)\w*\b",
    re.IGNORECASE,
)
_NEGATION_RE = re.compile(
    r"\b(?:not|no|never|without|instead of|n't|nor|avoid|prevent)\b[^.;:]{0,30}$", re.IGNORECASE
)

_CHECK_FAILED_RE = re.compile(r"Check failed:?\s*[^\n`]*")
_INTERNAL_RE = re.compile(r"\b(?:tvm\.error\.)?InternalError\b(?::\s*[^\n`]*)?")
_MISMATCHED_RES = (
    re.compile(r"Mismatched elements: [^\n]*"),
    re.compile(
        r"Not equal to tolerance[^\n]*|Arrays are not (?:almost )?equal|Tensor-likes are not close"
    ),
)
_ERROR_LINE_RE = re.compile(
    r"^\s*(?P<line>(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Failure))"
    r"(?::\s*(?P<msg>.*))?)$"
)
_DIAG_RE = re.compile(r"^\s*error:\s+(?P<msg>\S.*)$")
_TB_HEAD_RE = re.compile(r"^\s*(?:>>> )?Traceback \(most recent call last\):?\s*$")
_CHAIN_RE = re.compile(
    r"During handling of the above exception|The above exception was the direct cause"
)
_NO_MODULE_RE = re.compile(r"No module named '([^']+)'")
_CANNOT_IMPORT_RE = re.compile(r"cannot import name '([^']+)' from '([^']+)'")
_MODULE_ATTR_RE = re.compile(r"module '([^']+)' has no attribute '([^']+)'")
_PY2_MODULE_ATTR_RE = re.compile(r"'module' object has no attribute '([^']+)'")

_WRONG_RE = re.compile(
    # "type/shape/signature mismatch" is a compiler check, not a wrong number.
    r"(?<!type )(?<!dtype )(?<!shape )(?<!signature )(?<!argument )(?<!structural )"
    r"(?<!struct info )(?<!layout )(?<!arity )(?<!version )(?<!abi )"
    r"\bmismatch(?:ed|es)?\b(?! (?:types?|shapes?|dtypes?|signatures?|arguments?)\b)"
    r"|\bincorrect(?:ly)?\b|\bnot correct(?:ly)?\b"
    # accuracy / precision words ("nn.dense accuracy error", "seems not so accurate")
    r"|\binaccura(?:te|cy)\b|\baccuracy\b|\bnot (?:\w+ ){0,2}(?:accurate|precise)\b"
    r"|\bprecision\b(?= (?:errors?|drops?|loss))"
    r"|\bnumerical(?:ly)? (?:differen(?:ce|t)|error|issue|problem)s?\b"
    r"|\b(?:results?|outputs?|values?) (?:differ|are different|is different)\b"
    r"|\b(?:differs?|different|inconsistent) (?:from|with|than) (?:the )?(?:numpy|onnx ?runtime|ort|pytorch|torch|tensorflow|tf|keras|reference|expected)\b"
    r"|\b(?:onnx ?runtime|ort|numpy|pytorch|torch)(?:'s)? (?:outputs?|results?)\b[^.]{0,30}\bdiffer"
    r"|\bwrong(?:ly)? (?:results?|outputs?|answers?|values?|IRs?|code|shapes?|index|indices|dtypes?|types?|numbers?)\b"
    r"|\b(?:is|are|was|were|seems?|looks?|goes|went|gives?|gave|produces?|produced|returns?|returned|gets?|got|outputs?|emits?|generates?|generated)\s+(?:\w+\s+)?wrong(?:ly)?\b"
    r"|\bm[ue]ssy\b"
    r"|(?:not|cannot|can't|isn't|aren't|fails? to)\b[^.]{0,60}\bcorrectly\b"
    r"|\binconsisten(?:t|cy)\b|\bnot (?:the )?(?:equal|same)\b|\bdiffer(?:s|ent|ence)?\b[^.]{0,20}\b(?:result|output|value)s?"
    r"|\b(?:result|output|value)s?\b[^.]{0,30}\bdiffer"
    r"|\bdiverge[sd]?\b|\bgarbage\b|\buninitiali[sz]ed (?:memory|values?|data)\b|\bgarbled\b"
    r"|\bunexpected (?:result|output|value)s?\b|\bprecision (?:loss|issue|problem)\b"
    r"|\bexpected\b[^.]{0,60}\bbut (?:got|get|is|was)\b|\bshould (?:be|return)\b[^.]{0,60}\bbut\b"
    r"|\bnon-?deterministic\b|\bNaNs?\b"
    # "running result error", "inference results are not right", "out_tvm ≠ out_ref"
    r"|\b(?:running|inference|execution|computed?|calculation) results? (?:errors?|wrong|is wrong)\b"
    r"|\bresults? (?:is|are) not (?:right|correct)\b|\w\s*≠\s*\w",
    re.IGNORECASE,
)
_GENERIC_FAIL_RE = re.compile(
    r"\bfail(?:s|ed|ure|ing)?\b|\berrors?\b|\bexceptions?\b|\bthrows?\b|\braises?\b"
    r"|\bcannot (?:be )?(?:compile|build|parse|run|import|load)d?\b|\bbroken\b",
    re.IGNORECASE,
)
_PASSED_RE = re.compile(
    r"\b(?:works?|worked|working|runs?|ran) (?:fine|well|correctly|as expected|properly|ok)\b"
    r"|\bno (?:errors?|exceptions?|problems?|crash(?:es)?)\b|\bwithout (?:any )?(?:errors?|problems?)\b"
    r"|\bsucceed(?:s|ed)?\b|\bsuccessfully\b|\bpasses\b",
    re.IGNORECASE,
)
_QUESTION_TITLE_RE = re.compile(
    r"^\s*(?:\[[^\]]*\]\s*)*(?:why|how|what|when|where|which|is|are|can|could|does|do|should|"
    r"question)\b|\?\s*$",
    re.IGNORECASE,
)

_HTML_COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)
_IMAGE_RE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK_RE = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_URL_RE = re.compile(r"https?://\S+")
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s*")
_FENCE_RE = re.compile(r"^\s*(?:```|~~~)")
# A section heading: "### Expected behavior", "**Actual behaviour:**".
_SECTION_RE = re.compile(r"^\s{0,3}(?:#{1,6}\s*(.+?)\s*#*\s*$|\*\*([^*]{1,60})\*\*:?\s*$)")


@dataclass(frozen=True)
class _Line:
    text: str
    where: str  # "title" | "body" | "comment"
    block: int = 0  # paragraphs and code blocks are numbered (blank lines and fences split)
    section: str = ""  # the heading above the line, lower-case ("expected behavior", ...)


def _script_lines(repro: Repro) -> frozenset[str]:
    if not repro.found:
        return frozenset()
    return frozenset(_squash(ln) for ln in repro.script.split("\n") if len(_squash(ln)) > 2)


def _squash(line: str) -> str:
    s = line.strip()
    for prefix in (">>> ", "... ", "$ ", "% "):
        if s.startswith(prefix):
            s = s[len(prefix) :].strip()
    return re.sub(r"\s+", " ", s)


def _clean(text: str) -> str:
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n")
    text = _HTML_COMMENT_RE.sub("", text)
    text = _IMAGE_RE.sub("", text)
    text = _LINK_RE.sub(r"\1", text)
    return _URL_RE.sub("", text)


def _reporter_lines(issue: Issue, repro: Repro) -> list[_Line]:
    """The reporter's own lines, minus the ones that made the repro."""
    script = _script_lines(repro)
    out = [_Line(issue.title.strip(), "title")] if issue.title.strip() else []
    sources = [("body", issue.body)]
    sources += [("comment", c.body) for c in issue.comments if c.author == issue.author]
    block = 0
    for where, text in sources:
        block += 1
        section = ""
        for raw in _clean(text).split("\n"):
            if _FENCE_RE.match(raw) or not raw.strip():
                block += 1
                continue
            hm = _SECTION_RE.match(raw)
            if hm:
                section = (hm.group(1) or hm.group(2) or "").strip().strip(":").lower()
            sq = _squash(raw)
            if not sq or sq in script:
                continue
            line = raw.rstrip()
            if line.lstrip().startswith(">") and not line.lstrip().startswith((">>>",)):
                line = line.lstrip()[1:]
            out.append(_Line(_HEADING_RE.sub("", line), where, block, section))
    return out


def _negated(text: str, start: int) -> bool:
    return bool(_NEGATION_RE.search(text[max(0, start - 40) : start]))


def parse_reported(issue: Issue, repro: Repro) -> Reported | None:
    """What the reporter saw, or ``None`` when the issue says nothing specific."""
    lines = _reporter_lines(issue, repro)
    for finder in (
        _crash,
        _internal,
        _mismatched,
        _error_line,
        _error_in_prose,
        _cut_cpp_traceback,
        _tvm_diagnostics,
        _hang,
        _wrong_words,
        _loose_crash,
    ):
        found = finder(lines)
        if found is not None:
            return _located(_tidy(found), lines)
    # With a script, any failure words count; without one, only the reporter's own sentences in
    # the body (not the title, not an untouched template) -- an issue that says "an error is
    # thrown (see the picture)" still reports a failure, a blank template does not.
    found = _generic_failure(lines if repro.found else [
        ln for ln in lines
        if ln.where == "body" and not _TEMPLATE_LINE_RE.match(ln.text)
        and not _TEMPLATE_PROSE_RE.search(ln.text)
    ])
    if found is not None:
        return _located(_tidy(found), lines)
    found = _passed(issue, lines)
    if found is not None:
        return found
    if not repro.found:
        return Reported(Outcome.NO_REPRO)
    return None


_TAGS_RE = re.compile(r"^(?:\s*\[[^\]]{1,40}\])+\s*")


def _tidy(rep: Reported) -> Reported:
    """Signatures without markdown decoration or title tags ("[Bug] ...")."""
    sig = _TAGS_RE.sub("", rep.signature).strip()
    sig = sig.strip("`* ").rstrip(".,;:").rstrip("`* ").strip()
    return Reported(rep.outcome, sig, rep.evidence)


def _located(rep: Reported, lines: list[_Line]) -> Reported:
    """A TVM-side report gains where in TVM the reporter saw it fail: the C++ files and
    functions of their tracebacks, and the passes the title or the error line name (as
    ``TVM location: ...`` evidence lines that :func:`bot.compare.compare` reads)."""
    if rep.outcome not in (Outcome.INTERNAL_ERROR, Outcome.TVM_ERROR):
        return rep
    frames = cpp_frames([ln.text for ln in lines if ln.where != "title"])
    title = next((ln.text for ln in lines if ln.where == "title"), "")
    loc = locations_of(frames, f"{title}\n{rep.signature}")
    return Reported(rep.outcome, rep.signature, (*rep.evidence, *loc.evidence())) if loc else rep


def _crash(lines: list[_Line]) -> Reported | None:
    best: tuple[int, int, str, str] | None = None  # (rank, index, signature, line)
    for i, ln in enumerate(lines):
        for rank, pat in _CRASH_PATTERNS:
            for m in pat.finditer(ln.text):
                if rank >= 3 and _negated(ln.text, m.start()):
                    continue
                cand = (rank, i, m.group(0).strip(), ln.text.strip())
                if best is None or cand[:2] < best[:2]:
                    best = cand
    if best is None:
        return None
    rank, _, sig, line = best
    if rank >= 4:
        sig = _sentence(line, sig)
    return Reported(Outcome.CRASH, signature=sig, evidence=(line,))


def _internal(lines: list[_Line]) -> Reported | None:
    for ln in lines:
        m = _CHECK_FAILED_RE.search(ln.text)
        if m:
            return Reported(
                Outcome.INTERNAL_ERROR, signature=m.group(0).strip(), evidence=(ln.text.strip(),)
            )
    for ln in lines:
        m = _INTERNAL_RE.search(ln.text)
        if m and ":" in m.group(0):
            return Reported(
                Outcome.INTERNAL_ERROR, signature=m.group(0).strip(), evidence=(ln.text.strip(),)
            )
    return None


def _mismatched(lines: list[_Line]) -> Reported | None:
    for pat in _MISMATCHED_RES:
        for ln in lines:
            m = pat.search(ln.text)
            if m:
                return Reported(
                    Outcome.WRONG_RESULT, signature=m.group(0).strip(), evidence=(ln.text.strip(),)
                )
    return None


# A message cut mid-phrase by a line wrap.
_WRAPPED_TAIL_RE = re.compile(r"\b(?:has|have|has no|is|not|of|to|the|a|named|from|for|in)$")


def _error_line(lines: list[_Line]) -> Reported | None:
    """The last reported exception line (or TVMScript ``error:`` diagnostic)."""
    # Exceptions group into reports: a new traceback (not chained to the one before it) starts
    # a new report. Within a report the last exception counts (a chain ends in the one the
    # user saw); across reports the first counts (an interactive session's first failure).
    hit: tuple[str, str, str, int] | None = None  # (type, msg, line, index)
    first_report: tuple[str, str, str, int] | None = None
    new_report = False
    chained = False
    for i, ln in enumerate(lines):
        if ln.where == "title":
            continue
        if _CHAIN_RE.search(ln.text):
            chained = True
            continue
        if _TB_HEAD_RE.match(ln.text):
            if hit is not None and not chained:
                new_report = True
            chained = False
            continue
        m = _ERROR_LINE_RE.match(ln.text)
        d = None if m else _DIAG_RE.match(ln.text)
        if not m and not d:
            continue
        if new_report and first_report is None:
            first_report = hit
        if m:
            msg = (m["msg"] or "").strip()
            nxt = lines[i + 1].text if i + 1 < len(lines) else ""
            if _WRAPPED_TAIL_RE.search(msg) and nxt.strip() and not _ERROR_LINE_RE.match(nxt):
                # A message wrapped over two lines ("... has no\n    attribute 'X'").
                msg = f"{msg} {nxt.strip()}"
            hit = (m["type"], msg, m["line"].strip(), i)
        elif d:
            hit = ("DiagnosticError", d["msg"].strip(), d["msg"].strip(), i)
    if first_report is not None and lines[first_report[3]].where == "body":
        hit = first_report
    if hit is None:
        return None
    etype, msg, line, index = hit
    short = etype.rsplit(".", 1)[-1]
    sig = normalize_paths(line)
    ev = (sig,)
    if short in {"ModuleNotFoundError", "ImportError"}:
        nm = _NO_MODULE_RE.search(msg)
        cm = _CANNOT_IMPORT_RE.search(msg)
        mod = nm.group(1) if nm else (cm.group(2) if cm else "")
        if nm and mod == "tvm":  # TVM itself is not installed where the reporter ran it
            return Reported(Outcome.MISSING_DEPENDENCY, signature=sig, evidence=ev)
        if mod == "tvm" or mod.startswith("tvm."):
            return Reported(Outcome.API_MISMATCH, signature=sig, evidence=ev)
        if mod or not re.search(r"\btvm|\.so\b|\.dll\b|DLL", msg):
            # Another package is missing (or, in Python 2's "cannot import name X", a name
            # that only the reporter's installed packages lack).
            return Reported(Outcome.MISSING_DEPENDENCY, signature=sig, evidence=ev)
    if short == "AttributeError":
        flat = " ".join(msg.split())  # a message wrapped over lines
        am = _MODULE_ATTR_RE.search(flat)
        if am and (am.group(1) == "tvm" or am.group(1).startswith("tvm.")):
            return Reported(Outcome.API_MISMATCH, signature=sig, evidence=ev)
        if _PY2_MODULE_ATTR_RE.search(flat):
            # Python 2 does not name the module; in a TVM report it is one of TVM's.
            return Reported(Outcome.API_MISMATCH, signature=sig, evidence=ev)
    if short in {"NameError", "SyntaxError", "IndentationError", "UnboundLocalError"}:
        return Reported(Outcome.PYTHON_ERROR, signature=sig, evidence=ev)
    if short == "AssertionError":
        # An assertion in TVM's own code (a traceback through tvm/) is TVM's error.
        block = "\n".join(ln.text for ln in lines[max(0, index - 40) : index + 1])
        err = parse_last_error(block)
        if err is not None and err.frames and err.frames[-1].kind == "tvm":
            return Reported(Outcome.TVM_ERROR, signature=sig, evidence=ev)
        return Reported(Outcome.WRONG_RESULT, signature=sig, evidence=ev)
    return Reported(Outcome.TVM_ERROR, signature=sig, evidence=ev)


# A C++ frame of TVM in a Python traceback (``File "<unknown>", line 0, in tvm::...``), in an
# old-style "Stack trace:" (``  0: tvm::...``) or a ``[bt] (0) ...`` backtrace.
_CPP_FRAME_RE = re.compile(
    r'^\s*(?:File "[^"]*", line \d+, in |\d+: |\[bt\] \(\d+\) \S+\(?)(?:tvm|TVM)\w*::'
)
_TB_START_RE = re.compile(r"^\s*(?:Traceback \(most recent call last\):|Stack trace:)\s*$")
# TVM's own diagnostics, recognisable without an ``XxxError:`` line.
_TVM_DIAG_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bLLVM ERROR\b(?::[^\n`]*)?", re.IGNORECASE),
    re.compile(
        r"The (?:Relay|Relax) type checker is unable to show the following types match[^\n`]*"
    ),
    re.compile(r"An error occurred during the execution of TVM[^\n`]*"),
    re.compile(
        r"^\s*\[\d{2}:\d{2}:\d{2}\] \S*(?:src|include)/\S+\.(?:cc|h|cpp):\d+: "
        r"(?!(?:Warning|warning|Info|info|Note|note)\b)"
        r"(?=[^\n]*\b(?:[Ee]rror|fail(?:s|ed)?|[Cc]annot|[Uu]nable|[Ii]nvalid|not supported|"
        r"[Uu]nsupported|does not match|conflict)).*"
    ),
)
_BACKTRACE_NOTE_RE = re.compile(r"note: run with `?TVM_BACKTRACE=1`?")


def _cut_cpp_traceback(lines: list[_Line]) -> Reported | None:
    """A traceback that ends in TVM's C++ frames but was cut before its exception line: TVM's
    C++ side raised, and its fatal checks raise ``InternalError``; the title names the error."""
    in_tb = False
    last_cpp = ""
    for ln in lines:
        if ln.where == "title":
            continue
        if _TB_START_RE.match(ln.text):
            in_tb = True
            continue
        if in_tb and _CPP_FRAME_RE.match(ln.text):
            last_cpp = ln.text.strip()
    if not last_cpp:
        return None
    title = next((ln.text for ln in lines if ln.where == "title"), "")
    sig = _TAGS_RE.sub("", title).replace("`", "").strip() or last_cpp
    return Reported(Outcome.INTERNAL_ERROR, signature=sig, evidence=(last_cpp,))


def _tvm_diagnostics(lines: list[_Line]) -> Reported | None:
    """TVM's own error output without an ``XxxError:`` line (old Relay messages, the
    ``TVM_BACKTRACE`` note, an ``[hh:mm:ss] src/....cc:NN:`` error log, ``LLVM ERROR``)."""
    for pat in _TVM_DIAG_RES:
        for ln in _body_first(lines):
            m = pat.search(ln.text)
            if m:
                return Reported(
                    Outcome.TVM_ERROR, signature=m.group(0).strip(), evidence=(ln.text.strip(),)
                )
    for i, ln in enumerate(lines):
        if ln.where != "title" and _BACKTRACE_NOTE_RE.search(ln.text):
            # The message TVM printed just before its note: the first line of that group.
            j = i
            while j > 0 and lines[j - 1].block == ln.block and lines[j - 1].where != "title":
                j -= 1
            first = lines[j].text.strip() if j < i else ln.text.strip()
            return Reported(Outcome.TVM_ERROR, signature=first, evidence=(ln.text.strip(),))
    return None


def _body_first(lines: list[_Line]) -> list[_Line]:
    """The body, then the title, then the author's comments (later words are often about
    something else: a fix that worked, another problem)."""
    order = {"body": 0, "title": 1, "comment": 2}
    return sorted(lines, key=lambda ln: order.get(ln.where, 3))


def _loose_crash(lines: list[_Line]) -> Reported | None:
    for ln in _body_first(lines):
        machine = [mc.span() for mc in _MACHINE_CRASH_RE.finditer(ln.text)]
        for m in _LOOSE_CRASH_RE.finditer(ln.text):
            if any(a <= m.start() < b for a, b in machine):
                continue
            if not _negated(ln.text, m.start()):
                return Reported(
                    Outcome.CRASH,
                    signature=_sentence(ln.text, m.group(0)),
                    evidence=(ln.text.strip(),),
                )
    return None


def _hang(lines: list[_Line]) -> Reported | None:
    """Runaway time ("hangs", "never finishes", "continuous compilation"): ``timeout``, also
    when memory grows with it; runaway memory with no word about time ("runs out of memory",
    "OOM", "memory keeps growing"): ``resource-limit``."""
    for outcome, pat in ((Outcome.TIMEOUT, _HANG_RE), (Outcome.RESOURCE_LIMIT, _MEMORY_RE)):
        for ln in _body_first(lines):
            if _expectation(ln):
                continue
            for m in pat.finditer(ln.text):
                if not _negated(ln.text, m.start()):
                    return Reported(
                        outcome,
                        signature=_sentence(ln.text, m.group(0)),
                        evidence=(ln.text.strip(),),
                    )
    return None


_ERROR_IN_PROSE_RE = re.compile(
    r"(?<![\w.])((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception))(?::\s*(\S[^`]*))?"
)


def _error_in_prose(lines: list[_Line]) -> Reported | None:
    """``XxxError: message`` quoted inside a sentence (or the title); or Python's own words for
    a missing module without the class name (``**No module named 'tvm'**``)."""
    for ln in _body_first(lines):
        m = _ERROR_IN_PROSE_RE.search(ln.text)
        if m and m.group(2):
            line = f"{m.group(1)}: {m.group(2).strip()}"
            return _error_line([_Line(line, "body")])
    for ln in _body_first(lines):
        text = ln.text.replace("*", "").replace("`", "")
        m = _BARE_NO_MODULE_RE.search(text)
        if m and not _ERROR_IN_PROSE_RE.search(text):
            return _error_line([_Line(f"ModuleNotFoundError: {m.group(0)}", "body")])
    return None


_BARE_NO_MODULE_RE = re.compile(r"No module named '[\w.]+'")


def _wrong_words(lines: list[_Line]) -> Reported | None:
    for ln in _body_first(lines):
        for m in _WRONG_RE.finditer(ln.text):
            if m.group(0).lower().startswith("not") or not _negated(ln.text, m.start()):
                return Reported(
                    Outcome.WRONG_RESULT,
                    signature=_sentence(ln.text, m.group(0)),
                    evidence=(ln.text.strip(),),
                )
    return None


def _generic_failure(lines: list[_Line]) -> Reported | None:
    for ln in _body_first(lines):
        if ln.text.strip().lower().startswith(("expected", "what you were expecting")):
            continue
        for m in _GENERIC_FAIL_RE.finditer(ln.text):
            if _negated(ln.text, m.start()):
                continue
            return Reported(
                Outcome.TVM_ERROR,
                signature=_sentence(ln.text, m.group(0)),
                evidence=(ln.text.strip(),),
            )
    return None


# A sentence about another time or setup ("Previously it worked", "with version 0.18 it runs
# fine"): its pass-words say nothing about the report.
_ELSEWHEN_RE = re.compile(
    r"\b(?:previously|used to|earlier|before (?:I |we )?(?:upgrad|updat|switch|the )\w*"
    r"|(?:older|previous|earlier|last|old) (?:versions?|releases?|commits?|builds?)"
    r"|with (?:version|v?\d+\.\d+)|(?:in|on) (?:version |v)?\d+\.\d+"
    r"|worked (?:in|on|with|before|until)|until (?:version|v?\d+\.\d+|recently)|if I\b|when I (?:remove|comment|change|replace|use))",
    re.IGNORECASE,
)
# Sentences of the TVM issue template itself (its welcome text and placeholders).
_TEMPLATE_PROSE_RE = re.compile(
    r"Thanks for participating in the TVM community|issue tracker is used for actionable items"
    r"|Issues that are inactive for a period|Feel free to reopen|Please refer to the list of label"
    r"|What you were expecting|What actually happened|Any environment details|Preferably a minimal",
    re.IGNORECASE,
)
_TEMPLATE_LINE_RE = re.compile(
    r"^\s*(?:what you were expecting|what actually happened|any environment details"
    r"|preferably a minimal script|expected behaviou?r|actual behaviou?r)\b",
    re.IGNORECASE,
)


_ACTUAL_LINE_RE = re.compile(
    r"^\s*(?:\*\*)?(?:reality|actual(?:ly)?|in reality|instead|observed|what actually happened"
    r"|actual (?:behaviou?r|result|output))\b",
    re.IGNORECASE,
)


def _expectation(ln: _Line) -> bool:
    """A line that says what should happen ("Expected behavior: no error"), not what did (a
    "Reality: ..." / "Actual: ..." line under an expectation heading says what did)."""
    if _ACTUAL_LINE_RE.match(ln.text):
        return False
    return ln.section.startswith(("expected", "what you were expecting")) or bool(
        re.match(r"^\s*(?:expected|what you were expecting|i expect|it should)\b", ln.text, re.I)
    )


def _failure_words(lines: list[_Line]) -> bool:
    """Failure wording anywhere (title included) outside expectations and template text."""
    for ln in lines:
        if _expectation(ln) or _TEMPLATE_LINE_RE.match(ln.text):
            continue
        for pat in (_GENERIC_FAIL_RE, _LOOSE_CRASH_RE):
            for m in pat.finditer(ln.text):
                if not _negated(ln.text, m.start()):
                    return True
    return False


def _passed(issue: Issue, lines: list[_Line]) -> Reported | None:
    if _failure_words(lines):
        return None
    for ln in lines:
        if _expectation(ln):
            continue
        for sentence in re.split(r"(?<=[.!?;])\s+", ln.text):
            if _PASSED_RE.search(sentence) and not _ELSEWHEN_RE.search(sentence):
                return Reported(Outcome.PASSED, signature="", evidence=(ln.text.strip(),))
    if _QUESTION_TITLE_RE.search(issue.title):
        return Reported(Outcome.PASSED, signature="", evidence=(issue.title.strip(),))
    return None


def _sentence(line: str, phrase: str) -> str:
    """The clause of ``line`` around ``phrase`` (short, for the signature)."""
    text = line.strip()
    pos = text.find(phrase)
    if pos < 0:
        return text[:200]
    start = max(text.rfind(". ", 0, pos), text.rfind("! ", 0, pos), text.rfind("? ", 0, pos))
    start = 0 if start < 0 else start + 2
    ends = [e for e in (text.find(". ", pos), text.find("! ", pos), text.find("? ", pos)) if e >= 0]
    end = min(ends) + 1 if ends else len(text)
    return text[start:end].strip().rstrip(":")[:200]
