"""bot.github against the fake GitHub over real HTTP, through PyGithub."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fake_github import FakeGitHub

from bot.config import GitHubConfig
from bot.errors import InfraError
from bot.github import (
    FAST_POLICY,
    GitHubAuthError,
    GitHubClient,
    GitHubError,
    GitHubNotFound,
    GitHubRateLimited,
    GitHubUnavailable,
    RetryPolicy,
)

REPO = "apache/tvm"
MARKER = "<!-- reprobot -->"
BOT = "reprobot-bot"
PREFIX = "repro: "


def is_own(name: str) -> bool:
    return name.startswith(PREFIX)


SPECS = {
    "repro: crash": ("b60205", "The repro crashes (signal)"),
    "repro: reproduced": ("d93f0b", "The bot reproduced the reported failure"),
    "repro: passed": ("0e8a16", "The repro ran without error"),
}


@pytest.fixture
def gh() -> Iterator[FakeGitHub]:
    fake = FakeGitHub().start()
    fake.add_token("bot-token", BOT)
    fake.add_repo(REPO)
    yield fake
    fake.stop()


@pytest.fixture
def issue(gh: FakeGitHub) -> int:
    return gh.add_issue(REPO, title="[Bug] segfault in build", body="```python\nx\n```",
                        user="alice", labels=["type: bug"])


class Sleeps:
    """Records back-off waits; sleeps for real (capped) so the fake's clock moves too."""

    def __init__(self, real: bool = True) -> None:
        self.calls: list[float] = []
        self.real = real

    def __call__(self, s: float) -> None:
        self.calls.append(s)
        if self.real:
            time.sleep(min(s, 5.0))


def client(gh: FakeGitHub, *, policy: RetryPolicy = FAST_POLICY, sleep: Sleeps | None = None,
           token: str = "bot-token") -> GitHubClient:
    return GitHubClient(gh.url, token=token, policy=policy, sleep=sleep or Sleeps())


def bodies(gh: FakeGitHub, n: int) -> list[str]:
    return [c["body"] for c in gh.comments(REPO, n)]


# ---------------------------------------------------------------------------- reading
def test_get_issue_and_comments_as_plain_data(gh: FakeGitHub, issue: int) -> None:
    gh.add_comment(REPO, issue, "same here", user="bob")
    c = client(gh)
    d = c.get_issue(REPO, issue)
    assert d["title"] == "[Bug] segfault in build"
    assert d["user"]["login"] == "alice"
    assert d["labels"] == ["type: bug"]
    assert d["state"] == "open" and d["is_pull_request"] is False
    assert d["html_url"].endswith(f"/{REPO}/issues/{issue}")
    comments = c.get_comments(REPO, issue)
    assert [(x["user"]["login"], x["body"]) for x in comments] == [("bob", "same here")]


def test_pull_request_is_marked(gh: FakeGitHub) -> None:
    n = gh.add_issue(REPO, title="Fix", body="", pull_request=True)
    assert client(gh).get_issue(REPO, n)["is_pull_request"] is True


def test_fetch_issue_leaves_out_the_bots_own_comments(gh: FakeGitHub, issue: int) -> None:
    c = client(gh)
    c.upsert_bot_comment(REPO, issue, "result", MARKER)
    gh.add_comment(REPO, issue, "more details", user="alice")
    i = c.fetch_issue(REPO, issue)
    assert i.author == "alice" and i.number == issue and i.repo == REPO
    assert [(x.author, x.body) for x in i.comments] == [("alice", "more details")]


def test_comments_are_read_across_pages(gh: FakeGitHub, issue: int) -> None:
    for k in range(130):
        gh.add_comment(REPO, issue, f"comment {k}", user="bob")
    gh.add_comment(REPO, issue, f"{MARKER}\nold result", user=BOT)
    c = client(gh)
    assert len(c.get_comments(REPO, issue)) == 131
    cid = c.upsert_bot_comment(REPO, issue, "new result", MARKER)
    assert len(gh.comments(REPO, issue)) == 131  # edited on page 2, not a new one
    assert gh.comment(REPO, cid)["body"] == f"{MARKER}\nnew result"
    assert len(gh.requests_to("GET", r"/issues/\d+/comments$")) >= 3  # pages followed


def test_missing_issue_is_typed_not_found(gh: FakeGitHub) -> None:
    with pytest.raises(GitHubNotFound):
        client(gh).get_issue(REPO, 999)


def test_bad_token_is_an_auth_error_without_retries(gh: FakeGitHub, issue: int) -> None:
    with pytest.raises(GitHubAuthError) as ei:
        client(gh, token="wrong").get_issue(REPO, issue)
    assert ei.value.status == 401
    assert isinstance(ei.value, InfraError)
    assert len(gh.requests) == 1


# ---------------------------------------------------------------------------- the one comment
def test_upsert_creates_once_then_edits(gh: FakeGitHub, issue: int) -> None:
    c = client(gh)
    first = c.upsert_bot_comment(REPO, issue, "Queued on a CPU worker", MARKER)
    assert bodies(gh, issue) == [f"{MARKER}\nQueued on a CPU worker"]
    second = c.upsert_bot_comment(REPO, issue, f"{MARKER}\nReproduced: crash", MARKER)
    assert second == first
    assert bodies(gh, issue) == [f"{MARKER}\nReproduced: crash"]
    assert gh.comments(REPO, issue)[0]["user"]["login"] == BOT
    assert len(gh.requests_to("POST", r"/comments$")) == 1
    assert len(gh.requests_to("PATCH", r"/issues/comments/")) == 1


def test_upsert_with_unchanged_body_writes_nothing(gh: FakeGitHub, issue: int) -> None:
    c = client(gh)
    c.upsert_bot_comment(REPO, issue, "same", MARKER)
    gh.clear_requests()
    c.upsert_bot_comment(REPO, issue, "same", MARKER)
    assert [r.method for r in gh.requests] == ["GET"]


def test_upsert_is_per_issue(gh: FakeGitHub, issue: int) -> None:
    other = gh.add_issue(REPO, title="[Bug] other", body="")
    c = client(gh)
    c.upsert_bot_comment(REPO, issue, "one", MARKER)
    c.upsert_bot_comment(REPO, other, "two", MARKER)
    assert bodies(gh, issue) == [f"{MARKER}\none"]
    assert bodies(gh, other) == [f"{MARKER}\ntwo"]


def test_upsert_ignores_a_strangers_comment_carrying_the_marker(gh: FakeGitHub,
                                                                 issue: int) -> None:
    gh.add_comment(REPO, issue, f"{MARKER}\nI am not the bot", user="mallory")
    c = client(gh)
    cid = c.upsert_bot_comment(REPO, issue, "result", MARKER)
    assert bodies(gh, issue) == [f"{MARKER}\nI am not the bot", f"{MARKER}\nresult"]
    assert gh.comment(REPO, cid)["user"]["login"] == BOT


def test_marker_must_be_the_first_line(gh: FakeGitHub, issue: int) -> None:
    # A bot comment that merely quotes the marker later (e.g. a reply) is not "the" comment.
    gh.add_comment(REPO, issue, f"only maintainers may retest\n{MARKER}", user=BOT)
    c = client(gh)
    c.upsert_bot_comment(REPO, issue, "result", MARKER)
    assert len(gh.comments(REPO, issue)) == 2


# ---------------------------------------------------------------------------- labels
def test_labels_added_with_colour_and_only_own_removed(gh: FakeGitHub, issue: int) -> None:
    gh.add_label(REPO, "repro: passed", color="123456", description="maintainers' own colour")
    c = client(gh)
    got = c.set_bot_labels(REPO, issue, ["repro: crash", "repro: reproduced"],
                           is_own=is_own, specs=SPECS)
    assert sorted(gh.issue_labels(REPO, issue)) == ["repro: crash", "repro: reproduced",
                                                    "type: bug"]
    assert sorted(got) == sorted(gh.issue_labels(REPO, issue))
    labels = gh.repo_labels(REPO)
    assert labels["repro: crash"] == {"color": "b60205",
                                      "description": "The repro crashes (signal)"}
    assert labels["repro: reproduced"]["color"] == "d93f0b"

    # A maintainer adds a label of their own; the next run changes the outcome.
    gh.label_issue(REPO, issue, "needs-triage")
    c.set_bot_labels(REPO, issue, ["repro: passed"], is_own=is_own, specs=SPECS)
    assert sorted(gh.issue_labels(REPO, issue)) == ["needs-triage", "repro: passed",
                                                    "type: bug"]
    # An existing repository label keeps the maintainers' colour.
    assert gh.repo_labels(REPO)["repro: passed"] == {
        "color": "123456", "description": "maintainers' own colour"}


def test_labels_unchanged_means_no_writes(gh: FakeGitHub, issue: int) -> None:
    c = client(gh)
    c.set_bot_labels(REPO, issue, ["repro: crash"], is_own=is_own, specs=SPECS)
    gh.clear_requests()
    c.set_bot_labels(REPO, issue, ["repro: crash"], is_own=is_own, specs=SPECS)
    assert {r.method for r in gh.requests} == {"GET"}


def test_label_names_with_spaces_and_case(gh: FakeGitHub) -> None:
    n = gh.add_issue(REPO, title="t", body="", labels=["Repro: Crash", "type: bug"])
    c = client(gh)
    c.set_bot_labels(REPO, n, ["repro: crash"], is_own=lambda s: s.lower().startswith(PREFIX),
                     specs=SPECS)
    assert sorted(gh.issue_labels(REPO, n)) == ["Repro: Crash", "type: bug"]  # same label
    c.set_bot_labels(REPO, n, [], is_own=lambda s: s.lower().startswith(PREFIX))
    assert gh.issue_labels(REPO, n) == ["type: bug"]


def test_label_created_meanwhile_is_not_an_error(gh: FakeGitHub, issue: int) -> None:
    # The GET says 404, and by the time we create it someone else has (422 already_exists).
    gh.fail_next("GET", r"/labels/repro: crash$", 404, body={"message": "Not Found"})
    gh.add_label(REPO, "repro: crash", color="000000")
    client(gh).set_bot_labels(REPO, issue, ["repro: crash"], is_own=is_own, specs=SPECS)
    assert "repro: crash" in gh.issue_labels(REPO, issue)
    assert [r.status for r in gh.requests_to("POST", r"/labels$")
            if not r.path.startswith(f"/repos/{REPO}/issues")] == [422]


# ---------------------------------------------------------------------------- reactions, replies
def test_reaction_recorded_once(gh: FakeGitHub, issue: int) -> None:
    cid = gh.add_comment(REPO, issue, "/retest", user="alice")
    c = client(gh)
    c.react(REPO, cid, "eyes")
    c.react(REPO, cid, "eyes")
    c.react(REPO, cid, "rocket")
    assert gh.reactions(REPO, comment_id=cid) == [(BOT, "eyes"), (BOT, "rocket")]
    c.react_issue(REPO, issue, "+1")
    assert gh.reactions(REPO, issue=issue) == [(BOT, "+1")]
    with pytest.raises(ValueError):
        c.react(REPO, cid, "thumbsup")


def test_reply_posts_a_separate_comment(gh: FakeGitHub, issue: int) -> None:
    c = client(gh)
    c.upsert_bot_comment(REPO, issue, "result", MARKER)
    c.reply(REPO, issue, "Only the author or maintainers may `/retest`.")
    assert bodies(gh, issue) == [f"{MARKER}\nresult",
                                 "Only the author or maintainers may `/retest`."]
    c.upsert_bot_comment(REPO, issue, "result 2", MARKER)
    assert bodies(gh, issue)[0] == f"{MARKER}\nresult 2" and len(bodies(gh, issue)) == 2


# ---------------------------------------------------------------------------- permissions
@pytest.mark.parametrize("role", ["admin", "maintain", "write", "triage", "read", "none"])
def test_permission_reads_the_role(gh: FakeGitHub, role: str) -> None:
    gh.set_permission(REPO, "carol", role)
    assert client(gh).permission(REPO, "carol") == role


def test_permission_of_owner_stranger_and_unknown_user(gh: FakeGitHub) -> None:
    gh.add_user("stranger")
    c = client(gh)
    assert c.permission(REPO, "apache") == "admin"
    assert c.permission(REPO, "stranger") == "read"  # public repository
    assert c.permission(REPO, "ghost-user-404") == "none"


# ---------------------------------------------------------------------------- failures
def test_502_then_200_makes_exactly_one_comment(gh: FakeGitHub, issue: int) -> None:
    gh.fail_next("POST", r"/issues/\d+/comments$", 502)
    sleeps = Sleeps()
    client(gh, sleep=sleeps).upsert_bot_comment(REPO, issue, "result", MARKER)
    assert bodies(gh, issue) == [f"{MARKER}\nresult"]
    assert [r.status for r in gh.requests_to("POST", r"/comments$")] == [502, 201]
    assert len(sleeps.calls) == 1


def test_lost_answer_after_the_comment_was_made_is_not_posted_again(gh: FakeGitHub,
                                                                     issue: int) -> None:
    # GitHub created the comment but the answer was a 502: the client must look before posting.
    gh.fail_next("POST", r"/issues/\d+/comments$", 502, apply=True)
    cid = client(gh).upsert_bot_comment(REPO, issue, "result", MARKER)
    assert bodies(gh, issue) == [f"{MARKER}\nresult"]
    assert gh.comments(REPO, issue)[0]["id"] == cid
    assert len(gh.requests_to("POST", r"/comments$")) == 1


def test_lost_answer_on_reply_is_not_posted_again(gh: FakeGitHub, issue: int) -> None:
    gh.add_comment(REPO, issue, "Only maintainers may retest.", user=BOT)  # an older reply
    gh.fail_next("POST", r"/issues/\d+/comments$", 504, apply=True)
    client(gh).reply(REPO, issue, "Only maintainers may retest.")
    assert bodies(gh, issue) == ["Only maintainers may retest."] * 2


def test_timeout_after_the_write_is_not_posted_again(gh: FakeGitHub, issue: int) -> None:
    gh.fail_next("POST", r"/issues/\d+/comments$", None, delay=2.5)  # done, answer too slow
    policy = replace(FAST_POLICY, timeout_s=1)
    client(gh, policy=policy).upsert_bot_comment(REPO, issue, "result", MARKER)
    assert bodies(gh, issue) == [f"{MARKER}\nresult"]
    assert len(gh.requests_to("POST", r"/comments$")) == 1


def test_5xx_on_edit_and_labels_is_retried(gh: FakeGitHub, issue: int) -> None:
    c = client(gh)
    c.upsert_bot_comment(REPO, issue, "queued", MARKER)
    gh.fail_next("PATCH", r"/issues/comments/", 500, times=2)
    gh.fail_next("POST", r"/issues/\d+/labels$", 503)
    gh.fail_next("GET", r"/issues/\d+/comments$", 502)
    c.upsert_bot_comment(REPO, issue, "done", MARKER)
    c.set_bot_labels(REPO, issue, ["repro: crash"], is_own=is_own, specs=SPECS)
    assert bodies(gh, issue) == [f"{MARKER}\ndone"]
    assert "repro: crash" in gh.issue_labels(REPO, issue)


def test_persistent_5xx_gives_typed_error_after_bounded_backoff(gh: FakeGitHub,
                                                               issue: int) -> None:
    gh.fail_next("*", ".*", 502, times=100)
    sleeps = Sleeps(real=False)
    policy = replace(FAST_POLICY, attempts=4, backoff_s=0.1, max_backoff_s=0.25)
    with pytest.raises(GitHubUnavailable) as ei:
        client(gh, policy=policy, sleep=sleeps).get_issue(REPO, issue)
    assert ei.value.status == 502
    assert sleeps.calls == [0.1, 0.2, 0.25]  # doubling, capped
    assert len(gh.requests) == 4


def test_primary_rate_limit_waits_for_reset(gh: FakeGitHub, issue: int) -> None:
    until = gh.rate_limit("POST", r"/issues/\d+/comments$", seconds=1.2, kind="primary")
    sleeps = Sleeps()
    client(gh, sleep=sleeps).upsert_bot_comment(REPO, issue, "result", MARKER)
    assert time.time() >= until
    posts = gh.requests_to("POST", r"/comments$")
    # Exactly one refusal: the client waited for X-RateLimit-Reset instead of hammering.
    assert [r.status for r in posts] == [403, 201]
    assert bodies(gh, issue) == [f"{MARKER}\nresult"]
    assert len(sleeps.calls) == 1 and sleeps.calls[0] > 0.2


@pytest.mark.parametrize("kind,status", [("429", 429), ("secondary", 403)])
def test_retry_after_is_honoured(gh: FakeGitHub, issue: int, kind: str, status: int) -> None:
    gh.rate_limit("PATCH", r"/issues/comments/", seconds=1.0, kind=kind)
    gh.add_comment(REPO, issue, f"{MARKER}\nold", user=BOT)
    sleeps = Sleeps()
    client(gh, sleep=sleeps).upsert_bot_comment(REPO, issue, "new", MARKER)
    assert [r.status for r in gh.requests_to("PATCH", "")] == [status, 200]
    assert sleeps.calls == [1.0]
    assert bodies(gh, issue) == [f"{MARKER}\nnew"]


def test_rate_limit_longer_than_allowed_raises_with_retry_time(gh: FakeGitHub,
                                                              issue: int) -> None:
    until = gh.rate_limit("*", ".*", seconds=120, kind="primary")
    sleeps = Sleeps(real=False)
    with pytest.raises(GitHubRateLimited) as ei:
        client(gh, sleep=sleeps).get_issue(REPO, issue)
    assert sleeps.calls == []
    assert abs(ei.value.retry_at - until) < 5
    assert isinstance(ei.value, GitHubUnavailable)


def test_github_down_is_a_typed_error_not_a_hang(gh: FakeGitHub, issue: int) -> None:
    c = client(gh)
    c.get_issue(REPO, issue)  # a pooled keep-alive connection exists
    gh.stop()
    sleeps = Sleeps(real=False)
    c2 = client(gh, sleep=sleeps)
    for cl in (c, c2):
        with pytest.raises(GitHubUnavailable):
            cl.upsert_bot_comment(REPO, issue, "result", MARKER)
    assert len(sleeps.calls) == FAST_POLICY.attempts - 1


def test_github_back_after_outage(gh: FakeGitHub, issue: int) -> None:
    c = client(gh)
    gh.stop()
    with pytest.raises(GitHubUnavailable):
        c.get_issue(REPO, issue)
    gh.start()  # same port, same state
    assert c.get_issue(REPO, issue)["number"] == issue


def test_hanging_github_is_bounded_by_the_timeout(gh: FakeGitHub, issue: int) -> None:
    gh.fail_next("GET", r"/issues/\d+$", None, delay=3.0, times=2)
    policy = replace(FAST_POLICY, timeout_s=1, attempts=2)
    with pytest.raises(GitHubUnavailable) as ei:
        client(gh, policy=policy).get_issue(REPO, issue)
    assert "Timeout" in str(ei.value) or "ConnectionError" in str(ei.value)


# ---------------------------------------------------------------------------- GitHub Enterprise
def test_api_prefix_like_github_enterprise() -> None:
    with FakeGitHub(prefix="/api/v3") as fake:
        fake.add_token("t", BOT)
        fake.add_repo(REPO)
        n = fake.add_issue(REPO, title="x", body="")
        assert fake.url.endswith("/api/v3")
        c = GitHubClient.from_config(GitHubConfig(api_url=fake.url, token="t"),
                                     policy=FAST_POLICY)
        c.upsert_bot_comment(REPO, n, "result", MARKER)
        c.upsert_bot_comment(REPO, n, "result 2", MARKER)
        assert [x["body"] for x in fake.comments(REPO, n)] == [f"{MARKER}\nresult 2"]


# ---------------------------------------------------------------------------- GitHub App
def _keypair() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return private, public


@pytest.fixture(scope="module")
def keys() -> tuple[str, str]:
    return _keypair()


def _app_fake(public: str, ttl: float = 3600.0) -> FakeGitHub:
    fake = FakeGitHub(app_id=4242, app_public_key=public, app_slug="reprobot", token_ttl_s=ttl)
    fake.start()
    fake.add_repo(REPO)
    fake.install_app("apache")
    return fake


def test_app_auth_writes_as_the_app(keys: tuple[str, str]) -> None:
    private, public = keys
    fake = _app_fake(public)
    try:
        n = fake.add_issue(REPO, title="[Bug] x", body="", user="alice")
        cfg = GitHubConfig(api_url=fake.url, app_id="4242", private_key=private)
        c = GitHubClient.from_config(cfg, policy=FAST_POLICY)
        cid = c.upsert_bot_comment(REPO, n, "result", MARKER)
        c.upsert_bot_comment(REPO, n, "result 2", MARKER)
        c.set_bot_labels(REPO, n, ["repro: crash"], is_own=is_own, specs=SPECS)
        assert c.permission(REPO, "alice") == "read"
        comment = fake.comment(REPO, cid)
        assert comment["user"]["login"] == "reprobot[bot]"
        assert comment["user"]["type"] == "Bot"
        assert len(fake.comments(REPO, n)) == 1
        assert c.bot_login() == "reprobot[bot]"
        assert len(fake.issued_tokens) == 1  # cached while valid
        assert fake.requests_to("GET", r"/repos/apache/tvm/installation$")[0].principal \
            == "app:4242"
    finally:
        fake.stop()


def test_app_token_is_refreshed_before_it_expires(keys: tuple[str, str]) -> None:
    private, public = keys
    # Tokens that live 10 s are inside PyGithub's 20 s refresh margin: every use refreshes.
    fake = _app_fake(public, ttl=10)
    try:
        n = fake.add_issue(REPO, title="x", body="")
        c = GitHubClient(fake.url, app_id="4242", private_key=private, policy=FAST_POLICY)
        for _ in range(3):
            c.get_issue(REPO, n)
        assert len(fake.issued_tokens) >= 3
        used = {r.principal for r in fake.requests_to("GET", r"/issues/\d+$")}
        assert used == {"reprobot[bot]"}
        assert all(r.status in (200, 201) for r in fake.requests)
    finally:
        fake.stop()


def test_app_with_the_wrong_key_is_refused(keys: tuple[str, str]) -> None:
    _, public = keys
    other_private, _ = _keypair()
    fake = _app_fake(public)
    try:
        n = fake.add_issue(REPO, title="x", body="")
        c = GitHubClient(fake.url, app_id="4242", private_key=other_private, policy=FAST_POLICY)
        with pytest.raises(GitHubAuthError):
            c.get_issue(REPO, n)
        assert fake.issued_tokens == []
    finally:
        fake.stop()


def test_app_not_installed_on_the_repository(keys: tuple[str, str]) -> None:
    private, public = keys
    fake = _app_fake(public)
    try:
        fake.add_repo("someone/else")
        n = fake.add_issue("someone/else", title="x", body="")
        c = GitHubClient(fake.url, app_id="4242", private_key=private, policy=FAST_POLICY)
        with pytest.raises(GitHubNotFound):
            c.get_issue("someone/else", n)
    finally:
        fake.stop()


def test_no_credentials_is_refused() -> None:
    with pytest.raises(GitHubAuthError):
        GitHubClient("http://127.0.0.1:9")


def test_html_error_page_from_a_proxy_is_retried(gh: FakeGitHub, issue: int) -> None:
    gh.fail_next("POST", r"/issues/\d+/comments$", 502,
                 body=b"<html><body><h1>502 Bad Gateway</h1></body></html>")
    client(gh).upsert_bot_comment(REPO, issue, "result", MARKER)
    assert bodies(gh, issue) == [f"{MARKER}\nresult"]


def test_validation_error_is_typed_and_not_retried(gh: FakeGitHub, issue: int) -> None:
    with pytest.raises(GitHubError) as ei:
        client(gh).upsert_bot_comment(REPO, issue, "x" * 70000, MARKER)
    assert ei.value.status == 422
    assert not isinstance(ei.value, GitHubUnavailable)
    assert len(gh.requests_to("POST", r"/comments$")) == 1


def test_a_wrong_configured_login_does_not_duplicate_the_comment(gh: FakeGitHub,
                                                                  issue: int) -> None:
    first = client(gh).upsert_bot_comment(REPO, issue, "one", MARKER)
    c = GitHubClient(gh.url, token="bot-token", bot_login="not-the-bot", policy=FAST_POLICY)
    assert c.bot_login() == BOT  # GitHub's answer wins
    assert c.upsert_bot_comment(REPO, issue, "two", MARKER) == first
    assert bodies(gh, issue) == [f"{MARKER}\ntwo"]


def test_configured_login_is_the_fallback_when_github_cannot_say(gh: FakeGitHub,
                                                                  issue: int) -> None:
    gh.fail_next("GET", "^/user$", 403, body={"message": "Resource not accessible by integration"})
    c = GitHubClient(gh.url, token="bot-token", bot_login=BOT, policy=FAST_POLICY)
    assert c.bot_login() == BOT
    gh.add_comment(REPO, issue, f"{MARKER}\nforged", user="mallory")
    c.upsert_bot_comment(REPO, issue, "real", MARKER)
    assert bodies(gh, issue) == [f"{MARKER}\nforged", f"{MARKER}\nreal"]


def test_comment_deleted_meanwhile_is_written_again(gh: FakeGitHub, issue: int) -> None:
    c = client(gh)
    cid = c.upsert_bot_comment(REPO, issue, "queued", MARKER)
    gh.fail_next("PATCH", r"/issues/comments/", None,
                 before=lambda: gh.delete_comment(REPO, cid))
    new = c.upsert_bot_comment(REPO, issue, "done", MARKER)
    assert new != cid
    assert bodies(gh, issue) == [f"{MARKER}\ndone"]
    assert [r.status for r in gh.requests_to("PATCH", "")] == [404]


# ------------------------------------------------- the bot's comment: marker AND author
def test_a_maintainers_comment_with_the_marker_is_never_edited(gh: FakeGitHub,
                                                                issue: int) -> None:
    # A maintainer's comment could be edited by a bot with write access: only the author decides.
    gh.set_permission(REPO, BOT, "write")
    gh.set_permission(REPO, "carol", "maintain")
    forged = gh.add_comment(REPO, issue, f"{MARKER}\nmaintainer's note", user="carol")
    c = client(gh)
    cid = c.upsert_bot_comment(REPO, issue, "result", MARKER)
    c.upsert_bot_comment(REPO, issue, "result 2", MARKER)
    assert gh.comment(REPO, forged)["body"] == f"{MARKER}\nmaintainer's note"
    assert gh.comment(REPO, cid)["body"] == f"{MARKER}\nresult 2"
    assert not gh.requests_to("PATCH", rf"/issues/comments/{forged}$")


def test_with_no_known_login_no_comment_is_taken_for_the_bots(gh: FakeGitHub,
                                                              issue: int) -> None:
    # GitHub cannot say who the token is (403 on /user) and no service.bot_login is set.
    gh.fail_next("GET", "^/user$", 403, body={"message": "Resource not accessible by integration"})
    forged = gh.add_comment(REPO, issue, f"{MARKER}\nforged", user="mallory")
    c = client(gh)
    first = c.upsert_bot_comment(REPO, issue, "result", MARKER)
    assert c.bot_login() == BOT  # learnt from the comment it wrote
    assert c.upsert_bot_comment(REPO, issue, "result 2", MARKER) == first
    assert bodies(gh, issue) == [f"{MARKER}\nforged", f"{MARKER}\nresult 2"]
    assert gh.comment(REPO, forged)["user"]["login"] == "mallory"


def test_an_app_finds_its_comment_by_its_bot_login(keys: tuple[str, str]) -> None:
    private, public = keys
    fake = _app_fake(public)
    try:
        n = fake.add_issue(REPO, title="[Bug] x", body="", user="alice")
        fake.add_comment(REPO, n, f"{MARKER}\nlooks like the bot", user="reprobot")  # a user
        c = GitHubClient.from_config(
            GitHubConfig(api_url=fake.url, app_id="4242", private_key=private), policy=FAST_POLICY
        )
        cid = c.upsert_bot_comment(REPO, n, "result", MARKER)
        assert c.upsert_bot_comment(REPO, n, "result 2", MARKER) == cid
        assert [x["body"] for x in fake.comments(REPO, n)] == [
            f"{MARKER}\nlooks like the bot", f"{MARKER}\nresult 2"]
    finally:
        fake.stop()
