"""A repro posted as a patch to a test file (``--- a/tests/python/...py`` / ``+++ b/...``).

Pure. Maintainers and reporters often post the regression test they would add as a diff: the
``+`` lines of a new file are the script (:func:`new_file_in_diff`); the ``+`` lines that add
whole top-level functions to an existing test file are the script too, once the imports that
file has are put in front (:func:`added_tests_in_diff`): the hunk shows the new test, not the
file's header, and the test uses the module names TVM's tests always import (``tvm``, ``te``,
``tirx``, ``np``, ...). The bot then calls the test, as pytest would
(:mod:`bot.extract.testfuncs`).
"""

from __future__ import annotations

import ast

from bot.extract.pysyntax import parse_py
from bot.vocabulary import USUAL_IMPORTS

# A comment put at the head of a script made from a patch: what the bot added, in the script.
PATCH_HEADER = "# The test this patch adds to {path}, after the imports it uses (added by the bot):"


def new_file_in_diff(text: str) -> str | None:
    """The content of the first new ``.py`` file a unified diff adds (``--- /dev/null``,
    ``+++ b/tests/test_x.py``, then ``+`` lines; other files of the diff, a C++ fix beside the
    test, are passed over), or ``None``."""
    lines = text.split("\n")
    for k, head in enumerate(lines):
        if not head.startswith("+++ ") or k == 0 or lines[k - 1].strip() != "--- /dev/null" \
                or not head.rstrip().endswith(".py"):
            continue
        body = lines[k + 1: _file_end(lines, k)]
        if not body or not body[0].startswith("@@ "):
            continue
        out = []
        for ln in body[1:]:
            if ln.startswith("+"):
                out.append(ln[1:])
            elif ln.strip():
                out = []
                break  # (context or removed lines: not a new file)
        if out:
            return "\n".join(out).rstrip("\n") + "\n"
    return None


def _file_end(lines: list[str], k: int) -> int:
    """Where the hunks of the file whose ``+++`` header is line ``k`` end."""
    return next((j for j in range(k + 1, len(lines)) if lines[j].startswith("diff --git ")
                 or (lines[j].startswith("--- ") and j + 1 < len(lines)
                     and lines[j + 1].startswith("+++ "))), len(lines))


def added_tests_in_diff(text: str) -> str | None:
    """The top-level functions a diff adds to one existing ``.py`` file, with the imports
    that file's hunks show and the usual ones the added code needs in front; ``None`` when the
    diff does not add whole functions (a changed line inside a test, a C++ fix)."""
    lines = text.split("\n")
    heads = [k for k, ln in enumerate(lines) if ln.startswith("+++ ")]
    if not heads or len(heads) > 8:
        return None
    for k in heads:
        path = lines[k][4:].strip()
        if path.startswith("b/"):
            path = path[2:]
        if not path.endswith(".py") or k == 0 or not lines[k - 1].startswith("--- ") \
                or lines[k - 1].strip() == "--- /dev/null":
            continue
        script = _added_functions(lines[k + 1:_file_end(lines, k)], path)
        if script is not None:
            return script
    return None


def _added_functions(hunks: list[str], path: str) -> str | None:
    added: list[str] = []
    context_imports: list[str] = []
    for ln in hunks:
        if ln.startswith("@@"):
            added.append("")
        elif ln.startswith("+"):
            added.append(ln[1:])
        elif ln.startswith(" ") and ln[1:].startswith(("import ", "from ")):
            context_imports.append(ln[1:])
    code = "\n".join(added).strip("\n")
    tree = parse_py(code) if code else None
    if tree is None or not any(isinstance(s, ast.FunctionDef) for s in tree.body):
        return None
    header = [*context_imports, *_usual_imports(tree, context_imports)]
    head = PATCH_HEADER.format(path=path)
    return "\n".join([head, *header, *(["", ""] if header else []), code]) + "\n"


def _usual_imports(tree: ast.Module, have: list[str]) -> list[str]:
    """The usual import lines for the module names ``tree`` uses and neither binds nor finds
    in ``have`` (``tirx`` -> ``from tvm import tirx``)."""
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {s.name for s in tree.body if isinstance(s, ast.FunctionDef | ast.ClassDef)}
    for s in ast.walk(tree):
        if isinstance(s, ast.Import | ast.ImportFrom):
            bound |= {(a.asname or a.name).split(".")[0] for a in s.names}
    have_tree = parse_py("\n".join(have)) if have else None
    if have_tree is not None:
        for s in have_tree.body:
            if isinstance(s, ast.Import | ast.ImportFrom):
                bound |= {(a.asname or a.name).split(".")[0] for a in s.names}
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    dotted = {ast.unparse(n) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    out = [line for name, line in USUAL_IMPORTS if name in used and name not in bound]
    if "tvm" in used and any(d == "tvm.testing" or d.startswith("tvm.testing.") for d in dotted) \
            and "import tvm.testing" not in have:
        out.append("import tvm.testing")
    return out
