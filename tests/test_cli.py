"""`reprobot triage` end to end: real issues in, real runs against apache-tvm, the comment out.

Every outcome and every verdict the bot can give is produced here by a real run of the console
command (the same process a maintainer starts), in the default bwrap sandbox.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.tvm

FENCE = "```"


def triage(tmp_path: Path, text: str, *extra: str, name: str = "issue.md") -> dict[str, Any]:
    src = tmp_path / name
    src.write_text(text)
    proc = subprocess.run(
        [sys.executable, "-m", "bot.cli", "triage", str(src), "--json", *extra],
        capture_output=True,
        text=True,
        timeout=240,
        env={"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path.parent / "cache")},
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def issue(title: str, script: str, reported: str = "") -> str:
    return f"# {title}\n\n### To reproduce\n\n{FENCE}python\n{script.strip()}\n{FENCE}\n\n{reported}\n"


CHECK_FAILED = """
import tvm
from tvm import tirx

x = tirx.Var("x", "int32")
y = tirx.Add(x, tirx.const(1.0, "float32"))
print(y)
"""


def test_internal_error_reproduced(tmp_path: Path):
    text = issue(
        "[Bug] Add of int and float crashes the checker",
        CHECK_FAILED,
        "### Actual behavior\n\n"
        f"{FENCE}\nTraceback (most recent call last):\n  File \"r.py\", line 5, in <module>\n"
        "TypeError: Check failed: (a_ty->dtype == b_ty->dtype) is false: mismatched types. int32 vs. float32\n"
        f"{FENCE}\n",
    )
    r = triage(tmp_path, text)
    assert r["outcome"] == "internal-error"
    assert r["verdict"] == "reproduced"
    assert r["repro"]["found"] and "tirx.Add" in r["repro"]["script"]
    assert r["run"]["exit_code"] == 1
    assert "Check failed" in r["run"]["stderr_tail"]
    assert r["reported"]["outcome"] == "internal-error"
    assert "repro: internal-error" in r["labels"] and "repro: reproduced" in r["labels"]
    assert r["comment"].startswith("<!-- reprobot -->")
    assert r["environment"].get("tvm_version", "").startswith("0.")


def test_segfault_reproduced(tmp_path: Path):
    script = "import ctypes\nimport tvm\nctypes.string_at(8)\n"
    r = triage(tmp_path, issue("[Bug] segfault", script, "It dies with `Segmentation fault (core dumped)`."))
    assert r["outcome"] == "crash"
    assert r["run"]["signal"] == 11
    assert r["verdict"] == "reproduced"


def test_abort_is_a_crash(tmp_path: Path):
    script = "import os\nimport tvm\nos.abort()\n"
    r = triage(tmp_path, issue("[Bug] abort at exit", script, "free(): invalid pointer\nAborted (core dumped)"))
    assert r["outcome"] == "crash"
    assert r["run"]["signal"] == 6
    assert r["verdict"] == "reproduced"


def test_wrong_result(tmp_path: Path):
    script = """
import numpy as np
import tvm

a = np.arange(4, dtype="float32")
np.testing.assert_allclose(a + 1, a, rtol=1e-5)
"""
    r = triage(tmp_path, issue("[Bug] add gives the wrong answer", script, "The outputs mismatch: Mismatched elements: 4 / 4"))
    assert r["outcome"] == "wrong-result"
    assert r["verdict"] == "reproduced"


def test_tvm_error_different_from_reported_crash(tmp_path: Path):
    script = 'import tvm\ntvm.target.Target("no_such_target_kind")\n'
    r = triage(tmp_path, issue("[Bug] target", script, "I get `Segmentation fault (core dumped)`."))
    assert r["outcome"] == "tvm-error"
    assert r["verdict"] == "different-failure"
    assert r["evidence"], "the verdict quotes what decided it"


def test_python_error_in_the_script(tmp_path: Path):
    script = "import tvm\nshape = (1, 3)\nprint(len(shape[0]))\n"
    r = triage(tmp_path, issue("[Bug] x", script, "Segmentation fault (core dumped)"))
    assert r["outcome"] == "python-error"
    assert r["verdict"] == "different-failure"


def test_a_fragment_is_an_incomplete_repro_and_the_comment_asks_for_the_rest(tmp_path: Path):
    script = (
        "import tvm\nfrom tvm import relax\n"
        "mod = relax.transform.LegalizeOps()(onnx_mod)\n"
        "ex = relax.build(mod, target='llvm')\n"
    )
    r = triage(tmp_path, issue("[Bug] LegalizeOps fails on my model", script, "it fails"))
    assert r["outcome"] == "no-repro"
    assert r["verdict"] == "inconclusive"
    assert "`onnx_mod` that the issue never defines" in r["comment"]
    assert "Please add the code that defines it" in r["comment"]


def test_old_api_is_api_mismatch_and_inconclusive(tmp_path: Path):
    script = "import tvm\nfrom tvm import relay\nx = relay.var('x')\n"
    r = triage(tmp_path, issue("[Bug] relay", script, "Segmentation fault"))
    assert r["outcome"] == "api-mismatch"
    assert r["verdict"] == "inconclusive"
    assert "relay" in r["comment"]


def test_missing_dependency(tmp_path: Path):
    script = "import tvm\nimport reprobot_absent_frontend_pkg\n"
    r = triage(tmp_path, issue("[Bug] frontend", script, "Check failed: x"))
    assert r["outcome"] == "missing-dependency"
    assert r["verdict"] == "inconclusive"
    assert "reprobot_absent_frontend_pkg" in r["comment"]


def test_needs_gpu_on_a_cpu_machine(tmp_path: Path):
    script = """
import numpy as np
import tvm

dev = tvm.cuda(0)
a = tvm.runtime.tensor(np.ones(3, "float32"), device=dev)
print(a)
"""
    r = triage(tmp_path, issue("[Bug] cuda kernel crash", script, "Segmentation fault"))
    assert "cuda" in r["needs"]
    assert r["outcome"] == "needs-gpu"
    assert r["verdict"] == "inconclusive"


def test_timeout_kills_the_run_and_reproduces_only_a_hang(tmp_path: Path):
    script = "import time\nimport tvm\ntime.sleep(600)\n"
    r = triage(tmp_path, issue("[Bug] hang", script, "It hangs forever."), "--timeout", "4")
    assert r["outcome"] == "timeout"
    assert r["run"]["timed_out"] is True
    assert r["run"]["seconds"] < 60
    # the report says it never finishes, and it did not finish here either
    assert r["verdict"] == "reproduced"
    # a report of something else: the run that did not end says nothing of it
    r = triage(tmp_path, issue("[Bug] crash", script, "It crashes with a segfault."),
               "--timeout", "4")
    assert r["outcome"] == "timeout"
    assert r["verdict"] == "inconclusive"


def test_memory_limit_is_resource_limit(tmp_path: Path):
    cfg = tmp_path / "reprobot.yml"
    cfg.write_text("sandbox:\n  limits:\n    memory_bytes: 256MiB\n")
    script = "import tvm\nblocks = []\nwhile True:\n    blocks.append(bytearray(64 * 1024 * 1024))\n"
    src = tmp_path / "issue.md"
    src.write_text(issue("[Bug] memory", script, "Segmentation fault"))
    proc = subprocess.run(
        [sys.executable, "-m", "bot.cli", "--config", str(cfg), "triage", str(src), "--json"],
        capture_output=True, text=True, timeout=240,
        env={"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path.parent / "cache")},
    )
    assert proc.returncode == 0, proc.stderr
    r = json.loads(proc.stdout)
    assert r["outcome"] == "resource-limit"
    assert r["run"]["limit_hit"] == "memory"
    assert r["verdict"] == "inconclusive"
    assert "memory" in r["comment"].lower()


def test_passing_script_is_not_reproduced(tmp_path: Path):
    script = (
        "import numpy as np\nimport tvm\n"
        "a = tvm.runtime.tensor(np.ones(3, 'float32'))\nprint(a.numpy().sum())\n"
    )
    r = triage(tmp_path, issue("[Bug] tensor crash", script, "Check failed: (x) is false"))
    assert r["outcome"] == "passed"
    assert r["verdict"] == "not-reproduced"
    assert r["run"]["exit_code"] == 0


def test_an_import_only_script_is_never_not_reproduced(tmp_path: Path):
    script = "import tvm\nprint(tvm.__version__)\n"
    r = triage(tmp_path, issue("[Bug] version crash", script, "Check failed: (x) is false"))
    assert r["outcome"] == "no-repro"
    assert r["verdict"] == "inconclusive"
    assert "only imports `tvm`" in r["comment"]


def test_no_script_asks_for_one(tmp_path: Path):
    text = "# [Bug] something is slow\n\n### Expected behavior\n\nIt should be fast.\n\n### Actual behavior\n\nIt is slow.\n"
    r = triage(tmp_path, text)
    assert r["outcome"] == "no-repro"
    assert r["verdict"] == "inconclusive"
    assert r["repro"]["found"] is False
    assert r["run"] is None
    assert "script" in r["comment"].lower()


def test_json_issue_with_main_guard_and_markdown_output(tmp_path: Path):
    body = (
        "Run this:\n\n"
        f"{FENCE}python\nimport tvm\n\n\ndef main():\n    print('ran as', __name__)\n\n\n"
        f"if __name__ == \"__main__\":\n    main()\n{FENCE}\n"
    )
    data = {"title": "[Bug] main guard", "body": body, "user": {"login": "someone"}, "labels": []}
    src = tmp_path / "issue.json"
    src.write_text(json.dumps(data))
    proc = subprocess.run(
        [sys.executable, "-m", "bot.cli", "triage", str(src)],
        capture_output=True, text=True, timeout=240,
        env={"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(tmp_path.parent / "cache")},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("<!-- reprobot -->")
    assert "ran as __main__" in proc.stdout
    assert "Labels: " in proc.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["triage", "/nonexistent/issue.md"], "cannot read"),
        (["triage", "-", "--tvm-python", "/nonexistent/python"], "--tvm-python"),
        (["triage", "-", "--timeout", "0"], "--timeout"),
        (["triage", "-", "--timeout", "nan"], "--timeout must be a finite number"),
        (["triage", "-", "--timeout", "inf"], "--timeout must be a finite number"),
        (["triage", "-", "--timeout", "-1"], "--timeout must be between"),
        (["serve", "--port", "70000"], "--port"),
    ],
)
def test_bot_errors_exit_nonzero_with_one_line(args: list[str], message: str):
    stdin = f"{FENCE}python\nimport tvm\n{FENCE}\n"
    proc = subprocess.run(
        [sys.executable, "-m", "bot.cli", *args], input=stdin, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]


def run_cli(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], input=stdin,
                          capture_output=True, timeout=120)


@pytest.mark.parametrize(
    "setting, key",
    [
        ("limits:\n    timeout_s: .nan", "sandbox.limits.timeout_s"),
        ("limits:\n    memory_bytes: -1", "sandbox.limits.memory_bytes"),
        ("limits:\n    max_processes: 0", "sandbox.limits.max_processes"),
        ("limits:\n    output_bytes: 0", "sandbox.limits.output_bytes"),
        ("limits:\n    disk_bytes: -5", "sandbox.limits.disk_bytes"),
    ],
)
def test_bad_config_values_stop_the_cli_naming_the_key(tmp_path: Path, setting: str, key: str):
    cfg = tmp_path / "reprobot.yml"
    cfg.write_text(f"sandbox:\n  {setting}\n")
    proc = run_cli("--config", str(cfg), "triage", "-", stdin=f"{FENCE}python\nimport tvm\n{FENCE}\n".encode())
    assert proc.returncode == 2
    lines = proc.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and key in lines[0], lines
    assert proc.stdout == b""


@pytest.mark.parametrize(
    "data, message",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "is a binary file"),
        (b"PK\x03\x04\x14\x00\x00\x00\x08\x00", "is a binary file"),
        (b"# [Bug] caf\xe9\n\nno script\n", "is not UTF-8 text"),
    ],
)
def test_a_binary_file_is_refused(tmp_path: Path, data: bytes, message: str):
    src = tmp_path / "issue.md"
    src.write_bytes(data)
    for proc in (run_cli("triage", str(src)), run_cli("triage", "-", stdin=data)):
        assert proc.returncode == 2
        lines = proc.stderr.decode().strip().splitlines()
        assert len(lines) == 1 and message in lines[0], lines
        assert proc.stdout == b""


def test_eval_help_shows_its_options():
    proc = run_cli("eval", "--help")
    assert proc.returncode == 0
    out = proc.stdout.decode()
    for option in ("corpus", "--jobs", "--no-run", "--tvm-python", "--sandbox", "--timeout",
                   "--case", "--show"):
        assert option in out


def test_cli_output_says_the_labels_once(tmp_path: Path):
    src = tmp_path / "issue.md"
    src.write_text("# [Bug] slow\n\nCompiling is slow.\n")
    proc = subprocess.run([sys.executable, "-m", "bot.cli", "triage", str(src)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("repro: no-repro") == 1
    assert proc.stdout.rstrip().splitlines()[-1] == "Labels: repro: no-repro, repro: inconclusive"


MEAN = """
import numpy as np

x = np.array([[1, 2], [3, 4]], dtype="int32")
print("mine :", int(x.sum() // x.size))
print("numpy:", x.mean())
"""


@pytest.mark.parametrize(
    ("shown", "outcome", "verdict"),
    [
        # The run prints the lines the report shows as wrong: the same wrong result.
        ("mine : 2\nnumpy: 2.5", "wrong-result", "reproduced"),
        # It prints something else now: the report's wrong output is gone.
        ("mine : 3\nnumpy: 2.5", "passed", "not-reproduced"),
    ],
)
def test_a_wrong_result_shown_only_as_printed_output(tmp_path: Path, shown: str, outcome: str,
                                                     verdict: str):
    text = (f"# [Bug] mean of int32 truncates\n\nThe mean should be 2.5 but it returns 2.\n\n"
            f"{FENCE}python\n{MEAN.strip()}\n{FENCE}\n\nOutput:\n\n{FENCE}\n{shown}\n{FENCE}\n")
    r = triage(tmp_path, text)
    assert (r["outcome"], r["verdict"]) == (outcome, verdict)
    if outcome == "wrong-result":
        assert "printed the same output the report shows as the wrong result" in r["comment"]


def test_a_wrong_result_shown_under_actual_behavior_above_the_script(tmp_path: Path):
    """The bug template's order: "Actual behavior" (the printed output) comes before "Steps to
    reproduce" (the script, which only prints); the expected value is stated in prose."""
    text = (f"# [Bug] mean of int32 truncates\n\n### Expected behavior\n\nThe mean of the "
            f"array is 2.5, as numpy says.\n\n### Actual behavior\n\nThe fraction is dropped:"
            f"\n\n{FENCE}\nmine : 2\n"
            f"numpy: 2.5\n{FENCE}\n\n### Steps to reproduce\n\n{FENCE}python\n{MEAN.strip()}"
            f"\n{FENCE}\n")
    r = triage(tmp_path, text)
    assert (r["outcome"], r["verdict"]) == ("wrong-result", "reproduced")


@pytest.mark.parametrize(("argv", "command"), [
    (["triage", "issue.md", "--json"], "triage"),
    (["--config", "r.yml", "builds", "list"], "builds"),
    (["--config=r.yml", "eval", "corpus"], "eval"),
    # the whole parser: help, an unknown command, an option it does not know before the command
    (["--help"], None),
    (["triage-all", "x"], None),
    (["-v", "triage", "x"], None),
    ([], None),
])
def test_only_the_named_subcommands_parser_is_built(argv: list[str], command: str | None) -> None:
    from bot.cli import _command_in

    assert _command_in(argv) == command


@pytest.mark.parametrize("argv", [
    ["triage", "issue.md", "--json", "--tvm-python", "/x/python", "--timeout", "30"],
    ["--config", "r.yml", "builds", "add", "main", "--git", "https://x/tvm", "--no-update"],
    ["eval", "corpus", "--jobs", "1", "--case", "a", "--case", "b"],
    ["worker", "--queues", "cpu", "--beat"],
])
def test_the_one_subcommand_parser_reads_like_the_whole_one(argv: list[str]) -> None:
    from bot.cli import _command_in, _parser

    one, whole = _parser(_command_in(argv)).parse_args(argv), _parser().parse_args(argv)
    assert {k: v for k, v in vars(one).items() if k != "func"} == \
        {k: v for k, v in vars(whole).items() if k != "func"}
    assert one.func is whole.func


def test_an_intermittent_crash_is_run_again_while_it_passes(tmp_path: Path):
    script = "import numpy as np\nimport tvm\nprint(tvm.runtime.tensor(np.zeros(3)).numpy())\n"
    r = triage(tmp_path, issue("[Bug] take() segfaults randomly", script,
                               "About half the runs die with `Segmentation fault (core dumped)`."))
    assert r["outcome"] == "passed" and r["run"]["runs"] == 5
    assert "ran 5 times and passed every time" in r["comment"]
    crash = "import ctypes\nimport tvm\nctypes.string_at(8)\n"
    r = triage(tmp_path, issue("[Bug] take() segfaults randomly", crash,
                               "About half the runs die with `Segmentation fault (core dumped)`."))
    assert r["outcome"] == "crash" and r["verdict"] == "reproduced" and r["run"]["runs"] == 1
