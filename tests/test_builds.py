"""bot.builds: build specs, pins, order, the default build, commit links, the config section."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.builds import (
    BuildInfo,
    BuildSpec,
    commit_url,
    default_build,
    make_spec,
    order_builds,
    parse_builds_section,
    parse_duration,
    version_key,
)
from bot.config import load_config
from bot.errors import ConfigError

SHA = "0123456789abcdef0123456789abcdef01234567"


def b(name: str, kind: str = "release", version: str = "", python: str = "/p") -> BuildInfo:
    return BuildInfo(name=name, kind=kind, version=version or name, python=python)


def test_release_spec_gets_the_pins_its_version_needs():
    spec = make_spec("0.25", pip=["apache-tvm==0.25.0.post1", "numpy"])
    assert spec.kind == "release"
    assert spec.pip == ("apache-tvm==0.25.0.post1", "numpy", "apache-tvm-ffi==0.1.12")
    # a spec that pins the package itself is left alone
    own = make_spec("0.25", pip=["apache-tvm==0.25.0.post1", "apache_tvm_ffi==0.1.13"])
    assert own.pip == ("apache-tvm==0.25.0.post1", "apache_tvm_ffi==0.1.13")
    # newer releases work with the newest apache-tvm-ffi: nothing added
    assert make_spec("0.26.0", pip=["apache-tvm==0.26.0"]).pip == ("apache-tvm==0.26.0",)


def test_source_spec_defaults_and_defines():
    spec = make_spec("main", git="https://github.com/apache/tvm",
                     cmake_defines=["USE_LLVM=llvm-config --link-static", "USE_CUDA=ON"])
    assert (spec.kind, spec.ref) == ("source", "main")
    assert spec.cmake_defines == (("USE_LLVM", "llvm-config --link-static"), ("USE_CUDA", "ON"))
    assert spec.source == "git: https://github.com/apache/tvm@main"
    assert BuildSpec.from_json(spec.to_json()) == spec


@pytest.mark.parametrize("kwargs, message", [
    ({}, "give --pip SPEC"),
    ({"pip": ["apache-tvm"], "git": "file:///x"}, "not both"),
    ({"pip": ["apache-tvm"], "ref": "v1"}, "for --git builds only"),
    ({"git": "file:///x", "cmake_defines": ["NOEQUALS"]}, "KEY=VALUE"),
    ({"git": "--upload-pack=evil"}, "must not start with '-'"),
    ({"pip": ["--index-url=http://evil"]}, "looks like an option"),
])
def test_bad_specs_are_refused_with_the_reason(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        make_spec("x", **kwargs)


@pytest.mark.parametrize("name", ["", "../up", "a/b", ".hidden", "x" * 65, "sp ace"])
def test_bad_names_are_refused(name):
    with pytest.raises(ConfigError, match="not valid"):
        make_spec(name, pip=["apache-tvm"])


def test_versions_sort_like_pep440():
    vs = ["0.26.0", "0.27.0.post1", "0.27.0", "0.9.0", "0.27.0rc1", "0.27.dev0", "0.25.0.post1"]
    assert sorted(vs, key=version_key) == [
        "0.9.0", "0.25.0.post1", "0.26.0", "0.27.dev0", "0.27.0rc1", "0.27.0", "0.27.0.post1"]


def test_order_is_main_then_source_then_releases_newest_first():
    builds = [b("0.26.0"), b("fork", "source"), b("0.27.0.post1"), b("main", "source"),
              b("0.9.0"), b("a-fork", "source")]
    assert [x.name for x in order_builds(builds)] == [
        "main", "a-fork", "fork", "0.27.0.post1", "0.26.0", "0.9.0"]


def test_default_build_choice():
    rel = [b("0.26.0"), b("0.27.0.post1")]
    assert default_build(rel) == "0.27.0.post1"
    assert default_build([*rel, b("main", "source")]) == "main"
    assert default_build([*rel, b("main", "source")], configured="0.26.0") == "0.26.0"
    # a main that never built (no install) is not the default; the newest usable release is
    assert default_build([b("main", "source", python=""), *rel]) == "0.27.0.post1"
    assert default_build([b("0.27.0.post1", python=""), b("0.26.0")]) == "0.26.0"
    assert default_build([]) is None


def test_commit_links():
    assert commit_url("git: https://github.com/apache/tvm@main", SHA) == \
        f"https://github.com/apache/tvm/commit/{SHA}"
    assert commit_url("git: git@github.com:someone/tvm-fork.git@dev", SHA) == \
        f"https://github.com/someone/tvm-fork/commit/{SHA}"
    assert commit_url("pip: apache-tvm==0.26.0", SHA) == \
        f"https://github.com/apache/tvm/commit/{SHA}"
    assert commit_url("git: file:///srv/tvm@main", SHA) == ""  # no web page to link
    assert commit_url("git: https://github.com/apache/tvm@main", "not a sha") == ""


def test_info_json_round_trip_and_triage_ref():
    info = BuildInfo(name="main", kind="source", version="0.23.dev0", commit=SHA,
                     built_at="2026-11-30T05:00:00Z", python="/b/main/installs/x/venv/bin/python",
                     flags=(("USE_LLVM", "ON"),), source="git: u@main", install_id="x")
    assert BuildInfo.from_json(info.to_json()) == info
    assert set(info.to_json()) >= {"name", "kind", "version", "commit", "built_at", "status",
                                   "python", "error"}
    assert info.ref() == {"name": "main", "version": "0.23.dev0", "commit": SHA, "kind": "source"}


def test_builds_config_section(tmp_path):
    cfg_file = tmp_path / "reprobot.yml"
    cfg_file.write_text(
        "builds:\n"
        "  dir: /srv/builds\n"
        "  default: main\n"
        "  update_every: 15m\n"
        "  main:\n"
        "    git: https://github.com/apache/tvm\n"
        "    cmake_defines: {USE_LLVM: ON, USE_CUDA: false}\n"
        "  '0.26.0':\n"
        "    pip: apache-tvm==0.26.0 numpy\n"
    )
    cfg = load_config(cfg_file, {"HOME": "/home/u"})
    assert cfg.builds.dir == "/srv/builds"
    assert cfg.builds.default == "main"
    assert cfg.builds.update_every_s == 900
    main, rel = cfg.builds.declared
    assert main.cmake_defines == (("USE_LLVM", "ON"), ("USE_CUDA", "OFF"))
    assert rel.pip == ("apache-tvm==0.26.0", "numpy")
    # the environment wins over the file; the default is under the user's cache
    assert load_config(cfg_file, {"REPROBOT_BUILDS_DIR": "/x"}).builds.dir == "/x"
    assert load_config(None, {"HOME": "/home/u"}).builds.dir == ""  # the default, resolved by:
    from tasks.builder import default_builds_dir

    assert default_builds_dir({"HOME": "/home/u"}) == Path("/home/u/.cache/reprobot/builds")
    assert default_builds_dir({"XDG_CACHE_HOME": "/c"}) == Path("/c/reprobot/builds")
    assert load_config(None, {}).builds.update_every_s == 1800


@pytest.mark.parametrize("raw, message", [
    ("nope", "must be a mapping"),
    ({"update_every": "soon"}, "duration"),
    ({"update_every": 0}, "positive"),
    ({"main": {"git": "u", "flags": 1}}, "unknown keys"),
    ({"main": "https://github.com/apache/tvm"}, "must be a mapping"),
])
def test_bad_builds_section(raw, message):
    with pytest.raises(ConfigError, match=message):
        parse_builds_section(raw)


def test_durations():
    assert [parse_duration(v, "x") for v in (90, "90s", "30m", "2h", "1d")] == \
        [90, 90, 1800, 7200, 86400]


def test_the_comment_names_the_build_and_links_its_commit():
    from bot.models import Issue, RunResult
    from bot.pipeline import conclude, plan

    issue = Issue(title="[Bug] x", body="```python\nimport tvm\nx = tvm.tir.const(1)\nprint(x)\n```\n")
    run = RunResult(exit_code=0, signal=None, seconds=0.5, stdout_tail="0.23.dev0\n")
    build = BuildInfo(name="main", kind="source", version="0.23.dev0", commit=SHA,
                      built_at="2026-11-30T05:00:00Z", python="/p",
                      source="git: https://github.com/apache/tvm@main")
    t = conclude(issue, plan(issue), run, {"tvm_version": "0.23.dev0", "tvm_commit": "deadbee"},
                 build=build)
    assert ("- Build: `main` (source build, `git: https://github.com/apache/tvm@main`, built "
            f"2026-11-30T05:00:00Z) at commit [`{SHA}`](https://github.com/apache/tvm/commit/{SHA})"
            ) in t.comment
    assert (f"TVM 0.23.dev0 on build `main` (commit [`{SHA[:12]}`]"
            f"(https://github.com/apache/tvm/commit/{SHA}))") in t.comment
    assert "deadbee" not in t.comment  # the build's commit (from git) wins over the probe's guess
    assert t.to_json()["build"] == build.ref()
    # a commit of a repository with no web page is shown, not linked
    local = conclude(issue, plan(issue), run, {}, build=BuildInfo(
        name="fork", kind="source", commit=SHA, python="/p", source="git: file:///srv/tvm@dev"))
    assert f"`{SHA}`" in local.comment and "/commit/" not in local.comment


def test_run_workers_and_build_workers_start_checks(tmp_path):
    from bot.config import Config, GitHubConfig
    from bot.errors import ReprobotError
    from tasks.app import QUEUES, build_schedule, prepare_worker

    assert "build" in QUEUES
    cfg = Config(github=GitHubConfig(token="ghp_realtoken123"))
    with pytest.raises(ReprobotError, match="another worker than the triage queue"):
        prepare_worker(cfg, ["triage", "build"])
    sched = build_schedule(load_config(None, {}))
    (entry,) = sched.values()
    assert entry["task"] == "reprobot.build_update" and entry["args"] == [["main"]]
    assert entry["schedule"] == 1800.0 and entry["options"]["queue"] == "build"


def test_use_for_job_without_builds_is_the_configured_interpreter(tmp_path):
    from tasks.builder import BuildError, use_for_job

    cfg = load_config(None, {"REPROBOT_BUILDS_DIR": str(tmp_path), "REPROBOT_TVM_PYTHON": "/x/py"})
    with use_for_job(cfg, "") as b:
        assert (b.kind, b.python) == ("ad-hoc", "/x/py")
    with pytest.raises(BuildError, match="no build named 'main'"), use_for_job(cfg, "main"):
        pass
