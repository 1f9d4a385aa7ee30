"""Is the script a whole program, or a fragment of one?

Pure static analysis with :mod:`ast` (never a regex over code):

* :func:`unbound_names` — the names a script reads but never binds anywhere: not at module
  level, not in any function or class, not as a parameter, loop target, ``import``, ``with ..
  as``, ``except .. as``, comprehension variable, walrus target, ``match`` capture, ``global``
  or ``del``; not a builtin, not a module dunder (``__file__``), and not a module's usual name
  (``tvm``, ``tir``, ``np``: a forgotten import is the script's own slip, not a missing part). A script that reads ``mod``
  and never builds it is a fragment of a longer program (a function body pasted alone, a
  snippet after the model was built). ``sure`` is false when the script can bind names the
  analysis cannot see (``from x import *``, ``exec``, ``globals()``, ``setattr`` on a module,
  ``builtins.x = ...``): then only the run's own ``NameError`` can tell.
* :func:`imports_only` — a script that only imports (and maybe prints versions): it runs
  nothing that could show a bug.

:mod:`bot.classify` combines these with what the run did.
"""

from __future__ import annotations

import ast
import builtins
import functools

from bot import lazyre
from bot.records import record
from bot.vocabulary import MODULE_ALIASES

_WORD_RE = lazyre.compile(r"[A-Za-z_]\w*")

# Names a script run as ``python repro.py`` has without binding them.
_MODULE_DUNDERS = frozenset(
    {
        "__file__",
        "__name__",
        "__doc__",
        "__spec__",
        "__loader__",
        "__package__",
        "__builtins__",
        "__annotations__",
        "__cached__",
        "__dict__",
        "__class__",  # implicit in methods
        "__debug__",
        "__path__",
    }
)
# Names of another Python or an interactive shell: a NameError on one is the script's own
# (it targets Python 2, or a notebook), not a missing part of the repro.
_OTHER_PYTHON_NAMES = frozenset(
    {
        "xrange",
        "unicode",
        "basestring",
        "long",
        "raw_input",
        "reduce",
        "unichr",
        "execfile",
        "file",
        "reload",
        "cmp",
        "buffer",
        "apply",
        "intern",
        "coerce",
        "get_ipython",
        "display",
        "In",
        "Out",
    }
)
_BUILTINS = frozenset(dir(builtins)) | {"exit", "quit", "copyright", "credits", "license"}
# Calls that bind names the analysis cannot see.
_DYNAMIC_CALLS = frozenset({"exec", "eval", "globals", "locals", "vars", "execfile", "__import__"})


@record
class Unbound:
    """Names a script reads and never binds, in the order of their first use."""

    names: tuple[str, ...] = ()
    # Read by a statement that runs when the module runs (not only inside a function body).
    module_level: tuple[str, ...] = ()
    # False when the script may bind names dynamically (star import, exec, globals(), ...).
    sure: bool = True
    # String constants of the script (a dynamically bound name may be spelled in one).
    strings: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.names)


class _Scan(ast.NodeVisitor):
    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.aliased: set[str] = set()  # ``numpy`` of ``import numpy as np``: a typo's target
        self.loads: list[tuple[str, bool]] = []  # (name, at module level)
        self.dynamic = False
        self.strings: set[str] = set()
        self._depth = 0  # function/lambda nesting: 0 = runs when the module runs

    # Bindings -------------------------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.loads.append((node.id, self._depth == 0))
        else:  # Store, Del: a del implies the name was bound
            self.bound.add(node.id)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        if not isinstance(node, ast.Lambda):
            self.bound.add(node.name)
            for d in node.decorator_list:
                self.visit(d)
        args = node.args
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
            if a is not None:
                self.bound.add(a.arg)
                if a.annotation is not None:
                    self._annotation(a.annotation)
        if not isinstance(node, ast.Lambda) and node.returns is not None:
            self._annotation(node.returns)
        for default in (*args.defaults, *args.kw_defaults):
            if default is not None:
                self.visit(default)
        self._depth += 1
        body = node.body if isinstance(node.body, list) else [node.body]
        for stmt in body:
            self.visit(stmt)
        self._depth -= 1

    def _annotation(self, node: ast.expr) -> None:
        # Annotations are often never evaluated (``from __future__ import annotations``,
        # TVMScript reads them itself): their names count, but not as module-level reads.
        self._depth += 1
        self.visit(node)
        self._depth -= 1

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.target)
        self._annotation(node.annotation)
        if node.value is not None:
            self.visit(node.value)

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function
    visit_Lambda = _function

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.bound.add(node.name)
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self.bound.add(a.asname or a.name.split(".")[0])
            if a.asname:
                self.aliased.add(a.name.split(".")[-1])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for a in node.names:
            if a.name == "*":
                self.dynamic = True
            else:
                self.bound.add(a.asname or a.name)

    def visit_Global(self, node: ast.Global) -> None:
        self.bound.update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.bound.update(node.names)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name:
            self.bound.add(node.name)
        self.generic_visit(node)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.name:
            self.bound.add(node.name)
        self.generic_visit(node)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self.bound.add(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        if node.rest:
            self.bound.add(node.rest)
        self.generic_visit(node)

    # Dynamic binding --------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        if isinstance(f, ast.Name) and f.id in _DYNAMIC_CALLS:
            self.dynamic = True
        if isinstance(f, ast.Name) and f.id == "setattr" and node.args:
            self.dynamic = True
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        # builtins.x = ..., sys.modules[...], __builtins__.x = ...
        if isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name) and (
            node.value.id in {"builtins", "__builtins__", "__main__"}
        ):
            self.dynamic = True
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str) and len(node.value) < 200:
            self.strings.add(node.value)


def _parse(script: str) -> ast.Module | None:
    try:
        return ast.parse(script)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def unbound_names(script: str) -> Unbound:
    """The names ``script`` reads and never binds anywhere (see the module docstring)."""
    tree = _parse(script)
    if tree is None:
        return Unbound(sure=False)
    scan = _Scan()
    try:
        scan.visit(tree)
    except RecursionError:
        return Unbound(sure=False)
    names: list[str] = []
    module_level: list[str] = []
    for name, top in scan.loads:
        if name in scan.bound or _known(name) or _misspelt(name, scan.bound | scan.aliased):
            continue
        if name not in names:
            names.append(name)
        if top and name not in module_level:
            module_level.append(name)
    return Unbound(
        tuple(names), tuple(module_level), sure=not scan.dynamic, strings=frozenset(scan.strings)
    )


def _misspelt(name: str, bound: set[str]) -> bool:
    """``name`` is a slip of the keyboard for a name the script binds (``expectd`` for
    ``expected``, ``x_np`` for ``x_nd``): the script's own typo, not a part left out. Close as
    Python's own "Did you mean" measures it: an edit distance with moves costing 2 and a change
    of case 1, at most (len(a) + len(b) + 3) / 3."""
    if len(name) >= 3 and any(_abbreviates(name, b) for b in bound):
        return True
    if len(name) >= 4 and any(_suffixed(name, b) for b in bound):
        return True
    if len(name) < 4:
        return False  # (``mod`` beside ``mods``, ``x`` beside ``y``: other names, not slips)
    return any(abs(len(name) - len(b)) <= 1 and len(b) >= 3
               and b.rstrip("0123456789_s") != name.rstrip("0123456789_s")
               and _distance(name, b) <= (len(name) + len(b) + 3) * 2 // 6 for b in bound)


def _suffixed(name: str, bound: str) -> bool:
    """``block`` for ``block_c``, ``data`` for ``data_1``: the bound name is this one with a
    short suffix after an underscore (a variable renamed, one use left behind), as Python's own
    "Did you mean" finds it."""
    return bound.startswith(name + "_") and len(bound) - len(name) <= 3


def _abbreviates(name: str, bound: str) -> bool:
    """``blk`` for ``block``, ``tgt`` for ``target``: the bound name's letters in order,
    the first one first, a few left out in the middle -- not a prefix of it (``mod`` beside
    ``module`` is another name a longer program binds)."""
    if not 0 < len(bound) - len(name) <= 3 or bound[0] != name[0] or bound.startswith(name):
        return False
    it = iter(bound)
    return all(ch in it for ch in name)


def _distance(a: str, b: str) -> int:
    prev = list(range(0, 2 * len(b) + 1, 2))
    for i, ca in enumerate(a, 1):
        cur = [2 * i]
        for j, cb in enumerate(b, 1):
            sub = 0 if ca == cb else 1 if ca.lower() == cb.lower() else 2
            cur.append(min(prev[j] + 2, cur[j - 1] + 2, prev[j - 1] + sub))
        prev = cur
    return prev[-1]


def never_bound(script: str, name: str) -> bool:
    """The script reads ``name`` and binds it nowhere, not even dynamically (a star import
    cannot have bound it when the run raised ``NameError`` for it; an ``exec`` or
    ``globals()[...]`` that spells it may have)."""
    u = unbound_names(script)
    if name not in u.names:
        return False
    return u.sure or not any(name in _WORD_RE.findall(s) for s in u.strings)


def bound_only_in_functions(script: str, name: str) -> bool:
    """``name`` is a parameter or local of the script's functions and nothing at module level
    binds it (no assignment, import, def, loop or ``with`` target outside a function body, no
    ``global`` declaration): ``db = tune(mod, params)`` at module level, where only ``def
    tune(mod, params)`` names them, reads what the left-out part of the program built."""
    tree = _parse(script)
    if tree is None or _known(name):
        return False
    inside = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Global | ast.Nonlocal) and name in node.names:
            return False
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            args = node.args
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs,
                     *([args.vararg] if args.vararg else []), *([args.kwarg] if args.kwarg else [])]
            inside = inside or any(a.arg == name for a in every)
    stack: list[ast.AST] = list(tree.body)
    while stack:  # module level: every statement, not descending into function bodies
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node.name == name:
                return False
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del) \
                and node.id == name:
            return False
        if isinstance(node, ast.Import | ast.ImportFrom) and any(
                (a.asname or a.name).split(".")[0] == name for a in node.names):
            return False
        if isinstance(node, ast.ExceptHandler) and node.name == name:
            return False
        stack.extend(ast.iter_child_nodes(node))
    return inside


def read_before_bound(script: str, name: str) -> bool:
    """At module level, the statement that first binds ``name`` reads it first (``mod =
    seq(mod)`` with no ``mod`` above): the value comes from a part of a longer program that
    is not there, whatever the statements above do. (Read in one statement and bound in a
    later one is the script's own ordering bug, not a fragment.)"""
    tree = _parse(script)
    if tree is None or _known(name):
        return False
    bound_before: set[str] = set()
    for stmt in tree.body:
        scan = _Scan()
        try:
            scan.visit(stmt)
        except RecursionError:
            return False
        if name in _read_before_bound(stmt, bound_before):
            return True
        if name in scan.bound:
            return False
        bound_before |= scan.bound
    return False


@functools.lru_cache(maxsize=16)
def fragment_at_start(script: str) -> tuple[str, ...]:
    """The never-bound names a script reads before it runs anything: the first module-level
    statement that reads one comes before any statement that calls something (only imports,
    definitions and constant assignments above it). Such a script certainly stops on that
    ``NameError`` before it reaches TVM, so it is a fragment without running it. Empty when
    not (when unsure, or a call comes first: then the run decides)."""
    u = unbound_names(script)
    tree = _parse(script)
    if not u.sure or tree is None:
        return ()
    never = set(u.module_level)
    forgot = _forgotten_imports(tree)
    bound_before: set[str] = set()
    for stmt in tree.body:
        scan = _Scan()
        try:
            scan.visit(stmt)
            here = [n for n, top in scan.loads if top and n in never]
            if not here:
                here = _read_before_bound(stmt, bound_before)
        except RecursionError:
            return ()
        if here:
            return tuple(dict.fromkeys([*here, *u.module_level]))
        if _calls_at_module_level(stmt) and not forgot:
            return ()
        # (with its imports forgotten the script stops at its first use of a module anyway:
        # what matters is whether the imports are all it lacks, so the scan goes on)
        bound_before |= scan.bound
    return ()


def _forgotten_imports(tree: ast.Module) -> bool:
    """The script reads a module's usual name (``tvm``, ``relax``, ``np``) at module level and
    imports or binds it nowhere: a paste without its import lines."""
    scan = _Scan()
    try:
        scan.visit(tree)
    except RecursionError:
        return False
    return any(top and n in MODULE_ALIASES and n not in scan.bound for n, top in scan.loads)


def _read_before_bound(stmt: ast.stmt, bound_before: set[str]) -> list[str]:
    """``mod = relax.transform.LegalizeOps()(mod)`` with no ``mod`` above: the value is read
    before the assignment binds it (the classic fragment cut from a longer program)."""
    if isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign) and stmt.value is not None:
        value = _Scan()
        value.visit(stmt.value)
        targets = _Scan()
        for t in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
            targets.visit(t)
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            value.loads.append((stmt.target.id, True))  # ``x += 1`` reads x first
        return [n for n, top in value.loads
                if top and n in targets.bound and n not in bound_before and not _known(n)]
    if isinstance(stmt, ast.With | ast.If | ast.For | ast.While | ast.Try):
        # (``with PassContext(): mod = seq(mod)``: the body runs at module level too)
        seen = set(bound_before)
        head: list[ast.AST] = []
        if isinstance(stmt, ast.With):
            head = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
        elif isinstance(stmt, ast.For):
            head = [stmt.target]
        for h in head:
            sc = _Scan()
            sc.visit(h)
            seen |= sc.bound
        inner = [*stmt.body, *getattr(stmt, "orelse", []), *getattr(stmt, "finalbody", [])]
        for sub in inner[:200]:
            got = _read_before_bound(sub, seen)
            if got:
                return got
            sc = _Scan()
            sc.visit(sub)
            seen |= sc.bound
    return []


def _known(name: str) -> bool:
    """A name a script may read without binding it: a builtin, a module dunder, another
    Python's or a notebook's name, or a module's usual name (a forgotten import: the script's
    own slip, not a missing part)."""
    return (name in _BUILTINS or name in _MODULE_DUNDERS or name in _OTHER_PYTHON_NAMES
            or name in MODULE_ALIASES or (name.startswith("__") and name.endswith("__")))


def _calls_at_module_level(stmt: ast.stmt) -> bool:
    """``stmt`` calls something when the module runs (function and class bodies do not run;
    their decorators and default values do)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
        exprs: list[ast.AST] = [*stmt.decorator_list, *stmt.args.defaults,
                                *(d for d in stmt.args.kw_defaults if d is not None)]
    elif isinstance(stmt, ast.ClassDef):
        exprs = [*stmt.decorator_list, *stmt.bases, *stmt.keywords, *stmt.body]
    else:
        exprs = [stmt]
    for e in exprs:
        for sub in ast.walk(e):
            if isinstance(sub, ast.Call | ast.Subscript | ast.BinOp | ast.With | ast.AsyncWith):
                return True
    return False


def quoted_names(names: tuple[str, ...], limit: int = 6) -> str:
    """```mod`, `x` and 3 more``: names as the comment lists them."""
    shown = ", ".join(f"`{n}`" for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def fragment_reason(names: tuple[str, ...]) -> str:
    """What the comment says of a fragment that uses ``names`` and never defines them."""
    it = "them" if len(names) > 1 else "it"
    return (
        f"The script uses {quoted_names(names)} that the issue never defines: it is part of a "
        f"longer program. Please add the code that defines {it} (or a complete script), so the "
        "bot can run it."
    )


# --------------------------------------------------------------------------------------------
# Import-only scripts

# Calls an environment check makes without running anything that could show a bug.
_HARMLESS_CALLS = frozenset(
    {"print", "str", "repr", "dir", "type", "len", "hasattr", "getattr", "vars", "id", "format"}
)


def _harmless_expr(node: ast.expr) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            f = sub.func
            if not (isinstance(f, ast.Name) and f.id in _HARMLESS_CALLS) and not (
                isinstance(f, ast.Attribute)
                and f.attr in {"append", "insert", "filterwarnings", "simplefilter", "format"}
            ):
                return False
        elif isinstance(sub, (ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
            return False
    return True


def _harmless_stmt(stmt: ast.stmt) -> bool:
    if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.Pass)):
        return True
    if isinstance(stmt, ast.Expr):
        return _harmless_expr(stmt.value)
    if isinstance(stmt, ast.Assign):
        # os.environ["X"] = "1", TVM_HOME = "/opt/tvm"
        return isinstance(stmt.value, ast.Constant) and all(
            isinstance(t, (ast.Name, ast.Subscript, ast.Attribute)) for t in stmt.targets
        )
    if isinstance(stmt, ast.Try):
        return all(_harmless_stmt(s) for s in (*stmt.body, *stmt.orelse, *stmt.finalbody)) and all(
            _harmless_stmt(s) for h in stmt.handlers for s in h.body
        )
    if isinstance(stmt, ast.If):
        return all(_harmless_stmt(s) for s in (*stmt.body, *stmt.orelse))
    return False


def imports_only(script: str) -> tuple[str, ...]:
    """The modules a script imports when importing (plus printing) is all it does; ``()``
    when it does anything more (or imports nothing, or does not parse)."""
    tree = _parse(script)
    if tree is None or not tree.body:
        return ()
    if not all(_harmless_stmt(s) for s in tree.body):
        return ()
    mods: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            mods.append(node.module)
    return tuple(dict.fromkeys(mods))


def unused_module(script: str) -> str:
    """The name of a TVMScript module or function the script defines at the top level
    (``@I.ir_module class Conv``, ``@T.prim_func def f``) and never uses, or "": with a name
    it reads and never binds (``LegalizeOps()(mod)``), the module it wrote is what it meant --
    a slip of the script's own, not a part left out."""
    tree = _parse(script)
    if tree is None:
        return ""
    loaded = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    for node in tree.body:
        if not isinstance(node, ast.ClassDef | ast.FunctionDef) or node.name in loaded:
            continue
        for dec in node.decorator_list:
            target = dec.func if isinstance(dec, ast.Call) else dec
            name = target.attr if isinstance(target, ast.Attribute) else \
                target.id if isinstance(target, ast.Name) else ""
            if name in ("ir_module", "prim_func", "function"):
                return node.name
    return ""
