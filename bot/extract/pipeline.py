"""Find the runnable repro script in an issue.

Pure: ``extract_repro(issue)`` looks at markdown text only (no I/O, nothing is executed; Python
is only *parsed* with ``ast``).

The package is a few passes over plain values (see ``SOURCE_PASSES`` below): each text is read
once (:mod:`bot.extract.markdown`: normalised, markdown parsed once, code blocks found); code
blocks become candidates (:mod:`bot.extract.candidates`), which the ordered table of named
rules in :mod:`bot.extract.rules` filters; what is left is joined and ranked
(:mod:`bot.extract.blocks`). Other passes find code without fences (:mod:`bot.extract.unfenced`)
and Python in shell (:mod:`bot.extract.shell`); :mod:`bot.extract.args` reads the command-line
arguments the author names, :mod:`bot.extract.files` the local files the script reads, and
:mod:`bot.extract.notes` turns what the passes saw into the reason for a ``found=False``.
Passes return values and notes; nothing is changed in place.

The order of search:

1. the issue body, then each of the author's comments, one source at a time; in each source:
   a. code blocks (fenced or indented): scripts are told from tracebacks, logs, shell lines,
      program output and IR dumps (a block of bare printed values such as ``[array([1.],
      dtype=float32)]`` is output wherever it stands, whatever its fence tag); ``>>>`` sessions
      are turned into scripts (up to the statement whose output is an error); a repro split
      over several blocks is joined when a later block uses what an earlier one defines (and
      the text does not present it as a working variant); a TVMScript module printed by the reporter goes before the driver that uses it;
   b. code pasted without fences (scraped reports, forum posts, ``<pre>`` HTML, ``>>>``
      sessions), preferring code under "Steps to reproduce" over "Expected behavior";
   c. Python wrapped in shell: ``python -c "..."`` lines and ``$ python`` sessions;
   In a comment, code quoted with ``> `` is someone else's (a suggestion being answered), unless
   the author's own words say it fails for them too: then the quoted script is the repro.
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
import re
from collections.abc import Callable

from bot import api_changes, lazyre
from bot.extract.args import with_args, with_env
from bot.extract.blocks import from_blocks
from bot.extract.candidates import classify_block, own_blocks, quoted_fails_too
from bot.extract.cutoff import with_cut_tail
from bot.extract.files import with_file_note
from bot.extract.markdown import (
    Block,
    Source,
    last_paragraph,
    normalise,
    read_source,
    sentence_around,
)
from bot.extract.notes import NO_NOTES, Notes, merge, no_repro_shape, notes_of, reason_for
from bot.extract.output import (
    MAX_SHOWN,
    actual_section_output,
    dash_c_output,
    shown_after_unfenced,
    shown_before_unfenced,
    shown_in_block_tail,
    shown_output,
)
from bot.extract.patterns import (
    ADOPTS_RE,
    CONFIRM_ASK_RE,
    CONFIRMS_RE,
    CONTINUES_RE,
    CORRECTED_RE,
    FIX_RE,
    ISOLATED_RE,
    NOT_SAME_RE,
    PORTED_RE,
    PROSE_IMPORT_RE,
    QUOTE_FAILS_TOO_RE,
    REJECTS_RE,
    REPRO_WORDS_RE,
    RETRACTS_RE,
    SAME_HERE_RE,
    SMALLER_RE,
    said_incomplete,
)
from bot.extract.pysyntax import (
    dedent,
    free_names,
    has_import,
    has_prompts,
    imported_names,
    imports_only,
    imports_tvm,
    parse_py,
    session_output,
    top_bindings,
)
from bot.extract.rules import offered_as_working, only_offered_as_working
from bot.extract.shell import shell_dash_c, shell_in_blocks, shell_in_prose
from bot.extract.testfuncs import with_test_calls
from bot.extract.unfenced import from_unfenced, more_code
from bot.extract.unused import frameworks_of, without_unused_frameworks
from bot.fragments import fragment_at_start
from bot.models import Issue, Repro
from bot.records import record, replace


@record
class SourcePass:
    """One way of finding the repro in one text: returns it (or ``None``) and what it saw."""

    name: str
    find: Callable[[Source, list[Block]], tuple[Repro | None, Notes]]
    # The text shows code described as incomplete or with placeholders: later passes would only
    # find that same code again, so the search in this text ends.
    ends_if_held_back: bool = False


def _shell_in_blocks(src: Source, blocks: list[Block]) -> tuple[Repro | None, Notes]:
    return shell_in_blocks(blocks), NO_NOTES


def _shell_in_prose(src: Source, blocks: list[Block]) -> tuple[Repro | None, Notes]:
    return shell_in_prose(src, blocks), NO_NOTES


_QUOTE_MARK_RE = lazyre.compile(r"^\s{0,3}>\s?")


def _quoted_unfenced(src: Source, blocks: list[Block]) -> tuple[Repro | None, Notes]:
    """In a comment, a script quoted with ``> `` but pasted without fences, when the author's
    own words say it fails for them too ("This example also does not work")."""
    if src.name == "body" or not quoted_fails_too(src):
        return None, NO_NOTES
    quoted = [_QUOTE_MARK_RE.sub("", ln, count=1) for ln in src.lines if _QUOTE_MARK_RE.match(ln)]
    if not quoted:
        return None, NO_NOTES
    inner = read_source(src.name, "\n".join(quoted), by_author=src.by_author)
    repro, _ = from_unfenced(inner, list(inner.blocks))
    if repro is None:
        return None, NO_NOTES
    return replace(repro, blocks=(f"{src.name}:quoted",)), NO_NOTES


# The passes over one text (the body, then each of the author's comments), in order; the first
# that finds a repro wins.
SOURCE_PASSES: tuple[SourcePass, ...] = (
    SourcePass("code blocks", from_blocks, ends_if_held_back=True),
    SourcePass("python in shell code blocks", _shell_in_blocks),
    SourcePass("code pasted without fences", from_unfenced),
    SourcePass("python in shell lines of the prose", _shell_in_prose),
    SourcePass("code quoted without fences that fails for the author too", _quoted_unfenced),
    SourcePass("a whole script on one line in a code span", lambda src, blocks: (
        one_line_script(src), NO_NOTES)),
)


def extract_repro(issue: Issue) -> Repro:
    """The repro script of ``issue`` (or ``found=False`` with a reason for the comment)."""
    sources = [read_source("body", issue.body)]
    others: list[tuple[str, str]] = []
    for n, c in enumerate(issue.comments, start=1):
        if issue.author and c.author == issue.author:
            sources.append(read_source(f"comment{n}", c.body))
        else:
            others.append((f"comment{n}", c.body))
    notes = NO_NOTES
    all_author_text = "\n".join(s.text for s in sources)

    held_back = ""  # the body says its code is incomplete and shows none
    fallback: Repro | None = None  # a script offered as the working variant
    for k, src in enumerate(sources):
        blocks = own_blocks(src)
        repro = None
        for step in SOURCE_PASSES:
            repro, seen = step.find(src, blocks)
            notes = merge(notes, seen)
            if repro is not None or (step.ends_if_held_back and notes.held_back):
                break
        if repro is not None and held_back and not SMALLER_RE.search(src.text):
            # The body said the real code is left out; a comment's snippet not offered as a
            # complete repro is that partial code, moved.
            notes = replace(notes, incomplete=held_back)
            break
        if repro is not None and repro_offered_as_working(blocks, repro):
            # "Doing it the other way works: ```...```" and no failing script in this source:
            # the one that fails may be in a later comment; this one is the fallback.
            fallback = fallback or repro
            continue
        if repro is not None:
            later = later_smaller_repro(sources[k + 1 :]) or \
                continued_in_comment(repro, sources[k + 1 :]) or \
                imports_in_comment(repro, sources[k + 1 :]) or adopted_script(issue) or \
                ported_by_other(issue, repro) or reduced_without_framework(issue, repro) or \
                whole_script_for_fragment(repro, sources[k + 1 :])
            return without_unused_frameworks(with_cut_tail(with_test_calls(with_file_note(
                with_env(with_args(_shown_for(later, repro, sources), all_author_text),
                         all_author_text)))), all_author_text)
        notes = merge(notes, notes_of(src))
        if src.name == "body" and not notes.incomplete:
            m = said_incomplete(src.text)
            if m:
                held_back = sentence_around(src.text, m.start(), m.end())

    if fallback is not None:
        return with_cut_tail(with_file_note(with_args(fallback, all_author_text)))
    adopted = adopted_script(issue)  # (the author has none of their own, and takes another's)
    if adopted is not None:
        return with_cut_tail(with_file_note(adopted))

    for name, raw in others:
        intro = _intro(raw)
        # ("Trying with current relax:", "a standalone check of the op itself:")
        ported = bool(PORTED_RE.search(intro) or ISOLATED_RE.search(intro)) and \
            _offered_as_failing(intro)
        if not (REPRO_WORDS_RE.search(raw) or QUOTE_FAILS_TOO_RE.search(raw)
                or SAME_HERE_RE.search(raw) or ported) or NOT_SAME_RE.search(raw):
            continue
        other = read_source(name, raw, by_author=False)
        blocks = own_blocks(other)
        repro = from_blocks(other, blocks)[0] or shell_in_blocks(blocks)
        if repro is not None:
            return with_cut_tail(with_file_note(repro))

    repro = shell_dash_c(normalise(issue.title), "title")
    if repro is not None:
        return repro
    if notes.error_output and not notes.held_back:
        # 'when I run "import tvm" it fails with: <traceback>': the one statement is the repro.
        for src in sources:
            repro = import_named_in_prose(src) or import_in_session_traceback(src)
            if repro is not None:
                return repro
    return Repro(found=False, shape=no_repro_shape(notes), reason=reason_for(notes))


# An interactive session's traceback whose first statement went straight into a TVM package's
# ``__init__.py``: ``File "<stdin>", line 1, in <module>`` then ``File ".../tvm/relax/__init__.py"``.
_SESSION_IMPORT_RE = lazyre.compile(
    r'^\s*File "<(?:stdin|string|ipython-input[^>]*)>", line 1, in <module>\s*\n'
    r'\s*File "([^"\n]*[/\\]tvm(?:[/\\]\w+)*)[/\\]__init__\.py", line \d+, in <module>',
    re.M,
)


def import_in_session_traceback(src: Source) -> Repro | None:
    """An import-time failure shown only as an interactive session's traceback: its first
    frame (the session's line 1) went straight into a TVM package's ``__init__``, so that line
    imported the package; the repro is that import (``import tvm``, ``import tvm.relax``)."""
    m = _SESSION_IMPORT_RE.search(src.text)
    if m is None:
        return None
    parts = re.split(r"[/\\]+", m.group(1))
    top = len(parts) - 1 - parts[::-1].index("tvm")  # the package's own tvm/, not a checkout's
    module = ".".join(parts[top:])
    return Repro(found=True, script=f"import {module}\n", blocks=(f"{src.name}:traceback",),
                 shape="interactive")


def _shown_for(later: Repro | None, first: Repro, sources: list[Source]) -> Repro:
    """The script that is run with the output shown for it; a later script that replaces the
    first (a corrected copy, a smaller one, a port) and shows no output of its own carries the
    output the reporter showed under the first ("same output" in words, or nothing)."""
    if later is None:
        return _with_shown_output(first, sources)
    got = _with_shown_output(later, sources)
    if got.shown_output:
        return got
    shown = _with_shown_output(first, sources).shown_output
    return replace(got, shown_output=shown) if shown else got


def _with_shown_output(repro: Repro, sources: list[Source]) -> Repro:
    """The repro, with the output its author shows it printing (see bot.extract.output)."""
    name = repro.blocks[0].split("#", 1)[0] if repro.blocks else ""
    if repro.shape == "unfenced" and name.endswith(":unfenced"):
        src = next((s for s in sources if s.name == name.rsplit(":", 1)[0]), None)
        shown = shown_after_unfenced(src.text, repro.script) or shown_before_unfenced(
            src.text, repro.script) if src is not None else ""
        return replace(repro, shown_output=shown) if shown else repro
    src = next((s for s in sources if s.name == name), None)
    shown = shown_output(src, repro.blocks) if src is not None else ""
    by_label = {b.label: b for b in src.blocks} if src is not None else {}
    mine: list[Block] = []
    for label in repro.blocks:  # in the script's order, up to a block that only lent imports
        b = by_label.get(label)
        if b is None or (mine and b.start < mine[-1].start):
            break
        mine.append(b)
    if not shown and mine and (repro.shape == "interactive" or all(
            has_prompts(b.text.split("\n")) for b in mine)):
        # A ``>>>`` session shows what it printed under its own prompts (a session over two
        # blocks, with a remark between them, too).
        shown = "\n".join(out for b in mine for out in (session_output(b.text),) if out
                          ).strip("\n")[:MAX_SHOWN]
    if not shown and repro.shape == "shell-wrapped" and len(mine) == 1:
        # ``$ python -c '...'`` and what it printed, below it in the same block
        shown = dash_c_output(mine[0].text)
    if not shown and src is not None and len(repro.blocks) == 1:
        # "Actual:" and its lines after the script in its own block (a fence left open, or
        # closed by the repair right after the script: the label then follows the block)
        block = next((b for b in src.blocks if b.label == repro.blocks[0]), None)
        shown = shown_in_block_tail("\n".join(src.lines[block.start:]), repro.script) \
            if block is not None else ""
    if not shown and src is not None and src.name != "body" and sources:
        # the script in a comment, its output under "Actual behavior" in the body
        shown = actual_section_output(sources[0])
    return replace(repro, shown_output=shown) if shown else repro


# A code span in the prose: `import tvm, numpy as np; from tvm import te; ...`
_CODE_SPAN_RE = lazyre.compile(r"(?<!`)`([^`\n]{40,4000})`(?!`)")


def one_line_script(src: Source) -> Repro | None:
    """A whole script the reporter wrote on one line in a code span ("repro (sorry its one
    line, copied from my test harness): `import tvm, numpy as np; ...; print(c.numpy())`"):
    statements joined by ``;`` that import TVM and do more than import."""
    for m in _CODE_SPAN_RE.finditer(src.text):
        line = m.group(1).strip()
        if ";" not in line or not line.startswith(("import ", "from ")):
            continue
        tree = parse_py(line)
        if tree is None or len(tree.body) < 3 or not imports_tvm(tree):
            continue
        if not any(not isinstance(s, ast.Import | ast.ImportFrom) and not _is_print(s)
                   for s in tree.body):
            continue  # (imports and prints: an environment check, not a repro)
        return Repro(found=True, script=line + "\n", blocks=(f"{src.name}:unfenced",),
                     shape="unfenced")
    return None


def _is_print(s: ast.stmt) -> bool:
    return isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and isinstance(
        s.value.func, ast.Name) and s.value.func.id == "print"


def import_named_in_prose(src: Source) -> Repro | None:
    """An import statement the reporter quotes as what they ran, in a text that shows the error
    it gave (the issue is an import-time failure)."""
    for m in PROSE_IMPORT_RE.finditer(src.text):
        stmt = m.group(1).strip()
        tree = parse_py(stmt)
        if tree is None or not imports_only(tree):
            continue
        if not any(top == "tvm" or top.startswith("tvm") for top in imported_names(tree)) and \
                not stmt.startswith("from tvm"):
            continue
        return Repro(found=True, script=stmt + "\n", blocks=(f"{src.name}:prose",),
                     shape="unfenced")
    return None


def repro_offered_as_working(blocks: list[Block], repro: Repro) -> bool:
    """The repro's first block is introduced as the variant that works ("importing it after the
    others works:")."""
    first = next((b for b in blocks if repro.blocks and b.label == repro.blocks[0]), None)
    return first is not None and only_offered_as_working(first.prose)


def adopted_script(issue: Issue) -> Repro | None:
    """The script another commenter posted (a maintainer's smaller one) that the author then
    adopts in a later comment ("let's use your script as the repro")."""
    if not any(c.author == issue.author and (ADOPTS_RE.search(c.body) or CONFIRMS_RE.search(c.body))
               for c in issue.comments):
        return None  # (no other comment's markdown is read on every triage for nothing)
    candidate: Repro | None = None
    asked = False  # the candidate's comment asks the author to confirm it
    poster = ""
    for n, c in enumerate(issue.comments, start=1):
        if c.author != issue.author:
            other = read_source(f"comment{n}", c.body, by_author=False)
            blocks = own_blocks(other)
            # (a python block, or a shell one: "python - <<'EOF' ... EOF")
            repro = from_blocks(other, blocks)[0] or shell_in_blocks(blocks)
            if repro is not None:
                candidate, asked, poster = repro, bool(CONFIRM_ASK_RE.search(c.body)), c.author
        elif candidate is not None and (ADOPTS_RE.search(c.body) or (
                # asked to confirm, or thanking its poster by name: "yes, exactly what I see,
                # thanks @s-wang"
                (asked or re.search(rf"@{re.escape(poster)}\b", c.body))
                and CONFIRMS_RE.search(c.body) and not NOT_SAME_RE.search(c.body))):
            return candidate
        elif candidate is not None:
            asked = False  # the author answered something else first
    return None


_USUAL_TVM_ALIASES = (("tvm", "tvm"), ("te", "tvm.te"), ("tir", "tvm.tir"), ("relay", "tvm.relay"),
                      ("relax", "tvm.relax"), ("topi", "tvm.topi"), ("autotvm", "tvm.autotvm"))


def _stale_name(script: str) -> str:
    """The first TVM name the script imports or uses that this TVM no longer has (``tvm.relay``,
    ``te.create_schedule``, ``tvm.nd.array``: :mod:`bot.api_changes` entries), or ""."""
    tree = parse_py(script)
    if tree is None:
        return ""
    # (the usual names, for a snippet pasted without its imports)
    aliases: dict[str, str] = dict(_USUAL_TVM_ALIASES)
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names.append(a.name)
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else \
                    a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                names.append(f"{node.module}.{a.name}")
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            parts: list[str] = []
            cur: ast.expr = node
            while isinstance(cur, ast.Attribute):
                parts.append(cur.attr)
                cur = cur.value
            if isinstance(cur, ast.Name) and cur.id in aliases:
                names.append(".".join([aliases[cur.id], *reversed(parts)]))
    for name in names:
        if not name.startswith(("tvm.", "nnvm", "topi", "vta")) and name != "tvm":
            continue
        entry = api_changes.lookup(name)
        if entry is not None and (name == entry.name or name.startswith(entry.name + ".")):
            return entry.name
    return ""


def _intro(body: str) -> str:
    """A comment's words before its first code block."""
    return re.split(r"```|~~~", body)[0]


def _offered_as_failing(intro: str) -> bool:
    """The words before a comment's script do not offer it as a fix or as the variant that
    works: it may stand for the failing script."""
    return not FIX_RE.search(intro) and not only_offered_as_working(intro)


def ported_by_other(issue: Issue, repro: Repro) -> Repro | None:
    """Another commenter's port of the author's script to the current API ("I ported it to
    Relax on 0.27:", "here is the script with the new API"), when the author's script uses a
    name this TVM no longer has: the port is what can be run. The reason says whose it is."""
    if not any(PORTED_RE.search(c.body) for c in issue.comments):
        return None  # (no comment offers a port: the script is not read again)
    stale = _stale_name(repro.script)
    if not stale:
        return None
    for n, c in enumerate(issue.comments, start=1):
        intro = _intro(c.body)
        # (the author's own port counts too: "ok, updated for 0.27:"; a patch not, nor "here's
        # the TensorIR version, for me it works")
        if not PORTED_RE.search(c.body) or not _offered_as_failing(intro):
            continue
        other = read_source(f"comment{n}", c.body, by_author=False)
        blocks = own_blocks(other)  # (a script, or a `python -c` line in a shell block)
        port = from_blocks(other, blocks)[0] or shell_in_blocks(blocks)
        if port is not None and not _stale_name(port.script):
            return replace(port, reason=(
                f"The issue's script uses `{stale}`, which this TVM no longer has; the bot "
                f"ran the port to the current API that @{c.author} posted in comment {n}."))
    return None


def reduced_without_framework(issue: Issue, repro: Repro) -> Repro | None:
    """The author's script needs a framework (onnx, torch) and a comment -- the author's or a
    maintainer's -- offers a reduction to TVM alone ("I can reproduce without onnx:", "the
    relax-only version"): that runs where the framework is absent and shows the same bug. The
    reason says whose it is."""
    if not any(SMALLER_RE.search(c.body) for c in issue.comments):
        return None  # (no comment offers a reduction: the script is not read again)
    needed = frameworks_of(repro.script)
    if not needed:
        return None
    for n, c in enumerate(issue.comments, start=1):
        intro = _intro(c.body)
        if not SMALLER_RE.search(intro) or not _offered_as_failing(intro):
            continue
        if any(later.author == issue.author and (NOT_SAME_RE.search(later.body)
                                                 or REJECTS_RE.search(later.body))
               for later in issue.comments[n:]):
            continue  # the author says the reduction does not show their bug
        other = read_source(f"comment{n}", c.body, by_author=c.author == issue.author)
        found = from_blocks(other, own_blocks(other))[0]
        if found is not None and not frameworks_of(found.script):
            said = ", ".join(f"`{f.removeprefix('other:')}`" for f in needed)
            return replace(found, reason=(
                f"The issue's script needs {said}; the bot ran the reduction to TVM alone that "
                f"@{c.author} posted in comment {n}."))
    return None


def imports_in_comment(repro: Repro, later: list[Source]) -> Repro | None:
    """The script with the imports the author posts in a later comment ("oops, forgot the
    imports at the top:") put in front of it: a block of imports alone that binds names the
    script uses and never binds."""
    tree = parse_py(repro.script)
    if tree is None:
        return None
    missing = free_names(tree)
    if not missing:
        return None
    for src in later:
        for b in own_blocks(src):
            head = parse_py(dedent(b.text))
            if head is None or not head.body or not imports_only(head) \
                    or not imported_names(head) & missing:
                continue
            joined = dedent(b.text).rstrip("\n") + "\n" + repro.script
            if parse_py(joined) is None:
                continue
            return replace(repro, script=joined, blocks=(b.label, *repro.blocks),
                           shape="multi-block")
    return None


def continued_in_comment(repro: Repro, later: list[Source]) -> Repro | None:
    """The script joined with the first code block of the author's comment that says it
    continues it ("forgot the last part, this goes after the compile:"), when that block uses
    what the script defines or imports."""
    tree = parse_py(repro.script)
    if tree is None:
        return None
    defs = top_bindings(tree) | imported_names(tree)
    for src in later:
        m = CONTINUES_RE.search(src.text)
        if m is None:
            continue
        said_at = src.text.count("\n", 0, m.start())  # the line that says it continues
        blocks = own_blocks(src)
        codes = [c for b in blocks for c in (classify_block(b),) if c is not None]
        # the block after the words; else the one they come after ("... put it after the print")
        code = next((c for c in codes if c.block.start >= said_at), None) or next(
            (c for c in reversed(codes) if c.block.end <= said_at), None)
        text, label = (code.code, code.block.label) if code is not None else ("", "")
        if code is None:
            # pasted without fences in the comment
            text, label = more_code(list(src.lines)), f"{src.name}:unfenced"
        tree_more = parse_py(text) if text else None
        if tree_more is None or not free_names(tree_more) & defs:
            continue
        joined = repro.script.rstrip("\n") + "\n" + text.rstrip("\n") + "\n"
        if parse_py(joined) is None:
            continue
        return replace(repro, script=joined, blocks=(*repro.blocks, label),
                       shape="multi-block")
    return None


def whole_script_for_fragment(repro: Repro, later: list[Source]) -> Repro | None:
    """The repro is a fragment (it reads names nothing binds before it runs anything: ``out =
    topi.transpose(data, axes=perm)`` from "a bigger converter"), and the author posts whole
    scripts in later comments ("Here the script, sorry:"): the latest whole one that the text
    does not offer as the working variant replaces it."""
    if not fragment_at_start(repro.script):
        return None
    for src in reversed(later):
        blocks = own_blocks(src)
        got, _ = from_blocks(src, blocks)
        if got is None or fragment_at_start(got.script) or repro_offered_as_working(blocks, got):
            continue
        tree = parse_py(got.script)
        if tree is not None and has_import(tree):
            return got
    return None


def later_smaller_repro(later: list[Source]) -> Repro | None:
    """The author's latest comment that offers a smaller / minimal / updated repro ("here is a
    smaller repro:", "updated script") replaces the one found earlier."""
    for src in reversed(later):
        blocks = own_blocks(src)
        repro, _ = from_blocks(src, blocks)
        if repro is None:
            continue
        first = next(b for b in blocks if b.label == repro.blocks[0])
        intro = "\n".join(src.lines[: first.start])
        if RETRACTS_RE.search(intro):
            return repro  # "never mind, my mistake: the fixed script passes": run that one
        m = SMALLER_RE.search(intro)
        if CORRECTED_RE.search(intro):
            return repro  # "the script above had a typo, use this one"
        if offered_as_working(first.prose) or FIX_RE.search(last_paragraph(first.prose)):
            continue  # "the updated code works", "with the fix applied": a fix, not a repro
        if m and not re.search(r"\babove\b|\bprevious\b|\bearlier\b|\boriginal\b",
                               intro[m.start() : m.end() + 40], re.I):
            return repro
    return None
