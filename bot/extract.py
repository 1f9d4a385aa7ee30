"""Find the runnable repro script in an issue.

Pure: ``extract_repro(issue)`` looks at markdown text only (no I/O, nothing is executed; Python
is only *parsed* with ``ast``). The order of search:

1. the issue body, then each of the author's comments, one source at a time; in each source:
   a. code blocks (fenced or indented): scripts are told from tracebacks, logs, shell lines,
      program output and IR dumps (a block of bare printed values such as ``[array([1.],
      dtype=float32)]`` is output wherever it stands, whatever its fence tag); ``>>>`` sessions are turned into scripts (up to the statement
      whose output is an error); a repro split over several blocks is joined when a later block
      uses what an earlier one defines (and the text does not present it as a working variant);
      a TVMScript module printed by the reporter goes before the driver that uses it;
   b. code pasted without fences (scraped reports, forum posts, ``<pre>`` HTML, ``>>>``
      sessions), preferring code under "Steps to reproduce" over "Expected behavior";
   c. Python wrapped in shell: ``python -c "..."`` lines and ``$ python`` sessions;
   A later comment of the author's that offers a smaller / minimal / updated repro replaces the
   one found earlier.
2. code blocks in other people's comments that say they reproduce the problem;
3. a ``python -c`` one-liner in the title.

An environment probe (``python -c "import tvm; print(tvm.__version__)"``, a block of version
prints) is never the repro unless an error is shown right under it (the import is the bug).

No script: ``Repro(found=False, reason=...)`` with a polite, specific sentence for the comment
(attachment, ``python file.py`` whose file is not shown, only C++ code, only printed results, ...).
A script that reads a local file the issue does not hold (``onnx.load("model.onnx")``) is still
the repro; ``Repro.reason`` then carries a note naming the file.
"""

from __future__ import annotations

import ast
import builtins
import html
import re
import shlex
import textwrap
from dataclasses import dataclass, field

from markdown_it import MarkdownIt

from bot.models import Issue, Repro

# Fence info strings that hold Python (or may: untagged / plain text blocks).
PY_TAGS = frozenset(
    {"python", "py", "python3", "py3", "python2", "ipython", "ipython3", "pycon", "python-repl",
     "pyi", "sage", "jupyter"}
)
PLAIN_TAGS = frozenset({"", "text", "txt", "plain", "plaintext", "none", "code", "raw", "log",
                        "output", "console", "shell-session"})
SHELL_TAGS = frozenset({"sh", "bash", "shell", "console", "shell-session", "zsh", "cmd", "bat",
                        "powershell", "ps", "ps1", "terminal", "fish"})

# C, C++ and CUDA: code the bot cannot run (it runs Python).
NATIVE_TAGS = frozenset({"c", "cpp", "c++", "cc", "cxx", "h", "hpp", "cuda", "cu", "objc",
                         "objective-c"})
_NATIVE_LINE_RE = re.compile(
    r"^\s*(?:#include\s*[<\"]|using namespace\s|namespace\s+\w+\s*\{|template\s*<|"
    r"(?:int|void|static|auto)\s+\w+\s*\([^)]*\)\s*\{?\s*$|std::|TVM_REGISTER_GLOBAL\b|"
    r"__global__\s)"
)

MAX_UNFENCED_LINES = 5000
MAX_UNFENCED_RUNS = 20
MAX_UNFENCED_PARSES = 5000
UNFENCED_LOOKAHEAD = 60

_ASK = (
    "Could you paste a minimal, self-contained Python script that shows the problem (in a "
    "```python code block)? The bot will then run it against the current TVM and report back."
)

_BUILTINS = frozenset(dir(builtins)) | {"__name__", "__file__", "__doc__", "__builtins__"}

_TRACEBACK_RE = re.compile(r"^\s*Traceback \(most recent call last\)")
_ERROR_LINE_RE = re.compile(
    r"^\s*(?:[A-Za-z_][\w.]*\.)?[A-Z][\w]*(?:Error|Exception|Exit|Interrupt|Fault|Warning)\b"
    r"(?:\s*:.*)?$"
)
_OUTPUT_LINE_RE = re.compile(
    r"^\s*(?:Traceback \(most recent call last\)"
    r"|\[\d\d:\d\d:\d\d\]"  # TVM log lines
    r"|Segmentation fault|Aborted|Illegal instruction|Bus error|Floating point exception"
    r"|free\(\)|double free|munmap_chunk|terminate called|corrupted "
    r"|Fatal Python error|Current thread|Thread 0x|  File \".*\", line \d+"
    r"|error: |warning: |\d+: +(?:tvm|TVM)|Check failed"
    r"|(?:Output|Result|Results|Expected|Actual|Got|Error|Log|Logs)\s*:\s*$)"
)
# A shell prompt line: "$ python repro.py", "(venv) user@host:~$ ls", "PS C:\\> python x.py".
_SHELL_LINE_RE = re.compile(r"^\s*(?:\(\S+\)\s*)?(?:\S*@\S*[$#]|\$|PS [^>]*>)\s")
_PROSE_LINE_RE = re.compile(r"^[A-Z][a-z']+(?:,? [A-Za-z'(),]+){3,}[.:!?]?\s*$")
_STRONG_START_RE = re.compile(
    r"^\s*(?:import\s+[A-Za-z_][\w.]*|from\s+[\w.]+\s+import\s+\S)"
)
# Code pasted without its imports: "x = relay.var(...)", "@T.prim_func", "with tvm.target...".
_WEAK_START_RE = re.compile(
    r"^\s*(?:[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_]\w*)*\s*=\s*[A-Za-z_][\w.]*\(|"
    r"@(?:tvm\.|T\.|R\.|I\.|relax\.|tir\.)|with tvm\.)"
)
_TVM_NAMES_RE = re.compile(r"\b(?:tvm|relay|relax|tir|te|topi|T|R|I)\.\w")
_PROMPT_RE = re.compile(r"^\s*(?:>>>|\.\.\.)(?: |$)")
_IPY_IN_RE = re.compile(r"^\s*In \[\d*\]: ?")
_IPY_CONT_RE = re.compile(r"^\s*\.\.\.+: ?")
_IPY_OUT_RE = re.compile(r"^\s*Out\[\d*\]:")
_SHELL_PROMPT = r"(?:[^\s$#>]*[$#%>]\s*|PS [^>]*>\s*|\(\S+\)\s*[$#]?\s*)?"
_PY_EXE = r"(?:python(?:\d(?:\.\d+)?)?|py)(?:\.exe)?"
_PY_DASH_C_RE = re.compile(rf"(?:^|[\s`'\"$>;&|(]){_PY_EXE}((?:\s+-[A-Za-z]+)*)\s+-c\s+(?=\S)")
_PY_REPL_RE = re.compile(rf"^\s*{_SHELL_PROMPT}{_PY_EXE}(?:\s+-[iuqBE]+)*\s*$")
_PY_FILE_RE = re.compile(
    rf"(?:^|[\s`'\"$>;&|(=]){_PY_EXE}((?:\s+-[A-Za-z]+)*)\s+((?:[\w.~-]*[/\\])*[\w.-]+\.py)\b([^\n`]*)"
)
_PYTEST_RE = re.compile(r"(?:^|[\s`$>])(?:python\d?\s+-m\s+)?pytest\b([^\n`]*)")
_TEST_FILE_RE = re.compile(r"(?:^|[/\\])(?:test_[\w-]*|[\w-]*_test)\.py$")
_ATTACH_RE = re.compile(
    r"(?<!!)\[([^\]\n]+)\]\((https?://[^)\s]*(?:user-attachments|/files/|/assets/)[^)\s]*|"
    r"https?://[^)\s]+\.(?:zip|tar|gz|tgz|7z|rar|py|ipynb|onnx|pt|pth|pb|tflite|txt|log|json|so))\)"
)
_TEMPLATE_RE = re.compile(
    r"What you were expecting|What actually happened|Preferably a minimal script|"
    r"Any environment details, such as|A clear and concise description|"
    r"Steps to reproduce the behavior|\bPlease describe\b|<!--.*?-->",
    re.IGNORECASE,
)
_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_SECTION_WORDS_RE = re.compile(
    r"steps to reproduce|to reproduce|reproduc|expected behaviou?r|actual behaviou?r|environment|"
    r"triage|description|additional context|error|output|log|traceback",
    re.IGNORECASE,
)
_VARIANT_RE = re.compile(
    r"\b(?:works?|working|worked|succeeds?|succeeded|successfully|passes|passed|runs fine|is fine|"
    r"no (?:error|problem|issue|crash)s?|work-?around|instead|alternatively|expected (?:output|result)|"
    r"correct (?:output|result|version)|fixed version|without (?:the )?(?:error|bug|crash))\b",
    re.IGNORECASE,
)
_INCOMPLETE_RE = re.compile(
    r"\bnot (?:copying|pasting|including|posting|sharing|showing) (?:it|them|that|all|here|"
    r"the (?:whole|full|entire|rest|code|model|script|program))\b|"
    r"\b(?:can'?t|cannot|could not|couldn'?t|unable to) (?:share|post|include|paste|disclose|"
    r"release) (?:the|my|it|all|this|our)\b|"
    r"\b(?:rest|part|parts|remainder) of (?:the|my|our) (?:code|script|model|program) "
    r"(?:is |are |was |were )?(?:omitted|left out|not shown|not included)|"
    r"\b(?:left|cut) out\b|\bpseudo-?code\b|"
    r"\bincomplete (?:code|script|snippet|example)\b|"
    r"\b(?:code|script|snippet|example) is (?:incomplete|not complete|not runnable)\b|"
    r"\brather involved\b|\btoo (?:long|large|big|complex) to (?:post|paste|share|include)\b",
    re.IGNORECASE,
)
_REPRO_WORDS_RE = re.compile(r"\b(?:repro|reproduc\w*|minimal|mre|mwe)\b", re.IGNORECASE)
_ENV_SECTION_RE = re.compile(r"^\s*(?:environment|env|system info|versions?)\b", re.IGNORECASE)
_SMART = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'",
                        "\u00a0": " ", "\u2212": "-"})


# --------------------------------------------------------------------------------------------
# Data


@dataclass(frozen=True)
class _Source:
    name: str  # "body" | "comment3" | "title"
    text: str
    by_author: bool


@dataclass(frozen=True)
class _Block:
    label: str  # "body#0"
    lang: str  # first word of the fence info string, lower case; "" for indented blocks
    text: str
    prose: str  # the text between the previous block (or the source's start) and this block
    section: str  # the nearest heading above the block ("" if none)
    start: int  # first line (0-based) of the block in the source, fences included
    end: int  # one past the last line
    fenced: bool = True  # False: an indented code block


@dataclass
class _Code:
    """A block turned into Python."""

    block: _Block
    code: str
    tree: ast.Module
    kind: str  # "script" | "defs" | "ir" | "stmts" (assignments only) | "broken"
    interactive: bool = False


@dataclass
class _Findings:
    """What was seen while searching, to explain a ``found=False``."""

    error_output: bool = False
    attachments: list[str] = field(default_factory=list)
    test_commands: list[str] = field(default_factory=list)
    file_commands: list[str] = field(default_factory=list)
    template: bool = False
    incomplete: str = ""
    placeholder: bool = False
    other_code: bool = False
    printed_output: bool = False  # a block of printed values was seen (and is not a script)
    native: str = ""  # the tag of a C/C++/CUDA block ("cpp"), the only code in the issue


# --------------------------------------------------------------------------------------------
# Entry point


def extract_repro(issue: Issue) -> Repro:
    """The repro script of ``issue`` (or ``found=False`` with a reason for the comment)."""
    sources = [_Source("body", _normalise(issue.body), True)]
    others: list[_Source] = []
    for n, c in enumerate(issue.comments, start=1):
        src = _Source(f"comment{n}", _normalise(c.body), True)
        if issue.author and c.author == issue.author:
            sources.append(src)
        else:
            others.append(_Source(src.name, src.text, False))
    findings = _Findings()
    all_author_text = "\n".join(s.text for s in sources)

    held_back = ""  # the body says its code is incomplete and shows none
    fallback: Repro | None = None  # a script offered as the working variant
    for src in sources:
        blocks = _blocks(src)
        if src.name != "body":
            # Code quoted in a reply is someone else's (a suggestion being answered).
            blocks = [b for b in blocks if not _is_quoted(src.text, b)]
        repro = _from_blocks(src, blocks, findings)
        if repro is None and not (findings.incomplete or findings.placeholder):
            repro = (
                _shell_in_blocks(blocks)
                or _from_unfenced(src, blocks, findings)
                or _shell_in_prose(src, blocks)
            )
        if repro is not None and held_back and not _SMALLER_RE.search(src.text):
            # The body said the real code is left out; a comment's snippet not offered as a
            # complete repro is that partial code, moved.
            findings.incomplete = held_back
            break
        if repro is not None and _offered_as_working(blocks, repro):
            # "Doing it the other way works: ```...```" and no failing script in this source:
            # the one that fails may be in a later comment; this one is the fallback.
            fallback = fallback or repro
            continue
        if repro is not None:
            later = _later_smaller_repro(sources[sources.index(src) + 1 :])
            return _with_file_note(_with_args(later or repro, all_author_text))
        _note(src, blocks, findings)
        if src.name == "body" and not findings.incomplete:
            m = _INCOMPLETE_RE.search(src.text)
            if m:
                held_back = _sentence_around(src.text, m.start(), m.end())

    if fallback is not None:
        return _with_file_note(_with_args(fallback, all_author_text))

    for src in others:
        if not _REPRO_WORDS_RE.search(src.text):
            continue
        blocks = [b for b in _blocks(src) if not _is_quoted(src.text, b)]
        repro = _from_blocks(src, blocks, _Findings())
        if repro is not None:
            return _with_file_note(repro)

    title = _Source("title", _normalise(issue.title), True)
    repro = _shell_dash_c(title.text, "title")
    if repro is not None:
        return repro
    if findings.error_output and not (findings.incomplete or findings.placeholder):
        # 'when I run "import tvm" it fails with: <traceback>': the one statement is the repro.
        for src in sources:
            repro = _import_named_in_prose(src)
            if repro is not None:
                return repro
    return Repro(found=False, shape=_no_repro_shape(findings), reason=_reason(findings))


# An import statement quoted in prose: "import tvm", `from tvm import relay`.
_PROSE_IMPORT_RE = re.compile(
    r"[\"`“]((?:import\s+[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*"
    r"|from\s+[A-Za-z_][\w.]*\s+import\s+[\w, ]+?))[\"`”]"
)


def _import_named_in_prose(src: _Source) -> Repro | None:
    """An import statement the reporter quotes as what they ran, in a text that shows the error
    it gave (the issue is an import-time failure)."""
    for m in _PROSE_IMPORT_RE.finditer(src.text):
        stmt = m.group(1).strip()
        tree = _parse(stmt)
        if tree is None or not _imports_only(tree):
            continue
        if not any(top == "tvm" or top.startswith("tvm") for top in _imported_names(tree)) and \
                not stmt.startswith("from tvm"):
            continue
        return Repro(found=True, script=stmt + "\n", blocks=(f"{src.name}:prose",),
                     shape="unfenced")
    return None


def _offered_as_working(blocks: list[_Block], repro: Repro) -> bool:
    """The repro's first block is introduced as the variant that works ("importing it after the
    others works:")."""
    first = next((b for b in blocks if repro.blocks and b.label == repro.blocks[0]), None)
    return first is not None and bool(_VARIANT_RE.search(_last_paragraph(first.prose)))


_SMALLER_RE = re.compile(
    r"\b(?:smaller|simpler|minimal|more minimal|minimi[sz]ed|reduced|shorter|simplified|updated|"
    r"cleaner|self-contained|standalone|stand-alone|complete|full|new)\s+"
    r"(?:(?:and|,)\s+\w+\s+)?(?:repro\w*|example|script|test ?case|version|code|snippet|program|"
    r"case|mre|mwe)\b|"
    r"\b(?:repro\w*|example|script|code|test ?case)\s+(?:is\s+|was\s+)?(?:reduced|simplified|"
    r"minimi[sz]ed|updated|shortened)\b|\bsimplified\s+(?:it|further|the)\b|\bfurther reduced\b",
    re.IGNORECASE,
)


_FIX_RE = re.compile(
    r"\b(?:fix|fixed|fixes|patch|patched|after (?:applying|changing|adding|removing)|"
    r"with (?:the|this|my) (?:change|changes|modification)|resolved?|solved?)\b",
    re.IGNORECASE,
)


def _later_smaller_repro(later: list[_Source]) -> Repro | None:
    """The author's latest comment that offers a smaller / minimal / updated repro ("here is a
    smaller repro:", "updated script") replaces the one found earlier."""
    for src in reversed(later):
        blocks = [b for b in _blocks(src) if not _is_quoted(src.text, b)]
        repro = _from_blocks(src, blocks, _Findings())
        if repro is None:
            continue
        first = next(b for b in blocks if b.label == repro.blocks[0])
        intro = "\n".join(src.text.split("\n")[: first.start])
        m = _SMALLER_RE.search(intro)
        if _VARIANT_RE.search(_last_paragraph(first.prose)) or _FIX_RE.search(
            _last_paragraph(first.prose)
        ):
            continue  # "the updated code works", "with the fix applied": a fix, not a repro
        if m and not re.search(r"\babove\b|\bprevious\b|\bearlier\b|\boriginal\b",
                               intro[m.start() : m.end() + 40], re.I):
            return repro
    return None


# --------------------------------------------------------------------------------------------
# Markdown


_HTML_LINE_RE = re.compile(r"^\s*</?(?:details|summary|p|div|br|hr|pre)\b[^>]*>.*$", re.I)


_ESCAPED_PROMPT_RE = re.compile(r"^(\s*)\\>\\?>\\?>(?= |$)")


def _unwrap_multiline_spans(lines: list[str]) -> list[str]:
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


def _normalise(text: str) -> str:
    """Line ends, and blank lines around ``<details>``/``<summary>`` lines so that a fence right
    after them is a fence (CommonMark would otherwise keep it inside the HTML block)."""
    lines = (text or "").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    # ``\>>>``: a prompt escaped so that markdown would not quote it.
    lines = _unwrap_multiline_spans([_ESCAPED_PROMPT_RE.sub(r"\1>>>", ln) for ln in lines])
    out: list[str] = []
    for ln in lines:
        if _HTML_LINE_RE.match(ln) and not ln.lstrip().startswith("<pre"):
            out.extend(["", ln, ""])
        else:
            out.append(ln)
    return "\n".join(out)


_MD = MarkdownIt("commonmark")
_PY_VERSIONED_RE = re.compile(r"^(python|py|ipython)[-_ ]?\d+(?:\.\d+)*$")


def _blocks(src: _Source) -> list[_Block]:
    text = _repair_unclosed_fences(src.text)
    tokens = _MD.parse(text)
    lines = text.split("\n")
    blocks: list[_Block] = []
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
        lang = _PY_VERSIONED_RE.sub(r"\1", lang)  # python3.10, py3.9, python-3 -> python / py
        prose = "\n".join(lines[prev_end:start])
        blocks.append(
            _Block(
                label=f"{src.name}#{len(blocks)}",
                lang=lang,
                text=tok.content,
                prose=prose,
                section=section,
                start=start,
                end=end,
                fenced=tok.type == "fence",
            )
        )
        prev_end = end
    return blocks


def _repair_unclosed_fences(text: str) -> str:
    """Close a fence the author left open before the next section heading.

    An unclosed ```` ``` ```` shifts every later fence by one: the heading after it lands inside a
    code block and the script after it outside. When a block that is not Python ends with a
    markdown heading (only blank lines after it), the author forgot to close it there.
    """
    for _ in range(8):
        lines = text.split("\n")
        changed = False
        for tok in _MD.parse(text):
            if tok.type != "fence" or not tok.map:
                continue
            start, end = tok.map
            body = tok.content.split("\n")
            if _parse(tok.content) is not None:
                continue
            nonblank = [k for k, ln in enumerate(body) if ln.strip()]
            if len(nonblank) < 2:
                continue
            last = nonblank[-1]
            if not _HEADING_RE.match(body[last]):
                continue
            fence_line = lines[start]
            marker = fence_line.strip()[:3] if fence_line.strip()[:1] in "`~" else "```"
            indent = fence_line[: len(fence_line) - len(fence_line.lstrip())]
            insert_at = start + 1 + last
            if insert_at >= end:
                continue
            lines.insert(insert_at, indent + marker)
            text = "\n".join(lines)
            changed = True
            break
        if not changed:
            break
    return text


def _is_quoted(text: str, block: _Block) -> bool:
    lines = text.split("\n")[block.start : block.end]
    return bool(lines) and all(ln.lstrip().startswith(">") for ln in lines if ln.strip())


def _last_paragraph(prose: str) -> str:
    parts = [p for p in re.split(r"\n\s*\n", prose) if p.strip()]
    return parts[-1] if parts else ""


# --------------------------------------------------------------------------------------------
# Python recognition


def _parse(code: str) -> ast.Module | None:
    if not code.strip():
        return None
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _dedent(code: str) -> str:
    code = textwrap.dedent(code.expandtabs(8) if "\t" in code and " " in code else code)
    return code.strip("\n") + "\n"


def _does_something(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.Import | ast.ImportFrom | ast.Call) for node in ast.walk(tree))


def _has_import(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.Import | ast.ImportFrom) for n in ast.walk(tree))


def _imports_only(tree: ast.Module) -> bool:
    return bool(tree.body) and all(isinstance(s, ast.Import | ast.ImportFrom) for s in tree.body)


def _imported_names(tree: ast.Module) -> set[str]:
    return {(a.asname or a.name).split(".")[0] for s in tree.body
            if isinstance(s, ast.Import | ast.ImportFrom) for a in s.names}


# What an environment probe reads: ``tvm.__version__``, ``tvm.support.libinfo()``, ...
_VERSION_NAMES = frozenset({"__version__", "version", "__git_version__", "git_version", "libinfo",
                            "describe", "version_info", "python_version", "platform", "system",
                            "machine", "is_available", "device_count", "get_device_name",
                            "cuda_version", "git_hash", "__cuda_version__"})
_PROBE_CALLS = frozenset({"print", "str", "repr", "format", "get", "items", "keys", "join",
                          "pprint", "dict", "sorted"})


def _is_version_probe(tree: ast.Module) -> bool:
    """An environment probe (``import tvm; print(tvm.__version__)``): imports, then only prints
    of versions and build info. It shows which TVM the reporter has, not the problem."""
    saw = False
    for stmt in tree.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            continue
        if not isinstance(stmt, ast.Expr | ast.Assign):
            return False
        for node in ast.walk(stmt):
            if isinstance(node, ast.Attribute) and node.attr in _VERSION_NAMES:
                saw = True
            elif isinstance(node, ast.Call):
                tail = _call_tail(node)
                if tail in _VERSION_NAMES:
                    saw = True
                elif tail not in _PROBE_CALLS:
                    return False
    return saw


def _error_after(lines: list[str], end: int, span: int = 15) -> bool:
    """An error is shown in the ``span`` lines from ``end`` (what a probe printed)."""
    return any(_is_error_output(ln) for ln in lines[end : end + span])


_VERSION_WORDS_RE = re.compile(
    r"\b(?:versions?|environment|env|commit|installed|pip list|build info|system info)\b",
    re.IGNORECASE,
)
_VERSION_OUT_RE = re.compile(
    r"^\s*['\"]?v?\d+\.\d+[\w.+-]*['\"]?\s*$"
    # or build information such as ``libinfo()`` prints: ``USE_CUDA: ON``, ``GIT_COMMIT_HASH: ab12``
    r"|^\s*[A-Z][A-Z0-9_]{2,}:\s*\S"
)


def _probe_in_env(lines: list[str], start: int, end: int, section: str = "", *,
                  env: bool = False) -> bool:
    """A version probe at lines ``start:end`` shown as the environment: under an environment
    section, introduced with words about versions, or followed by the version it printed -- and
    no error under it (then the probe failing is the problem)."""
    if _error_after(lines, start):
        return False
    if env or _ENV_SECTION_RE.match(section or _section_above(lines, start)):
        return True
    if _VERSION_WORDS_RE.search(" ".join(lines[max(0, start - 3) : start + 1])):
        return True
    return any(_VERSION_OUT_RE.match(ln) for ln in lines[end : end + 4] + lines[start:end])


def _looks_like_error_message(tree: ast.Module, code: str) -> bool:
    """``ValueError: bad`` parses as an annotation; a block ending so is an error message."""
    last_line = next((ln for ln in reversed(code.split("\n")) if ln.strip()), "")
    if not _ERROR_LINE_RE.match(last_line):
        return False
    last = tree.body[-1] if tree.body else None
    return isinstance(last, ast.AnnAssign | ast.Expr) and not (
        isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
    )


def _is_ir_dump(tree: ast.Module, code: str) -> bool:
    first = next((ln.strip() for ln in code.split("\n") if ln.strip()), "")
    return bool(first.startswith("# from tvm.script import") or first.startswith("#[version"))


_OUTPUT_PROSE_RE = re.compile(
    r"\b(?:output|outputs|prints?|printed|print-?out|results?|gives?|got|returns?|shows?|"
    r"displays?|log|stdout|stderr)\b\W*$",
    re.IGNORECASE,
)
_REPR_CALLS = frozenset({"array", "tensor", "Tensor", "ndarray", "NDArray", "Shape", "ShapeTuple",
                         "device", "dtype", "float32", "float16", "int32", "int64", "Object",
                         "IntImm", "FloatImm", "Var", "Buffer", "PrimExpr", "tuple", "list"})


def _is_printed_value(tree: ast.Module, prose: str) -> bool:
    """A block of printed values (``array([1., 2.], dtype=float32)``) that happens to parse: no
    imports, only expressions, and either introduced as output or made of repr-like calls."""
    if _has_import(tree) or not all(isinstance(s, ast.Expr) for s in tree.body):
        return False
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    if any(_call_tail(c) == "print" for c in calls):
        return False
    if _OUTPUT_PROSE_RE.search(_last_paragraph(prose).strip()):
        return True
    top = [s.value for s in tree.body if isinstance(s, ast.Expr)]
    return all(not isinstance(v, ast.Call) or _call_tail(v) in _REPR_CALLS for v in top)


_MORE_REPR_CALLS = frozenset({"cpu", "cuda", "gpu", "rocm", "vulkan", "metal", "opencl",
                              "float64", "bfloat16", "int8", "int16", "uint8", "uint16", "uint32",
                              "uint64", "bool", "bool_", "complex64", "DataType", "Parameter",
                              "StringImm", "Range", "IterVar", "Call", "Op", "GlobalVar", "Array",
                              "Map", "String", "Module", "TensorType", "TensorStructInfo",
                              "ShapeStructInfo", "PrimValue", "Constant", "Tuple", "masked_array",
                              "matrix", "Series", "DataFrame", "OrderedDict", "defaultdict",
                              "namedtuple", "Size", "finfo", "iinfo"})
_NUMPY_SCALARS = frozenset({"float16", "float32", "float64", "int8", "int16", "int32", "int64",
                            "uint8", "uint16", "uint32", "uint64", "bool_", "str_", "complex64",
                            "complex128", "longdouble", "datetime64", "timedelta64"})
# Printed TVMScript expressions and structure info: ``T.max(a, b)``, ``R.Tensor((2,), "f32")``.
_PRINTED_PREFIXES = frozenset({"T", "R", "I"})
_OUTPUT_LABEL_RE = re.compile(r"^\W*[\w .()/+-]{1,40}:\W*$")
_NOT_OUTPUT_LABEL_RE = re.compile(
    r"\b(?:code|script|repro\w*|example|snippet|steps?|test\w*|program|source|minimal|"
    r"python|run|running|usage|input|model|following|this|here)\b",
    re.IGNORECASE,
)
_OUTPUT_SECTION_RE = re.compile(
    r"^\W*(?:(?:expected|actual|observed|current|wrong|incorrect|correct)\s+"
    r"(?:behaviou?r|results?|outputs?|values?)|outputs?|results?|logs?|stdout|what happens)\b",
    re.IGNORECASE,
)


def _is_printed_output(code: _Code) -> bool:
    """A block of printed values, wherever it stands (``[array([1., nan], dtype=float32)]``,
    ``tensor([1, 2])``, ``T.max(a, b)``): it parses, but it is a program's output, not a program.

    Only bare expressions (no import, assignment, def, loop, ``print``), and either every one
    is a value (literals, containers, calls to repr-like names with value arguments), or the text
    introduces the block as output ("Output:", "TVM:", a section "Actual behavior") and no
    expression calls a method or a module function (``tvm.build(mod)`` is code)."""
    tree = code.tree
    if code.interactive or code.kind != "script" or _has_import(tree) or not tree.body:
        return False
    if not all(isinstance(s, ast.Expr) for s in tree.body):
        return False
    values = [s.value for s in tree.body if isinstance(s, ast.Expr)]
    if all(_value_like(v) for v in values):
        return True
    if not _introduced_as_output(code.block):
        return False
    calls = [n for v in values for n in ast.walk(v) if isinstance(n, ast.Call)]
    # ``Result(value=3)``: the repr of an object; ``run_model()`` is a call.
    return all(
        _value_like(c) or (isinstance(c.func, ast.Name) and c.func.id[:1].isupper()
                           and all(_value_like(a) for a in c.args)
                           and all(_value_like(k.value) for k in c.keywords))
        for c in calls
    )


def _introduced_as_output(block: _Block) -> bool:
    para = _last_paragraph(block.prose).strip()
    last = para.split("\n")[-1].strip() if para else ""
    if _OUTPUT_PROSE_RE.search(para):
        return True
    if last and _OUTPUT_LABEL_RE.match(last) and not _NOT_OUTPUT_LABEL_RE.search(last):
        return True  # "ONNXRuntime:", "TVM:", "Output:", "On GPU:"
    return not para and bool(_OUTPUT_SECTION_RE.match(block.section))


def _value_like(node: ast.expr, depth: int = 0) -> bool:
    """A printed value: literals, containers, names (``nan``, ``float32``), dotted names, signs
    and arithmetic of values, and calls to repr-like names whose arguments are values."""
    if depth > 60:
        return False
    d = depth + 1
    if isinstance(node, ast.Constant | ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return _value_like(node.value, d)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return all(_value_like(e, d) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is None or _value_like(k, d) for k in node.keys) and all(
            _value_like(v, d) for v in node.values
        )
    if isinstance(node, ast.UnaryOp):
        return _value_like(node.operand, d)
    if isinstance(node, ast.BinOp):
        return _value_like(node.left, d) and _value_like(node.right, d)
    if isinstance(node, ast.BoolOp):
        return all(_value_like(v, d) for v in node.values)
    if isinstance(node, ast.Compare):
        return _value_like(node.left, d) and all(_value_like(c, d) for c in node.comparators)
    if isinstance(node, ast.Starred):
        return _value_like(node.value, d)
    if isinstance(node, ast.Call):
        f = node.func
        root = f
        while isinstance(root, ast.Attribute):
            root = root.value
        tail = _call_tail(node)
        if isinstance(f, ast.Name):
            repr_like = tail in _REPR_CALLS | _MORE_REPR_CALLS
        else:
            # ``tvm.runtime.ShapeTuple([1])`` is code; ``T.max(a, b)`` (TVMScript) and
            # ``np.float32(1.0)`` (numpy 2 scalars) are how values print.
            root_id = root.id if isinstance(root, ast.Name) else ""
            repr_like = root_id in _PRINTED_PREFIXES or (
                root_id in ("np", "numpy") and tail in _NUMPY_SCALARS
            )
        return (
            repr_like
            and isinstance(root, ast.Name)
            and all(_value_like(a, d) for a in node.args)
            and all(_value_like(k.value, d) for k in node.keywords)
        )
    return False


def _call_tail(call: ast.Call) -> str:
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr
    return f.id if isinstance(f, ast.Name) else ""


def _is_defs_only(tree: ast.Module) -> bool:
    body = [s for s in tree.body if not _is_docstring(s)]
    return bool(body) and not _has_import(tree) and all(
        isinstance(s, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) for s in body
    )


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(
        stmt.value.value, str
    )


def _strip_prompts(lines: list[str]) -> str | None:
    """A ``>>>`` / ``In [1]:`` session as a script: prompts stripped, printed output dropped."""
    out: list[str] = []
    in_code = False
    seen = False
    failed = False  # an error was printed: later statements are side checks, not the repro
    for ln in lines:
        m = re.match(r"^(\s*)>>> ?(.*)$", ln) or re.match(r"^(\s*)>>>$", ln)
        if (m or _IPY_IN_RE.match(ln)) and failed:
            break
        if m:
            out.append(m.group(2) if m.lastindex and m.lastindex >= 2 else "")
            in_code = seen = True
            continue
        m = _IPY_IN_RE.match(ln)
        if m:
            out.append(ln[m.end():])
            in_code = seen = True
            continue
        if in_code:
            m = re.match(r"^\s*\.\.\.(?: (.*))?$", ln)
            if m:
                out.append(m.group(1) or "")
                continue
            m = _IPY_CONT_RE.match(ln)
            if m:
                out.append(ln[m.end():])
                continue
        in_code = False  # printed output, a traceback, Out[n]: ...
        failed = failed or _is_error_output(ln)
    if not seen:
        return None
    return "\n".join(out)


def _is_error_output(line: str) -> bool:
    return bool(
        _TRACEBACK_RE.match(line) or _ERROR_LINE_RE.match(line)
        or re.search(r"Traceback \(most recent call last\)|Check failed|Segmentation fault", line)
    )


def _has_prompts(lines: list[str]) -> bool:
    return any(re.match(r"^\s*>>>( |$)", ln) or _IPY_IN_RE.match(ln) for ln in lines)


_ELISION_RE = re.compile(r"^\s*(?:\.{4,}|…+)\s*$")


def _cut_at_output(code: str) -> str | None:
    """The code before the output pasted after it in the same block (a traceback, a log)."""
    lines = code.split("\n")
    for k, ln in enumerate(lines):
        if k and (
            _OUTPUT_LINE_RE.match(ln)
            or _ERROR_LINE_RE.match(ln)
            or _PROSE_LINE_RE.match(ln)
            or _SHELL_LINE_RE.match(ln)
            # ``....`` standing for output left out, right before the error that ended it
            or (_ELISION_RE.match(ln) and any(_ERROR_LINE_RE.match(x) for x in lines[k + 1:k + 4]))
        ):
            head = "\n".join(lines[:k])
            tree = _parse(head)
            if tree is not None and _does_something(tree):
                return head
            return None
    return None


def _python_of(text: str) -> tuple[str, ast.Module, bool] | None:
    """``text`` as Python: (code, tree, interactive), trying the usual repairs; else None."""
    text = text.replace("\u00a0", " ")
    lines = text.split("\n")
    interactive = False
    if _has_prompts(lines):
        stripped = _strip_prompts(lines)
        if stripped is not None:
            text, interactive = stripped, True
    code = _dedent(text)
    tree = _parse(code)
    if tree is not None:
        return code, tree, interactive
    candidates = []
    smart = code.translate(_SMART)
    candidates.append(smart)
    ls = smart.split("\n")
    if len(ls) > 1:
        candidates.append(ls[0] + "\n" + textwrap.dedent("\n".join(ls[1:])))
    no_magic = "\n".join(ln for ln in ls if not re.match(r"^\s*[!%]", ln))
    candidates.append(no_magic)
    unnumbered = _strip_line_numbers(ls)
    if unnumbered is not None:
        candidates.append(unnumbered)
    for cand in candidates:
        tree = _parse(cand)
        if tree is not None:
            return _dedent(cand), tree, interactive
    cut = _cut_at_output(smart)
    if cut is not None:
        cut = _dedent(cut)
        tree = _parse(cut)
        if tree is not None:
            return cut, tree, interactive
    return None


_LINE_NO_RE = re.compile(r"^\s*(\d{1,5})(?:[:.|]\s?|\s|$)")


def _strip_line_numbers(lines: list[str]) -> str | None:
    """Code copied with its line numbers (``1 import tvm``, ``2 x = 1``): numbers off, when every
    non-blank line starts with the next number."""
    out: list[str] = []
    expect: int | None = None
    for ln in lines:
        m = _LINE_NO_RE.match(ln)
        if m is None:
            if ln.strip():
                return None
            out.append("")
            continue
        n = int(m.group(1))
        if expect is not None and n != expect:
            return None
        expect = n + 1
        out.append(ln[m.end():])
    if expect is None or sum(1 for ln in out if ln.strip()) < 2:
        return None
    return textwrap.dedent("\n".join(out))


def _classify_block(block: _Block) -> _Code | None:
    lang = block.lang
    if lang not in PY_TAGS and lang not in PLAIN_TAGS:
        return None
    got = _python_of(block.text)
    if got is None:
        first = next((ln for ln in block.text.split("\n") if ln.strip()), "")
        if (
            lang in PY_TAGS
            and _STRONG_START_RE.match(first)
            and not any(_TRACEBACK_RE.match(ln) for ln in block.text.split("\n"))
        ):
            # Code with a genuine syntax error: running it says so (python-error).
            dummy = ast.Module(body=[], type_ignores=[])
            return _Code(block, _dedent(block.text), dummy, "broken")
        return None
    code, tree, interactive = got
    if not tree.body or _looks_like_error_message(tree, code):
        return None
    if not block.fenced and not _has_import(tree):
        return None  # an indented piece of code pasted without fences: see _from_unfenced
    if _is_ir_dump(tree, code):
        return _Code(block, code, tree, "ir", interactive)
    if _is_defs_only(tree):
        return _Code(block, code, tree, "defs", interactive)
    if not _does_something(tree):
        if block.fenced and all(isinstance(s, ast.Assign | ast.AnnAssign) for s in tree.body):
            # ``m = Module``: no call, but the end of a script split over blocks (joined only
            # when it uses what the script defines).
            return _Code(block, code, tree, "stmts", interactive)
        return None
    return _Code(block, code, tree, "script", interactive)


# --------------------------------------------------------------------------------------------
# Names (to decide whether one block continues another)


def _bound_names(tree: ast.Module, *, imports: bool) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif imports and isinstance(node, ast.Import | ast.ImportFrom):
            for a in node.names:
                names.add((a.asname or a.name).split(".")[0])
    return names


def _top_bindings(tree: ast.Module) -> set[str]:
    """Names a block defines at module level, imports excluded."""
    names: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(stmt.name)
            continue
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            continue
        for node in ast.walk(stmt):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return names


def _free_names(tree: ast.Module) -> set[str]:
    loads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return loads - _bound_names(tree, imports=True) - _BUILTINS


def _depends(later: _Code, earlier_defs: set[str]) -> bool:
    return bool(_free_names(later.tree) & earlier_defs)


# --------------------------------------------------------------------------------------------
# 1a. Code blocks


def _from_blocks(src: _Source, blocks: list[_Block], findings: _Findings) -> Repro | None:
    codes: list[_Code] = []
    for b in blocks:
        c = _classify_block(b)
        if c is None:
            continue
        if _is_printed_output(c):
            findings.printed_output = True
            continue
        if any(x.kind == "script" for x in codes) and _is_printed_value(c.tree, b.prose):
            continue  # what the script above printed
        if c.kind == "script" and _is_version_probe(c.tree) and _probe_in_env(
            src.text.split("\n"), b.start, b.end, b.section
        ):
            continue  # ``print(tvm.__version__)``: the environment, not the problem
        codes.append(c)
    scripts = [c for c in codes if c.kind == "script"]
    primary = _pick_primary(scripts)
    if primary is None:
        broken = [c for c in codes if c.kind == "broken"]
        if broken:
            primary = broken[0]
            return _finish(src, [primary], n_scripts=1, findings=findings)
        return None
    chain = [primary]
    defs = _top_bindings(primary.tree)
    # Definitions (a function, a TVMScript module printed by the reporter) in other blocks that
    # the driver uses go before it: those above it, then those the text shows after it.
    used: set[int] = set()
    for c in reversed([c for c in codes if c.block.start < primary.block.start]):
        if c.kind in ("defs", "ir") and _depends(primary, _top_bindings(c.tree)):
            chain.insert(0, _as_definitions(c))
            defs |= _top_bindings(c.tree)
            used.add(id(c))
    at = chain.index(primary)
    for c in codes:
        if c.block.start <= primary.block.start or c.kind not in ("defs", "ir"):
            continue
        if _VARIANT_RE.search(_last_paragraph(c.block.prose)):
            continue
        if _depends(primary, _top_bindings(c.tree) - defs):
            chain.insert(at, _as_definitions(c))
            at += 1
            defs |= _top_bindings(c.tree)
            used.add(id(c))
    # A block of imports alone is the head of the script: the block right after it that uses
    # those modules is its body.
    header = _imported_names(primary.tree) if _imports_only(primary.tree) else set()
    for c in codes:
        if c.block.start <= primary.block.start or c.kind not in ("script", "defs", "stmts"):
            continue
        if id(c) in used:
            continue
        if _VARIANT_RE.search(_last_paragraph(c.block.prose)):
            header = set()
            continue
        if _depends(c, defs) or (header and _free_names(c.tree) & header):
            chain.append(c)
            defs |= _top_bindings(c.tree)
        header = set()
    n_scripts = len(scripts) + sum(1 for c in chain if c.kind == "defs")
    return _finish(src, chain, n_scripts=n_scripts, findings=findings)


_IR_HEADER_RE = re.compile(r"^(\s*)#\s*((?:from tvm\.script import \w+ as \w+|import tvm)\s*)$",
                           re.M)


def _as_definitions(c: _Code) -> _Code:
    """A TVMScript dump as printed (``# from tvm.script import tir as T`` header) made runnable:
    its header imports uncommented."""
    if c.kind != "ir":
        return c
    code = _IR_HEADER_RE.sub(r"\1\2", c.code)
    tree = _parse(code)
    if tree is None:
        return c
    return _Code(c.block, code, tree, "defs", c.interactive)


def _pick_primary(scripts: list[_Code]) -> _Code | None:
    if not scripts:
        return None
    # A block the text presents as the working variant of an earlier one is not the repro.
    first = scripts[0]
    scripts = [first] + [
        c for c in scripts[1:] if not _VARIANT_RE.search(_last_paragraph(c.block.prose))
    ]
    # A block with imports is a script; one without may be printed output that parses.
    # Code under "Expected/Actual behavior" (a quoted line, the output) comes after code
    # elsewhere, e.g. under "Steps to reproduce".
    elsewhere = any(not _RESULT_SECTION_RE.match(c.block.section) for c in scripts)
    scripts = sorted(scripts, key=lambda c: (
        elsewhere and bool(_RESULT_SECTION_RE.match(c.block.section)),
        not _has_import(c.tree),
        c.block.start,
    ))
    for c in scripts:
        if _ENV_SECTION_RE.match(c.block.section) and len(c.tree.body) <= 3:
            continue  # a version print under "Environment"
        return c
    return scripts[0]


def _finish(src: _Source, chain: list[_Code], *, n_scripts: int, findings: _Findings) -> Repro | None:
    first = chain[0]
    para = _last_paragraph(first.block.prose)
    incomplete = _INCOMPLETE_RE.search(para)
    if incomplete:
        findings.incomplete = _sentence_around(para, incomplete.start(), incomplete.end())
        return None
    code = "\n".join(c.code.rstrip("\n") for c in chain) + "\n"
    if any(_has_placeholder(c.tree) for c in chain):
        findings.placeholder = True
        return None
    if len(chain) > 1 or n_scripts > 1:
        shape = "multi-block"
    elif first.interactive:
        shape = "interactive"
    else:
        shape = "fenced"
    return Repro(
        found=True,
        script=code,
        blocks=tuple(c.block.label for c in chain),
        shape=shape,
    )


def _has_placeholder(tree: ast.Module) -> bool:
    """``model = ...`` or a bare ``...`` at module level: the author left something out."""
    for stmt in tree.body:
        value = None
        if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.Expr):
            value = stmt.value
        if isinstance(value, ast.Constant) and value.value is Ellipsis:
            return True
    return False


def _sentence_around(text: str, start: int, end: int) -> str:
    left = max(text.rfind(".", 0, start), text.rfind("\n", 0, start)) + 1
    right_candidates = [p for p in (text.find(".", end), text.find("\n", end)) if p != -1]
    right = min(right_candidates) if right_candidates else len(text)
    sentence = " ".join(text[left:right].split()).strip(" ,:;")
    return sentence[:160]


# --------------------------------------------------------------------------------------------
# 1b. Code pasted without fences


def _from_unfenced(src: _Source, blocks: list[_Block], findings: _Findings) -> Repro | None:
    lines = [_unhtml(ln) for ln in src.text.split("\n")]
    # Fenced blocks are not prose: blank them out with a line that never parses.
    for b in (b for b in blocks if b.fenced):
        for k in range(b.start, min(b.end, len(lines))):
            lines[k] = "\x00"
    runs = _code_runs(lines)
    session = _unfenced_session(lines)
    if session is not None and (not runs or session[0] < runs[0][0]):
        return Repro(found=True, script=session[1], blocks=(f"{src.name}:unfenced",),
                     shape="interactive")
    if not runs:
        return None
    sections = [_section_above(lines, r[0]) for r in runs]
    # Code under "Steps to reproduce" beats code under "Expected/Actual behavior" (the latter is
    # usually the one line the reporter expects to work, quoted from the repro).
    pick = next((k for k, sec in enumerate(sections) if _REPRO_SECTION_RE.match(sec)), None)
    if pick is None:
        pick = next((k for k, sec in enumerate(sections) if not _RESULT_SECTION_RE.match(sec)), 0)
    first_start, first_end, first_code, first_tree = runs[pick]
    chain = [(first_start, first_end, first_code)]
    defs = _top_bindings(first_tree)
    later = sorted(runs[pick + 1 :] + _one_line_statements(lines, runs, first_end))
    for start, end, code, tree in later:
        # Only the paragraph right before a run says what it is ("this works", "or:"); an earlier
        # "should work" describes the code before.
        before = _last_paragraph("\n".join(ln for ln in lines[chain[-1][1] : start]
                                            if ln != "\x00"))
        if _VARIANT_RE.search(before) or re.search(r"^\s*or\b", before, re.I | re.M):
            continue
        if _OUTPUT_INTRO_RE.search(before) or (
            _RESULT_SECTION_RE.match(_section_above(lines, start))
            and not _RESULT_SECTION_RE.match(sections[pick])
        ):
            continue  # "This prints the following module:", code under "Actual behavior"
        if _free_names(tree) & defs:
            chain.append((start, end, code))
            defs |= _top_bindings(tree)
    before = _last_paragraph("\n".join(lines[max(0, first_start - 8) : first_start]))
    incomplete = _INCOMPLETE_RE.search(before)
    if incomplete:
        findings.incomplete = _sentence_around(before, incomplete.start(), incomplete.end())
        return None
    script = "\n".join(c.rstrip("\n") for _, _, c in chain) + "\n"
    whole = _parse(script)
    if whole is None or _has_placeholder(whole):
        return None
    return Repro(found=True, script=script, blocks=(f"{src.name}:unfenced",), shape="unfenced")


# "This will produce the following IRModule:", "which outputs:": what follows is output.
_OUTPUT_INTRO_RE = re.compile(
    r"\b(?:produces?|prints?|outputs?|gives?|returns?|results? in|shows?|displays?|got|dumps?)\b"
    r"[^.\n]{0,60}:\s*$",
    re.IGNORECASE,
)


def _one_line_statements(
    lines: list[str], runs: list[tuple[int, int, str, ast.Module]], after: int
) -> list[tuple[int, int, str, ast.Module]]:
    """Paragraphs of one line after line ``after`` that are one call (``tvm.build(mod)``,
    ``out = f(x)``), outside the runs: the last step of a script pasted in pieces (joined only
    when it uses what the script defines)."""
    taken = {k for start, end, _, _ in runs for k in range(start, end)}
    found: list[tuple[int, int, str, ast.Module]] = []
    n = len(lines)
    for k in range(after, min(n, after + MAX_UNFENCED_LINES)):
        ln = lines[k]
        if (k in taken or "(" not in ln or "\x00" in ln
                or (k > 0 and lines[k - 1].strip()) or (k + 1 < n and lines[k + 1].strip())):
            continue
        code = ln.strip().translate(_SMART) + "\n"
        tree = _parse(code)
        if tree is None or len(tree.body) != 1:
            continue
        stmt = tree.body[0]
        if isinstance(stmt, ast.Expr | ast.Assign) and isinstance(stmt.value, ast.Call):
            found.append((k, k + 1, code, tree))
            if len(found) >= MAX_UNFENCED_RUNS:
                break
    return found


_HTML_ENTITY_RE = re.compile(r"&(?:quot|lt|gt|amp|apos|nbsp|#\d+|#x[0-9a-fA-F]+);")
_PRE_OPEN_RE = re.compile(r"^(\s*)(?:<(?:pre|code)\b[^>]*>)+", re.I)
_PRE_CLOSE_RE = re.compile(r"(?:</(?:code|pre)>)+\s*$", re.I)


def _unhtml(line: str) -> str:
    """Code pasted in ``<pre><code>`` HTML: tags off, ``&quot;`` and friends decoded."""
    line = _PRE_CLOSE_RE.sub("", _PRE_OPEN_RE.sub(r"\1", line))
    if "&" in line and _HTML_ENTITY_RE.search(line):
        line = html.unescape(line)
    return line


_REPRO_SECTION_RE = re.compile(
    r"^\W*(?:steps to reproduce|to reproduce|how to reproduce|reproduc\w*|repro\b|"
    r"(?:code|script|steps) to reproduce|minimal (?:code|example|script|repro\w*)|"
    r"(?:sample|example|test) (?:code|script)|code\b)",
    re.IGNORECASE,
)
_RESULT_SECTION_RE = re.compile(
    r"^\W*(?:expected|actual|observed|current)\s+(?:behaviou?r|results?|outputs?)",
    re.IGNORECASE,
)


def _section_above(lines: list[str], start: int) -> str:
    """The text of the nearest markdown heading above line ``start`` ("" if none); in text that
    lost its markdown (a forum scrape), a line alone that names a section ("Steps to reproduce",
    "Actual behavior") is one."""
    for k in range(start - 1, -1, -1):
        ln = lines[k]
        if _HEADING_RE.match(ln) and not _is_code_comment(ln):
            return ln.strip().lstrip("#").strip()
        if _PLAIN_TITLE_RE.match(ln) and (k == 0 or not lines[k - 1].strip()):
            return ln.strip().rstrip(":").strip()
    return ""


# A section title without markdown: "Steps to reproduce", "Expected behavior:", "Environment".
_PLAIN_TITLE_RE = re.compile(
    r"^\s*(?:steps to reproduce|to reproduce|how to reproduce|reproduction|minimal reproduction|"
    r"(?:expected|actual|observed|current) (?:behaviou?r|results?|outputs?)|environment)\s*:?\s*$",
    re.IGNORECASE,
)


def _is_section_heading(line: str) -> bool:
    """A markdown heading that names a section of a report (``### Environment``, ``## Steps to
    reproduce``), not a comment in pasted code (``## build the model``)."""
    if not _HEADING_RE.match(line) or _is_code_comment(line):
        return False
    words = line.strip().lstrip("#").strip()
    return bool(_REPRO_SECTION_RE.match(words) or _RESULT_SECTION_RE.match(words)
                or _SECTION_WORDS_RE.match(words) or _ENV_SECTION_RE.match(words))


def _is_code_comment(line: str) -> bool:
    """``# Define the inputs`` in pasted code reads as a markdown heading; ``### Steps to
    reproduce`` and ``# Expected behavior`` are headings."""
    text = line.strip()
    if text.startswith("##") or not text.startswith("#"):
        return False
    words = text.lstrip("#").strip()
    return not (_REPRO_SECTION_RE.match(words) or _RESULT_SECTION_RE.match(words)
                or _SECTION_WORDS_RE.match(words) or _ENV_SECTION_RE.match(words))


def _unfenced_session(lines: list[str]) -> tuple[int, str] | None:
    """A ``>>>`` session pasted without fences: (first line, script).

    The statements are kept up to and including the first one whose output is an error (the
    failure being reported); statements typed after it are the reporter's side checks. With no
    error shown, the first session (up to a blank line after output or prose) is the script.
    """
    first = next((k for k, ln in enumerate(lines) if re.match(r"^\s*>>>( |$)", ln)), None)
    if first is None:
        return None
    prev = next((ln for ln in reversed(lines[:first]) if ln.strip()), "")
    if _PY_REPL_RE.match(prev):
        return None  # "$ python" then ">>>": a shell session (see _shell_session)
    stmts: list[str] = []  # source lines, prompts stripped
    pending: list[str] = []  # the statement being typed
    failed = False
    in_output = False
    earlier: list[str] | None = None  # a finished session that showed no error
    for ln in lines[first:]:
        m = re.match(r"^\s*>>>(?: (.*))?$", ln)
        c = re.match(r"^\s*\.\.\.(?: (.*))?$", ln) if pending and not in_output else None
        if m:
            if failed:
                break
            stmts.extend(pending)
            pending = [m.group(1) or ""]
            in_output = False
            if _SESSION_END_RE.match(pending[0]):
                # ``exit()``: the reporter starts another interpreter; a later session that
                # shows the failure is the repro, else the first one.
                if earlier is None:
                    earlier = stmts
                stmts, pending = [], []
            continue
        if c:
            pending.append(c.group(1) or "")
            continue
        if not ln.strip():
            if in_output or not pending:
                break
            continue
        # Printed output (or prose after the session).
        failed = failed or _is_error_output(ln)
        in_output = True
    stmts.extend(pending)
    if not failed and earlier:
        stmts = earlier
    code = _dedent("\n".join(stmts).translate(_SMART))
    tree = _parse(code)
    if tree is None or not _does_something(tree):
        return None
    # ``>>>`` marks code; without an import, two statements of TVM code are enough.
    if not _has_import(tree) and not (len(tree.body) >= 2 and _TVM_NAMES_RE.search(code)):
        return None
    return first, code


_SESSION_END_RE = re.compile(r"^\s*(?:exit|quit)\(\)\s*$")
_TB_FRAME_RE = re.compile(r'^\s*File "[^"]*", line \d+')


def _in_traceback(lines: list[str], i: int) -> bool:
    """Line ``i`` is the source line under a traceback frame (``File "x.py", line 8, ...``)."""
    j = i - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    return j >= 0 and bool(_TB_FRAME_RE.match(lines[j]))


def _code_runs(lines: list[str]) -> list[tuple[int, int, str, ast.Module]]:
    """Maximal runs of lines that parse as Python, starting with an import (or TVM code)."""
    runs: list[tuple[int, int, str, ast.Module]] = []
    budget = [MAX_UNFENCED_PARSES]  # parse attempts left: bounded time on any text
    i = 0
    n = len(lines)
    floor = 0  # lines above this belong to an earlier run
    while i < n:
        if _in_traceback(lines, i):
            # The source line Python prints under a traceback frame is not code to run.
            i += 1
            continue
        strong = bool(_STRONG_START_RE.match(lines[i]))
        if not strong and not _WEAK_START_RE.match(lines[i]):
            i += 1
            continue
        if len(runs) >= MAX_UNFENCED_RUNS or budget[0] <= 0:
            break
        end = _extend_run(lines, i, budget)
        if end is None:
            i += 1
            continue
        chunk = _dedent("\n".join(lines[i:end]).translate(_SMART))
        tree = _parse(chunk)
        trimmed = _trim_trailing(chunk, tree) if tree is not None else None
        if trimmed is None:
            i = floor = end
            continue
        code, run_tree = trimmed
        start = i
        if not strong:
            # Constants set just above (``num = 10``) start the same script.
            top = _constants_above(lines, i, floor)
            if top < i:
                consts = textwrap.dedent("\n".join(lines[top:i]).translate(_SMART))
                with_consts = _dedent(consts + "\n" + code)
                consts_tree = _parse(with_consts)
                if consts_tree is not None:
                    start, code, run_tree = top, with_consts, consts_tree
        # Comment lines right above the first import belong to the script.
        code_start = start
        while start > 0 and lines[start - 1].lstrip().startswith("#") and (
            not _HEADING_RE.match(lines[start - 1]) or _is_code_comment(lines[start - 1])
        ):
            start -= 1
        if start < code_start:
            head = "\n".join(lines[start:code_start])
            with_head = _dedent(head + "\n" + code)
            if _parse(with_head) is not None:
                code = with_head
        if not strong and (_is_ir_dump(run_tree, code) or _ir_header_above(lines, start)):
            i = floor = end
            continue  # a module printed by the script (``# from tvm.script import ...``)
        if _does_something(run_tree) and _substantial(code, strong=strong) and not (
            _is_version_probe(run_tree) and _probe_in_env(lines, start, end)
        ):
            runs.append((start, end, code, run_tree))
        i = floor = end
    return runs


_SIMPLE_ASSIGN_RE = re.compile(r"^\s*[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*\s*=(?!=)\s*\S")


def _constants_above(lines: list[str], i: int, floor: int) -> int:
    """The first line of the simple assignments (``dtype = "float32"``, ``n = 10``) right above
    line ``i`` (blank lines between allowed); ``i`` when there are none."""
    top = i
    k = i - 1
    while k >= floor and k >= i - 12:
        ln = lines[k]
        if not ln.strip():
            k -= 1
            continue
        if not _SIMPLE_ASSIGN_RE.match(ln) or _parse(ln.strip().translate(_SMART)) is None:
            break
        top = k
        k -= 1
    return top


def _ir_header_above(lines: list[str], i: int) -> bool:
    """The comment lines above line ``i`` (blank lines aside) are the header TVM prints before a
    module (``# from tvm.script import ir as I``)."""
    for ln in reversed(lines[max(0, i - 6) : i]):
        if not ln.strip():
            continue
        if re.match(r"^\s*#\s*from tvm\.script import ", ln):
            return True
        if not ln.lstrip().startswith("#"):
            return False
    return False


def _extend_run(lines: list[str], i: int, budget: list[int]) -> int | None:
    """One past the last line of the run of top-level statements that starts at line ``i``.

    Statement by statement (linear time): each statement is parsed on its own, or together with
    the one before (``else:``, ``except:``); the run stops at the first line that cannot start a
    statement (prose, a log line), or when a statement does not close within the lookahead.
    """
    n = len(lines)
    base = _indent(lines[i])
    s = i  # first line of the statement being read
    prev_s: int | None = None  # first line of the last statement read
    best: int | None = None
    j = i + 1
    while j <= n and j - i <= MAX_UNFENCED_LINES:
        if "\x00" in lines[j - 1]:
            break
        if j - 1 == s:
            first = lines[s]
            if not first.strip():
                s += 1
                j += 1
                continue
            if _indent(first) < base or not _could_start_statement(first):
                break
            if _is_section_heading(first):
                break  # "### Environment": the code above has ended
            if (first.rstrip().endswith(":") and not first.lstrip().startswith("#")
                    and not _next_is_deeper(lines, s, base)):
                break  # a header with no indented body: prose ending in a colon
        if j - s > UNFENCED_LOOKAHEAD:
            break
        nxt = lines[j] if j < n else ""
        # Try only where a statement can end: the next line is not indented deeper.
        if lines[j - 1].strip() and not (nxt.strip() and _indent(nxt) > base):
            budget[0] -= 1
            if budget[0] <= 0:
                break
            if _parse(_segment(lines, s, j)) is not None:
                prev_s, s, best = s, j, j
            elif prev_s is not None and _parse(_segment(lines, prev_s, j)) is not None:
                s, best = j, j
        j += 1
    return best


def _next_is_deeper(lines: list[str], k: int, base: int) -> bool:
    for ln in lines[k + 1 :]:
        if ln.strip():
            return _indent(ln) > base
    return False


def _segment(lines: list[str], start: int, end: int) -> str:
    return textwrap.dedent("\n".join(lines[start:end]).translate(_SMART))


def _could_start_statement(line: str) -> bool:
    text = line.strip().translate(_SMART)
    if _parse(text) is not None or text.startswith("@"):
        return True
    if text.endswith((":", "\\", ",", "(", "[", "{")) or '"""' in text or "\'\'\'" in text:
        return True
    depth = sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")
    return depth > 0


def _indent(line: str) -> int:
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())


def _substantial(code: str, *, strong: bool) -> bool:
    """One line of prose can parse ("import successfully"): a one-line run must mention TVM, and
    a run that does not start with an import needs three lines of TVM code."""
    n = len([ln for ln in code.split("\n") if ln.strip() and not ln.lstrip().startswith("#")])
    if not strong:
        return n >= 3 and bool(_TVM_NAMES_RE.search(code))
    return n > 1 or "tvm" in code


def _trim_trailing(code: str, tree: ast.Module) -> tuple[str, ast.Module] | None:
    """Drop trailing statements that are printed output or prose, not code (``# IR``, a bare
    name such as a heading that lost its ``#``, a number, a list literal)."""
    lines = code.split("\n")
    body = list(tree.body)
    bound = _bound_names(tree, imports=True)
    while body:
        last = body[-1]
        if isinstance(last, ast.Expr) and not isinstance(last.value, ast.Call | ast.Await):
            if isinstance(last.value, ast.Name) and last.value.id in bound and len(body) > 1:
                break  # ``mod`` on its own line: a notebook cell showing a result
            body.pop()
            continue
        break
    if not body:
        return None
    end_line = body[-1].end_lineno or len(lines)
    kept = "\n".join(lines[:end_line]).rstrip() + "\n"
    new_tree = _parse(kept)
    if new_tree is None:
        return None
    return kept, new_tree


# --------------------------------------------------------------------------------------------
# 1c. Python wrapped in shell


def _shell_in_blocks(blocks: list[_Block]) -> Repro | None:
    for b in blocks:
        if b.lang and b.lang not in SHELL_TAGS and b.lang not in PLAIN_TAGS and b.lang not in PY_TAGS:
            continue
        repro = (
            _shell_file(b.text, b.label)
            or _shell_session(b.text, b.label)
            or _shell_dash_c(b.text, b.label, env=bool(
                _ENV_SECTION_RE.match(b.section)
                or _VERSION_WORDS_RE.search(_last_paragraph(b.prose)[-300:])
            ))
        )
        if repro is not None:
            return repro
    return None


_HEREDOC_RE = re.compile(
    r"^[^\n]*\bcat\s*>\s*['\"]?[\w./-]+\.py['\"]?\s*<<-?\s*['\"]?(\w+)['\"]?[^\n]*\n(.*?)\n\1\s*$",
    re.M | re.S,
)
_CAT_RE = re.compile(r"^\s*(?:\(\S+\)\s*)?(?:\S*@\S*[$#]|\$|%|#)\s*cat\s+[\w./-]+\.py\s*$")


def _shell_file(text: str, label: str) -> Repro | None:
    """A script written in a shell log: ``cat > repro.py <<EOF ... EOF`` or ``$ cat repro.py``."""
    m = _HEREDOC_RE.search(text)
    code = m.group(2) if m else None
    if code is None:
        lines = text.split("\n")
        for k, ln in enumerate(lines):
            if _CAT_RE.match(ln):
                body: list[str] = []
                for nxt in lines[k + 1 :]:
                    if _SHELL_LINE_RE.match(nxt) or re.match(r"^\s*\$\s*$", nxt):
                        break
                    body.append(nxt)
                code = "\n".join(body)
                break
    if code is None:
        return None
    code = _dedent(code)
    tree = _parse(code)
    if tree is None or not _does_something(tree):
        return None
    return Repro(found=True, script=code, blocks=(label,), shape="shell-wrapped")


def _shell_in_prose(src: _Source, blocks: list[_Block]) -> Repro | None:
    prose = src.text.split("\n")
    for b in blocks:
        for k in range(b.start, min(b.end, len(prose))):
            prose[k] = ""
    text = "\n".join(prose)
    return _shell_session(text, f"{src.name}:unfenced") or _shell_dash_c(
        text, f"{src.name}:unfenced"
    )


def _shell_dash_c(text: str, label: str, *, env: bool = False) -> Repro | None:
    """``python -c "..."``; ``env``: the text stands in an environment section."""
    for m in _PY_DASH_C_RE.finditer(text):
        rest = text[m.end():]
        code = _first_shell_word(rest)
        if not code:
            continue
        tree = _parse(code)
        if tree is None or not _does_something(tree):
            continue
        line = text.count("\n", 0, m.start())
        if _is_version_probe(tree) and _probe_in_env(text.split("\n"), line, line + 1, env=env):
            continue  # ``python -c "import tvm; print(tvm.__version__)"`` printed a version
        return Repro(
            found=True, script=code.strip("\n") + "\n", blocks=(label,), shape="shell-wrapped"
        )
    return None


def _first_shell_word(rest: str) -> str:
    for candidate in (rest, rest.split("\n", 1)[0]):
        try:
            lexer = shlex.shlex(candidate, posix=True)
            lexer.whitespace_split = True
            lexer.commenters = ""
            return next(iter(lexer), "")
        except ValueError:
            continue
    return ""


def _shell_session(text: str, label: str) -> Repro | None:
    """``$ python`` followed by the statements typed into it (with ``$``/``>>>`` prompts)."""
    lines = text.split("\n")
    for k, ln in enumerate(lines):
        if not _PY_REPL_RE.match(ln):
            continue
        code_lines: list[str] = []
        for nxt in lines[k + 1 :]:
            m = re.match(r"^\s*(?:\$|>>>|\.\.\.|In \[\d*\]:)\s?(.*)$", nxt)
            if m:
                code_lines.append(m.group(1))
                continue
            if not nxt.strip() and not code_lines:
                continue
            break
        code = "\n".join(code_lines).strip("\n")
        tree = _parse(code)
        if tree is not None and _is_version_probe(tree) and _probe_in_env(
            lines, k, k + 1 + len(code_lines)
        ):
            continue
        if tree is not None and _does_something(tree):
            return Repro(found=True, script=code + "\n", blocks=(label,), shape="shell-wrapped")
    return None


# --------------------------------------------------------------------------------------------
# Local files the script reads

# Calls that read a file named by their first argument.
_READ_CALLS = frozenset({"load", "load_model", "open", "fromfile", "loadtxt", "genfromtxt",
                         "read_csv", "imread", "load_module", "load_param_dict", "from_file",
                         "parse_from_file", "ParseFromString", "load_json", "read", "Interpreter",
                         "load_checkpoint", "load_state_dict_from_file", "load_library",
                         "load_weights", "safe_open", "load_file", "read_text", "read_bytes",
                         "TFLiteModel", "GetRootAsModel"})
# Calls that write one (a file the script makes itself is not missing).
_WRITE_CALLS = frozenset({"save", "save_model", "export", "dump", "savez", "savez_compressed",
                          "tofile", "savetxt", "export_library", "write", "write_text",
                          "write_bytes", "save_json", "to_csv", "imwrite", "save_param_dict",
                          "save_weights", "save_pretrained"})
_FILE_NAME = (r"[\w./\\~-]*[\w-]\.(?:onnx|pt|pth|pb|pbtxt|tflite|h5|keras|npy|npz|txt|json|"
              r"params|so|tar|bin|pkl|pickle|csv|jpg|jpeg|png|mlir|ll|bc|ckpt|safetensors|"
              r"caffemodel|prototxt|mar|engine|tmp)")
_FILE_ARG_RE = re.compile(rf"^{_FILE_NAME}$", re.I)
_FILE_LITERAL_RE = re.compile(rf"[\"']{_FILE_NAME}[\"']", re.I)


def _missing_files(script: str) -> list[str]:
    """Local files the script reads (``onnx.load("model.onnx")``, ``np.load("x.npy")``) that it
    does not write itself and that are not downloaded by it."""
    if not _FILE_LITERAL_RE.search(script):
        return []  # no quoted file name at all: no parse needed
    tree = _parse(script)
    if tree is None:
        return []
    read: list[str] = []
    written: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        tail = _call_tail(node)
        literals = [a.value for a in (*node.args, *(k.value for k in node.keywords))
                    if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if tail == "open" and any(m in lit for lit in literals[1:2] for m in "wax"):
            written.update(literals[:1])
            continue
        if tail in _WRITE_CALLS or tail.startswith(("save", "export", "write", "download")):
            written.update(literals)
            continue
        if tail in _READ_CALLS and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                path = first.value.strip()
                if _FILE_ARG_RE.match(path) and path not in read:
                    read.append(path)
    return [p for p in read if p not in written]


def _with_file_note(repro: Repro) -> Repro:
    """Note in ``Repro.reason`` the local files the script reads but the issue does not hold
    (the script is still the repro; running it will likely stop at the missing file)."""
    if not repro.found or repro.reason:
        return repro
    missing = _missing_files(repro.script)
    if not missing:
        return repro
    names = ", ".join(f"`{m}`" for m in missing[:3])
    return Repro(
        found=True,
        script=repro.script,
        blocks=repro.blocks,
        args=repro.args,
        shape=repro.shape,
        reason=(
            f"The script reads {names}, which {'is' if len(missing) == 1 else 'are'} not in the "
            "issue; the run will likely stop there. Attaching the file, or building it in the "
            "script, lets the bot get further."
        ),
    )


# --------------------------------------------------------------------------------------------
# Arguments the author says to use


def _with_args(repro: Repro, text: str) -> Repro:
    if repro.shape == "shell-wrapped" or not re.search(r"\bargv\b|argparse|\bclick\b|\bfire\b",
                                                       repro.script):
        return repro
    for m in _PY_FILE_RE.finditer(text):
        fname = m.group(2)
        if _TEST_FILE_RE.search(fname) or "setup.py" in fname:
            continue
        in_code = _in_code_context(text, m.start(), m.end())
        line = text[text.rfind("\n", 0, m.start()) + 1 : m.start() + 1]
        args = _args_from_tail(m.group(3), strict=not in_code,
                               prompt=bool(_PROMPT_LINE_RE.match(line)))
        return Repro(
            found=repro.found,
            script=repro.script,
            blocks=repro.blocks,
            args=tuple(args),
            shape=repro.shape,
            reason=repro.reason,
        )
    return repro


_PROMPT_LINE_RE = re.compile(r"^\s*(?:\(\S+\)\s*)?(?:\S*@\S*[$#]|\$|PS [^>]*>|[A-Za-z]:\\[^>]*>)")


def _in_code_context(text: str, start: int, end: int) -> bool:
    line_start = text.rfind("\n", 0, start) + 1
    line = text[line_start : text.find("\n", end) if text.find("\n", end) != -1 else len(text)]
    if line.count("`") >= 2:
        return True
    stripped = line.lstrip()
    return stripped.startswith(("$", "python", "py ", "#", ">", "(")) or bool(
        re.match(r"^\s*(?:\S+@\S+[$#]|PS [^>]*>|[A-Za-z]:\\[^>]*>)", line)
    )


def _args_from_tail(tail: str, *, strict: bool, prompt: bool = False) -> list[str]:
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


# --------------------------------------------------------------------------------------------
# Why nothing was found


def _note(src: _Source, blocks: list[_Block], findings: _Findings) -> None:
    text = src.text
    if any(_TRACEBACK_RE.match(ln) for ln in text.split("\n")) or any(
        _ERROR_LINE_RE.match(ln) or "Check failed" in ln or "Segmentation fault" in ln
        for ln in text.split("\n")
    ):
        findings.error_output = True
    for m in _ATTACH_RE.finditer(text):
        name = m.group(1).strip()
        if name not in findings.attachments:
            findings.attachments.append(name)
    for m in _PY_FILE_RE.finditer(text):
        fname = m.group(2)
        cmd = " ".join(f"python {fname}".split())
        if _TEST_FILE_RE.search(fname) or "tests/python" in fname.replace("\\", "/"):
            if cmd not in findings.test_commands:
                findings.test_commands.append(cmd)
        elif "setup.py" not in fname and cmd not in findings.file_commands:
            findings.file_commands.append(cmd)
    for m in _PYTEST_RE.finditer(text):
        findings.test_commands.append(("pytest" + m.group(1)).strip()[:80])
    if src.name == "body" and len(_TEMPLATE_RE.findall(text)) >= 2:
        findings.template = True
    if any(b.lang and b.lang not in PY_TAGS | PLAIN_TAGS | SHELL_TAGS for b in blocks):
        findings.other_code = True
    for b in blocks:
        if not findings.native and (
            b.lang in NATIVE_TAGS or (b.lang in PLAIN_TAGS and _looks_native(b.text))
        ):
            findings.native = b.lang or "C++"


def _looks_native(text: str) -> bool:
    """C/C++ pasted in an untagged block: ``#include <...>``, ``int main() {``, ``std::``."""
    lines = [ln for ln in text.split("\n") if ln.strip()]
    hits = sum(1 for ln in lines if _NATIVE_LINE_RE.match(ln))
    return hits >= 2 or (hits == 1 and any(ln.rstrip().endswith(";") for ln in lines))


def _no_repro_shape(f: _Findings) -> str:
    """How the issue presents its (unrunnable) reproduction, in the order ``_reason`` explains."""
    if f.incomplete or f.placeholder:
        return "none"
    if f.test_commands:
        return "shell-wrapped"
    if f.attachments:
        return "attachment-only"
    if f.file_commands:
        return "shell-wrapped"
    return "none"


def _reason(f: _Findings) -> str:
    if f.incomplete:
        return (
            f'The code in the issue is described as incomplete ("{f.incomplete}"), so running it '
            "cannot show the problem. " + _ASK
        )
    if f.placeholder:
        return (
            "The code in the issue has placeholders (`...`) where parts were left out, so it "
            "cannot run as it is. " + _ASK
        )
    if f.test_commands:
        return (
            f"The steps run `{f.test_commands[0]}` from the TVM source tree (with a local build) "
            "rather than a script in the issue, so the bot cannot rerun them here. " + _ASK
        )
    if f.attachments:
        names = ", ".join(f"`{a}`" for a in f.attachments[:2])
        return (
            f"The reproducer seems to be in an attachment ({names}), which the bot does not "
            "download or open. " + _ASK
        )
    if f.file_commands:
        return (
            f"The issue runs `{f.file_commands[0]}`, but that file's contents are not in the "
            "issue. " + _ASK
        )
    if f.native:
        tag = f"a ```{f.native} block" if f.native != "C++" else "C++"
        return (
            f"The code in the issue is native code ({tag}), and the bot runs Python scripts "
            "only, so it cannot build or rerun it. If the problem also shows through TVM's Python "
            "API, a script would let the bot check it. " + _ASK
        )
    if f.template:
        return (
            "The issue still holds the issue template's placeholder text and no code, so there "
            "is nothing to run yet. " + _ASK
        )
    if f.error_output:
        return (
            "The issue shows the error output, but not the code that produced it. " + _ASK
        )
    if f.printed_output:
        return (
            "The code blocks in the issue hold printed results (values such as `array(...)`), "
            "not the code that produced them. " + _ASK
        )
    return "No Python code that reproduces the problem was found in the issue. " + _ASK
