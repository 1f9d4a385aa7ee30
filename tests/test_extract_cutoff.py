"""bot/extract/cutoff.py: a paste cut off in its last statement runs up to the statement before."""

from __future__ import annotations

import pytest

from bot.compare import account_for_cut_script, compare
from bot.extract import extract_repro
from bot.extract.cutoff import MAX_TRIES, cut_tail
from bot.models import Classification, Comment, Issue, Outcome, Reported, Verdict

HEAD = "import numpy as np\nimport tvm\nx = np.ones(3)\n"

# (name, script, the script that runs, the first line dropped)
ROWS = [
    ("a call never closed", HEAD + "y = tvm.relax.op.divide(tvm.relax.op.astype(z, dtype=\n",
     HEAD, 4),
    ("a call spread over lines, cut inside it", HEAD + "y = f(\n    1,\n    g(2,\n", HEAD, 4),
    ("a block cut inside its body", HEAD + "with tvm.transform.PassContext():\n"
     "    y = f(\n        1,\n", HEAD, 4),
    ("a def with no body at the end", HEAD + "def main():\n", HEAD, 4),
    ("a docstring never closed", HEAD + 's = """abc\nmore text\n', HEAD, 4),
    ("a string cut on the last line", HEAD + 'R.func_attr({"Composite": "relu", "Primitiv\n',
     HEAD, 4),
    ("an unterminated string mid-file: the script's own error", HEAD + 's = "abc\nprint(1)\n'
     'print(2)\nprint(3)\n', HEAD + 's = "abc\nprint(1)\nprint(2)\nprint(3)\n', 0),
    # should not cut:
    ("a whole script", HEAD + "print(x)\n", HEAD + "print(x)\n", 0),
    ("Python 2 print mid-file: the script's own error", HEAD + "print x\nprint(1)\n",
     HEAD + "print x\nprint(1)\n", 0),
    ("a typo mid-file", HEAD + "y = = 1\nprint(y)\n", HEAD + "y = = 1\nprint(y)\n", 0),
    ("nothing complete before the cut", "y = f(\n", "y = f(\n", 0),
    ("an indented block missing mid-file", HEAD + "def f():\nprint(1)\nprint(2)\nprint(3)\n",
     HEAD + "def f():\nprint(1)\nprint(2)\nprint(3)\n", 0),
]


@pytest.mark.parametrize(("name", "script", "runs", "cut_at"), ROWS, ids=[r[0] for r in ROWS])
def test_cut_tail_table(name: str, script: str, runs: str, cut_at: int) -> None:
    got, line, _ = cut_tail(script)
    assert (got, line) == (runs, cut_at)


def test_the_repro_says_where_it_was_cut() -> None:
    body = ("It fails in FuseOps:\n\n```python\n" + HEAD
            + "y = tvm.relax.op.divide(tvm.relax.op.astype(z, dtype=\n```\n")
    repro = extract_repro(Issue("[Bug] FuseOps", body, author="a"))
    assert repro.found and repro.script == HEAD and repro.cut_at == 4
    assert "cut off (line 4: '(' was never closed)" in repro.reason
    assert "up to line 3" in repro.reason


def test_a_hostile_paste_is_bounded() -> None:
    """Every prefix before the break fails to parse (each top-level line opens a bracket that
    a later line closes): at most MAX_TRIES of them are tried, and the script stays whole."""
    script = "x = f(\n" + "".join(f"y{i} = (\n" for i in range(2000)) + "".join(
        ")\n" for _ in range(2000)) + "z = g(\n"
    assert cut_tail(script) == (script, 0, "")
    assert 1 <= MAX_TRIES <= 20


PASSED = Classification(Outcome.PASSED)
FAILED = Classification(Outcome.TVM_ERROR, signature="ValueError: bad axis")
REPORTED = Reported(Outcome.INTERNAL_ERROR, signature="Check failed: x")


@pytest.mark.parametrize(("cls", "cut_at", "verdict"), [
    (PASSED, 4, Verdict.INCONCLUSIVE),  # the missing part may hold the failure
    (PASSED, 0, Verdict.NOT_REPRODUCED),  # a whole script that passes
    (FAILED, 4, Verdict.DIFFERENT_FAILURE),  # it failed before the cut: that stands
])
def test_a_cut_script_that_passes_is_inconclusive(cls: Classification, cut_at: int,
                                                  verdict: Verdict) -> None:
    got = account_for_cut_script(compare(REPORTED, cls), cls, cut_at)
    assert got.verdict == verdict
    if cut_at and cls.outcome == Outcome.PASSED:
        assert "cut off at line 4" in got.evidence[-1]


def test_a_fence_cut_off_with_the_text_is_still_the_repro() -> None:
    """The stored text ends inside the script (and its fence is never closed): the complete
    statements before the cut are the repro; an unlabelled fence counts when they import."""
    body = ("### Steps to reproduce\n\n```\nimport tvm\nfrom tvm.script import relax as R\n\n"
            "@I.ir_module\nclass Module:\n    @R.function\n    def main(x: R.Tensor((10,), "
            '"float32")):\n        R.func_attr({"Composite": "relu", "Primitiv')
    repro = extract_repro(Issue("[Bug] segfault", body, author="a"))
    assert repro.found and repro.cut_at == 4
    assert repro.script == "import tvm\nfrom tvm.script import relax as R\n"


def test_a_broken_block_that_is_not_cut_is_not_taken_for_a_cut_one() -> None:
    body = "```\nimport tvm\nx = = 1\nprint(x)\n```\n"
    repro = extract_repro(Issue("[Bug] x", body, author="a"))
    assert repro.cut_at == 0


def test_a_cut_script_from_someone_elses_comment_is_cut_too() -> None:
    """The reporter has only a fragment; a commenter posts the minimal example, and the stored
    copy ends inside a call: it runs up to its last complete statement, like the author's own."""
    cut = HEAD + "def compile_it(ic):\n    y = tvm.relax.op.nn.conv2d(\n        x,\n        kern\n"
    issue = Issue("[Bug] segfault in conv2d", "It segfaults in `compile_it(ic=16)`.", author="a",
                  comments=(Comment("b", "Here is a minimal example which still causes the "
                                    "segmentation fault:\n\n```\n" + cut + "```\n"),))
    repro = extract_repro(issue)
    assert repro.found and repro.script == HEAD and repro.cut_at == 4
