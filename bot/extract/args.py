from __future__ import annotations

import re
import shlex

from bot import lazyre
from bot.extract.patterns import (
    FAILED_OUTPUT_RE,
    PROMPT_LINE_RE,
    PY_FILE_RE,
    RUN_WITH_ARGS_RE,
    SHELL_PROMPT_START_RE,
    TEST_FILE_RE,
)
from bot.models import Repro
from bot.records import replace

# The longest command line the bot passes on (arguments joined): far above any real repro's
# flags, far below what the sandbox's exec can take.
MAX_ARGS_CHARS = 4096
# The commands with arguments looked at for the failing one (a report shows a few).
MAX_COMMANDS = 20


def with_args(repro: Repro, text: str) -> Repro:
    """The arguments the author says to run the script with (``python repro.py --crash`` in a
    shell block, after a prompt, or in inline code in prose); only for a script that reads its
    command line. A command whose arguments are longer than :data:`MAX_ARGS_CHARS` is refused
    with a reason (the bot will not pass 70 kB of arguments)."""
    if repro.shape == "shell-wrapped" or not re.search(r"\bargv\b|argparse|\bclick\b|\bfire\b",
                                                       repro.script):
        return repro
    chosen: list[str] | None = None
    commands: list[tuple[list[str], bool]] = []  # (arguments, the output after it fails)
    for m in PY_FILE_RE.finditer(text):
        fname = m.group(2)
        tail = m.group(3)
        if "setup.py" in fname or (TEST_FILE_RE.search(fname) and re.match(
                r"(?:::|\s+-(?:k|v|x|s|q|rA)\b)", tail)):
            continue  # (a pytest-style run of a test file, not the script's command line)
        if len(tail) > MAX_ARGS_CHARS:
            return _too_long(repro, fname, len(tail))
        in_code = in_code_context(text, m.start(), m.end())
        line = text[text.rfind("\n", 0, m.start()) + 1 : m.start() + 1]
        args = args_from_tail(tail, strict=not in_code, prompt=bool(PROMPT_LINE_RE.match(line)))
        if chosen is None:
            chosen = args  # the first command named (the one before: a bare mention)
        if args and in_code:
            # a command written as code (inline or a shell line) with arguments
            commands.append((args, _fails_after(text, m.end())))
            if commands[-1][1] or len(commands) == MAX_COMMANDS:
                break
    if commands:
        # several runs shown: the one whose output fails is the report's
        chosen = next((args for args, fails in commands if fails), commands[0][0])
    if not chosen:
        # no command line with arguments: "run it with `--target llvm`"
        m = RUN_WITH_ARGS_RE.search(text)
        if m:
            chosen = args_from_tail(m.group(1), strict=False) or chosen
    if chosen is None:
        return repro
    if sum(len(a) + 1 for a in chosen) > MAX_ARGS_CHARS:
        return _too_long(repro, "the script", sum(len(a) + 1 for a in chosen))
    return replace(repro, args=tuple(chosen))


def _fails_after(text: str, end: int) -> bool:
    """The lines after a command, up to the next one (at most 40 lines, 8 kB), show it
    failing: a traceback, an error line, a crash."""
    stop = end
    for _ in range(41):  # (the next 40 lines only: linear however many commands there are)
        stop = text.find("\n", stop + 1)
        if stop == -1:
            stop = len(text)
            break
    for line in text[end : min(stop, end + 8192)].split("\n")[1:]:
        if PY_FILE_RE.search(line) and in_code_context(line, 0, len(line)):
            return False  # the next command: this one's output ended
        if FAILED_OUTPUT_RE.search(line):
            return True
    return False


def _too_long(repro: Repro, fname: str, size: int) -> Repro:
    return Repro(
        found=False,
        shape="shell-wrapped",
        reason=(
            f"The issue runs `{fname}` with a command line of {size} characters, longer than the "
            f"{MAX_ARGS_CHARS} the bot passes to a script, so it cannot rerun it as shown. Could "
            "you put the arguments in the script (or shorten them)? The bot will then run it "
            "against the current TVM and report back."
        ),
    )


def in_code_context(text: str, start: int, end: int) -> bool:
    line_start = text.rfind("\n", 0, start) + 1
    line = text[line_start : text.find("\n", end) if text.find("\n", end) != -1 else len(text)]
    if line.count("`") >= 2:
        return True
    stripped = line.lstrip()
    return stripped.startswith(("$", "python", "py ", "#", ">", "(")) or bool(
        SHELL_PROMPT_START_RE.match(line)
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
        if prev_flag and " " in tok and "\n" not in tok and not tok.startswith("-"):
            args.append(tok)  # a quoted value: --target "llvm -mcpu=znver3"
            prev_flag = False
            continue
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


# An environment variable set for the run in the issue's text: "BENCH_DTYPE=float16 python
# x.py", "export TVM_NUM_THREADS=1", "$ DEVICE=cuda python x.py".
_ENV_SET_RE = lazyre.compile(
    r"(?:^|[\s`$;(])(?:export\s+|set\s+)?([A-Z][A-Z0-9_]{1,40})=(\"[^\"\n]{0,200}\"|'[^'\n]{0,200}'"
    r"|[^\s;&|`'\"]{1,200})(?=[\s;`]|$)", re.M)
# Names the bot never sets for a script: the interpreter's, the loader's, the shell's.
_ENV_DENIED_RE = lazyre.compile(r"^(?:LD_\w*|PYTHON\w*|PATH|HOME|USER|SHELL|TMPDIR|IFS|BASH\w*"
                            r"|TVM_LIBRARY_PATH|TVM_BACKTRACE|\w*PROXY\w*)$", re.I)
# At most this many variables are set (a report names one or two).
MAX_ENV = 8


def with_env(repro: Repro, text: str) -> Repro:
    """The environment variables the author sets to run the script (``NAME=value python x.py``,
    ``export NAME=value``, in a shell line or inline code), for the names the script itself
    reads (``os.environ["NAME"]``, ``os.getenv("NAME")``): set at the top of the script, with
    a comment saying where they come from, and the reason saying so."""
    if not repro.found or not re.search(r"\bos\.environ\b|\bgetenv\b|\benviron\b", repro.script):
        return repro
    # the command that runs the script ("X=1 python x.py") before an export line before a
    # mention in inline code ("on CPU (`TVM_DEVICE=llvm`, the default) it's fine")
    ranked: list[dict[str, str]] = [{}, {}, {}]
    for m in _ENV_SET_RE.finditer(text):
        name, value = m.group(1), m.group(2)
        if (_ENV_DENIED_RE.match(name)
                or not re.search(rf"[\"']{re.escape(name)}[\"']", repro.script)):
            continue
        start = text.rfind("\n", 0, m.start(1)) + 1
        end = text.find("\n", m.end())
        line = text[start: end if end >= 0 else len(text)]
        rest = line[m.end() - start:]
        if re.match(r"(?:\s+[A-Z][A-Z0-9_]*=\S*)*\s+(?:python[\d.]*|py)\s", rest):
            rank = 0
        elif re.match(r"^\W{0,3}(?:\$\s*)?(?:export|set)\s", line):
            rank = 1
        elif in_code_context(text, m.start(1), m.end()):
            rank = 2
        else:
            continue
        ranked[rank].setdefault(name, value[1:-1] if value[:1] in "\"'" else value)
    found = next((r for r in ranked if r), {})
    found = dict(list(found.items())[:MAX_ENV])
    if not found:
        return repro
    head = "import os\n" + "".join(
        f"os.environ[{name!r}] = {value!r}  # set in the issue\n" for name, value in found.items())
    said = ", ".join(f"`{n}={v}`" for n, v in found.items())
    note = f"The bot set {said} for the run, as the issue does."
    return replace(repro, script=head + repro.script,
                   reason=f"{repro.reason} {note}".strip())
