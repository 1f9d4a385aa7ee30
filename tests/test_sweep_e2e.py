"""Re-test on a new main build, notify on change, bisect: every part real on loopback.

A TVM-shaped git repository (tests/tvm_fixture.py) has a bug from commit 1 to commit 5, fixed at
commit 6 of 8. ``main`` is a source build of its ``trunk`` branch. Real processes: redis-server,
``reprobot worker`` for the triage, cpu and build queues, ``reprobot serve``; GitHub is our fake.

1. trunk at commit 1: the issue is triaged on main@1 -> reproduced.
2. trunk moves to commit 8, the build worker updates main (as beat asks it to): the issue is
   re-tested there, passes, gets ``repro: fixed-on-main`` and ONE new comment with the compare
   link, and a bisection names commit 6 in the sticky comment.
3. trunk moves again (no change for this issue): nothing is posted or edited.
4. the bug comes back: the label is removed and one short comment says so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import BOT_LOGIN, BOT_TOKEN, REPO, RedisServer, Service, wait_until
from fake_github import FakeGitHub
from tvm_fixture import REPRO, SMOKE, TvmRepo, make_history

pytestmark = [pytest.mark.service, pytest.mark.sandbox]

ROOT = Path(__file__).resolve().parent.parent
FENCE = "```"
FIXED = "repro: fixed-on-main"
ISSUE = (f"### To reproduce\n\n{FENCE}python\n{REPRO}{FENCE}\n\n### Actual behavior\n\n"
         f"{FENCE}\nAssertionError: wrong result: tvm.add(2, 3) = 6, expected 5\n{FENCE}\n")


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot.cli", *args], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT), **env},
                          timeout=900, cwd=ROOT)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, probe_cache: Path
          ) -> Iterator[tuple[Service, TvmRepo, list[str], Path]]:
    tmp = tmp_path_factory.mktemp("sweep")
    shas = make_history(tmp / "tvm", n=8, bug_at=1, fixed_at=6)
    repo = TvmRepo(tmp / "tvm", units=2)
    repo.git("branch", "-f", "trunk", shas[1])
    builds = tmp / "builds"
    smoke = tmp / "smoke.py"
    smoke.write_text(SMOKE)
    made = cli("builds", "--builds-dir", str(builds), "add", "main", "--git", repo.url,
               "--ref", "trunk", "--smoke", str(smoke), env={})
    assert made.returncode == 0, made.stderr[-3000:]

    server = RedisServer(tmp / "redis").start()
    gh = FakeGitHub().start()
    gh.add_token(BOT_TOKEN, BOT_LOGIN)
    gh.add_repo(REPO)
    svc = Service(tmp, server.url, gh, probe_cache)
    extra = {"REPROBOT_BUILDS_DIR": str(builds)}
    try:
        svc.worker("triage", concurrency=2, extra_env=extra)
        svc.worker("cpu", concurrency=2, github=False, extra_env=extra)
        svc.worker("build", concurrency=1, github=False, extra_env=extra)
        svc.receiver()
        yield svc, repo, shas, builds
    finally:
        svc.stop_all()
        gh.stop()
        server.stop()


def bot_comments(gh: FakeGitHub, number: int) -> list[dict[str, Any]]:
    return [c for c in gh.comments(REPO, number) if c["user"]["login"] == BOT_LOGIN]


def update_main(svc: Service) -> None:
    """What beat does every builds.update_every: `builds update main` on the build queue."""
    from tasks.app import TASK_BUILD, make_celery

    app = make_celery(svc.config())
    app.send_task(TASK_BUILD, args=[["main"]], queue="build", routing_key="build")


def dump(svc: Service) -> None:
    for p in svc.procs:
        print(f"---- {p.name} ----\n{p.output()[-5000:]}")


def wait(svc: Service, cond: Any, timeout: float, what: str) -> Any:
    try:
        return wait_until(cond, timeout, what, interval=0.5)
    except AssertionError:
        dump(svc)
        raise


def test_new_main_build_retests_notifies_once_and_bisects(world) -> None:
    svc, repo, shas, builds = world
    gh, st = svc.github, svc.state()

    # 1. Triaged on main@1: reproduced.
    n = gh.add_issue(REPO, title="[Bug] tvm.add gives a wrong result", body=ISSUE, user="alice")
    r = svc.post("issues", gh.webhook_payload("issues", "opened", REPO, n))
    assert r.status_code == 202, r.text
    first = wait(svc, lambda: (st.history(REPO, n) or [None])[0], 180, "the first triage")
    assert (first["outcome"], first["verdict"]) == ("wrong-result", "reproduced")
    assert first["build"] == "main" and first["tvm_commit"] == shas[1]
    main = st.main(REPO, n)
    assert main is not None and main["commit"] == shas[1] and not main["fixed_on_main"]
    assert (REPO, n) in st.tracked()
    (sticky,) = bot_comments(gh, n)
    assert FIXED not in gh.issue_labels(REPO, n)

    # 2. main moves to commit 8: re-test, label, one new comment, bisection -> commit 6.
    repo.git("branch", "-f", "trunk", shas[8])
    update_main(svc)
    wait(svc, lambda: FIXED in gh.issue_labels(REPO, n), 300, "the fixed-on-main label")
    wait(svc, lambda: len(bot_comments(gh, n)) >= 2, 60, "the notification comment")
    comments = bot_comments(gh, n)
    assert len(comments) == 2, [c["body"][:80] for c in comments]
    note = comments[1]["body"]
    assert f"https://github.com/apache/tvm/compare/{shas[1]}...{shas[8]}" in note
    assert "no longer reproduces" in note and "maintainer may close" in note
    assert comments[0]["id"] == sticky["id"]
    assert "Not reproduced" in comments[0]["body"]  # the sticky comment now says it passes
    labels = gh.issue_labels(REPO, n)
    assert "repro: passed" in labels and "repro: reproduced" not in labels
    assert gh.issue_json(REPO, n)["state"] == "open"  # never closed

    def bisected() -> Any:
        body = bot_comments(gh, n)[0]["body"]
        return body if "fixed by" in body else None

    body = wait(svc, bisected, 600, "the bisection in the sticky comment")
    assert shas[6][:10] in body and "commit 6: fix the add bug" in body
    bis = st.bisect(REPO, n)
    assert bis is not None and bis["commit"] == shas[6] and 1 <= bis["steps"] <= 8
    assert len(bot_comments(gh, n)) == 2  # the bisection edits, it does not post

    # 3. Another main build that changes nothing for this issue: nothing posted, nothing edited.
    before = [(c["id"], c["body"]) for c in bot_comments(gh, n)]
    labels_before = sorted(gh.issue_labels(REPO, n))
    new_head = repo.touch_unit(0, salt=99)
    repo.git("branch", "-f", "trunk", new_head)
    update_main(svc)
    wait(svc, lambda: (st.main(REPO, n) or {}).get("commit") == new_head, 300,
         "the re-test on the third main build")
    assert [(c["id"], c["body"]) for c in bot_comments(gh, n)] == before
    assert sorted(gh.issue_labels(REPO, n)) == labels_before

    listing = cli("builds", "--builds-dir", str(builds), "list", "--json", env={})
    assert json.loads(listing.stdout)[0]["commit"] == new_head

    # 4. The bug comes back on main: the label goes, one short comment says so.
    broken = repo.set_add_bug(True, "commit 10: the add bug again")
    repo.git("branch", "-f", "trunk", broken)
    update_main(svc)
    wait(svc, lambda: FIXED not in gh.issue_labels(REPO, n), 300, "the label to be removed")
    wait(svc, lambda: len(bot_comments(gh, n)) == 3, 60, "the fails-again comment")
    again = bot_comments(gh, n)[2]["body"]
    assert "fails again" in again and f"`{FIXED}`" in again
    assert f"/compare/{new_head}...{broken}" in again
    assert "repro: reproduced" in gh.issue_labels(REPO, n)
    assert (REPO, n) in st.tracked()


def test_closed_issue_leaves_the_retest_set(world) -> None:
    svc, _repo, _shas, _builds = world
    gh, st = svc.github, svc.state()
    n = gh.add_issue(REPO, title="[Bug] tvm.add again", body=ISSUE, user="bob", state="closed")
    st.track(REPO, n)
    payload = gh.webhook_payload("issues", "closed", REPO, n)
    r = svc.post("issues", payload)
    assert r.status_code == 202 and r.json()["status"] == "queued", r.text
    wait(svc, lambda: (REPO, n) not in st.tracked(), 60, "the closed issue to leave the set")
