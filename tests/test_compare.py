"""compare(): the verdict table, and fuzzy signature matching."""

from __future__ import annotations

import pytest

from bot.classify import Locations
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
    # the reporter saw it run to the end ("should reject this but accepts it", "only a warning",
    # a question about the IR): a pass is what they saw, a failure is not
    (rep(Oc.PASSED), obs(Oc.TVM_ERROR, "TVMError: x"), V.DIFFERENT_FAILURE),
    (rep(Oc.PASSED), obs(Oc.PASSED), V.REPRODUCED),
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
    # an API TVM dropped on purpose, refused with an error: what the report is about...
    (
        rep(Oc.TVM_ERROR, "ValueError: Unknown device: llvm"),
        obs(Oc.API_MISMATCH, "ValueError: Unknown device: llvm"),
        V.REPRODUCED,
    ),
    # (the reporter's quote read as the dropped form itself: the same complaint)
    (
        rep(Oc.API_MISMATCH, 'ValueError: Cannot parse target string "llvm -mcpu=skylake". CLI '
            "target string form is no longer supported"),
        obs(Oc.API_MISMATCH, 'ValueError: Cannot parse target string "llvm -mcpu=skylake". CLI '
            "target string form is no longer supported"),
        V.REPRODUCED,
    ),
    # ...or not (the script dies on it before the reported check)
    (
        rep(Oc.WRONG_RESULT, "Mismatched elements: 3 / 8"),
        obs(Oc.API_MISMATCH, "ValueError: Unknown device: llvm"),
        V.INCONCLUSIVE,
    ),
    (
        rep(Oc.TVM_ERROR, "ValueError: Unknown target kind: foo"),
        obs(Oc.API_MISMATCH, "ValueError: Unknown device: llvm"),
        V.INCONCLUSIVE,
    ),
    # the codegen the build lacks is what the report is about (the pip wheel has no vulkan)...
    (
        rep(Oc.TVM_ERROR, "ValueError: Cannot find global function target.build.vulkan"),
        obs(Oc.NEEDS_GPU, "ValueError: Cannot find global function target.build.vulkan"),
        V.REPRODUCED,
    ),
    # (a device runtime absent here says nothing of the reporter's GPU machine)
    (
        rep(Oc.INTERNAL_ERROR, "Check failed: (allow_missing) is false: Device API cuda is not enabled."),
        obs(Oc.NEEDS_GPU, "Check failed: (allow_missing) is false: Device API cuda is not enabled."),
        V.INCONCLUSIVE,
    ),
    # ...or only what stops this worker short of the reported failure on the device
    (
        rep(Oc.INTERNAL_ERROR, "Check failed: __e == VK_SUCCESS (-4 vs. 0) : Vulkan Error"),
        obs(Oc.NEEDS_GPU, "ValueError: Cannot find global function target.build.vulkan"),
        V.INCONCLUSIVE,
    ),
    # a stale name that is the reporter's complaint (an old tutorial on a new TVM): it is gone
    (
        rep(Oc.TVM_ERROR, "AttributeError: module 'tvm' has no attribute 'arith'"),
        obs(Oc.API_MISMATCH, "AttributeError: module 'tvm' has no attribute 'arith'"),
        V.REPRODUCED,
    ),
    (
        rep(Oc.API_MISMATCH, "ImportError: cannot import name 'relay' from 'tvm'"),
        obs(Oc.API_MISMATCH, "ImportError: cannot import name 'relay' from 'tvm'"),
        V.REPRODUCED,
    ),
    # ...while a stale name on the way to another complaint stays inconclusive
    (
        rep(Oc.CRASH, "Segmentation fault in relay.build"),
        obs(Oc.API_MISMATCH, "ImportError: cannot import name 'relay' from 'tvm'"),
        V.INCONCLUSIVE,
    ),
    (
        rep(Oc.API_MISMATCH, "ImportError: cannot import name 'autotvm' from 'tvm'"),
        obs(Oc.API_MISMATCH, "ImportError: cannot import name 'relay' from 'tvm'"),
        V.INCONCLUSIVE,
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


def test_a_hang_that_does_not_finish_here_either_is_reproduced() -> None:
    hang = rep(Oc.TIMEOUT, "never returns")
    assert compare(hang, obs(Oc.TIMEOUT, "timed out after 300 s")).verdict == V.REPRODUCED
    # a speed complaint is not a hang: one slow run says nothing
    slow = Reported(Oc.TIMEOUT, "takes 20 minutes", about_speed=True)
    assert compare(slow, obs(Oc.TIMEOUT, "timed out after 300 s")).verdict == V.INCONCLUSIVE
    # a timeout where the report names something else stays inconclusive
    assert compare(rep(Oc.CRASH, "Segmentation fault"),
                   obs(Oc.TIMEOUT, "timed out after 300 s")).verdict == V.INCONCLUSIVE


def test_signature_normalisation() -> None:
    a = "tvm.error.InternalError: [12:01:02] /home/a/tvm/src/x.cc:88: Check failed: (n == 4) is false at 0x7ffd12"
    b = "InternalError: Check failed: (n == 16) is false at 0x55aa00 (/opt/other/src/x.cc:91)"
    assert key_words(a) == key_words(b)
    assert signatures_match(a, b)
    assert signatures_match("", "anything at all")
    assert not signatures_match("ValueError: shape mismatch", "TypeError: shape mismatch")
    assert not signatures_match("fails to parse", "DiagnosticError: Undefined variable: Tensor")
    # one long message under two types: what an older TVM raised as ValueError is TVM's
    # DiagnosticError now
    old = ("ValueError: Reshape expects the new shape to be convertible from the old shape. "
           "However, the old shape is R.shape([1, 3, 224, 224]), with product T.int64(150528)")
    new = ("tvm.error.DiagnosticError: error: Reshape expects the new shape to be convertible "
           "from the old shape. However, the old shape is R.shape([2, 3]), with product T.int64(6)")
    assert signatures_match(old, new)
    # ... also with the "..." the reporter put for the lines they left out
    assert signatures_match(old.replace("ValueError: ", "ValueError: ... "), new)
    # ... not a short message, nor another one
    assert not signatures_match("ValueError: invalid shape", "DiagnosticError: error: invalid shape")
    assert not signatures_match(old, "DiagnosticError: error: Reshape expects the input to have "
                                "a known number of dimensions, which this tensor does not have")


# --- the same place in TVM ------------------------------------------------------------------


def located(
    cls_or_rep: str, outcome: Outcome, sig: str, loc: Locations
) -> Reported | Classification:
    if cls_or_rep == "rep":
        return Reported(outcome, sig, ("quoted line", *loc.evidence()))
    return Classification(outcome, signature=sig, evidence=("the error", *loc.evidence()))


def test_same_class_and_same_deepest_cpp_file_is_reproduced() -> None:
    # The report's traceback was cut before its message: only the title and the frames remain.
    reported = located(
        "rep",
        Oc.INTERNAL_ERROR,
        "WidgetFolding pass breaks on scalar arguments",
        Locations(
            files=("widget_folding.cc",),
            functions=("tvm::relax::WidgetFolder::Run", "tvm::relax::WidgetFolder::VisitExpr_"),
        ),
    )
    observed = located(
        "obs",
        Oc.INTERNAL_ERROR,
        "InternalError: Check failed: (ptr != nullptr) is false: expected a tensor argument",
        Locations(
            files=("widget_folding.cc",),
            functions=("tvm::relax::WidgetFolder::FoldOne",),
        ),
    )
    assert isinstance(reported, Reported) and isinstance(observed, Classification)
    # Without the locations the words alone do not match.
    assert (
        compare(
            Reported(reported.outcome, reported.signature),
            obs(Oc.INTERNAL_ERROR, observed.signature),
        ).verdict
        == V.DIFFERENT_FAILURE
    )
    c = compare(reported, observed)
    assert c.verdict == V.REPRODUCED, c.evidence
    assert "widget_folding.cc" in c.evidence[-1]


@pytest.mark.parametrize(
    ("rep_loc", "obs_loc", "verdict", "why"),
    [
        (  # different files, different functions: another failure
            Locations(files=("widget_folding.cc",), functions=("tvm::relax::WidgetFolder::Run",)),
            Locations(files=("gizmo_lowering.cc",), functions=("tvm::tirx::GizmoLowerer::Lower",)),
            V.DIFFERENT_FAILURE,
            "",
        ),
        (  # the same deepest function; the namespace moved between versions (tir -> tirx)
            Locations(functions=("tvm::tir::GizmoLowerer::VisitStmt_",)),
            Locations(functions=("tvm::tirx::GizmoLowerer::VisitStmt_",)),
            V.REPRODUCED,
            "GizmoLowerer::VisitStmt_",
        ),
        (  # the report names the pass, the run fails in its source file
            Locations(passes=("FoldWidgets",)),
            Locations(files=("fold_widgets.cc",)),
            V.REPRODUCED,
            "FoldWidgets",
        ),
        (  # the run names the pass (its script line), the report's frames are in its class
            Locations(functions=("tvm::relax::transform::LowerGizmos",)),
            Locations(passes=("LowerGizmos",)),
            V.REPRODUCED,
            "LowerGizmos",
        ),
        (  # a pass the report names is not where the run fails
            Locations(passes=("FoldWidgets",)),
            Locations(files=("gizmo_lowering.cc",), passes=("LowerGizmos",)),
            V.DIFFERENT_FAILURE,
            "",
        ),
        (  # the report's deepest file is only an outer frame of the run: the run went deeper
            Locations(files=("widget_folding.cc",)),
            Locations(files=("widget_folding.cc", "gizmo_lowering.cc")),
            V.REPRODUCED,
            "widget_folding.cc",
        ),
        (  # one side has no locations at all
            Locations(),
            Locations(files=("widget_folding.cc",)),
            V.DIFFERENT_FAILURE,
            "",
        ),
    ],
)
def test_location_table(rep_loc: Locations, obs_loc: Locations, verdict: Verdict, why: str) -> None:
    reported = located("rep", Oc.TVM_ERROR, "ValueError: gadget count must be positive", rep_loc)
    observed = located(
        "obs", Oc.INTERNAL_ERROR, "InternalError: Check failed: sprocket is defined", obs_loc
    )
    assert isinstance(reported, Reported) and isinstance(observed, Classification)
    c = compare(reported, observed)
    assert c.verdict == verdict, c.evidence
    assert why in c.evidence[-1]


def test_a_shared_location_does_not_bridge_different_classes() -> None:
    loc = Locations(files=("widget_folding.cc",))
    reported = located("rep", Oc.INTERNAL_ERROR, "Check failed: a == b", loc)
    for outcome in (Oc.PYTHON_ERROR, Oc.CRASH, Oc.WRONG_RESULT):
        observed = located("obs", outcome, "something else entirely", loc)
        assert isinstance(reported, Reported) and isinstance(observed, Classification)
        assert compare(reported, observed).verdict == V.DIFFERENT_FAILURE


@pytest.mark.parametrize(
    ("reported_sig", "verdict"),
    [
        # TVM hid its message behind the note for the reporter; the bot's run shows it.
        ("note: run with `TVM_BACKTRACE=1` environment variable to display a backtrace.",
         Verdict.REPRODUCED),
        ("note: run with TVM_BACKTRACE=1", Verdict.REPRODUCED),
        # a real message next to the note is compared as usual
        ("ValueError: shapes differ; note: run with `TVM_BACKTRACE=1`", Verdict.DIFFERENT_FAILURE),
    ],
)
def test_a_report_that_only_saw_the_backtrace_note(reported_sig: str, verdict: Verdict) -> None:
    cls = Classification(Outcome.TVM_ERROR,
                         signature="DiagnosticError: the input axes is required to be non-repetitive")
    rep = Reported(Outcome.TVM_ERROR, reported_sig)
    assert compare(rep, cls).verdict == verdict


@pytest.mark.parametrize(("reported", "observed", "same"), [
    # a title that quotes the check, then says when it happens
    ("Check failed: input_shape[i] == reg when serving transposed batch",
     "RuntimeError: Check failed: input_shape[i] == reg (8 vs. 4) : ErrorContext(fn=main)",
     True),
    ("Check failed: (lanes > 1) is false on arm64",
     "InternalError: Check failed: (lanes > 1) is false: vector of 1 lane", True),
    # another check, or too little of one to tell
    ("Check failed: input_shape[i] == reg when batching",
     "InternalError: Check failed: (n_dims > 0) is false: empty shape", False),
    ("Check failed: x", "InternalError: Check failed: x.defined() is false", False),
    ("Check failed instead of wrapping", "ValueError: Check failed: (small.has_value()", False),
])
def test_the_same_failed_check_quoted_with_other_words(reported: str, observed: str,
                                                       same: bool) -> None:
    assert signatures_match(reported, observed) is same


@pytest.mark.parametrize(
    ("said", "verdict"),
    [
        ("Error message: The product of factors is not larger than or equal to the extent of "
         "loop tirx.For#0", V.REPRODUCED),
        ("The product of factors is not larger than or equal to the extent", V.REPRODUCED),
        ("Error message: The block B is an output block", V.DIFFERENT_FAILURE),
    ],
)
def test_a_schedule_error_is_matched_by_its_error_message_line(said: str, verdict: V) -> None:
    observed = Classification(
        Oc.TVM_ERROR,
        signature="ScheduleError: An error occurred in the schedule primitive 'split'.",
        evidence=("ScheduleError: An error occurred in the schedule primitive 'split'.",
                  "Error message: The product of factors is not larger than or equal to the "
                  "extent of loop tirx.For#0"),
    )
    assert compare(rep(Oc.TVM_ERROR, said), observed).verdict == verdict


@pytest.mark.parametrize(("observed", "verdict"), [
    # numpy raises it on TVM's dtype object: the very exception the report quotes
    ("ValueError: Could not convert T.float32 to a NumPy dtype (via `.dtype` value "
     "dtype('float32')).", V.REPRODUCED),
    # the script's own, other error
    ("ValueError: operands could not be broadcast together with shapes (2,8) (8,2)",
     V.DIFFERENT_FAILURE),
])
def test_the_run_raises_the_exact_error_the_report_quotes_from_outside_tvm(
        observed: str, verdict: Verdict) -> None:
    said = rep(Oc.TVM_ERROR, "ValueError: Could not convert T.float32 to a NumPy dtype (via "
               "`.dtype` value dtype('float32'))")
    assert compare(said, obs(Oc.PYTHON_ERROR, observed)).verdict == verdict


@pytest.mark.parametrize(("reported", "observed", "verdict"), [
    # TVM accepts what it should refuse, the report showing what it gave: a run that accepts it
    # too (its output printed differently now) reproduces it; a run that refuses it with TVM's
    # own error does not
    (Oc.WRONG_RESULT, obs(Oc.PASSED), V.REPRODUCED),
    (Oc.WRONG_RESULT, obs(Oc.WRONG_RESULT, "printed (6, 3)"), V.REPRODUCED),
    (Oc.WRONG_RESULT, obs(Oc.TVM_ERROR, "ValueError: Literal value exceeds range of int32"),
     V.NOT_REPRODUCED),
    (Oc.PASSED, obs(Oc.TVM_ERROR, "ValueError: Literal value exceeds range of int32"),
     V.NOT_REPRODUCED),
])
def test_a_report_that_tvm_accepts_what_it_should_refuse(
        reported: Outcome, observed: Classification, verdict: Verdict) -> None:
    said = Reported(reported, "prints (6, 3)", about_acceptance=True)
    assert compare(said, observed).verdict == verdict
    # a wrong result that is not about acceptance and does not show here is not reproduced
    if reported == Oc.WRONG_RESULT and observed.outcome == Oc.PASSED:
        assert compare(Reported(reported, "prints (6, 3)"), observed).verdict == V.NOT_REPRODUCED
