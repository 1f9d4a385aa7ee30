"""A script whose paste is cut off in its last statement.

Pure. Reports lose their tail: a paste cut at GitHub's limit, a script copied up to the line
that "matters", a page that kept only part of the issue. Python then refuses the whole file
(``'(' was never closed``, ``unexpected EOF``, ``expected an indented block`` at its end) and a
run says only ``SyntaxError``: nothing about TVM. A careful triager runs what is there, up to
the last complete statement, and says so. :func:`with_cut_tail` does the same: the repro keeps
the lines before the broken last statement, ``Repro.cut_at`` names the first line dropped, and
the note says it. A run of such a script that passes is inconclusive, not "not reproduced": the
missing part may hold the failure (``bot.compare.account_for_cut_script``).

A syntax error anywhere else (Python 2's ``print x``, a typo) is the script's own error and is
left for the run to show.
"""

from __future__ import annotations

import ast

from bot.models import Repro
from bot.records import replace

# Python's words for a file that ends inside a statement.
_AT_EOF = (
    "was never closed",
    "unexpected EOF",
    "expected an indented block",
    "unterminated triple-quoted string",
    "unterminated string literal",  # (only on the last line: a string cut with the paste)
)
# How many statement starts (lines at column 0) are tried, from the end, for the longest prefix
# that parses: bounds the work on a hostile paste.
MAX_TRIES = 12
CUT_NOTE = ("The script in the issue is cut off (line {line}: {msg}); the bot ran it up to "
            "line {last}, its last complete statement.")


def cut_tail(script: str) -> tuple[str, int, str]:
    """``(prefix, first line dropped, Python's message)`` when ``script`` ends inside an
    unfinished statement and some complete statements come before it; else ``(script, 0, "")``."""
    try:
        ast.parse(script)
        return script, 0, ""
    except (ValueError, RecursionError, MemoryError):
        return script, 0, ""
    except SyntaxError as e:
        err = e
    msg = str(err.msg or "")
    if not any(word in msg for word in _AT_EOF):
        return script, 0, ""
    lines = script.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    line = min(int(err.lineno or len(lines)), len(lines))
    if "never closed" not in msg and "triple-quoted" not in msg and line < len(lines) - 1:
        return script, 0, ""  # (an indented block missing mid-file: the script's own error)
    starts = [k for k in range(min(line, len(lines)) - 1, 0, -1)
              if lines[k][:1] not in ("", " ", "\t", "#", ")", "]", "}")]
    for k in starts[:MAX_TRIES]:
        prefix = "\n".join(lines[:k]).rstrip() + "\n"
        try:
            tree = ast.parse(prefix)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        if tree.body:
            return prefix, k + 1, msg
    return script, 0, ""


def with_cut_tail(repro: Repro) -> Repro:
    """``repro`` cut before its broken last statement (see the module docstring)."""
    if not repro.found:
        return repro
    prefix, cut_at, msg = cut_tail(repro.script)
    if not cut_at:
        return repro
    last = len(prefix.rstrip("\n").split("\n"))
    note = CUT_NOTE.format(line=cut_at, msg=msg, last=last)
    return replace(repro, script=prefix, cut_at=cut_at,
                   reason=f"{repro.reason} {note}".strip() if repro.reason else note)
