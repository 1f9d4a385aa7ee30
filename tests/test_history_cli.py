"""``reprobot triage --matrix`` on real release wheels and ``reprobot bisect`` on the TVM-shaped
fixture, through the console command as a user runs it.

The matrix test needs release builds of apache-tvm 0.26.0 and 0.27.0.post1. CI makes them once
in ``.ci/run`` (``REPROBOT_TEST_RELEASE_BUILDS`` = their builds directory); without that variable
the test makes them itself with ``reprobot builds add`` (pip, from its cache or PyPI).

The script is our own, written for this test: adaptive average pooling from 3x4 to 2x2 lowers to
reductions at two nesting levels, and TVM 0.26.0 re-initialised the accumulator in the inner one
(the fix landed between the two releases, with a regression test in
tests/python/te/test_te_create_primfunc.py), so 0.26.0 returns wrong values and 0.27.0.post1 the
right ones.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tvm_fixture import REPRO, SMOKE, make_history  # tests/ is on sys.path

ROOT = Path(__file__).resolve().parent.parent
FENCE = "```"

POOL_SCRIPT = """\
import numpy as np
import tvm
from tvm import te, topi

data = te.placeholder((1, 1, 3, 4), "float32", "data")
out = topi.nn.adaptive_pool(data, [2, 2], pool_type="avg")
f = tvm.compile(te.create_prim_func([data, out]))
x = np.arange(10, 22, dtype="float32").reshape(1, 1, 3, 4)
y = tvm.runtime.tensor(np.empty((1, 1, 2, 2), dtype="float32"))
f(tvm.runtime.tensor(x), y)
want = np.array([[x[0, 0, 0:2, 0:2].mean(), x[0, 0, 0:2, 2:4].mean()],
                 [x[0, 0, 1:3, 0:2].mean(), x[0, 0, 1:3, 2:4].mean()]], dtype="float32")
np.testing.assert_allclose(y.numpy()[0, 0], want)
"""

POOL_ISSUE = f"""\
# [Bug] adaptive average pooling from 3x4 to 2x2 gives wrong values

I use apache-tvm 0.26.0 on Linux.

### To reproduce

{FENCE}python
{POOL_SCRIPT}{FENCE}

### Actual behavior

{FENCE}
AssertionError:
Not equal to tolerance rtol=1e-07, atol=0

Mismatched elements: 4 / 4 (100%)
{FENCE}
"""

ADD_ISSUE = f"""\
# [Bug] tvm.add gives a wrong result

{FENCE}python
{REPRO}{FENCE}

### Actual behavior

{FENCE}
AssertionError: wrong result: tvm.add(2, 3) = 6, expected 5
{FENCE}
"""


def reprobot(*args: str, env: dict[str, str] | None = None,
             timeout: float = 900) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True,
                          text=True, env=full, timeout=timeout, cwd=ROOT)


@pytest.mark.tvm
@pytest.mark.sandbox
@pytest.mark.release_builds
def test_matrix_on_real_wheels_finds_the_release_that_fixed_it(release_builds: Path,
                                                               tmp_path: Path) -> None:
    issue = tmp_path / "issue.md"
    issue.write_text(POOL_ISSUE)
    out = reprobot("triage", str(issue), "--matrix", "--json", "--builds-dir",
                   str(release_builds), "--builds", "0.26.0,0.27.0.post1")
    assert out.returncode == 0, out.stderr[-3000:]
    data = json.loads(out.stdout)
    rows = data["matrix"]
    assert [r["build"] for r in rows] == ["0.27.0.post1", "0.26.0"]  # newest first
    assert [r["version"] for r in rows] == ["0.27.0.post1", "0.26.0"]
    assert (rows[0]["outcome"], rows[0]["verdict"]) == ("passed", "not-reproduced")
    assert (rows[1]["outcome"], rows[1]["verdict"]) == ("wrong-result", "reproduced")
    assert all(isinstance(r["seconds"], float) and r["seconds"] > 0 for r in rows)
    h = data["history"]
    assert (h["kind"], h["last_bad"], h["first_good"]) == ("fixed", "0.26.0", "0.27.0.post1")
    assert h["compare"] == "https://github.com/apache/tvm/compare/v0.26.0...v0.27.0"
    comment = data["comment"]
    assert comment.startswith("<!-- reprobot -->") and comment.count("<!-- reprobot -->") == 1
    assert "| `0.26.0` (your version) |" in comment
    history_line = next(ln for ln in comment.splitlines() if ln.startswith("**History:**"))
    # each build named in a code span (linked to its commit when the build knows it)
    assert re.match(r"\*\*History:\*\* fails on \[?`0\.26\.0`.*, passes on \[?`0\.27\.0\.post1`",
                    history_line), history_line
    assert comment.index("**Builds:**") < comment.index("<sub>")  # above the footer

    # One build only: nothing to compare, history is null; an unknown build is a clear error.
    one = reprobot("triage", str(issue), "--matrix", "--json", "--builds-dir",
                   str(release_builds), "--builds", "0.26.0")
    assert one.returncode == 0, one.stderr[-2000:]
    assert json.loads(one.stdout)["history"] is None
    bad = reprobot("triage", str(issue), "--matrix", "--builds-dir", str(release_builds),
                   "--builds", "0.26.0,0.99.0")
    assert bad.returncode == 2 and "no ready build named 0.99.0" in bad.stderr


@pytest.mark.sandbox
def test_bisect_names_the_commit_that_fixed_it(tmp_path: Path) -> None:
    """Bug at commit 1, fixed at commit 6 of 8: bisect between main@1 (bad) and main@8 (good)."""
    shas = make_history(tmp_path / "tvm", n=8, bug_at=1, fixed_at=6)
    smoke = tmp_path / "smoke.py"
    smoke.write_text(SMOKE)
    builds = str(tmp_path / "builds")
    made = reprobot("builds", "--builds-dir", builds, "add", "main", "--git",
                    (tmp_path / "tvm").as_uri(), "--ref", shas[1], "--smoke", str(smoke))
    assert made.returncode == 0, made.stderr[-3000:]
    issue = tmp_path / "issue.md"
    issue.write_text(ADD_ISSUE)

    out = reprobot("bisect", str(issue), "--build", "main", "--good", shas[8], "--bad", shas[1],
                   "--builds-dir", builds, "--json")
    assert out.returncode == 0, out.stderr[-3000:]
    data = json.loads(out.stdout)
    h = data["history"]
    assert h["kind"] == "fixed" and h["commit"] == shas[6]
    assert h["subject"] == "commit 6: fix the add bug"
    assert 1 <= h["steps"] <= 8
    assert h["compare"].endswith(f"/compare/{shas[1]}...{shas[8]}")

    # Ends that do not disagree as given are refused, saying why.
    same = reprobot("bisect", str(issue), "--build", "main", "--good", shas[7], "--bad",
                    shas[8], "--builds-dir", builds)
    assert same.returncode == 2 and "do not disagree" in same.stderr
