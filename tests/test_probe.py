"""The environment probe, run by the real interpreter with apache-tvm."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from bot.errors import InfraError
from tasks import probe
from tasks.probe import KEYS, default_cache_dir, probe_environment

PY = sys.executable


@pytest.mark.tvm
def test_probe_reports_the_real_environment(tmp_path: Path) -> None:
    import platform

    probe._memo.clear()
    info = probe_environment(PY, cache_dir=tmp_path)
    assert set(KEYS) <= set(info)
    # Facts checked against this very interpreter (the bot never imports tvm; the test
    # reads the installed distribution's metadata instead).
    from importlib.metadata import version

    assert info["tvm_version"] == version("apache-tvm")
    assert info["python"] == platform.python_version()
    assert info["numpy"] == version("numpy")
    assert info["tvm_commit"] and all(c in "0123456789abcdef" for c in info["tvm_commit"])
    assert info["llvm_version"].split(".")[0].isdigit()
    assert info["cuda_enabled"] in ("yes", "no", "built-in, no driver")
    assert str(os.cpu_count()) in info["cpu"]
    assert "Linux" in info["os"]
    if not Path("/dev/nvidia0").exists():
        assert info["gpu"] == "" and info["cuda_enabled"] != "yes"
    # written to the cache dir, keyed per interpreter
    files = list(tmp_path.glob("env-*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["tvm_version"] == info["tvm_version"]


@pytest.mark.tvm
def test_probe_is_cached_on_disk_and_not_paid_again(tmp_path: Path) -> None:
    probe._memo.clear()
    first = probe_environment(PY, cache_dir=tmp_path)
    path = next(tmp_path.glob("env-*.json"))
    # Mark the cached copy: a second process (fresh memo) must read it, not re-probe.
    data = json.loads(path.read_text())
    data["cpu"] = "cached-marker"
    path.write_text(json.dumps(data))
    probe._memo.clear()
    again = probe_environment(PY, cache_dir=tmp_path)
    assert again["cpu"] == "cached-marker"
    assert {k: v for k, v in again.items() if k != "cpu"} == \
        {k: v for k, v in first.items() if k != "cpu"}
    # A corrupt cache is ignored and rewritten.
    path.write_text("{not json")
    probe._memo.clear()
    assert probe_environment(PY, cache_dir=tmp_path)["cpu"] == first["cpu"]


def test_cache_key_changes_with_the_tvm_install(tmp_path: Path) -> None:
    # A fake venv whose site-packages "upgrades" tvm: the key must change.
    site = tmp_path / "venv" / "lib" / "site-packages"
    (site / "tvm").mkdir(parents=True)
    import subprocess

    subprocess.run([PY, "-m", "venv", "--without-pip", str(tmp_path / "v2")], check=True)
    v2 = tmp_path / "v2"
    sp = next(v2.glob("lib/python*/site-packages"))
    py = str(v2 / "bin" / "python")
    k1 = probe.cache_key(py)
    (sp / "apache_tvm-9.9.9.dist-info").mkdir()
    (sp / "tvm").mkdir()
    k2 = probe.cache_key(py)
    assert k1 != k2
    assert probe.cache_key(py) == k2


def test_missing_interpreter_is_infra_error(tmp_path: Path) -> None:
    with pytest.raises(InfraError):
        probe_environment(str(tmp_path / "nope" / "python"), cache_dir=tmp_path)


def test_probe_of_an_interpreter_without_tvm_reports_empty_tvm_fields(tmp_path: Path) -> None:
    import subprocess

    subprocess.run([PY, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    info = probe_environment(str(tmp_path / "bare" / "bin" / "python"), cache_dir=tmp_path)
    assert info["tvm_version"] == "" and "ModuleNotFoundError" in info.get("tvm_error", "")
    assert info["python"]


def test_default_cache_dir() -> None:
    assert default_cache_dir({"XDG_CACHE_HOME": "/x/cache"}) == Path("/x/cache/reprobot")
    assert default_cache_dir({"HOME": "/home/u"}) == Path("/home/u/.cache/reprobot")
