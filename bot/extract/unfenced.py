from __future__ import annotations

import ast
import re
import textwrap

from bot import lazyre
from bot.extract.markdown import (
    Block,
    Source,
    is_code_comment,
    is_section_heading,
    last_paragraph,
    probe_in_env,
    sections_by_line,
    sentence_around,
    unhtml,
)
from bot.extract.notes import NO_NOTES, Notes
from bot.extract.patterns import (
    CONTINUATION_RE,
    HEADING_RE,
    IPY_CONT_RE,
    IPY_IN_RE,
    MAX_UNFENCED_LINES,
    MAX_UNFENCED_PARSES,
    MAX_UNFENCED_RUNS,
    OUTPUT_INTRO_RE,
    PROMPT_RE,
    PY_REPL_RE,
    REPRO_SECTION_RE,
    RESULT_SECTION_RE,
    SESSION_END_RE,
    SIMPLE_ASSIGN_RE,
    SMART,
    STRONG_START_RE,
    TB_FRAME_RE,
    TVM_NAMES_RE,
    UNFENCED_LOOKAHEAD,
    VARIANT_RE,
    WEAK_START_RE,
    said_incomplete,
)
from bot.extract.pysyntax import (
    bound_names,
    dedent,
    displayed,
    does_something,
    free_names,
    has_import,
    has_placeholder,
    imported_names,
    imports_only,
    is_error_output,
    is_ir_dump,
    is_version_probe,
    parse_py,
    strip_line_numbers,
    top_bindings,
)
from bot.models import Repro


def from_unfenced(src: Source, blocks: list[Block]) -> tuple[Repro | None, Notes]:
    """Code pasted without fences (scraped reports, ``<pre>`` HTML, ``>>>`` sessions)."""
    # (markdown escapes a rich editor adds, "tvm\_ffi", "\*\*kwargs": GitHub shows them plain)
    lines = [unhtml(ln).replace("\\_", "_").replace("\\*", "*") for ln in src.lines]
    # Fenced blocks are not prose: blank them out with a line that never parses.
    for b in (b for b in blocks if b.fenced):
        for k in range(b.start, min(b.end, len(lines))):
            lines[k] = "\x00"
    lines = rejoin_wrapped_strings(unnumbered(lines))
    runs = code_runs(lines)
    session = unfenced_session(lines)
    if session is not None and (not runs or session[0] < runs[0][0]):
        return Repro(found=True, script=session[1], blocks=(f"{src.name}:unfenced",),
                     shape="interactive"), NO_NOTES
    if not runs:
        return None, NO_NOTES
    above = sections_by_line(lines)
    sections = [above[r[0]] for r in runs]
    # Code under "Steps to reproduce" beats code under "Expected/Actual behavior" (the latter is
    # usually the one line the reporter expects to work, quoted from the repro).
    pick = next((k for k, sec in enumerate(sections) if REPRO_SECTION_RE.match(sec)), None)
    if pick is None:
        pick = next((k for k, sec in enumerate(sections) if not RESULT_SECTION_RE.match(sec)), 0)
    first_start, first_end, first_code, first_tree = runs[pick]
    chain = [(first_start, first_end, first_code)]
    defs = top_bindings(first_tree)
    # Imports alone (a notebook's first cell, "In [1]:"): the head of the script; the run right
    # after it that uses those modules is its body (as for fenced blocks).
    header = imported_names(first_tree) if imports_only(first_tree) else set()
    later = sorted(runs[pick + 1 :] + one_line_statements(lines, runs, first_end))
    for start, end, code, tree in later:
        after_header, header = header, set()
        # Only the paragraph right before a run says what it is ("this works", "or:"); an earlier
        # "should work" describes the code before.
        before = last_paragraph("\n".join(ln for ln in lines[chain[-1][1] : start]
                                            if ln != "\x00"))
        if VARIANT_RE.search(before) or re.search(r"^\s*or\b", before, re.I | re.M):
            continue
        if OUTPUT_INTRO_RE.search(before) or (
            RESULT_SECTION_RE.match(above[start])
            and not RESULT_SECTION_RE.match(sections[pick])
        ):
            continue  # "This prints the following module:", code under "Actual behavior"
        if free_names(tree) & (defs | after_header):
            chain.append((start, end, code))
            defs |= top_bindings(tree)
    before = last_paragraph("\n".join(lines[max(0, first_start - 8) : first_start]))
    incomplete = said_incomplete(before)
    if incomplete:
        return None, Notes(incomplete=sentence_around(before, incomplete.start(), incomplete.end()))
    script = "\n".join(c.rstrip("\n") for _, _, c in chain) + "\n"
    whole = parse_py(script)
    if whole is None or has_placeholder(whole):
        return None, NO_NOTES
    return Repro(found=True, script=script, blocks=(f"{src.name}:unfenced",),
                 shape="unfenced"), NO_NOTES


def _open_quote(line: str) -> str:
    """The quote character a line leaves open (an odd count of it, outside comments), or ""."""
    if '"""' in line or "'''" in line or line.lstrip().startswith("#"):
        return ""
    for q in ('"', "'"):
        if line.count(q) % 2 == 1 and line.count("'" if q == '"' else '"') % 2 == 0:
            return q
    return ""


def rejoin_wrapped_strings(lines: list[str]) -> list[str]:
    """``lines`` with a string literal an email client broke over two lines joined again
    (``f"expected int32 got`` / ``{out.dtype}"``): the line left open and the next one that
    closes it, with the space the wrap took. The line count stays (the second becomes blank)."""
    out = list(lines)
    for i in range(len(out) - 1):
        q = _open_quote(out[i])
        if q and _open_quote(out[i + 1]) == q and out[i + 1].strip() and not out[i + 1][:1].isspace():
            out[i] = out[i].rstrip() + " " + out[i + 1].strip()
            out[i + 1] = ""
    return out


_NUMBERED_RE = lazyre.compile(r"^\s*(\d{1,4})[.:|]?(?:\s|$)")


def unnumbered(lines: list[str]) -> list[str]:
    """``lines`` with code copied from an editor with its line numbers (``1  import tvm``,
    ``2  from tvm import relax``, ...) numbered no more: a run of lines numbered 1, 2, 3, ...
    (blank lines keep their number) whose numbers off parse as Python."""
    out = list(lines)
    i = 0
    while i < len(out):
        m = _NUMBERED_RE.match(out[i])
        if m is None or m.group(1) != "1":
            i += 1
            continue
        end, expect = i, 1
        while end < len(out):
            m = _NUMBERED_RE.match(out[end])
            if m is None or int(m.group(1)) != expect:
                break
            end, expect = end + 1, expect + 1
        if end - i >= 3:
            code = strip_line_numbers(out[i:end])
            if code is not None and parse_py(code) is not None:
                stripped = code.split("\n")
                if len(stripped) == end - i:
                    out[i:end] = stripped
        i = max(end, i + 1)
    return out


def one_line_statements(
    lines: list[str], runs: list[tuple[int, int, str, ast.Module]], after: int
) -> list[tuple[int, int, str, ast.Module]]:
    """Paragraphs of one line after line ``after`` that are one call (``tvm.build(mod)``,
    ``out = f(x)``), outside the runs: the last step of a script pasted in pieces (joined only
    when it uses what the script defines)."""
    taken = {k for start, end, _, _ in runs for k in range(start, end)}
    ends = {end for _, end, _, _ in runs}
    found: list[tuple[int, int, str, ast.Module]] = []
    n = len(lines)
    for k in range(after, min(n, after + MAX_UNFENCED_LINES)):
        ln = lines[k]
        if (k in taken or "(" not in ln or "\x00" in ln
                or (k > 0 and lines[k - 1].strip() and not _after_printed(lines, k, ends))
                or (k + 1 < n and lines[k + 1].strip())):
            continue
        code = ln.strip().translate(SMART) + "\n"
        tree = parse_py(code)
        if tree is None or len(tree.body) != 1:
            continue
        stmt = tree.body[0]
        if isinstance(stmt, ast.Expr | ast.Assign) and isinstance(stmt.value, ast.Call):
            found.append((k, k + 1, code, tree))
            if len(found) >= MAX_UNFENCED_RUNS:
                break
    return found


def _after_printed(lines: list[str], k: int, ends: set[int]) -> bool:
    """Line ``k`` follows, with no blank line, a few lines that are not code and that follow a
    run of code right away: what the script printed, pasted in the middle of it (``print(out)``,
    ``[[ 100  -56   44]]``, then the check that fails)."""
    j = k
    while j > 0 and j not in ends and lines[j - 1].strip() and k - j < _PRINTED_LINES:
        if parse_py(lines[j - 1].strip()) is not None:
            return False  # (code, not output)
        j -= 1
    return j < k and j in ends


_PRINTED_LINES = 8


def unfenced_session(lines: list[str]) -> tuple[int, str] | None:
    """A ``>>>`` session pasted without fences: (first line, script).

    The statements are kept up to and including the first one whose output is an error (the
    failure being reported); statements typed after it are the reporter's side checks. With no
    error shown, the first session (up to a blank line after output or prose) is the script.
    """
    first = next((k for k, ln in enumerate(lines) if _typed(ln) is not None), None)
    if first is None:
        return None
    prev = next((ln for ln in reversed(lines[:first]) if ln.strip()), "")
    if PY_REPL_RE.match(prev):
        return None  # "$ python" then ">>>": a shell session (see shell_session)
    stmts: list[str] = []  # source lines, prompts stripped
    pending: list[str] = []  # the statement being typed
    failed = False
    in_output = False
    earlier: list[str] | None = None  # a finished session that showed no error
    shown: set[int] = set()  # lines of ``stmts`` whose value the session shows below them
    for k, ln in enumerate(lines[first:], start=first):
        typed = _typed(ln)
        c = _continued(ln) if pending and not in_output else None
        if typed is not None:
            if failed:
                break
            stmts.extend(pending)
            pending = [typed]
            in_output = False
            if SESSION_END_RE.match(pending[0]):
                # ``exit()``: the reporter starts another interpreter; a later session that
                # shows the failure is the repro, else the first one.
                if earlier is None:
                    earlier = stmts
                stmts, pending, shown = [], [], set()
            continue
        if c is not None:
            pending.append(c)
            continue
        if not ln.strip():
            if (in_output or not pending) and not _next_cell(lines, k):
                break
            continue
        # Printed output (or prose after the session).
        if not in_output and pending and not failed and not is_error_output(ln):
            shown.add(len(stmts) + len(pending) - 1)  # (the value of the line typed above)
        failed = failed or is_error_output(ln)
        in_output = True
    stmts.extend(pending)
    if not failed and earlier:
        stmts, shown = earlier, set()
    code = displayed(dedent("\n".join(stmts).translate(SMART)), shown)
    tree = parse_py(code)
    if tree is None or not does_something(tree):
        return None
    # ``>>>`` marks code; without an import, two statements of TVM code are enough.
    if not has_import(tree) and not (len(tree.body) >= 2 and TVM_NAMES_RE.search(code)):
        return None
    return first, code


def _next_cell(lines: list[str], k: int) -> bool:
    """The next line with text after blank line ``k`` opens a notebook cell (``In [4]:``):
    IPython puts a blank line between its cells, and the session goes on."""
    nxt = next((ln for ln in lines[k + 1: k + 4] if ln.strip()), "")
    return IPY_IN_RE.match(nxt) is not None


def _typed(line: str) -> str | None:
    """The code typed at a prompt: ``>>> code``, or IPython's ``In [3]: code``; else None."""
    m = PROMPT_RE.match(line)
    if m:
        return m.group(2) or ""
    m = IPY_IN_RE.match(line)
    return line[m.end():] if m else None


def _continued(line: str) -> str | None:
    """The code on a continuation line: ``... code``, or IPython's ``   ...: code``."""
    m = IPY_CONT_RE.match(line)
    if m:
        return line[m.end():]
    m = CONTINUATION_RE.match(line)
    return (m.group(1) or "") if m else None


def under_frames(lines: list[str]) -> list[bool]:
    """For each line: it is the source line under a traceback frame (``File "x.py", line 8``),
    blank lines between allowed. One pass."""
    out: list[bool] = []
    frame = False  # the last non-blank line so far is a frame line
    for ln in lines:
        out.append(frame)
        if ln.strip():
            frame = bool(TB_FRAME_RE.match(ln))
    return out


def more_code(lines: list[str]) -> str:
    """The first run of top-level statements in a comment that goes on with a script ("i add
    check with reference, please see <def ...> <np.testing...> put it after the print"): code
    with no import of its own, which only the words around it call a continuation. "" if none."""
    budget = [MAX_UNFENCED_PARSES]
    for i, ln in enumerate(lines[:MAX_UNFENCED_LINES]):
        if not re.match(r"(?:def|class|for|with|if|assert)\b|[A-Za-z_][\w.]*\s*(?:\(|=[^=])", ln):
            continue
        end = extend_run(lines, i, budget)
        if end is None:
            continue
        chunk = dedent("\n".join(lines[i:end]).translate(SMART))
        tree = parse_py(chunk)
        if tree is not None and does_something(tree) and (
                len(chunk.strip().split("\n")) >= 2):
            return chunk
    return ""


def code_runs(lines: list[str]) -> list[tuple[int, int, str, ast.Module]]:
    """Maximal runs of lines that parse as Python, starting with an import (or TVM code)."""
    runs: list[tuple[int, int, str, ast.Module]] = []
    budget = [MAX_UNFENCED_PARSES]  # parse attempts left: bounded time on any text
    i = 0
    n = len(lines)
    floor = 0  # lines above this belong to an earlier run
    in_traceback = under_frames(lines)
    while i < n:
        if in_traceback[i]:
            # The source line Python prints under a traceback frame is not code to run.
            i += 1
            continue
        strong = bool(STRONG_START_RE.match(lines[i]))
        if not strong and not WEAK_START_RE.match(lines[i]):
            i += 1
            continue
        if len(runs) >= MAX_UNFENCED_RUNS or budget[0] <= 0:
            break
        end = extend_run(lines, i, budget)
        if end is None:
            i += 1
            continue
        chunk = dedent("\n".join(lines[i:end]).translate(SMART))
        tree = parse_py(chunk)
        trimmed = trim_trailing(chunk, tree) if tree is not None else None
        if trimmed is None:
            i = floor = end
            continue
        code, run_tree = trimmed
        start = i
        if not strong:
            # Constants set just above (``num = 10``) start the same script.
            top = constants_above(lines, i, floor)
            if top < i:
                consts = textwrap.dedent("\n".join(lines[top:i]).translate(SMART))
                with_consts = dedent(consts + "\n" + code)
                consts_tree = parse_py(with_consts)
                if consts_tree is not None:
                    start, code, run_tree = top, with_consts, consts_tree
        # Comment lines right above the first import belong to the script.
        code_start = start
        while start > 0 and lines[start - 1].lstrip().startswith("#") and (
            not HEADING_RE.match(lines[start - 1]) or is_code_comment(lines[start - 1])
        ):
            start -= 1
        if start < code_start:
            head = "\n".join(lines[start:code_start])
            with_head = dedent(head + "\n" + code)
            if parse_py(with_head) is not None:
                code = with_head
        if not strong and (is_ir_dump(run_tree, code) or ir_header_above(lines, start)):
            i = floor = end
            continue  # a module printed by the script (``# from tvm.script import ...``)
        if does_something(run_tree) and substantial(code, strong=strong) and not (
            is_version_probe(run_tree) and probe_in_env(lines, start, end)
        ):
            runs.append((start, end, code, run_tree))
        i = floor = end
    return runs


def constants_above(lines: list[str], i: int, floor: int) -> int:
    """The first line of the simple assignments (``dtype = "float32"``, ``n = 10``) right above
    line ``i`` (blank lines between allowed); ``i`` when there are none."""
    top = i
    k = i - 1
    while k >= floor and k >= i - 12:
        ln = lines[k]
        if not ln.strip():
            k -= 1
            continue
        if not SIMPLE_ASSIGN_RE.match(ln) or parse_py(ln.strip().translate(SMART)) is None:
            break
        top = k
        k -= 1
    return top


def ir_header_above(lines: list[str], i: int) -> bool:
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


def extend_run(lines: list[str], i: int, budget: list[int]) -> int | None:
    """One past the last line of the run of top-level statements that starts at line ``i``.

    Statement by statement (linear time): each statement is parsed on its own, or together with
    the one before (``else:``, ``except:``); the run stops at the first line that cannot start a
    statement (prose, a log line), or when a statement does not close within the lookahead.
    """
    n = len(lines)
    base = indent_of(lines[i])
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
            if indent_of(first) < base or not could_start_statement(first):
                break
            if is_section_heading(first):
                break  # "### Environment": the code above has ended
            if (first.rstrip().endswith(":") and not first.lstrip().startswith("#")
                    and not next_is_deeper(lines, s, base)):
                break  # a header with no indented body: prose ending in a colon
        if j - s > UNFENCED_LOOKAHEAD:
            break
        nxt = lines[j] if j < n else ""
        # Try only where a statement can end: the next line is not indented deeper.
        if lines[j - 1].strip() and not (nxt.strip() and indent_of(nxt) > base):
            budget[0] -= 1
            if budget[0] <= 0:
                break
            if parse_py(segment(lines, s, j)) is not None:
                prev_s, s, best = s, j, j
            elif prev_s is not None and parse_py(segment(lines, prev_s, j)) is not None:
                s, best = j, j
        j += 1
    return best


def next_is_deeper(lines: list[str], k: int, base: int) -> bool:
    for ln in lines[k + 1 :]:
        if ln.strip():
            return indent_of(ln) > base
    return False


def segment(lines: list[str], start: int, end: int) -> str:
    return textwrap.dedent("\n".join(lines[start:end]).translate(SMART))


def could_start_statement(line: str) -> bool:
    text = line.strip().translate(SMART)
    if parse_py(text) is not None or text.startswith("@"):
        return True
    if text.endswith((":", "\\", ",", "(", "[", "{")) or '"""' in text or "\'\'\'" in text:
        return True
    depth = sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")
    return depth > 0


def indent_of(line: str) -> int:
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())


def substantial(code: str, *, strong: bool) -> bool:
    """One line of prose can parse ("import successfully"): a one-line run must mention TVM, and
    a run that does not start with an import needs three lines of TVM code."""
    n = len([ln for ln in code.split("\n") if ln.strip() and not ln.lstrip().startswith("#")])
    if not strong:
        return n >= 3 and bool(TVM_NAMES_RE.search(code))
    return n > 1 or "tvm" in code


def trim_trailing(code: str, tree: ast.Module) -> tuple[str, ast.Module] | None:
    """Drop trailing statements that are printed output or prose, not code (``# IR``, a bare
    name such as a heading that lost its ``#``, a number, a list literal, ``label: 3``)."""
    lines = code.split("\n")
    body = list(tree.body)
    bound = bound_names(tree, imports=True)
    while body:
        last = body[-1]
        if isinstance(last, ast.Expr) and not isinstance(last.value, ast.Call | ast.Await):
            if isinstance(last.value, ast.Name) and last.value.id in bound and len(body) > 1:
                break  # ``mod`` on its own line: a notebook cell showing a result
            body.pop()
            continue
        if isinstance(last, ast.AnnAssign) and last.value is None and not isinstance(
                last.annotation, ast.Name | ast.Attribute | ast.Subscript | ast.BinOp) and not (
                isinstance(last.annotation, ast.Constant)
                and isinstance(last.annotation.value, str)):
            body.pop()  # ``expr: -2147483648``: a labelled printed value, not an annotation
            continue
        break
    if not body:
        return None
    end_line = body[-1].end_lineno or len(lines)
    kept = "\n".join(lines[:end_line]).rstrip() + "\n"
    new_tree = parse_py(kept)
    if new_tree is None:
        return None
    return kept, new_tree
