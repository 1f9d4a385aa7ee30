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

import itertools
import re
from collections.abc import Callable, Iterable

from bot import lazyre
from bot.fragments import imports_only
from bot.models import Issue, Outcome, Reported, Repro
from bot.printed import ATOM_RE, printed_chunks, printed_pair_differs, same_atoms
from bot.records import record, replace
from bot.tracebacks import (
    cpp_frames,
    frame_kind,
    locations_of,
    normalize_paths,
    parse_errors,
    parse_last_error,
)
from bot.vocabulary import (
    ACCEPTED_RE,
    ACTUAL_LINE_RE,
    AFTERMATH_RE,
    BACKSTORY_RE,
    BACKTRACE_NOTE_RE,
    CANNOT_IMPORT_RE,
    CHECK_FAILED_RE,
    CRASH_PATTERNS,
    ELSEWHEN_RE,
    GENERIC_FAIL_RE,
    HANG_RE,
    INTERNAL_RE,
    INTERRUPTED_RE,
    LOOSE_CRASH_RE,
    MACHINE_CRASH_RE,
    MEMORY_RE,
    MISMATCHED_RES,
    MODULE_ATTR_RE,
    NEGATION_RE,
    NO_MODULE_RE,
    PASSED_RE,
    PY2_MODULE_ATTR_RE,
    QUESTION_TITLE_RE,
    REFERENCE_RAISES_RE,
    REMOVED_FORM_RE,
    REPORTED_WRONG_RE,
    SCRIPT_ERROR_TYPES,
    SECTION_RE,
    SHOULD_NOT_HOLD_RE,
    TEMPLATE_LINE_RE,
    TEMPLATE_PROSE_RE,
    TESTING_MSG_RE,
    TVM_DIAG_RES,
    TVM_ERROR_TYPES,
    TVM_VS_REFERENCE_RE,
    VALUE_ATOM_RE,
    VALUE_BARE_PAIR_RE,
    VALUE_NOT_RE,
    VALUE_REFERENCE_SIDE_RE,
    VALUE_SPAN_RE,
    VALUE_TEXT_RE,
    VALUE_TVM_SIDE_RE,
    VM_ARGUMENT_CHECK,
    WRONG_TITLE_RE,
    ends_in_result_check,
    is_tvm_name,
)

# --------------------------------------------------------------------------------------------
# Reading pasted output (the words themselves are in bot.vocabulary)

_ERROR_LINE_RE = lazyre.compile(
    r"^\s*(?P<line>(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Failure|Failed))"
    r"(?::\s*(?P<msg>.*))?)$"
)
_DIAG_RE = lazyre.compile(r"^\s*error:\s+(?P<msg>\S.*)$")
_TB_HEAD_RE = lazyre.compile(r"^\s*(?:>>> )?Traceback \(most recent call last\):?\s*$")
_CHAIN_RE = lazyre.compile(
    r"During handling of the above exception|The above exception was the direct cause"
)

# Markdown images and links. Their text and target exclude the opening bracket too, so that
# every scan ends at the next one: linear on "![![![..." (quadratic with ``[^\]]*``).
_IMAGE_RE = lazyre.compile(r"!\[[^\[\]]*\]\([^()]*\)")
_LINK_RE = lazyre.compile(r"\[([^\[\]]*)\]\([^()]*\)")
_URL_RE = lazyre.compile(r"https?://\S+")
_HEADING_RE = lazyre.compile(r"^\s{0,3}#{1,6}\s*")
_FENCE_RE = lazyre.compile(r"^\s*(?:```|~~~)")


@record
class _Line:
    text: str
    where: str  # "title" | "body" | "comment"
    block: int = 0  # paragraphs and code blocks are numbered (blank lines and fences split)
    section: str = ""  # the heading above the line, lower-case ("expected behavior", ...)
    fenced: bool = False  # inside a code fence: pasted output, not the reporter's words
    # A traceback frame line ("File ..., line N, in f") whose source line below it is also a
    # line of the script (so left out of the reporter's lines): that source, for reading the
    # traceback whole (:func:`_raised_in_own_code`).
    frame_source: str = ""
    source: int = 0  # 0: the title and the body; n: the author's n-th comment
    quoted: bool = False  # a ``> `` quote in the body: someone's words (docs, a message)


# A comment in the script that starts the output the author saw: ``# Output:``, ``# Error:``.
_OUTPUT_COMMENT_RE = lazyre.compile(
    r"^\s*#\s*(?:output|outputs|result|results|error|prints?|got|traceback|it (?:prints|gives|"
    r"raises|fails with))\b[^\n]{0,40}:?\s*$", re.I
)


def _script_lines(repro: Repro) -> tuple[frozenset[str], frozenset[str]]:
    """The script's own lines (not the reporter's words), and the comment lines at its end that
    hold the output the reporter saw (``# Output:`` then ``# Traceback ...`` lines: theirs)."""
    if not repro.found:
        return frozenset(), frozenset()
    lines = repro.script.split("\n")
    shown: set[str] = set()
    for k, ln in enumerate(lines):
        if _OUTPUT_COMMENT_RE.match(ln):
            rest = lines[k + 1 :]
            if all(not x.strip() or x.lstrip().startswith("#") for x in rest):
                shown = {_squash(x) for x in rest if x.strip()}
                break
    own = frozenset(sq for ln in lines if len(sq := _squash(ln)) > 2 and sq not in shown)
    return own, frozenset(shown)


def _squash(line: str) -> str:
    s = line.strip()
    for prefix in (">>> ", "... ", "$ ", "% "):
        if s.startswith(prefix):
            s = s[len(prefix) :].strip()
    return re.sub(r"\s+", " ", s)


def _strip_html_comments(text: str) -> str:
    """``<!-- ... -->`` removed (an unclosed one stays), by ``str.find``: linear."""
    out: list[str] = []
    i = 0
    while True:
        a = text.find("<!--", i)
        b = text.find("-->", a + 4) if a >= 0 else -1
        if b < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:a])
        i = b + 3


def _clean(text: str) -> str:
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n")
    text = _strip_html_comments(text)
    text = _IMAGE_RE.sub("", text)
    text = _LINK_RE.sub(r"\1", text)
    return _URL_RE.sub("", text)


# The earlier script, named in the comment that posts the one run instead ("the script above
# fails with ...", "my first snippet had"): what it did is not the report.
_OLD_SCRIPT_RE = lazyre.compile(
    r"\b(?:script|code|snippet|repro\w*|example|version) (?:above|before|in the (?:body|issue))\b"
    r"|\b(?:above|previous|earlier|original|first|old) (?:script|code|snippet|repro\w*|example|"
    r"version)\b", re.I)


def _reporter_lines(issue: Issue, repro: Repro) -> list[_Line]:
    """The reporter's own lines, minus the ones that made the repro."""
    script, shown = _script_lines(repro)
    out = [_Line(issue.title.strip(), "title")] if issue.title.strip() else []
    sources = [("body", issue.body, False)]
    sources += [("comment", c.body, bool(repro.blocks) and repro.blocks[0].startswith(f"comment{k}#"))
                for k, c in enumerate(issue.comments, start=1) if c.author == issue.author]
    block = 0
    for n, (where, text, gives_repro) in enumerate(sources):
        block += 1
        section = ""
        fenced = False
        before_code = gives_repro
        for raw in _clean(text).split("\n"):
            if _FENCE_RE.match(raw):
                fenced = not fenced
                before_code = False
            if before_code and _OLD_SCRIPT_RE.search(raw):
                # "Sorry, the script above fails with `AttributeError: np.NaN was removed`...
                # Corrected version:": the failure of the script this comment replaces.
                continue
            if _FENCE_RE.match(raw) or not raw.strip():
                block += 1
                continue
            hm = SECTION_RE.match(raw.rstrip())
            if hm:
                head = (hm.group(1) or "").rstrip("#").strip() or hm.group(2) or ""
                section = head.strip().strip(":").lower()
            sq = _squash(raw)
            if not sq or sq in script:
                if sq and out and _FRAME_LINE_RE.match(out[-1].text) and not out[-1].frame_source:
                    out[-1] = replace(out[-1], frame_source=raw.strip())
                continue
            line = raw.rstrip()
            if sq in shown:  # "# tvm.error.InternalError: ..." under "# Output:" in the script
                line = re.sub(r"^\s*# ?", "", line)
            quoted = line.lstrip().startswith(">") and not line.lstrip().startswith((">>>",))
            if quoted:
                if where == "comment":
                    # A quote in the author's comment is someone else's words ("it runs
                    # without errors for me"), not what the reporter saw.
                    continue
                line = line.lstrip()[1:]
            out.append(_Line(_HEADING_RE.sub("", line), where, block, section, fenced, source=n,
                             quoted=quoted and not fenced))
    return out


def _wrong_title_and_checked(issue: Issue, repro: Repro) -> Callable[[list[_Line]], Reported | None]:
    """The title says the numbers are wrong ("wrong result", "wrong predictions") and the
    script ends in its own result check (``assert_allclose`` and kin): a wrong result, whatever
    else the text quotes on the way."""

    def finder(lines: list[_Line]) -> Reported | None:
        title = issue.title.strip()
        m = WRONG_TITLE_RE.search(title)
        if m is None or _negated(title, m.start()) or not ends_in_result_check(repro.script):
            return None
        return Reported(
            Outcome.WRONG_RESULT, signature=_sentence(title, m.group(0)), evidence=(title,)
        )

    return finder


def _assertion_named(repro: Repro) -> Callable[[list[_Line]], Reported | None]:
    """The reporter names an ``AssertionError`` in words ("fails on main (AssertionError)")
    and the script has an ``assert`` of its own: its check of the result failed."""

    def finder(lines: list[_Line]) -> Reported | None:
        if not _ASSERT_STMT_RE.search(repro.script) and not ends_in_result_check(repro.script):
            return None
        for ln in _body_first(lines):
            m = _ASSERTION_WORD_RE.search(ln.text)
            if m and not ln.fenced and not _negated(ln.text, m.start()):
                return Reported(Outcome.WRONG_RESULT, signature=_sentence(ln.text, m.group(0)),
                                evidence=(ln.text.strip(),))
        return None

    return finder


_ASSERT_STMT_RE = lazyre.compile(r"(?:^|[;:]\s*)assert\b", re.M)
_ASSERTION_WORD_RE = lazyre.compile(r"\bAssertionError\b(?!:)")


def _output_should_not_hold(repro: Repro) -> Callable[[list[_Line]], Reported | None]:
    """The report shows the script's output and says something in it should not be there ("the
    printed IR contains a `T.where(...)` line. I think this line should not be there"): the
    output is the wrong result (the run is compared with the output shown). Without shown
    output such a complaint stays a pass that should not be one (wasteful IR)."""

    def finder(lines: list[_Line]) -> Reported | None:
        if not repro.shown_output:
            return None
        for ln in _body_first(lines):
            m = SHOULD_NOT_HOLD_RE.search(ln.text)
            if m and not ln.fenced and not _expectation(ln) and not _negated(ln.text, m.start()):
                return Reported(Outcome.WRONG_RESULT, signature=_sentence(ln.text, m.group(0)),
                                evidence=(ln.text.strip(),))
        return None

    return finder


def _shown_chunks(repro: Repro) -> list[str]:
    """The lines of the output the reporter shows, an array spread over lines joined."""
    return [ln.strip() for ln in printed_chunks(repro.shown_output.split("\n"))]


def _shown_pair_differs(repro: Repro) -> Callable[[list[_Line]], Reported | None]:
    """The output the reporter shows their script printing has TVM's value and the
    reference's, each under its label, and they differ ("tvm count: [ True  True]" above
    "expected : [4 1]"): a wrong result, with no word needed."""

    def finder(lines: list[_Line]) -> Reported | None:
        line = printed_pair_differs(_shown_chunks(repro)) if repro.shown_output else ""
        return Reported(Outcome.WRONG_RESULT, signature=line, evidence=(line,)) if line else None

    return finder


# "expected `x` and `x * 2 + y`", "I expect `[1 2]`", "should be `4`": the value wanted, quoted.
_EXPECTED_QUOTED_RE = lazyre.compile(
    r"^\W{0,3}(?:but\s+)?(?:(?:i|it|this|that|the (?:result|output|value|answer))\s+)?"
    r"(?:expected|expect(?:ing)?|should\s+(?:be|give|print|return))"
    r"\b[^`.\n]{0,30}`([^`\n]{1,200})`", re.I)


def _shown_then_expected(repro: Repro) -> Callable[[list[_Line]], Reported | None]:
    """The reporter shows what the script printed, then says in their own words which value
    they expected, quoted, and it is not what was shown ("output: ``T.min(x, x + y)``" then
    "expected `x`"): a wrong result, with no other word needed."""

    def finder(lines: list[_Line]) -> Reported | None:
        if not repro.shown_output:
            return None
        shown = {" ".join(ln.split()) for ln in repro.shown_output.split("\n") if ln.strip()}
        for ln in lines:
            m = None if ln.fenced or ln.where == "title" else _EXPECTED_QUOTED_RE.match(ln.text)
            if m and " ".join(m.group(1).split()) not in shown:
                return Reported(Outcome.WRONG_RESULT, signature=_sentence(ln.text, m.group(0)),
                                evidence=(ln.text.strip(),))
        return None

    return finder


# A line of its own that introduces the reference's output: "torch:", "numpy gives:",
# "onnxruntime output (correct):", "expected:".
_REFERENCE_INTRO_RE = lazyre.compile(
    r"^\W{0,3}(?:(?:but|while|whereas|and)\s+)?(?:the\s+)?(?:torch|pytorch|numpy|np|onnx ?runtime|"
    r"ort|tensorflow|tf|keras|jax|scipy|expected|reference|correct)(?:\s+(?:output|result|gives|"
    r"says|returns|prints|values?))?\s*(?:\([^)\n]{0,40}\))?\s*:\s*$", re.I)


def _shown_then_reference(repro: Repro) -> Callable[[list[_Line]], Reported | None]:
    """The output the script printed is shown, then a block the text labels as the
    reference's ("torch:" then what torch printed), with other values: a wrong result, with
    no word needed."""

    def finder(lines: list[_Line]) -> Reported | None:
        got = ATOM_RE.findall(" ".join(_shown_chunks(repro)))
        if not got:
            return None
        for k, ln in enumerate(lines[:-1]):
            nxt = lines[k + 1]
            if ln.fenced or not nxt.fenced or not _REFERENCE_INTRO_RE.match(ln.text):
                continue
            ref = " ".join(x.text for x in lines[k + 1:] if x.fenced and x.block == nxt.block)
            want = ATOM_RE.findall(ref)
            if want and not same_atoms(got, want):
                first = next((x for x in repro.shown_output.split("\n") if x.strip()), "")
                return Reported(Outcome.WRONG_RESULT, signature=f"printed {first.strip()}"[:200],
                                evidence=(ln.text.strip(), nxt.text.strip()))
        return None

    return finder


# "it seems there is some confliction", "the two libraries clash": they cannot be loaded together.
_CLASH_RE = lazyre.compile(r"\b(?:conflict\w*|confliction|clash\w*)\b", re.I)


def _import_clash(repro: Repro) -> Callable[[list[_Line]], Reported | None]:
    """The script only imports two or more packages ("import torch" then "import tvm", either
    order) and the reporter says they conflict, with no message: two native libraries that
    take the process down when loaded together (clashing symbols, a segfault at import)."""

    def finder(lines: list[_Line]) -> Reported | None:
        if len(imports_only(repro.script)) < 2:
            return None
        for ln in lines:
            m = None if ln.fenced else _CLASH_RE.search(ln.text)
            if m and not _negated(ln.text, m.start()):
                return Reported(Outcome.CRASH, signature="", evidence=(ln.text.strip(),))
        return None

    return finder


# A line of the reporter's prose that quotes a reference's values: "torch (erf): -0.1002,
# -0.1543, 0.3457", "numpy gives 2.75".
_REFERENCE_VALUES_RE = lazyre.compile(
    r"\b(?:numpy|np|onnx ?runtime|ort|pytorch|torch|tensorflow|tf|keras|jax|scipy)\b"
    r"[^\n]{0,40}?[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?[^\n]{0,20}?[-+]?\d+(?:\.\d+)?", re.I)


def _questioned_output(issue: Issue, repro: Repro) -> Callable[[list[_Line]], Reported | None]:
    """A question for a title ("R.nn.gelu is the tanh approximation, not exact erf gelu?"), the
    output the script printed shown, and a reference's values quoted in the prose beside it:
    the reporter asks whether that output is wrong -- a run that prints other output does not
    show it (a question alone would read as a run that passed)."""

    def finder(lines: list[_Line]) -> Reported | None:
        shown = next((x.strip() for x in repro.shown_output.split("\n") if x.strip()), "")
        if not QUESTION_TITLE_RE.search(issue.title) or not any(ch.isdigit() for ch in shown):
            return None
        said = next((ln for ln in lines if not ln.fenced and ln.where != "title"
                     and _REFERENCE_VALUES_RE.search(ln.text)), None)
        if said is None:
            return None
        return Reported(Outcome.WRONG_RESULT, signature=f"prints {shown}"[:200],
                        evidence=(issue.title.strip(), said.text.strip()))

    return finder


def _negated(text: str, start: int) -> bool:
    return bool(NEGATION_RE.search(text[max(0, start - 40) : start]))


def parse_reported(issue: Issue, repro: Repro) -> Reported | None:
    """What the reporter saw, or ``None`` when the issue says nothing specific."""
    lines = _reporter_lines(issue, repro)
    checked = _wrong_title_and_checked(issue, repro)
    finders = (
        _crash,
        _internal,
        _mismatched,
        checked,
        _error_line,
        _error_in_prose,
        _cut_cpp_traceback,
        _tvm_diagnostics,
        _cut_python_traceback,
        _error_named_in_prose,
        _error_quoted,
        _error_said,
        _hang,
        _output_should_not_hold(repro),
        _wrong_words,
        _values_compared,
        _assertion_named(repro),
        _loose_crash,
        _expected_vs_actual,
        _shown_pair_differs(repro),
        _shown_then_expected(repro),
        _shown_then_reference(repro),
        _refusal_as_title,
        _import_clash(repro),
        _accepted_with_output(repro),
        _questioned_output(issue, repro),
    )
    retried = _retried_on_newer(lines)
    if retried:
        # The author tried a newer TVM and shows what it does now: that is the report.
        for finder in finders:
            found = finder(retried)
            if found is not None and found.outcome not in (Outcome.PASSED, Outcome.NO_REPRO):
                return _with_values(_located(_tidy(found), retried), retried)
    for finder in finders:
        found = finder(lines)
        if found is not None:
            return _with_values(_located(_tidy(found), lines), lines)
    # With a script, any failure words count; without one, only the reporter's own sentences in
    # the body (not the title, not an untouched template) -- an issue that says "an error is
    # thrown (see the picture)" still reports a failure, a blank template does not.
    found = _generic_failure(lines if repro.found else [
        ln for ln in lines
        if ln.where == "body" and not TEMPLATE_LINE_RE.match(ln.text)
        and not TEMPLATE_PROSE_RE.search(ln.text)
    ])
    if found is not None:
        return _located(_tidy(found), lines)
    found = _passed(issue, lines, with_script=repro.found)
    if found is not None:
        return found
    if not repro.found:
        return Reported(Outcome.NO_REPRO)
    return None


def _with_values(rep: Reported, lines: list[_Line]) -> Reported:
    """A wrong result gains the values the reporter quotes as TVM's (:func:`quoted_values`)."""
    if rep.outcome != Outcome.WRONG_RESULT:
        return rep
    values = quoted_values(lines)
    return replace(rep, values=values) if values else rep


def _sided_values(text: str) -> list[tuple[str, str]]:
    """The values ``text`` quotes in inline code, each with whose it is by the words just before
    it ("tvm": "TVM gives", "I get"; "ref": "numpy gives", "expected"; the nearest side named
    wins), in order; spans no words place on either side are left out."""
    out: list[tuple[str, str]] = []
    start = 0
    for m in VALUE_SPAN_RE.finditer(text):
        val = m.group("val").strip()
        before = text[max(start, m.start() - 60) : m.start()]
        start = m.end()
        if not VALUE_TEXT_RE.fullmatch(val) or not VALUE_ATOM_RE.search(val):
            continue
        tvm = [t.end() for t in VALUE_TVM_SIDE_RE.finditer(before)]
        ref = [r.end() for r in VALUE_REFERENCE_SIDE_RE.finditer(before)]
        if tvm or ref:
            out.append(("tvm" if tvm and (not ref or tvm[-1] > ref[-1]) else "ref", val))
    return out


def _values_compared(lines: list[_Line]) -> Reported | None:
    """A line of the reporter's words quotes a value as TVM's and another as the reference's
    ("onnxruntime returns `[1, 3]` ... TVM returns `[3, 1]` for me", "After from_onnx I get `[-1
    1]` but numpy gives `[1 -1]`"): a wrong result, whatever the words around them."""
    for ln in lines:
        if ln.fenced or ln.where == "title" or _under_expected(ln):
            continue
        sided = _sided_values(ln.text)
        got = [v for side, v in sided if side == "tvm"]
        want = [v for side, v in sided if side == "ref"]
        if got and want and not any(same_atoms(ATOM_RE.findall(g), ATOM_RE.findall(w))
                                    for g in got for w in want):
            return Reported(Outcome.WRONG_RESULT, signature=_sentence(ln.text, f"`{got[0]}`"),
                            evidence=(ln.text.strip(),))
    return None


def quoted_values(lines: list[_Line]) -> tuple[str, ...]:
    """Values quoted in inline code in the reporter's prose as what TVM gave: "TVM gives
    `[0. nan 2.]` but numpy gives `[nan nan 2.]`" gives ``[0. nan 2.]``; "TVM: `[0.0, 0.0, 0.0,
    -1.0]`" gives that list. The words just before the span say whose value it is, the nearest
    side named winning: numpy's, the expected or the correct value is not TVM's. Lines under
    "Expected behavior" are not read."""
    out: list[str] = []
    for ln in lines:
        if ln.fenced or ln.where == "title" or _under_expected(ln):
            continue
        for side, val in _sided_values(ln.text):
            if side == "tvm" and val not in out:
                out.append(val)
        said = VALUE_NOT_RE.search(ln.text)
        if said and said.group("tvm") not in out:
            out.append(said.group("tvm"))
        bare = VALUE_BARE_PAIR_RE.search(ln.text)
        if bare:
            out.extend(v for v in (bare.group("tvm"), f"{bare.group('tvm')} {bare.group('ref')}")
                       if v not in out)
    return tuple(out[:5])


_TAGS_RE = lazyre.compile(r"^(?:\s*\[[^\]]{1,40}\])+\s*")


def _tidy(rep: Reported) -> Reported:
    """Signatures without markdown decoration or title tags ("[Bug] ...")."""
    sig = _TAGS_RE.sub("", rep.signature).strip()
    sig = sig.strip("`* ").rstrip(".,;:").rstrip("`* ").strip()
    return replace(rep, signature=sig)


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


_ECHO_STATUS_RE = lazyre.compile(r"\becho\s+(?:\$\?|%errorlevel%|\$LASTEXITCODE)\s*$", re.I)


# "For comparison, the same script on 0.19.0 just died:": the output below is not the outcome
# the report is about.
_COMPARISON_RE = lazyre.compile(r"\b(?:for|in) comparison\b|\bby contrast\b", re.I)


def _shown_for_comparison(lines: list[_Line]) -> set[int]:
    """The fenced blocks that the reporter's line right above introduces "for comparison"."""
    out: set[int] = set()
    intro = ""
    for ln in lines:
        if not ln.fenced:
            intro = ln.text
        elif _COMPARISON_RE.search(intro):
            out.add(ln.block)
    return out


_LOG_WARNING_RE = lazyre.compile(
    r"(?:^|[\]:>]\s?)\s*(?:Warning|WARNING|UserWarning):"
    # "I see the warning `Fast mode segfaults when ...`": the words of a quoted warning
    r"|\bwarnings?\b[^.:`\"']{0,30}[:\"'`]\s*[^`\"']*$"
    # TVM's own advice from take/gather ("Fast mode segfaults when there are out-of-bounds
    # indices"), quoted however the reporter introduces it
    r"|\bFast mode\s*$")


# A crash told as a side remark: "it sometimes segfaults (from our fuzzer logs, not reproducible
# every time)" -- when the report pastes a failed check, that check is what it shows.
_HEDGED_RE = lazyre.compile(
    r"\b(?:sometimes|occasionally|once|rarely|not (?:always|reproducible|every time)|in some runs"
    r"|from (?:our|the) (?:\w+ )?logs?"
    # "With a `[-1]` index on a 1-D tensor I even saw `free(): invalid next size`": a variant
    r"|(?:i|we) (?:even|also) (?:saw|got|hit|had|see)"
    r"|with (?:an?|the) (?:`[^`\n]{1,30}` |other |different |bigger |larger |smaller )?"
    r"(?:index|indices|input|shape|variant|version|size|value)\b[^.\n]{0,60}\b(?:i|we) (?:saw|got|see|get))\b",
    re.IGNORECASE)


def _crash(lines: list[_Line]) -> Reported | None:
    best: tuple[int, int, str, str] | None = None  # (rank, index, signature, line)
    said_only = _traceback_pasted_without_crash(lines)
    compared = _shown_for_comparison(lines)
    pasted_check = _mismatched([ln for ln in lines if ln.fenced])
    for i, ln in enumerate(lines):
        if said_only and not ln.fenced:
            continue  # "I thought it was a segfault": the pasted traceback shows what happened
        if ln.fenced and ln.block in compared:
            continue
        text = ln.text
        if i and _ECHO_STATUS_RE.search(lines[i - 1].text):
            text = f"$? {text.strip()}"  # "$ echo $?" then "136" on the next line
        for rank, pat in CRASH_PATTERNS:
            for m in pat.finditer(text):
                if rank >= 3 and (_negated(text, m.start())
                                  or _LOG_WARNING_RE.search(text, 0, m.start())):
                    continue  # (TVM's "Warning: Fast mode segfaults when ..." is advice)
                if not ln.fenced and BACKSTORY_RE.search(_sentence(text, m.group(0))):
                    continue  # "we originally saw crashes later on and tracked it down to ..."
                if not ln.fenced and _HEDGED_RE.search(_sentence(text, m.group(0))) \
                        and pasted_check is not None:
                    continue  # "with bigger indexes it sometimes segfaults", beside a failed check
                if not ln.fenced and "?" in _sentence(text, m.group(0)) and _pasted_error(lines):
                    continue  # "crash the parser (segfault?)" asked, beside the error pasted
                cand = (rank, i, m.group(0).strip(), ln.text.strip())
                if best is None or cand[:2] < best[:2]:
                    best = cand
    if best is None:
        return None
    rank, _, sig, line = best
    if rank >= 4:
        sig = _sentence(line, sig)
    return Reported(Outcome.CRASH, signature=sig, evidence=(line,))


def _pasted_error(lines: list[_Line]) -> bool:
    """The reporter pasted an exception line (fenced or in the text): what they saw, when they
    only ask whether it is a crash."""
    found = _error_line(lines)
    return found is not None and found.outcome != Outcome.CRASH


def _traceback_pasted_without_crash(lines: list[_Line]) -> bool:
    """The reporter pasted a Python traceback that ends in an exception, and no pasted line
    shows a crash: a crash named only in the title or prose ("segfault in concat") is their
    word for that exception, and the traceback is what they saw."""
    pasted = [ln.text for ln in lines if ln.fenced]
    if not pasted or not parse_errors("\n".join(pasted)):
        return False
    return not any(pat.search(text) for text in pasted for rank, pat in CRASH_PATTERNS
                   if rank <= 3)


_CHECK_IN_WORDS_RE = lazyre.compile(
    r"\b(?:an?|the|some|one) (?:ICHECK|CHECK|check|internal check|assertion) (?:failed|fails|failure)\b"
    # ("the CHECK in foo.cc" in capitals: TVM's macro; "at least a check in debug?" asks for one)
    r"|\b(?:an?|the) (?-i:ICHECK|CHECK) (?:in|inside) \w+", re.IGNORECASE)


def _internal(lines: list[_Line]) -> Reported | None:
    # the check as pasted, with its condition ("Check failed: (x == y) is false"), before words
    # that only name one ("throws an InternalError (Check failed) instead of a ValueError")
    vm_check = any(VM_ARGUMENT_CHECK in ln.text for ln in lines)
    for with_condition in (True, False):
        for ln in _body_first(lines):  # (before a title's words about it)
            m = CHECK_FAILED_RE.search(ln.text)
            if m is None or (with_condition and not m.group(0).startswith("Check failed:")):
                continue
            if vm_check:
                break  # (the VM refusing the caller's arguments: TVM's user-facing error)
            if not (not ln.fenced and _COMPARISON_RE.search(ln.text[:m.start()])):
                # (not another op's check quoted "for comparison" in a sentence)
                return Reported(Outcome.INTERNAL_ERROR, signature=_check_named(m.group(0), ln),
                                evidence=(ln.text.strip(),))
    if vm_check:
        return None  # ("I get an internal check failure" for the VM's argument check: the same)
    for ln in _body_first(lines):
        # "The error is a check failed somewhere in op.cc, something like power only applies
        # to float": TVM's check, told in words
        m = _CHECK_IN_WORDS_RE.search(ln.text)
        if m and not ln.fenced and not _negated(ln.text, m.start()) \
                and not _expectation(ln):
            return Reported(Outcome.INTERNAL_ERROR, signature=_sentence(ln.text, m.group(0)),
                            evidence=(ln.text.strip(),))
    for k, ln in enumerate(lines):
        m = INTERNAL_RE.search(ln.text)
        if m and ":" in m.group(0) and not _handled_into_another(lines, k):
            return Reported(
                Outcome.INTERNAL_ERROR, signature=m.group(0).strip(), evidence=(ln.text.strip(),)
            )
    return None


_NAMED_CHECK_RE = lazyre.compile(r"^Check failed[\"'`\u201d\u2019]")
_CONDITION_SPAN_RE = lazyre.compile(r"`([^`\n]{1,80}?(?:==|!=|<=|>=|<|>)[^`\n]{0,80})`")


def _check_named(found: str, ln: _Line) -> str:
    """The check as the signature: a "Check failed" the sentence only names in quotes ('since it
    is a "Check failed" I guess ...') is no message; the condition the sentence quotes (`the
    message mentions `pb->value != 0``) stands for it."""
    if not _NAMED_CHECK_RE.match(found.strip()):
        return found.strip()
    cond = _CONDITION_SPAN_RE.search(ln.text)
    return f"Check failed: {cond.group(1).strip()}" if cond else "Check failed"


def _handled_into_another(lines: list[_Line], k: int) -> bool:
    """The pasted exception on line ``k`` is followed, in the same paste, by "During handling
    of the above exception" and TVM's own error raised from it (the well-formedness check's
    ``InternalError`` turned into a ``DiagnosticError``): the reporter saw the last one."""
    ln = lines[k]
    if not ln.fenced:
        return False
    rest: list[_Line] = []
    for later in lines[k + 1:]:  # (the lines of the same paste: fenced, up to the words after it)
        if not later.fenced or later.source != ln.source:
            break
        rest.append(later)
    if not any(_CHAIN_RE.search(later.text) for later in rest):
        return False
    last = _error_line(rest)
    return last is not None and last.outcome == Outcome.TVM_ERROR


def _mismatched(lines: list[_Line]) -> Reported | None:
    for pat in MISMATCHED_RES:
        for ln in lines:
            m = pat.search(ln.text)
            if m:
                return Reported(
                    Outcome.WRONG_RESULT, signature=m.group(0).strip(), evidence=(ln.text.strip(),)
                )
    return None


# What an except block's own slip raises ("print(e.msg)": AttributeError).
_HANDLER_SLIPS = frozenset({"AttributeError", "NameError", "TypeError", "KeyError", "IndexError",
                            "UnboundLocalError"})


# The author retried on a newer TVM: "Tried 0.27.0 (pip install -U). The compile error is gone,
# but it still fails", "on the latest release it now ...".
_RETRIED_RE = lazyre.compile(
    r"\b(?:tried|retried|re-?ran|re-?tested|tested|upgraded|updated)\b[^.\n]{0,40}"
    r"\b(?:v?0\.\d+\S*|main|master|nightly|latest|newest|current release)\b"
    r"(?=[^\n]{0,200}\b(?:still|now|is gone|went away|no longer)\b)", re.I)


def _retried_on_newer(lines: list[_Line]) -> list[_Line]:
    """The lines of the author's last comment that says they retried on a newer TVM and what
    it does now ([] when none does)."""
    for n in sorted({ln.source for ln in lines if ln.where == "comment"}, reverse=True):
        own = [ln for ln in lines if ln.source == n]
        if any(not ln.fenced and _RETRIED_RE.search(ln.text) for ln in own):
            return own
    return []


def _tvm_raised(hit: tuple[str, str, str, int]) -> bool:
    etype, msg = hit[0], hit[1]
    return (etype.startswith("tvm.") or etype.rsplit(".", 1)[-1] in TVM_ERROR_TYPES | {
        "InternalError"} or "Check failed" in msg)


# Between two pasted errors: the later one is what the reporter is at now.
_MOVED_ON_RE = lazyre.compile(
    r"\bnow (?:it(?:'s| is)|i get|i got|i see|it (?:gives|fails|says|raises|throws|shows))\b"
    r"|\b(?:this|that) (?:one )?instead\b|\bafter (?:fixing|adding|changing|that|this)\b"
    r"|\bthen i (?:get|got|hit|see|saw)\b|\bnext (?:error|problem)\b", re.I)

# A message cut mid-phrase by a line wrap.
_WRAPPED_TAIL_RE = lazyre.compile(r"\b(?:has|have|has no|is|not|of|to|the|a|named|from|for|in)$")


_UNSUPPORTED_RE = lazyre.compile(
    r"\b(?:unsupported|not supported|not implemented|no converter|cannot convert)\b", re.I
)


def _error_line(lines: list[_Line]) -> Reported | None:
    """The last reported exception line (or TVMScript ``error:`` diagnostic)."""
    # Exceptions group into reports: a new traceback (not chained to the one before it) starts
    # a new report. Within a report the last exception counts (a chain ends in the one the
    # user saw); across reports the first counts (an interactive session's first failure).
    hit: tuple[str, str, str, int] | None = None  # (type, msg, line, index)
    first_report: tuple[str, str, str, int] | None = None
    new_report = False
    chained = False
    handling: tuple[str, str, str, int] | None = None  # the error an except block was handling
    for i, ln in enumerate(lines):
        if ln.where == "title" or _under_expected(ln):
            continue  # (under "Expected behavior": the error that should have been raised)
        if _CHAIN_RE.search(ln.text):
            chained = True
            handling = hit if "During handling" in ln.text else None
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
    if (first_report is not None and hit is not None and lines[first_report[3]].where == "body"
            and not any(not ln.fenced and _MOVED_ON_RE.search(ln.text)
                        for ln in lines[first_report[3] + 1:hit[3]])):
        # (unless the reporter says the later one came after the first was dealt with: "I
        # added the .astype and now it's this instead")
        hit = first_report
    if (handling is not None and hit is not None and hit[3] > handling[3]
            and hit[0].rsplit(".", 1)[-1] in _HANDLER_SLIPS and _tvm_raised(handling)):
        # The script's own except block slipped ("print(e.msg)") while handling TVM's error:
        # TVM's error is what happened (as bot.classify reads a run).
        hit = handling
    if hit is None:
        return None
    etype, msg, line, index = hit
    short = etype.rsplit(".", 1)[-1]
    sig = normalize_paths(line)
    ev = (sig,)
    if short in {"ModuleNotFoundError", "ImportError"}:
        nm = NO_MODULE_RE.search(msg)
        cm = CANNOT_IMPORT_RE.search(msg)
        mod = nm.group(1) if nm else (cm.group(2) if cm else "")
        if nm and mod == "tvm":  # TVM itself is not installed where the reporter ran it
            return Reported(Outcome.MISSING_DEPENDENCY, signature=sig, evidence=ev)
        if is_tvm_name(mod):  # a tvm.* name, or nnvm / topi / vta of an old TVM
            return Reported(Outcome.API_MISMATCH, signature=sig, evidence=ev)
        if mod or not re.search(r"\btvm|\.so\b|\.dll\b|DLL", msg):
            # Another package is missing (or, in Python 2's "cannot import name X", a name
            # that only the reporter's installed packages lack).
            return Reported(Outcome.MISSING_DEPENDENCY, signature=sig, evidence=ev)
    if short == "AttributeError":
        flat = " ".join(msg.split())  # a message wrapped over lines
        am = MODULE_ATTR_RE.search(flat)
        if am and is_tvm_name(am.group(1)):
            if _tvm_code_lacks_its_own_name(lines, index, am.group(2)):
                return Reported(Outcome.TVM_ERROR, signature=sig, evidence=ev)
            return Reported(Outcome.API_MISMATCH, signature=sig, evidence=ev)
        if PY2_MODULE_ATTR_RE.search(flat):
            # Python 2 does not name the module; in a TVM report it is one of TVM's.
            return Reported(Outcome.API_MISMATCH, signature=sig, evidence=ev)
    if REMOVED_FORM_RE.search(msg):
        return Reported(Outcome.API_MISMATCH, signature=sig, evidence=ev)
    if short == "SyntaxError" and any(
            _PARSED_TEXT_RE.match(ln.text) for ln in lines[max(0, index - 8): index]):
        # ``File "<unknown>", line 7``: the text TVMScript's parser read (``from_source`` of
        # printed IR), not the reporter's own code
        return Reported(Outcome.TVM_ERROR, signature=sig, evidence=ev)
    if short in SCRIPT_ERROR_TYPES:
        return Reported(Outcome.PYTHON_ERROR, signature=sig, evidence=ev)
    if short == "AssertionError":
        # An assertion in TVM's own code (a traceback through tvm/) is TVM's error.
        block = "\n".join(ln.text for ln in lines[max(0, index - 40) : index + 1])
        err = parse_last_error(block)
        if err is not None and err.frames and err.frames[-1].kind == "tvm":
            return Reported(Outcome.TVM_ERROR, signature=sig, evidence=ev)
        if _UNSUPPORTED_RE.search(msg):
            # A frontend's ``assert`` on what it cannot convert ("Unsupported function types
            # ['mm.default']"), its traceback cut: TVM's refusal, not the script's own check.
            return Reported(Outcome.TVM_ERROR, signature=sig, evidence=ev)
        return Reported(Outcome.WRONG_RESULT, signature=sig, evidence=ev)
    if _raised_in_own_code(lines, index, etype, msg):
        return Reported(Outcome.PYTHON_ERROR, signature=sig, evidence=ev)
    return Reported(Outcome.TVM_ERROR, signature=sig, evidence=ev)


# The file name ``ast.parse`` gives text it was handed as a string (TVMScript's parser does so).
_PARSED_TEXT_RE = lazyre.compile(r'^\s*File "<unknown>", line \d+')

# A line a reporter puts where they cut frames out of a traceback.
_ELIDED_RE = lazyre.compile(r"^\s*(?:\.{3,}|…|\[\.{3}\]|<\s*\.\.\.|\(\s*\.\.\.)")


# A source line that calls into TVM (through its usual names): the error may come from there.
_TVMISH_CALL_RE = lazyre.compile(r"\b(?:tvm|relax|tir|te|topi|relay|R|T|bb|vm|sch)\s*[.\[]")


def _tvm_code_lacks_its_own_name(lines: list[_Line], index: int, attr: str) -> bool:
    """The pasted traceback ends in TVM's own code, and the reporter's line that called into
    TVM does not use the missing name: TVM calls a name it no longer has (its bug, as
    ``bot.classify`` reads a run), not a script written for another TVM."""
    block = "\n".join(ln.text + (f"\n    {ln.frame_source}" if ln.frame_source else "")
                      for ln in lines[max(0, index - 40) : index + 1])
    err = parse_last_error(block)
    if err is None or not err.frames or err.frames[-1].kind != "tvm":
        return False
    own = [f for f in err.frames if f.kind != "tvm"]
    return bool(own) and all(f.source for f in own) and not any(attr in f.source for f in own)


def _raised_in_own_code(lines: list[_Line], index: int, etype: str, msg: str) -> bool:
    """The pasted traceback is whole (no frames cut out), has two or more frames, all in the
    reporter's own files, and its last line of code is plain Python (no call into TVM): the
    reporter's own code raised it (a helper module's parser), as a run of it would show. A
    lone ``<module>`` frame proves nothing: a C function called from that line may have raised
    (TVM's own errors come through TVM's FFI frames when nothing was cut); unless every call
    on that line is numpy's (:func:`_calls_only_numpy`).
    """
    short = etype.rsplit(".", 1)[-1]
    if is_tvm_name(etype) or short in TVM_ERROR_TYPES or short == "InternalError" or \
            "Check failed" in msg:
        return False
    start = index
    while start > 0 and index - start < 80 and not _TB_HEAD_RE.match(lines[start].text):
        start -= 1
    if not _TB_HEAD_RE.match(lines[start].text):
        return False
    block = [ln.text + (f"\n    {ln.frame_source}" if ln.frame_source else "")
             for ln in lines[start : index + 1]]
    if any(_ELIDED_RE.match(t) for t in block):
        return False
    err = parse_last_error("\n".join(block))
    if err is None or not err.frames or not all(f.kind == "script" for f in err.frames):
        return False
    last = err.frames[-1]
    if len(err.frames) == 1:  # (see above) unless that line calls numpy and nothing else
        return _calls_only_numpy(last.source)
    if _RERAISE_RE.match(last.source):
        return False  # ``raise Failed(...) from e``: what it caught is cut off, maybe TVM's
    # (a line also in the script is not among the reporter's lines: its source may be gone)
    return not _TVMISH_CALL_RE.search(last.source) if last.source else last.func != "<module>"


def _calls_only_numpy(source: str) -> bool:
    """The line's calls all go to numpy (``np.random.rand(2).astype(x.dtype)``): what raised
    there is numpy, called by the reporter's own code, not a TVM function."""
    import ast

    try:
        tree = ast.parse(source.strip())
    except SyntaxError:
        return False
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    for call in calls:
        root: ast.expr = call.func
        while isinstance(root, ast.Attribute | ast.Call | ast.Subscript):
            root = root.func if isinstance(root, ast.Call) else root.value
        if not (isinstance(root, ast.Name) and root.id in ("np", "numpy")):
            return False
    return bool(calls)


_RERAISE_RE = lazyre.compile(r"^\s*raise\b.*\bfrom\s+(?!None\b)\w+\s*$")
_FRAME_LINE_RE = lazyre.compile(r'^\s*File "[^"]+", line \d+')


# A C++ frame of TVM in a Python traceback (``File "<unknown>", line 0, in tvm::...``), in an
# old-style "Stack trace:" (``  0: tvm::...``) or a ``[bt] (0) ...`` backtrace.
_CPP_FRAME_RE = lazyre.compile(
    r'^\s*(?:File "[^"]*", line \d+, in |\d+: |\[bt\] \(\d+\) \S+\(?)(?:tvm|TVM)\w*::'
)
_TB_START_RE = lazyre.compile(r"^\s*(?:Traceback \(most recent call last\):|Stack trace:)\s*$")


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


_PY_FRAME_RE = lazyre.compile(r'^\s*File "(?P<path>[^"]+)", line \d+(?:, in \S+)?\s*$')


def _cut_python_traceback(lines: list[_Line]) -> Reported | None:
    """A Python traceback cut before its exception line (a scraped copy, a screenshot's
    caption) whose last frame is inside TVM's own package: the error was raised in TVM, even
    when the prose calls it "a crash" (a signal would have shown no traceback)."""
    last = None
    for ln in lines:
        if ln.where == "title":
            continue
        if _TB_START_RE.match(ln.text):
            last = None
            continue
        m = _PY_FRAME_RE.match(ln.text)
        if m:
            last = (m["path"], ln.text.strip())
    if last is None or frame_kind(last[0]) != "tvm" or last[0].startswith("<"):
        return None
    title = next((ln.text for ln in lines if ln.where == "title"), "")
    sig = _TAGS_RE.sub("", title).replace("`", "").strip() or normalize_paths(last[1])
    return Reported(Outcome.TVM_ERROR, signature=sig, evidence=(normalize_paths(last[1]),))


_SHELL_PROMPT_LINE_RE = lazyre.compile(r"^\s*(?:\$|>|PS [^>]*>|[A-Za-z]:\\[^>]*>)\s")


def _tvm_diagnostics(lines: list[_Line]) -> Reported | None:
    """TVM's own error output without an ``XxxError:`` line (old Relay messages, the
    ``TVM_BACKTRACE`` note, an ``[hh:mm:ss] src/....cc:NN:`` error log, ``LLVM ERROR``)."""
    for pat in TVM_DIAG_RES:
        for ln in _body_first(lines):
            m = pat.search(ln.text)
            if m:
                return Reported(
                    Outcome.TVM_ERROR, signature=m.group(0).strip(), evidence=(ln.text.strip(),)
                )
    for i, ln in enumerate(lines):
        if ln.where != "title" and BACKTRACE_NOTE_RE.search(ln.text):
            # The message TVM printed just before its note: the first line of that group (not
            # the shell command that ran the script).
            j = i
            while (j > 0 and lines[j - 1].block == ln.block and lines[j - 1].where != "title"
                   and not _SHELL_PROMPT_LINE_RE.match(lines[j - 1].text)):
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
        machine = [mc.span() for mc in MACHINE_CRASH_RE.finditer(ln.text)]
        for m in LOOSE_CRASH_RE.finditer(ln.text):
            if any(a <= m.start() < b for a, b in machine):
                continue
            if BACKSTORY_RE.search(_sentence(ln.text, m.group(0))):
                continue  # ("then crashed my downstream concat kernel (different story)")
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
    "OOM", "memory keeps growing"): ``resource-limit``. With no such words, a pasted traceback
    that ends in ``KeyboardInterrupt`` (the reporter stopped a run that went on): ``timeout``."""
    for outcome, pat in ((Outcome.TIMEOUT, HANG_RE), (Outcome.RESOURCE_LIMIT, MEMORY_RE)):
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
    for ln in lines:
        if INTERRUPTED_RE.match(ln.text):
            return Reported(Outcome.TIMEOUT, signature="KeyboardInterrupt (the reporter stopped it)",
                            evidence=(ln.text.strip(),))
    return None


_ERROR_IN_PROSE_RE = lazyre.compile(
    r"(?<![\w.])((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception))(?::\s*(\S[^`]*))?"
)


def _error_in_prose(lines: list[_Line]) -> Reported | None:
    """``XxxError: message`` quoted inside a sentence (or the title); or Python's own words for
    a missing module without the class name (``**No module named 'tvm'**``)."""
    for ln in _body_first(lines):
        if _under_expected(ln):
            continue
        # (the first one named with its message: 'a TVMError like "TVMError: cannot ..."')
        m = next((m for m in _ERROR_IN_PROSE_RE.finditer(ln.text) if m.group(2)), None)
        if m is not None and REFERENCE_RAISES_RE.search(ln.text[max(0, m.start() - 60):m.start()]):
            continue  # ("numpy would raise `ValueError: ...`": the reference, not TVM)
        if m is not None and AFTERMATH_RE.search(ln.text[max(0, m.start() - 80):m.start()]):
            continue  # ("`.numpy()` on it then fails with `ValueError: ...`": the aftermath)
        if m is not None:
            msg = m.group(2).strip()
            if msg.endswith(('"', "'")) and msg.count(msg[-1]) % 2:
                msg = msg[:-1]  # the quote the sentence closed it with
            return _error_line([_Line(f"{m.group(1)}: {msg}", "body")])
    for ln in _body_first(lines):
        text = ln.text.replace("*", "").replace("`", "")
        m = _BARE_NO_MODULE_RE.search(text)
        if m and re.search(r"Warning:\s*$", text[:m.start()]):
            continue  # ("UserWarning: No module named 'pygments'": a warning, the run goes on)
        if m and not _ERROR_IN_PROSE_RE.search(text):
            return _error_line([_Line(f"ModuleNotFoundError: {m.group(0)}", "body")])
    return None


_BARE_NO_MODULE_RE = lazyre.compile(r"No module named '[\w.]+'")

# An exception named in a sentence, no message quoted, and what it is about: "a ValueError from
# inside TVM about Concat and the dimensions", "TypeError complaining that the dtype is wrong",
# "a ValueError that comes out of CheckConcatOutputShape in manipulate.cc, it says Concat ...".
_ERROR_ABOUT_RE = lazyre.compile(
    r"(?<![\w.])((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception))\b(?!:)"
    # (where it came from may name a file: "that comes out of CheckFoo in manipulate.cc, it says")
    r"(?:[^.;:()]|\.(?=\w)){0,80}?\b(?:about|regarding|concerning|related to|saying|says|said|stating|"
    r"tell(?:s|ing) (?:me|us)|complain(?:s|ed|ing)? (?:that|about)|"
    r"(?:with|and) (?:the |a )?message)\s+"
    # (a dotted name goes on: "The block s_tir.SBlock#0 is an output block")
    r"(?:that\s+)?((?:[^.;:()]|\.(?=\w)){3,120})")


def _error_named_in_prose(lines: list[_Line]) -> Reported | None:
    """The reporter names the exception and says what it was about, but kept no log: the
    paraphrase is the signature (``ValueError: Concat and the dimensions``), matched against
    the run's message by its type and its words, as a quoted line is."""
    for ln in _body_first(lines):
        if ln.fenced or ln.section.startswith("expected"):
            continue
        text = ln.text.replace("`", "").replace("*", "")
        m = _ERROR_ABOUT_RE.search(text)
        if (m and not _negated(text, m.start()) and not _EXPECTING_RE.search(text[:m.start()])
                and not _WORKED_AROUND_RE.match(text[m.start():])):
            # its first clause: "O3 is not a known pipeline [and lists a couple of names]"
            subject = re.split(r",| and | but ", m.group(2))[0].strip(" -")
            return _error_line([_Line(f"{m.group(1)}: {subject}", "body")])
    return None


# A failure verb and the message it quotes, no exception class: "fails with 'Mismatched A.dtype
# on argument #0'", "errors out saying \"Cannot find global function x\"".
_ERROR_QUOTED_RE = lazyre.compile(
    r"\b(?:fail(?:s|ed|ing)?|errors?(?: out)?|errored(?: out)?|throws?|threw|raises?|raised"
    r"|complains?|complained|dies|died|aborts?|aborted|stops?|stopped)"
    r"\s+(?:with|saying|says|:)\s+(?:(?:an?|the) (?:error|message|exception)\s+)?"
    r"['\"`\u201c\u2018]([^'\"`\u201d\u2019\n]{12,160})['\"`\u201d\u2019]", re.I)


# "error:" ending a line, the message in inline code on the next: "... one arg. error:" then
# "`Invoking function main expects 2 arguments (x, y), but 1 arguments were provided.`"
_ERROR_LABEL_END_RE = lazyre.compile(
    r"\b(?:error|error message|it says|message)(?: is (?:confusing|misleading|unclear|wrong|odd))?"
    r"\s*:\s*$", re.I)
_WHOLE_CODE_SPAN_RE = lazyre.compile(r"^\s*`([^`\n]{12,300})`\s*$")


def _error_quoted(lines: list[_Line]) -> Reported | None:
    """A message quoted after a failure verb, without its exception class: TVM's error (its
    own check when it says "Check failed"). Not code ("fails with `relax.build(mod)`")."""
    for ln, nxt in zip(lines, lines[1:], strict=False):
        if ln.fenced or nxt.fenced or _under_expected(ln) or not _ERROR_LABEL_END_RE.search(ln.text):
            continue
        m = _WHOLE_CODE_SPAN_RE.match(nxt.text)
        if m and len(m.group(1).split()) >= 3 and not re.match(r"[\w.]+\(|\w+ = ", m.group(1)):
            msg = m.group(1).strip()
            return Reported(_quoted_outcome(msg), signature=msg, evidence=(nxt.text.strip(),))
        if nxt.quoted and len(nxt.text.split()) >= 4:
            # "the message is confusing:" then the message quoted with "> "
            msg = _sentence(nxt.text, nxt.text.split()[0]).strip()
            return Reported(_quoted_outcome(msg), signature=msg, evidence=(nxt.text.strip(),))
    for ln in lines:
        if _under_expected(ln) or ln.fenced:
            continue
        for m in _ERROR_QUOTED_RE.finditer(ln.text):
            msg = m.group(1).strip()
            if (len(msg.split()) < 3 or re.match(r"[\w.]+\(|\w+\.\w|\w+ = ", msg)
                    or _negated(ln.text, m.start())
                    or AFTERMATH_RE.search(ln.text[max(0, m.start(1) - 80):m.start(1)].rstrip("`'\" "))
                    or _EXPECTING_RE.search(ln.text[:m.start()])):
                continue
            return Reported(_quoted_outcome(msg), signature=msg, evidence=(ln.text.strip(),))
    return None


def _quoted_outcome(msg: str) -> Outcome:
    """What a quoted message says failed: TVM's own check ("Check failed"), the script's result
    check (numpy's "nan location mismatch", "Mismatched elements"), else TVM's error."""
    if "Check failed" in msg:
        return Outcome.INTERNAL_ERROR
    return Outcome.WRONG_RESULT if TESTING_MSG_RE.search(msg) else Outcome.TVM_ERROR


# An error paraphrased with no class and no quote: "it give error when parse the module, it say
# something like the dtype is not same for both side".
_ERROR_SAID_RE = lazyre.compile(
    r"\b(?:gives?|gave|throws?|threw|raises?|raised|shows?|showed|gets?|got|hits?|an?)\s+"
    r"(?:me\s+)?(?:an?\s+|the\s+|some\s+)?(?:\w+\s+)?errors?\b[^.;]{0,80}?"
    r"\b(?:says?|said|saying)\s+(?:something\s+)?(?:like\s+|that\s+)?([^.;:()]{3,120})", re.I)


def _error_said(lines: list[_Line]) -> Reported | None:
    """An error the reporter saw and only paraphrases: its words are the signature."""
    for ln in _body_first(lines):
        if ln.fenced or _expectation(ln):
            continue
        text = ln.text.replace("`", "").replace("*", "")
        m = _ERROR_SAID_RE.search(text)
        clause = text[:m.start()].rsplit(",", 1)[-1] if m else ""  # ("it is not work, it give error")
        if m and not NEGATION_RE.search(clause) and not _EXPECTING_RE.search(clause):
            subject = re.split(r",| and | but ", m.group(1))[0].strip(" -")
            if len(subject.split()) >= 2:
                return Reported(Outcome.TVM_ERROR, signature=f"error: {subject}",
                                evidence=(ln.text.strip(),))
    return None


# What the reporter did about an error they mention: then it is not what the repro shows ("a
# ValueError about the target string, so I dropped it and the numbers above are with llvm").
_WORKED_AROUND_RE = lazyre.compile(
    r"[^.;]*?\bso (?:I|we) (?:just )?(?:dropped|removed|changed|switched|replaced|used|went with"
    r"|worked around|fixed)\b", re.I)

# "I expected a ValueError about ...": what should have happened, not what did.
_EXPECTING_RE = lazyre.compile(
    r"\b(?:expect\w*|should|would|instead of|rather than|hop(?:e|ed|ing))\b[^.;]*$", re.I)


# What the reporter wanted, leading into the words ("I was expecting this to wrap around"),
# up to a "but" that turns to what happened ("expected 5 but it returns wrong values").
_HOPED_FOR_RE = lazyre.compile(
    r"\b(?:expect(?:ed|ing)?|would (?:like|want|prefer)|hop(?:e|ed|ing)) (?:it|this|that|them|tvm|"
    r"the \w+) to\b(?:(?!\bbut\b)[^.;])*$", re.I)


def _wrong_words(lines: list[_Line]) -> Reported | None:
    for ln in _body_first(lines):
        if _expectation(ln) or ln.quoted:
            continue  # ("Expected behavior: ... numpy says the sizes are not equal"; a message
            # quoted with "> ": "... The reduction dimensions of 8 and 4 are not equal.")
        found: Iterable[re.Match[str]] = REPORTED_WRONG_RE.finditer(ln.text)
        if " but " in ln.text:
            found = itertools.chain(found, TVM_VS_REFERENCE_RE.finditer(ln.text))
        for m in found:
            if _HOPED_FOR_RE.search(ln.text[max(0, m.start() - 80):m.start()]):
                continue  # ("I was expecting this to wrap around or raise": what they wanted)
            if m.group(0).lower().startswith("not") or not _negated(ln.text, m.start()):
                return Reported(
                    Outcome.WRONG_RESULT,
                    signature=_sentence(ln.text, m.group(0)),
                    evidence=(ln.text.strip(),),
                )
    return None


_PERF_RE = lazyre.compile(
    r"\b(?:slow\w*|fast\w*|speed\w*|latenc\w*|throughput|perf\w*|time[sd]?|timing|"
    r"ms|sec\w*|seconds?|minutes?|memory|MB|GB)\b", re.I)


def _expected_vs_actual(lines: list[_Line]) -> Reported | None:
    """The template's two sections filled in and no failure named: "Expected behavior" says
    what it should give and "Actual behavior" shows what it gave, with values in it (a
    printed number, an array): the numbers are wrong. Not for performance ("3.2 ms, slower"),
    nor when "Actual behavior" names an error (a version number is not a value)."""
    def filled(prefix: str) -> list[_Line]:
        return [ln for ln in lines if ln.where != "title" and ln.section.startswith(prefix)
                and not TEMPLATE_LINE_RE.match(ln.text) and not TEMPLATE_PROSE_RE.search(ln.text)
                and not SECTION_RE.match(ln.text.rstrip())]

    actual = filled("actual")
    if not filled("expected") or not actual or any(_PERF_RE.search(ln.text) for ln in actual):
        return None
    shown = next((ln for ln in actual if any(ch.isdigit() for ch in ln.text)), None)
    if shown is None or any(PASSED_RE.search(ln.text) or ACCEPTED_RE.search(ln.text)
                            for ln in actual):
        return None
    if any(not _negated(ln.text, m.start()) for ln in actual
           for m in GENERIC_FAIL_RE.finditer(ln.text)):
        return None  # "Actual: an error when building v1.5": a failure, read as one below
    return Reported(Outcome.WRONG_RESULT, signature=f"actual: {shown.text.strip()}"[:200],
                    evidence=tuple(ln.text.strip() for ln in actual[:3]))


# A title that is a frontend's refusal, as fuzzing reports put it: "[Bug] Unsupported function
# types ['fmod.Tensor']", "Unsupported op: aten::bucketize", "No converter for op Resize".
_REFUSAL_TITLE_RE = lazyre.compile(
    r"^(?:unsupported|not (?:supported|implemented)|no converter|cannot convert)\b"
    r"(?=.*(?:\[|'|`|:|\bop\b|\boperator\b|\bfunction\b))", re.I)


def _refusal_as_title(lines: list[_Line]) -> Reported | None:
    """The title is the error: what a frontend says of an operator it cannot convert."""
    for ln in lines:
        if ln.where == "title":
            text = _TAGS_RE.sub("", ln.text).strip()
            if _REFUSAL_TITLE_RE.match(text):
                return Reported(Outcome.TVM_ERROR, signature=text[:200], evidence=(text[:200],))
    return None


# "returns an empty tensor instead of error": TVM gave a value where it should have refused.
_INSTEAD_OF_ERROR_RE = lazyre.compile(
    r"\b(?:returns?|returned|gives?|gave|produces?|produced|outputs?|prints?|runs?|compiles?)\b"
    r"[^.;]{0,60}\binstead of (?:an? |raising an? |throwing an? )?(?:error|exception)", re.I)


def _accepted_with_output(repro: Repro) -> Callable[[list[_Line]], Reported | None]:
    """TVM accepts what it should refuse ("reshape with -1 silently accepts ...", "returns an
    empty tensor instead of error") and the report shows the output it gave (``(6, 3)``): a
    wrong result, that output -- not the error the reference raises or a variant gives, which
    the words around it also name."""
    def find(lines: list[_Line]) -> Reported | None:
        shown = next((s.strip() for s in repro.shown_output.split("\n") if s.strip()), "")
        if not any(ch.isdigit() for ch in shown):
            return None
        for ln in lines:
            if ln.fenced or _expectation(ln):
                continue
            m = ACCEPTED_RE.search(ln.text)
            if (m is not None and not _negated(ln.text, m.start())) or \
                    _INSTEAD_OF_ERROR_RE.search(ln.text):  # ("not dividing the axis returns ...")
                return Reported(Outcome.WRONG_RESULT, signature=f"prints {shown}"[:200],
                                evidence=(ln.text.strip(),), about_acceptance=True)
        return None
    return find


def _generic_failure(lines: list[_Line]) -> Reported | None:
    for ln in _body_first(lines):
        if _expectation(ln):
            continue
        for m in GENERIC_FAIL_RE.finditer(ln.text):
            if _negated(ln.text, m.start()) or _EXPECTING_RE.search(ln.text[:m.start()]):
                continue  # ("I would expect a proper error instead of a warning")
            if AFTERMATH_RE.search(ln.text[max(0, m.start() - 80):m.end()]) or \
                    BACKSTORY_RE.search(_sentence(ln.text, m.group(0))):
                continue  # ("`.numpy()` on it then fails", "then my model fails later")
            return Reported(
                Outcome.TVM_ERROR,
                signature=_sentence(ln.text, m.group(0)),
                evidence=(ln.text.strip(),),
            )
    return None



def _expectation(ln: _Line) -> bool:
    """A line that says what should happen ("Expected behavior: no error"), not what did (a
    "Reality: ..." / "Actual: ..." line under an expectation heading says what did)."""
    if ACTUAL_LINE_RE.match(ln.text):
        return False
    return _under_expected(ln) or bool(
        re.match(r"^\s*(?:expected|what you were expecting|i expect|it should)\b", ln.text, re.I)
    )


def _under_expected(ln: _Line) -> bool:
    """Under the template's "Expected behavior" heading: what should happen."""
    return ln.section.startswith(("expected", "what you were expecting"))


def _failure_words(lines: list[_Line]) -> bool:
    """Failure wording anywhere (title included) outside expectations and template text."""
    for ln in lines:
        if _expectation(ln) or TEMPLATE_LINE_RE.match(ln.text):
            continue
        for pat in (GENERIC_FAIL_RE, LOOSE_CRASH_RE):
            for m in pat.finditer(ln.text):
                if not _negated(ln.text, m.start()) and not _EXPECTING_RE.search(
                        ln.text[:m.start()]):
                    return True
    return False


# A complaint about speed: "[Perf]", "40x slower than numpy", "the performance is bad".
_SPEED_RE = lazyre.compile(
    r"^\s*\[perf(?:ormance)?\]|\bslower\b|\bperformance (?:is|was|gap|regression|issue|problem)"
    r"|\b(?:bad|poor|low|terrible) (?:performance|throughput|latency)\b|\bslow(?:ness|down)\b"
    r"|\bspeed ?up\b|\bnot (?:as |so )?fast\b"
    # "it's just slow", "compilation is very slow"
    r"|\b(?:just|too|very|really|so|extremely|painfully|quite|is|are|gets?) slow\b"
    # "in our GRU model this is ~30% of the runtime"
    r"|\b(?:\d+ ?%|most|half) of (?:the |our )?(?:run ?time|latency|inference time)\b", re.I)


# Speed as a side effect of the complaint ("the predicate is redundant and it makes codegen
# slower"): the complaint is what the IR holds, not how fast it runs.
_SPEED_AS_CONSEQUENCE_RE = lazyre.compile(
    r"\b(?:makes?|making|made|could make|might make|may make)\s+(?:\w+\s+){0,3}slower\b", re.I)


def _speed(lines: list[_Line]) -> _Line | None:
    """The reporter's words (title or prose, not a log) that complain about speed."""
    return next((ln for ln in lines if not ln.fenced and not _expectation(ln)
                 and _SPEED_RE.search(_SPEED_AS_CONSEQUENCE_RE.sub(" ", ln.text))), None)


def _passed(issue: Issue, lines: list[_Line], *, with_script: bool) -> Reported | None:
    if _failure_words(lines):
        return None
    speed = _speed(lines) if with_script else None
    for ln in lines:
        if _expectation(ln):
            continue
        for sentence in re.split(r"(?<=[.!?;])\s+", ln.text):
            accepted = ACCEPTED_RE.search(sentence) is not None
            if (accepted or PASSED_RE.search(sentence)) and not ELSEWHEN_RE.search(sentence):
                return Reported(Outcome.PASSED, signature="", evidence=(ln.text.strip(),),
                                about_speed=speed is not None, about_acceptance=accepted)
    if speed is not None:  # it ran, and too slowly
        return Reported(Outcome.PASSED, signature="", evidence=(speed.text.strip(),),
                        about_speed=True)
    if with_script and QUESTION_TITLE_RE.search(issue.title):
        # a question about a script that runs ("Why is the loop split twice?"); a question
        # with no script ("Unity AOT support?") reports no run at all
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
