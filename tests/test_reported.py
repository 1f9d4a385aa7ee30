"""parse_reported(): what the reporter saw, from synthetic issues in the shapes real ones have."""

from __future__ import annotations

import pytest

from bot.classify import Locations
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
    # A whole traceback through the reporter's own helper modules only: their code raised it.
    (
        "[Bug] relax benchmark fails with ValueError after moving to 0.27",
        "```\nTraceback (most recent call last):\n"
        '  File "/home/u/bench/run.py", line 22, in <module>\n'
        '    inputs = make_inputs(["64x128", "128,32"])\n'
        '  File "/home/u/bench/util.py", line 6, in parse_shape\n'
        '    return tuple(int(s) for s in spec.split("x"))\n'
        "ValueError: invalid literal for int() with base 10: '128,32'\n```",
        Outcome.PYTHON_ERROR,
        "invalid literal for int()",
    ),
    # ... not when its last line calls into TVM ...
    (
        "[Bug] relax benchmark fails",
        "```\nTraceback (most recent call last):\n"
        '  File "/home/u/bench/run.py", line 22, in <module>\n'
        "    out = run(mod)\n"
        '  File "/home/u/bench/util.py", line 9, in run\n'
        '    ex = tvm.compile(mod, target="llvm")\n'
        "ValueError: the target llvm is not enabled\n```",
        Outcome.TVM_ERROR,
        "target llvm is not enabled",
    ),
    # ... nor when the reporter cut frames out ("...").
    (
        "[Bug] relax benchmark fails",
        "```\nTraceback (most recent call last):\n"
        '  File "/home/u/bench/run.py", line 22, in <module>\n'
        "    out = run(mod)\n  ...\n"
        '  File "/home/u/bench/util.py", line 6, in parse_shape\n'
        '    return tuple(int(s) for s in spec.split("x"))\n'
        "ValueError: bad shape\n```",
        Outcome.TVM_ERROR,
        "bad shape",
    ),
    # The title says segfault, the pasted traceback ends in an exception and shows no crash:
    # the traceback is what the reporter saw ...
    (
        "[Bug] Segmentation fault in relax.op.concat with a bad axis",
        "It raises, and the kernel restarted in Jupyter, so I thought it was a segfault:\n\n"
        "```\nTraceback (most recent call last):\n  File \"c.py\", line 9, in <module>\n"
        "    c = bb.emit(relax.op.concat([a, b], axis=2))\n"
        "ValueError: the input axis 2 is out of range\n```",
        Outcome.TVM_ERROR,
        "axis 2 is out of range",
    ),
    # ... but a pasted crash line beside the traceback keeps it a crash
    (
        "[Bug] Segmentation fault in relax.op.concat with a bad axis",
        "```\nTraceback (most recent call last):\n  File \"c.py\", line 9, in <module>\n"
        "ValueError: the input axis 2 is out of range\nSegmentation fault (core dumped)\n```",
        Outcome.CRASH,
        "Segmentation fault",
    ),
    # The template's Expected / Actual sections filled with values, no failure named: the
    # numbers are wrong (session 8's unseen set q).
    (
        "[Bug] R.clip on negative inputs",
        "### Expected behavior\n\nThe input's sign is kept, as in numpy.\n\n"
        "### Actual behavior\n\n```\n[-1.  0.5  1.  ]\n```",
        Outcome.WRONG_RESULT,
        "[-1.",
    ),
    # ... nor an Actual section that says it works.
    (
        "[Bug] gather",
        "### Expected behavior\n\nShape (2, 3).\n\n### Actual behavior\n\n"
        "Works fine now with 2 dims, thanks.",
        Outcome.PASSED,
        "",
    ),
    # A frontend's assert on an op it cannot convert (traceback cut): TVM's refusal.
    (
        "[Bug] from_exported_program fails on mm",
        "```\nAssertionError: Unsupported function types ['mm.default']\n```",
        Outcome.TVM_ERROR,
        "Unsupported function types",
    ),
    # ... while an assert comparing numbers stays a wrong result.
    (
        "[Bug] conv2d output differs",
        "```\nAssertionError: \nNot equal to tolerance rtol=1e-05, atol=1e-05\n```",
        Outcome.WRONG_RESULT,
        "Not equal to tolerance",
    ),
    # The reporter's TVM said the form is gone: another API, in their report too.
    (
        "[Bug] tanh is slow",
        "```\nValueError: Cannot parse target string \"llvm -mcpu=x\". CLI target string form "
        "is no longer supported.\n```",
        Outcome.API_MISMATCH,
        "no longer supported",
    ),
    # A decimal number in "should be X but" is not the end of the sentence.
    ("[Bug] mean of int32", "The mean should be 2.5 but it returns 2.", Outcome.WRONG_RESULT,
     "should be 2.5 but"),
    # SIGTRAP as the shell reports it (LLVM's or TVM's trap instruction).
    (
        "[Bug] isnullptr with a wrong type",
        "Running it:\n\n```\n$ python test.py\nTrace/breakpoint trap (core dumped)\n```",
        Outcome.CRASH,
        "Trace/breakpoint trap",
    ),
    # An uncaught C++ exception ends the process (abort): a crash, whatever the exception.
    (
        "[Bug] tvm::runtime::InternalError:",
        "```\nlibc++abi: terminating due to uncaught exception of type "
        "tvm::runtime::InternalError: [09:01:02] /src/serve/engine.cc:41: InternalError: "
        "Check failed: (config_istream) is false:\n```",
        Outcome.CRASH,
        "libc++abi: terminating due to uncaught exception",
    ),
    # An old-style TVM error log line (absolute path) beats the prose's loose "crashes".
    (
        "Iter vars after rfactor",
        "`reorder(ki, ko)` crashes after rfactor. The output:\n\n```\n[11:24:23] "
        "/w/src/tvm/src/schedule/schedule_lang.cc:65: Operate on iter var iter_var(k.inner, )"
        "that is not part of the schedule\n```",
        Outcome.TVM_ERROR,
        "Operate on iter var",
    ),
    # A Python traceback cut before its exception line, ending inside TVM: TVM raised.
    (
        "[Bug] get_network fails for bert",
        "Executing the code causes a crash:\n\n```\nTraceback (most recent call last):\n"
        '  File "test.py", line 2, in <module>\n    get_network("bert_base", [1, 128])\n'
        '  File "/root/tvm/python/tvm/relay/frontend/pytorch.py", line 1961, in matmul\n'
        "    a =\n```",
        Outcome.TVM_ERROR,
        "get_network fails for bert",
    ),
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
    (  # old TVM: the C++ backtrace inside the message, "Check failed" at the end
        "[Bug] x",
        '```\nTraceback (most recent call last):\n  File "a.py", line 3, in <module>\n    f()\n'
        "tvm._ffi.base.TVMError: Traceback (most recent call last):\n"
        "  [bt] (3) /tvm/build/libtvm.so(TVMFuncCall+0x61) [0x7f00]\n"
        "  [bt] (2) /tvm/build/libtvm.so(tvm::relay::InferType()+0x12) [0x7f00]\n"
        "TVMError: Check failed: t.defined(): no type\n```",
        Outcome.INTERNAL_ERROR,
        "Check failed: t.defined(): no type",
    ),
    (
        "[Bug] x",
        "```\ntvm._ffi.base.TVMError: [10:11:12] /tvm/src/codegen/codegen.cc:99: unknown intrinsic\n\n"
        "Stack trace returned 10 entries:\n[bt] (0) /tvm/libtvm.so(dmlc::StackTrace()+0x1f) [0x7f]\n```",
        Outcome.TVM_ERROR,
        "unknown intrinsic",
    ),
    (
        "[Bug] x",
        "```shell\n$ python repro.py\nSegmentation fault (core dumped)\n```",
        Outcome.CRASH,
        "Segmentation fault (core dumped)",
    ),
    (
        "[Bug] x",
        '```\nTraceback (most recent call last):\n  File "r.py", line 9, in <module>\n    f(a)\n'
        "RuntimeError: CUDA error: an illegal memory access was encountered\n```",
        Outcome.TVM_ERROR,
        "CUDA error: an illegal memory access",
    ),
    (
        "[Bug] Relax ONNX import",
        "The ORT output differs from TVM output for this model.",
        Outcome.WRONG_RESULT,
        "ORT output differs",
    ),
    (
        "[Bug] x",
        "The compiled result is inconsistent with onnxruntime.",
        Outcome.WRONG_RESULT,
        "inconsistent with onnxruntime",
    ),
    (  # accuracy wording beats the generic "error" of the title
        "[Bug] conv2d accuracy error",
        "The output seems not so accurate for some input shapes.",
        Outcome.WRONG_RESULT,
        "not so accurate",
    ),
    ("[Bug] softmax precision loss in fp16", "See the script.", Outcome.WRONG_RESULT, "precision"),
    (  # a compiler's "type mismatch" is not a wrong result; the traceback ends in TVM's C++
        "[Bug] Cannot lower intrinsic, possible type mismatch: llvm.foo",
        "```\nTraceback (most recent call last):\n"
        '  File "/w/r.py", line 23, in <module>\n    tvm.compile(mod)\n'
        '  File "python/tvm_ffi/cython/function.pxi", line 758, in core.Function.__call__\n'
        '  File "<unknown>", line 0, in tvm::codegen::CodeGenLLVM::AddFunction(tvm::GlobalVar const&)\n'
        "```",
        Outcome.INTERNAL_ERROR,
        "Cannot lower intrinsic, possible type mismatch: llvm.foo",
    ),
    (
        "[Bug] Shape mismatch when fusing conv2d",
        "The build fails on the fused function.",
        Outcome.TVM_ERROR,
        "fails",
    ),
    (  # two separate tracebacks in one session: the first failure is the report
        "[Bug] x",
        ">>> import tvm\nTraceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\nValueError: first problem here\n\n'
        "and again:\n\n>>> import tvm\nTraceback (most recent call last):\n"
        '  File "<stdin>", line 1, in <module>\nTypeError: second problem here',
        Outcome.TVM_ERROR,
        "ValueError: first problem here",
    ),
    (  # a chain: the last exception is what the user saw
        "[Bug] x",
        "```\nTraceback (most recent call last):\n  File \"a.py\", line 1, in f\nKeyError: 'k'\n\n"
        "During handling of the above exception, another exception occurred:\n\n"
        'Traceback (most recent call last):\n  File "a.py", line 3, in <module>\n'
        "ValueError: bad shape\n```",
        Outcome.TVM_ERROR,
        "ValueError: bad shape",
    ),
    (  # Python 2's "cannot import name X" names no module: a package problem
        "Install problem",
        '```\nTraceback (most recent call last):\n  File "<stdin>", line 1, in <module>\n'
        "ImportError: cannot import name wrapt_helper\n```",
        Outcome.MISSING_DEPENDENCY,
        "cannot import name wrapt_helper",
    ),
    (
        "Why is the loop split twice?",
        "I ran the snippet above and it works, but I do not understand the IR.",
        Outcome.PASSED,
        "",
    ),
    (  # the exception named and its subject told, no log kept: the paraphrase is the signature
        "export fails",
        "### Actual behavior\nA ValueError from inside TVM about Concat and the dimensions "
        "(sorry, I did not keep the log)",
        Outcome.TVM_ERROR,
        "ValueError: Concat",
    ),
    (  # the exception named twice in one sentence: the one with its message
        "compute_at at a vectorized loop",
        '### Actual behavior\n\nGetting TVMError like "TVMError: cannot make uint from '
        'negative value -8"',
        Outcome.TVM_ERROR,
        "TVMError: cannot make uint from negative value -8",
    ),
    (
        "tvm.compile rejects O3",
        "tvm.compile throws a ValueError telling me O3 is not a known pipeline and lists a "
        "couple of names.",
        Outcome.TVM_ERROR,
        "ValueError: O3 is not a known pipeline",
    ),
    (
        "relax.build fails for float16",
        "It raises a `TypeError` complaining that the dtype float16 is not supported by the "
        "llvm target, but fp32 works.",
        Outcome.TVM_ERROR,
        "TypeError: the dtype float16 is not supported by the llvm target",
    ),
    (  # the title is a frontend's refusal; the body only shows the script
        "[Bug] Unsupported function types ['fmod.Tensor']",
        "Found by fuzzing.\n\n### Steps to reproduce\n\n```\nimport torch\n```",
        Outcome.TVM_ERROR,
        "Unsupported function types ['fmod.Tensor']",
    ),
    (  # where it came from named on the way (a file name's dot is not the sentence's end)
        "concat of two projections fails",
        "Forgot the error, sorry. It is a ValueError that comes out of CheckConcatOutputShape "
        "in manipulate.cc, it says Concat expects the same shape on every other axis, and then "
        "that the shapes on dimension 2 are 64 and 32.",
        Outcome.TVM_ERROR,
        "ValueError: Concat expects the same shape on every other axis",
    ),
    (  # a message quoted after a failure verb, no exception class, in the title
        "Compiled TE function fails with 'Mismatched A.dtype on argument #0' though dtypes match",
        "I don't understand what is mismatched.",
        Outcome.TVM_ERROR,
        "Mismatched A.dtype on argument #0",
    ),
    (  # ... or in the text, a check's own words
        "tile fails",
        'The build errors out saying "Check failed: (extent > 0) is false: bad tile" every time.',
        Outcome.INTERNAL_ERROR,
        "Check failed: (extent > 0) is false",
    ),
]


@pytest.mark.parametrize("text", [
    "It fails with `relax.build(mod)` but not with `tvm.compile(mod)`.",  # code, not a message
    "It fails with 'ok' only.",  # too short to be a message
    "I expected it to fail with 'Cannot find the loop in the block' instead.",
    "It does not fail with 'Cannot find the loop in the block' any more.",
    "I would expect it to give an error that says the loop in the block is missing.",
])
def test_a_quoted_text_after_a_failure_verb_that_is_no_message(text: str) -> None:
    got = parse_reported(Issue(title="t", body=body(text), author="alice"), REPRO)
    assert got is None or "loop in the block" not in got.signature and got.signature not in (
        "relax.build(mod)", "ok"), got


@pytest.mark.parametrize("text", [
    "There is no ValueError about the shapes any more, but the output is still wrong.",
    "I expected a ValueError about the shapes; instead the values are wrong.",
    "ValueError: Concat expects the same shape",  # a quoted line: the usual finder's
])
def test_a_named_exception_without_a_subject_or_negated_is_no_paraphrase(text: str) -> None:
    got = parse_reported(Issue(title="t", body=body(text), author="alice"), REPRO)
    assert got is None or ":" not in got.signature or got.signature.startswith(
        "ValueError: Concat expects"), got


@pytest.mark.parametrize(("title", "text", "outcome", "sig"), TABLE)
def test_reported_table(title: str, text: str, outcome: Outcome, sig: str) -> None:
    got = parse_reported(Issue(title=title, body=body(text), author="alice"), REPRO)
    assert got is not None
    assert got.outcome == outcome, got
    assert sig in got.signature
    assert got.evidence, "the lines that decided it are quoted"


def test_a_title_about_support_is_no_refusal() -> None:
    got = parse_reported(Issue(title="[Question] Unsupported ops in the ONNX frontend",
                               body=body("Which ops are missing? Is there a list?"),
                               author="alice"), REPRO)
    assert got is None or got.outcome != Outcome.TVM_ERROR, got


def test_a_performance_complaint_in_the_template_is_not_a_wrong_result() -> None:
    text = ("### Expected behavior\n\nFaster than the scalar build.\n\n### Actual behavior\n\n"
            "The vector build takes 3.2 ms against 2.4 ms.")
    got = parse_reported(Issue(title="conv2d on RISC-V", body=body(text), author="a"), REPRO)
    assert got is None or got.outcome != Outcome.WRONG_RESULT


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


@pytest.mark.parametrize(
    "quoted",
    [
        "> It runs without errors in my environment.",
        "> Works fine for me on 0.27, no error at all.",
        "> I get Segmentation fault (core dumped) here",
    ],
)
def test_a_quote_in_the_authors_comment_is_not_the_authors_outcome(quoted: str) -> None:
    issue = Issue(
        title="[Bug] LowerTE rejects the fused reshape",
        body=body("Running the script below fails."),
        author="alice",
        comments=(
            Comment("bob", quoted.lstrip("> ")),
            Comment("alice", f"{quoted}\n\nNot on my side, I still get:\n\n"
                             "```\nInternalError: Check failed: (n > 0) is false: bad\n```"),
        ),
    )
    got = parse_reported(issue, REPRO)
    assert got is not None and got.outcome == Outcome.INTERNAL_ERROR


def test_a_quote_in_the_body_is_still_the_reporters_own_error() -> None:
    text = "The build stops with:\n\n> InternalError: Check failed: (n > 0) is false: bad"
    got = parse_reported(Issue(title="[Bug] x", body=body(text)), REPRO)
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


@pytest.mark.parametrize(
    ("title", "text", "sig"),
    [
        (  # TVM's own message and its TVM_BACKTRACE note, no "XxxError:" line
            "[Bug] Compiling an exported model fails",
            "The model is in the attached archive.\n\n## Error Log\n\n```\n"
            "The Relay type checker is unable to show the following types match.\n"
            "In particular dimension 0 conflicts: 4 does not match 2.\n"
            "note: run with `TVM_BACKTRACE=1` environment variable to display a backtrace.\n```",
            "The Relay type checker is unable to show the following types match",
        ),
        (
            "[Bug] build of the attached model",
            "Log:\n\n```\nlowering the graph\nUnsupported layout NCHW4c in the fused op\n"
            "note: run with `TVM_BACKTRACE=1` environment variable to display a backtrace.\n```",
            "lowering the graph",
        ),
        (
            "[Bug] attached model",
            "```\n[10:11:12] /work/tvm/src/relay/op/nn/convolution.cc:120: "
            "Check input shape failed: cannot infer the layout\n```",
            "cannot infer the layout",
        ),
        (  # a past "it worked" must not hide the failure; the title names LLVM's error
            "[Bug] Board X, LLVM Error with TVM 9.1",
            "Previously, my setup was working as expected with TVM 9.0.\n"
            "Now the tutorial code can not be executed with an error.",
            "LLVM Error",
        ),
        (
            "[Bug] vector target",
            "Running the linked tutorial prints\n\n```\nLLVM ERROR: Cannot select: t12: v4i32 = foo\n```",
            "LLVM ERROR: Cannot select: t12: v4i32 = foo",
        ),
    ],
)
def test_tvm_diagnostics_without_a_repro_are_tvm_errors(title: str, text: str, sig: str) -> None:
    got = parse_reported(Issue(title=title, body=text, author="a"), NONE)
    assert got is not None and got.outcome == Outcome.TVM_ERROR, got
    assert sig in got.signature


@pytest.mark.parametrize(
    "text",
    [
        "### Expected behavior\n\nno error\n\n### Actual behavior\n\nIt prints the IR twice.",
        "**Expected behavior:**\n\nIt runs without errors.\n\n**Environment**\n\nLinux",
        "Expected: the build succeeds.",
    ],
)
def test_an_expectation_is_not_a_pass(text: str) -> None:
    for repro in (REPRO, NONE):
        got = parse_reported(Issue(title="[Bug] x", body=text, author="a"), repro)
        assert got is None or got.outcome != Outcome.PASSED, got


def test_pass_words_about_another_version_do_not_count() -> None:
    text = "It used to work fine with version 0.9. Since the upgrade the IR looks odd."
    got = parse_reported(Issue(title="[Bug] x", body=text, author="a"), NONE)
    assert got is not None and got.outcome != Outcome.PASSED
    fine = "I ran it again today and it works fine, thanks."
    got = parse_reported(Issue(title="Split question", body=fine, author="a"), NONE)
    assert got is not None and got.outcome == Outcome.PASSED


@pytest.mark.parametrize("with_script", [True, False])
def test_a_question_title_is_a_pass_only_about_a_script(with_script: bool) -> None:
    """"Why is the loop split twice?" about a script that runs: it ran; "AOT support?" with no
    script: nothing ran."""
    text = "Looking at the lowered IR I cannot see where the second split comes from."
    repro = REPRO if with_script else NONE
    got = parse_reported(Issue(title="Why is the loop split twice?", body=text, author="a"),
                         repro)
    want = Outcome.PASSED if with_script else Outcome.NO_REPRO
    assert got is not None and got.outcome == want, got


@pytest.mark.parametrize(("text", "passed"), [
    ("Not a crash, just something that looks wasteful in the IR after FoldConstant.", True),
    ("It is not an error: TVM accepts the bad axis silently.", True),
    ("Not a crash, but the values come out wrong.", False),
    ("This is not an error but a wrong result.", False),
])
def test_not_a_crash_is_a_pass_unless_a_but_follows(text: str, passed: bool) -> None:
    got = parse_reported(Issue(title="[Bug] FoldConstant", body=text, author="a"), REPRO)
    assert (got is not None and got.outcome == Outcome.PASSED) == passed, got


def test_the_error_under_expected_behavior_is_what_should_have_happened() -> None:
    text = ("### Expected behavior\n\n```\nValueError: Number of args to fcompute does not match "
            "dimension, args=1, dimension=2\n```\n\nnumpy says the sizes are not equal.\n\n"
            "### Actual behavior\n\nNo error at all. It returns a 1-D tensor.\n")
    got = parse_reported(Issue(title="[Bug] te.compute drops a dimension", body=text, author="a"),
                         REPRO)
    assert got is not None and got.outcome == Outcome.PASSED, got


@pytest.mark.parametrize(("text", "outcome"), [
    # a warning and an expectation of an error: it ran
    ("```\n'+avx512' is not a recognized feature for this target (ignoring feature)\n```\n\n"
     "That's all it prints. I would expect a proper error instead of this message.",
     Outcome.PASSED),
    ("It only prints a warning, nothing else.", Outcome.PASSED),
    # an error that did happen, then what was expected
    ("It raises an error; I'd expect a clearer message.", Outcome.TVM_ERROR),
    # a check's answer
    ("After copying main into a new IRModule, `well_formed` says False.", Outcome.WRONG_RESULT),
])
def test_expectations_and_warnings_are_not_failures(text: str, outcome: Outcome) -> None:
    got = parse_reported(Issue(title="[Bug] x", body=text, author="a"), REPRO)
    assert got is not None and got.outcome == outcome, got


def test_a_crash_shown_for_comparison_is_not_the_outcome() -> None:
    text = ("On main it fails with:\n\n```\ntvm.error.InternalError: Check failed: (2 vs. 1) : "
            "Invoking function main expects 2 arguments\n```\n\nFor comparison, the same script "
            "on 0.19.0 just died:\n\n```\n$ python vm_args.py\nSegmentation fault (core dumped)\n"
            "```\n")
    got = parse_reported(Issue(title="[Relax][VM] too few arguments", body=text, author="a"),
                         REPRO)
    assert got is not None and got.outcome == Outcome.INTERNAL_ERROR, got


def test_template_with_only_an_error_title_stays_no_repro() -> None:
    template = (
        "### Expected behavior\n\nWhat you were expecting\n\n### Actual behavior\n\n"
        "What actually happened\n\n### Steps to reproduce\n\nPreferably a minimal script\n"
    )
    got = parse_reported(Issue(title="[Bug] Error when importing tvm", body=template), NONE)
    assert got is not None and got.outcome == Outcome.NO_REPRO


# --- where in TVM the reporter saw it fail --------------------------------------------------

CUT_TRACEBACK = (
    "Output:\n```\nTraceback (most recent call last):\n"
    '  File "mine.py", line 9, in <module>\n'
    '  File "src/relax/transform/widget_folding.cc", line 210, in operator()\n'
    '  File "src/relax/transform/widget_folding.cc", line 88, in '
    "tvm::relax::WidgetFolder::Run(tvm::IRModule)\n"
    '  File "src/relax/transform/widget_folding.cc", line 97, in '
    "tvm::relax::WidgetFolder::VisitExpr_(tvm::relax::CallNode const*)\n"
    '  File "src/relax/transform/widget_fol\n```'
)


def test_a_cut_cpp_traceback_carries_its_tvm_locations() -> None:
    issue = Issue(
        title="[Bug] `relax.transform.FoldWidgets` breaks on a scalar", body=body(CUT_TRACEBACK)
    )
    got = parse_reported(issue, REPRO)
    assert got is not None and got.outcome == Outcome.INTERNAL_ERROR
    assert "`" not in got.signature and "FoldWidgets" in got.signature
    loc = Locations.from_evidence(got.evidence)
    assert loc.files == ("widget_folding.cc",)
    assert loc.functions[-1] == "tvm::relax::WidgetFolder::VisitExpr_"
    assert "FoldWidgets" in loc.passes


def test_an_old_style_backtrace_is_read_deepest_last() -> None:
    text = (
        "```\nTraceback (most recent call last):\n"
        '  File "mine.py", line 9, in <module>\n'
        "tvm._ffi.base.TVMError: Traceback (most recent call last):\n"
        "  3: tvm::transform::Pass::operator()(tvm::IRModule) const\n"
        "        at /home/u/tvm/src/ir/transform.cc:258\n"
        "  2: tvm::relay::GizmoLowerer::Lower(tvm::relay::Call const&)\n"
        "        at /home/u/tvm/src/relay/transforms/gizmo_lowering.cc:77\n"
        "  1: tvm::relay::GizmoLowerer::Check(tvm::relay::Call const&)\n"
        "        at /home/u/tvm/src/relay/transforms/gizmo_checks.cc:31\n"
        "  0: tvm::runtime::detail::LogFatal::Entry::Finalize()\n"
        "        at /home/u/tvm/include/tvm/runtime/logging.h:590\n"
        '  File "/home/u/tvm/src/relay/transforms/gizmo_checks.cc", line 31\n'
        "TVMError: the gizmo has no sprocket\n```"
    )
    got = parse_reported(Issue(title="[Bug] lowering gizmos", body=body(text)), REPRO)
    assert got is not None and got.outcome == Outcome.TVM_ERROR
    loc = Locations.from_evidence(got.evidence)
    # Error machinery (logging.h, LogFatal) and pass infrastructure (transform.cc) say nothing.
    assert loc.files[-1] == "gizmo_checks.cc" and "transform.cc" not in loc.files
    assert loc.functions == (
        "tvm::relay::GizmoLowerer::Lower",
        "tvm::relay::GizmoLowerer::Check",
    )


def test_crash_and_python_error_reports_carry_no_locations() -> None:
    text = "```\nSegmentation fault (core dumped)\n```"
    got = parse_reported(Issue(title="[Bug] FoldWidgets segfaults", body=body(text)), REPRO)
    assert got is not None and got.outcome == Outcome.CRASH
    assert not Locations.from_evidence(got.evidence)


@pytest.mark.parametrize(
    ("text", "outcome"),
    [
        ("Building the module never finishes.", Outcome.TIMEOUT),
        ("The build goes on forever at 100% CPU.", Outcome.TIMEOUT),
        ("What happens: continuous compilation, nothing is printed.", Outcome.TIMEOUT),
        ("tvm.build takes forever on this loop nest.", Outcome.TIMEOUT),
        ("The process is stuck in the lowering step.", Outcome.TIMEOUT),
        ("It compiles endlessly.", Outcome.TIMEOUT),
        # time and memory both: a timeout (the run is stopped by the clock first)
        (
            "Compiling never ends, memory usage keeps growing until the machine crashes.",
            Outcome.TIMEOUT,
        ),
        # memory only: the worker's memory limit will stop it
        ("The build runs out of memory on a 64 GB box.", Outcome.RESOURCE_LIMIT),
        ("Memory usage keeps increasing until the OOM killer steps in.", Outcome.RESOURCE_LIMIT),
        ("Lowering uses unbounded memory.", Outcome.RESOURCE_LIMIT),
        ("The job gets OOM-killed.", Outcome.RESOURCE_LIMIT),
        # in Chinese: "tvm.compile stays stuck and never returns"
        ("`tvm.compile` 一直卡住不返回，只能 Ctrl+C 打断。", Outcome.TIMEOUT),
        # stopped by hand: the pasted traceback ends in KeyboardInterrupt
        ("After a while I pressed Ctrl+C:\n\n```\n^CTraceback (most recent call last):\n"
         '  File "r.py", line 15, in <module>\n    ex = tvm.compile(Mod)\nKeyboardInterrupt\n```',
         Outcome.TIMEOUT),
    ],
)
def test_runaway_time_and_memory_wording(text: str, outcome: Outcome) -> None:
    got = parse_reported(Issue(title="[Bug] unrolling a big loop", body=body(text)), REPRO)
    assert got is not None and got.outcome == outcome, got


def test_a_machine_crash_is_not_the_process_crashing() -> None:
    got = parse_reported(
        Issue(title="[Bug] big unroll", body=body("After an hour my laptop crashed.")), REPRO
    )
    assert got is None or got.outcome != Outcome.CRASH, got
    # ... while the process crashing still is one.
    got = parse_reported(Issue(title="[Bug] big unroll", body=body("The compiler crashed.")), REPRO)
    assert got is not None and got.outcome == Outcome.CRASH


def test_an_actual_line_under_the_expected_heading_is_what_happened() -> None:
    text = (
        "### Expected behavior\n\nThe module builds or says why it cannot.\n\n"
        "Reality: the build never finishes."
    )
    got = parse_reported(Issue(title="[Bug] unroll", body=body(text)), REPRO)
    assert got is not None and got.outcome == Outcome.TIMEOUT
    # An expectation itself is not a report of a hang.
    text = "### Expected behavior\n\nIt should finish quickly instead of taking forever."
    got = parse_reported(Issue(title="[Bug] unroll", body=body(text)), REPRO)
    assert got is None or got.outcome != Outcome.TIMEOUT, got


def test_tvm_not_installed_is_a_missing_dependency_but_a_missing_tvm_name_is_another_api():
    from bot.models import Issue, Outcome, Repro
    from bot.reported import parse_reported

    none = Repro(found=False)
    gone = Issue(title="[Bug] cannot start", body=(
        "```\nTraceback (most recent call last):\n  File \"build.py\", line 8, in <module>\n"
        "    import tvm\nModuleNotFoundError: No module named 'tvm'\n```\n"), author="a")
    rep = parse_reported(gone, none)
    assert rep is not None and rep.outcome == Outcome.MISSING_DEPENDENCY
    renamed = Issue(title="[Bug] import fails", body=(
        "```\nTraceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"
        "ImportError: cannot import name 'relax' from 'tvm' (/opt/tvm/__init__.py)\n```\n"),
        author="a")
    rep = parse_reported(renamed, none)
    assert rep is not None and rep.outcome == Outcome.API_MISMATCH


@pytest.mark.parametrize(
    "title, body",
    [
        ("[Bug] tvm running result error", "The result of my conv is off by a lot."),
        ("Matmul output", "mat A ≠ mat B after compiling with opt_level=3."),
        ("[Bug] inference results are not right", "See below."),
        ("sigmoid saturates", "The first value is exactly 0.0 in TVM but 2e-9 in numpy."),
        ("layer norm", "With torch the mean is 0.5, but with TVM it comes out as 0.49."),
        # a value that gets "stuck" is no hang
        ("R.mean in float16 for long rows", "The mean is way off. I guess the fp16 sum gets "
         "stuck once it reaches 4096, so the mean is 0.5."),
        ("R.mean in float16 (max abs diff 0.5 vs numpy)", "The sum gets stuck at 4096."),
        ("fp16 softmax", "Not a crash, but the values come out wrong."),
        ("FoldConstant leaves dead kernels", "The values are wrong, and dozens of dead kernels are "
         "left hanging around in the module."),
    ],
)
def test_wrong_result_wording_without_an_error(title, body):
    from bot.models import Issue, Outcome, Repro
    from bot.reported import parse_reported

    rep = parse_reported(Issue(title=title, body=body, author="a"),
                         Repro(found=True, script="import tvm\n"))
    assert rep is not None and rep.outcome == Outcome.WRONG_RESULT


def test_without_a_script_the_reporters_own_failure_sentence_counts_but_not_the_template():
    from bot.models import Issue, Outcome, Repro
    from bot.reported import parse_reported

    none = Repro(found=False)
    said = Issue(title="[Bug] build", body="When I run my model, an error is thrown (see picture).",
                 author="a")
    rep = parse_reported(said, none)
    assert rep is not None and rep.outcome == Outcome.TVM_ERROR
    template = Issue(
        title="[Bug] Error when importing tvm",
        body=("Thanks for participating in the TVM community! Issues that are inactive for a "
              "period of time may get closed.\n\n### Expected behavior\n\nWhat you were expecting"
              "\n\n### Actual behavior\n\nWhat actually happened\n"),
        author="a")
    rep = parse_reported(template, none)
    assert rep is not None and rep.outcome == Outcome.NO_REPRO


@pytest.mark.parametrize(
    "body, outcome",
    [
        ("After installing, importing fails with **No module named 'tvm'** and I am stuck.",
         "missing-dependency"),
        ("```\nTraceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n"
         "    autotvm.tophub.context(target)\n"
         "AttributeError: 'module' object has no attribute 'tophub'\n```\n", "api-mismatch"),
    ],
)
def test_missing_module_and_attribute_phrasings(body, outcome):
    from bot.models import Issue, Repro
    from bot.reported import parse_reported

    rep = parse_reported(Issue(title="[Bug] x", body=body, author="a"), Repro(found=False))
    assert rep is not None and rep.outcome is not None and rep.outcome.value == outcome


def test_an_attribute_error_wrapped_over_two_lines():
    from bot.models import Issue, Outcome, Repro
    from bot.reported import parse_reported

    body = ("```\nTraceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n"
            "AttributeError: module 'tvm.relay' has no\n    attribute 'RandomModel'\n```\n")
    rep = parse_reported(Issue(title="[Bug] x", body=body, author="a"), Repro(found=False))
    assert rep is not None and rep.outcome == Outcome.API_MISMATCH


# A title about wrong numbers + a script that ends in its own result check: wrong-result, even
# when the text quotes a warning or an unrelated error on the way.
_CHECKED_SCRIPT = """import numpy as np
import tvm
from tvm import relax
ex = relax.build(Model, target="llvm")
vm = relax.VirtualMachine(ex, tvm.cpu())
out = vm["main"](tvm.runtime.tensor(x)).numpy()
np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
"""


@pytest.mark.parametrize(
    ("title", "outcome"),
    [
        ("[Bug] Wrong predictions from a relax-compiled conv2d + batch_norm on llvm", "wrong"),
        ("[Relax] wrong result of R.nn.softmax with axis=-1", "wrong"),
        ("Incorrect output values after FuseOps with float16", "wrong"),
        ("[Bug] relax.build crashes with a segfault in FuseOps", "not-wrong"),
    ],
)
def test_a_wrong_result_title_and_a_checked_script(title: str, outcome: str) -> None:
    from bot.models import Issue, Outcome, Repro

    body = (
        "### Actual behavior\n\nUserWarning: some attributes were ignored (TypeError: x)\n\n"
        f"```python\n{_CHECKED_SCRIPT}```\n"
    )
    rep = parse_reported(Issue(title, body, "me"), Repro(True, _CHECKED_SCRIPT))
    assert rep is not None
    if outcome == "wrong":
        assert rep.outcome == Outcome.WRONG_RESULT, rep
    else:
        assert rep.outcome != Outcome.WRONG_RESULT, rep


def test_old_nnvm_and_topi_imports_are_tvm_names_for_the_reporter_too() -> None:
    from bot.models import Issue, Outcome, Repro

    for mod in ("nnvm", "topi", "nnvm.compiler"):
        body = f"Running it gives\n\n```\nModuleNotFoundError: No module named '{mod}'\n```\n"
        rep = parse_reported(Issue("old script fails", body, "me"), Repro(False))
        assert rep is not None and rep.outcome == Outcome.API_MISMATCH, (mod, rep)


def test_a_cut_traceback_ending_in_the_users_own_code_is_no_tvm_error() -> None:
    text = ("It crashes:\n\n```\nTraceback (most recent call last):\n"
            '  File "/home/me/proj/train.py", line 9, in <module>\n    run()\n```')
    got = parse_reported(Issue(title="[Bug] x", body=body(text), author="alice"), REPRO)
    assert got is not None and got.outcome == Outcome.CRASH


def test_output_comments_at_the_end_of_the_script_are_what_the_reporter_saw() -> None:
    script = ("import tvm\nx = tvm.tirx.Var('x', 'int32') >> 33\n\n# Output:\n"
              "# Traceback (most recent call last):\n#   File \"r.py\", line 2, in <module>\n"
              "# tvm.error.InternalError: Check failed: (pb->value < 32) is false: Shift amount\n")
    issue = Issue(title="[Bug] shift by 33", body=f"```python\n{script}```\n", author="alice")
    repro = Repro(found=True, script=script, blocks=("body#0",), shape="fenced")
    got = parse_reported(issue, repro)
    assert got is not None and got.outcome == Outcome.INTERNAL_ERROR
    assert "Shift amount" in got.signature


def test_the_shell_command_before_tvms_note_is_not_the_error() -> None:
    text = ("```\n$ python permute.py\nnote: run with `TVM_BACKTRACE=1` environment variable "
            "to display a backtrace.\n```")
    got = parse_reported(Issue(title="[Bug] x", body=body(text), author="alice"), REPRO)
    assert got is not None and got.outcome == Outcome.TVM_ERROR
    assert "python permute.py" not in got.signature


@pytest.mark.parametrize(("title", "text", "sig"), [
    ("Did you forget to bind?", "", "Did you forget to bind?"),
    ("[Bug] reduction kernel for rocm",
     "Building it stops with: Memory verification failed with the following errors: "
     "variable red_buf is directly accessed by host memory",
     "Memory verification failed with the following errors: variable red_buf"),
])
def test_tvm_messages_that_read_as_prose_are_tvm_errors(title: str, text: str, sig: str) -> None:
    got = parse_reported(Issue(title=title, body=text), NONE)
    assert got is not None and got.outcome == Outcome.TVM_ERROR
    assert got.signature.startswith(sig)


def test_an_actual_behavior_that_names_an_error_is_not_a_wrong_result() -> None:
    """A number in the "Actual behavior" text (a model's version) is not a wrong value when
    the text says an error was raised."""
    body = ("### Expected behavior\n\nThe resnet50-v1.5 model compiles.\n\n"
            "### Actual behavior\n\nAn error is raised while compiling resnet50-v1.5 for "
            "vulkan.\n\n### Steps to reproduce\n\npython compile.py\n")
    got = parse_reported(Issue(title="[Bug] vulkan compile", body=body), NONE)
    assert got is not None and got.outcome == Outcome.TVM_ERROR


@pytest.mark.parametrize(("text", "outcome"), [
    # the process gone with no Python error, in the reporter's words
    ("When I run it python quits without any message, back to the shell prompt.", Outcome.CRASH),
    ("The process just dies, rc 136.", Outcome.CRASH),
    ("```console\n$ python repro.py\n$ echo $?\n135\n```", Outcome.CRASH),
    ("In Jupyter the kernel appears to have died when the last cell runs.", Outcome.CRASH),
    ("On the board it just dies at the first call, the python process is gone.", Outcome.CRASH),
    # ... not a normal end, nor a number that only looks like an exit code
    ("The script exits without error, but the numbers it prints are wrong.",
     Outcome.WRONG_RESULT),
    ("The output differs from PyTorch beyond 1e-4 for a few elements.", Outcome.WRONG_RESULT),
    # a wrong value, said in prose
    ("It prints 32. The sum should be 20000 (100 * 200).", Outcome.WRONG_RESULT),
    ("On 0.27 `clip` returns the input unchanged.", Outcome.WRONG_RESULT),
    ("No error, but the output is all zeros (max: 0.0).", Outcome.WRONG_RESULT),
    ("The compiled kernel returns all-zero tensors.", Outcome.WRONG_RESULT),
])
def test_how_reporters_say_it_died_or_gave_a_wrong_value(text: str, outcome: Outcome) -> None:
    got = parse_reported(Issue(title="[Bug] kernel problem", body=body(text)), REPRO)
    assert got is not None and got.outcome == outcome


def test_a_pasted_traceback_ending_in_a_reraise_is_not_the_scripts_own_error() -> None:
    """The reporter's helper re-raised what it caught (``raise X(...) from e``) and their log
    kept only that last traceback: what was caught (maybe TVM's error) is cut off, so it is not
    read as an error of their own code."""
    script = ("import tvm\n\n\ndef build(mod):\n    try:\n        return tvm.compile(mod)\n"
              "    except Exception as e:\n        raise BuildFailed('build failed') from e\n")
    tb = ("```\nTraceback (most recent call last):\n"
          '  File "/opt/tool/run.py", line 12, in <module>\n    build(mod)\n'
          '  File "/opt/tool/run.py", line 8, in build\n'
          "    raise BuildFailed('build failed') from e\n"
          "BuildFailed: build failed\n```")
    repro = Repro(found=True, script=script, blocks=("body#0",), shape="fenced")
    got = parse_reported(Issue(title="[Bug] build", body=f"```python\n{script}```\n\n{tb}\n"),
                         repro)
    assert got is not None and got.outcome == Outcome.TVM_ERROR
    assert got.signature == "BuildFailed: build failed"


@pytest.mark.parametrize(("line", "outcome"), [
    # numpy, called by the reporter's own line, raised it
    ("x_np = np.random.rand(1, 3, 8, 8).astype(x.dtype)", Outcome.PYTHON_ERROR),
    ("y = numpy.zeros((1, 3, 10, 10), dtype=y.dtype)", Outcome.PYTHON_ERROR),
    ("y = np.zeros([int(d) for d in y.shape])", Outcome.TVM_ERROR),  # int() of a TVM value
    # a compiled TVM function (or anything not numpy) may have raised it from C++
    ("lib(x_np, y_np)", Outcome.TVM_ERROR),
    ("out = tvm.runtime.tensor(np.zeros(3))", Outcome.TVM_ERROR),
])
def test_a_one_frame_traceback_is_the_reporters_own_error_only_when_numpy_raised(
        line: str, outcome: Outcome) -> None:
    text = ("On 0.27.0 it fails:\n\n```\nTraceback (most recent call last):\n"
            f'  File "test_pad.py", line 12, in <module>\n    {line}\n'
            "ValueError: Could not convert T.float32 to a NumPy dtype\n```")
    got = parse_reported(Issue(title="[Regression] dtype", body=body(text), author="alice"),
                         REPRO)
    assert got is not None and got.outcome == outcome, got


# (title, text after the repro, the outcome the reporter saw)
SEEN_THIS_SESSION = [
    # a numeric error, a shape that should be another, quality that is "not wrong as such"
    ("relax sum drifts", "I see a quite large error from `relax.op.sum` compared to a float64 "
     "reference.", Outcome.WRONG_RESULT),
    ("mean keepdims", "The output shape is (1, 3) but should be (3,). Downstream reshape in my "
     "model then fails.", Outcome.WRONG_RESULT),
    ("loose read regions", "It is not wrong as such, but the regions are loose.", Outcome.PASSED),
    ("tanh lowers to four exp calls", "Both branches are computed. In our GRU model this is ~30% "
     "of the runtime.", Outcome.PASSED),
    # a value that stops growing, a reference that gets it right, a gap in numbers
    ("te.sum of 20M ones returns 16777216",
     "Summing a big float32 vector with te.sum gets stuck at 16777216.", Outcome.WRONG_RESULT),
    ("te.sum of ones", "numpy gets the right answer, TVM is off by 3 million.",
     Outcome.WRONG_RESULT),
    # Chinese: "no error and no segfault either, just the result is wrong"
    ("gather_elements 负数 index", "没有报错, 也没有 segfault, 就是结果错了。", Outcome.WRONG_RESULT),
    ("depthwise conv2d 结果不对", "depthwise conv 的结果和 pytorch 对不上。", Outcome.WRONG_RESULT),
    # it ran: a correct result with a warning, input that should be refused
    ("Warning when compiling index_put",
     "The result is correct (matches `np.add.at`), but compiling prints a warning.",
     Outcome.PASSED),
    ("reverse_sequence silently accepts seq_lengths larger than the axis",
     "### Expected behavior\n\nIt should be rejected: onnxruntime raises for this input.\n\n"
     "### Actual behavior\n\nNo error, no warning.", Outcome.PASSED),
    # an error of a variant the reporter gave up, then the repro runs and is slow
    ("[Perf] matmul 40x slower than numpy",
     "Results are correct. I first had another target but that gives a ValueError about the "
     "target string, so I dropped it.", Outcome.PASSED),
    # an error paraphrased, no class, no quote
    ("R.where int and float input error",
     "In relax R.where it is not work, it give error when parse the module, it say something "
     "like the dtype is not same for both side (int64 and float32).", Outcome.TVM_ERROR),
    # a crash asked about ("segfault?"), the error pasted in the text: the error is what they saw
    ("Relax reshape crash the parser (segfault?)",
     "The program is crash when I write reshape. Is it segfault? with TVM_BACKTRACE=1 the last "
     "line is:\n\ntvm.error.DiagnosticError: error: Reshape expects the new shape to be "
     "convertible from the old shape", Outcome.TVM_ERROR),
    # ... but a crash said plainly stays a crash beside the warning TVM printed first
    ("relax reshape segfaults",
     "It segfaults. Before that it prints:\n\nValueError: shape mismatch warning from my "
     "own check", Outcome.CRASH),
    # an InternalError handled into TVM's DiagnosticError: the reporter saw the last one
    ("'Program is not well-formed' for a prim_func with T.sblock",
     "```\ntvm.error.InternalError: TIR verifier does not support statement "
     "s_tir.SBlockRealize\n\nDuring handling of the above exception, another exception "
     "occurred:\n...\ntvm.error.DiagnosticError: error: Program is not well-formed\n```",
     Outcome.TVM_ERROR),
    # ... not when the last one is the script's own re-raise of TVM's check
    ("InternalError in LegalizeOps",
     "```\ntvm.error.InternalError: Check failed: (ndim == 2) is false\n\nDuring handling "
     "of the above exception, another exception occurred:\n...\nRuntimeError: compile "
     "failed\n```", Outcome.INTERNAL_ERROR),
    # a crash of the reporter's own code further on, told as an aside, is not the report
    ("R.split silently produces a zero-size tensor",
     "It returns 4 outputs where the last one has shape `(2, 0)`, which is wrong. The empty tensor "
     "then crashed my downstream concat kernel (different story).", Outcome.WRONG_RESULT),
    # what it should give, then what they get
    ("strided_slice with negative stride returns empty tensor",
     "`R.strided_slice(x, axes=[0], begin=[5], end=[-7], strides=[-2])` should give x[5::-2] = "
     "[5,3,1] but I get an empty array (shape (0,)).", Outcome.WRONG_RESULT),
    # the VM refusing the caller's arguments (its ErrorContext) is TVM's user-facing error, as
    # the run's classification reads it, also when the title quotes the check alone
    ('Confusing message "Check failed: input_shape[i] == reg (5 vs. 4)" when passing wrong shape',
     "```\nRuntimeError: Check failed: input_shape[i] == reg (5 vs. 4) : ErrorContext(fn=main, "
     "loc=param[0], param=x, annotation=R.Tensor((n, 4), dtype=\"float32\"))  match_cast error\n```",
     Outcome.TVM_ERROR),
    # ... also when the words call it an internal check
    ("VM raises 'Check failed' instead of a proper error",
     "I get an internal check failure:\n\n```\nRuntimeError: Check failed: input_shape[i] == "
     "heap_data[reg] (5 vs. 4) : ErrorContext(fn=main, loc=param[1], param=y)  match_cast error\n```",
     Outcome.TVM_ERROR),
    # a value quoted as TVM's, another as the reference's, in one paragraph
    ("ONNX TopK: indices for equal values come out in reverse order",
     "onnxruntime returns `[1, 3]` for the indices of top-2 (ties -> smaller index first). "
     "TVM (relax onnx frontend) returns `[3, 1]` for me.", Outcome.WRONG_RESULT),
    ("ONNX Mod imported wrong",
     "After from_onnx I get `[-1  1 -1  1]` but onnxruntime and numpy give `[ 1 -1 -1  1]`.",
     Outcome.WRONG_RESULT),
    # ... in a code span, then what it should be; or bare values, then "instead of"
    ("relu6 doesn't clamp negative numbers",
     "Output I see is `[-1.  3.  6.]` but should be `[0. 3. 6.]`.", Outcome.WRONG_RESULT),
    ("R.matmul result looks transposed",
     "I get [[17 23] [39 53]] instead of [[19 22] [43 50]].", Outcome.WRONG_RESULT),
    # another op's check quoted for comparison, in a sentence; the script's own assert failed
    ("depth_to_space accepts 8 channels",
     "```\nAssertionError: no error raised, got shape (1, 1, 8, 8)\n```\n\nFor comparison "
     "`R.nn.pixel_shuffle` refuses it with `Check failed: c % r == 0 (2 vs. 0) : Number of "
     "input channels must be divisible`.", Outcome.WRONG_RESULT),
]


@pytest.mark.parametrize(("title", "text", "outcome"), SEEN_THIS_SESSION)
def test_more_ways_reporters_say_what_happened(title: str, text: str, outcome: Outcome) -> None:
    got = parse_reported(Issue(title=title, body=body(text), author="a"), REPRO)
    assert got is not None and got.outcome == outcome, got


def test_a_complaint_about_speed_is_a_run_that_passed_and_cannot_be_judged() -> None:
    from bot.compare import compare
    from bot.models import Classification, Verdict

    slow = parse_reported(Issue(title="[Perf] relax matmul ~40x slower than numpy on CPU",
                                body=body("Not a crash, results are correct."), author="a"), REPRO)
    assert slow is not None and slow.outcome == Outcome.PASSED and slow.about_speed
    assert compare(slow, Classification(Outcome.PASSED)).verdict == Verdict.INCONCLUSIVE
    warning = parse_reported(Issue(title="Only a warning", body=body("It only prints a warning."),
                                   author="a"), REPRO)
    assert warning is not None and not warning.about_speed
    assert compare(warning, Classification(Outcome.PASSED)).verdict == Verdict.REPRODUCED


@pytest.mark.parametrize(("between", "sig"), [
    # the reporter dealt with the first error and shows the next one
    ("ok fair, my activations were float32. I added the astype and now it's this instead:",
     "ValueError: Mismatched W.strides"),
    # two errors with nothing saying which came after: the first report counts
    ("And in another script:", "TypeError: Mismatched A.dtype"),
])
def test_of_two_pasted_errors_the_one_the_reporter_moved_on_to(between: str, sig: str) -> None:
    text = ("```\nTypeError: Mismatched A.dtype on argument #0 when calling:\n```\n\n"
            f"{between}\n\n```\nTraceback (most recent call last):\n  File \"r.py\", line 3\n"
            "ValueError: Mismatched W.strides on argument #1 when calling:\n```\n")
    got = parse_reported(Issue(title="dense kernel call fails", body=text, author="a"), REPRO)
    assert got is not None and got.signature.startswith(sig), got


def test_an_except_block_that_slipped_while_handling_a_tvm_error_is_tvms_error() -> None:
    text = ("```\nTraceback (most recent call last):\n  File \"r.py\", line 9, in <module>\n"
            "tvm.s_tir.schedule.schedule.ScheduleError: ScheduleError: An error occurred in the "
            "schedule primitive 'cache-buffer'.\n\nDuring handling of the above exception, "
            "another exception occurred:\n\nTraceback (most recent call last):\n"
            "  File \"r.py\", line 11, in <module>\n"
            "AttributeError: 'ScheduleError' object has no attribute 'msg'\n```\n")
    got = parse_reported(Issue(title="cache_inplace fails", body=text, author="a"), REPRO)
    assert got is not None and got.outcome == Outcome.TVM_ERROR, got
    assert "cache-buffer" in got.signature


@pytest.mark.parametrize(("own_line", "outcome"), [
    # TVM's legalization calls a topi function TVM no longer has: TVM's bug
    ("ex = tvm.compile(Mod, target='llvm')", Outcome.TVM_ERROR),
    # the reporter's own line uses the name: a script for another TVM
    ("y = tvm.topi.nn.pixel_shuffle(x, 2)", Outcome.API_MISMATCH),
])
def test_a_missing_tvm_name_inside_tvms_own_code(own_line: str, outcome: Outcome) -> None:
    text = ("```\nTraceback (most recent call last):\n  File \"/home/u/r.py\", line 18, in <module>\n"
            f"    {own_line}\n"
            "  File \"/v/lib/python3.11/site-packages/tvm/relax/transform/legalize_ops/nn.py\", "
            "line 256, in _nn_pixel_shuffle\n"
            "    return bb.call_te(topi.nn.pixel_shuffle, call.args[0])\n"
            "AttributeError: module 'tvm.topi.nn' has no attribute 'pixel_shuffle'\n```\n")
    got = parse_reported(Issue(title="pixel_shuffle fails", body=text, author="a"), REPRO)
    assert got is not None and got.outcome == outcome, got


@pytest.mark.parametrize(("comment", "outcome"), [
    # the author retried on a newer TVM: what it does now is the report
    ("Tried 0.27.0 (pip install -U). The compile error is gone, but it still fails, now the "
     "values are off:\n\n```\nAssertionError:\nMismatched elements: 12 / 18 (66.7%)\n```\n",
     Outcome.WRONG_RESULT),
    # a comment with no retry on another version does not replace the body's error
    ("Here is the output again:\n\n```\nMismatched elements: 12 / 18 (66.7%)\n```\n",
     Outcome.INTERNAL_ERROR),
    # retried, and nothing new shown: the body's error stands
    ("I tried main and it still fails the same way.", Outcome.INTERNAL_ERROR),
])
def test_the_authors_retry_on_a_newer_tvm_is_the_report(comment: str, outcome: Outcome) -> None:
    body = ("Compilation fails on 0.20.0:\n\n```\ntvm.error.InternalError: Check failed: "
            "(target_shape.size() == 2) is false: Expected target_shape to be 2D\n```\n")
    issue = Issue(title="affine_grid fails", body=body, author="a",
                  comments=(Comment("m", "Could you retry with 0.27?"), Comment("a", comment)))
    got = parse_reported(issue, REPRO)
    assert got is not None and got.outcome == outcome, got


# ----------------------------------------------------------------------------- quoted values

_WRONG_BODY = "```python\n" + SCRIPT + "```\n\n"


@pytest.mark.parametrize(
    ("text", "values"),
    [
        # the value TVM gave, in inline code, named as TVM's
        ("TVM gives `[0. nan 2.]` but numpy gives `[nan nan 2.]`, the result is wrong.",
         ("[0. nan 2.]",)),
        ("I printed with `.tolist()`:\nTVM: `[0.0, 0.0, 0.0, -1.0]`\nnumpy: `[0.0, 0.0, nan, -1.0]`\n"
         "so the third element is wrong.", ("[0.0, 0.0, 0.0, -1.0]",)),
        ("The sum is wrong: it returns `-112` instead of 400.", ("-112",)),
        ("Wrong result: I get `(1, 3)` where the shape should be `(3,)`.", ("(1, 3)",)),
        # the reference's value, the expected one, or code: not TVM's
        ("The result is wrong: numpy gives `[1. 2.]`.", ()),
        ("The result is wrong, expected `[1. 2.]`.", ()),
        ("The result is wrong when I call `R.sum` on `x`.", ()),
        ("The result is wrong for `int8` inputs, TVM says `x[0]`.", ()),
    ],
)
def test_the_values_the_reporter_quotes_as_tvms(text: str, values: tuple[str, ...]) -> None:
    got = parse_reported(Issue(title="R.op gives a wrong result", body=_WRONG_BODY + text,
                               author="alice"), REPRO)
    assert got is not None and got.outcome == Outcome.WRONG_RESULT, got
    assert got.values == values


def test_quoted_values_are_kept_only_for_a_wrong_result() -> None:
    text = "It crashes: `Segmentation fault (core dumped)`. TVM gives `[1 2]` before that."
    got = parse_reported(Issue(title="crash", body=_WRONG_BODY + text, author="alice"), REPRO)
    assert got is not None and got.outcome == Outcome.CRASH
    assert got.values == ()


def test_an_error_the_reference_raises_is_not_the_report() -> None:
    text = ("It silently accepts mismatched shapes. numpy would raise `ValueError: all the "
            "input array dimensions except for the concatenation axis must match exactly`.")
    got = parse_reported(Issue(title="topi.concatenate silently accepts bad inputs",
                               body=_WRONG_BODY + text, author="alice"), REPRO)
    assert got is not None and got.outcome == Outcome.PASSED, got
    # ... TVM's own error quoted the same way is
    text = "It raises `ValueError: all the input array dimensions must match exactly`."
    got = parse_reported(Issue(title="concat fails", body=_WRONG_BODY + text, author="alice"),
                         REPRO)
    assert got is not None and got.outcome == Outcome.TVM_ERROR, got


def test_tvms_log_warning_about_segfaults_is_not_a_crash() -> None:
    text = ("The result differs from numpy:\n\n```\n[10:02:11] /workspace/tvm/include/tvm/topi/"
            "transform.h:1040: Warning: Fast mode segfaults when there are out-of-bounds "
            "indices. Make sure input indices are in bound\nAssertionError:\nNot equal to "
            "tolerance rtol=1e-07, atol=0\n\nMismatched elements: 2 / 4 (50%)\n```\n")
    got = parse_reported(Issue(title="R.take differs from numpy.take", body=_WRONG_BODY + text,
                               author="alice"), REPRO)
    assert got is not None and got.outcome == Outcome.WRONG_RESULT, got


@pytest.mark.parametrize(
    ("title", "text", "outcome", "sig"),
    [
        # a schedule primitive's refusal pasted without its header
        ("sch.split raises", "the error:\n\n    Error message: The product of factors is not "
         "larger than or equal to the extent of loop tirx.For#0\n", Outcome.TVM_ERROR,
         "The product of factors"),
        # the simplifier leaves what it should fold
        ("arith: floordiv(x + 1, 2) * 2 is not simplified", "I expected `x + 1` here.",
         Outcome.WRONG_RESULT, "is not simplified"),
        # silent truncation
        ("sqrt of int32 tensor truncates silently", "With TVM I get truncated integers, numpy "
         "gives float.", Outcome.WRONG_RESULT, "truncat"),
        # "passes the input straight through" is no pass; the values under the template are
        ("call_pure_packed returns stale output", "### Expected behavior\n`[[2,2,2],[2,2,2]]`\n\n"
         "### Actual behavior\nI get `[[1,1,1],[1,1,1]]`: the VM passes the input straight "
         "through.\n", Outcome.WRONG_RESULT, "[[1,1,1],[1,1,1]]"),
        # a check named in words yields to the check pasted with its condition
        ("topi.transpose repeated axes", "`topi.transpose` with axes `(0, 2, 2)` throws an "
         "InternalError (Check failed) instead of a ValueError.\n\n```\ntvm.error.InternalError: "
         "Check failed: (new_axis != axes[j]) is false: repeated axis in transpose\n```",
         Outcome.INTERNAL_ERROR, "Check failed: (new_axis != axes[j]) is false"),
        # numpy's own words for a failed result check, quoted: a wrong result, not TVM's error
        ("clip(NaN) gives 1.0 instead of NaN", "It prints the two arrays and then the assert "
         "fails with `nan location mismatch`.", Outcome.WRONG_RESULT, "nan location mismatch"),
    ],
)
def test_reported_table_session_14(title: str, text: str, outcome: Outcome, sig: str) -> None:
    got = parse_reported(Issue(title=title, body=body(text), author="alice"), REPRO)
    assert got is not None
    assert got.outcome == outcome, got
    assert sig in got.signature or sig in got.values, got


def test_the_output_holds_a_line_that_should_not_be_there() -> None:
    text = ("The printed IR contains a `T.where(i < 100)` line. I think this line should not be "
            "there, and it makes codegen slower.")
    shown = Repro(found=True, script=SCRIPT, blocks=("body#0",), shape="fenced",
                  shown_output="T.where(i_0 * 32 + i_1 < 100)\n")
    got = parse_reported(Issue(title="split prints a predicate", body=body(text), author="alice"),
                         shown)
    assert got is not None and got.outcome == Outcome.WRONG_RESULT, got
    assert not got.about_speed  # the speed is a side effect, not the complaint
    # without the output shown, the run has nothing to compare: not a wrong result
    got = parse_reported(Issue(title="split prints a predicate", body=body(text), author="alice"),
                         REPRO)
    assert got is None or got.outcome != Outcome.WRONG_RESULT, got


@pytest.mark.parametrize(("shown", "wrong"), [
    ("tvm count: [ True  True] bool\nexpected : [4 1]", True),
    ("tvm  : [-4  3]\nnumpy: [-3  3]", True),
    ("tvm_out = [[0. 1.]\n [2. 3.]]\nnumpy_out = [[0. 1.]\n [2. 4.]]", True),  # spread arrays
    # the two agree (float32 against float64)
    ("tvm: 0.33333334\nnumpy: 0.3333333333333333", False),
    # versions are not values
    ("tvm version: 0.27.0\nnumpy: 2.1.0", False),
    # no reference line
    ("tvm  : [-4  3]", False),
])
def test_a_shown_pair_of_tvm_and_reference_values_that_differ(shown: str, wrong: bool) -> None:
    # no word about the result being wrong: the shown output is the report
    text = "I use it to count positive elements. Output:"
    repro = Repro(found=True, script=SCRIPT, blocks=("body#0",), shape="fenced",
                  shown_output=shown)
    got = parse_reported(Issue(title="R.sum over a mask", body=body(text), author="alice"), repro)
    assert (got is not None and got.outcome == Outcome.WRONG_RESULT) is wrong, got


@pytest.mark.parametrize(("text", "shown", "wrong"), [
    # the output shown, then the value wanted, quoted
    ("`simplify` does not use the bound.\n\nexpected `x` and `x * 2 + y`.",
     "True\nT.min(x, x + y)\nT.max(x * 2, x * 2 + y)", True),
    ("I expected `[1 2]` here.", "[1 1]", True),
    ("It should be `4`.", "3", True),
    # the value wanted is the one shown: no complaint
    ("expected `T.min(x, x + y)` and got it.", "T.min(x, x + y)", False),
    # no output shown: nothing to set the quoted value against
    ("expected `x` and `x * 2 + y`.", "", False),
    # "expected" not at the start of the reporter's sentence
    ("The op is expected to take `axis` as a list.", "3", False),
])
def test_a_shown_output_then_the_value_expected(text: str, shown: str, wrong: bool) -> None:
    repro = Repro(found=True, script=SCRIPT, blocks=("body#0",), shape="fenced",
                  shown_output=shown)
    got = parse_reported(Issue(title="Analyzer.simplify keeps min", body=body(text),
                               author="alice"), repro)
    assert (got is not None and got.outcome == Outcome.WRONG_RESULT) is wrong, got


@pytest.mark.parametrize(("intro", "ref", "wrong"), [
    ("torch:", "tensor([[ 3.0000,  5.0000,  6.5000]])", True),
    ("numpy gives:", "[3. 5. 6.5]", True),
    ("Expected (numpy):", "[3. 5. 6.5]", True),
    # the reference agrees with what was shown
    ("torch:", "tensor([[ 3.0000,  5.0000,  3.2500]])", False),
    # not a reference's label
    ("my other run:", "[3. 5. 6.5]", False),
])
def test_a_shown_output_then_the_references_that_differs(intro: str, ref: str,
                                                           wrong: bool) -> None:
    text = f"```\n[[ 3.    5.    3.25]]\n```\n\n{intro}\n```\n{ref}\n```"
    repro = Repro(found=True, script=SCRIPT, blocks=("body#0",), shape="fenced",
                  shown_output="[[ 3.    5.    3.25]]\n")
    got = parse_reported(Issue(title="avg_pool2d ceil_mode=True", body=body(text),
                               author="alice"), repro)
    assert (got is not None and got.outcome == Outcome.WRONG_RESULT) is wrong, got


@pytest.mark.parametrize(("script", "text", "crash"), [
    ("import tvm\nimport torch\n", "Either order, it seems there is some confliction.", True),
    ("import torch\nimport tvm\n", "The two libraries clash when loaded together.", True),
    # one import: nothing to clash with
    ("import tvm\n", "It seems there is some confliction with my conda env.", False),
    # a script that does more than import: its own failure is read as usual
    ("import tvm\nimport torch\nprint(tvm.cpu())\n", "Some confliction, I think.", False),
    # no conflict named
    ("import tvm\nimport torch\n", "Importing both is slow.", False),
    ("import tvm\nimport torch\n", "There is no conflict between them now, thanks.", False),
])
def test_two_imports_said_to_conflict_are_a_crash(script: str, text: str, crash: bool) -> None:
    repro = Repro(found=True, script=script, blocks=("body:unfenced",), shape="unfenced")
    got = parse_reported(Issue(title="Error when import torch and import tvm", body=text,
                               author="alice"), repro)
    assert (got is not None and got.outcome == Outcome.CRASH) is crash, got


def test_a_value_the_script_prints_with_its_subject_left_out() -> None:
    text = "SSA is violated, but `verify_well_formed` returns True.\n\nPrints `True`. Expected: False."
    got = parse_reported(Issue(title="verify_well_formed accepts a bad function", body=body(text),
                               author="alice"), REPRO)
    assert got is not None and got.values == ("True",), got


# (title, text after the repro): TVM takes what it should refuse -- the reporter saw it run
ACCEPTED = [
    ("[TIR] int8 + 200 promotes to int32",
     "TVM builds the function without complaint and the result dtype becomes int32. 200 does "
     "not fit in int8. Shouldn't TVM reject this?"),
    ("fp16 constant 70000 accepted", "`T.float16(70000)` compiles with no warning at all."),
    ("topi.take mode", "No error is raised for the negative index in clip mode."),
    ("split with sections > dim", "It does not complain about the invalid sections."),
    ("reverse_sequence", "relax silently accepts seq_lengths larger than the axis."),
    ("relax matmul accept incompatible shapes and infers (2, 5)",
     "Relax matmul not check the reduction dim. 3 != 4 so it should be error."),
]
# ... and sentences that look alike but are not that complaint
NOT_ACCEPTED = [
    ("relax add", "The script runs fine on my machine.", Outcome.PASSED),
    ("relax add", "TVM gives 4 but numpy gives 3. Shouldn't they match?", Outcome.WRONG_RESULT),
    ("strided_slice", "It does not complain, it just segfaults.", Outcome.CRASH),
]


@pytest.mark.parametrize(("title", "text"), ACCEPTED)
def test_a_complaint_that_tvm_accepts_something_is_a_pass_about_acceptance(
        title: str, text: str) -> None:
    got = parse_reported(Issue(title=title, body=body(text), author="a"), REPRO)
    assert got is not None and got.outcome == Outcome.PASSED and got.about_acceptance, got


@pytest.mark.parametrize(("title", "text", "outcome"), NOT_ACCEPTED)
def test_other_sentences_are_not_about_acceptance(title: str, text: str, outcome: Outcome) -> None:
    got = parse_reported(Issue(title=title, body=body(text), author="a"), REPRO)
    assert got is not None and got.outcome == outcome and not got.about_acceptance, got


def test_tvm_refusing_what_the_report_says_it_accepts_is_the_fix() -> None:
    from bot.compare import compare
    from bot.models import Classification, Verdict

    accepted = parse_reported(Issue(title="fp16 constant out of range accepted",
                                    body=body("It compiles with no warning at all."),
                                    author="a"), REPRO)
    assert accepted is not None and accepted.about_acceptance
    refused = Classification(Outcome.TVM_ERROR, "ValueError: float16 constant 70000 overflows")
    assert compare(accepted, refused).verdict == Verdict.NOT_REPRODUCED
    # still taken: reproduced; an internal error or a crash is not the refusal asked for
    assert compare(accepted, Classification(Outcome.PASSED)).verdict == Verdict.REPRODUCED
    assert compare(accepted, Classification(Outcome.INTERNAL_ERROR, "Check failed: x")
                   ).verdict == Verdict.DIFFERENT_FAILURE
    assert compare(accepted, Classification(Outcome.CRASH)).verdict == Verdict.DIFFERENT_FAILURE
    # a plain "works for me" that now fails is a different failure, as before
    works = parse_reported(Issue(title="relax add", body=body("It runs fine for me."),
                                 author="a"), REPRO)
    assert works is not None and not works.about_acceptance
    assert compare(works, refused).verdict == Verdict.DIFFERENT_FAILURE


# (title, text after the repro, the outcome the reporter saw): round-4 phrasings
SEEN_ROUND_FOUR = [
    # a comma starts a new clause: the negation stays with "No exception"
    ("[Bug] R.mean error with int32 input",
     "No exception, the result is silently truncated to integer.", Outcome.WRONG_RESULT),
    ("relax.clip", "TVM gives 3 but numpy gives 1 when min > max.", Outcome.WRONG_RESULT),
    # how they came to the bug is not what the script does
    ("R.reshape with a symbolic shape does not check the element count",
     "No error, the last element is silently dropped.\n\nWe originally saw random crashes "
     "later in the model (\"sometimes segfault in the next matmul\") and tracked it down to "
     "this reshape.", Outcome.WRONG_RESULT),
    # ... while a crash the script itself gives stays a crash
    ("R.take segfaults", "Running it segfaults every time.", Outcome.CRASH),
    # the words of a warning TVM prints are not the outcome
    ("R.take out of range returns garbage",
     "I see the warning `Fast mode segfaults when there are out-of-bounds indices` but "
     "returning garbage silently is still wrong.", Outcome.WRONG_RESULT),
    # ... quoted as the only hint there is, after the file it comes from
    ("R.take with out-of-range index returns garbage instead of erroring",
     "No error, no clamp. The only hint is the log line from `include/tvm/topi/transform.h:1261` "
     "(\"Fast mode segfaults when there are out-of-bounds indices\").", Outcome.WRONG_RESULT),
    # a value that should not be there, and the reference's error is not TVM's
    ("argmax return random big number?",
     "argmax of empty tensor gives random number, different every run. numpy raise ValueError "
     "\"attempt to get argmax of an empty sequence\".", Outcome.WRONG_RESULT),
    ("R.take out of range", "It gives trash values instead of the table rows.",
     Outcome.WRONG_RESULT),
    # a warning TVM prints, pasted as HTML
    ("R.take returns garbage", "<pre><code>Warning: Fast mode segfaults when there are "
     "out-of-bounds indices</code></pre> and then returns garbage silently.", Outcome.WRONG_RESULT),
    # a pass that does not do its job
    ("[TIR] CommonSubexprElim leaves repeated (A[i] + n) untouched",
     "CommonSubexprElim doesn't do anything on this function, `(A[i] + n)` is computed three "
     "times in the output.", Outcome.WRONG_RESULT),
    ("FoldConstant", "The cast of the constant is not folded.", Outcome.WRONG_RESULT),
    # a crash told as a side remark beside a pasted failed check
    ("R.take reads out of bounds (garbage values)",
     "A random number comes back. With bigger indexes it sometimes segfaults (from our fuzzer "
     "logs, not reproducible every time).\n\n```\nAssertionError:\nNot equal to tolerance "
     "rtol=1e-07, atol=0\n```", Outcome.WRONG_RESULT),
    ("scatter_nd ignores negative indices",
     "`[1, -1]` writes to `[0, 3]`. With a `[-1]` index on a 1-D tensor I even saw `free(): "
     "invalid next size (fast)` and abort at exit.\n\n```\nAssertionError: \nArrays are not "
     "equal\n\nMismatched elements: 2 / 12 (16.7%)\n```", Outcome.WRONG_RESULT),
    # ... but a crash the report tells as its own stays the crash
    ("scatter_nd with negative indices aborts",
     "With the script below I get `free(): invalid next size (fast)` and an abort.", Outcome.CRASH),
    # "nothing fails": a pass, too slow
    ("relax MLP compile is slow", "Nothing fails, it's just slow; compiling takes 40 s.",
     Outcome.PASSED),
    # a list after a negation stays negated
    ("relax add", "No error, crash or segfault, but the sum is wrong.", Outcome.WRONG_RESULT),
]


@pytest.mark.parametrize(("title", "text", "outcome"), SEEN_ROUND_FOUR)
def test_round_four_phrasings(title: str, text: str, outcome: Outcome) -> None:
    got = parse_reported(Issue(title=title, body=body(text), author="a"), REPRO)
    assert got is not None and got.outcome == outcome, got


@pytest.mark.parametrize(("title", "text"), [
    ("R.add gives InternalError instead of user error",
     "```\ntvm.error.InternalError: Check failed: (false) is false: shape mismatch\n```"),
    ("[Bug] Segfault when reshape has the wrong element count",
     "### Expected behavior\n\nA readable error.\n\n### Actual behavior\n\n"
     "Segmentation fault (core dumped)"),
])
def test_a_crash_or_check_that_now_ends_in_a_clear_error_is_a_different_failure(
        title: str, text: str) -> None:
    # (the run still fails, with a better error: what the triagers of the blind sets say)
    from bot.compare import compare
    from bot.models import Classification, Verdict

    got = parse_reported(Issue(title=title, body=body(text), author="a"), REPRO)
    assert got is not None and got.outcome in (Outcome.INTERNAL_ERROR, Outcome.CRASH)
    clear = Classification(Outcome.TVM_ERROR, "DiagnosticError: error: shapes do not match")
    assert compare(got, clear).verdict == Verdict.DIFFERENT_FAILURE


def test_an_error_another_framework_raises_named_with_a_dotted_class() -> None:
    # "PyTorch `nn.Embedding` raises `IndexError: ...`": the reference's error, not TVM's
    text = ("TVM did not complain at all, it returned some random values for that row. PyTorch "
            "`nn.Embedding` raises `IndexError: index out of range in self`.")
    got = parse_reported(Issue(title="R.take returns garbage", body=body(text), author="alice"),
                         REPRO)
    assert got is not None and got.outcome == Outcome.WRONG_RESULT, got


def test_an_error_named_in_prose_keeps_a_dotted_name_in_its_message() -> None:
    text = ("ScheduleError, message says `The block s_tir.SBlock#0 is an output block`. I don't "
            "understand why.")
    got = parse_reported(Issue(title="compute_at refuses", body=body(text), author="alice"), REPRO)
    assert got is not None and got.outcome == Outcome.TVM_ERROR
    assert got.signature.endswith("s_tir.SBlock#0 is an output block"), got


@pytest.mark.parametrize(("where", "outcome"), [
    # the parser read printed TVMScript handed to it as text: TVM's parser failed
    ('  File "<unknown>", line 7', Outcome.TVM_ERROR),
    # the reporter's own file: their own syntax slip
    ('  File "/home/u/repro.py", line 7', Outcome.PYTHON_ERROR),
])
def test_a_syntax_error_in_text_the_parser_was_given(where: str, outcome: Outcome) -> None:
    text = (f"```\n{where}\n    def main(lambda: R.Tensor((8,), dtype=\"float32\")):\n"
            "             ^^^^^^\nSyntaxError: invalid syntax\n```\n")
    got = parse_reported(Issue(title="printer output does not parse", body=body(text),
                               author="alice"), REPRO)
    assert got is not None and got.outcome == outcome, got


@pytest.mark.parametrize(("title", "text", "outcome", "values"), [
    ("R.sum wrong on int8", "gives -112, numpy says 400", Outcome.WRONG_RESULT, ("-112", "-112 400")),
    ("R.max of a masked row", "Is it expected that the second value prints -3.4028235e+38 and "
     "not -inf?", Outcome.WRONG_RESULT, ("-3.4028235e+38",)),
    ("take returns junk", "i get some random float back, numpy raises IndexError. at least a "
     "check in debug?", Outcome.WRONG_RESULT, ()),
    ("[TIR] StmtSimplify does not merge if/else with identical branches", "It keeps the if.",
     Outcome.WRONG_RESULT, ()),
    ("BindSymbolicVars binds a negative value", "It silently binds `n` to -1, nobody complains.",
     Outcome.PASSED, ()),
    ("FoldConstant pass do nothing on my module", "The `R.add` of the two constants is still "
     "there.", Outcome.WRONG_RESULT, ()),
])
def test_wrong_results_and_acceptance_told_in_words(title: str, text: str, outcome: Outcome,
                                                     values: tuple[str, ...]) -> None:
    got = parse_reported(Issue(title=title, body=body(text), author="alice"), REPRO)
    assert got is not None and got.outcome == outcome, got
    assert got.values == values


def test_an_error_message_on_the_line_after_error_colon() -> None:
    text = ("2nd module in same script, main clearly takes one arg. error:\n"
            "`Invoking function main expects 2 arguments (x, y), but 1 arguments were provided.`")
    got = parse_reported(Issue(title="VM says main expects 2 args", body=body(text),
                               author="alice"), REPRO)
    assert got is not None and got.outcome == Outcome.TVM_ERROR
    assert got.signature.startswith("Invoking function main expects 2 arguments")


def test_a_warning_about_a_missing_optional_module_is_no_missing_dependency() -> None:
    text = ("Before the script is printed I always get this warning:\n\n```\n"
            "/x/tvm/script/highlight.py:233: UserWarning: No module named 'pygments'\n"
            "To print highlighted TVM script, please install Pygments>=2.4.0\n```\n")
    got = parse_reported(Issue(title="mod.show() prints a UserWarning", body=body(text),
                               author="alice"), REPRO)
    assert got is None or got.outcome != Outcome.MISSING_DEPENDENCY, got


@pytest.mark.parametrize("text", [
    # the two values agree: nothing wrong with them
    "TVM returns `[1, 3]` and onnxruntime returns `[1, 3]`; only the compile is slow.",
    # an error, not a value, came instead
    "I get a TVMError instead of the result when the axis is negative.",
    # both values are TVM's (two targets), none the reference's
    "With llvm I get `[1, 3]`, with c I get `[1, 3]` too.",
])
def test_values_quoted_in_words_that_are_no_wrong_result(text: str) -> None:
    got = parse_reported(Issue(title="topk question", body=body(text), author="a"), REPRO)
    assert got is None or got.outcome != Outcome.WRONG_RESULT, got


@pytest.mark.parametrize(("title", "text", "outcome"), [
    # TVM accepts what it should refuse and the report shows what it gave: that output is wrong,
    # whatever error a variant or the reference gives
    ("[Relax] reshape with -1 silently accepts element count not divisible",
     "It compiles and runs, output shape `(6, 3)`. With static shape `(5, 4)` I do get an error "
     "at parse time.", Outcome.WRONG_RESULT),
    ("R.split returns an empty tensor instead of error",
     "`numpy.split` raises `ValueError: array split does not result in an equal division`.",
     Outcome.WRONG_RESULT),
    # ... not when it does not say TVM accepted it
    ("R.split fails on uneven sections",
     "`R.split` raises `ValueError: cannot split` while numpy gives 2,2,1,1.", Outcome.TVM_ERROR),
])
def test_an_input_tvm_accepts_with_the_output_shown(title: str, text: str,
                                                    outcome: Outcome) -> None:
    shown = Repro(found=True, script=SCRIPT, blocks=("body#0",), shape="fenced", shown_output="[(2, 2), (2, 2), (2, 0)]\n")
    got = parse_reported(Issue(title=title, body=body(text), author="a"), shown)
    assert got is not None and got.outcome == outcome, got
    if outcome == Outcome.WRONG_RESULT:
        assert got.signature == "prints [(2, 2), (2, 2), (2, 0)]"


@pytest.mark.parametrize(("title", "text", "outcome"), [
    # a wrong value in the reporter's words: infinity, integer wrap-around, an option ignored,
    # a result shifted by one
    ("R.sum on float16 returns inf", "Reducing fp16 activations gives inf.", Outcome.WRONG_RESULT),
    ("R.sum on int8 (accumulator is int8)",
     "For quantized models we sum int8 activations with R.sum and the result wraps around.",
     Outcome.WRONG_RESULT),
    ("cumsum exclusive=True ignored?", "so `exclusive=True` is just ignored? tvm 0.27.0",
     Outcome.WRONG_RESULT),
    ("exclusive cumsum", "The exclusive cumsum seems shifted by one.", Outcome.WRONG_RESULT),
    ("avg_pool2d ceil_mode", "There is an off-by-one in the last window.", Outcome.WRONG_RESULT),
    ("max_pool2d: pool_size > input gives tensor with negative shape",
     "`.numpy()` on it then fails with `ValueError: negative dimensions are not allowed`.",
     Outcome.WRONG_RESULT),
    ("strided_slice with negative stride and end < -len",
     "Relax returns an empty array `[]` (shape (0,)), and then my model fails later with shape "
     "mismatch.", Outcome.WRONG_RESULT),
    ("strided_slice with negative stride returns empty tensor",
     "Output shape is `(0,)` and then a later op segfaults.",
     Outcome.WRONG_RESULT),
    ("relu after add gives negative numbers??", "relu output should never be negative.",
     Outcome.WRONG_RESULT),
    ("te.compute silently changes int32 to float32",
     "Instead TVM silently inserts a cast and the output tensor `B` becomes **float32**.",
     Outcome.WRONG_RESULT),
    # (a crash followed by what it stopped is the crash)
    ("compiled prim_func with integer floordiv takes the whole process down",
     "No traceback, my terminal only prints `Floating point exception (core dumped)` and the next "
     "step of my pipeline (the one that writes the shard) never runs.", Outcome.CRASH),
    # (an error the script's own call raises is the report)
    ("relax build fails",
     "I build the module and `tvm.compile(mod)` on it fails with `ValueError: bad shape here`.",
     Outcome.TVM_ERROR),
    # ... not a warning one may ignore, nor an error that names infinity
    ("relax build fails",
     "The `TVM_LOG_DEBUG` warning can be ignored, the build then fails with "
     "`TVMError: Check failed: (pb->value != 0) is false`.", Outcome.INTERNAL_ERROR),
    ("float16 overflow", "It does not return inf, it crashes with a segfault.", Outcome.CRASH),
])
def test_wrong_values_said_in_words(title: str, text: str, outcome: Outcome) -> None:
    got = parse_reported(Issue(title=title, body=body(text), author="a"), REPRO)
    assert got is not None and got.outcome == outcome, got


@pytest.mark.parametrize(("repro_from", "outcome"), [
    # the comment posts the script that is run: the error it names is the replaced script's
    ("comment1#0", Outcome.WRONG_RESULT),
    # no script of its own in the comment that is run: it says what the run script does
    ("body#0", Outcome.API_MISMATCH),
])
def test_the_failure_of_a_script_a_comment_replaces_is_not_the_report(
        repro_from: str, outcome: Outcome) -> None:
    fence = "`" * 3
    text = ("Sorry, the script above fails with `AttributeError: np.NaN was removed in the NumPy "
            "2.0 release` on numpy 2, I edited it locally. Corrected version:\n\n"
            f"{fence}python\n{SCRIPT}{fence}\n")
    issue = Issue(title="R.sort(descending=True) returns unsorted output with NaN",
                  body=body("The output is not sorted at all when the input has a NaN."),
                  author="a", comments=(Comment(author="a", body=text),))
    repro = Repro(found=True, script=SCRIPT, blocks=(repro_from,), shape="fenced")
    got = parse_reported(issue, repro)
    assert got is not None and got.outcome == outcome, got


@pytest.mark.parametrize(("title", "text", "outcome"), [
    # a question about the output shown, with the reference's values beside it
    ("R.nn.gelu is the tanh approximation, not exact erf gelu?",
     "Values from torch (erf): -0.10021085, -0.15426877, 0.34573123", Outcome.WRONG_RESULT),
    # ... a question with no reference's values is a run that passed
    ("Why is the loop split twice?", "The printed IR has two splits, see the output.",
     Outcome.PASSED),
])
def test_a_question_about_the_output_shown(title: str, text: str, outcome: Outcome) -> None:
    shown = Repro(found=True, script=SCRIPT, blocks=("body#0",), shape="interactive",
                  shown_output="array([-0.10042843, -0.154286  ,  0.345714  ], dtype=float32)\n")
    got = parse_reported(Issue(title=title, body=body(text), author="a"), shown)
    assert got is not None and got.outcome == outcome, got
    if outcome == Outcome.WRONG_RESULT:
        assert got.signature.startswith("prints array([-0.10042843")


@pytest.mark.parametrize(("text", "wrong"), [
    # what the reporter wanted is not what happened
    ("I was expecting this to wrap around or raise; is there an option for that?", False),
    ("I would expect it to return inf like numpy does, is there a flag?", False),
    # ... what happened after a "but" is
    ("I was expecting this to raise, but it wraps around silently.", True),
])
def test_what_the_reporter_hoped_for_is_not_a_wrong_result(text: str, wrong: bool) -> None:
    got = parse_reported(Issue(title="int8 constants", body=body(text), author="a"), REPRO)
    assert (got is not None and got.outcome == Outcome.WRONG_RESULT) is wrong, got


@pytest.mark.parametrize(("text", "sig"), [
    # "Check failed" only named in quotes: the condition quoted in the sentence stands for it
    ('Something inside TVM complains, the message mentions `pb->value != 0` and a file '
     'const_fold.h. Since it is a "Check failed" I guess it is an internal assertion?',
     "Check failed: pb->value != 0"),
    ('Since it is a "Check failed" I guess it is an internal assertion users should not hit?',
     "Check failed"),
])
def test_a_check_named_in_quotes_is_no_message(text: str, sig: str) -> None:
    got = parse_reported(Issue(title="floordiv of constants with zero", body=body(text),
                               author="a"), REPRO)
    assert got is not None and got.outcome == Outcome.INTERNAL_ERROR and got.signature == sig, got


@pytest.mark.parametrize(("text", "outcome", "sig"), [
    # the message quoted with "> " under "the message is confusing:"
    ("Parsing fails which is fine, but the message is confusing:\n\n> Matmul requires the "
     "reduction length of the operands to be equal. The reduction dimensions of T.int64(8) and "
     "T.int64(4) are not equal.\n\nBoth shapes print `[4, 8]`.", Outcome.TVM_ERROR,
     "Matmul requires the reduction length of the operands to be equal"),
    # two things that should agree and do not, in the reporter's own words
    ("The inferred struct info and the legalized function disagree. Sum is fine, only mean.",
     Outcome.WRONG_RESULT, "The inferred struct info and the legalized function disagree"),
])
def test_quoted_messages_and_disagreement(text: str, outcome: Outcome, sig: str) -> None:
    got = parse_reported(Issue(title="[Relax] matmul and mean", body=body(text), author="a"), REPRO)
    assert got is not None and (got.outcome, got.signature) == (outcome, sig), got


def test_wrong_words_quoted_from_elsewhere_are_not_the_reporters() -> None:
    text = ("The docs say:\n\n> the results are not the same on every target\n\n"
            "Does that still hold for llvm on 0.27? My build runs fine.")
    got = parse_reported(Issue(title="results per target", body=body(text), author="a"), REPRO)
    assert got is None or got.outcome != Outcome.WRONG_RESULT, got
    # ... the same words as the reporter's own are
    own = parse_reported(Issue(title="results per target", body=body(
        "The results are not the same on every target."), author="a"), REPRO)
    assert own is not None and own.outcome == Outcome.WRONG_RESULT, own
