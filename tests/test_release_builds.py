"""Release builds from the real apache-tvm wheels on PyPI, and one script whose outcome differs.

``tvm.arith`` is in apache-tvm 0.26.0 and gone from 0.27.0.post1 (renamed ``tvm.sym``): the same
repro passes on one build and is an API mismatch on the other, through ``reprobot triage --build``.
Needs PyPI (pip) the first time; the builds directory is made once per test session.
Select with ``-m release_builds``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import RELEASE_SPECS as RELEASES  # tests/ is on sys.path

pytestmark = [pytest.mark.release_builds, pytest.mark.sandbox]

FENCE = "```"
ARITH = """\
import tvm
from tvm import arith, tirx

analyzer = arith.Analyzer()
x = tirx.Var("x", "int32")
print("simplified:", analyzer.simplify(x + 0 - x))
"""


def cli(tmp: Path, builds: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp),
           "XDG_CACHE_HOME": str(tmp / "cache"), "REPROBOT_BUILDS_DIR": str(builds),
           "LANG": "C.UTF-8"}
    # pip as the user has it set up (its index, its cache: the wheels are big)
    env["PIP_CACHE_DIR"] = os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip")
    for k, v in os.environ.items():
        if k.startswith("PIP_") and k != "PIP_CACHE_DIR":
            env[k] = v
    for conf in (Path.home() / ".config" / "pip" / "pip.conf", Path.home() / ".pip" / "pip.conf"):
        if conf.is_file() and "PIP_CONFIG_FILE" not in env:
            env["PIP_CONFIG_FILE"] = str(conf)
    proc = subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True,
                          text=True, timeout=900, env=env, cwd=tmp)
    if check:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


@pytest.fixture(scope="session")
def releases(tmp_path_factory: pytest.TempPathFactory, release_builds: Path) -> tuple[Path, Path]:
    """A home for the CLI, and the builds directory with both releases (conftest: made once,
    by ``builds add`` from pip)."""
    return tmp_path_factory.mktemp("releases"), release_builds


def triage(tmp: Path, builds: Path, *extra: str) -> dict[str, Any]:
    issue = tmp / "arith.md"
    issue.write_text(f"# [Bug] simplify\n\n{FENCE}python\n{ARITH}{FENCE}\n")
    result: dict[str, Any] = json.loads(cli(tmp, builds, "triage", str(issue), "--json",
                                            *extra).stdout)
    return result


def test_release_builds_are_listed_newest_first_with_their_identity(releases):
    tmp, builds = releases
    entries = json.loads(cli(tmp, builds, "builds", "list", "--json").stdout)
    assert [e["name"] for e in entries] == ["0.27.0.post1", "0.26.0"]
    for e in entries:
        assert (e["kind"], e["status"], e["error"]) == ("release", "ready", "")
        assert e["version"] == e["name"]
        assert e["commit"]  # from the wheel's own version file
        assert e["source"] == f"pip: {RELEASES[e['name']]} numpy"
        log = (builds / e["name"] / "installs" / e["install_id"] / "build.log").read_text()
        assert "smoke ok" in log  # the default smoke test compiled and ran an llvm kernel
    # a release installs once: a second update changes nothing
    before = {e["name"]: e["install_id"] for e in entries}
    cli(tmp, builds, "builds", "update")
    after = json.loads(cli(tmp, builds, "builds", "list", "--json").stdout)
    assert {e["name"]: e["install_id"] for e in after} == before


def test_one_script_two_outcomes(releases):
    tmp, builds = releases
    old = triage(tmp, builds, "--build", "0.26.0")
    new = triage(tmp, builds, "--build", "0.27.0.post1")
    assert old["outcome"] == "passed", old["run"]
    assert "simplified: 0" in old["run"]["stdout_tail"]
    assert old["build"]["name"] == "0.26.0" and old["build"]["version"] == "0.26.0"
    assert new["outcome"] == "api-mismatch", new["run"]
    assert new["build"]["name"] == "0.27.0.post1" and new["build"]["version"] == "0.27.0.post1"
    assert "tvm.sym" in new["comment"]  # what the API became
    commit = new["build"]["commit"]
    assert f"https://github.com/apache/tvm/commit/{commit}" in new["comment"]
    # without --build: the newest release (no main build here)
    assert triage(tmp, builds)["build"]["name"] == "0.27.0.post1"
