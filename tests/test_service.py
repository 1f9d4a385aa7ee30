"""bot.service called directly, as the Celery tasks call it: real Redis, the real GitHub client
talking to the fake GitHub, real runs in the sandbox. Only the queue is replaced: what the
functions hand to Celery is collected and passed on by the test itself."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import BOT_LOGIN, BOT_TOKEN, REPO
from fake_github import FakeGitHub

from bot.config import Config, GitHubConfig, ServiceConfig, TvmConfig
from bot.github import FAST_POLICY, GitHubClient
from bot.service import Services, fetch_issue, mark_running, report, run_job, triage_issue
from bot.state import State, connect
from tasks.runner import SandboxRunner

MARKER = "<!-- reprobot -->"
FENCE = "```"
SCRIPT = """\
import tvm
from tvm import tirx

x = tirx.Var("x", "int32")
print(tirx.Add(x, tirx.const(1.0, "float32")))
"""


def report_text(script: str = SCRIPT) -> str:
    return (f"### To reproduce\n\n{FENCE}python\n{script}{FENCE}\n\n### Actual behavior\n\n"
            f"{FENCE}\nTypeError: Check failed: (a_ty->dtype == b_ty->dtype) is false: "
            f"mismatched types. int32 vs. float32\n{FENCE}\n")


class Queue:
    """Stands in for the broker: keeps what would be sent."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, list[Any], str]] = []

    def __call__(self, name: str, args: list[Any], queue: str) -> None:
        self.sent.append((name, args, queue))

    def take(self, name: str) -> list[tuple[list[Any], str]]:
        out = [(a, q) for n, a, q in self.sent if n == name]
        self.sent = [s for s in self.sent if s[0] != name]
        return out


@pytest.fixture
def svc(redis_url: str, fake_github: FakeGitHub, tmp_path: Path,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Services, Queue]]:
    cfg = replace(
        Config(),
        github=GitHubConfig(api_url=fake_github.url, token=BOT_TOKEN),
        service=ServiceConfig(redis_url=redis_url, key_prefix="s:", bot_login=BOT_LOGIN,
                              retest_cooldown_s=0),
    )
    client = GitHubClient.from_config(cfg.github, bot_login=BOT_LOGIN, policy=FAST_POLICY)
    queue = Queue()
    services = Services(
        config=cfg,
        state=State(connect(redis_url), "s:"),
        github_factory=lambda: client,
        enqueue=queue,
        hostname="test-worker@here",
        cache_dir=tmp_path_factory.getbasetemp() / "probe-cache",
    )
    yield services, queue
    client.close()


def bot_comments(gh: FakeGitHub, n: int) -> list[dict[str, Any]]:
    return [c for c in gh.comments(REPO, n) if c["user"]["login"] == BOT_LOGIN]


def run(s: Services, request: dict[str, Any], **kw: Any) -> dict[str, Any]:
    cfg = kw.pop("config", s.config)
    runner = kw.pop("runner", None) or SandboxRunner(cfg.sandbox, cache_dir=s.cache_dir)
    return run_job(request, config=cfg, state=s.state, runner=runner,
                   hostname=s.hostname, cache_dir=s.cache_dir, **kw)


def test_issue_without_a_script_is_answered_at_once(svc, fake_github: FakeGitHub):
    s, queue = svc
    n = fake_github.add_issue(REPO, title="[Bug] it is slow", body="Compiling takes ages.")
    out = triage_issue(s, REPO, n, "opened")
    assert out["status"] == "reported" and out["outcome"] == "no-repro"
    assert queue.sent == []
    (c,) = bot_comments(fake_github, n)
    assert c["body"].startswith(MARKER)
    assert s.state.latest(REPO, n)["outcome"] == "no-repro"  # type: ignore[index]


@pytest.mark.tvm
@pytest.mark.sandbox
def test_queued_run_report_once(svc, fake_github: FakeGitHub):
    s, queue = svc
    n = fake_github.add_issue(REPO, title="[Bug] Add fails", body=report_text())
    out = triage_issue(s, REPO, n, "opened")
    assert out["status"] == "queued" and out["worker"] == "cpu"
    (c,) = bot_comments(fake_github, n)
    assert "queued" in c["body"].lower()
    ((request,), q) = queue.take("reprobot.run")[0]
    assert q == "cpu"
    # The run worker gets the script and nothing of the issue or GitHub.
    assert set(request) == {"job_id", "repo", "number", "script", "args", "needs", "gpu",
                            "build", "slot", "force", "attempts", "rerun_for"}
    assert request["attempts"] == 1

    result = run(s, request, notify=queue)
    (job_id, worker), _ = queue.take("reprobot.status")[0]
    assert (job_id, worker) == (request["job_id"], "test-worker@here")
    assert mark_running(s, job_id, worker)["status"] == "running"
    assert "running" in bot_comments(fake_github, n)[0]["body"].lower()
    assert result["run"]["exit_code"] == 1 and result["infra_error"] == ""
    assert result["environment"]["tvm_version"].startswith("0.")

    first = report(s, result)
    assert first["status"] == "reported" and first["outcome"] == "internal-error"
    again = report(s, result)  # a redelivered report
    assert again["status"] == "duplicate"
    assert mark_running(s, job_id, worker)["status"] == "skipped"  # a late "running" note
    (c,) = bot_comments(fake_github, n)
    assert "Check failed" in c["body"]
    assert len(s.state.history(REPO, n)) == 1
    # A redelivered run after the report does not run again.
    assert run(s, request)["skipped"] == "already reported"

    # The bot's own comment is not part of the issue the next extraction sees.
    issue = fetch_issue(s, REPO, n)
    assert all(MARKER not in cm.body for cm in issue.comments)


@pytest.mark.tvm
@pytest.mark.sandbox
def test_an_intermittent_failure_is_run_again_while_it_passes(svc, fake_github: FakeGitHub):
    s, queue = svc
    passing = "import numpy as np\nimport tvm\nprint(tvm.runtime.tensor(np.ones(2)).numpy())\n"
    body = ("It segfaults randomly, maybe 1 in 3 runs.\n\n"
            f"{FENCE}python\n{passing}{FENCE}\n")
    n = fake_github.add_issue(REPO, title="[Bug] tensor() crashes sometimes", body=body)
    triage_issue(s, REPO, n, "opened")
    ((request,), _) = queue.take("reprobot.run")[0]
    assert request["attempts"] == 5
    result = run(s, request)
    assert result["run"]["exit_code"] == 0 and result["run"]["runs"] == 5
    assert report(s, result)["outcome"] == "passed"
    (c,) = bot_comments(fake_github, n)
    assert "ran 5 times and passed every time" in c["body"]


@pytest.mark.tvm
@pytest.mark.sandbox
def test_newer_request_supersedes_a_queued_one(svc, fake_github: FakeGitHub):
    s, queue = svc
    n = fake_github.add_issue(REPO, title="[Bug] Add fails", body=report_text())
    old = triage_issue(s, REPO, n, "opened")
    cid = fake_github.add_comment(REPO, n, "/retest", user="alice")
    new = triage_issue(s, REPO, n, "retest", requested_by="alice", comment_id=cid)
    assert new["status"] == "queued" and new["job_id"] != old["job_id"]
    (old_req,), _ = queue.take("reprobot.run")[0]
    skipped = run(s, old_req)
    assert skipped["skipped"] == "superseded by a newer request"
    assert report(s, skipped)["status"] == "skipped"
    assert s.state.history(REPO, n) == []


def test_edit_triages_again_only_when_the_script_changed(svc, fake_github: FakeGitHub):
    s, queue = svc
    n = fake_github.add_issue(REPO, title="[Bug] Add fails", body=report_text())
    first = triage_issue(s, REPO, n, "opened")
    assert triage_issue(s, REPO, n, "edited") == {"status": "unchanged",
                                                   "job_id": first["job_id"]}
    fake_github.add_comment(REPO, n, "Forgot to say: same on main.", user="alice")
    assert triage_issue(s, REPO, n, "edited")["status"] == "unchanged"
    new_script = SCRIPT.replace('"float32"', '"float16"')
    # The author edits the body (the fake has no edit call: the issue is replaced in place).
    fake_github.add_issue(REPO, number=n, title="[Bug] Add fails", body=report_text(new_script))
    again = triage_issue(s, REPO, n, "edited")
    assert again["status"] == "queued" and again["job_id"] != first["job_id"]
    assert len(queue.take("reprobot.run")) == 2


def test_infra_error_is_never_not_reproduced(svc, fake_github: FakeGitHub, tmp_path: Path):
    s, queue = svc
    n = fake_github.add_issue(REPO, title="[Bug] Add fails", body=report_text())
    triage_issue(s, REPO, n, "opened")
    (request,), _ = queue.take("reprobot.run")[0]
    broken = replace(s.config, tvm=TvmConfig(python=str(tmp_path / "no-such-python")))
    result = run(s, request, config=broken)
    assert result["run"] is None and result["infra_error"]
    out = report(s, result)
    assert out["outcome"] == "infra-error" and out["verdict"] == "inconclusive"
    labels = fake_github.issue_labels(REPO, n)
    assert not any("not-reproduced" in lb for lb in labels)


def test_retest_permissions(svc, fake_github: FakeGitHub):
    s, queue = svc
    n = fake_github.add_issue(REPO, title="[Bug] Add fails", body=report_text(), user="alice")
    fake_github.set_permission(REPO, "mallory", "read")
    fake_github.set_permission(REPO, "wendy", "write")
    cid = fake_github.add_comment(REPO, n, "/retest", user="mallory")
    assert triage_issue(s, REPO, n, "retest", requested_by="mallory",
                        comment_id=cid) == {"status": "denied"}
    assert (BOT_LOGIN, "eyes") in fake_github.reactions(REPO, comment_id=cid)
    (reply,) = bot_comments(fake_github, n)
    assert "@mallory" in reply["body"]
    assert queue.sent == [] and s.state.current_job(REPO, n) is None

    cid = fake_github.add_comment(REPO, n, "/retest", user="wendy")
    out = triage_issue(s, REPO, n, "retest", requested_by="wendy", comment_id=cid)
    assert out["status"] == "queued"


def test_retest_cooldown(svc, fake_github: FakeGitHub):
    s, _ = svc
    s.config = replace(s.config, service=replace(s.config.service, retest_cooldown_s=120))
    n = fake_github.add_issue(REPO, title="[Bug] Add fails", body=report_text(), user="alice")
    c1 = fake_github.add_comment(REPO, n, "/retest", user="alice")
    assert triage_issue(s, REPO, n, "retest", requested_by="alice",
                        comment_id=c1)["status"] == "queued"
    # The same request retried (task redelivered) is not refused by its own cooldown.
    assert triage_issue(s, REPO, n, "retest", requested_by="alice",
                        comment_id=c1)["status"] == "queued"
    c2 = fake_github.add_comment(REPO, n, "/retest", user="alice")
    assert triage_issue(s, REPO, n, "retest", requested_by="alice",
                        comment_id=c2) == {"status": "cooldown"}
    replies = [c for c in bot_comments(fake_github, n) if not c["body"].startswith(MARKER)]
    assert len(replies) == 1 and "again in" in replies[0]["body"]


def test_report_past_its_time_limit_gives_up_once(svc: tuple[Services, Queue],
                                                  fake_github: FakeGitHub):
    """What the report task does on its soft time limit: an infra-error report from the title
    alone (the slow part is not run again), once per job; the queued run is never redone."""
    from bot.service import give_up

    s, queue = svc
    n = fake_github.add_issue(REPO, title="[Bug] add", body=report_text() + "\n" + "[" * 60000)
    out = triage_issue(s, REPO, n, "opened")
    job_id = out["job_id"]
    queue.take("reprobot.run")
    gave = give_up(s, REPO, n, "concluding the run took longer than the report time limit",
                   job_id=job_id)
    assert gave["status"] == "gave-up" and gave["outcome"] == "infra-error"
    assert gave["verdict"] == "inconclusive"
    (c,) = bot_comments(fake_github, n)
    assert "our side" in c["body"] and "report time limit" in c["body"]
    assert "repro: infra-error" in fake_github.issue_labels(REPO, n)
    latest = s.state.latest(REPO, n)
    assert latest is not None and latest["job_id"] == job_id
    # A second give-up (or a late report) of the same job changes nothing.
    assert give_up(s, REPO, n, "again", job_id=job_id)["status"] == "skipped"
    assert len(s.state.history(REPO, n)) == 1
    assert queue.sent == []
