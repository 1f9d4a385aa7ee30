"""The event router: which deliveries trigger a triage, and which are ignored and why."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from bot.config import Config, FilterConfig, ServiceConfig
from bot.events import IGNORE, PING, TRIAGE, is_bot_comment, issue_selected, route

REPO = "octo-org/tvm-sandbox"
CFG = replace(Config(), service=ServiceConfig(bot_login="reprobot-ci"))


def user(login: str, type_: str = "User") -> dict[str, Any]:
    return {"login": login, "id": abs(hash(login)) % 10**6, "type": type_}


def issue(number: int = 7, title: str = "[Bug] crash in Add", labels: tuple[str, ...] = (),
          author: str = "alice", state: str = "open", pr: bool = False) -> dict[str, Any]:
    d: dict[str, Any] = {
        "number": number,
        "title": title,
        "body": "```python\nimport tvm\n```",
        "user": user(author),
        "labels": [{"name": n, "color": "ededed"} for n in labels],
        "state": state,
        "html_url": f"https://github.com/{REPO}/issues/{number}",
    }
    if pr:
        d["pull_request"] = {"url": f"https://api.github.com/repos/{REPO}/pulls/{number}"}
    return d


def issues_event(action: str, iss: dict[str, Any] | None = None, repo: str = REPO,
                 **extra: Any) -> dict[str, Any]:
    return {"action": action, "issue": iss or issue(), "repository": {"full_name": repo},
            "sender": user("alice"), **extra}


def comment_event(body: str, *, author: str = "bob", type_: str = "User", action: str = "created",
                  iss: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "action": action,
        "issue": iss or issue(),
        "comment": {"id": 555, "body": body, "user": user(author, type_)},
        "repository": {"full_name": REPO},
        "sender": user(author, type_),
    }


# -- issues ---------------------------------------------------------------------------------
@pytest.mark.parametrize("action", ["opened", "reopened"])
def test_opened_and_reopened_triage(action: str):
    d = route("issues", issues_event(action), CFG)
    assert d.action == TRIAGE
    assert d.task == {"repo": REPO, "number": 7, "reason": action}


def test_edited_body_triages_but_label_edit_does_not():
    d = route("issues", issues_event("edited", changes={"body": {"from": "old"}}), CFG)
    assert d.action == TRIAGE and d.task["reason"] == "edited"
    d = route("issues", issues_event("edited", changes={"milestone": {"from": None}}), CFG)
    assert d.action == IGNORE and "neither the title nor the body" in d.reason


@pytest.mark.parametrize(
    ("action", "why"),
    [("closed", "issues.closed"), ("assigned", "issues.assigned"), ("deleted", "issues.deleted")],
)
def test_other_issue_actions_ignored(action: str, why: str):
    d = route("issues", issues_event(action), CFG)
    assert d.action == IGNORE and why in d.reason


def test_labeled_with_a_selecting_label_triages():
    iss = issue(title="Crash", labels=("type: bug",))
    d = route("issues", issues_event("labeled", iss, label={"name": "type: bug"}), CFG)
    assert d.action == TRIAGE and d.task["reason"] == "labeled"
    d = route("issues", issues_event("labeled", iss, label={"name": "docs"}), CFG)
    assert d.action == IGNORE


def test_issue_filters():
    f = FilterConfig()
    assert issue_selected(issue(title="[Bug] x"), f)
    assert issue_selected(issue(title="  [bug] lower case"), f)
    assert issue_selected(issue(title="Crash", labels=("type: bug",)), f)
    assert not issue_selected(issue(title="[Feature] add op"), f)
    assert issue_selected(issue(title="anything"), FilterConfig(labels=(), title_prefixes=()))
    d = route("issues", issues_event("opened", issue(title="[RFC] new IR")), CFG)
    assert d.action == IGNORE and "labels or title prefixes" in d.reason


def test_repository_filter():
    cfg = replace(CFG, filters=replace(CFG.filters, repositories=("apache/tvm",)))
    assert route("issues", issues_event("opened", repo="Apache/TVM"), cfg).action == TRIAGE
    d = route("issues", issues_event("opened"), cfg)
    assert d.action == IGNORE and "not served" in d.reason


def test_pull_requests_and_closed_issues_are_not_triaged():
    d = route("issues", issues_event("opened", issue(pr=True)), CFG)
    assert d.action == IGNORE and "pull request" in d.reason
    d = route("issues", issues_event("reopened", issue(state="closed")), CFG)
    assert d.action == IGNORE


def test_malformed_payloads_are_ignored_not_crashing():
    assert route("issues", {"action": "opened"}, CFG).action == IGNORE
    assert route("issues", {"action": "opened", "issue": {"number": "7"},
                            "repository": {"full_name": REPO}}, CFG).action == IGNORE
    assert route("issue_comment", {"action": "created", "issue": issue(),
                                   "repository": {"full_name": REPO}}, CFG).action == IGNORE


def test_unknown_event_and_ping():
    d = route("star", {"action": "created"}, CFG)
    assert d.action == IGNORE and "'star'" in d.reason
    d = route("ping", {"zen": "Keep it simple.", "hook_id": 4242}, CFG)
    assert d.action == PING and d.hook_id == 4242


# -- issue_comment --------------------------------------------------------------------------
FIRE = [
    "/retest",
    "/retest please",
    "Thanks!\n/retest\n",
]
NO_FIRE = [
    "please /retest",
    "```\n/retest\n```",
    "> /retest",
    "LGTM",
]


@pytest.mark.parametrize("body", FIRE)
def test_retest_fires(body: str):
    d = route("issue_comment", comment_event(body, author="carol"), CFG)
    assert d.action == TRIAGE
    assert d.task == {"repo": REPO, "number": 7, "reason": "retest", "requested_by": "carol",
                      "comment_id": 555}


@pytest.mark.parametrize("body", NO_FIRE)
def test_retest_does_not_fire(body: str):
    d = route("issue_comment", comment_event(body), CFG)
    assert d.action == IGNORE


def test_bot_comments_never_trigger():
    for ev in (
        comment_event("/retest", author="reprobot-ci"),
        comment_event("/retest", author="ReproBot-CI"),
        comment_event("/retest", author="other-app[bot]", type_="Bot"),
    ):
        d = route("issue_comment", ev, CFG)
        assert d.action == IGNORE and "own comment" in d.reason


def test_a_users_comment_carrying_the_marker_is_still_the_users():
    marked = comment_event("<!-- reprobot -->\n/retest", author="mallory")
    plain = comment_event("/retest", author="mallory")
    d = route("issue_comment", marked, CFG)
    assert "own comment" not in d.reason
    assert (d.action, d.reason) == (route("issue_comment", plain, CFG).action,
                                    route("issue_comment", plain, CFG).reason)
    assert not is_bot_comment({"user": user("mallory"), "body": "<!-- reprobot -->\nhi"},
                              "reprobot-ci")


def test_comment_edits_and_pr_comments_ignored():
    assert route("issue_comment", comment_event("/retest", action="edited"), CFG).action == IGNORE
    d = route("issue_comment", comment_event("/retest", iss=issue(pr=True)), CFG)
    assert d.action == IGNORE and "pull request" in d.reason


def test_is_bot_comment_plain_user():
    assert not is_bot_comment({"user": user("alice"), "body": "hi"}, "reprobot-ci")
    assert not is_bot_comment({"user": user("alice"), "body": "hi"}, "")
