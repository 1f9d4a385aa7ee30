"""Commands in issue comments (``/retest``), found the way a reader sees them.

A command is a line of a top-level paragraph that starts with ``/retest`` (optionally after a
mention of the bot: ``@reprobot /retest``), followed by whitespace or the end of the line; the
rest of the line gives the arguments. Nothing fires from inside fenced or indented code blocks,
inline code, block quotes, list items, headings, HTML blocks or HTML comments, nor from the middle
of a line. The comment is parsed as CommonMark with markdown-it-py, so "inside a code block"
means exactly what GitHub renders as one. Matching ignores case (``/Retest`` from a phone
keyboard fires); a backslash-escaped ``\\/retest`` does not.

Pure: no I/O, no clock, no logging.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.token import Token


class CommandName(StrEnum):
    RETEST = "retest"


@dataclass(frozen=True)
class Command:
    name: CommandName
    args: tuple[str, ...] = ()
    line: str = ""  # the line as written, for logs


_COMMAND = re.compile(r"/(?P<name>[A-Za-z][A-Za-z0-9_-]*)(?=\s|$)(?P<rest>.*)", re.S)
_MENTION = re.compile(r"@(?P<login>[A-Za-z0-9][A-Za-z0-9-]*(?:\[bot\])?)\s+")


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    # text_join would turn the escape "\/" back into plain text; without it an escaped slash
    # stays a separate "text_special" token and so never starts a command.
    return MarkdownIt("commonmark").disable("text_join")


def parse_commands(body: str, *, bot_login: str = "") -> list[Command]:
    """Every command in a comment body, in order (a comment may hold more than one)."""
    tokens = _parser().parse(body or "")
    out: list[Command] = []
    for i, tok in enumerate(tokens):
        if tok.type != "inline" or i == 0:
            continue
        opener = tokens[i - 1]
        if opener.type != "paragraph_open" or opener.level != 0:
            continue  # headings, and paragraphs inside quotes or list items
        for line in _lines(tok.children or []):
            cmd = _command(line, bot_login)
            if cmd is not None:
                out.append(cmd)
    return out


def _lines(children: list[Token]) -> list[str]:
    """The paragraph's lines that start with plain text, as text (markup dropped).

    A line that starts with anything else (inline code, HTML, an escape, emphasis, a link)
    yields nothing. Inline code and text later on the line are kept, for the arguments.
    """
    lines: list[str] = []
    current: list[str] | None = None
    at_start = True
    for child in children:
        if child.type in ("softbreak", "hardbreak"):
            if current is not None:
                lines.append("".join(current))
            current = None
            at_start = True
            continue
        if at_start:
            current = [child.content] if child.type == "text" else None
            at_start = False
        elif current is not None and child.type in ("text", "text_special", "code_inline"):
            current.append(child.content)
    if current is not None:
        lines.append("".join(current))
    return lines


def _command(line: str, bot_login: str) -> Command | None:
    text = line.strip()
    mention = _MENTION.match(text)
    if mention:
        login = mention.group("login").lower().removesuffix("[bot]")
        if not bot_login or login != bot_login.lower().removesuffix("[bot]"):
            return None  # addressed to someone else
        text = text[mention.end():]
    m = _COMMAND.match(text)
    if m is None:
        return None
    try:
        name = CommandName(m.group("name").lower())
    except ValueError:
        return None
    return Command(name=name, args=tuple(m.group("rest").split()), line=line.strip())
