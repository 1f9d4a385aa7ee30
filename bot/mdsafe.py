"""Strangers' text as markdown that cannot come alive.

Every piece of text in the bot's comment that the bot did not write itself (the script, its
output, exception messages, module names and paths from them, sentences quoted from the issue,
environment strings) goes through one of these primitives:

- :func:`code_block`: a fenced block whose fence is longer than any backtick run inside;
- :func:`code_span`: one inline code span built the CommonMark way (the delimiter is longer than
  any backtick run inside, padded with a space when the text starts or ends with a backtick);
- :func:`escape_text`: plain prose with every markdown/HTML metacharacter escaped, and every word
  that GitHub would turn into something live (``@mention``, ``#123``, a URL, an e-mail address,
  a commit hash) set in a code span, where GitHub links nothing;
- :func:`prose`: a sentence written by another stage that quotes untrusted names in backticks
  (``"`foo` is not installed"``): the backtick spans are rebuilt with :func:`code_span` and the
  rest goes through :func:`escape_text`, so the result is safe whatever the quoted names hold.

All of them first make the text :func:`visible`: terminal escapes and control characters are
removed, and bidi overrides, zero-width and other invisible characters are shown as ``<U+202E>``.
Pure functions; no I/O.
"""

from __future__ import annotations

import re

from bot import lazyre

__all__ = ["code_block", "code_span", "escape_text", "prose", "visible"]

# ---------------------------------------------------------------------------------------------
# Visible text

_ANSI_RE = lazyre.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC
    r"|\x1b[@-Z\\-_]"  # other two-byte escapes
)
# C0 controls (except tab and newline), DEL and C1 controls: removed.
_CONTROLS = [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0)]
# Characters that change how text around them reads without being seen: bidi controls, zero-width
# characters, invisible fillers and separators, Unicode tags ("ASCII smuggling"): spelled out.
_INVISIBLE = [
    0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, *range(0x180B, 0x1810),
    *range(0x200B, 0x2010), *range(0x2028, 0x202F), *range(0x2060, 0x2070), 0x3164,
    *range(0xFE00, 0xFE10), 0xFEFF, 0xFFA0, *range(0xFFF9, 0xFFFC), *range(0xE0000, 0xE0080),
]
_VISIBLE_TABLE: dict[int, str | None] = {
    **dict.fromkeys(_CONTROLS),
    **{cp: f"<U+{cp:04X}>" for cp in _INVISIBLE},
}


def visible(text: str) -> str:
    """``text`` without terminal escapes and controls, invisible characters spelled out."""
    if "\x1b" in text:
        text = _ANSI_RE.sub("", text)
    if "\r" in text:
        # A bare carriage return redraws the line (progress bars): keep the last state.
        text = text.replace("\r\n", "\n")
        text = "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))
    return text.translate(_VISIBLE_TABLE)


_BACKTICKS_RE = lazyre.compile("`+")


def _longest_run(text: str) -> int:
    """The longest run of backticks in ``text`` (0 when none)."""
    return max((len(m) for m in _BACKTICKS_RE.findall(text)), default=0)


# ---------------------------------------------------------------------------------------------
# Code


def code_block(text: str, lang: str = "") -> str:
    """A fenced code block showing ``text`` verbatim (but :func:`visible`)."""
    if not re.fullmatch(r"[a-z]*", lang):
        raise ValueError(f"not a language name: {lang!r}")
    body = visible(text)
    fence = "`" * max(3, _longest_run(body) + 1)
    if body and not body.endswith("\n"):
        body += "\n"
    return f"{fence}{lang}\n{body}{fence}"


def code_span(text: str, limit: int = 300) -> str:
    """``text`` on one line as an inline code span; ``""`` when there is nothing to show."""
    one = " ".join(visible(text).split())
    if len(one) > limit:
        one = one[: limit - 1] + "…"
    if not one:
        return ""
    ticks = "`" * (_longest_run(one) + 1)
    pad = " " if one.startswith("`") or one.endswith("`") else ""
    return f"{ticks}{pad}{one}{pad}{ticks}"


# ---------------------------------------------------------------------------------------------
# Prose

# Words GitHub would make live outside code: mentions (also written with a fullwidth or small
# at-sign), issue references (#1, GH-1, owner/repo#1), URLs and www. links, e-mail addresses,
# and hexadecimal words that could be taken for a commit.
_LIVE_WORD_RE = lazyre.compile(
    r"[@\uff20\ufe6b]"
    r"|[#\uff03\ufe5f]\s*\d"
    r"|\bGH-\d"
    r"|://|\bwww\.|\b(?:mailto|xmpp|javascript|data|file):"
    r"|\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,}\b",
    re.IGNORECASE,
)
# Characters with a meaning in inline markdown or HTML (GitHub also renders $math$ and ~~strike~~).
_INLINE_META = frozenset("\\`*_[]<>&!|~$#{}")
# What turns the start of a line into a block (heading, list, quote, setext underline, table).
_BLOCK_START_RE = lazyre.compile(r"^(?:>|[-+](?=\s|$)|[-=]+\s*$|\d{1,9}(?=[.)](?:\s|$)))")


def _escape_word(word: str) -> str:
    if _LIVE_WORD_RE.search(word):
        return code_span(word, limit=len(word) + 1)
    out = []
    for i, c in enumerate(word):
        # "_" between two letters or digits cannot start or end emphasis: left as it is.
        inert = c == "_" and 0 < i < len(word) - 1 and word[i - 1].isalnum() and word[i + 1].isalnum()
        out.append("\\" + c if c in _INLINE_META and not inert else c)
    return "".join(out)


def _escape_inline(text: str) -> str:
    """Escaped prose on one line; one space kept where ``text`` had whitespace at an edge."""
    flat = visible(text)
    words = flat.split()
    if not words:
        return " " if flat else ""
    out = " ".join(_escape_word(w) for w in words)
    lead = " " if flat[:1].isspace() else ""
    trail = " " if flat[-1:].isspace() else ""
    return lead + out + trail


def _guard_line_start(md: str) -> str:
    m = _BLOCK_START_RE.match(md)
    if m is None:
        return md
    if md[0].isdigit():  # "1. x" would start a list: escape the dot instead
        return md[: m.end()] + "\\" + md[m.end() :]
    return "\\" + md


def escape_text(text: str, limit: int = 1_000) -> str:
    """Untrusted ``text`` as inert prose on one line (safe at the start of a line too)."""
    flat = " ".join(visible(text).split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return _guard_line_start(_escape_inline(flat))


def prose(text: str, limit: int = 1_000) -> str:
    """A sentence that may quote untrusted names in backticks, made safe (see module doc).

    The backtick spans are found the CommonMark way (a run of N backticks up to the next run of
    exactly N); whatever they enclose, the output is code spans and escaped text only.
    """
    flat = " ".join(visible(text).split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    parts: list[str] = []
    plain_start = i = 0
    n = len(flat)
    while i < n:
        if flat[i] != "`":
            i += 1
            continue
        j = i
        while j < n and flat[j] == "`":
            j += 1
        width = j - i
        close = _closing_run(flat, j, width)
        if close < 0:
            i = j  # no closing run: these backticks are plain text
            continue
        parts.append(_escape_inline(flat[plain_start:i]))
        inner = flat[j:close]
        if len(inner) > 2 and inner[0] == inner[-1] == " " and inner.strip():
            inner = inner[1:-1]
        parts.append(code_span(inner, limit=limit))
        i = plain_start = close + width
    parts.append(_escape_inline(flat[plain_start:]))
    return _guard_line_start("".join(parts).strip())


def _closing_run(text: str, start: int, width: int) -> int:
    """Index of the next run of exactly ``width`` backticks at or after ``start``; -1 if none."""
    i, n = start, len(text)
    while i < n:
        if text[i] != "`":
            i += 1
            continue
        j = i
        while j < n and text[j] == "`":
            j += 1
        if j - i == width:
            return i
        i = j
    return -1
