"""Results over builds in ``bot.service``, called as the Celery tasks call it: real Redis, the
real GitHub client against the fake GitHub, real runs in the sandbox on real builds.

- the result cache: the same script on the same build runs once across two issues; ``/retest``
  forces a new run;
- ``/retest all`` runs on every build the workers have and the one comment gets a row per build
  and the history line; ``/retest 0.26.0`` runs there only; an unknown build gets a short reply;
- a report that names its version also runs on that release.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from fake_github import FakeGitHub
from test_history_cli import POOL_ISSUE
from test_service import SCRIPT, bot_comments, report_text, run, svc  # noqa: F401

from bot.builds import BuildInfo, BuildsConfig
from bot.service import report, triage_issue

pytestmark = [pytest.mark.tvm, pytest.mark.sandbox]


def this_tvm() -> BuildInfo:
    """The interpreter running the tests, as a release build (its apache-tvm wheel)."""
    version = importlib.metadata.version("apache-tvm")
    return BuildInfo(name=version, kind="release", version=version, python=sys.executable)


def with_build(result: dict[str, Any], build: BuildInfo) -> dict[str, Any]:
    return {**result, "build": build.to_json()}  # what the run task adds


def test_same_script_same_build_runs_once_across_issues_and_retest_forces(
        svc, fake_github):  # noqa: F811
    s, queue = svc
    build = this_tvm()
    a = fake_github.add_issue(REPO, title="[Bug] Add fails", body=report_text(), user="alice")
    b = fake_github.add_issue(REPO, title="[Bug] Same here", body=report_text(), user="bob")
    triage_issue(s, REPO, a, "opened")
    triage_issue(s, REPO, b, "opened")
    ((req_a,), _), ((req_b,), _) = queue.take("reprobot.run")

    first = run(s, req_a, build=build, python=build.python)
    second = run(s, req_b, build=build, python=build.python)
    assert first["cached"] is False and second["cached"] is True
    assert second["run"] == first["run"]  # the very same run, not a second one
    key = s.state.cached_result
    sha = req_a["script"]
    import hashlib

    digest = hashlib.sha256(sha.encode()).hexdigest()
    assert key(digest, build.name, build.version, "cpu") is not None
    assert s.state.result_runs(digest, build.name, build.version, "cpu") == 1
    for res, n in ((first, a), (second, b)):
        out = report(s, with_build(res, build))
        assert out["outcome"] == "internal-error" and out["verdict"] == "reproduced"
        assert "Check failed" in bot_comments(fake_github, n)[0]["body"]
    assert s.state.latest(REPO, b)["cached"] is True  # type: ignore[index]

    # /retest forces a real run (and it refreshes the cache).
    cid = fake_github.add_comment(REPO, b, "/retest", user="bob")
    out = triage_issue(s, REPO, b, "retest", requested_by="bob", comment_id=cid)
    assert out["status"] == "queued"
    (req,), _ = queue.take("reprobot.run")[0]
    assert req["force"] is True
    again = run(s, req, build=build, python=build.python)
    assert again["cached"] is False
    assert s.state.result_runs(digest, build.name, build.version, "cpu") == 2
    assert report(s, with_build(again, build))["status"] == "reported"

    # A build without an identity (an ad-hoc interpreter) is never cached.
    c = fake_github.add_issue(REPO, title="[Bug] Add fails too", body=report_text(), user="carol")
    triage_issue(s, REPO, c, "opened")
    (req_c,), _ = queue.take("reprobot.run")[0]
    adhoc = BuildInfo(name="ad-hoc", kind="ad-hoc", python=sys.executable)
    assert run(s, req_c, build=adhoc, python=sys.executable)["cached"] is False


def heartbeat_with(s: Any, builds: list[BuildInfo]) -> None:
    s.state.heartbeat("cpu-worker@test", {"queues": ["cpu"],
                                          "builds": [b.to_json() for b in builds]})


@pytest.mark.release_builds
def test_retest_all_runs_every_build_into_one_comment(svc, fake_github: FakeGitHub,  # noqa: F811
                                                      release_builds: Path):  # noqa: F811
    from tasks.builder import Registry, use_for_job

    s, queue = svc
    cfg = replace(s.config, builds=BuildsConfig(dir=str(release_builds), default="0.27.0.post1"))
    s = replace(s, config=cfg)
    reg = Registry(release_builds)
    builds = [b for b in reg.list() if b.name in ("0.26.0", "0.27.0.post1")]
    assert len(builds) == 2
    heartbeat_with(s, builds)

    n = fake_github.add_issue(REPO, title="[Bug] adaptive pooling", body=POOL_ISSUE.split("\n", 2)[2],
                              user="alice")
    # The report names 0.26.0: the default build and that release both run.
    out = triage_issue(s, REPO, n, "opened")
    assert out["builds"] == ["0.27.0.post1", "0.26.0"]
    requests = [args[0] for args, _ in queue.take("reprobot.run")]
    assert [r["build"] for r in requests] == ["0.27.0.post1", "0.26.0"]

    results = []
    for req in requests:
        with use_for_job(cfg, req["build"]) as build:
            results.append(with_build(run(s, req, build=build, python=build.python), build))
    assert report(s, results[1])["status"] == "partial"  # waits for the other build
    assert bot_comments(fake_github, n)[0]["body"].count("**Builds:**") == 0
    done = report(s, results[0])
    assert done["status"] == "reported" and done["outcome"] == "passed"
    (c,) = bot_comments(fake_github, n)
    body = c["body"]
    assert "| `0.27.0.post1` |" in body and "| `0.26.0` (your version) |" in body
    history_line = next(ln for ln in body.splitlines() if ln.startswith("**History:**"))
    # each build named in a code span (linked to its commit when the build knows it)
    assert re.match(r"\*\*History:\*\* fails on \[?`0\.26\.0`.*, passes on \[?`0\.27\.0\.post1`",
                    history_line), history_line
    latest = s.state.latest(REPO, n)
    assert latest is not None
    assert latest["history"]["kind"] == "fixed" and latest["history"]["last_bad"] == "0.26.0"
    assert [r["build"] for r in latest["matrix"]] == ["0.27.0.post1", "0.26.0"]

    # /retest 0.26.0: that build only; /retest all: both; an unknown build: a short reply.
    cid = fake_github.add_comment(REPO, n, "/retest 0.26.0", user="alice")
    out = triage_issue(s, REPO, n, "retest", requested_by="alice", comment_id=cid,
                       target="0.26.0")
    assert out["builds"] == ["0.26.0"]
    queue.take("reprobot.run")
    cid = fake_github.add_comment(REPO, n, "/retest all", user="alice")
    out = triage_issue(s, REPO, n, "retest", requested_by="alice", comment_id=cid, target="all")
    assert out["builds"] == ["0.27.0.post1", "0.26.0"]
    queue.take("reprobot.run")
    cid = fake_github.add_comment(REPO, n, "/retest 0.99.0", user="alice")
    out = triage_issue(s, REPO, n, "retest", requested_by="alice", comment_id=cid,
                       target="0.99.0")
    assert out == {"status": "no-such-build"}
    reply = bot_comments(fake_github, n)[-1]["body"]
    assert "`0.99.0`" in reply and "`0.26.0`" in reply
    assert queue.take("reprobot.run") == []
