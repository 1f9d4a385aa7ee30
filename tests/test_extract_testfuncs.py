"""bot.extract.testfuncs: a repro pasted as pytest tests that are never called."""

from __future__ import annotations

import pytest

from bot.extract import extract_repro
from bot.extract.testfuncs import uncalled_tests
from bot.models import Issue

BODY = "import tvm\n\n\ndef test_fuse():\n    assert tvm.IRModule() is not None\n"


@pytest.mark.parametrize(
    ("script", "tests"),
    [
        (BODY, ["test_fuse"]),
        (BODY + "\n\ndef test_other(x=1):\n    pass\n", ["test_fuse", "test_other"]),
        # called already, or run through a __main__ block: left as it is
        (BODY + "\ntest_fuse()\n", []),
        (BODY + '\nif __name__ == "__main__":\n    tvm.testing.main()\n', []),
        # a fixture argument: pytest would have to supply it
        ("def test_x(target):\n    pass\n", []),
        ('import pytest\n@pytest.mark.parametrize("n", [1, 2])\ndef test_x(n=1):\n    pass\n', []),
        ("def helper():\n    pass\n", []),
        ("def test_broken(:\n", []),
    ],
)
def test_uncalled_tests(script: str, tests: list[str]) -> None:
    assert uncalled_tests(script) == tests


def test_the_repro_calls_its_tests_and_says_so() -> None:
    repro = extract_repro(Issue("[Bug] fuse fails", "```python\n" + BODY + "```\n", author="a"))
    assert repro.found
    assert repro.script.rstrip().endswith("test_fuse()")
    assert "calls `test_fuse()` at the end of the script, as pytest would" in repro.reason
