from __future__ import annotations

import ast
import re
import textwrap

from bot import lazyre
from bot.extract.patterns import (
    BUILTINS,
    CONTINUATION_RE,
    ELISION_RE,
    ERROR_LINE_RE,
    IPY_CELL_END_RE,
    IPY_CELL_RE,
    IPY_CONT_RE,
    IPY_IN_RE,
    LINE_NO_RE,
    OUTPUT_LINE_RE,
    PROMPT_RE,
    PROSE_LINE_RE,
    SHELL_LINE_RE,
    SMART,
    TRACEBACK_RE,
)


def parse_py(code: str) -> ast.Module | None:
    if not code.strip():
        return None
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def dedent(code: str) -> str:
    code = textwrap.dedent(code.expandtabs(8) if "\t" in code and " " in code else code)
    return code.strip("\n") + "\n"


def does_something(tree: ast.Module) -> bool:
    return any(isinstance(node, ast.Import | ast.ImportFrom | ast.Call) for node in ast.walk(tree))


def has_import(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.Import | ast.ImportFrom) for n in ast.walk(tree))


def imports_only(tree: ast.Module) -> bool:
    return bool(tree.body) and all(isinstance(s, ast.Import | ast.ImportFrom) for s in tree.body)


def imports_tvm(tree: ast.Module) -> bool:
    """Any ``import tvm...`` / ``from tvm... import`` at the top level."""
    for s in tree.body:
        if isinstance(s, ast.Import) and any(a.name.split(".")[0] == "tvm" for a in s.names):
            return True
        if isinstance(s, ast.ImportFrom) and (s.module or "").split(".")[0] == "tvm":
            return True
    return False


def imported_names(tree: ast.Module) -> set[str]:
    return {(a.asname or a.name).split(".")[0] for s in tree.body
            if isinstance(s, ast.Import | ast.ImportFrom) for a in s.names}


# What an environment probe reads: ``tvm.__version__``, ``tvm.support.libinfo()``, ...
VERSION_NAMES = frozenset({"__version__", "version", "__git_version__", "git_version", "libinfo",
                            "describe", "version_info", "python_version", "platform", "system",
                            "machine", "is_available", "device_count", "get_device_name",
                            "cuda_version", "git_hash", "__cuda_version__"})


PROBE_CALLS = frozenset({"print", "str", "repr", "format", "get", "items", "keys", "join",
                          "pprint", "dict", "sorted"})


def is_version_probe(tree: ast.Module) -> bool:
    """An environment probe (``import tvm; print(tvm.__version__)``): imports, then only prints
    of versions and build info. It shows which TVM the reporter has, not the problem."""
    saw = False
    for stmt in tree.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            continue
        if not isinstance(stmt, ast.Expr | ast.Assign):
            return False
        for node in ast.walk(stmt):
            if isinstance(node, ast.Attribute) and node.attr in VERSION_NAMES:
                saw = True
            elif isinstance(node, ast.Call):
                tail = call_tail(node)
                if tail in VERSION_NAMES:
                    saw = True
                elif tail not in PROBE_CALLS:
                    return False
    return saw






def looks_like_error_message(tree: ast.Module, code: str) -> bool:
    """``ValueError: bad`` parses as an annotation; a block ending so is an error message."""
    last_line = next((ln for ln in reversed(code.split("\n")) if ln.strip()), "")
    if not ERROR_LINE_RE.match(last_line):
        return False
    last = tree.body[-1] if tree.body else None
    return isinstance(last, ast.AnnAssign | ast.Expr) and not (
        isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
    )


def is_ir_dump(tree: ast.Module, code: str) -> bool:
    first = next((ln.strip() for ln in code.split("\n") if ln.strip()), "")
    return bool(first.startswith("# from tvm.script import") or first.startswith("#[version"))


REPR_CALLS = frozenset({"array", "tensor", "Tensor", "ndarray", "NDArray", "Shape", "ShapeTuple",
                         "device", "dtype", "float32", "float16", "int32", "int64", "Object",
                         "IntImm", "FloatImm", "Var", "Buffer", "PrimExpr", "tuple", "list"})




MORE_REPR_CALLS = frozenset({"cpu", "cuda", "gpu", "rocm", "vulkan", "metal", "opencl",
                              "float64", "bfloat16", "int8", "int16", "uint8", "uint16", "uint32",
                              "uint64", "bool", "bool_", "complex64", "DataType", "Parameter",
                              "StringImm", "Range", "IterVar", "Call", "Op", "GlobalVar", "Array",
                              "Map", "String", "Module", "TensorType", "TensorStructInfo",
                              "ShapeStructInfo", "PrimValue", "Constant", "Tuple", "masked_array",
                              "matrix", "Series", "DataFrame", "OrderedDict", "defaultdict",
                              "namedtuple", "Size", "finfo", "iinfo"})


NUMPY_SCALARS = frozenset({"float16", "float32", "float64", "int8", "int16", "int32", "int64",
                            "uint8", "uint16", "uint32", "uint64", "bool_", "str_", "complex64",
                            "complex128", "longdouble", "datetime64", "timedelta64"})


# Printed TVMScript expressions and structure info: ``T.max(a, b)``, ``R.Tensor((2,), "f32")``.
PRINTED_PREFIXES = frozenset({"T", "R", "I"})






def value_like(node: ast.expr, depth: int = 0) -> bool:
    """A printed value: literals, containers, names (``nan``, ``float32``), dotted names, signs
    and arithmetic of values, and calls to repr-like names whose arguments are values."""
    if depth > 60:
        return False
    d = depth + 1
    if isinstance(node, ast.Constant | ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return value_like(node.value, d)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return all(value_like(e, d) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is None or value_like(k, d) for k in node.keys) and all(
            value_like(v, d) for v in node.values
        )
    if isinstance(node, ast.UnaryOp):
        return value_like(node.operand, d)
    if isinstance(node, ast.BinOp):
        return value_like(node.left, d) and value_like(node.right, d)
    if isinstance(node, ast.BoolOp):
        return all(value_like(v, d) for v in node.values)
    if isinstance(node, ast.Compare):
        return value_like(node.left, d) and all(value_like(c, d) for c in node.comparators)
    if isinstance(node, ast.Starred):
        return value_like(node.value, d)
    if isinstance(node, ast.Call):
        f = node.func
        root = f
        while isinstance(root, ast.Attribute):
            root = root.value
        tail = call_tail(node)
        if isinstance(f, ast.Name):
            repr_like = tail in REPR_CALLS | MORE_REPR_CALLS
        else:
            # ``tvm.runtime.ShapeTuple([1])`` is code; ``T.max(a, b)`` (TVMScript) and
            # ``np.float32(1.0)`` (numpy 2 scalars) are how values print.
            root_id = root.id if isinstance(root, ast.Name) else ""
            repr_like = root_id in PRINTED_PREFIXES or (
                root_id in ("np", "numpy") and tail in NUMPY_SCALARS
            )
        return (
            repr_like
            and isinstance(root, ast.Name)
            and all(value_like(a, d) for a in node.args)
            and all(value_like(k.value, d) for k in node.keywords)
        )
    return False


def call_tail(call: ast.Call) -> str:
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr
    return f.id if isinstance(f, ast.Name) else ""


def is_defs_only(tree: ast.Module) -> bool:
    body = [s for s in tree.body if not is_docstring(s)]
    return bool(body) and not has_import(tree) and all(
        isinstance(s, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) for s in body
    )


def is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(
        stmt.value.value, str
    )


def strip_prompts(lines: list[str]) -> str | None:
    """A ``>>>`` / ``In [1]:`` session as a script: prompts stripped, printed output dropped.
    An expression typed at a prompt whose value the session shows below it is printed, as the
    interpreter did (:func:`_displayed`)."""
    out: list[str] = []
    in_code = False
    in_cell = False  # inside a notebook cell: its lines are code as they stand
    seen = False
    failed = False  # an error was printed: later statements are side checks, not the repro
    typed = -1  # the last line of ``out`` typed at a prompt (or its continuation)
    shown: set[int] = set()  # those followed by printed output
    for ln in lines:
        m = PROMPT_RE.match(ln)
        if (m or IPY_IN_RE.match(ln)) and failed:
            break
        if IPY_CELL_RE.match(ln):
            in_cell = seen = True
            in_code = False
            continue
        if in_cell and not IPY_CELL_END_RE.match(ln) and not is_error_output(ln):
            # shell escapes and magics (``!pip install``, ``%time``) are not Python
            out.append("" if re.match(r"^\s*[!%]", ln) else ln)
            continue
        in_cell = False
        if m:
            typed = len(out)
            out.append(m.group(2) or "")
            in_code = seen = True
            continue
        m = IPY_IN_RE.match(ln)
        if m:
            typed = len(out)
            out.append(ln[m.end():])
            in_code = seen = True
            continue
        if in_code:
            m = CONTINUATION_RE.match(ln)
            if m:
                if (m.group(1) or "").strip():
                    typed = len(out)
                out.append(m.group(1) or "")
                continue
            m = IPY_CONT_RE.match(ln)
            if m:
                if ln[m.end():].strip():
                    typed = len(out)
                out.append(ln[m.end():])
                continue
        in_code = False  # printed output, a traceback, Out[n]: ...
        failed = failed or is_error_output(ln)
        if failed:
            shown.discard(typed)  # its output is an error, not a value
        elif ln.strip() and typed >= 0:
            shown.add(typed)
    if not seen:
        return None
    return displayed("\n".join(out), shown)


def session_output(text: str) -> str:
    """What a ``>>>`` / ``In [1]:`` session shows printed, up to its first error: the lines
    that are not typed at a prompt (``Out[3]:`` prefixes dropped). "" for a notebook's cells or
    a session that shows nothing."""
    lines = text.split("\n")
    if any(IPY_CELL_RE.match(ln) for ln in lines):
        return ""
    out: list[str] = []
    in_code = seen = False
    for ln in lines:
        if PROMPT_RE.match(ln) or IPY_IN_RE.match(ln):
            in_code = seen = True
            continue
        if in_code and (CONTINUATION_RE.match(ln) or IPY_CONT_RE.match(ln)):
            continue
        in_code = False
        if is_error_output(ln):
            break
        if ln.strip() and seen:  # (not the interpreter's banner above the first prompt)
            out.append(re.sub(r"^\s*Out\[\d*\]:\s?", "", ln))
    return "\n".join(out)


def displayed(script: str, shown: set[int]) -> str:
    """The interactive interpreter prints the value of an expression typed at its prompt; a
    script does not. An expression statement on one line whose value the session shows
    (``>>> vm["main"](x).numpy()`` then ``array(-112, dtype=int8)``) becomes
    ``print(repr(...))``, so the run prints what the session showed."""
    if not shown:
        return script
    try:
        tree = ast.parse(script)
    except (SyntaxError, ValueError):
        return script
    lines = script.split("\n")
    for stmt in tree.body:
        k = stmt.lineno - 1
        if (k not in shown or not isinstance(stmt, ast.Expr) or stmt.end_lineno != stmt.lineno
                or isinstance(stmt.value, ast.Constant)
                or (isinstance(stmt.value, ast.Call) and call_tail(stmt.value) == "print")):
            continue
        src = ast.get_source_segment(script, stmt.value)
        if src is None or lines[k].strip() != src.strip():
            continue
        src = src.strip()
        if isinstance(stmt.value, ast.Tuple) and not src.startswith("("):
            src = f"({src})"  # ``out.numpy(), np.mean(x)`` shows the tuple
        lines[k] = f"print(repr({src}))"
    return "\n".join(lines)


def is_error_output(line: str) -> bool:
    return bool(
        TRACEBACK_RE.match(line) or ERROR_LINE_RE.match(line)
        or re.search(r"Traceback \(most recent call last\)|Check failed|Segmentation fault", line)
    )


def has_prompts(lines: list[str]) -> bool:
    return any(PROMPT_RE.match(ln) or IPY_IN_RE.match(ln) for ln in lines)


def cut_at_output(code: str) -> str | None:
    """The code before the output pasted after it in the same block (a traceback, a log)."""
    lines = code.split("\n")
    for k, ln in enumerate(lines):
        if k and OUTPUT_COMMENT_RE.match(ln):
            # "# output" then what it printed: the code is what comes above the comment
            head = "\n".join(lines[:k]).rstrip()
            tree = parse_py(head)
            if tree is not None and does_something(tree):
                return head
        if k and NUMPY_ROW_RE.match(ln) and parse_py(ln.strip()) is None:
            # a numpy array printed under the code that printed it ("[[ 3.   5.   3.25]"):
            # the code above it, and any code below its rows (the check that fails on it)
            j = k
            while j < len(lines) and (not lines[j].strip() or NUMPY_ROW_RE.match(lines[j])):
                j += 1
            head = "\n".join(lines[:k]).rstrip()
            rest = "\n".join(lines[j:]).strip("\n")
            tree = parse_py(head)
            if tree is None or not does_something(tree):
                return None
            both = f"{head}\n{rest}" if rest else head
            joined = parse_py(both) if rest else None
            return both if joined is not None and does_something(joined) else head
        if k and (
            OUTPUT_LINE_RE.match(ln)
            or ERROR_LINE_RE.match(ln)
            or PROSE_LINE_RE.match(ln)
            or SHELL_LINE_RE.match(ln)
            # ``....`` standing for output left out, right before the error that ended it
            or (ELISION_RE.match(ln) and any(ERROR_LINE_RE.match(x) for x in lines[k + 1:k + 4]))
        ):
            kept = lines[:k]
            # (a label that introduces the output: "error:", "Output:", "What I get:")
            while kept and (not kept[-1].strip() or (
                    _OUTPUT_LABEL_RE.match(kept[-1]) and not _BLOCK_OPENER_RE.match(kept[-1]))):
                kept.pop()
            head = "\n".join(kept)
            tree = parse_py(head)
            if tree is not None and does_something(tree):
                return head
            return None
    return None


_OUTPUT_LABEL_RE = lazyre.compile(r"^[A-Za-z][\w '-]{0,40}:\s*$")
# A row of a numpy array as numpy prints it: brackets, then numbers (nan, inf) apart by spaces
# and no commas (a Python list has them) -- "[[ 1.  2.]", " [ 3 -56 44]]", "[nan  0.5]".
_NUM = r"[-+]?(?:\d+\.?\d*(?:e[-+]?\d+)?|\.\d+|nan|inf)"
NUMPY_ROW_RE = lazyre.compile(
    rf"^\s*\[+\s*{_NUM}(?:\s+{_NUM})+\s*\]*\s*$|^\s*\[+\s*{_NUM}\s*\]+\s*$", re.IGNORECASE)
# A comment line that labels what follows as the run's output: "# output", "# prints:", "# result"
OUTPUT_COMMENT_RE = lazyre.compile(
    r"^\s*#+\s*(?:(?:the |my )?(?:output|outputs|result|results|printed|prints|it prints|got|i get|"
    r"actual(?: output| result)?)|output is)\s*:?\s*$", re.IGNORECASE)
_BLOCK_OPENER_RE = lazyre.compile(
    r"^\s*(?:def|class|if|elif|else|for|while|with|try|except|finally|async|match|case)\b")


def python_of(text: str) -> tuple[str, ast.Module, bool] | None:
    """``text`` as Python: (code, tree, interactive), trying the usual repairs; else None."""
    text = text.replace("\u00a0", " ")
    lines = text.split("\n")
    interactive = False
    if has_prompts(lines):
        stripped = strip_prompts(lines)
        if stripped is not None:
            text, interactive = stripped, True
    code = dedent(text)
    tree = parse_py(code)
    if tree is not None:
        return code, tree, interactive
    candidates = []
    smart = code.translate(SMART)
    candidates.append(smart)
    ls = smart.split("\n")
    if len(ls) > 1:
        candidates.append(ls[0] + "\n" + textwrap.dedent("\n".join(ls[1:])))
    no_magic = "\n".join(ln for ln in ls if not re.match(r"^\s*[!%]", ln))
    candidates.append(no_magic)
    unnumbered = strip_line_numbers(ls)
    if unnumbered is not None:
        candidates.append(unnumbered)
    for cand in candidates:
        tree = parse_py(cand)
        if tree is not None:
            return dedent(cand), tree, interactive
    cut = cut_at_output(smart)
    if cut is not None:
        cut = dedent(cut)
        tree = parse_py(cut)
        if tree is not None:
            return cut, tree, interactive
    return None


def strip_line_numbers(lines: list[str]) -> str | None:
    """Code copied with its line numbers (``1 import tvm``, ``2 x = 1``): numbers off, when every
    non-blank line starts with the next number. An editor pads the numbers to one width (`` 9  x``
    over ``10 y``): that padding goes too, when the result parses. A gist's file name above
    the numbered lines (``take_oob.py``) is dropped."""
    head = next((k for k, ln in enumerate(lines) if ln.strip()), None)
    if head is not None and re.fullmatch(r"\s*[\w./-]{1,120}\.py:?\s*", lines[head]):
        lines = lines[head + 1:]
    plain = _strip_line_numbers(lines, aligned=False)
    if plain is None:
        return None
    aligned = _strip_line_numbers(lines, aligned=True)
    if aligned is not None and aligned != plain and parse_py(aligned) is not None \
            and parse_py(plain) is None:
        return aligned
    return plain


def _strip_line_numbers(lines: list[str], *, aligned: bool) -> str | None:
    width = max((len(m.group(1)) for m in map(LINE_NO_RE.match, lines) if m), default=0)
    out: list[str] = []
    expect: int | None = None
    for ln in lines:
        m = LINE_NO_RE.match(ln)
        if m is None:
            if ln.strip():
                return None
            out.append("")
            continue
        n = int(m.group(1))
        if expect is not None and n != expect:
            return None
        expect = n + 1
        rest = ln[m.end():]
        if aligned:
            pad = width - len(m.group(1))
            rest = rest[pad:] if rest[:pad] == " " * pad else rest
        out.append(rest)
    if expect is None or sum(1 for ln in out if ln.strip()) < 2:
        return None
    return textwrap.dedent("\n".join(out))


def bound_names(tree: ast.Module, *, imports: bool) -> set[str]:
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


def top_bindings(tree: ast.Module) -> set[str]:
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


def free_names(tree: ast.Module) -> set[str]:
    loads = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return loads - bound_names(tree, imports=True) - BUILTINS


def has_placeholder(tree: ast.Module) -> bool:
    """``model = ...`` or a bare ``...`` at module level: the author left something out."""
    for stmt in tree.body:
        value = None
        if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.Expr):
            value = stmt.value
        if isinstance(value, ast.Constant) and value.value is Ellipsis:
            return True
    return False
