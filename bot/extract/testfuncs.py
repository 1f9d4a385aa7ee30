"""A repro pasted as pytest tests (``def test_fuse(): ...``) and never called.

Pure. TVM's own tests are written that way, and reports often paste one: run as a script it
defines the function and exits 0 without running anything. :func:`with_test_calls` appends the
calls pytest would make (each ``test_*`` function that takes no argument, in order), and says so
in the repro's note; a script that calls them itself, or has a ``__main__`` block, is left as it
is.
"""

from __future__ import annotations

import ast

from bot.extract.pysyntax import parse_py
from bot.models import Repro
from bot.records import replace

CALLS_NOTE = "the bot calls {names} at the end of the script, as pytest would"


def uncalled_tests(script: str) -> list[str]:
    """The ``test_*`` functions of ``script`` that take no argument and are never called."""
    tree = parse_py(script)
    if tree is None:
        return []
    tests = [s.name for s in tree.body if isinstance(s, ast.FunctionDef)
             and s.name.startswith("test") and _no_required_args(s)]
    if not tests or any(_is_main_block(s) for s in tree.body):
        return []
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    used |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    return [t for t in tests if t not in used]


def with_test_calls(repro: Repro) -> Repro:
    """``repro`` with its uncalled tests called at the end (see the module docstring)."""
    if not repro.found:
        return repro
    tests = uncalled_tests(repro.script)
    if not tests:
        return repro
    calls = "".join(f"{t}()\n" for t in tests)
    script = repro.script.rstrip("\n") + "\n\n" + calls
    names = ", ".join(f"`{t}()`" for t in tests)
    note = "The script only defines tests: " + CALLS_NOTE.format(names=names) + "."
    return replace(repro, script=script,
                   reason=f"{repro.reason} {note}".strip() if repro.reason else note)


def _no_required_args(f: ast.FunctionDef) -> bool:
    a = f.args
    required = len(a.posonlyargs) + len(a.args) - len(a.defaults)
    kw_required = sum(d is None for d in a.kw_defaults)
    return required == 0 and kw_required == 0 and not any(
        isinstance(d, ast.Call) and "parametrize" in ast.unparse(d.func) for d in f.decorator_list
    )


def _is_main_block(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.If) and "__main__" in ast.unparse(stmt.test)
