from __future__ import annotations

import ast
from dataclasses import dataclass

from bot.extract.markdown import Block, Source, last_paragraph, probe_in_env, sentence_around
from bot.extract.notes import Findings
from bot.extract.patterns import (
    ENV_SECTION_RE,
    INCOMPLETE_RE,
    IR_HEADER_RE,
    NOT_OUTPUT_LABEL_RE,
    OUTPUT_LABEL_RE,
    OUTPUT_PROSE_RE,
    OUTPUT_SECTION_RE,
    PLAIN_TAGS,
    PY_TAGS,
    RESULT_SECTION_RE,
    STRONG_START_RE,
    TRACEBACK_RE,
    VARIANT_RE,
)
from bot.extract.pysyntax import (
    REPR_CALLS,
    call_tail,
    dedent,
    does_something,
    free_names,
    has_import,
    has_placeholder,
    imported_names,
    imports_only,
    is_defs_only,
    is_ir_dump,
    is_version_probe,
    looks_like_error_message,
    parse_py,
    python_of,
    top_bindings,
    value_like,
)
from bot.models import Repro


@dataclass
class Code:
    """A block turned into Python."""

    block: Block
    code: str
    tree: ast.Module
    kind: str  # "script" | "defs" | "ir" | "stmts" (assignments only) | "broken"
    interactive: bool = False


def classify_block(block: Block) -> Code | None:
    lang = block.lang
    if lang not in PY_TAGS and lang not in PLAIN_TAGS:
        return None
    got = python_of(block.text)
    if got is None:
        first = next((ln for ln in block.text.split("\n") if ln.strip()), "")
        if (
            lang in PY_TAGS
            and STRONG_START_RE.match(first)
            and not any(TRACEBACK_RE.match(ln) for ln in block.text.split("\n"))
        ):
            # Code with a genuine syntax error: running it says so (python-error).
            dummy = ast.Module(body=[], type_ignores=[])
            return Code(block, dedent(block.text), dummy, "broken")
        return None
    code, tree, interactive = got
    if not tree.body or looks_like_error_message(tree, code):
        return None
    if not block.fenced and not has_import(tree):
        return None  # an indented piece of code pasted without fences: see from_unfenced
    if is_ir_dump(tree, code):
        return Code(block, code, tree, "ir", interactive)
    if is_defs_only(tree):
        return Code(block, code, tree, "defs", interactive)
    if not does_something(tree):
        if block.fenced and all(isinstance(s, ast.Assign | ast.AnnAssign) for s in tree.body):
            # ``m = Module``: no call, but the end of a script split over blocks (joined only
            # when it uses what the script defines).
            return Code(block, code, tree, "stmts", interactive)
        return None
    return Code(block, code, tree, "script", interactive)


def depends(later: Code, earlier_defs: set[str]) -> bool:
    return bool(free_names(later.tree) & earlier_defs)


def from_blocks(src: Source, blocks: list[Block], findings: Findings) -> Repro | None:
    codes: list[Code] = []
    for b in blocks:
        c = classify_block(b)
        if c is None:
            continue
        if is_printed_output(c):
            findings.printed_output = True
            continue
        if any(x.kind == "script" for x in codes) and is_printed_value(c.tree, b.prose):
            continue  # what the script above printed
        if c.kind == "script" and is_version_probe(c.tree) and probe_in_env(
            src.text.split("\n"), b.start, b.end, b.section
        ):
            continue  # ``print(tvm.__version__)``: the environment, not the problem
        codes.append(c)
    scripts = [c for c in codes if c.kind == "script"]
    primary = pick_primary(scripts)
    if primary is None:
        broken = [c for c in codes if c.kind == "broken"]
        if broken:
            primary = broken[0]
            return finish(src, [primary], n_scripts=1, findings=findings)
        return None
    chain = [primary]
    defs = top_bindings(primary.tree)
    # Definitions (a function, a TVMScript module printed by the reporter) in other blocks that
    # the driver uses go before it: those above it, then those the text shows after it.
    used: set[int] = set()
    for c in reversed([c for c in codes if c.block.start < primary.block.start]):
        if c.kind in ("defs", "ir") and depends(primary, top_bindings(c.tree)):
            chain.insert(0, as_definitions(c))
            defs |= top_bindings(c.tree)
            used.add(id(c))
    at = chain.index(primary)
    for c in codes:
        if c.block.start <= primary.block.start or c.kind not in ("defs", "ir"):
            continue
        if VARIANT_RE.search(last_paragraph(c.block.prose)):
            continue
        if depends(primary, top_bindings(c.tree) - defs):
            chain.insert(at, as_definitions(c))
            at += 1
            defs |= top_bindings(c.tree)
            used.add(id(c))
    # A block of imports alone is the head of the script: the block right after it that uses
    # those modules is its body.
    header = imported_names(primary.tree) if imports_only(primary.tree) else set()
    for c in codes:
        if c.block.start <= primary.block.start or c.kind not in ("script", "defs", "stmts"):
            continue
        if id(c) in used:
            continue
        if VARIANT_RE.search(last_paragraph(c.block.prose)):
            header = set()
            continue
        if depends(c, defs) or (header and free_names(c.tree) & header):
            chain.append(c)
            defs |= top_bindings(c.tree)
        header = set()
    n_scripts = len(scripts) + sum(1 for c in chain if c.kind == "defs")
    return finish(src, chain, n_scripts=n_scripts, findings=findings)


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
    # A block the text presents as the working variant of an earlier one is not the repro.
    first = scripts[0]
    scripts = [first] + [
        c for c in scripts[1:] if not VARIANT_RE.search(last_paragraph(c.block.prose))
    ]
    # A block with imports is a script; one without may be printed output that parses.
    # Code under "Expected/Actual behavior" (a quoted line, the output) comes after code
    # elsewhere, e.g. under "Steps to reproduce".
    elsewhere = any(not RESULT_SECTION_RE.match(c.block.section) for c in scripts)
    scripts = sorted(scripts, key=lambda c: (
        elsewhere and bool(RESULT_SECTION_RE.match(c.block.section)),
        not has_import(c.tree),
        c.block.start,
    ))
    for c in scripts:
        if ENV_SECTION_RE.match(c.block.section) and len(c.tree.body) <= 3:
            continue  # a version print under "Environment"
        return c
    return scripts[0]


def finish(src: Source, chain: list[Code], *, n_scripts: int, findings: Findings) -> Repro | None:
    first = chain[0]
    para = last_paragraph(first.block.prose)
    incomplete = INCOMPLETE_RE.search(para)
    if incomplete:
        findings.incomplete = sentence_around(para, incomplete.start(), incomplete.end())
        return None
    code = "\n".join(c.code.rstrip("\n") for c in chain) + "\n"
    if any(has_placeholder(c.tree) for c in chain):
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


def is_printed_output(code: Code) -> bool:
    """A block of printed values, wherever it stands (``[array([1., nan], dtype=float32)]``,
    ``tensor([1, 2])``, ``T.max(a, b)``): it parses, but it is a program's output, not a program.

    Only bare expressions (no import, assignment, def, loop, ``print``), and either every one
    is a value (literals, containers, calls to repr-like names with value arguments), or the text
    introduces the block as output ("Output:", "TVM:", a section "Actual behavior") and no
    expression calls a method or a module function (``tvm.build(mod)`` is code)."""
    tree = code.tree
    if code.interactive or code.kind != "script" or has_import(tree) or not tree.body:
        return False
    if not all(isinstance(s, ast.Expr) for s in tree.body):
        return False
    values = [s.value for s in tree.body if isinstance(s, ast.Expr)]
    if all(value_like(v) for v in values):
        return True
    if not introduced_as_output(code.block):
        return False
    calls = [n for v in values for n in ast.walk(v) if isinstance(n, ast.Call)]
    # ``Result(value=3)``: the repr of an object; ``run_model()`` is a call.
    return all(
        value_like(c) or (isinstance(c.func, ast.Name) and c.func.id[:1].isupper()
                           and all(value_like(a) for a in c.args)
                           and all(value_like(k.value) for k in c.keywords))
        for c in calls
    )


def introduced_as_output(block: Block) -> bool:
    para = last_paragraph(block.prose).strip()
    last = para.split("\n")[-1].strip() if para else ""
    if OUTPUT_PROSE_RE.search(para):
        return True
    if last and OUTPUT_LABEL_RE.match(last) and not NOT_OUTPUT_LABEL_RE.search(last):
        return True  # "ONNXRuntime:", "TVM:", "Output:", "On GPU:"
    return not para and bool(OUTPUT_SECTION_RE.match(block.section))


def is_printed_value(tree: ast.Module, prose: str) -> bool:
    """A block of printed values (``array([1., 2.], dtype=float32)``) that happens to parse: no
    imports, only expressions, and either introduced as output or made of repr-like calls."""
    if has_import(tree) or not all(isinstance(s, ast.Expr) for s in tree.body):
        return False
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    if any(call_tail(c) == "print" for c in calls):
        return False
    if OUTPUT_PROSE_RE.search(last_paragraph(prose).strip()):
        return True
    top = [s.value for s in tree.body if isinstance(s, ast.Expr)]
    return all(not isinstance(v, ast.Call) or call_tail(v) in REPR_CALLS for v in top)
