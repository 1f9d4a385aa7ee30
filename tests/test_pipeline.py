"""bot.pipeline: what the report says can be read before the run ends (the CLI reads it beside
the running script) and gives the same triage as reading it in ``conclude``."""

from __future__ import annotations

import pytest

from bot.models import Outcome, RunResult, Verdict
from bot.pipeline import conclude, plan, read_report
from bot.source import issue_from_text

CRASH_REPORT = """# [Bug] segfault in LowerToTIR

```python
import tvm
print("ok")
```

### Actual behavior
```
Segmentation fault (core dumped)
```
"""

CHECK_FAILED_REPORT = """# [Bug] Check failed in ConvertSSA

```python
import tvm
raise SystemExit(1)
```

### Actual behavior

```
tvm.error.InternalError: Check failed: (it != var_remap_.end()) is false
```
"""

SILENT_REPORT = """# a question about schedules

```python
import tvm
print("ok")
```
"""

RUNS = {
    "segfault": RunResult(exit_code=None, signal=11, seconds=1.0,
                          stderr_tail="Fatal Python error: Segmentation fault\n"),
    "internal": RunResult(exit_code=1, signal=None, seconds=1.0, stderr_tail=(
        "Traceback (most recent call last):\n  File \"repro.py\", line 2, in <module>\n"
        "tvm.error.InternalError: Check failed: (it != var_remap_.end()) is false\n")),
    "passed": RunResult(exit_code=0, signal=None, seconds=1.0, stdout_tail="ok\n"),
}


@pytest.mark.parametrize("text", [CRASH_REPORT, CHECK_FAILED_REPORT, SILENT_REPORT])
@pytest.mark.parametrize("run", sorted(RUNS))
def test_the_report_read_ahead_gives_the_same_triage(text: str, run: str) -> None:
    issue = issue_from_text(text, "issue.md")
    the_plan = plan(issue)
    ahead = conclude(issue, the_plan, RUNS[run], {}, reported=read_report(issue, the_plan))
    inside = conclude(issue, the_plan, RUNS[run], {})
    assert ahead == inside


def test_a_report_that_says_nothing_is_an_answer_not_unread() -> None:
    """``reported=None`` is "the issue says nothing specific": conclude does not read it again."""
    issue = issue_from_text(CHECK_FAILED_REPORT, "issue.md")
    the_plan = plan(issue)
    assert read_report(issue, the_plan) is not None
    read = conclude(issue, the_plan, RUNS["internal"], {})
    told_nothing = conclude(issue, the_plan, RUNS["internal"], {}, reported=None)
    assert read.outcome == told_nothing.outcome == Outcome.INTERNAL_ERROR
    assert read.verdict == Verdict.REPRODUCED
    assert read.reported is not None and "var_remap_" in read.reported.signature
    assert told_nothing.reported is None


PARAPHRASE_REPORT = """# relax nn export fails when concatenating

```python
import tvm
raise SystemExit(1)
```

### Actual behavior
It throws a ValueError from inside TVM about Concat and the dimensions (I lost the log).
"""


def _value_error(message: str) -> RunResult:
    return RunResult(exit_code=1, signal=None, seconds=1.0, stderr_tail=(
        "Traceback (most recent call last):\n  File \"repro.py\", line 2, in <module>\n"
        '  File "/venv/lib/python3.11/site-packages/tvm/relax/frontend/nn/core.py", '
        "line 510, in export_tvm\n"
        f"ValueError: {message}\n"))


@pytest.mark.parametrize(("message", "verdict"), [
    ("Concat expects the input tensors to have the same shape on every dimension except the "
     "one indicated by the input axis.", Verdict.REPRODUCED),
    ("Cannot broadcast the shapes of the two inputs of add.", Verdict.DIFFERENT_FAILURE),
])
def test_a_paraphrased_error_is_matched_by_its_type_and_subject(message: str,
                                                                verdict: Verdict) -> None:
    issue = issue_from_text(PARAPHRASE_REPORT, "issue.md")
    the_plan = plan(issue)
    t = conclude(issue, the_plan, _value_error(message), {})
    assert t.outcome == Outcome.TVM_ERROR
    assert t.verdict == verdict, t.evidence
