"""`reprobot triage` with the warm start: the sandbox starts (and imports tvm) while the issue is
read; the result is the one the cold path gives (``--no-warm``, ``sandbox.warm_start: false``).

Runs the real CLI in this process (real bwrap, real apache-tvm) with a spy on the prestarted
run, to see which path each triage took.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

from bot import cli
from tasks import runner as runner_mod

pytestmark = [pytest.mark.tvm,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")]

FENCE = "```"


def issue(script: str) -> str:
    return (f"# [Bug] tvm error\n\n### To reproduce\n\n{FENCE}python\n{script.strip()}\n{FENCE}\n\n"
            "It fails with a TVMError.\n")


class Spy:
    """Records how each prestarted run was used (the real methods run)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.prestarts = 0
        self.used: list[str | None] = []
        self.discards = 0
        real_prestart = runner_mod.prestart
        real_go = runner_mod.Prestarted.go
        real_discard = runner_mod.Prestarted.discard

        def prestart(*a: Any, **k: Any) -> Any:
            self.prestarts += 1
            return real_prestart(*a, **k)

        def go(p: Any, *a: Any, **k: Any) -> Any:
            try:
                return real_go(p, *a, **k)
            finally:
                self.used.append(p.used)

        def discard(p: Any) -> None:
            if not p.done:
                self.discards += 1
            real_discard(p)

        monkeypatch.setattr(runner_mod, "prestart", prestart)
        monkeypatch.setattr(runner_mod.Prestarted, "go", go)
        monkeypatch.setattr(runner_mod.Prestarted, "discard", discard)


def triage(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str], *extra: str,
           config: str = "") -> dict[str, Any]:
    src = tmp_path / "issue.md"
    src.write_text(text)
    argv = ["triage", str(src), "--json", *extra]
    if config:
        (tmp_path / "reprobot.yml").write_text(config)
        argv = ["--config", str(tmp_path / "reprobot.yml"), *argv]
    assert cli.main(argv) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


def timeless(d: dict[str, Any]) -> dict[str, Any]:
    d = json.loads(json.dumps(d))
    if d.get("run"):
        d["run"].pop("seconds")
    d["comment"] = re.sub(r"after [0-9.]+ (s|min)", "after T", d["comment"])
    return d


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("REPROBOT_CONFIG", raising=False)


def test_triage_runs_warm_and_says_what_the_cold_path_says(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    script = 'import tvm\nimport sys\nprint("args", sys.argv[1:])\ntvm.target.Target("no_such_kind")\n'
    spy = Spy(monkeypatch)
    hot = triage(tmp_path, issue(script), capsys)
    assert spy.prestarts == 1 and spy.used == ["warm"]
    cold = triage(tmp_path, issue(script), capsys, "--no-warm")
    assert spy.prestarts == 1 and spy.used == ["warm"]  # --no-warm: no prestart at all
    assert hot["outcome"] == "tvm-error"
    assert "no_such_kind" in hot["run"]["stderr_tail"]
    assert timeless(hot) == timeless(cold)


def test_config_turns_the_warm_start_off(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Spy(monkeypatch)
    out = triage(tmp_path, issue("import tvm\nprint(tvm.__version__ + '!')\n"), capsys,
                 config="sandbox:\n  warm_start: false\n")
    assert spy.prestarts == 0 and spy.used == []
    assert out["run"]["exit_code"] == 0


def test_the_issues_own_leading_imports_are_preloaded_in_order(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    script = ("import numpy as np\nimport tvm\nfrom tvm import te\n"
              "print(np.ones(2).sum(), te.__name__)\n")
    spy = Spy(monkeypatch)
    hot = triage(tmp_path, issue(script), capsys)
    assert spy.used == ["warm"]  # numpy, then tvm, then tvm.te: the script's own order
    assert hot["run"]["stdout_tail"] == "2.0 tvm.te\n"
    cold = triage(tmp_path, issue(script), capsys, "--no-warm")
    assert timeless(hot) == timeless(cold)


@pytest.mark.parametrize("text", [
    # code before tvm is imported: os.environ set first
    issue("import os\nos.environ['TVM_NUM_THREADS'] = '1'\nimport tvm\nprint(tvm.__name__)\n"),
    # the script found is not the issue's first code block, and imports torch-like things first
    "# [Bug] x\n\n```\n$ pip list | grep tvm\n```\n\n```python\nimport json\nimport tvm\n"
    "print(json.dumps(1))\n```\n",
    "# [Bug] it crashes\n\nIt crashes when I build my model. No script, sorry.\n",
])
def test_a_script_not_starting_with_tvm_or_no_script_discards_the_warm_start(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        text: str) -> None:
    spy = Spy(monkeypatch)
    hot = triage(tmp_path, text, capsys)
    assert spy.prestarts == 1 and spy.used == [] and spy.discards == 1
    cold = triage(tmp_path, text, capsys, "--no-warm")
    assert timeless(hot) == timeless(cold)
    assert list(Path(tempfile.gettempdir()).glob(f"reprobot-run-{os.getpid()}-*")) == []


# --------------------------------------------------------------------------- the early start

def early_triage(tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str],
                 *extra: str) -> tuple[dict[str, Any], Any]:
    """What the console script does: tasks.launch.quick_start, then the command with it."""
    from tasks import launch

    src = tmp_path / "issue.md"
    src.write_text(text)
    argv = ["triage", str(src), "--json", *extra]
    early = launch.quick_start(argv, os.environ)
    code, _ = cli._main(argv, early)
    assert code == 0
    return json.loads(capsys.readouterr().out), early


def test_the_next_triage_starts_its_sandbox_from_the_last_ones_recipe(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from tasks import launch

    script = ("import numpy\nimport tvm\nimport os, sys\nprint(sys.argv[1:], sorted(os.listdir('.')))\n"
              "print(sorted(os.listdir('/proc/self/fd')), sorted(os.environ), os.getcwd())\n")
    first, early = early_triage(tmp_path, issue(script), capsys)
    assert early.proc is None  # nothing saved yet: the bot started its own and saved its recipe
    path = Path(launch.recipe_path(os.environ))
    assert path.exists()
    spy = Spy(monkeypatch)
    second, early = early_triage(tmp_path, issue(script), capsys)
    assert early.proc is not None and early.taken and spy.used == ["warm"]
    assert early.proc.returncode is not None  # ended, reaped
    assert second["run"]["stdout_tail"].startswith("[] ['repro.py']\n['0', '1', '2', '3']")
    assert timeless(second) == timeless(first)
    cold = triage(tmp_path, issue(script), capsys, "--no-warm")
    assert timeless(second) == timeless(cold)
    mine = f"reprobot-run-{os.getpid()}-"  # the runs' scratch mount points: all removed
    assert not [p for p in Path(tempfile.gettempdir()).iterdir() if p.name.startswith(mine)]


def test_a_stale_recipe_is_killed_unused_and_replaced(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from tasks import launch

    script = "import tvm\nimport os\nprint('stale:', os.environ.get('REPROBOT_TEST_STALE'))\n"
    early_triage(tmp_path, issue(script), capsys)
    path = launch.recipe_path(os.environ)
    saved = launch.load(path)
    assert saved is not None
    fresh = launch.normal(saved)
    at = saved["argv"].index("--clearenv") + 1  # the same run, but one variable more
    saved["argv"][at:at] = ["--setenv", "REPROBOT_TEST_STALE", "1"]
    launch.save(path, saved)
    spy = Spy(monkeypatch)
    out, early = early_triage(tmp_path, issue(script), capsys)
    assert early.proc is not None and early.proc.returncode is not None  # started, then killed
    assert early.made.scratch == "" and early.made.cgroup_dirs == {}  # and cleaned up
    assert spy.used == ["warm"]  # the bot's own prestart ran the script
    assert out["run"]["stdout_tail"] == "stale: None\n"
    assert launch.load(path) == fresh  # the bot's recipe replaced the stale one


def test_no_warm_start_in_the_config_forgets_the_recipe(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from tasks import launch

    early_triage(tmp_path, issue("import tvm\nprint(1)\n"), capsys)
    path = Path(launch.recipe_path(os.environ))
    assert path.exists()
    (tmp_path / "reprobot.yml").write_text("sandbox:\n  warm_start: false\n")
    monkeypatch.setenv("REPROBOT_CONFIG", str(tmp_path / "reprobot.yml"))
    out, early = early_triage(tmp_path, issue("import tvm\nprint(1)\n"), capsys)
    assert early.proc is not None and early.proc.returncode is not None  # killed unused
    assert out["run"]["stdout_tail"] == "1\n"
    assert not path.exists()  # the next triage starts nothing it will not use
