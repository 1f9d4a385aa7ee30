"""``reprobot eval``: agreement with a (synthetic) triaged corpus, disagreements listed."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml

from bot.cli import main as cli_main
from bot.evaluate import compare_scripts

F = "```"


def make_case(root: Path, name: str, body: str, expected: dict, repro: str | None = None) -> None:
    d = root / name
    d.mkdir(parents=True)
    issue = {"title": f"[Bug] {name}", "body": body, "user": {"login": "alice"}, "labels": [],
             "comments": []}
    (d / "issue.json").write_text(json.dumps(issue))
    (d / "expected.yaml").write_text(yaml.safe_dump(expected))
    if repro is not None:
        (d / "repro.py").write_text(repro)


def main(argv: list[str]) -> int:
    return cli_main(["eval", *argv])


def agreement(out: str) -> dict[str, str]:
    """{"has_repro": "3/4", ...} from the report's per-field lines."""
    found = re.findall(r"^  (\w+)\s+(\d+/\d+)\s+[\d.]+%$", out, re.M)
    return dict(found)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    script = "import tvm\nprint(tvm.runtime.tensor([1.0, 2.0]).numpy().sum())\n"
    make_case(root, "passes", f"This segfaults on 0.19:\n\n{F}python\n{script}{F}\n", {
        "has_repro": True, "repro_shape": "fenced", "needs": [],
        "reported": {"outcome": "crash", "signature": "Segmentation fault"},
        "observed": {"outcome": "passed"}, "verdict": "not-reproduced",
    }, repro=script)
    make_case(root, "torch-needed", f"{F}python\nimport torch\nimport tvm\n{F}\n", {
        "has_repro": True, "repro_shape": "fenced", "needs": ["torch"],
        "reported": {"outcome": "crash", "signature": ""},
        "observed": {"outcome": "missing-dependency"}, "verdict": "inconclusive",
    }, repro="import torch\nimport tvm\n")
    make_case(root, "no-code", "It is slow, please fix.", {
        "has_repro": False, "repro_shape": "none", "needs": [],
        "reported": {"outcome": "no-repro", "signature": ""},
        "observed": {"outcome": "no-repro"}, "verdict": "inconclusive",
    })
    # The human saw a repro here; the bot will not: a disagreement to list.
    make_case(root, "human-disagrees", "Nothing runnable here.", {
        "has_repro": True, "repro_shape": "fenced", "needs": ["cuda"],
        "reported": {"outcome": "crash", "signature": ""},
        "observed": {"outcome": "crash"}, "verdict": "reproduced",
    }, repro="import tvm\n")
    (root / "README.md").write_text("not a case")
    return root


def test_no_run_reports_extraction_agreement(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(corpus), "--no-run"]) == 0
    out = capsys.readouterr().out
    assert "4 cases" in out
    got = agreement(out)
    assert got["has_repro"] == "3/4"
    assert got["needs"] == "3/3"  # the two scripts, and the no-code case from its text
    assert got["observed"] == "1/2"  # without running, only no-repro outcomes are known
    assert "verdict" not in got
    assert "script vs repro.py: identical 2" in out
    assert re.search(r"human-disagrees +has_repro +expected True, got False -- No Python code", out)
    assert "disagreements (2):" in out


@pytest.mark.tvm
def test_run_reports_outcomes_and_verdicts(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(corpus), "--sandbox", "none", "--timeout", "120",
                 "--tvm-python", sys.executable, "--case", "passes", "--case", "no-code"]) == 0
    out = capsys.readouterr().out
    assert "2 cases" in out
    got = agreement(out)
    assert got["observed"] == "2/2"
    assert got["verdict"] == "2/2"
    assert re.search(r"^  not-reproduced +1/1$", out, re.M)
    assert re.search(r"^  passed +1/1$", out, re.M)


def test_missing_corpus_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "nope"), "--no-run"]) == 2
    assert "is not a folder" in capsys.readouterr().err
    assert main([str(tmp_path), "--no-run"]) == 2
    assert "no cases" in capsys.readouterr().err


def test_compare_scripts() -> None:
    assert compare_scripts("import tvm  \n\n\nx = 1\n", "import tvm\nx = 1") == ("identical", "")
    assert compare_scripts("x = (1,\n 2)\n", "x = (1, 2)\n")[0] == "same-code"
    kind, why = compare_scripts("import tvm\n", "import torch\n")
    assert kind == "differs" and "line 1" in why
