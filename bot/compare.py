"""Stage 6b: does the run show what the reporter saw?

Pure. The verdict rules, in order:

1. the run tells nothing about the bug (no repro, api-mismatch, missing dependency, timeout,
   needs-gpu, resource limit, infra error): ``inconclusive`` — never "not reproduced"; except a
   timeout where the report says it never finishes (a hang): ``reproduced``;
2. the run passed: ``not-reproduced``;
3. the run failed:

   * the reporter said it works (or asked a question): ``different-failure``;
   * the reporter named nothing specific (no report, or only "it fails") and the run fails
     inside TVM (crash, internal-error, tvm-error) or in the script's own result check
     (wrong-result): ``reproduced``; a plain error in the script's own code (python-error) is
     ``different-failure``;
   * reported crash and observed crash: ``reproduced`` (signals and addresses vary);
   * reported wrong-result and observed wrong-result: ``reproduced`` (numbers vary);
   * same class, or both TVM-side errors (internal-error / tvm-error), with matching
     signatures: ``reproduced``. Signatures match when, after normalising numbers, addresses,
     paths and quotes, the exception types agree (when both name one) and most key words of
     the shorter message are in the longer one. A generic report ("fails to parse") that
     shares no key word with the observed error is a ``different-failure``;
   * anything else: ``different-failure``.
"""

from __future__ import annotations

import re

from bot import lazyre
from bot.models import (
    FAILURE_OUTCOMES,
    INCONCLUSIVE_OUTCOMES,
    Classification,
    Comparison,
    Outcome,
    Reported,
    Verdict,
)
from bot.tracebacks import Locations, same_location
from bot.vocabulary import BACKTRACE_NOTE_RE

TVM_SIDE = frozenset({Outcome.INTERNAL_ERROR, Outcome.TVM_ERROR})
# Outcomes that point at TVM (or at the result TVM computed), not at the script's own code.
_TVM_FAILURES = frozenset(
    {Outcome.CRASH, Outcome.INTERNAL_ERROR, Outcome.TVM_ERROR, Outcome.WRONG_RESULT}
)

_STOP = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "are",
        "was",
        "were",
        "has",
        "have",
        "had",
        "not",
        "but",
        "when",
        "which",
        "what",
        "error",
        "errors",
        "failed",
        "fail",
        "fails",
        "failure",
        "check",
        "true",
        "false",
        "none",
        "null",
        "into",
        "its",
        "it's",
        "can",
        "cannot",
        "should",
        "would",
        "will",
        "been",
        "being",
        "than",
        "then",
        "there",
        "their",
        "does",
        "did",
        "done",
        "got",
        "get",
        "gets",
        "all",
        "any",
        "traceback",
        "most",
        "recent",
        "call",
        "last",
        "file",
        "line",
        "tvm",
        "python",
        "program",
        "script",
        "run",
        "running",
        "code",
        "internalerror",
        "tvmerror",
        "diagnosticerror",
        "valueerror",
        "typeerror",
        "runtimeerror",
        "error:",
    ]
)
_TYPE_RE = lazyre.compile(r"\b((?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception))\b")
_PATH_RE = lazyre.compile(r"(?:[A-Za-z]:)?[\w.\-<>]*[/\\][^\s'\"():,]+")
_HEX_RE = lazyre.compile(r"\b0x[0-9a-fA-F]+\b")
_NUM_RE = lazyre.compile(r"\b\d+(?:\.\d+)?(?:e[-+]?\d+)?\b")
_TIME_RE = lazyre.compile(r"\[\d{2}:\d{2}:\d{2}\]")
_WORD_RE = lazyre.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# A signature is one line; past this length it is noise (and every regex here stays cheap).
_MAX_SIGNATURE = 2000


def error_type(signature: str) -> str:
    """The exception's short type named in a signature ("" if none)."""
    m = _TYPE_RE.search(signature[:_MAX_SIGNATURE])
    if not m:
        return ""
    short = m.group(1).rsplit(".", 1)[-1]
    # TVM renamed its error classes over time; they all mean "TVM raised".
    return "TVMError" if short in {"TVMError", "InternalError"} else short


def key_words(signature: str) -> frozenset[str]:
    """The words of a signature that identify it (numbers, paths, addresses dropped)."""
    s = _TIME_RE.sub(" ", signature[:_MAX_SIGNATURE])
    s = _PATH_RE.sub(" ", s)
    s = _HEX_RE.sub(" ", s)
    s = _NUM_RE.sub(" ", s)
    s = _TYPE_RE.sub(" ", s)
    words = {w.lower() for w in _WORD_RE.findall(s)}
    return frozenset(w for w in words if len(w) >= 3 and w not in _STOP)


def signatures_match(reported: str, observed: str) -> bool:
    """Fuzzy: same exception type (when both name one) and shared key words; or the same
    failed check (``Check failed: input_shape[i] == reg`` quoted in a title before other
    words)."""
    if not reported.strip():
        return True
    if _same_check(reported, observed):
        return True
    rt, ot = error_type(reported), error_type(observed)
    if rt and ot and rt != ot:
        return _same_message(reported, rt, observed, ot)
    rw, ow = key_words(reported), key_words(observed)
    if not rw:
        return bool(rt and rt == ot)
    if not ow:
        return False
    shared = rw & ow
    return len(shared) / min(len(rw), len(ow)) >= 0.5


_CHECK_RE = lazyre.compile(r"Check failed:\s*(.*)")
_CODE_CHAR_RE = lazyre.compile(r"[_()\[\]=<>!.]")


def _same_check(reported: str, observed: str) -> bool:
    """Both quote ``Check failed:`` and the conditions after it begin alike, for at least 12
    characters that read as code (an operator, a bracket, an underscore): the same check,
    whatever words follow it in either."""
    rm, om = _CHECK_RE.search(reported), _CHECK_RE.search(observed)
    if rm is None or om is None:
        return False
    r, o = " ".join(rm.group(1).split()).lstrip("("), " ".join(om.group(1).split()).lstrip("(")
    n = 0
    while n < min(len(r), len(o)) and r[n] == o[n]:
        n += 1
    common = r[:n]
    return len(common.strip()) >= 12 and bool(_CODE_CHAR_RE.search(common))


def _same_message(reported: str, rt: str, observed: str, ot: str) -> bool:
    """Two exception types, one message: TVM raises as ``DiagnosticError: error: Reshape expects
    ...`` what an older TVM raised as ``ValueError: Reshape expects ...``. The messages after
    the types begin alike (numbers, spacing and the diagnostic's ``error:`` aside) for at least
    eight words."""
    def message(sig: str, kind: str) -> str:
        text = " ".join(_NUM_RE.sub("#", sig.split(kind, 1)[-1]).split()).strip(" :")
        # (and the "..." a reporter put for the lines they left out: "ValueError: ... Reshape")
        return text.removeprefix("error:").strip().lstrip(".… ")
    if "DiagnosticError" not in (rt, ot):
        return False  # (a ValueError that is a TypeError now is another failure)
    r, o = message(reported, rt).split(), message(observed, ot).split()
    n = 0
    while n < min(len(r), len(o)) and r[n] == o[n]:
        n += 1
    return n >= 8


def _same_quoted_error(reported: str, observed: str) -> bool:
    """Both name the same exception type, and the reported message is the observed one's
    beginning (numbers, paths and spacing aside), at least four words long."""
    rt, ot = error_type(reported), error_type(observed)
    if not rt or rt != ot:
        return False
    r = " ".join(_NUM_RE.sub("#", reported.split(rt, 1)[-1]).split()).strip(" :")
    o = " ".join(_NUM_RE.sub("#", observed.split(ot, 1)[-1]).split()).strip(" :")
    return len(r.split()) >= 4 and o.startswith(r[: max(len(r) - 3, 1)])


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def _quote(label: str, outcome: Outcome | None, signature: str) -> str:
    what = outcome.value if outcome else "nothing specific"
    return f"{label}: {what}" + (f" — {signature}" if signature else "")


_NOTE_TAIL_RE = lazyre.compile(r"^\W*(?:environment variable\s+)?(?:to display (?:a|the)(?: full)? "
                           r"backtrace)?\W*$", re.I)


def _only_backtrace_note(signature: str) -> bool:
    """The reported "error" is only TVM's ``note: run with TVM_BACKTRACE=1 ...`` line."""
    m = BACKTRACE_NOTE_RE.search(signature)
    return m is not None and not signature[: m.start()].strip() and bool(
        _NOTE_TAIL_RE.match(signature[m.end():]))


# A name the script uses is gone (ImportError, AttributeError): the script is stale, whatever
# the reporter complains of.
_MISSING_NAME_RE = lazyre.compile(
    r"^\s*(?:\w+\.)*(?:ImportError|ModuleNotFoundError|AttributeError)\b")


# A target's code generator missing from the build: found when compiling, with or without a device.
_NO_CODEGEN_RE = lazyre.compile(r"Cannot find global function target\.build\.\w+")


_QUOTED_RE = lazyre.compile(r"'([\w.]{1,200})'")


def _complains_of_this_refusal(reported: Reported | None, cls: Classification) -> bool:
    """The run hits an API TVM dropped on purpose, as an error TVM raises ("ValueError: Unknown
    device: llvm": a target's name no longer taken as a device), and that error is what the
    report is about: the run shows what the reporter complains of. So with a stale import or
    attribute when the reporter's complaint is that very error ("AttributeError: module 'tvm'
    has no attribute 'nd'", from an old tutorial): the name is gone, as they found; where they
    report something else (a crash in ``relay.build``) the script is only out of date, and the
    run says nothing of it (inconclusive). So with a
    codegen missing from the build ("Cannot find global function target.build.vulkan" from the
    pip wheel, at compile time, whatever the hardware) when that is what the report is about:
    the worker's build lacks it too. (A device runtime that is absent, "Device API cuda is not
    enabled", stays inconclusive: it depends on the worker's hardware and drivers.)"""
    return (
        (cls.outcome == Outcome.API_MISMATCH
         or (cls.outcome == Outcome.NEEDS_GPU and bool(_NO_CODEGEN_RE.search(cls.signature))))
        and reported is not None
        and (reported.outcome in TVM_SIDE or reported.outcome == Outcome.API_MISMATCH)
        and bool(cls.signature)
        and signatures_match(reported.signature, cls.signature)
        and (not _MISSING_NAME_RE.match(cls.signature)  # (the same name gone, not another)
             or _QUOTED_RE.findall(cls.signature) == _QUOTED_RE.findall(reported.signature))
    )


def compare(reported: Reported | None, cls: Classification) -> Comparison:
    observed = _quote("observed", cls.outcome, cls.signature)
    rep_outcome = reported.outcome if reported is not None else None
    said = (
        _quote("reported", rep_outcome, reported.signature)
        if reported is not None and rep_outcome not in (None, Outcome.NO_REPRO)
        else "reported: nothing specific"
    )
    ev = (said, observed)

    if _complains_of_this_refusal(reported, cls):
        return Comparison(
            Verdict.REPRODUCED,
            (*ev, "the report is about this very error, which TVM raises on purpose now"),
        )
    if cls.outcome == rep_outcome == Outcome.TIMEOUT and reported is not None \
            and not reported.about_speed:
        # "it never returns", "stuck forever": a hang, and the run did not end either
        return Comparison(
            Verdict.REPRODUCED,
            (*ev, "the report says it never finishes; the run did not finish within the limit"),
        )
    if cls.outcome in INCONCLUSIVE_OUTCOMES or cls.outcome not in FAILURE_OUTCOMES | {
        Outcome.PASSED
    }:
        return Comparison(
            Verdict.INCONCLUSIVE,
            (
                *ev,
                f"{_article(cls.outcome.value)} {cls.outcome.value} run says nothing about the reported problem",
            ),
        )
    if cls.outcome == Outcome.PASSED and reported is not None and reported.about_speed:
        return Comparison(
            Verdict.INCONCLUSIVE,
            (*ev, "the report is about speed, which one run on a shared worker cannot judge"),
        )
    if cls.outcome == Outcome.PASSED and (rep_outcome == Outcome.PASSED or (
            reported is not None and reported.about_acceptance)):
        # "TVM should reject this but accepts it", "only a warning", "the IR looks inefficient":
        # the reporter saw it run to the end, and so does the run (also when the report shows
        # the output TVM gave for what it accepted: the run accepts it too).
        return Comparison(
            Verdict.REPRODUCED,
            (*ev, "the script runs to the end, as the report says it does"),
        )
    if cls.outcome == Outcome.PASSED:
        return Comparison(
            Verdict.NOT_REPRODUCED, (*ev, "the script ran to the end without failing")
        )

    # The run failed.
    if reported is None or rep_outcome in (None, Outcome.NO_REPRO):
        if cls.outcome in _TVM_FAILURES:
            return Comparison(
                Verdict.REPRODUCED,
                (*ev, "the issue quotes no error; the run fails in TVM"),
            )
        return Comparison(
            Verdict.DIFFERENT_FAILURE,
            (*ev, "the issue quotes no error; the run fails in the script's own code"),
        )
    assert rep_outcome is not None
    if rep_outcome in (Outcome.PASSED, Outcome.WRONG_RESULT) and reported.about_acceptance \
            and cls.outcome == Outcome.TVM_ERROR:
        # "TVM silently accepts an out-of-range constant": TVM now refuses it with its own error.
        return Comparison(
            Verdict.NOT_REPRODUCED,
            (*ev, "the report says TVM accepts this without a word; TVM now refuses it with its own error"),
        )
    if rep_outcome == Outcome.PASSED:
        return Comparison(
            Verdict.DIFFERENT_FAILURE, (*ev, "the reporter saw it work; here it fails")
        )
    if rep_outcome == cls.outcome == Outcome.CRASH:
        return Comparison(Verdict.REPRODUCED, (*ev, "the process crashes, as reported"))
    if rep_outcome == cls.outcome == Outcome.WRONG_RESULT:
        return Comparison(Verdict.REPRODUCED, (*ev, "the result check fails, as reported"))
    same_class = rep_outcome == cls.outcome or (rep_outcome in TVM_SIDE and cls.outcome in TVM_SIDE)
    if same_class and signatures_match(reported.signature, cls.signature):
        return Comparison(Verdict.REPRODUCED, (*ev, "same failure as reported"))
    if (rep_outcome in TVM_SIDE and cls.outcome == Outcome.PYTHON_ERROR
            and _same_quoted_error(reported.signature, cls.signature)):
        # The report quotes this very exception, type and message ("ValueError: Could not
        # convert T.float32 to a NumPy dtype"); the run sees it raised outside TVM's frames
        # (numpy refusing TVM's new dtype object): the same failure, whoever raised it.
        return Comparison(Verdict.REPRODUCED, (*ev, "the run raises the very error the report quotes"))
    said = reported.signature.removeprefix("Error message:").strip()
    if same_class and said and any(
            e.startswith("Error message:")
            and signatures_match(said, e.removeprefix("Error message:").strip())
            for e in cls.evidence):
        # a schedule primitive's refusal: its header names the primitive, its "Error message:"
        # line says what the report quotes
        return Comparison(Verdict.REPRODUCED, (*ev, "same schedule error as reported"))
    if same_class and cls.outcome in TVM_SIDE and _only_backtrace_note(reported.signature):
        # The reporter's TVM hid its message behind the TVM_BACKTRACE note; the bot runs with
        # TVM_BACKTRACE=1 and sees it: nothing to compare but the kind, and the kind agrees.
        return Comparison(
            Verdict.REPRODUCED,
            (*ev, "the reporter saw only TVM's TVM_BACKTRACE note; the run shows TVM's error"),
        )
    rep_loc = Locations.from_evidence(reported.evidence)
    where = same_location(rep_loc, Locations.from_evidence(cls.evidence)) if same_class else ""
    if where:
        return Comparison(
            Verdict.REPRODUCED, (*ev, f"same kind of failure at the same place: {where}")
        )
    if same_class:
        return Comparison(
            Verdict.DIFFERENT_FAILURE,
            (*ev, "same kind of failure, but not the reported error"),
        )
    return Comparison(
        Verdict.DIFFERENT_FAILURE,
        (*ev, f"reported {rep_outcome.value}, but the run ends in {cls.outcome.value}"),
    )


def account_for_cut_script(comparison: Comparison, cls: Classification, cut_at: int) -> Comparison:
    """The issue's script was cut off (``Repro.cut_at``: the bot ran the part before its
    broken last statement): a pass of that part says nothing about the rest, where the
    failure may be. A failure stands: it happened before the cut."""
    if not cut_at or cls.outcome != Outcome.PASSED:
        return comparison
    return Comparison(
        Verdict.INCONCLUSIVE,
        (*comparison.evidence[:2],
         f"the issue's script is cut off at line {cut_at}: the part before it passed, and "
         "the rest may hold the failure"),
    )
