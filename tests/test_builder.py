"""Source builds of a TVM-shaped git repository, through the real console commands.

A real git repository (tests/tvm_fixture.py) is built by its own pyproject (scikit-build-core +
CMake + a C++ compiler) into real venvs, smoke-tested in the bwrap sandbox and switched to; the
repros then run on it with ``reprobot triage --build``. The tests follow one repository through
its history, in file order: first build, a new commit, a commit that does not compile, a smoke
test that fails, runs during a switch, prune, bisection's ``build_commit``, remove.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from tvm_fixture import REPRO, SMOKE, VERSION, TvmRepo

pytestmark = pytest.mark.sandbox

FENCE = "```"


class Env:
    """The fixture repository, a builds directory and the console command run against them."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.builds = tmp / "builds"
        self.repo = TvmRepo.create(tmp / "tvm", units=3)
        self.smoke = tmp / "smoke.py"
        self.smoke.write_text(SMOKE)

    def env(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.tmp),
                "XDG_CACHE_HOME": str(self.tmp / "cache"),
                "REPROBOT_BUILDS_DIR": str(self.builds), "LANG": "C.UTF-8"}

    def cli(self, *args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True,
                              text=True, timeout=timeout, env=self.env(), cwd=self.tmp)
        if check:
            assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc

    def builds_list(self) -> dict[str, dict[str, Any]]:
        return {b["name"]: b for b in json.loads(self.cli("builds", "list", "--json").stdout)}

    def triage(self, script: str, *args: str) -> dict[str, Any]:
        issue = self.tmp / f"issue-{time.monotonic_ns()}.md"
        issue.write_text(f"# [Bug] tvm.add is wrong\n\n{FENCE}python\n{script}{FENCE}\n\n"
                         "### Actual behavior\n\nAssertionError: wrong result\n")
        out = self.cli("triage", str(issue), "--json", *args).stdout
        result: dict[str, Any] = json.loads(out)
        return result

    def install_log(self, entry: dict[str, Any]) -> str:
        return (self.builds / "main" / "installs" / entry["install_id"] / "build.log").read_text()


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Env:
    e = Env(tmp_path_factory.mktemp("source-builds"))
    out = e.cli("builds", "add", "main", "--git", e.repo.url, "--smoke", str(e.smoke))
    assert "main: ready" in out.stdout
    return e


def test_first_build_is_smoke_tested_and_current(env: Env):
    main = env.builds_list()["main"]
    head = env.repo.head()
    assert (main["kind"], main["status"], main["error"]) == ("source", "ready", "")
    assert main["commit"] == head  # full sha, from git
    assert main["version"] == VERSION
    assert main["source"] == f"git: {env.repo.url}@main"
    assert main["python"] == str(env.builds / "main" / "installs" / head[:12] / "venv/bin/python")
    assert os.readlink(env.builds / "main" / "current") == f"installs/{head[:12]}"
    log = env.install_log(main)
    assert "smoke ok" in log and "[smoke test passed]" in log
    # the whole library was compiled: every C++ unit
    assert log.count("Building CXX object") == 4
    # the interpreter is a real venv with this TVM, not the bot's own
    out = subprocess.run([main["python"], "-c", "import tvm; print(tvm.add(2, 3), tvm.__file__)"],
                         capture_output=True, text=True, check=True).stdout
    assert out.startswith("5 " + str(env.builds / "main" / "installs"))


def test_triage_runs_on_the_build_and_names_its_commit(env: Env):
    head = env.repo.head()
    script = REPRO.replace('print("ok")', 'print("ok", tvm.support.libinfo()["GIT_COMMIT_HASH"])')
    r = env.triage(script, "--build", "main")
    assert r["outcome"] == "passed"
    assert r["build"] == {"name": "main", "version": VERSION, "commit": head, "kind": "source"}
    assert f"ok {head}" in r["run"]["stdout_tail"]  # the script really ran on that commit
    assert r["environment"]["tvm_commit"] == head
    assert "`main` (source build" in r["comment"] and head in r["comment"]
    # without --build the default build (main, the only one) is used
    assert env.triage(script)["build"]["commit"] == head


def test_a_new_commit_builds_incrementally_and_becomes_current(env: Env):
    old = env.builds_list()["main"]
    sha = env.repo.set_add_bug(True)  # one C++ file changes
    env.cli("builds", "update", "main")
    main = env.builds_list()["main"]
    assert (main["commit"], main["status"]) == (sha, "ready")
    assert main["install_id"] == sha[:12] != old["install_id"]
    log = env.install_log(main)
    assert log.count("Building CXX object") == 1, log  # only add.cc, not the 3 other units
    r = env.triage(REPRO, "--build", "main")
    assert r["outcome"] == "wrong-result" and r["verdict"] == "reproduced"
    assert r["build"]["commit"] == sha
    # nothing moved: no rebuild, the same install
    again = env.cli("builds", "update", "main")
    assert "main: ready" in again.stdout
    assert env.builds_list()["main"]["install_id"] == main["install_id"]
    assert "-m pip wheel" not in (env.builds / "main" / "last.log").read_text()


def test_a_commit_that_does_not_compile_keeps_the_old_current(env: Env):
    good = env.builds_list()["main"]
    bad = env.repo.break_build()
    proc = env.cli("builds", "update", "main", check=False)
    assert proc.returncode == 1
    assert "wheel build failed" in proc.stderr and "previous install stays current" in proc.stderr
    main = env.builds_list()["main"]
    assert main["status"] == "failed"
    assert "wheel build failed" in main["error"]
    assert "add.cc" in main["error"] and "error" in main["error"]  # the compiler's own words
    assert (main["commit"], main["python"]) == (good["commit"], good["python"])  # still current
    assert main["commit"] != bad
    text = env.cli("builds", "list").stdout
    assert "failed" in text and "add.cc" in text
    # runs go on, on the old build
    r = env.triage(REPRO, "--build", "main")
    assert r["build"]["commit"] == good["commit"] and r["outcome"] == "wrong-result"
    # the next good commit is ready again, and the failure is gone
    fixed = env.repo.set_add_bug(False)
    env.cli("builds", "update", "main")
    main = env.builds_list()["main"]
    assert (main["commit"], main["status"], main["error"]) == (fixed, "ready", "")
    assert env.triage(REPRO, "--build", "main")["outcome"] == "passed"


def test_a_failed_smoke_test_keeps_the_old_current(env: Env):
    good = env.builds_list()["main"]
    broken_py = env.repo.commit(
        {"python/tvm/__init__.py": (env.repo.path / "python/tvm/__init__.py").read_text()
         + "\n\ndef add(a, b):\n    return 0\n"},
        "python: add returns 0",
    )
    proc = env.cli("builds", "update", "main", check=False)
    assert proc.returncode == 1 and "smoke test failed" in proc.stderr
    main = env.builds_list()["main"]
    assert main["status"] == "failed" and "smoke test failed" in main["error"]
    assert "AssertionError" in main["error"]  # the smoke script's own failure, from its log
    assert main["commit"] == good["commit"] != broken_py
    env.repo.commit({"python/tvm/__init__.py": (env.repo.path / "python/tvm/__init__.py")
                     .read_text().replace("\n\ndef add(a, b):\n    return 0\n", "")},
                    "python: revert")
    env.cli("builds", "update", "main")
    assert env.builds_list()["main"]["status"] == "ready"


def test_a_run_that_started_on_the_old_build_finishes_on_it_and_prune_keeps_it(env: Env):
    old = env.builds_list()["main"]
    slow = ("import time\nimport tvm\ntime.sleep(8)\n"
            "print('ran on', tvm.support.libinfo()['GIT_COMMIT_HASH'], tvm.add(2, 3))\n")
    result: dict[str, Any] = {}
    t = threading.Thread(target=lambda: result.update(env.triage(slow, "--build", "main")))
    t.start()
    time.sleep(2.5)  # the run has started (resolved its build) ...
    new = env.repo.touch_unit(0, salt=7)
    env.cli("builds", "update", "main")  # ... and the current build moves under it
    assert env.builds_list()["main"]["commit"] == new
    pruned = env.cli("builds", "prune", "--keep", "1").stdout
    if t.is_alive():  # the old install is in use: prune left it
        assert old["install_id"] not in pruned
        assert Path(old["python"]).exists()
    t.join(120)
    assert result["build"]["commit"] == old["commit"]
    assert f"ran on {old['commit']} 5" in result["run"]["stdout_tail"]
    # once the run is over it can go; the current one always stays
    env.cli("builds", "prune", "--keep", "1")
    installs = sorted(os.listdir(env.builds / "main" / "installs"))
    assert installs == [new[:12]]
    assert env.triage(REPRO, "--build", "main")["build"]["commit"] == new


def test_build_commit_builds_any_commit_without_switching(env: Env):
    from tasks.builder import Registry

    reg = Registry(env.builds)
    first = env.repo.git("rev-list", "--max-parents=0", "HEAD")
    current = reg.get("main")
    info = reg.build_commit("main", first)
    assert info.commit == first and info.install_id == first[:12]
    out = subprocess.run([info.python, "-c", "import tvm; print(tvm.support.libinfo()"
                          "['GIT_COMMIT_HASH'], tvm.add(2, 3))"],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == [first, "5"]
    assert reg.get("main").commit == current.commit  # current did not move
    assert reg.find_install("main", first[:10]) == info  # found again, not rebuilt
    assert reg.build_commit("main", first) == info
    history = reg.commits("main", first, current.commit)
    assert history[-1] == current.commit and first not in history and len(history) >= 5


def test_new_cmake_flags_make_a_new_install_of_the_same_commit(env: Env):
    before = env.builds_list()["main"]
    env.cli("builds", "add", "main", "--git", env.repo.url, "--cmake-define", "FIXTURE_OPT=ON",
            "--smoke", str(env.smoke))
    main = env.builds_list()["main"]
    assert main["commit"] == before["commit"] and main["flags"] == {"FIXTURE_OPT": "ON"}
    assert main["install_id"].startswith(before["commit"][:12] + "-")
    assert main["install_id"] != before["install_id"] and Path(main["python"]).exists()
    cache = (env.builds / "main" / "cmake-build" / "CMakeCache.txt").read_text()
    assert "FIXTURE_OPT:UNINITIALIZED=ON" in cache  # it reached CMake
    # the same spec again: nothing to do
    env.cli("builds", "update", "main")
    assert env.builds_list()["main"]["install_id"] == main["install_id"]


def test_declared_builds_and_the_ad_hoc_interpreter(env: Env):
    cfg = env.tmp / "reprobot.yml"
    cfg.write_text(f"builds:\n  default: main\n  fork:\n    git: {env.repo.url}\n    ref: dev\n"
                   "    cmake_defines: {USE_LLVM: true}\n")
    listed = {b["name"]: b for b in json.loads(
        env.cli("--config", str(cfg), "builds", "list", "--json").stdout)}
    assert listed["fork"]["source"] == f"git: {env.repo.url}@dev"
    assert listed["fork"]["flags"] == {"USE_LLVM": "ON"} and listed["fork"]["python"] == ""
    assert list(listed)[:2] == ["main", "fork"]  # main first, then other source builds
    # --tvm-python is an ad-hoc build: whatever TVM that interpreter has
    main = listed["main"]
    r = env.triage(REPRO, "--tvm-python", main["python"])
    assert r["build"] == {"name": "ad-hoc", "kind": "ad-hoc", "version": VERSION,
                          "commit": main["commit"]}
    env.cli("builds", "remove", "fork")


def test_unknown_build_and_remove(env: Env):
    issue = env.tmp / "unknown.md"
    issue.write_text(f"# [Bug] x\n\n{FENCE}python\n{REPRO}{FENCE}\n")
    proc = env.cli("triage", str(issue), "--build", "nope", check=False)
    assert proc.returncode == 2 and "no build named 'nope'" in proc.stderr
    env.cli("builds", "add", "extra", "--git", env.repo.url, "--no-update")
    lst = env.builds_list()
    assert lst["extra"]["python"] == "" and lst["extra"]["status"] == "failed"
    assert "not built yet" in lst["extra"]["error"]
    proc = env.cli("triage", str(issue), "--build", "extra", check=False)
    assert proc.returncode == 2 and "has no ready install" in proc.stderr
    env.cli("builds", "remove", "extra")
    assert "extra" not in env.builds_list() and not (env.builds / "extra").exists()
