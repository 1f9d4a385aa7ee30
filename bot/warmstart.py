"""When may a warm start be used? (pure: ``ast`` on text, no I/O)

``reprobot triage`` starts the sandbox before the issue is read: its interpreter performs some
imports (the *preload*) and waits for the script. That start is exactly a cold run of the
script when the preload is the beginning of what the script itself does first: its leading
import statements, in their order (import order matters: real TVM bugs depend on it).

* :func:`leading_imports` — a script's first statements that are imports (after a docstring
  and ``from __future__`` imports), each as the import machinery performs it: ``(module,
  fromlist)`` (``import a.b as c`` -> ``("a.b", ())``; ``from a import b, c`` -> ``("a",
  ("b", "c"))``; ``import a, b`` -> two).
* :func:`guess_preload` — before the issue is parsed: the leading imports of its first fenced
  code block when they import tvm, else ``import tvm`` alone. Only a guess (cheap: string
  search and ``ast``, which the process has loaded already); :func:`warm_start_eligible` decides.
* :func:`warm_start_eligible` — the preload imports tvm and is a prefix of the script's leading
  imports (its last entry may be only the start of the script's statement: ``import tvm``
  preloaded is what ``import tvm.relax`` or ``from tvm import te`` does first).
"""

from __future__ import annotations

import _ast as ast  # what ast.py wraps (its node classes, the parser): ast.py costs 3 ms
from collections.abc import Sequence

Import = tuple[str, tuple[str, ...]]  # (module, fromlist)

IMPORT_TVM: tuple[Import, ...] = (("tvm", ()),)
MAX_PRELOAD = 32  # statements


def _is_tvm(module: str) -> bool:
    return module == "tvm" or module.startswith("tvm.")


def leading_imports(script: str) -> tuple[Import, ...] | None:
    """See the module docstring; None when the script does not parse (it never starts)."""
    try:
        tree = compile(script, "<script>", "exec", ast.PyCF_ONLY_AST)  # = ast.parse
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(tree, ast.Module):
        return None
    body = list(tree.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # the module docstring
    while body and isinstance(body[0], ast.ImportFrom) and body[0].module == "__future__":
        body = body[1:]
    out: list[Import] = []
    for stmt in body:
        if isinstance(stmt, ast.Import):
            out += [(alias.name, ()) for alias in stmt.names]
        elif isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module \
                and stmt.module != "__future__":
            out.append((stmt.module, tuple(alias.name for alias in stmt.names)))
        else:
            break
    return tuple(out)


def _first_fenced_block(text: str) -> str:
    for fence in ("```", "~~~"):
        start = text.find(fence)
        if start < 0:
            continue
        body = text.find("\n", start)
        end = text.find(fence, body + 1) if body >= 0 else -1
        if body >= 0 and end > body:
            return text[body + 1:end]
    return ""


def guess_preload(text: str) -> tuple[Import, ...]:
    """What a warm start should import, guessed from the raw issue text (see the docstring)."""
    lead = leading_imports(_first_fenced_block(text)) or ()
    lead = lead[:MAX_PRELOAD]
    return lead if any(_is_tvm(module) for module, _ in lead) else IMPORT_TVM


def warm_start_eligible(script: str, preload: Sequence[Import] = IMPORT_TVM) -> bool:
    """Is a sandbox that ran ``preload`` before the script was known exactly a cold start of
    ``script``? (See the module docstring.)"""
    lead = leading_imports(script)
    preload = tuple((m, tuple(f)) for m, f in preload)
    if not lead or not preload or len(preload) > len(lead):
        return False
    if not any(_is_tvm(module) for module, _ in preload):
        return False
    *exact, last = preload
    if tuple(exact) != lead[:len(exact)]:
        return False
    theirs = lead[len(exact)]
    if last == theirs:
        return True
    module, fromlist = last
    return not fromlist and (theirs[0] == module or theirs[0].startswith(module + "."))
