"""Imports point down: ``bot`` never imports ``tasks`` (only the entry points, ``bot/cli.py``
and ``bot/entry.py``, compose them). Checked on the source, so a lazy import inside a function counts too."""

from __future__ import annotations

import ast
from pathlib import Path

BOT = Path(__file__).resolve().parents[1] / "bot"
COMPOSITION_ROOT = {"cli.py", "entry.py"}


def imports_of(path: Path) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


def test_bot_never_imports_tasks() -> None:
    offenders = {}
    for path in sorted(BOT.rglob("*.py")):
        if str(path.relative_to(BOT)) in COMPOSITION_ROOT:
            continue
        bad = sorted(m for m in imports_of(path) if m == "tasks" or m.startswith("tasks."))
        if bad:
            offenders[str(path.relative_to(BOT))] = bad
    assert offenders == {}


def test_the_check_sees_a_lazy_import(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from tasks.runner import run_script\n    import tasks.app\n")
    assert imports_of(f) == {"tasks.runner", "tasks.app"}
