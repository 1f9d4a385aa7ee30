"""Which code blocks may be (part of) the repro: an ordered table of named rules.

Each rule is a small predicate over one candidate block (see :mod:`bot.extract.candidates`) and
what the filter has seen before it; the first rule that applies leaves the candidate out, for
its reason. Adding a rule is one function, one entry in :data:`BLOCK_RULES`, and one row in the
should-take / should-not-take table of ``tests/test_extract_rules.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from bot import lazyre
from bot.extract.candidates import Code, is_printed_output, is_printed_value
from bot.extract.markdown import Source, last_paragraph, probe_in_env
from bot.extract.patterns import FAILS_INTRO_RE, VARIANT_RE
from bot.extract.pysyntax import is_version_probe
from bot.records import record


@record
class Seen:
    """What the filter knows when it judges a candidate: the text it stands in, and whether a
    script was taken before it."""

    src: Source
    script_above: bool = False


@record
class Rule:
    """A reason to leave a candidate out of the repro."""

    name: str
    applies: Callable[[Code, Seen], bool]
    reason: str
    printed: bool = False  # the candidate is printed output (the no-repro reason says so)


def _printed_output(c: Code, seen: Seen) -> bool:
    return is_printed_output(c)


def _output_of_script_above(c: Code, seen: Seen) -> bool:
    return seen.script_above and is_printed_value(c.tree, c.block.prose)


def _environment_probe(c: Code, seen: Seen) -> bool:
    b = c.block
    return c.kind == "script" and is_version_probe(c.tree) and probe_in_env(
        seen.src.lines, b.start, b.end, b.section, above=seen.src.sections[b.start]
    )


# "What I get (relevant part):", "What I expected:", "Output:": what follows is shown, not run.
_SHOWN_INTRO_RE = lazyre.compile(
    r"\b(?:what (?:i|we|it) (?:get|got|see|saw|expect\w*|want\w*|gives?|prints?)|i (?:get|got|see)"
    r"|outputs?|prints?|printed|expected|should (?:be|look like)|instead)\b[^\n]{0,60}:\s*$",
    re.I)


def _indented_excerpt_shown(c: Code, seen: Seen) -> bool:
    """An excerpt that starts indented (cut out of printed IR), presented as what the script
    above gave or should give: no program starts indented."""
    first = next((ln for ln in c.block.text.split("\n") if ln.strip()), "")
    return (seen.script_above and first[:1] in (" ", "\t")
            and bool(_SHOWN_INTRO_RE.search(block_intro(c.block.prose))))


BLOCK_RULES: tuple[Rule, ...] = (
    Rule("printed-output", _printed_output,
         "a block of printed values (array(...), tensor(...)), not a program", printed=True),
    Rule("output-of-script-above", _output_of_script_above,
         "values printed by the script above it"),
    Rule("environment-probe", _environment_probe,
         "a version print shown as the environment, not the problem"),
    Rule("indented-excerpt-shown", _indented_excerpt_shown,
         "an indented excerpt of what the script above prints (or should print)"),
)


def why_not(c: Code, seen: Seen) -> Rule | None:
    """The first rule that leaves ``c`` out, or ``None``: the candidate is taken."""
    return next((r for r in BLOCK_RULES if r.applies(c, seen)), None)


# A sentence that turns against the ones before it: "X works fine. But building it:".
_TURN_RE = lazyre.compile(r"^(?:but|however|yet|though|whereas|unfortunately|sadly)\b", re.I)
_SENTENCE_END_RE = lazyre.compile(r"(?<=[.!?])\s+")


def block_intro(prose: str) -> str:
    """The text that presents the block after ``prose``: its last paragraph, or only that
    paragraph's last sentence when it turns against the sentences before it ("It prints fine
    and the check passes. But building and running it:" presents the block as what fails)."""
    para = last_paragraph(prose)
    sentences = _SENTENCE_END_RE.split(para.strip())
    if len(sentences) > 1 and _TURN_RE.match(sentences[-1]):
        return sentences[-1]
    return para


# "this one is fine, prints 512.0." between two blocks: a word on the block above (it ends
# with a full stop, not the colon that presents the block below).
_ABOUT_ABOVE_RE = lazyre.compile(
    r"^\W*(?:this|that|the (?:above|first|previous)|above) (?:one|version|script|code|snippet|block"
    r"|variant)\b(?!.*:\s*$)", re.I | re.S)


def describes_block_above(prose: str) -> bool:
    """The text right before a block is a remark on the block above it, not its intro."""
    return bool(_ABOUT_ABOVE_RE.search(last_paragraph(prose).strip()))


# A sentence about the block above, inside the intro of the next one: "the static-shape version
# above is caught at parse time, that one is fine."
_OF_THE_ONE_ABOVE_RE = lazyre.compile(
    r"\b(?:version|script|code|snippet|example|one|block|variant|repro)\s+(?:\w+\s+)?above\b"
    r"|\babove (?:version|script|code|snippet|example|one|block|variant)\b"
    # ("the first version works", not "this one works, unlike the first one")
    r"|\bthe (?:first|previous|earlier|original) (?:version|script|code|snippet|example|one|block)"
    r" (?:is|was|works|worked|runs|ran|passes|passed)\b",
    re.I)


# What works elsewhere, not this block: "(works like this in numpy / torch)", "works in numpy".
_OTHER_FRAMEWORK = r"(?:numpy|torch|pytorch|onnx ?runtime|tensorflow|jax|tflite|keras)"
_ELSEWHERE_RE = lazyre.compile(
    r"\([^()\n]{0,200}\b" + _OTHER_FRAMEWORK + r"\b[^()\n]{0,200}\)"
    r"|\b(?:works?|worked|is fine|passes)\s+(?:\w+\s+){0,3}(?:in|with|on|under)\s+"
    + _OTHER_FRAMEWORK + r"\b", re.I)


def _intro_sentences(prose: str) -> list[str]:
    """The block's intro, less its sentences that speak of the block above, and less its asides
    on what works elsewhere (in parentheses, in numpy)."""
    return [s for s in _SENTENCE_END_RE.split(_ELSEWHERE_RE.sub(" ", block_intro(prose)).strip())
            if not _OF_THE_ONE_ABOVE_RE.search(s)]


def offered_as_working(prose: str) -> bool:
    """The text right before a block presents it as the variant that works."""
    if describes_block_above(prose):
        return False
    return any(VARIANT_RE.search(s) for s in _intro_sentences(prose))


# "This should work:", "I expect this to pass:": what the author expects, not what happened.
_EXPECTATION_RE = lazyre.compile(r"\b(?:should|expect\w*|supposed|would|must)\b", re.I)


def only_offered_as_working(prose: str) -> bool:
    """The text right before a block says it works, and nothing about failing or about what
    should happen ("I get a check failure instead of a nice error:" presents a failing one)."""
    if describes_block_above(prose):
        return False
    intro = block_intro(prose)
    return any(VARIANT_RE.search(s) for s in _intro_sentences(prose)) and not \
        FAILS_INTRO_RE.search(intro) and not _EXPECTATION_RE.search(intro)
