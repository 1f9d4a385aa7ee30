"""The output the author shows their script printing.

Pure. A block right after the repro's last block, in the same text, that is not code and that
the author introduces as what the script printed ("Output:", "it prints:", under "Actual
behavior"), else the last such block above the repro under an "Actual behavior" heading, is
kept with the repro (``Repro.shown_output``); for a script pasted without fences, the lines the
text introduces right after it as its output. When the report calls that result
wrong and a run prints the same lines, the run shows the same wrong result
(:func:`bot.classify.account_for_shown_output`).
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Iterable

from bot.extract.markdown import Block, Source, is_section_heading, last_paragraph, unhtml
from bot.extract.patterns import FENCE_RE, PRINTED_IR_RE, PY_DASH_C_RE, PY_TAGS, Pattern
from bot.extract.pysyntax import NUMPY_ROW_RE, OUTPUT_COMMENT_RE, is_error_output, parse_py

# At most this much of the shown output is kept (it is compared line by line with a run's).
MAX_SHOWN = 4000

_OUTPUT_WORDS_RE = Pattern(
    r"\b(?:output|outputs|prints?|printed|gives?|gave|returns?|returned|results?|got|get|"
    r"shows?|displays?|actual(?:ly)?|instead)\b",
    re.I,
)
_EXPECTED_WORDS_RE = Pattern(
    # ("the correct output:", not "the first 6 are the correct sorted values, the rest garbage:")
    r"\b(?:expect\w*|should|correct (?:output|result|answer|one|values?:)s?|desired|reference|"
    # ("numpy gives:" introduces numpy's output; "TVM gives 127 but numpy gives -56" compares
    # the two, and the block below may well hold both)
    r"numpy gives(?!\s+`?-?\d)|supposed|want|instead of)(?!\w)",
    re.I,
)


_LABEL_RE = Pattern(r"^\s*(?:actual(?: output| result| behaviou?r)?|output|result|i get|got|tvm)"
                    r"\b[^:\n]{0,40}:\s*$", re.I)


def _is_label(line: str) -> bool:
    """"Actual:", "Output:" -- or "# output" as a comment under the script (``OUTPUT_COMMENT_RE``,
    the same words that end the script in :func:`bot.extract.pysyntax.cut_at_output`)."""
    return bool(_LABEL_RE.search(line) or OUTPUT_COMMENT_RE.match(line))


def shown_in_block_tail(text: str, script: str) -> str:
    """Output pasted after the script under a label ("Actual:" then the lines, up to a blank
    line, a fence or the "Expected (numpy):" label), in its own block as in a fence left open,
    or right after it."""
    last = next((ln.strip() for ln in reversed(script.splitlines()) if ln.strip()), "")
    lines = text.split("\n")
    at = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip() == last), None)
    if not last or at is None:
        return ""
    rest = lines[at + 1: at + 1 + 60]
    k = next((i for i, ln in enumerate(rest) if ln.strip() and not FENCE_RE.match(ln)), None)
    if k is not None and NUMPY_ROW_RE.match(rest[k]):
        # the array it printed, pasted under it with no label ("[[ 3.    5.    3.25 ]")
        rows = list(itertools.takewhile(lambda ln: bool(NUMPY_ROW_RE.match(ln)), rest[k:]))
        return "\n".join(rows)[:MAX_SHOWN]
    if k is None or not _is_label(rest[k]) or _EXPECTED_WORDS_RE.search(rest[k]):
        return ""
    shown: list[str] = []
    for ln in rest[k + 1:]:
        if (not ln.strip() or FENCE_RE.match(ln)) and not shown:
            continue  # ("output:", a blank line or a fence, then the lines)
        if not ln.strip() or ln.rstrip().endswith(":") or FENCE_RE.match(ln):
            break
        shown.append(ln)
    out = "\n".join(shown)
    if not shown or not any(ch.isdigit() for ch in out) or _is_program(out):
        return ""  # (more code is not printed output)
    return out[:MAX_SHOWN]


def actual_section_output(src: Source) -> str:
    """The output block under the "Actual behavior" heading of ``src`` (the body, when the script
    is in a comment: "Output of the script I put in the comment below:"), or ""."""
    shown = [b for b in src.blocks if b.section.lower().startswith("actual") and _is_shown_output(b)]
    return shown[0].text[:MAX_SHOWN] if len(shown) == 1 else ""


def shown_output(src: Source, labels: tuple[str, ...]) -> str:
    """The output block that follows the repro's blocks ``labels`` in ``src`` (or "")."""
    mine = [b for b in src.blocks if b.label in labels]
    if not mine:
        return ""
    end = max(b.end for b in mine)
    after = [b for b in src.blocks if b.start >= end]
    if after and _is_shown_output(after[0]):
        return after[0].text[:MAX_SHOWN]
    if len(after) > 1 and _is_expected_output(after[0]) and _is_shown_output(after[1]):
        # "Expected: ```...``` Got: ```...```" right after the script
        return after[1].text[:MAX_SHOWN]
    # The template puts "Actual behavior" above "Steps to reproduce": the output shown there
    # (under that heading, not code, not the expected one) is what the script printed.
    start = min(b.start for b in mine)
    before = [b for b in src.blocks if b.end <= start and b.section.lower().startswith("actual")]
    if before and _is_shown_output(before[-1]):
        return before[-1].text[:MAX_SHOWN]
    # Logs first, script last: one block above the script that a short label calls its output
    # ("output:"), not the expected one nor an environment dump.
    labelled = [b for b in src.blocks if b.end <= start and _OUTPUT_LABEL_RE.match(
        last_paragraph(b.prose).strip()) and _is_shown_output(b)]
    if len(labelled) == 1:
        return labelled[0].text[:MAX_SHOWN]
    # A markdown table of the values, right after the script or under "Actual behavior" above
    # it ("| -7 | 3 | -1 | 2 |"): each row as the script prints it, its cells in a line.
    following = src.lines[end: after[0].start if after else end + _TABLE_LINES]
    heading = next((k for k, ln in enumerate(following) if is_section_heading(ln)), None)
    table = table_rows(following[:heading]) or \
        table_rows([ln for k, ln in enumerate(src.lines[:start])
                    if src.sections[k].lower().startswith("actual")])
    if table:
        return table[:MAX_SHOWN]
    # "$ python mean_int8.py" and what it printed, in a console block of its own (before or
    # after the script): the script's run, when it is the only such block in the text.
    ran = [out for b in src.blocks if b.label not in labels and b.lang not in PY_TAGS
           for out in (console_run_output(b.text),) if out]
    if len(ran) == 1:
        return ran[0][:MAX_SHOWN]
    # "It prints 32. The sum should be 20000": one value the text right after the repro says
    # the script printed.
    following = src.lines[end: after[0].start if after else end + _PROSE_LINES]
    return printed_in_prose("\n".join(following[:_PROSE_LINES]))


_PROSE_LINES = 6
_TABLE_LINES = 40
_TABLE_ROW_RE = Pattern(r"^\s*\|(?:[^|\n]{0,200}\|){2,30}\s*$")
_TABLE_RULE_RE = Pattern(r"^\s*\|(?:\s*:?-{2,}:?\s*\|){2,30}\s*$")


def table_rows(lines: list[str] | tuple[str, ...]) -> str:
    """The data rows of the first markdown table in ``lines`` (not its header row, not its
    rule), each as its cells joined by spaces, when they hold numbers; else ""."""
    at = next((k for k, ln in enumerate(lines) if _TABLE_ROW_RE.match(ln)), None)
    if at is None:
        return ""
    rows: list[str] = []
    for k in range(at, len(lines)):
        if not _TABLE_ROW_RE.match(lines[k]):
            break
        if _TABLE_RULE_RE.match(lines[k]) or (k + 1 < len(lines)
                                              and _TABLE_RULE_RE.match(lines[k + 1])):
            continue  # the rule, and the header above it
        rows.append(" ".join(c.strip().strip("`") for c in lines[k].strip().strip("|").split("|")))
    out = "\n".join(rows)
    return out if rows and any(ch.isdigit() for ch in out) else ""
# A console line that runs a script file: "$ python mean_int8.py", "(venv) $ python3 repro.py --n 4"
_RUN_SCRIPT_RE = Pattern(r"^\s*(?:\([\w.-]{1,40}\)\s*)?(?:[\w@.~:/-]{0,60}\s?)?[$%>]\s*python[\d.]*\s+(?:-\S+\s+)*[\w./-]{1,80}\.py\b[^\n]{0,200}$")


def console_run_output(text: str) -> str:
    """What a console block shows a script printing: the lines after its one
    ``$ python x.py`` line (with a digit in them), or ""."""
    lines = text.strip("\n").split("\n")
    if not lines or not _RUN_SCRIPT_RE.search(lines[0]):
        return ""
    rest = lines[1:]
    if not rest or len(rest) > 40 or any(re.match(r"^\s*[$%]\s", ln) for ln in rest):
        return ""
    out = "\n".join(rest) + "\n"
    if not any(ch.isdigit() for ch in out) or "Traceback" in out or _is_program(out):
        return ""
    return out


def dash_c_output(text: str) -> str:
    """What a console block shows a ``python -c '...'`` command printing: the lines after the
    line its quoted code closes on (with a digit in them, up to the next prompt), or ""."""
    m = PY_DASH_C_RE.search(text)  # (the same ``python -c`` the extraction reads)
    if m is None or text[m.end():m.end() + 1] not in ("'", '"'):
        return ""
    quote, k = text[m.end()], m.end() + 1
    while True:
        k = text.find(quote, k)
        if k < 0:
            return ""
        if quote == "'" or text[k - 1] != "\\":
            break
        k += 1
    nl = text.find("\n", k)
    if nl < 0:
        return ""
    shown: list[str] = []
    for ln in text[nl + 1:].split("\n"):
        if re.match(r"^\s*(?:\([\w.-]{1,40}\)\s*)?[$%]\s", ln):
            break  # the next command
        shown.append(ln)
    out = "\n".join(shown).strip("\n")
    if not out or len(shown) > 40 or not any(ch.isdigit() for ch in out):
        return ""
    if "Traceback" in out or _is_program(out):
        return ""
    return out[:MAX_SHOWN]


# "it prints 32", "the script outputs `-1`", "this gives 4294967295" (one value, with a digit),
# not "it prints 32 as expected".
_PRINTED_RE = Pattern(
    r"\b(?:it|this|that|which|the (?:script|code|program|kernel|call|result|output))\s+"
    r"(?:(?:just|now|always|still|only)\s+)?(?:prints?|printed|outputs?|gives?|gave|returns?|"
    r"returned|shows?|showed)\s+`?(-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|\[[^\]`\n]{1,80}\])`?"
    # (the value ends the clause: not "it prints 3 times")
    r"(?=\s*(?:[.,;:!)]|$|(?:instead|but|while|whereas|which|rather|not|although|though)\b))",
    re.I,
)


# "prints `output shape: (3, 4)`" opening the text after the script: the line, in a code span.
_PRINTED_SPAN_RE = Pattern(
    r"^\W{0,3}(?:(?:and\s+)?(?:it|this|that|the (?:script|code|program))\s+)?(?:(?:just|now|always|"
    r"still|only)\s+)?(?:prints?|printed|outputs?|gives?|gave|returns?|returned|shows?|showed)\s*:?"
    r"\s*`([^`\n]{1,200})`",
    re.I,
)


def printed_in_prose(text: str) -> str:
    """The one value ``text`` says the script printed ("It prints 32.", "prints `shape: (3,
    4)`" opening the text), or ""; not when the same sentence calls it right ("it prints 32 as
    expected")."""
    m = _PRINTED_RE.search(text) or _PRINTED_SPAN_RE.match(text.lstrip("\n"))
    if m is None or not any(ch.isdigit() for ch in m.group(1)):
        return ""
    rest = text[m.end(): m.end() + 40].split(".")[0]
    if re.search(r"\b(?:as expected|correct(?:ly)?|which is right|fine)\b", rest, re.I):
        return ""
    return m.group(1)


# The label and the printed line in one: "prints: tvm 39 numpy 295", "Output: [1. 0.]".
_INLINE_OUTPUT_RE = Pattern(
    r"^\s*(?:(?:it|this|the script)\s+)?(?:prints?|printed|outputs?|output|result|gives?|gave|got|"
    r"i get)\s*:\s*(\S[^\n]{0,300})$", re.I)
# An intro line of its own with no colon: "it prints", "and the output is", "I get".
_BARE_INTRO_RE = Pattern(
    r"^(?:(?:and|then|which|here)\s+)?(?:(?:it|this|that|the (?:script|code|program))\s+"
    r"(?:prints?|printed|outputs?|gives?|gave|shows?|returns?)(?:\s+(?:out|this|the following))?"
    r"|i\s+(?:get|got|see)|(?:the\s+)?output(?:\s+is)?"
    # the verb alone: "prints", "gives this"
    r"|(?:prints?|printed|outputs?|gives?|gave|returns?)(?:\s+(?:out|this|the following))?)"
    r"\s*[.\u2026]*$",
    re.I,
)


_TAG_RE = Pattern(r"</?(?:p|pre|code|br|div|span|tt|samp)\b[^<>\n]{0,100}>", re.I)


def shown_after_unfenced(text: str, script: str) -> str:
    """For a script pasted without fences: the lines the text introduces right after it as what
    it printed ("and what it prints:", then the lines up to the next blank one), or ""."""
    last = next((ln.strip() for ln in reversed(script.splitlines()) if ln.strip()), "")
    # (a report pasted as HTML: "<p>output:</p>", then "<pre><code>..." around the lines)
    lines = [_TAG_RE.sub("", unhtml(ln)) for ln in text.splitlines()]
    at = next((i for i in range(len(lines) - 1, -1, -1) if lines[i].strip() == last), None)
    if not last or at is None:
        return ""
    rest = iter(lines[at + 1:])
    intro = next((ln for ln in rest if ln.strip()), "")
    inline = _INLINE_OUTPUT_RE.match(intro)
    if inline and any(ch.isdigit() for ch in inline.group(1)):
        return inline.group(1).strip()[:MAX_SHOWN]  # "prints: tvm 39 numpy 295"
    if not intro.rstrip().endswith(":") and not _BARE_INTRO_RE.match(intro.strip()):
        # "it prints [0. 3. 6. 6.] but should be [0. 3. 6. nan]": one value, in the words
        return printed_in_prose("\n".join(lines[at + 1: at + 1 + _PROSE_LINES]))
    if len(intro) > 200 or not _OUTPUT_WORDS_RE.search(intro) or _EXPECTED_WORDS_RE.search(intro):
        return ""
    return _printed_lines(rest)


def _printed_lines(lines: Iterable[str]) -> str:
    """The lines after an output label, up to the first blank one after them (blank lines
    before them skipped), when they read as printed values: at most 40 lines, a digit in them,
    not more code. Else ""."""
    shown: list[str] = []
    for ln in lines:
        if not ln.strip():
            if shown:
                break
            continue
        shown.append(ln)
    out = "\n".join(shown)
    if not shown or len(shown) > 40 or not any(ch.isdigit() for ch in out) or _is_program(out):
        return ""
    return out[:MAX_SHOWN]


_ABOVE_LINES = 20


def shown_before_unfenced(text: str, script: str) -> str:
    """For a script pasted without fences: the lines the text introduces just above it as what
    it printed ("the output I get:", the lines up to a blank one, then "script below" and the
    script), or ""."""
    first = next((ln.strip() for ln in script.splitlines() if ln.strip()), "")
    lines = [_TAG_RE.sub("", unhtml(ln)) for ln in text.splitlines()]
    at = next((i for i, ln in enumerate(lines) if ln.strip() == first), None)
    if not first or at is None:
        return ""
    for i in range(at - 1, max(-1, at - 1 - _ABOVE_LINES), -1):
        intro = lines[i].strip()
        if not intro.endswith(":") or len(intro) > 200:
            continue
        if not _OUTPUT_WORDS_RE.search(intro) or _EXPECTED_WORDS_RE.search(intro):
            return ""  # (the nearest label above the script is not about its output)
        return _printed_lines(lines[i + 1: at])
    return ""


def _is_program(text: str) -> bool:
    """Code (imports, assignments, loops), not printed values: ``x: 2`` parses as an annotation
    and ``array([1., 2.])`` as a call, and both are printed values."""
    tree = parse_py(text)
    return tree is not None and not all(isinstance(s, ast.Expr | ast.AnnAssign) for s in tree.body)


_IMPORT_LINE_RE = Pattern(r"^\s*(?:import|from)\s+\w", re.M)


# A short label for a block of output: "output:", "Got:", "what it prints:", "Output I get:".
_OUTPUT_LABEL_RE = Pattern(
    r"^(?:[\w'-]+\s){0,3}(?:output|prints?|printed|got|result|actual(?: output)?)"
    r"(?:\s(?:i|we) (?:get|got|see))?\s*:$", re.I)


def _is_expected_output(b: Block) -> bool:
    """A block of values the words just before it call the expected ones ("Expected:")."""
    return b.lang not in PY_TAGS and not _is_program(b.text) and bool(
        _EXPECTED_WORDS_RE.search(last_paragraph(b.prose))
        or b.section.lower().startswith("expected"))


def _is_shown_output(b: Block) -> bool:
    if b.lang in PY_TAGS or not any(ch.isdigit() for ch in b.text):
        return False
    intro = last_paragraph(b.prose)
    actual = b.section.lower().startswith("actual")
    if _is_program(b.text) and not (
            # the module the script printed ("printed:", under "Actual behavior"), which parses
            PRINTED_IR_RE.search(b.text) and not _IMPORT_LINE_RE.search(b.text)
            and (actual or _OUTPUT_WORDS_RE.search(intro))):
        return False
    if not intro.strip() and not b.section.lower().startswith("expected"):
        # right under the script, not a word between: what it printed (not an error it raised)
        return not any(is_error_output(ln) for ln in b.text.split("\n"))
    if actual:
        # under "Actual behavior" the prose may compare with what was expected ("I get 0
        # instead of 255"); only the sentence leading into the block can make it the expected one
        intro = re.split(r"(?<=[.!?])\s+", intro.strip())[-1]
    if _EXPECTED_WORDS_RE.search(intro) or b.section.lower().startswith("expected"):
        return False
    return bool(_OUTPUT_WORDS_RE.search(intro)) or actual
