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

from bot import lazyre


class CommandName(StrEnum):
    RETEST = "retest"


@dataclass(frozen=True)
class Command:
    name: CommandName
    args: tuple[str, ...] = ()
    line: str = ""  # the line as written, for logs


_COMMAND = lazyre.compile(r"/(?P<name>[A-Za-z][A-Za-z0-9_-]*)(?=\s|$)(?P<rest>.*)", re.S)
_MENTION = lazyre.compile(r"@(?P<login>[A-Za-z0-9][A-Za-z0-9-]*(?:\[bot\])?)\s+")


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


# ---------------------------------------------------------------------------------------------
# What a ``/retest`` asks for: the default build, every build, or one named build.

RETEST_DEFAULT = "default"
RETEST_ALL = "all"

# A build name as the bot's builds are named: "main", "0.26.0", "v0.25", "0.27.0.post1",
# "0.27.0rc0", or a configured name such as "main-cuda" (letters, digits, ".", "-", "_").
_BUILD_ARG = lazyre.compile(r"^(?:v?\d+\.\d+(?:\.\d+)*(?:[.-]?(?:rc|post|dev|a|b)\d*)*"
                        r"|main(?:[-_.][A-Za-z0-9_.-]+)?)$", re.I)


@dataclass(frozen=True)
class RetestTarget:
    """``kind`` is ``default`` (the default build), ``all`` (the matrix) or ``build``."""

    kind: str = RETEST_DEFAULT
    build: str = ""

    def to_arg(self) -> str:
        """The form passed to the triage task: '' | 'all' | the build name."""
        return self.build if self.kind == "build" else ("all" if self.kind == RETEST_ALL else "")

    @classmethod
    def from_arg(cls, arg: str) -> RetestTarget:
        if not arg:
            return cls()
        if arg == RETEST_ALL:
            return cls(RETEST_ALL)
        return cls("build", arg)


def retest_target(cmd: Command) -> RetestTarget:
    """``/retest`` -> default; ``/retest all`` -> every build; ``/retest 0.26.0`` -> that build.

    Only the first word counts, and only when it is ``all`` or looks like a build name; any
    other words (``/retest please``) leave the default build.
    """
    if not cmd.args:
        return RetestTarget()
    first = cmd.args[0].strip().strip(".,;:!")
    if first.lower() == RETEST_ALL:
        return RetestTarget(RETEST_ALL)
    if _BUILD_ARG.match(first):
        name = first.lower()
        return RetestTarget("build", name[1:] if re.match(r"^v\d", name) else name)
    return RetestTarget()
