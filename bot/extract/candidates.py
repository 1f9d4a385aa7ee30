"""Candidates: a code block read as Python, with its kind (script, definitions, IR dump, ...),
and the tests that tell a program from its printed output."""

from __future__ import annotations

import ast

from bot.extract.cutoff import cut_tail
from bot.extract.markdown import Block, Source, is_quoted, last_paragraph
from bot.extract.patch import added_tests_in_diff, new_file_in_diff
from bot.extract.patterns import (
    NOT_OUTPUT_LABEL_RE,
    OUTPUT_LABEL_RE,
    OUTPUT_PROSE_RE,
    OUTPUT_SECTION_RE,
    PLAIN_TAGS,
    PRINTED_IR_RE,
    PY_TAGS,
    QUOTE_FAILS_TOO_RE,
    STRONG_START_RE,
    TRACEBACK_RE,
    VARIANT_RE,
)
from bot.extract.pysyntax import (
    REPR_CALLS,
    call_tail,
    dedent,
    does_something,
    has_import,
    is_defs_only,
    is_error_output,
    is_ir_dump,
    looks_like_error_message,
    parse_py,
    python_of,
    value_like,
)
from bot.records import record, replace


@record(frozen=False)
class Code:
    """A block turned into Python."""

    block: Block
    code: str
    tree: ast.Module
    kind: str  # "script" | "defs" | "ir" | "stmts" (assignments only) | "broken" | "imports"
    interactive: bool = False
    # A script made by an edit block (see ``bot.extract.blocks``): the label of the block edited.
    edit_of: str = ""


def _cut_script(block: Block) -> Code | None:
    """A fenced script whose paste ends inside its last statement (the fence cut off with the
    text): a script by its complete statements, which begin with imports. The code stays
    whole: ``bot.extract.cutoff.with_cut_tail`` cuts it, and says so, once it is the repro."""
    if not block.fenced:
        return None
    code = dedent(block.text)
    prefix, cut_at, _ = cut_tail(code)
    tree = parse_py(prefix) if cut_at else None
    if tree is None or not has_import(tree) or not STRONG_START_RE.match(prefix.lstrip()):
        return None
    return Code(block, code, tree, "script")


def _script_after_output(block: Block) -> Code | None:
    """One fence holding the error first and the script after it ("tvm.error.DiagnosticError:
    ... code: import tvm ..."): the script is the part from its first import on, when the part
    above it is error output."""
    if not block.fenced:
        return None
    lines = block.text.split("\n")
    k = next((k for k, ln in enumerate(lines) if k and STRONG_START_RE.match(ln)
              and not ln[:1].isspace()), 0)
    if not k or not any(is_error_output(ln) for ln in lines[:k]):
        return None
    rest = "\n".join(lines[k:])
    got = python_of(rest)
    if got is None or got[2]:
        return None
    code, tree, _ = got
    if not has_import(tree) or not does_something(tree) or looks_like_error_message(tree, code):
        return None
    return Code(block, code, tree, "script")


def classify_block(block: Block) -> Code | None:
    lang = block.lang
    added = new_file_in_diff(block.text) if "+++ " in block.text else None
    if added is None and "+++ " in block.text:
        added = added_tests_in_diff(block.text)
    if added is not None:
        # A patch that adds a new Python file, or a test to a test file: that code is the script.
        block = replace(block, text=added)
        lang = "python"
    if lang not in PY_TAGS and lang not in PLAIN_TAGS and not _python_tagged_as_shell(block):
        return None
    got = python_of(block.text)
    if got is None:
        cut = _cut_script(block) or _script_after_output(block)
        if cut is not None:
            return cut
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
    if all(isinstance(s, ast.AnnAssign) and s.value is None and not isinstance(
            s.annotation, ast.Name) for s in tree.body) and not interactive:
        return None  # "before: T.Cast("int64", x * 2)": printed "label: value" lines, not code
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


def _python_tagged_as_shell(block: Block) -> bool:
    """A ```bash / ```sh fence (or ```c++, ```cpp, ```text: any other tag) that holds a Python
    script, not commands: it begins with a Python import and parses as Python, imports and all
    (a wrong tag, not a shell session or native code)."""
    if not block.lang or block.lang in PY_TAGS:
        return False
    first = next((ln for ln in block.text.split("\n") if ln.strip()), "")
    if not STRONG_START_RE.match(first):
        return False
    got = python_of(block.text)
    return got is not None and not got[2] and has_import(got[1])


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


def is_printed_ir(code: Code) -> bool:
    """Definitions with no import that the text introduces as output ("printed:", "Output:"):
    the module the script printed (TVMScript parses as Python), not more of the script."""
    return (code.kind == "defs" and not has_import(code.tree)
            and bool(PRINTED_IR_RE.search(code.code)) and introduced_as_output(code.block))


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


def own_blocks(src: Source) -> list[Block]:
    """The code blocks of ``src`` that are its author's: in a comment, a block quoted with
    ``> `` is someone else's code (a suggestion being answered), unless the author's own words
    say it fails for them too (then the quoted script is their repro)."""
    if src.name == "body":
        return list(src.blocks)
    quoted = [b for b in src.blocks if is_quoted(src.lines, b)]
    if quoted and quoted_fails_too(src):
        return list(src.blocks)
    return [b for b in src.blocks if b not in quoted]


def quoted_fails_too(src: Source) -> bool:
    """The author's own (unquoted) words in ``src`` say the quoted script fails for them too."""
    own = "\n".join(ln for ln in src.lines if not ln.lstrip().startswith(">"))
    # ("is also not work" says it fails: its "work" is no working variant)
    return bool(QUOTE_FAILS_TOO_RE.search(own)) and not VARIANT_RE.search(
        QUOTE_FAILS_TOO_RE.sub(" ", own))
