"""parse_reported(): what the reporter saw, from synthetic issues in the shapes real ones have."""

from __future__ import annotations

import pytest

from bot.models import Comment, Issue, Outcome, Repro
from bot.reported import parse_reported

SCRIPT = """import tvm
from tvm import relax
mod = build_something()
print(mod)  # crashes here with a segfault
"""
REPRO = Repro(found=True, script=SCRIPT, blocks=("body#0",), shape="fenced")
NONE = Repro(found=False, reason="no code")


def body(text: str) -> str:
    return f"Steps:\n\n```python\n{SCRIPT}```\n\n{text}\n"


# (title, text after the repro, expected outcome, expected piece of the signature)
TABLE = [
    (
        "[Bug] crash",
        "### Actual behavior\n```\nfree(): invalid pointer\nAborted (core dumped)\n```",
        Outcome.CRASH,
        "free(): invalid pointer",
    ),
    (
        "[Bug] x",
        "It shows\n\nSegmentation fault (core dumped)",
        Outcome.CRASH,
        "Segmentation fault (core dumped)",
    ),
    (
        "[Bug] x",
        "The process exits with LASTEXITCODE=-1073740940 (heap corruption).",
        Outcome.CRASH,
        "-1073740940",
    ),
    ("[Bug] x", "Exit code 0xC0000005 on Windows.", Outcome.CRASH, "0xC0000005"),
    ("[Bug] x", "python repro.py; echo $? prints 139", Outcome.CRASH, "139"),
    ("[Bug] x", "The subprocess returned -11.", Outcome.CRASH, "-11"),
    (
        "[Bug] x",
        "Process finished with exit code 139 (interrupted by signal 11: SIGSEGV)",
        Outcome.CRASH,
        "SIGSEGV",
    ),
    (
        "[Bug] x",
        "```\nFatal Python error: Aborted\n```",
        Outcome.CRASH,
        "Fatal Python error: Aborted",
    ),
    ("[Bug] Passing a wrong Tensor to build segfaults", "See above.", Outcome.CRASH, "segfaults"),
    ("[Bug] kernel fails (SIGSEGV)", "Calling it dies.", Outcome.CRASH, "SIGSEGV"),
    (
        "[Bug] x",
        '```\nTraceback (most recent call last):\n  File "a.py", line 3, in <module>\n'
        "tvm.error.InternalError: Traceback (most recent call last):\n  0: foo\n"
        "InternalError: Check failed: (StructuralEqual()(a, b)) is false: Inconsistent buffers\n```",
        Outcome.INTERNAL_ERROR,
        "Check failed: (StructuralEqual()(a, b)) is false: Inconsistent buffers",
    ),
    (
        "[Bug] x",
        "The error you get:\n\ntvm._ffi.base.TVMError: [01:49:08] /src/relay/type_infer.cc:492: "
        "Check failed: checked_type.as<IncompleteTypeNode>() == nullptr Cannot resolve type",
        Outcome.INTERNAL_ERROR,
        "Check failed: checked_type.as<IncompleteTypeNode>() == nullptr",
    ),
    (
        "[Bug] x",
        "```\nAssertionError:\nNot equal to tolerance rtol=1e-05, atol=1e-05\n\n"
        "Mismatched elements: 3 / 8 (37.5%)\nMax absolute difference: 0.5\n```",
        Outcome.WRONG_RESULT,
        "Mismatched elements: 3 / 8 (37.5%)",
    ),
    (
        "[Bug] x",
        '```\nTraceback (most recent call last):\n  File "r.py", line 2, in <module>\n'
        "    import torch\nModuleNotFoundError: No module named 'torch'\n```",
        Outcome.MISSING_DEPENDENCY,
        "No module named 'torch'",
    ),
    (
        "[Bug] Failed to import",
        "AttributeError: module 'tvm.ir._ffi_api' has no attribute 'RegisterOpAttr'",
        Outcome.API_MISMATCH,
        "RegisterOpAttr",
    ),
    (
        "[Bug] x",
        "ImportError: cannot import name 'relay' from 'tvm'",
        Outcome.API_MISMATCH,
        "relay",
    ),
    (
        "[Bug] x",
        "### Actual behavior\n\n```\nerror: pad() got multiple values for argument 'pad_width'\n```",
        Outcome.TVM_ERROR,
        "pad() got multiple values for argument 'pad_width'",
    ),
    (
        "[Bug] x",
        "```\ntvm.error.DiagnosticError: Traceback (most recent call last):\n  1: x\n"
        "ValueError: Cannot find the variable n\n```",
        Outcome.TVM_ERROR,
        "ValueError: Cannot find the variable n",
    ),
    (
        "[Bug] x",
        "I get `NameError: name 'T' is not defined`... wait, output:\n\nNameError: name 'T' is not defined",
        Outcome.PYTHON_ERROR,
        "NameError",
    ),
    (
        "[Bug] x",
        "The result of the compiled module is wrong: it differs from numpy.",
        Outcome.WRONG_RESULT,
        "wrong",
    ),
    (
        "[Bug] Inconsistent results between llvm and c targets",
        "See the script.",
        Outcome.WRONG_RESULT,
        "Inconsistent results",
    ),
    (
        "[Bug] Expressions cannot be simplified correctly",
        "Only one of them works.",
        Outcome.WRONG_RESULT,
        "correctly",
    ),
    (
        "[Bug] matmul returns uninitialized memory",
        "The output contains garbage values.",
        Outcome.WRONG_RESULT,
        "garbage",
    ),
    (
        "[Bug] parser",
        "This program fails to parse with the current parser.",
        Outcome.TVM_ERROR,
        "fails to parse",
    ),
    (
        "[Bug] tuning",
        "After the first trial the process hangs forever at 0% CPU.",
        Outcome.TIMEOUT,
        "hangs",
    ),
    (
        "[Bug] x",
        "Building it I got `ValueError: Cannot find the buffer A` on the second call.",
        Outcome.TVM_ERROR,
        "ValueError: Cannot find the buffer A",
    ),
    (
        "[Bug] ValueError: vectorize fails for odd extents",
        "Nothing else to add.",
        Outcome.TVM_ERROR,
        "ValueError: vectorize fails for odd extents",
    ),
    (
        "[Bug] x",
        "```\nfree(): double free detected in tcache 2\nAborted\n```",
        Outcome.CRASH,
        "double free",
    ),
    (
        "[Bug] build aborts",
        "The build aborts with:\n\nInternalError: Check failed: (x) is false: y",
        Outcome.INTERNAL_ERROR,
        "Check failed: (x) is false: y",
    ),
    (
        "Why is the loop split twice?",
        "I ran the snippet above and it works, but I do not understand the IR.",
        Outcome.PASSED,
        "",
    ),
]


@pytest.mark.parametrize(("title", "text", "outcome", "sig"), TABLE)
def test_reported_table(title: str, text: str, outcome: Outcome, sig: str) -> None:
    got = parse_reported(Issue(title=title, body=body(text), author="alice"), REPRO)
    assert got is not None
    assert got.outcome == outcome, got
    assert sig in got.signature
    assert got.evidence, "the lines that decided it are quoted"


def test_lines_of_the_repro_itself_are_not_a_report() -> None:
    # The only "segfault" is a comment inside the repro script.
    got = parse_reported(Issue(title="[Bug] Relax module", body=body(""), author="a"), REPRO)
    assert got is None


def test_nothing_reported_and_no_repro_is_recorded_as_no_repro() -> None:
    template = (
        "<!-- Please describe the bug. Errors, crashes and segfaults go here -->\n"
        "### Expected behavior\n\nWhat you were expecting\n\n### Actual behavior\n\nWhat actually happened\n"
    )
    got = parse_reported(Issue(title="[Bug] Error when importing tvm", body=template), NONE)
    assert got is not None and got.outcome == Outcome.NO_REPRO


def test_a_real_error_without_a_repro_still_counts() -> None:
    got = parse_reported(
        Issue(
            title="[Bug] type inference",
            body="I left the build code out.\n\nCheck failed: x != nullptr",
        ),
        NONE,
    )
    assert got is not None and got.outcome == Outcome.INTERNAL_ERROR


def test_crash_beats_an_error_line_and_wrong_words() -> None:
    text = (
        "```\nRuntimeError: something\nSegmentation fault (core dumped)\n```\nThe output is wrong."
    )
    got = parse_reported(Issue(title="t", body=body(text)), REPRO)
    assert got is not None and got.outcome == Outcome.CRASH


def test_negated_crash_words_do_not_count() -> None:
    text = "It should not segfault; instead it raises\n\nTypeError: bad argument"
    got = parse_reported(Issue(title="[Bug] build", body=body(text)), REPRO)
    assert got is not None and got.outcome == Outcome.TVM_ERROR


def test_loose_crash_word_loses_to_a_check_failure() -> None:
    text = "Later you get a crash saying the var has no type:\n\nCheck failed: t != nullptr"
    got = parse_reported(Issue(title="[Bug] x", body=body(text)), REPRO)
    assert got is not None and got.outcome == Outcome.INTERNAL_ERROR


def test_only_the_authors_comments_count() -> None:
    issue = Issue(
        title="[Bug] x",
        body=body("Here is my script."),
        author="alice",
        comments=(
            Comment("bob", "On my machine: Segmentation fault (core dumped)"),
            Comment("alice", "```\nInternalError: Check failed: (n > 0) is false: bad\n```"),
        ),
    )
    got = parse_reported(issue, REPRO)
    assert got is not None and got.outcome == Outcome.INTERNAL_ERROR


def test_doing_something_wrong_is_not_a_wrong_result() -> None:
    got = parse_reported(
        Issue(
            title="[BUG] Parser error with nn.dense",
            body=body("I might be doing something wrong here!"),
        ),
        REPRO,
    )
    assert got is not None and got.outcome == Outcome.TVM_ERROR
