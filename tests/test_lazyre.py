"""bot.lazyre: a pattern compiled on first use behaves as re.compile's, and every module-level
pattern of the bot is valid (a bad one would otherwise fail only when a report first reaches it)."""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
import sys

import pytest

import bot
from bot import lazyre

TEXT = "Check failed: x == y\nTVMError: bad\n  File \"a.py\", line 3, in f\n"

CALLS = [
    ("match", (r"Check (\w+)", TEXT)),
    ("search", (r"TVMError: (\w+)", TEXT)),
    ("fullmatch", (r"[a-z]+", "abc")),
    ("findall", (r"\b\w+Error\b", TEXT)),
    ("sub", (r"\d+", "N", TEXT)),
    ("subn", (r"\d+", "N", TEXT)),
    ("split", (r"\n", TEXT)),
]


@pytest.mark.parametrize(("method", "args"), CALLS, ids=[c[0] for c in CALLS])
def test_each_method_gives_what_re_gives(method: str, args: tuple[str, ...]) -> None:
    source, *rest = args
    lazy = lazyre.compile(source, re.M)
    eager = re.compile(source, re.M)
    first = getattr(lazy, method)(*rest)
    again = getattr(lazy, method)(*rest)  # now the compiled pattern's own method
    expected = getattr(eager, method)(*rest)
    if isinstance(expected, re.Match):
        assert first is not None and again is not None
        assert (first.span(), first.groups()) == (again.span(), again.groups()) \
            == (expected.span(), expected.groups())
    else:
        assert first == again == expected


def test_finditer_and_attributes() -> None:
    lazy = lazyre.compile(r"(?P<kind>\w+)Error", re.I)
    assert [m.group("kind") for m in lazy.finditer(TEXT)] == ["TVM"]
    assert lazy.pattern == r"(?P<kind>\w+)Error"
    assert lazy.groups == 1 and lazy.groupindex == {"kind": 1}
    assert lazy.flags & re.I


def test_nothing_is_compiled_before_first_use() -> None:
    lazy = lazyre.compile(r"(unbalanced")  # invalid: the error comes at first use, not here
    assert isinstance(lazy, lazyre.Pattern)
    with pytest.raises(re.error):
        lazy.search("x")


def _module_patterns() -> list[tuple[str, lazyre.Pattern]]:
    found = []
    for info in pkgutil.walk_packages(bot.__path__, "bot."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            values = value if isinstance(value, tuple | list) else (value,)
            for v in values:
                if isinstance(v, lazyre.Pattern) and type(v).__module__ == "bot.lazyre":
                    found.append((f"{info.name}.{name}", v))
    return found


def test_every_module_pattern_of_the_bot_compiles() -> None:
    patterns = _module_patterns()
    assert len(patterns) > 150  # the walk reached the vocabulary, tracebacks, extractor, ...
    bad = []
    for where, pattern in patterns:
        try:
            pattern.compiled  # noqa: B018 (compiling is the check)
        except re.error as e:
            bad.append(f"{where}: {e}")
    assert not bad


def test_importing_the_pipeline_compiles_none_of_the_bots_patterns() -> None:
    """What `reprobot triage` imports beside the running script: the compiles wait for use."""
    probe = (
        "import bot.plan, bot.pipeline, bot.classify, bot.reported, bot.render\n"
        "from bot import lazyre\n"
        "import gc\n"
        "done = [p.pattern for p in gc.get_objects() if isinstance(p, lazyre.Pattern)"
        " and 'match' in vars(p)]\n"
        "made = sum(isinstance(p, lazyre.Pattern) for p in gc.get_objects())\n"
        "print(made, len(done))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.split()
    made, compiled = int(out[0]), int(out[1])
    assert made > 150
    assert compiled == 0


def test_no_module_of_the_bot_compiles_a_pattern_at_import() -> None:
    """A module-level ``re.compile`` costs every triage its compile, used or not: the rule is
    ``lazyre.compile`` there (inside a function, ``re.compile`` is fine)."""
    import ast
    from pathlib import Path

    eager = []
    for path in sorted(Path(bot.__file__).parent.rglob("*.py")):
        tree = ast.parse(path.read_text())
        in_functions = {
            id(node)
            for fn in ast.walk(tree)
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            for node in ast.walk(fn)
        }
        eager += [
            f"{path.name}:{node.lineno}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "compile" and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re" and id(node) not in in_functions
        ]
    assert not eager
