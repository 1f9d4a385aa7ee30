from __future__ import annotations

import re
import shlex

from bot.extract.patterns import PROMPT_LINE_RE, PY_FILE_RE, TEST_FILE_RE
from bot.models import Repro


def with_args(repro: Repro, text: str) -> Repro:
    if repro.shape == "shell-wrapped" or not re.search(r"\bargv\b|argparse|\bclick\b|\bfire\b",
                                                       repro.script):
        return repro
    for m in PY_FILE_RE.finditer(text):
        fname = m.group(2)
        if TEST_FILE_RE.search(fname) or "setup.py" in fname:
            continue
        in_code = in_code_context(text, m.start(), m.end())
        line = text[text.rfind("\n", 0, m.start()) + 1 : m.start() + 1]
        args = args_from_tail(m.group(3), strict=not in_code,
                               prompt=bool(PROMPT_LINE_RE.match(line)))
        return Repro(
            found=repro.found,
            script=repro.script,
            blocks=repro.blocks,
            args=tuple(args),
            shape=repro.shape,
            reason=repro.reason,
        )
    return repro


def in_code_context(text: str, start: int, end: int) -> bool:
    line_start = text.rfind("\n", 0, start) + 1
    line = text[line_start : text.find("\n", end) if text.find("\n", end) != -1 else len(text)]
    if line.count("`") >= 2:
        return True
    stripped = line.lstrip()
    return stripped.startswith(("$", "python", "py ", "#", ">", "(")) or bool(
        re.match(r"^\s*(?:\S+@\S+[$#]|PS [^>]*>|[A-Za-z]:\\[^>]*>)", line)
    )


def args_from_tail(tail: str, *, strict: bool, prompt: bool = False) -> list[str]:
    """The arguments after ``python repro.py``; ``prompt``: the line is a shell command after a
    prompt (``$ ``, ``PS C:\\> ``), so plain words are arguments too."""
    tail = re.split(r"[`#|;&]|\s2?>", tail, maxsplit=1)[0]
    try:
        lexer = shlex.shlex(tail, posix=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        tokens = tail.split()
    args: list[str] = []
    prev_flag = False
    for tok in tokens:
        if tok.startswith("-") and re.match(r"^--?[A-Za-z][\w-]*(=\S*)?$", tok):
            args.append(tok)
            prev_flag = "=" not in tok
            continue
        simple = re.match(r"^[\w./:=,+@-]+$", tok) and not re.search(r"[.,:]$", tok)
        looks_like_value = bool(simple) and (
            bool(re.search(r"\.\w+$|^\d|[/=]", tok)) or (prev_flag and not strict)
            or prompt
        )
        if looks_like_value:
            args.append(tok)
            prev_flag = False
            continue
        break
    return args
