"""A building worker and a running worker at once, every part real: no run sees a half-made build.

``reprobot worker --queues build`` rebuilds ``main`` of a TVM-shaped git repository (one commit
after another) while ``reprobot worker --queues cpu`` runs issues' scripts on ``main``. Every run
must import a complete TVM, report the commit it really ran on, and the dashboard must show the
build and which worker has it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import BOT_LOGIN, BOT_TOKEN, REPO, RedisServer, Service, wait_until
from fake_github import FakeGitHub
from tvm_fixture import SMOKE, TvmRepo

pytestmark = [pytest.mark.service, pytest.mark.sandbox]

FENCE = "```"
SCRIPT = """\
import tvm
sha = tvm.support.libinfo()["GIT_COMMIT_HASH"]
print("RAN-ON", sha, tvm.add(2, 3))
assert tvm.add(2, 3) == 5
"""


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory, probe_cache: Path) -> Iterator[Any]:
    tmp = tmp_path_factory.mktemp("builds-e2e")
    repo = TvmRepo.create(tmp / "tvm", units=2)
    builds = tmp / "builds"
    (tmp / "smoke.py").write_text(SMOKE)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp),
           "XDG_CACHE_HOME": str(probe_cache), "REPROBOT_BUILDS_DIR": str(builds)}
    subprocess.run([sys.executable, "-m", "bot.cli", "builds", "add", "main", "--git", repo.url,
                    "--smoke", str(tmp / "smoke.py")], env=env, check=True, capture_output=True,
                   timeout=600)
    server = RedisServer(tmp / "redis").start()
    gh = FakeGitHub().start()
    gh.add_token(BOT_TOKEN, BOT_LOGIN)
    gh.add_repo(REPO)
    service = Service(tmp, server.url, gh, probe_cache, timeout_s=60)
    extra = {"REPROBOT_BUILDS_DIR": str(builds)}
    try:
        service.worker("triage", concurrency=1)
        service.worker("cpu", concurrency=1, github=False, extra_env=extra)
        service.worker("build", concurrency=1, github=False, extra_env=extra)
        service.receiver()
        yield service, repo, builds
    finally:
        service.stop_all()
        gh.stop()
        server.stop()


def open_issue(service: Service, n_title: str) -> int:
    gh = service.github
    body = f"### To reproduce\n\n{FENCE}python\n{SCRIPT}{FENCE}\n"
    n = gh.add_issue(REPO, title=f"[Bug] {n_title}", body=body, user="alice")
    r = service.post("issues", gh.webhook_payload("issues", "opened", REPO, n))
    assert r.status_code == 202, r.text
    return n


def test_runs_during_builds_never_see_a_half_made_build(svc):
    service, repo, builds = svc
    from tasks.app import TASK_BUILD, make_celery
    from tasks.builder import Registry

    app = make_celery(service.config())
    reg = Registry(builds)
    built = {reg.get("main").commit}
    issues: list[int] = []
    for k in range(3):
        sha = repo.touch_unit(k % 2, salt=100 + k)
        app.send_task(TASK_BUILD, args=[["main"]], queue="build", routing_key="build")
        # runs keep coming while the build worker builds, installs and switches
        deadline = time.monotonic() + 300
        while reg.current("main") is None or reg.current("main").commit != sha:  # type: ignore[union-attr]
            issues.append(open_issue(service, f"round {k} run {len(issues)}"))
            time.sleep(3)
            assert time.monotonic() < deadline, "the build worker did not build " + sha
        built.add(sha)
    issues.append(open_issue(service, "after the last build"))

    st = service.state()
    seen: set[str] = set()
    for n in issues:
        result = wait_until(lambda n=n: (st.history(REPO, n) or [None])[0], 300,
                            f"result of issue {n}", interval=0.5)
        assert result["outcome"] == "passed", result
        assert result["build"] == "main"
        assert result["tvm_commit"] in built
        (comment,) = [c for c in service.github.comments(REPO, n)
                      if c["user"]["login"] == BOT_LOGIN]
        # the script itself saw the commit the result names: the whole install was there
        assert f"RAN-ON {result['tvm_commit']} 5" in comment["body"]
        assert "`main` (source build" in comment["body"]
        seen.add(result["tvm_commit"])
    assert len(seen) >= 2, "the runs should span at least one switch of the current build"
    assert repo.head() in seen  # the last run is on the newest build

    # the dashboard: the build, its commit, and the run worker that has it ready
    def build_row() -> Any:
        status = httpx.get(service.receiver_url + "/api/status", timeout=5).json()
        rows = [b for b in status.get("builds", []) if b["name"] == "main"
                and b["commit"] == repo.head() and any("cpu" in w for w in b["workers"])]
        return rows[0] if rows else None

    row = wait_until(build_row, 60, "the dashboard to show the new main build")
    assert row["status"] == "ready" and row["kind"] == "source"
    page = httpx.get(service.receiver_url + "/", timeout=5).text
    assert "TVM builds" in page and repo.head()[:12] in page
    listing = json.loads(subprocess.run(
        [sys.executable, "-m", "bot.cli", "builds", "list", "--json"], capture_output=True,
        text=True, check=True, env={"PATH": os.environ.get("PATH", ""), "HOME": str(service.tmp),
                                    "REPROBOT_BUILDS_DIR": str(builds)}).stdout)
    assert listing[0]["commit"] == repo.head()


def test_beat_schedules_builds_update_main_on_the_build_queue(tmp_path: Path, probe_cache: Path):
    server = RedisServer(tmp_path / "redis").start()
    cfg = tmp_path / "reprobot.yml"
    cfg.write_text("builds:\n  update_every: 1s\n")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "REDIS_URL": server.url,
           "REPROBOT_CONFIG": str(cfg)}
    beat = subprocess.Popen([sys.executable, "-m", "bot.cli", "beat"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        r = server.client()
        raw = wait_until(lambda: r.lindex("build", 0), 60, "beat to send a build update")
        msg = json.loads(raw)
        assert msg["headers"]["task"] == "reprobot.build_update"
        assert '[["main"]]' in json.dumps(msg["headers"]["argsrepr"]) or \
            "main" in str(msg["headers"]["argsrepr"])
    finally:
        os.killpg(beat.pid, 15)
        beat.wait(15)
        server.stop()
