"""The service end to end, every part real on loopback: a redis-server, Celery worker processes
(``reprobot worker``), the receiver (``reprobot serve`` under uvicorn), real scripts against apache-tvm in the bwrap sandbox. Only GitHub is our fake.

Webhooks are built from the fake's own state in GitHub's shapes and signed like GitHub does.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import BOT_LOGIN, REPO, RedisServer, Service, wait_until
from fake_github import FakeGitHub

pytestmark = [pytest.mark.service, pytest.mark.tvm, pytest.mark.sandbox]

MARKER = "<!-- reprobot -->"
FENCE = "```"

CHECK_FAILED = """\
import tvm
from tvm import tirx

x = tirx.Var("x", "int32")
y = tirx.Add(x, tirx.const(1.0, "float32"))
print(y)
"""

REPORTED = (
    "### Actual behavior\n\n"
    f"{FENCE}\nTraceback (most recent call last):\n  File \"repro.py\", line 5, in <module>\n"
    "TypeError: Check failed: (a_ty->dtype == b_ty->dtype) is false: mismatched types. "
    "int32 vs. float32\n"
    f"{FENCE}\n"
)


def bug_report(script: str = CHECK_FAILED, reported: str = REPORTED) -> str:
    return f"### To reproduce\n\n{FENCE}python\n{script}{FENCE}\n\n{reported}"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory, probe_cache: Path) -> Iterator[Service]:
    """One Redis, fake GitHub, worker (triage + cpu) and receiver for the module's tests."""
    tmp = tmp_path_factory.mktemp("e2e")
    server = RedisServer(tmp / "redis").start()
    gh = FakeGitHub().start()
    from conftest import BOT_TOKEN

    gh.add_token(BOT_TOKEN, BOT_LOGIN)
    gh.add_repo(REPO)
    svc = Service(tmp, server.url, gh, probe_cache)
    try:
        svc.worker("triage,cpu", concurrency=2)
        svc.receiver()
        yield svc
    finally:
        svc.stop_all()
        gh.stop()
        server.stop()


def bot_comments(gh: FakeGitHub, number: int) -> list[dict[str, Any]]:
    return [c for c in gh.comments(REPO, number) if c["user"]["login"] == BOT_LOGIN]


def wait_result(svc: Service, number: int, runs: int = 1, timeout: float = 120) -> dict[str, Any]:
    st = svc.state()

    def done() -> Any:
        hist = st.history(REPO, number)
        return hist[0] if len(hist) >= runs else None

    try:
        return wait_until(done, timeout, f"result #{runs} of issue {number}", interval=0.2)
    except AssertionError:
        for p in svc.procs:
            print(f"---- {p.name} ----\n{p.output()[-6000:]}")
        raise


def open_issue(svc: Service, title: str = "[Bug] Add of int and float fails a check",
               body: str | None = None, user: str = "alice") -> int:
    gh = svc.github
    n = gh.add_issue(REPO, title=title, body=bug_report() if body is None else body, user=user)
    r = svc.post("issues", gh.webhook_payload("issues", "opened", REPO, n))
    assert r.status_code == 202 and r.json()["status"] == "queued", r.text
    return n


def comment(svc: Service, number: int, body: str, user: str) -> tuple[int, httpx.Response]:
    gh = svc.github
    cid = gh.add_comment(REPO, number, body, user=user)
    payload = gh.webhook_payload("issue_comment", "created", REPO, number, comment_id=cid)
    return cid, svc.post("issue_comment", payload)


def test_opened_issue_gets_one_comment_with_labels(env: Service):
    n = open_issue(env)
    result = wait_result(env, n)
    assert result["outcome"] == "internal-error" and result["verdict"] == "reproduced"

    (c,) = bot_comments(env.github, n)
    assert c["body"].startswith(MARKER)
    assert "Check failed" in c["body"]
    assert c["id"] == result["comment_id"]
    labels = env.github.issue_labels(REPO, n)
    assert "repro: internal-error" in labels and "repro: reproduced" in labels
    repo_labels = env.github.repo_labels(REPO)
    assert repo_labels["repro: reproduced"]["color"] != "ededed"  # created with its own colour

    # The dashboard shows it, and the worker with its TVM.
    status = httpx.get(env.receiver_url + "/api/status", timeout=5).json()
    row = next(r for r in status["results"] if r["number"] == n)
    assert row["latest"]["outcome"] == "internal-error"
    worker = next(w for w in status["workers"] if "cpu" in w["queues"])
    assert worker["tvm_version"].startswith("0.") and worker["heartbeat_age_s"] < 60
    assert result["tvm_version"] == worker["tvm_version"]
    page = httpx.get(env.receiver_url + "/", timeout=5).text
    assert f"{REPO}#{n}" in page and "internal-error" in page


def test_retest_by_author_edits_the_same_comment(env: Service):
    gh = env.github
    n = open_issue(env)
    first = wait_result(env, n)
    (c1,) = bot_comments(gh, n)

    cid, r = comment(env, n, "I updated TVM, could you check again?\n/retest", "alice")
    assert r.status_code == 202 and r.json()["status"] == "queued"
    second = wait_result(env, n, runs=2)
    assert second["job_id"] != first["job_id"] and second["reason"] == "retest"
    (c2,) = bot_comments(gh, n)
    assert c2["id"] == c1["id"]
    assert (BOT_LOGIN, "eyes") in gh.reactions(REPO, comment_id=cid)

    # A second /retest inside the cooldown: one short reply, no run.
    _, r = comment(env, n, "/retest", "alice")
    assert r.status_code == 202
    wait_until(lambda: len(bot_comments(gh, n)) == 2, 60, "the cooldown reply")
    reply = bot_comments(gh, n)[1]
    assert "try `/retest` again" in reply["body"] and MARKER not in reply["body"]
    assert len(env.state().history(REPO, n)) == 2


def test_retest_by_a_stranger_runs_nothing(env: Service):
    gh = env.github
    n = gh.add_issue(REPO, title="[Feature] not a bug report", body=bug_report())
    gh.set_permission(REPO, "mallory", "read")
    cid, r = comment(env, n, "/retest", "mallory")
    assert r.status_code == 202 and r.json()["status"] == "queued"
    wait_until(lambda: bot_comments(gh, n), 60, "the reply to the stranger")
    (reply,) = bot_comments(gh, n)
    assert "@mallory" in reply["body"] and "permission" in reply["body"]
    assert MARKER not in reply["body"]
    st = env.state()
    assert st.current_job(REPO, n) is None and st.history(REPO, n) == []

    # Someone with triage permission may ask.
    gh.set_permission(REPO, "tina", "triage")
    comment(env, n, "/retest", "tina")
    result = wait_result(env, n)
    assert result["requested_by"] == "tina" and result["outcome"] == "internal-error"
    assert len([c for c in bot_comments(gh, n) if c["body"].startswith(MARKER)]) == 1


def test_webhook_statuses_over_http(env: Service):
    gh = env.github
    n = gh.add_issue(REPO, title="[Bug] statuses", body="no script here, just words")
    payload = gh.webhook_payload("issues", "opened", REPO, n)
    assert env.post("issues", payload, secret="not-the-secret").status_code == 401
    assert env.post("issues", payload, secret=None).status_code == 401
    assert env.post("issues", None, body=b"{not json").status_code == 400
    r = env.post("ping", {"zen": "Design for failure.", "hook_id": 31337})
    assert r.status_code == 200 and r.json()["hook_id"] == 31337

    r1 = env.post("issues", payload, delivery="e2e-dup-1")
    r2 = env.post("issues", payload, delivery="e2e-dup-1")
    assert r1.status_code == 202 and r1.json()["status"] == "queued"
    assert r2.status_code == 202 and "duplicate delivery" in r2.json()["reason"]
    result = wait_result(env, n)
    assert result["outcome"] == "no-repro"
    (c,) = bot_comments(gh, n)
    assert c["body"].startswith(MARKER)
    assert len(env.state().history(REPO, n)) == 1


def test_github_502_then_200_gives_one_comment(env: Service):
    gh = env.github
    # The comment is created but the answer is lost (502), then a plain 502 on the labels.
    gh.fail_next("POST", rf"/repos/{REPO}/issues/\d+/comments$", 502, apply=True)
    gh.fail_next("POST", rf"/repos/{REPO}/issues/\d+/labels$", 502)
    n = open_issue(env)
    wait_result(env, n)
    (c,) = bot_comments(gh, n)
    assert c["body"].startswith(MARKER) and "Check failed" in c["body"]
    assert "repro: reproduced" in gh.issue_labels(REPO, n)


def test_redis_down_gives_503(tmp_path: Path, probe_cache: Path, fake_github: FakeGitHub):
    server = RedisServer(tmp_path / "redis").start()
    svc = Service(tmp_path, server.url, fake_github, probe_cache)
    try:
        svc.receiver()
        server.stop()
        r = svc.post("issues", {"action": "opened",
                                "issue": {"number": 1, "title": "[Bug] crash"},
                                "repository": {"full_name": REPO}})
        assert r.status_code == 503
        assert "Redis" in r.json()["error"]
        assert httpx.get(svc.receiver_url + "/healthz", timeout=5).status_code == 503
    finally:
        svc.stop_all()
        server.stop()


SLOW = """\
import time
import tvm
from tvm import tirx

time.sleep(5)
x = tirx.Var("x", "int32")
print(tirx.Add(x, tirx.const(1.0, "float32")))
"""


def test_worker_killed_mid_run_is_redone_and_reported_once(
    tmp_path: Path, probe_cache: Path, fake_github: FakeGitHub
):
    server = RedisServer(tmp_path / "redis").start()
    svc = Service(tmp_path, server.url, fake_github, probe_cache)
    gh = fake_github
    st = svc.state()
    try:
        svc.worker("triage", concurrency=1)
        doomed = svc.worker("cpu", concurrency=1, visibility_timeout=8, github=False)
        svc.receiver()
        n = open_issue(svc, body=bug_report(SLOW))

        def running() -> Any:
            job_id = st.current_job(REPO, n)
            job = st.job(job_id) if job_id else None
            return job if job and job.get("status") == "running" else None

        job = wait_until(running, 60, "the run to start")
        wait_until(lambda: "running" in (bot_comments(gh, n) or [{"body": ""}])[0]["body"],
                   30, "the 'running' comment")
        doomed.kill()  # the whole worker, pool and sandbox included
        assert st.latest(REPO, n) is None

        survivor = svc.worker("cpu", concurrency=1, visibility_timeout=8, github=False)
        result = wait_result(svc, n, timeout=120)
        assert result["job_id"] == job["job_id"]
        assert result["outcome"] == "internal-error"
        assert result["worker_name"] != job["worker_name"]
        assert survivor.alive()
        # Reported once: one history entry, one comment.
        assert len(st.history(REPO, n)) == 1
        (c,) = bot_comments(gh, n)
        assert "Check failed" in c["body"]
    finally:
        svc.stop_all()
        server.stop()


def test_pool_process_killed_mid_run_is_redone_at_once(
    tmp_path: Path, probe_cache: Path, fake_github: FakeGitHub
):
    """The process running the task dies (OOM killer, a crash in Celery): the message is
    rejected back to the queue at once (task_reject_on_worker_lost), not after the
    visibility timeout, and the run is reported once."""
    psutil = pytest.importorskip("psutil")
    server = RedisServer(tmp_path / "redis").start()
    svc = Service(tmp_path, server.url, fake_github, probe_cache)
    gh = fake_github
    st = svc.state()
    try:
        svc.worker("triage", concurrency=1)
        worker = svc.worker("cpu", concurrency=1, github=False)  # default (long) visibility
        svc.receiver()
        n = open_issue(svc, body=bug_report(SLOW))

        def running() -> Any:
            job_id = st.current_job(REPO, n)
            job = st.job(job_id) if job_id else None
            return job if job and job.get("status") == "running" else None

        job = wait_until(running, 60, "the run to start")
        (child,) = psutil.Process(worker.popen.pid).children()
        child.kill()
        result = wait_result(svc, n, timeout=90)
        assert result["job_id"] == job["job_id"] and result["outcome"] == "internal-error"
        assert worker.alive()
        assert len(st.history(REPO, n)) == 1
        (c,) = bot_comments(gh, n)
        assert "Check failed" in c["body"]
    finally:
        svc.stop_all()
        server.stop()


def test_cpu_worker_needs_no_github_credentials(
    tmp_path: Path, probe_cache: Path, fake_github: FakeGitHub
):
    server = RedisServer(tmp_path / "redis").start()
    svc = Service(tmp_path, server.url, fake_github, probe_cache)
    try:
        w = svc.worker("cpu", concurrency=1, github=False)
        assert w.alive()
        (info,) = svc.state().workers()
        assert info["queues"] == ["cpu"] and info["environment"]["tvm_version"].startswith("0.")
        assert "bwrap" in info["sandbox"] or "bubblewrap" in info["sandbox"]
    finally:
        svc.stop_all()
        server.stop()


def start_fails(svc: Service, argv: list[str], env: dict[str, str]) -> str:
    p = subprocess.run([sys.executable, *argv], env=env, capture_output=True, text=True,
                       timeout=120, cwd=svc.tmp)
    assert p.returncode == 2, p.stdout + p.stderr
    return p.stderr


def test_processes_refuse_to_start_without_what_they_need(tmp_path: Path, probe_cache: Path,
                                                          fake_github: FakeGitHub):
    svc = Service(tmp_path, "redis://127.0.0.1:1/0", fake_github, probe_cache)
    # The triage queue does every GitHub call: it needs credentials.
    err = start_fails(svc, ["-m", "bot.cli", "worker", "--queues", "triage"], svc.env(github=False))
    assert "GITHUB_TOKEN" in err
    # The receiver needs the webhook secret, and a placeholder is not one.
    env = dict(svc.env(), GITHUB_WEBHOOK_SECRET="changeme")
    err = start_fails(svc, ["-m", "bot.cli", "serve", "--port", "1"], env)
    assert "GITHUB_WEBHOOK_SECRET" in err
    # A run worker whose sandbox cannot work does not start (and says why).
    bad = tmp_path / "docker.yml"
    bad.write_text("sandbox:\n  backend: docker\n  docker_image: reprobot-no-such-image:0\n")
    env = dict(svc.env(github=False), REPROBOT_CONFIG=str(bad))
    err = start_fails(svc, ["-m", "bot.cli", "worker", "--queues", "cpu"], env)
    assert "docker" in err
    # A gpu worker on a machine without a GPU does not start.
    from tasks.app import find_gpu

    if find_gpu() is None:
        err = start_fails(svc, ["-m", "bot.cli", "worker", "--queues", "gpu"], svc.env(github=False))
        assert "no GPU" in err


def test_our_failure_is_retried_then_reported_as_infra_error_never_as_a_result(
    tmp_path: Path, probe_cache: Path, fake_github: FakeGitHub
):
    """A run worker whose TVM interpreter is gone: the run is tried again, then the comment
    says our side failed (infra-error, inconclusive) - never "not reproduced"."""
    server = RedisServer(tmp_path / "redis").start()
    gh = fake_github
    svc = Service(tmp_path, server.url, gh, probe_cache)
    # The worker starts with a working interpreter, which then disappears (a broken deploy).
    python = tmp_path / "tvm-env" / "python"
    python.parent.mkdir()
    python.symlink_to(sys.executable)
    try:
        svc.worker("triage", concurrency=1)
        svc.worker("cpu", concurrency=1, github=False,
                   extra_env={"REPROBOT_TVM_PYTHON": str(python)})
        svc.receiver()
        python.unlink()
        n = open_issue(svc)
        result = wait_result(svc, n, timeout=180)
        assert result["outcome"] == "infra-error"
        assert result["verdict"] == "inconclusive"
        (c,) = bot_comments(gh, n)
        assert "Our side failed" in c["body"] and "not a result of your script" in c["body"]
        labels = gh.issue_labels(REPO, n)
        assert "repro: infra-error" in labels and "repro: not-reproduced" not in labels
        worker_log = "".join(p.output() for p in svc.procs if p.name.startswith("worker-cpu"))
        assert worker_log.count("infra error, retrying") == 2
    finally:
        svc.stop_all()
        server.stop()
