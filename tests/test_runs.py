"""bot.runs: the runs a report of an intermittent failure gets, and when to stop."""

from __future__ import annotations

import pytest

from bot.models import Issue
from bot.plan import plan, says_intermittent
from bot.runs import INTERMITTENT_RUNS, RERUN_BUDGET_S, RunResult, again_while_clean, ran_clean

PASS = RunResult(exit_code=0, signal=None, seconds=1.0)
SEGV = RunResult(exit_code=None, signal=11, seconds=1.0)
ERROR = RunResult(exit_code=1, signal=None, seconds=1.0)
TIMEOUT = RunResult(exit_code=None, signal=9, seconds=300.0, timed_out=True, limit_hit="time")


class Runs:
    """The runs ``again`` hands out, in order (a script whose outcome changes between runs)."""

    def __init__(self, *runs: RunResult) -> None:
        self.left = list(runs)
        self.made = 0

    def __call__(self) -> RunResult:
        self.made += 1
        return self.left.pop(0)


def test_a_run_that_fails_at_once_is_not_made_again() -> None:
    again = Runs(PASS)
    run = again_while_clean(SEGV, again, INTERMITTENT_RUNS)
    assert run == SEGV and run.runs == 1 and again.made == 0


def test_passing_runs_are_made_again_until_one_fails() -> None:
    again = Runs(PASS, SEGV, PASS)
    run = again_while_clean(PASS, again, INTERMITTENT_RUNS)
    assert run.signal == 11 and run.runs == 3 and again.made == 2


def test_runs_that_all_pass_stop_at_the_attempts() -> None:
    again = Runs(*[PASS] * 10)
    run = again_while_clean(PASS, again, INTERMITTENT_RUNS)
    assert ran_clean(run) and run.runs == INTERMITTENT_RUNS and again.made == INTERMITTENT_RUNS - 1


def test_one_attempt_is_one_run() -> None:
    again = Runs(SEGV)
    assert again_while_clean(PASS, again, 1) == PASS and again.made == 0


def test_no_run_starts_once_the_runs_took_the_budget() -> None:
    slow = RunResult(exit_code=0, signal=None, seconds=RERUN_BUDGET_S * 0.6)
    again = Runs(slow, slow, slow)
    run = again_while_clean(slow, again, INTERMITTENT_RUNS)
    assert run.runs == 2 and again.made == 1


@pytest.mark.parametrize("run", [ERROR, SEGV, TIMEOUT,
                                 RunResult(exit_code=0, signal=None, seconds=1.0, limit_hit="output")])
def test_a_failed_or_cut_run_is_not_clean(run: RunResult) -> None:
    assert not ran_clean(run)


def test_runs_survive_the_json_between_worker_and_triage() -> None:
    run = again_while_clean(PASS, Runs(SEGV), 3)
    assert RunResult.from_dict(run.to_dict()).runs == 2
    assert RunResult.from_dict({k: v for k, v in PASS.to_dict().items() if k != "runs"}).runs == 1


SCRIPT = "```python\nimport tvm\nprint(tvm.__version__)\n```\n"

# (reporter's prose, says the failure is intermittent)
SAYS = [
    ("It segfaults randomly on my machine.", True),
    ("Roughly half the runs crash, the others print `finished`.", True),
    ("It crashes in about 50% of runs.", True),
    ("The result is wrong 3 out of 10 runs.", True),
    ("Fails intermittently with an InternalError.", True),
    ("Not every time, but often: Segmentation fault.", True),
    ("It is flaky: sometimes it passes, sometimes it aborts.", True),
    ("偶现崩溃，大概一半的概率。", True),
    ("It segfaults every time.", False),
    ("Sometimes I use the cuda target instead, same thing.", False),
    ("It crashes 100% of the time.", False),
    ("The column count comes from a dynamic batch and is sometimes 0; then it segfaults.", False),
    ("The index buffer is not always initialised by our loader, so it crashes.", False),
    ("It does not always crash, but when it does: Segmentation fault.", True),
    ("Segmentation fault (core dumped)", False),
]


@pytest.mark.parametrize(("prose", "says"), SAYS)
def test_what_reads_as_an_intermittent_failure(prose: str, says: bool) -> None:
    issue = Issue(title="[Bug] relax take", body=f"{prose}\n\n{SCRIPT}", author="a")
    assert says_intermittent(issue) is says
    assert plan(issue).attempts == (INTERMITTENT_RUNS if says else 1)


def test_words_in_the_code_or_someone_elses_comment_do_not_count() -> None:
    code = "```python\nimport numpy as np\nx = np.random.rand(3)  # randomly, sometimes big\n```\n"
    issue = Issue.from_github({
        "title": "[Bug] segfault in take", "body": f"It crashes.\n\n{code}",
        "user": {"login": "a"},
        "comments": [{"user": {"login": "b"}, "body": "Flaky for me too, only sometimes."}],
    })
    assert not says_intermittent(issue)
    own = Issue.from_github({**{"title": issue.title, "body": issue.body, "user": {"login": "a"}},
                             "comments": [{"user": {"login": "a"}, "body": "It is flaky, sorry."}]})
    assert says_intermittent(own)


def test_no_script_no_reruns_and_the_plan_keeps_its_attempts_as_json() -> None:
    from bot.plan import Plan

    assert plan(Issue(title="crashes randomly", body="no code here")).attempts == 1
    p = plan(Issue(title="crashes randomly", body=SCRIPT))
    assert Plan.from_dict(p.to_dict()).attempts == INTERMITTENT_RUNS
    old = {k: v for k, v in p.to_dict().items() if k != "attempts"}
    assert Plan.from_dict(old).attempts == 1


# The report says the printed values change from run to run: two runs, compared.
VARIES = [
    ("It silently returns some random number. Value changes from run to run.", True),
    ("I get this output, every time run is different number:", True),
    ("The output is garbage values, like uninitialized memory.", True),
    ("It prints different values on every run.", True),
    ("i get some random float back (3.8e-33 on my box, changes every run)", True),
    ("Output (the second value of row 1 changes between runs):", True),
    # not about printed values changing
    ("It crashes in about half the runs.", False),  # (intermittent: five runs)
    ("The result is wrong: 3 instead of 4.", False),
    ("The values differ from numpy.", False),
    ("The result differs between targets.", False),
]


@pytest.mark.parametrize(("prose", "varies"), VARIES)
def test_what_reads_as_values_that_change_between_runs(prose: str, varies: bool) -> None:
    from bot.plan import says_output_varies
    from bot.runs import VARYING_RUNS

    issue = Issue(title="[Bug] relax take", body=f"{prose}\n\n{SCRIPT}", author="a")
    assert says_output_varies(issue) is varies
    p = plan(issue)
    if varies:
        assert (p.attempts, p.rerun_for) == (VARYING_RUNS, "varying")
    elif says_intermittent(issue):
        assert p.rerun_for == "intermittent"
    else:
        assert (p.attempts, p.rerun_for) == (1, "")


def test_two_clean_runs_that_print_differently_stop_and_say_so() -> None:
    first = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail="[1.0e+00 9.8e-44]\n")
    other = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail="[1.0e+00 3.7e-16]\n")
    run = again_while_clean(first, Runs(other, other), 5, "varying")
    assert run.output_varied and run.runs == 2 and run.rerun_for == "varying"
    same = again_while_clean(first, Runs(first), 2, "varying")
    assert not same.output_varied and same.runs == 2
    # a failing second run is the failure, as before
    assert not again_while_clean(first, Runs(SEGV), 2, "varying").output_varied


def test_the_same_junk_twice_in_a_row_gets_a_third_run() -> None:
    from bot.runs import VARYING_RUNS

    first = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail="[1. nan]\n")
    other = RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail="[1.0e+00 -1.35e-29]\n")
    run = again_while_clean(first, Runs(first, other), VARYING_RUNS, "varying")
    assert run.output_varied and run.runs == 3
    # ...and never more: three runs that print the same are just that
    same = again_while_clean(first, Runs(first, first, other), VARYING_RUNS, "varying")
    assert not same.output_varied and same.runs == 3


def test_real_runs_of_a_script_whose_output_changes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import subprocess
    import sys

    from bot.classify import account_for_varied_output, classify
    from bot.models import Outcome, Reported

    script = "print(object())\n"  # an address: another one on every run (ASLR)
    (tmp_path / "repro.py").write_text(script)

    def once() -> RunResult:
        p = subprocess.run([sys.executable, "repro.py"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=60)
        return RunResult(exit_code=p.returncode, signal=None, seconds=0.1, stdout_tail=p.stdout)

    run = again_while_clean(once(), once, 2, "varying")
    assert run.output_varied
    wrong = Reported(Outcome.WRONG_RESULT, "returns garbage")
    got = account_for_varied_output(classify(run, script=script), run, script, wrong)
    assert got.outcome == Outcome.WRONG_RESULT and "different values" in got.detail
    # a script with random inputs of its own varies by itself: that says nothing
    seeded = "import numpy as np\nprint(np.random.rand(2))\n"
    assert account_for_varied_output(classify(run, script=seeded), run, seeded,
                                     wrong).outcome == Outcome.PASSED
    # nor does a report that does not call the result wrong
    assert account_for_varied_output(classify(run, script=script), run, script,
                                     Reported(Outcome.CRASH, "segfault")).outcome == Outcome.PASSED
