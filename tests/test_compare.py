"""compare(): the verdict table, and fuzzy signature matching."""

from __future__ import annotations

import pytest

from bot.compare import compare, key_words, signatures_match
from bot.models import INCONCLUSIVE_OUTCOMES, Classification, Outcome, Reported, Verdict

Oc = Outcome
V = Verdict


def rep(outcome: Outcome | None, sig: str = "") -> Reported:
    return Reported(outcome, sig)


def obs(outcome: Outcome, sig: str = "") -> Classification:
    return Classification(outcome, signature=sig)


TABLE = [
    # crash reported
    (
        rep(Oc.CRASH, "Segmentation fault (core dumped)"),
        obs(Oc.CRASH, "Segmentation fault (signal 11)"),
        V.REPRODUCED,
    ),
    (rep(Oc.CRASH, "free(): invalid pointer"), obs(Oc.CRASH, "Aborted (signal 6)"), V.REPRODUCED),
    (
        rep(Oc.CRASH, "segfaults"),
        obs(Oc.PYTHON_ERROR, "NameError: name 'x' is not defined"),
        V.DIFFERENT_FAILURE,
    ),
    (
        rep(Oc.CRASH, "Segmentation fault"),
        obs(Oc.INTERNAL_ERROR, "InternalError: Check failed: x"),
        V.DIFFERENT_FAILURE,
    ),
    (rep(Oc.CRASH, "Segmentation fault"), obs(Oc.PASSED, "exit code 0"), V.NOT_REPRODUCED),
    # internal error reported
    (
        rep(
            Oc.INTERNAL_ERROR,
            "Check failed: (!block_stack_.empty()) is false: no block is being built",
        ),
        obs(
            Oc.INTERNAL_ERROR,
            "tvm.error.InternalError: Check failed: (!block_stack_.empty()) is false: no block is being built",
        ),
        V.REPRODUCED,
    ),
    (
        rep(
            Oc.INTERNAL_ERROR,
            "TVMError: [01:49:08] /src/a.cc:492: Check failed: checked_type.as<IncompleteTypeNode>() == nullptr",
        ),
        obs(
            Oc.INTERNAL_ERROR,
            "InternalError: Check failed: checked_type.as<IncompleteTypeNode>() == nullptr: Cannot resolve type",
        ),
        V.REPRODUCED,
    ),
    (
        rep(
            Oc.INTERNAL_ERROR,
            "Check failed: (StructuralEqual()(a, b)) is false: Inconsistent buffers",
        ),
        obs(Oc.INTERNAL_ERROR, "InternalError: Check failed: (n > 0) is false: negative extent"),
        V.DIFFERENT_FAILURE,
    ),
    (
        rep(Oc.INTERNAL_ERROR, "Check failed: (x) is false: bad layout transform"),
        obs(Oc.TVM_ERROR, "TVMError: bad layout transform for x"),
        V.REPRODUCED,
    ),
    # tvm error reported
    (
        rep(Oc.TVM_ERROR, "fails to parse"),
        obs(Oc.TVM_ERROR, "tvm.error.DiagnosticError: error: Undefined variable: Tensor"),
        V.DIFFERENT_FAILURE,
    ),
    (
        rep(Oc.TVM_ERROR, ""),
        obs(Oc.TVM_ERROR, "tvm.error.DiagnosticError: error: Undefined variable: Tensor"),
        V.REPRODUCED,
    ),
    (
        rep(Oc.TVM_ERROR, "pad() got multiple values for argument 'pad_width'"),
        obs(Oc.TVM_ERROR, "TypeError: pad() got multiple values for argument 'pad_width'"),
        V.REPRODUCED,
    ),
    (
        rep(Oc.TVM_ERROR, "ValueError: Matmul requires the reduction length to be equal"),
        obs(Oc.TVM_ERROR, "TypeError: Matmul requires the reduction length to be equal"),
        V.DIFFERENT_FAILURE,
    ),
    (
        rep(Oc.TVM_ERROR, "pad() got multiple values"),
        obs(Oc.PASSED, "exit code 0"),
        V.NOT_REPRODUCED,
    ),
    # wrong result reported
    (
        rep(Oc.WRONG_RESULT, "Mismatched elements: 1 / 8 (12.5%)"),
        obs(Oc.WRONG_RESULT, "Mismatched elements: 3 / 8 (37.5%)"),
        V.REPRODUCED,
    ),
    (
        rep(Oc.WRONG_RESULT, "only expr2 is working properly"),
        obs(Oc.PYTHON_ERROR, "NameError: name 'tir' is not defined"),
        V.DIFFERENT_FAILURE,
    ),
    (rep(Oc.WRONG_RESULT, "wrong output"), obs(Oc.PASSED), V.NOT_REPRODUCED),
    # python error reported
    (
        rep(Oc.PYTHON_ERROR, "NameError: name 'T' is not defined"),
        obs(Oc.PYTHON_ERROR, "NameError: name 'T' is not defined"),
        V.REPRODUCED,
    ),
    # the reporter saw it work (a question)
    (rep(Oc.PASSED), obs(Oc.TVM_ERROR, "TVMError: x"), V.DIFFERENT_FAILURE),
    (rep(Oc.PASSED), obs(Oc.PASSED), V.NOT_REPRODUCED),
    # nothing specific reported
    (None, obs(Oc.CRASH, "Segmentation fault (signal 11)"), V.REPRODUCED),
    (None, obs(Oc.INTERNAL_ERROR, "Check failed"), V.REPRODUCED),
    (None, obs(Oc.WRONG_RESULT, "Mismatched elements: 1 / 2"), V.REPRODUCED),
    (None, obs(Oc.PYTHON_ERROR, "NameError: x"), V.DIFFERENT_FAILURE),
    (None, obs(Oc.PASSED), V.NOT_REPRODUCED),
    (rep(None), obs(Oc.TVM_ERROR, "TVMError: x"), V.REPRODUCED),
    # reported an API problem; the current TVM fails elsewhere or passes
    (
        rep(
            Oc.API_MISMATCH,
            "AttributeError: module 'tvm.ir._ffi_api' has no attribute 'RegisterOpAttr'",
        ),
        obs(Oc.PASSED),
        V.NOT_REPRODUCED,
    ),
    (
        rep(Oc.MISSING_DEPENDENCY, "No module named 'mlc_llm'"),
        obs(Oc.TVM_ERROR, "TVMError: x"),
        V.DIFFERENT_FAILURE,
    ),
]


@pytest.mark.parametrize(("reported", "observed", "verdict"), TABLE)
def test_verdict_table(
    reported: Reported | None, observed: Classification, verdict: Verdict
) -> None:
    c = compare(reported, observed)
    assert c.verdict == verdict, c.evidence
    # The evidence quotes the reported and the observed line, then says why.
    assert c.evidence[0].startswith("reported:")
    assert c.evidence[1].startswith("observed:")
    if observed.signature:
        assert observed.signature in c.evidence[1]
    if reported is not None and reported.signature:
        assert reported.signature in c.evidence[0]
    assert len(c.evidence) == 3


@pytest.mark.parametrize("outcome", sorted(INCONCLUSIVE_OUTCOMES))
@pytest.mark.parametrize(
    "reported",
    [
        None,
        rep(Oc.CRASH, "Segmentation fault"),
        rep(Oc.MISSING_DEPENDENCY, "No module named 'torch'"),
        rep(Oc.PASSED),
    ],
)
def test_inconclusive_outcomes_are_never_not_reproduced(
    outcome: Outcome, reported: Reported | None
) -> None:
    c = compare(reported, obs(outcome, "whatever"))
    assert c.verdict == V.INCONCLUSIVE
    assert outcome.value in c.evidence[-1]


def test_signature_normalisation() -> None:
    a = "tvm.error.InternalError: [12:01:02] /home/a/tvm/src/x.cc:88: Check failed: (n == 4) is false at 0x7ffd12"
    b = "InternalError: Check failed: (n == 16) is false at 0x55aa00 (/opt/other/src/x.cc:91)"
    assert key_words(a) == key_words(b)
    assert signatures_match(a, b)
    assert signatures_match("", "anything at all")
    assert not signatures_match("ValueError: shape mismatch", "TypeError: shape mismatch")
    assert not signatures_match("fails to parse", "DiagnosticError: Undefined variable: Tensor")
