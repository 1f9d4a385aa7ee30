"""tasks/launch.py: a bwrap run as a recipe (placeholders filled by ``make``), and the saved
recipe ``reprobot triage``'s console entry starts its sandbox from (``quick_start``)."""

from __future__ import annotations

import json
import marshal
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from procs import alive_in_group

from bot.config import SandboxConfig
from bot.models import RunLimits
from tasks import launch
from tasks import sandbox as sb
from tasks.backends import BwrapSandbox, RunSpec, WarmFds

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bwrap not installed")
LIMITS = RunLimits(timeout_s=30.0, memory_bytes=2 * 1024**3)


@pytest.mark.parametrize("text, values, out", [
    ("plain", {}, "plain"),
    (launch.ph("status"), {"status": "7"}, "7"),
    (f"/proc/self/fd/{launch.ph('hook')}", {"hook": "12"}, "/proc/self/fd/12"),
    (f"{launch.ph('scratch')}/shm", {"scratch": "/tmp/r-1"}, "/tmp/r-1/shm"),
    (f"{launch.ph('a')}:{launch.ph('b')}", {"a": "1", "b": "2"}, "1:2"),
])
def test_fill_replaces_each_placeholder(text: str, values: dict[str, str], out: str) -> None:
    assert launch.fill(text, values) == out


def test_fill_refuses_an_unknown_or_unclosed_placeholder() -> None:
    with pytest.raises(KeyError):
        launch.fill(launch.ph("nope"), {"status": "1"})
    with pytest.raises(ValueError):
        launch.fill("\0status", {"status": "1"})


@pytest.mark.parametrize("value, ok", [
    (7, True), (launch.ph("status"), True), (launch.ph("uid"), True),
    ("7", False), ("7; rm -rf /", False), (f"{launch.ph('a')}{launch.ph('b')}", False),
])
def test_a_command_line_number_is_a_number_or_one_placeholder(value: int | str, ok: bool) -> None:
    if ok:
        assert sb._int_or_placeholder(value) in (str(value), value)
    else:
        with pytest.raises(ValueError):
            sb._int_or_placeholder(value)


def _spec(warm: bool) -> RunSpec:
    return RunSpec(script="print(1)\n", python=sys.executable,
                   warm=WarmFds(hook_zip=-1, channel=-1) if warm else None)


@needs_bwrap
def test_equal_runs_have_equal_recipes_and_each_is_made_anew(tmp_path: Path) -> None:
    box = BwrapSandbox(SandboxConfig(backend="bwrap", limits=LIMITS), cache_dir=tmp_path)
    recipe = box.recipe(_spec(warm=True))
    assert launch.normal(recipe) == launch.normal(box.recipe(_spec(warm=True)))
    assert recipe != box.recipe(_spec(warm=False))  # (the script is a blob of a cold run)
    r, w = os.pipe()
    try:
        one = launch.make(recipe, {"hook": r, "channel": w})
        two = launch.make(recipe, {"hook": r, "channel": w})
    finally:
        os.close(r)
        os.close(w)
    try:
        for made in (one, two):
            assert not any("\0" in a for a in made.argv)  # every placeholder filled
            assert f"/proc/self/fd/{r}" in " ".join(made.argv)
            assert os.path.isdir(made.scratch) and os.listdir(made.scratch) == []
            assert oct(os.stat(made.scratch).st_mode & 0o777) == "0o755"
            for d in made.cgroup_dirs.values():
                assert os.path.isdir(d)
        assert one.scratch != two.scratch and one.status_r != two.status_r
        assert one.cgroup_dirs != two.cgroup_dirs or not one.cgroup_dirs
        if one.cgroup_dirs and "memory" in one.cgroup_dirs:
            limit = Path(one.cgroup_dirs["memory"], "memory.limit_in_bytes").read_text()
            assert int(limit) == LIMITS.memory_bytes
        assert set(one.given_fds) == {r, w}  # passed, but not ours to close
    finally:
        for made in (one, two):
            made.release()
    assert not os.path.exists(one.scratch) and not os.path.exists(two.scratch)
    assert not any(os.path.exists(d) for d in one.cgroup_dirs.values())


def test_a_saved_recipe_loads_back_only_when_no_one_else_could_have_written_it(
        tmp_path: Path) -> None:
    recipe = {"v": launch.RECIPE_VERSION, "argv": ["/bin/sh", "-c", "x"], "blobs": {"a": b"1"},
              "scratch": ("/tmp", "p-"), "cgroup": None, "lease": False, "warm": True,
              "env": {"PATH": "/usr/bin"}}
    path = str(tmp_path / "cache" / "reprobot" / launch.RECIPE_FILE)
    assert launch.load(path) is None  # none yet
    launch.save(path, recipe)
    assert launch.load(path) == launch.normal(recipe)
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    os.chmod(path, 0o620)  # group-writable: someone else may have written it
    assert launch.load(path) is None
    os.chmod(path, 0o600)
    os.chmod(os.path.dirname(path), 0o777)  # so is a file in a directory anyone writes in
    assert launch.load(path) is None
    os.chmod(os.path.dirname(path), 0o700)
    link = tmp_path / "cache" / "reprobot" / "link"
    link.symlink_to(path)
    assert launch.load(str(link)) is None  # a link is not followed
    if os.geteuid() == 0:
        os.chown(path, 65534, 65534)  # another user's file
        assert launch.load(path) is None
        os.chown(path, 0, 0)
    for bad in (b"", b"\x00garbage", marshal.dumps(["not", "a", "dict"]),
                marshal.dumps({**recipe, "v": launch.RECIPE_VERSION + 1})):
        Path(path).write_bytes(bad)
        assert launch.load(path) is None


@pytest.mark.parametrize("argv, starts", [
    (["triage", "issue.md"], True),
    (["triage", "issue.md", "--json", "--tvm-python", "/x/python"], True),
    (["triage", "-"], True),
    (["triage", "issue.md", "--no-warm"], False),
    (["triage", "issue.md", "--no-cache"], False),
    (["triage", "issue.md", "--matrix"], False),
    (["triage", "issue.md", "--builds=a,b"], False),
    (["triage", "issue.md", "--builds", "a"], False),
    (["triage", "--help"], False),
    (["triage"], False),
    (["eval", "corpus"], False),
    (["serve"], False),
    (["--config", "x.yml", "triage", "issue.md"], False),  # (the bot's own start: not early)
    ([], False),
])
def test_only_a_plain_triage_starts_early(argv: list[str], starts: bool, tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    early = launch.quick_start(argv, env)
    assert (early is not None) is starts
    if early is not None:  # no recipe saved yet: nothing was started, the bot will save one
        assert early.proc is None and early.recipe is None
        assert early.path == str(tmp_path / "reprobot" / launch.RECIPE_FILE)
        early.discard()


def test_quick_start_never_raises_and_starts_nothing_from_a_recipe_it_cannot_make(
        tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    path = launch.recipe_path(env)
    recipe = {"v": launch.RECIPE_VERSION, "argv": ["/bin/sh", "-c", launch.ph("nope")],
              "blobs": {}, "scratch": (str(tmp_path / "no-such-dir"), "p-"), "cgroup": None,
              "lease": False, "warm": True, "env": {}}
    launch.save(path, recipe)
    early = launch.quick_start(["triage", "x.md"], env)
    assert early is not None and early.proc is None
    assert early.recipe == launch.normal(recipe)  # (the bot compares, and saves its own)
    early.discard()


ROOT = str(Path(__file__).resolve().parents[1])
EARLY_IMPORTS = """\
import json, os, sys
sys.path.insert(0, sys.argv[1])
from tasks import launch
recipe = {"v": launch.RECIPE_VERSION, "blobs": {"note": b"from the recipe"},
          "argv": ["/bin/sh", "-c", "cat /proc/self/fd/$0; echo; ls /proc/self/fd; exec sleep 30",
                   launch.ph("blob:note")],
          "scratch": (sys.argv[2], "run-"), "cgroup": None, "lease": False, "warm": True,
          "env": {"PATH": "/usr/bin:/bin"}}
env = {"XDG_CACHE_HOME": sys.argv[2]}
launch.save(launch.recipe_path(env), recipe)
loaded = set(sys.modules)
early = launch.quick_start(["triage", "issue.md"], env)
new = sorted(set(sys.modules) - loaded)
line = early.proc.stdout.readline().decode()  # (FileIO: unbuffered)
fds = sorted(int(x) for x in early.proc.stdout.read(4096).split())
sid = os.getsid(early.proc.pid) == early.proc.pid
scratch = early.made.scratch
early.discard()
print(json.dumps({"new": new, "line": line, "fds": fds, "sid": sid,
                  "code": early.proc.returncode, "scratch_left": os.path.exists(scratch)}))
"""


def test_the_early_start_spawns_the_recipe_with_builtins_only(tmp_path: Path) -> None:
    """Before the bot's modules load: no subprocess, pathlib, json, socket, threading or
    signal (each costs more than the spawn); the launcher gets only its passed fds, a session
    of its own, and is killed and cleaned up when discarded."""
    stray = os.open(os.devnull, os.O_RDONLY)  # an fd the bot inherited: never passed on
    os.set_inheritable(stray, True)
    try:
        out = subprocess.run([sys.executable, "-I", "-S", "-c", EARLY_IMPORTS, ROOT,
                              str(tmp_path)], capture_output=True, text=True, check=True,
                             pass_fds=(stray,))
    finally:
        os.close(stray)
    got = json.loads(out.stdout)
    assert set(got["new"]) <= {"tasks.warm", "struct", "_struct", "zlib", "_socket", "_signal",
                               "stat", "_stat", "time"}, got["new"]
    assert got["line"] == "from the recipe\n"
    # 0-2, the status pipe, the blob, the hook's zip and channel, and ls's own listing: the
    # fd the bot inherited is not passed on
    assert len(got["fds"]) == 8 and stray not in got["fds"], (got["fds"], stray)
    assert got["sid"] and got["code"] == -9 and not got["scratch_left"]


def test_a_taken_run_that_is_not_used_after_all_is_killed_and_cleaned_up(
        tmp_path: Path) -> None:
    """The bot took the early run (same recipe) and then failed before using it: kill_unused
    kills its whole tree and removes its scratch, not left to --die-with-parent."""
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    recipe = {"v": launch.RECIPE_VERSION, "blobs": {},
              "argv": ["/bin/sh", "-c", "sleep 30 & echo started; wait"],
              "scratch": (str(tmp_path), "run-"), "cgroup": None, "lease": False,
              "warm": True, "env": {"PATH": "/usr/bin:/bin"}}
    launch.save(launch.recipe_path(env), recipe)
    early = launch.quick_start(["triage", "issue.md"], env)
    assert early is not None and early.proc is not None
    taken = early.take(recipe)
    assert taken is not None
    made, proc, channel, _ = taken
    assert proc.stdout is not None and proc.stdout.readline() == b"started\n"
    scratch = made.scratch
    assert os.path.isdir(scratch)
    launch.kill_unused(made, proc, channel)
    assert proc.returncode == -9
    assert not os.path.exists(scratch)
    assert not alive_in_group(proc.pid)  # the launcher's whole group: the sleep too
    early.discard()  # (taken: nothing more to do)
