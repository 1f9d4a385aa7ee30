"""render_comment / render_status / labels: what a user sees on the issue."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from bot.labels import ALL_LABELS, MARKER, OUTCOME_LABELS, VERDICT_LABELS, is_own_label, label_specs
from bot.mdsafe import code_span, visible
from bot.models import Classification, Outcome, Reported, Repro, RunResult, Triage, Verdict
from bot.render import (
    GITHUB_LIMIT,
    describe_blocks,
    labels_for,
    render_comment,
    render_status,
)

SCRIPT = "import tvm\n\n@tvm.script.ir_module\nclass M:\n    pass\n\nprint('hi')\n"
REPRO = Repro(found=True, script=SCRIPT, blocks=("body#0", "body#1"), shape="multi-block")
REPORTED_CRASH = Reported(Outcome.CRASH, "Segmentation fault (core dumped)")
ENV = {
    "tvm_version": "0.27.0",
    "tvm_commit": "abc1234",
    "llvm_version": "19.1.7",
    "cuda_enabled": "false",
    "python": "3.11.7",
    "os": "Linux",
    "worker_note": "pipe | inside",
}


def triage(
    outcome: Outcome = Outcome.CRASH,
    verdict: Verdict = Verdict.REPRODUCED,
    *,
    run: RunResult | None = None,
    signature: str = "Segmentation fault (signal 11)",
    detail: str = "The process was killed by SIGSEGV.",
    repro: Repro = REPRO,
    reported: Reported | None = REPORTED_CRASH,
    needs: tuple[str, ...] = (),
    environment: dict[str, str] | None = None,
) -> Triage:
    if run is None and repro.found:
        run = RunResult(
            exit_code=None,
            signal=11,
            seconds=2.25,
            stdout_tail="hi\n",
            stderr_tail="Fatal Python error: Segmentation fault\n",
            sandbox="bwrap",
        )
    return Triage(
        outcome=outcome,
        verdict=verdict,
        repro=repro,
        needs=needs,
        run=run,
        classification=Classification(outcome, signature=signature, detail=detail),
        reported=reported,
        evidence=("reported: crash", "observed: crash", "the process crashes, as reported"),
        labels=labels_for(outcome, verdict, needs, prefix="repro: "),
        environment=ENV if environment is None else environment,
    )


def outside_code(md: str) -> str:
    """The comment's text with code blocks and code spans removed (where mentions would ping)."""
    tokens = MarkdownIt("commonmark").parse(md)
    out: list[str] = []
    for tok in tokens:
        if tok.type in ("fence", "code_block"):
            continue
        if tok.type == "inline" and tok.children:
            out += [c.content for c in tok.children if c.type in ("text", "html_inline")]
        elif tok.type == "html_block":
            out.append(tok.content)
    return "\n".join(out)


def before_details(md: str) -> str:
    """What shows without unfolding anything: the text above the first <details>."""
    return md.split("<details>", 1)[0]


def test_comment_shape() -> None:
    c = render_comment(triage())
    lines = c.splitlines()
    assert lines[0] == MARKER
    assert lines[1] == "### 🐞 Reproduced on the current TVM: the process crashed, as reported"
    assert "**Crash:** `Segmentation fault (signal 11)`" in c
    # How it ran, on one line, in words (no "body#1"), with the TVM it ran on.
    assert (
        "**Run:** the script from the issue text, code blocks 1 and 2 · took 2.2 s · "
        "bwrap sandbox · TVM 0.27.0 (commit `abc1234`)"
    ) in c
    assert "body#" not in c
    assert "- LLVM: 19.1.7" in c and "- CUDA: not built into this TVM" not in c
    assert "- worker_note: pipe \\| inside" in c  # strangers' text is escaped
    assert f"sha256 `{REPRO.sha256}`" in c
    assert "<details><summary>Script that was run (7 lines)</summary>" in c
    assert "```python\n" + SCRIPT + "```" in c  # the script is shown exactly as run
    assert "<details><summary>Output</summary>" in c
    assert "/retest" in c
    assert len(c) < GITHUB_LIMIT


def test_each_fact_is_said_once() -> None:
    sig = "InternalError: Check failed: (a_ty->dtype == b_ty->dtype) is false: mismatched types"
    run = RunResult(exit_code=1, signal=None, seconds=3.0, stderr_tail=f"Traceback ...\n{sig}\n",
                    sandbox="bwrap")
    t = triage(Outcome.INTERNAL_ERROR, Verdict.REPRODUCED, run=run, signature=sig,
               detail="A TVM internal check failed.",
               reported=Reported(Outcome.INTERNAL_ERROR, sig.split(": ", 1)[1]))
    c = render_comment(t)
    top = before_details(c)
    assert top.count("Check failed") == 1  # the error line; the raw output is folded away
    assert c.count("Check failed") == 2
    assert "A TVM internal check failed" not in c  # the heading already says it
    assert "exit code 1" in top and top.count("exit code") == 1
    # The labels are on the issue itself, not repeated in the comment.
    assert "repro: " not in c
    passed = render_comment(
        triage(Outcome.PASSED, Verdict.NOT_REPRODUCED, signature="exit code 0", detail="",
               run=RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail="ok\n"),
               reported=Reported(Outcome.CRASH, "Segmentation fault (core dumped)")))
    assert passed.count("exit code 0") == 1
    assert "**The report shows:** `Segmentation fault (core dumped)`" in passed
    assert passed.splitlines()[1].startswith("### ✅ Not reproduced: the script runs without failing")
    # TVM refusing now what the report says it took silently: not "runs without failing"
    refused = render_comment(
        triage(Outcome.TVM_ERROR, Verdict.NOT_REPRODUCED, signature="DiagnosticError: Matmul ...",
               detail="", run=RunResult(exit_code=1, signal=None, seconds=1.0),
               reported=Reported(Outcome.WRONG_RESULT, "prints R.Tensor((2, 5))",
                                 about_acceptance=True)))
    head = refused.splitlines()[1]
    assert head.startswith("### ✅ Not reproduced: TVM raised an error where the report says it "
                           "went through silently"), head


def test_the_reported_error_is_shown_only_when_it_differs() -> None:
    t = triage(Outcome.TVM_ERROR, Verdict.DIFFERENT_FAILURE, signature="ValueError: bad target",
               detail="TVM raised `ValueError`.", reported=REPORTED_CRASH)
    c = render_comment(t)
    assert c.splitlines()[1] == (
        "### ⚠️ Fails differently on the current TVM: TVM raised an error, not as reported"
    )
    assert "**Error:** `ValueError: bad target`" in c
    assert "**The report shows:** `Segmentation fault (core dumped)`" in c
    assert "TVM raised `ValueError`" not in c  # the error line names it already
    same = render_comment(triage())  # reproduced: the heading says "as reported"
    assert "The report shows" not in same


@pytest.mark.parametrize(
    "blocks, words",
    [
        (("body#0",), "the issue text, code block 1"),
        (("body#0", "body#2"), "the issue text, code blocks 1 and 3"),
        (("comment2#1",), "comment 2, code block 2"),
        (("body:unfenced",), "the issue text (not in a code block)"),
        (("body#0", "comment1#0"), "the issue text, code block 1; comment 1, code block 1"),
        (("weird`label",), "``weird`label``"),
    ],
)
def test_where_the_script_came_from_in_words(blocks: tuple[str, ...], words: str) -> None:
    assert describe_blocks(blocks) == words


@pytest.mark.parametrize(
    "value, words",
    [
        ("yes", "built into this TVM, and the worker has a GPU driver"),
        ("built-in, no driver", "built into this TVM, but this worker has no GPU driver"),
        ("no", "not built into this TVM"),
    ],
)
def test_environment_in_plain_words(value: str, words: str) -> None:
    c = render_comment(triage(environment={**ENV, "cuda_enabled": value}))
    assert f"- CUDA: {words}" in c
    assert "built-in, no driver" not in c


def test_labels() -> None:
    assert labels_for(Outcome.CRASH, Verdict.REPRODUCED, (), prefix="repro: ") == (
        "repro: crash",
        "repro: reproduced",
    )
    assert labels_for(Outcome.PASSED, Verdict.NOT_REPRODUCED, ("cuda", "torch"), prefix="bot/") == (
        "bot/passed",
        "bot/not-reproduced",
        "bot/needs-gpu",
    )
    assert labels_for(Outcome.NEEDS_GPU, Verdict.INCONCLUSIVE, ("cuda",), prefix="repro: ") == (
        "repro: needs-gpu",
        "repro: inconclusive",
    )
    assert set(OUTCOME_LABELS) == set(Outcome) and set(VERDICT_LABELS) == set(Verdict)
    specs = label_specs("repro: ")
    assert len({name for name, _, _ in specs}) == len(specs) == len(ALL_LABELS)
    for name, color, description in specs:
        assert re.fullmatch(r"[0-9a-f]{6}", color) and 0 < len(description) <= 100
        assert is_own_label(name, "repro: ")
    assert not is_own_label("type: bug", "repro: ")
    assert not is_own_label("repro: something-else", "repro: ")
    assert not is_own_label("crash", "")


def test_mentions_in_output_and_issue_text_ping_nobody() -> None:
    run = RunResult(
        exit_code=1,
        signal=None,
        seconds=1.0,
        stdout_tail="cc @someone and @tvm-team/core please look\n",
        stderr_tail="ValueError: ask @octocat\n",
    )
    t = triage(
        Outcome.TVM_ERROR,
        Verdict.REPRODUCED,
        run=run,
        signature="ValueError: ask @octocat",
        detail="TVM raised `ValueError` for @octocat.",
        reported=Reported(Outcome.TVM_ERROR, "ValueError: ask @octocat"),
    )
    c = render_comment(t)
    assert "@someone" in c and "@octocat" in c  # shown as written, but only as code
    assert not re.search(r"@[A-Za-z]", outside_code(c))
    # Decorators in the script stay intact (the shown script must still run when copied).
    assert "\n@tvm.script.ir_module\n" in c


def test_ansi_and_control_characters_are_stripped() -> None:
    run = RunResult(
        exit_code=1,
        signal=None,
        seconds=1.0,
        stdout_tail="\x1b[31mred\x1b[0m text\x07\n10%\r50%\r100%\n",
        stderr_tail="\x1b]0;title\x07TypeError: x\n",
    )
    c = render_comment(triage(Outcome.TVM_ERROR, run=run))
    assert "\x1b" not in c and "\x07" not in c and "\r" not in c
    assert "red text" in c and "100%" in c and "50%" not in c
    assert visible("\x1b[1;32mok\x1b[0m") == "ok"


def test_fences_are_longer_than_any_backtick_run_inside() -> None:
    nasty = "print('```')\n# ````` five\n"
    run = RunResult(
        exit_code=1, signal=None, seconds=1.0, stdout_tail="``````\n</details>\n# Heading\n"
    )
    c = render_comment(triage(Outcome.PYTHON_ERROR, run=run, repro=Repro(True, nasty, ("body#0",))))
    assert "``````python\n" + nasty + "``````" in c
    assert "```````text\n" in c
    # Parsed as markdown, the output and the script stay inside their code blocks.
    fences = [t for t in MarkdownIt("commonmark").parse(c) if t.type == "fence"]
    assert any(t.content == nasty for t in fences)
    assert any("</details>" in t.content for t in fences)
    assert code_span("a `b` c") == "``a `b` c``"


def test_huge_output_stays_under_githubs_limit_and_keeps_the_end() -> None:
    big_out = "".join(f"line {i} of noisy output\n" for i in range(200_000))
    big_err = (
        "x" * 3_000_000 + "\nTraceback (most recent call last):\nRuntimeError: the real error\n"
    )
    run = RunResult(
        exit_code=1,
        signal=None,
        seconds=9.0,
        stdout_tail=big_out,
        stderr_tail=big_err,
        stdout_truncated=True,
        stderr_truncated=True,
    )
    c = render_comment(triage(Outcome.TVM_ERROR, run=run))
    assert len(c) < GITHUB_LIMIT
    assert "RuntimeError: the real error" in c
    assert "line 199999 of noisy output" in c
    assert "earlier characters cut" in c
    assert SCRIPT in c  # the output was cut, not the script


def test_huge_script_and_output_stay_under_the_limit() -> None:
    script = "".join(f"x{i} = {i}\n" for i in range(20_000))
    run = RunResult(
        exit_code=1, signal=None, seconds=1.0, stderr_tail="E" * 200_000 + "\nKeyError: 'end'\n"
    )
    c = render_comment(
        triage(Outcome.PYTHON_ERROR, run=run, repro=Repro(True, script, ("body#0",)))
    )
    assert len(c) < GITHUB_LIMIT
    assert "x0 = 0" in c and "KeyError: 'end'" in c
    assert f"sha256 `{Repro(True, script).sha256}`" in c  # the hash is of the full script


def test_api_mismatch_says_what_replaced_it() -> None:
    t = triage(
        Outcome.API_MISMATCH,
        Verdict.INCONCLUSIVE,
        signature="ImportError: cannot import name 'tir' from 'tvm.script'",
        detail="TVMScript's TIR dialect moved to `tvm.script.tirx`.",
    )
    c = render_comment(t)
    assert c.splitlines()[1] == "### ❔ Inconclusive: the script uses a TVM API that no longer exists"
    assert "`tvm.script.tirx`" in c
    assert "port it to the current API" in c


def test_the_dropped_api_error_a_report_is_about_asks_for_no_port() -> None:
    t = triage(
        Outcome.API_MISMATCH,
        Verdict.REPRODUCED,
        signature="ValueError: Unknown device: llvm",
        detail='The current TVM no longer takes a target\'s name as a device: `tvm.device("llvm")` '
        "is `tvm.cpu()` now.",
    )
    c = render_comment(t)
    assert c.splitlines()[1].startswith("### 🐞 Reproduced")
    assert "`tvm.cpu()`" in c
    assert "port it to the current API" not in c


def test_no_repro_asks_politely_and_specifically() -> None:
    repro = Repro(
        found=False,
        reason="The issue has a traceback but no script. Could you paste a minimal script?",
    )
    t = triage(
        Outcome.NO_REPRO,
        Verdict.INCONCLUSIVE,
        repro=repro,
        signature="",
        detail=repro.reason,
        reported=None,
        environment={},
    )
    c = render_comment(t)
    assert c.startswith(MARKER + "\n")
    assert "no runnable script" in c.splitlines()[1]
    assert "traceback but no script" in c
    assert "<details><summary>Script" not in c and "<details><summary>Output" not in c
    assert "/retest" in c
    bare = render_comment(
        triage(
            Outcome.NO_REPRO,
            Verdict.INCONCLUSIVE,
            repro=Repro(found=False),
            signature="",
            detail="",
            reported=None,
        )
    )
    assert "minimal, self-contained Python script" in bare


def test_infra_error_is_not_blamed_on_the_script() -> None:
    t = triage(
        Outcome.INFRA_ERROR,
        Verdict.INCONCLUSIVE,
        signature="bwrap: setting up uid map: Permission denied",
        detail="",
        reported=Reported(Outcome.CRASH, "segfault"),
    )
    t = Triage(**{**t.__dict__, "run": None})
    c = render_comment(t)
    assert "not a result of your script" in c
    assert "trying again did not help" in c and "/retest" in c
    assert "bwrap: setting up uid map" in c
    assert "Reproduced" not in c and "Not reproduced" not in c


@pytest.mark.parametrize(("state", "worker"), [("queued", "cpu"), ("running", "gpu")])
def test_status_comment(state: str, worker: str) -> None:
    c = render_status(state, worker, REPRO)
    assert c.splitlines()[0] == MARKER
    assert f"{state} on a {worker} worker" in c
    assert REPRO.sha256 in c
    assert MARKER not in render_status(state, worker, Repro(found=False)).split("\n", 1)[1]


@pytest.mark.parametrize(
    "script, noted",
    [
        ("import tvm\nprint(f(x))\n", True),
        ("import numpy as np\nnp.testing.assert_allclose(a, b)\n", False),
        ("import tvm\nassert out == 3\n", False),
    ],
)
def test_a_pass_of_an_unchecked_script_says_it_cannot_rule_out_a_wrong_result(script, noted):
    t = triage(Outcome.PASSED, Verdict.NOT_REPRODUCED, signature="exit code 0", detail="",
               reported=Reported(Outcome.WRONG_RESULT, "the output is wrong"))
    t = Triage(**{**t.__dict__, "repro": Repro(found=True, script=script, blocks=("body#0",))})
    c = render_comment(t)
    assert ("does not check its own result" in c) is noted


def test_a_missing_package_is_named_once_above_the_fold() -> None:
    sig = "ModuleNotFoundError: No module named 'onnxsim'"
    t = triage(Outcome.MISSING_DEPENDENCY, Verdict.INCONCLUSIVE, signature=sig,
               detail="`onnxsim` is not installed on this worker.", reported=REPORTED_CRASH,
               run=RunResult(exit_code=1, signal=None, seconds=1.0, stderr_tail=sig + "\n"))
    c = render_comment(t)
    assert c.splitlines()[1] == (
        "### ❔ Inconclusive: the script needs a package or file that the worker does not have"
    )
    assert before_details(c).count("onnxsim") == 1
    assert "a script without that package would let the bot check it" in c


@pytest.mark.parametrize("detail", [
    "The script needs cuda, which this worker does not have.",
    "The script needs a GPU, which this worker does not have.",
    "",
])
def test_the_missing_gpu_is_said_once(detail: str) -> None:
    sig = "RuntimeError: CUDA runtime is not linked into this build"
    t = triage(Outcome.NEEDS_GPU, Verdict.INCONCLUSIVE, signature=sig, detail=detail,
               needs=("cuda",),
               run=RunResult(exit_code=1, signal=None, seconds=1.0, stderr_tail=sig + "\n"))
    c = before_details(render_comment(t))
    assert c.count("does not have") == 1
    assert c.splitlines()[1] == "### ❔ Inconclusive: the script needs a GPU, and this worker has none"


def test_the_runs_of_an_intermittent_report_are_counted_once() -> None:
    crashed = RunResult(exit_code=None, signal=11, seconds=1.5, runs=3, sandbox="bwrap")
    md = render_comment(triage(run=crashed))
    assert "passed 2 times before this run failed (run 3)" in md
    assert md.count("only sometimes") == 1
    passed = RunResult(exit_code=0, signal=None, seconds=1.5, runs=5, sandbox="bwrap")
    md = render_comment(triage(Outcome.PASSED, Verdict.NOT_REPRODUCED, run=passed, signature="",
                               detail=""))
    assert "ran 5 times and passed every time" in md
    once = render_comment(triage())
    assert "only sometimes" not in once and "times" not in before_details(once)


def test_a_report_about_speed_says_why_it_is_not_judged() -> None:
    passed = RunResult(exit_code=0, signal=None, seconds=1.5, sandbox="bwrap")
    slow = Reported(Outcome.PASSED, "", about_speed=True)
    md = render_comment(triage(Outcome.PASSED, Verdict.INCONCLUSIVE, run=passed, signature="",
                               detail="", reported=slow))
    assert "cannot judge speed" in md and md.count("speed") == 1


def test_a_report_that_tvm_accepts_something_says_so() -> None:
    refused = RunResult(exit_code=1, signal=None, seconds=1.5, sandbox="bwrap")
    rep = Reported(Outcome.PASSED, "", about_acceptance=True)
    md = render_comment(triage(Outcome.TVM_ERROR, Verdict.NOT_REPRODUCED, run=refused,
                               reported=rep))
    assert "TVM accepts this without an error" in md


def test_runs_made_because_the_values_vary_say_so() -> None:
    varied = RunResult(exit_code=0, signal=None, seconds=1.5, runs=2, sandbox="bwrap",
                       output_varied=True, rerun_for="varying")
    md = render_comment(triage(Outcome.WRONG_RESULT, Verdict.REPRODUCED, run=varied))
    assert "change from run to run: the script ran 2 times on the same input and printed " \
        "different values" in md
    assert "only sometimes" not in md
    same = RunResult(exit_code=0, signal=None, seconds=1.5, runs=2, sandbox="bwrap",
                     rerun_for="varying")
    md = render_comment(triage(Outcome.PASSED, Verdict.NOT_REPRODUCED, run=same, signature="",
                               detail=""))
    assert "printed the same output each time" in md
