from __future__ import annotations

import html
import re
from collections.abc import Sequence

from markdown_it import MarkdownIt
from markdown_it.token import Token

from bot import lazyre
from bot.extract.cutoff import cut_tail
from bot.extract.patterns import (
    ENV_SECTION_RE,
    ESCAPED_PROMPT_RE,
    FENCE_RE,
    HEADING_RE,
    HTML_ENTITY_RE,
    HTML_LINE_RE,
    PLAIN_TITLE_RE,
    PRE_CLOSE_RE,
    PRE_OPEN_RE,
    PY_VERSIONED_RE,
    REPRO_SECTION_RE,
    RESULT_SECTION_RE,
    SECTION_WORDS_RE,
    VERSION_OUT_RE,
    VERSION_WORDS_RE,
)
from bot.extract.pysyntax import is_error_output, parse_py
from bot.records import record

_LANG_WORD_RE = lazyre.compile(r"[a-z0-9_+#.\-]*")


@record
class Source:
    """One text of the issue (the body, a comment, the title), read once: its normalised text,
    its lines and its code blocks (the markdown is parsed once per text, here)."""

    name: str  # "body" | "comment3" | "title"
    text: str
    by_author: bool
    lines: tuple[str, ...] = ()
    blocks: tuple[Block, ...] = ()
    sections: tuple[str, ...] = ()  # the section each line stands in (see sections_by_line)


def read_source(name: str, raw: str, *, by_author: bool = True) -> Source:
    """``raw`` markdown as a :class:`Source`: normalised, split into lines, its blocks found."""
    text = normalise(raw)
    lines = text.split("\n")
    return Source(name, text, by_author, tuple(lines), tuple(split_blocks(name, text)),
                  tuple(sections_by_line(lines)))


@record
class Block:
    label: str  # "body#0"
    lang: str  # first word of the fence info string, lower case; "" for indented blocks
    text: str
    prose: str  # the text between the previous block (or the source's start) and this block
    section: str  # the nearest heading above the block ("" if none)
    start: int  # first line (0-based) of the block in the source, fences included
    end: int  # one past the last line
    fenced: bool = True  # False: an indented code block


def unwrap_multiline_spans(lines: list[str]) -> list[str]:
    """Code pasted between single backticks over several lines (`import x ... f()`): drop the
    two backticks so the lines read as the code they are."""
    out = list(lines)
    i = 0
    while i < len(out):
        ln = out[i]
        if ln.startswith("`") and not ln.startswith("``") and "`" not in ln[1:]:
            for j in range(i + 1, min(i + 200, len(out))):
                other = out[j]
                if other.startswith("```") or not other.strip():
                    break
                if "`" in other:
                    if other.rstrip().endswith("`") and other.count("`") == 1:
                        out[i] = ln[1:]
                        out[j] = other.rstrip()[:-1]
                        i = j
                    break
        i += 1
    return out


def normalise(text: str) -> str:
    """Line ends, and blank lines around ``<details>``/``<summary>`` lines so that a fence right
    after them is a fence (CommonMark would otherwise keep it inside the HTML block)."""
    lines = (text or "").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    # ``\>>>``: a prompt escaped so that markdown would not quote it.
    lines = unwrap_multiline_spans(
        [ESCAPED_PROMPT_RE.sub(r"\1>>>", ln) if "\\>" in ln else ln for ln in lines]
    )
    out: list[str] = []
    for ln in _split_at_pre(lines):
        if "<" in ln and HTML_LINE_RE.match(ln) and not ln.lstrip().startswith("<pre"):
            out.extend(["", ln, ""])
        else:
            out.append(ln)
    return "\n".join(out)


_PRE_SPLIT_RE = lazyre.compile(r"(?=<pre\b)|(?<=</pre>)", re.I)


def _split_at_pre(lines: list[str]) -> list[str]:
    """An e-mail's ``...<br><br><pre>import tvm`` and ``</pre><br>Output:<br><pre>[[nan]]``:
    each ``<pre>`` starts a line and each ``</pre>`` ends one, so the code is on lines of its
    own."""
    out: list[str] = []
    for ln in lines:
        if "pre>" in ln.lower() or "<pre" in ln.lower():
            out.extend(p for p in _PRE_SPLIT_RE.split(ln) if p)
        else:
            out.append(ln)
    return out


MD = MarkdownIt("commonmark").disable("inline")
# A line of one or two backticks inside a fenced block: a fence typed short and left there, which
# no program holds (blanked, so that the block keeps its lines).
_STRAY_BACKTICKS_RE = lazyre.compile(r"^[ \t]*`{1,2}[ \t]*$", re.M)


def split_blocks(name: str, text: str) -> list[Block]:
    text, tokens = repair_unclosed_fences(text)
    lines = text.split("\n")
    blocks: list[Block] = []
    prev_end = 0
    section = ""
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and i + 1 < len(tokens):
            section = tokens[i + 1].content.strip()
            continue
        if tok.type not in ("fence", "code_block") or not tok.map:
            continue
        start, end = tok.map
        lang = tok.info.strip().split()[0].lower().strip("{}.") if tok.info.strip() else ""
        # (``python3=`` with HackMD's line numbers, ``python:repro.py`` naming the file)
        word = _LANG_WORD_RE.match(lang)
        lang = word.group(0) if word else lang
        lang = PY_VERSIONED_RE.sub(r"\1", lang)  # python3.10, py3.9, python-3 -> python / py
        prose = "\n".join(lines[prev_end:start])
        blocks.append(
            Block(
                label=f"{name}#{len(blocks)}",
                lang=lang,
                text=_STRAY_BACKTICKS_RE.sub("", tok.content) if "`" in tok.content else tok.content,
                prose=prose,
                section=section,
                start=start,
                end=end,
                fenced=tok.type == "fence",
            )
        )
        prev_end = end
    return blocks


def repair_unclosed_fences(text: str) -> tuple[str, list[Token]]:
    """Close a fence the author left open before the next section heading; the text and its
    block tokens (one parse, and one more per repair: at most 8).

    An unclosed ```` ``` ```` shifts every later fence by one: the heading after it lands inside a
    code block and the script after it outside. When a block that is not Python ends with a
    markdown heading (only blank lines after it), the author forgot to close it there.
    """
    tokens = MD.parse(text)
    for _ in range(8):
        at = _unclosed_fence_end(text, tokens)
        if at is None:
            break
        lines = text.split("\n")
        lines.insert(at[0], at[1])
        text = "\n".join(lines)
        tokens = MD.parse(text)
    return text, tokens


_TEMPLATE_HEADING_RE = lazyre.compile(
    r"^\s{0,3}#{2,6}\s+(?:environment|expected behaviou?r|actual behaviou?r|steps to reproduce"
    r"|triage|additional context|system info)\b", re.I)


def _unclosed_fence_end(text: str, tokens: list[Token]) -> tuple[int, str] | None:
    """Where to insert the closing fence of the first fence left open, and the fence line."""
    lines: list[str] | None = None
    for tok in tokens:
        if tok.type != "fence" or not tok.map:
            continue
        start, end = tok.map
        body = tok.content.split("\n")
        nonblank = [k for k, ln in enumerate(body) if ln.strip()]
        if len(nonblank) < 2:
            continue
        last = nonblank[-1]
        # A fence left open to the end of the text: the template's next heading ("###
        # Environment", "### Triage", a Python comment to the parser) ends the script before it,
        # when text that is no comment follows it ("* needs-triage" even parses, as a starred
        # expression, and fails only when run).
        heading = next((k for k in nonblank if _TEMPLATE_HEADING_RE.match(body[k])), -1)
        if heading > 0 and any(not body[k].lstrip().startswith("#") for k in nonblank
                               if k > heading) and parse_py("\n".join(body[:heading])) is not None:
            last = heading
        elif parse_py(tok.content) is not None:
            continue
        elif not HEADING_RE.match(body[last]):
            # Open to the end of the text, the script then a line of prose ("CUDA 12.2, driver
            # 535"): the fence ends at the last blank line before which the code parses.
            lines = lines or text.split("\n")
            tail = [ln for ln in lines[end - 1:] if ln.strip()]
            if any(ln.strip() for ln in lines[end:]) or (
                    tail and FENCE_RE.match(tail[-1]) and not tail[-1].strip().strip("`~")):
                continue  # (closed, or not open to the end)
            if cut_tail(tok.content)[1]:
                continue  # the paste is cut off inside its last statement (bot.extract.cutoff)
            blanks = [k for k in range(len(body) - 1, 0, -1) if not body[k].strip()][:8]
            cut = next((k for k in blanks if parse_py("\n".join(body[:k])) is not None), 0)
            prose = next((ln for ln in body[cut:] if ln.strip()), "") if cut else ""
            if not prose or prose[:1].isspace() or prose.startswith(("@", "#")) \
                    or parse_py(prose) is not None:
                continue  # (more code after the blank line, cut off with the text: not prose)
            last = cut
        insert_at = start + 1 + last
        if insert_at >= end:
            continue
        lines = lines or text.split("\n")
        fence_line = lines[start]
        marker = fence_line.strip()[:3] if fence_line.strip()[:1] in "`~" else "```"
        indent = fence_line[: len(fence_line) - len(fence_line.lstrip())]
        return insert_at, indent + marker
    return None


def is_quoted(src_lines: Sequence[str], block: Block) -> bool:
    """Every line of ``block`` is quoted with ``>`` (a reply quoting someone)."""
    lines = src_lines[block.start : block.end]
    return bool(lines) and all(ln.lstrip().startswith(">") for ln in lines if ln.strip())


def last_paragraph(prose: str) -> str:
    parts = [p for p in re.split(r"\n\s*\n", prose) if p.strip()]
    return parts[-1] if parts else ""


def sections_by_line(lines: Sequence[str]) -> list[str]:
    """``section_above(lines, k)`` for every ``k`` in ``0..len(lines)``, in one pass."""
    out: list[str] = []
    current = ""
    for k, ln in enumerate(lines):
        out.append(current)
        if not ln or not ln.strip():
            continue
        if HEADING_RE.match(ln) and not is_code_comment(ln):
            current = ln.strip().lstrip("#").strip()
        elif PLAIN_TITLE_RE.match(ln) and (k == 0 or not lines[k - 1].strip()):
            current = ln.strip().rstrip(":").strip()
    out.append(current)
    return out


def section_above(lines: Sequence[str], start: int) -> str:
    """The text of the nearest markdown heading above line ``start`` ("" if none); in text that
    lost its markdown (a forum scrape), a line alone that names a section ("Steps to reproduce",
    "Actual behavior") is one."""
    for k in range(start - 1, -1, -1):
        ln = lines[k]
        if HEADING_RE.match(ln) and not is_code_comment(ln):
            return ln.strip().lstrip("#").strip()
        if PLAIN_TITLE_RE.match(ln) and (k == 0 or not lines[k - 1].strip()):
            return ln.strip().rstrip(":").strip()
    return ""


def is_section_heading(line: str) -> bool:
    """A markdown heading that names a section of a report (``### Environment``, ``## Steps to
    reproduce``), not a comment in pasted code (``## build the model``)."""
    if not HEADING_RE.match(line) or is_code_comment(line):
        return False
    words = line.strip().lstrip("#").strip()
    return bool(REPRO_SECTION_RE.match(words) or RESULT_SECTION_RE.match(words)
                or SECTION_WORDS_RE.match(words) or ENV_SECTION_RE.match(words))


def is_code_comment(line: str) -> bool:
    """``# Define the inputs`` in pasted code reads as a markdown heading; ``### Steps to
    reproduce`` and ``# Expected behavior`` are headings."""
    text = line.strip()
    if text.startswith("##") or not text.startswith("#"):
        return False
    words = text.lstrip("#").strip()
    return not (REPRO_SECTION_RE.match(words) or RESULT_SECTION_RE.match(words)
                or SECTION_WORDS_RE.match(words) or ENV_SECTION_RE.match(words))


def sentence_around(text: str, start: int, end: int) -> str:
    left = max(text.rfind(".", 0, start), text.rfind("\n", 0, start)) + 1
    right_candidates = [p for p in (text.find(".", end), text.find("\n", end)) if p != -1]
    right = min(right_candidates) if right_candidates else len(text)
    sentence = " ".join(text[left:right].split()).strip(" ,:;")
    return sentence[:160]


def unhtml(line: str) -> str:
    """Code pasted in ``<pre><code>`` HTML: tags off, ``&quot;`` and friends decoded."""
    if "<" in line:
        line = PRE_CLOSE_RE.sub("", PRE_OPEN_RE.sub(r"\1", line))
    if "&" in line and HTML_ENTITY_RE.search(line):
        line = html.unescape(line)
    return line


def probe_in_env(lines: Sequence[str], start: int, end: int, section: str = "", *,
                  env: bool = False, above: str | None = None) -> bool:
    """A version probe at lines ``start:end`` shown as the environment: under an environment
    section, introduced with words about versions, or followed by the version it printed -- and
    no error under it (then the probe failing is the problem)."""
    if error_after(lines, start):
        return False
    if env or ENV_SECTION_RE.match(
        section or (section_above(lines, start) if above is None else above)
    ):
        return True
    if VERSION_WORDS_RE.search(" ".join(lines[max(0, start - 3) : start + 1])):
        return True
    return any(VERSION_OUT_RE.match(ln) for ln in [*lines[end : end + 4], *lines[start:end]])


def error_after(lines: Sequence[str], end: int, span: int = 15) -> bool:
    """An error is shown in the ``span`` lines from ``end`` (what a probe printed)."""
    return any(is_error_output(ln) for ln in lines[end : end + span])
