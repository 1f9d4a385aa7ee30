from __future__ import annotations

import ast
import re

from bot import lazyre
from bot.extract.candidates import Code, classify_block, is_printed_ir
from bot.extract.markdown import Block, Source, last_paragraph, sentence_around
from bot.extract.notes import NO_NOTES, Notes
from bot.extract.patterns import (
    CORRECTED_RE,
    DISOWNED_RE,
    ENV_SECTION_RE,
    FAILS_INTRO_RE,
    IR_HEADER_RE,
    RESULT_SECTION_RE,
    SMALLER_RE,
    VARIANT_RE,
    said_incomplete,
)
from bot.extract.pysyntax import (
    free_names,
    has_import,
    has_placeholder,
    imported_names,
    imports_only,
    imports_tvm,
    parse_py,
    top_bindings,
)
from bot.extract.rules import (
    Seen,
    describes_block_above,
    offered_as_working,
    only_offered_as_working,
    why_not,
)
from bot.models import Repro
from bot.records import replace


def depends(later: Code, earlier_defs: set[str]) -> bool:
    return bool(free_names(later.tree) & earlier_defs)


def from_blocks(src: Source, blocks: list[Block]) -> tuple[Repro | None, Notes]:
    """The repro made of ``blocks`` (fenced or indented code): candidates read as Python, the
    rules of :data:`bot.extract.rules.BLOCK_RULES` applied in order, then the blocks that go
    together joined around the primary one."""
    codes: list[Code] = []
    printed = False
    seen = Seen(src)
    for b in blocks:
        c = classify_block(b)
        if c is None:
            continue
        rule = why_not(c, seen)
        if rule is not None:
            printed = printed or rule.printed
            continue
        codes.append(c)
        if c.kind == "script" and not seen.script_above:
            seen = Seen(src, script_above=True)
    repro, notes = _joined(src, codes)
    return repro, (replace(notes, printed_output=True) if printed else notes)


# A block introduced by its file name ("`lrn_ref.py`:", "lrn_ref.py (same directory):").
_MODULE_INTRO_RE = lazyre.compile(r"^\W*([A-Za-z_]\w*)\.py\b[^\n]{0,40}:?\s*$")


def _local_modules(codes: list[Code]) -> dict[str, Code]:
    """Blocks the text names as a module file (``helper.py``) that another block imports
    (``from helper import f``): the reporter's two files in one folder."""
    named: dict[str, Code] = {}
    for c in codes:
        lines = last_paragraph(c.block.prose).strip().split("\n")
        m = _MODULE_INTRO_RE.match(lines[-1]) if lines and lines[-1] else None
        if m and c.kind in ("script", "defs"):
            named[m.group(1)] = c
    return {name: c for name, c in named.items()
            if any(d is not c and name in _imported_from(d.tree) for d in codes)}


def _imported_from(tree: ast.Module) -> set[str]:
    return {n.module for n in tree.body if isinstance(n, ast.ImportFrom) and n.module and
            not n.level}


def _with_module(primary: Code, modules: dict[str, Code]) -> list[Code]:
    """The chain for a script that imports the reporter's own module files: each module's code,
    then the script without its ``from module import`` lines (one file, as a triager joins
    them)."""
    used = [name for name in _imported_from(primary.tree) if name in modules]
    if not used:
        return [primary]
    drop = {n.lineno for n in primary.tree.body if isinstance(n, ast.ImportFrom)
            and n.module in used and n.lineno == n.end_lineno}
    if len(drop) != len(used):
        return [primary]  # (an import spread over lines: left as it is)
    code = "\n".join(ln for k, ln in enumerate(primary.code.split("\n"), start=1)
                     if k not in drop)
    tree = parse_py(code)
    if tree is None:
        return [primary]
    return [*(modules[n] for n in used), replace(primary, code=code, tree=tree)]


# The report is about parsing TVMScript: "cannot be parsed back", "the parser fails", "round-trip".
_PARSING_RE = lazyre.compile(
    r"\b(?:pars(?:e|es|ed|ing|er)|re-?pars\w*|round[- ]?trip\w*|from_source)\b", re.IGNORECASE)
IR_ONLY_NOTE = ("The issue shows only printed TVMScript and says parsing it fails: the bot ran "
                "that module as a script, its commented import lines uncommented.")


# "Switching only the target line to", "if I change `dtype` to": the block below edits a line.
_EDIT_INTRO_RE = lazyre.compile(
    r"\b(?:switch(?:ing|ed)?|chang(?:e|es|ing|ed)|replac(?:e|es|ing|ed)|modify(?:ing)?|"
    r"modified|edit(?:ing|ed)?|swap(?:ping|ped)?)\b", re.IGNORECASE)


def _edited(c: Code, scripts: list[Code]) -> Code | None:
    """A block of one to three assignments, no imports, that the text introduces as an edit
    ("switching only the target line to") and whose every target a script above assigns at its
    top level, from values not their own: that script with those lines replaced."""
    body = c.tree.body
    if not 1 <= len(body) <= 3 or not all(isinstance(st, ast.Assign) for st in body):
        return None
    if not _EDIT_INTRO_RE.search(last_paragraph(c.block.prose)[-300:]):
        return None
    above = [s for s in scripts if s.block.start < c.block.start and has_import(s.tree)]
    if not above:
        return None
    base = above[-1]
    lines = base.code.split("\n")
    edits: list[tuple[int, int, str]] = []
    for st in body:
        assert isinstance(st, ast.Assign)
        key = [ast.dump(t) for t in st.targets]
        if {n.id for n in ast.walk(st.value) if isinstance(n, ast.Name)} & {
                n.id for t in st.targets for n in ast.walk(t) if isinstance(n, ast.Name)}:
            return None  # ("x = f(x)": the next step, not an edit)
        old = next((o for o in base.tree.body if isinstance(o, ast.Assign)
                    and [ast.dump(t) for t in o.targets] == key), None)
        if old is None or old.end_lineno is None or st.end_lineno is None:
            return None
        new = "\n".join(c.code.split("\n")[st.lineno - 1: st.end_lineno])
        edits.append((old.lineno, old.end_lineno, new))
    for start, end, new in sorted(edits, reverse=True):
        lines[start - 1: end] = new.split("\n")
    code = "\n".join(lines)
    tree = parse_py(code)
    if tree is None:
        return None
    return Code(c.block, code, tree, "script", c.interactive, edit_of=base.block.label)


def _joined(src: Source, codes: list[Code]) -> tuple[Repro | None, Notes]:
    scripts_above = [c for c in codes if c.kind == "script"]
    codes = [e if e is not None else c for c in codes
             for e in ((_edited(c, scripts_above) if c.kind in ("script", "stmts") else None),)]
    modules = _local_modules(codes)
    if modules:
        mods = {id(c) for c in modules.values()}
        main = pick_primary([c for c in codes if c.kind == "script" and id(c) not in mods])
        if main is not None:
            chain = _with_module(main, modules)
            if len(chain) > 1:
                repro, notes = finish(src, chain, n_scripts=len(chain))
                names = ", ".join(f"`{n}.py`" for n in modules if modules[n] in chain)
                note = (f"The script imports the module file {names} shown in the issue: the bot "
                        "ran that code in front of the script, in place of the import.")
                return (replace(repro, reason=note) if repro is not None else None), notes
    scripts = [c for c in codes if c.kind == "script"]
    primary = pick_primary(scripts)
    if primary is None:
        broken = [c for c in codes if c.kind == "broken"]
        if broken:
            primary = broken[0]
            return finish(src, [primary], n_scripts=1)
        irs = [as_definitions(c) for c in codes if c.kind == "ir"]
        if len(irs) == 1 and irs[0].kind == "defs" and has_import(irs[0].tree) \
                and _PARSING_RE.search(src.text):
            # Only printed TVMScript, and the report is that parsing it fails: defining the
            # module parses it (the printer's commented import lines uncommented).
            repro, notes = finish(src, irs, n_scripts=1)
            return (replace(repro, reason=IR_ONLY_NOTE) if repro is not None else None), notes
        return None, NO_NOTES
    chain = [primary]
    primary_free = free_names(primary.tree)  # once: it is checked against every block
    defs = top_bindings(primary.tree)
    # Definitions (a function, a TVMScript module printed by the reporter) in other blocks that
    # the driver uses go before it: those above it, then those the text shows after it.
    used: set[int] = set()
    for c in reversed([c for c in codes if c.block.start < primary.block.start]):
        if c.kind in ("defs", "ir") and bool(primary_free & top_bindings(c.tree)):
            chain.insert(0, as_definitions(c))
            defs |= top_bindings(c.tree)
            used.add(id(c))
    at = chain.index(primary)
    for c in codes:
        if c.block.start <= primary.block.start or c.kind not in ("defs", "ir"):
            continue
        if offered_as_working(c.block.prose):
            continue
        if bool(primary_free & (top_bindings(c.tree) - defs)):
            chain.insert(at, as_definitions(c))
            at += 1
            defs |= top_bindings(c.tree)
            used.add(id(c))
    # A block of imports alone is the head of the script: the block right after it that uses
    # those modules is its body.
    header = imported_names(primary.tree) if imports_only(primary.tree) else set()
    # "run:" then a block with no imports of its own that uses the modules the script imports:
    # the rest of that script.
    imported = imported_names(primary.tree)
    for c in codes:
        if c.block.start <= primary.block.start or c.kind not in ("script", "defs", "stmts"):
            continue
        if id(c) in used or is_printed_ir(c):
            continue  # (the module the script printed, shown after it, is not more of it)
        if offered_as_working(c.block.prose):
            header = set()
            continue
        if has_placeholder(c.tree) and not has_placeholder(primary.tree):
            continue  # ("@T.prim_func ... ``...`` DiagnosticError": the printed IR, elided)
        if depends(c, defs) or (header and free_names(c.tree) & header) or (
                c is _next_after(codes, chain[-1]) and not has_import(c.tree)
                and free_names(c.tree) & imported):
            chain.append(c)
            defs |= top_bindings(c.tree)
        header = set()
    n_scripts = len(scripts) + sum(1 for c in chain if c.kind == "defs")
    head = _imports_from_above(codes, primary, primary_free)
    if head is not None and chain[0] is primary:
        chain.insert(0, head)
    return finish(src, chain, n_scripts=n_scripts)


def _imports_from_above(codes: list[Code], primary: Code, free: set[str]) -> Code | None:
    """A script with no imports of its own that uses modules a script above imports ("In
    int64 the result is ok: ``>>> import tvm ...``, but in int32: ``>>> a = tirx.const(...)``"):
    the import lines of that script, to go in front of it (not its code: it may be the variant
    that works)."""
    if has_import(primary.tree):
        return None
    for c in reversed([c for c in codes if c.block.start < primary.block.start
                       and c.kind == "script" and not RESULT_SECTION_RE.match(c.block.section)]):
        if not imported_names(c.tree) & free:
            continue
        lines = c.code.split("\n")
        imports = ["\n".join(lines[s.lineno - 1: s.end_lineno]) for s in c.tree.body
                   if isinstance(s, ast.Import | ast.ImportFrom) and s.end_lineno is not None]
        code = "\n".join(imports) + "\n"
        tree = parse_py(code)
        return Code(c.block, code, tree, "imports", c.interactive) if tree is not None else None
    return None


def _next_after(codes: list[Code], c: Code) -> Code | None:
    """The candidate block right after ``c`` in the text."""
    later = [d for d in codes if d.block.start > c.block.start]
    return min(later, key=lambda d: d.block.start) if later else None


def as_definitions(c: Code) -> Code:
    """A TVMScript dump as printed (``# from tvm.script import tir as T`` header) made runnable:
    its header imports uncommented."""
    if c.kind != "ir":
        return c
    code = IR_HEADER_RE.sub(r"\1\2", c.code)
    tree = parse_py(code)
    if tree is None:
        return c
    return Code(c.block, code, tree, "defs", c.interactive)


def pick_primary(scripts: list[Code]) -> Code | None:
    if not scripts:
        return None
    if len(scripts) > 1 and DISOWNED_RE.search(last_paragraph(scripts[0].block.prose)):
        # "first version (don't use, dtype was float by mistake): ```...``` correct version:
        # ```...```": the next script stands in for the one its own intro disowns.
        scripts = scripts[1:]
    # A block the text presents as the working variant of an earlier one is not the repro.
    first = scripts[0]
    scripts = [first] + [
        c for c in scripts[1:] if not offered_as_working(c.block.prose)
    ]
    # A block with imports is a script; one without may be printed output that parses.
    # Code under "Expected/Actual behavior" (a quoted line, the output) comes after code
    # elsewhere, e.g. under "Steps to reproduce".
    elsewhere = any(not RESULT_SECTION_RE.match(c.block.section) for c in scripts)
    # "What works: ... What fails: ...": a first block offered as the working one yields to a
    # later script that is not offered as working too.
    first_works = _offered_as_working(first) and len(scripts) > 1
    # "```A``` this one is fine. ```B``` this one raises:": the remark after a block (the next
    # block's text, when it speaks of the block above) says which one works.
    ordered = sorted(scripts, key=lambda c: c.block.start)
    works_above = {id(a) for a, b in zip(ordered, ordered[1:], strict=False)
                   if describes_block_above(b.block.prose)
                   and VARIANT_RE.search(last_paragraph(b.block.prose))
                   and not FAILS_INTRO_RE.search(last_paragraph(b.block.prose))}
    if len(works_above) >= len(scripts):
        works_above = set()
    # "EDIT: the real repro is below", "a smaller example:", "EDIT: fixed typo, corrected
    # version:": a later block that the text offers in place of the one above comes first.
    scripts = sorted(scripts, key=lambda c: (
        id(c) in works_above,
        c is first and first_works,
        # a reference script in numpy or torch alone is not the TVM repro beside it
        has_import(c.tree) and not imports_only(c.tree) and not imports_tvm(c.tree),
        not (c is not first and _offered_instead(c)),
        elsewhere and bool(RESULT_SECTION_RE.match(c.block.section)),
        not has_import(c.tree),
        c.block.start,
    ))
    for c in scripts:
        if ENV_SECTION_RE.match(c.block.section) and len(c.tree.body) <= 3:
            continue  # a version print under "Environment"
        return c
    return scripts[0]


def _offered_instead(c: Code) -> bool:
    intro = last_paragraph(c.block.prose)
    return bool(SMALLER_RE.search(intro) or CORRECTED_RE.search(intro))


def _offered_as_working(c: Code) -> bool:
    return only_offered_as_working(c.block.prose)


def finish(src: Source, chain: list[Code], *, n_scripts: int) -> tuple[Repro | None, Notes]:
    first = chain[0]
    para = last_paragraph(first.block.prose)
    incomplete = said_incomplete(para)
    if incomplete:
        return None, Notes(incomplete=sentence_around(para, incomplete.start(), incomplete.end()))
    code = "\n".join(c.code.rstrip("\n") for c in chain) + "\n"
    if any(has_placeholder(c.tree) for c in chain):
        return None, Notes(placeholder=True)
    if len(chain) > 1 or n_scripts > 1:
        shape = "multi-block"
    elif first.interactive:
        shape = "interactive"
    else:
        shape = "fenced"
    edit_of = next((c.edit_of for c in chain if c.edit_of), "")
    # (the block that only lent its imports comes last: the first is the script's own)
    labels = tuple(c.block.label for c in chain if c.kind != "imports") + tuple(
        c.block.label for c in chain if c.kind == "imports")
    return Repro(
        found=True,
        script=code,
        blocks=(edit_of, *labels) if edit_of else labels,
        shape="multi-block" if edit_of else shape,
        reason="A later code block changes a line of this script: the bot ran the script with "
        "that change." if edit_of else "",
    ), NO_NOTES






