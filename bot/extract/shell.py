from __future__ import annotations

import bisect
import re
import shlex

from bot import lazyre
from bot.extract.markdown import Block, Source, last_paragraph, probe_in_env
from bot.extract.patterns import (
    CAT_RE,
    ENV_SECTION_RE,
    HEREDOC_HEAD_RE,
    PLAIN_TAGS,
    PROMPT_LINE_RE,
    PY_DASH_C_RE,
    PY_REPL_RE,
    PY_TAGS,
    SHELL_LINE_RE,
    SHELL_SESSION_LINE_RE,
    SHELL_TAGS,
    VERSION_WORDS_RE,
)
from bot.extract.pysyntax import dedent, does_something, is_version_probe, parse_py
from bot.models import Repro


def shell_in_blocks(blocks: list[Block]) -> Repro | None:
    for b in blocks:
        if b.lang and b.lang not in SHELL_TAGS and b.lang not in PLAIN_TAGS and b.lang not in PY_TAGS:
            continue
        repro = (
            shell_file(b.text, b.label)
            or shell_session(b.text, b.label)
            or shell_dash_c(b.text, b.label, env=bool(
                ENV_SECTION_RE.match(b.section)
                or VERSION_WORDS_RE.search(last_paragraph(b.prose)[-300:])
            ))
        )
        if repro is not None:
            return repro
    return None


def shell_file(text: str, label: str) -> Repro | None:
    """A script written in a shell log: ``cat > repro.py <<EOF ... EOF`` or ``$ cat repro.py``."""
    code = heredoc_body(text)
    if code is None:
        lines = text.split("\n")
        for k, ln in enumerate(lines):
            if CAT_RE.match(ln):
                body: list[str] = []
                for nxt in lines[k + 1 :]:
                    if SHELL_LINE_RE.match(nxt) or PROMPT_LINE_RE.match(nxt) or re.match(
                            r"^\s*\$\s*$", nxt):
                        break
                    body.append(nxt)
                code = "\n".join(body)
                break
    if code is None:
        return None
    code = dedent(code)
    tree = parse_py(code)
    if tree is None or not does_something(tree):
        return None
    return Repro(found=True, script=code, blocks=(label,), shape="shell-wrapped",
                 shown_output=heredoc_output(text))


# The command that runs the file a heredoc wrote: ``$ python repro.py``.
_RUNS_PY_FILE_RE = lazyre.compile(r"^\s*(?:\$\s*)?python[\d.]*\s+(?:-\S+\s+)*[\w./-]+\.py\b")


def heredoc_output(text: str) -> str:
    """What the shell log shows the heredoc's script printing: the lines after ``python - <<EOF
    ... EOF`` (or after the ``python repro.py`` that runs a ``cat > repro.py <<EOF`` file), up to
    the next prompt, or after the ``$ python repro.py`` that runs a file shown by ``$ cat
    repro.py``; "" when there are none."""
    lines = text.split("\n")
    for k, ln in enumerate(lines):
        m = HEREDOC_HEAD_RE.search(ln) if "<<" in ln else None
        if m is None:
            continue
        end = next((j for j in range(k + 1, len(lines)) if lines[j].strip() == m.group(1)), None)
        if end is None:
            return ""
        start = end + 1
        if "cat" in ln.split("<<", 1)[0]:
            run = next((j for j in range(start, len(lines)) if _RUNS_PY_FILE_RE.match(lines[j])),
                       None)
            if run is None:
                return ""
            start = run + 1
        return _printed_from(lines, start)
    # ``$ cat repro.py`` showing the file, then ``$ python repro.py`` and what it printed
    cat = next((k for k, ln in enumerate(lines) if CAT_RE.match(ln)), None)
    if cat is None:
        return ""
    run = next((j for j in range(cat + 1, len(lines)) if _RUNS_PY_FILE_RE.match(lines[j])
                and SHELL_LINE_RE.match(lines[j])), None)
    return _printed_from(lines, run + 1) if run is not None else ""


def _printed_from(lines: list[str], start: int) -> str:
    out: list[str] = []
    for nxt in lines[start:]:
        if SHELL_LINE_RE.match(nxt) or PROMPT_LINE_RE.match(nxt):
            break
        out.append(nxt)
    return "\n".join(out).strip("\n")


def heredoc_body(text: str) -> str | None:
    """The body of the first heredoc in ``text`` that has its end line. Each line is read once
    and each end line is looked up in an index, so a text full of unclosed heredocs stays
    linear (a regex scanning ahead from every opening line was quadratic)."""
    lines = text.split("\n")
    ends: dict[str, list[int]] = {}
    for k, ln in enumerate(lines):
        ends.setdefault(ln.strip(), []).append(k)
    for k, ln in enumerate(lines):
        if "<<" not in ln:
            continue
        m = HEREDOC_HEAD_RE.search(ln)
        if m is None:
            continue
        found = ends.get(m.group(1), [])
        j = bisect.bisect_right(found, k)
        if j < len(found):
            return "\n".join(lines[k + 1 : found[j]])
    return None


def shell_in_prose(src: Source, blocks: list[Block]) -> Repro | None:
    prose = src.text.split("\n")
    for b in blocks:
        for k in range(b.start, min(b.end, len(prose))):
            prose[k] = ""
    text = "\n".join(prose)
    return shell_session(text, f"{src.name}:unfenced") or shell_dash_c(
        text, f"{src.name}:unfenced"
    )


# How many ``python -c`` commands of one text are read, and how far the quoted code may run:
# each read is linear in what follows it, so both are bounded (a real issue has a few short ones).
MAX_DASH_C_TRIES = 50
MAX_DASH_C_CHARS = 20_000
# Likewise for ``$ python`` sessions: how many are read, and how many lines each may have.
MAX_SESSIONS = 20
MAX_SESSION_LINES = 500


def shell_dash_c(text: str, label: str, *, env: bool = False) -> Repro | None:
    """``python -c "..."``; ``env``: the text stands in an environment section."""
    for tries, m in enumerate(PY_DASH_C_RE.finditer(text)):
        if tries >= MAX_DASH_C_TRIES:
            break  # a text of hundreds of ``python -c``: bounded work, not a repro search
        rest = text[m.end() : m.end() + MAX_DASH_C_CHARS]
        if m.group(0).startswith("`") and "`" in rest:
            rest = rest[: rest.index("`")]  # inline code: the command ends at its backtick
        code = first_shell_word(rest)
        if not code:
            continue
        tree = parse_py(code)
        if tree is None or not does_something(tree):
            continue
        line = text.count("\n", 0, m.start())
        if is_version_probe(tree) and probe_in_env(text.split("\n"), line, line + 1, env=env):
            continue  # ``python -c "import tvm; print(tvm.__version__)"`` printed a version
        return Repro(
            found=True, script=code.strip("\n") + "\n", blocks=(label,), shape="shell-wrapped"
        )
    return None


def first_shell_word(rest: str) -> str:
    for candidate in (rest, rest.split("\n", 1)[0]):
        try:
            lexer = shlex.shlex(candidate, posix=True)
            lexer.whitespace_split = True
            lexer.commenters = ""
            return next(iter(lexer), "")
        except ValueError:
            continue
    return ""


def shell_session(text: str, label: str) -> Repro | None:
    """``$ python`` followed by the statements typed into it (with ``$``/``>>>`` prompts)."""
    lines = text.split("\n")
    tries = 0
    for k, ln in enumerate(lines):
        if not PY_REPL_RE.match(ln):
            continue
        tries += 1
        if tries > MAX_SESSIONS:
            break  # hundreds of ``$ python`` lines: bounded work
        code_lines: list[str] = []
        for nxt in lines[k + 1 : k + 1 + MAX_SESSION_LINES]:
            m = SHELL_SESSION_LINE_RE.match(nxt)
            if m:
                code_lines.append(m.group(1))
                continue
            if not nxt.strip() and not code_lines:
                continue
            break
        code = "\n".join(code_lines).strip("\n")
        tree = parse_py(code)
        if tree is not None and is_version_probe(tree) and probe_in_env(
            lines, k, k + 1 + len(code_lines)
        ):
            continue
        if tree is not None and does_something(tree):
            return Repro(found=True, script=code + "\n", blocks=(label,), shape="shell-wrapped")
    return None
