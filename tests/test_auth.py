"""The dashboard login: when it is required, the shared-token mode, and the GitHub OAuth flow
against the fake GitHub (authorize -> callback -> token -> /user -> org or team membership)."""

from __future__ import annotations

import subprocess
import sys
import urllib.parse
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from conftest import WEBHOOK_SECRET, webhook_headers
from fake_github import FakeGitHub
from fastapi.testclient import TestClient

from bot.auth import (
    check_exposure,
    is_loopback,
    make_session,
    read_session,
    safe_next,
)
from bot.config import Config, DashboardConfig, GitHubConfig, ServiceConfig, load_config
from bot.errors import ConfigError
from bot.web import create_app

TOKEN = "dash-token-9f8e7d6c5b4a"
PROTECTED = ["/", "/api/status", "/api/issues/o/r/1", "/metrics", "/anything-added-later"]


def config(redis_url: str, **dash: object) -> Config:
    return replace(
        Config(),
        github=GitHubConfig(webhook_secret=WEBHOOK_SECRET),
        service=ServiceConfig(redis_url=redis_url, key_prefix="a:"),
        dashboard=DashboardConfig(**dash),  # type: ignore[arg-type]
    )


# ---------------------------------------------------------------------------- when required
@pytest.mark.parametrize("host,loop", [
    ("127.0.0.1", True), ("127.9.9.9", True), ("::1", True), ("[::1]", True),
    ("localhost", True), ("0.0.0.0", False), ("::", False), ("10.0.0.5", False),
    ("example.org", False), ("", False),
])
def test_loopback_addresses(host: str, loop: bool):
    assert is_loopback(host) is loop


def test_public_address_without_login_is_refused():
    cfg = replace(Config(), github=GitHubConfig(webhook_secret=WEBHOOK_SECRET))
    assert check_exposure(cfg, "127.0.0.1") == "none"
    with pytest.raises(ConfigError, match="dashboard.auth"):
        check_exposure(cfg, "0.0.0.0")
    # Chosen on purpose (a proxy in front authenticates): allowed.
    opened = replace(cfg, dashboard=DashboardConfig(auth="none"))
    assert check_exposure(opened, "0.0.0.0") == "none"


@pytest.mark.parametrize("dash,msg", [
    ({"auth": "token"}, "REPROBOT_DASHBOARD_TOKEN"),
    ({"auth": "token", "token": "short"}, "16 characters"),
    ({"auth": "token", "token": "changeme-changeme-changeme"}, "placeholder"),
    ({"auth": "github"}, "github_org"),
    ({"auth": "github", "github_org": "octo-org"}, "REPROBOT_OAUTH_CLIENT_ID"),
])
def test_incomplete_login_settings_are_refused_by_name(dash: dict[str, str], msg: str):
    cfg = replace(Config(), dashboard=DashboardConfig(**dash))
    with pytest.raises(ConfigError, match=msg):
        check_exposure(cfg, "0.0.0.0")


def test_config_file_and_environment(tmp_path: Path):
    f = tmp_path / "reprobot.yml"
    f.write_text("dashboard:\n  auth: github\n  github_org: octo-org\n  github_team: triagers\n")
    cfg = load_config(f, {"REPROBOT_OAUTH_CLIENT_ID": "Iv1.abc",
                          "REPROBOT_OAUTH_CLIENT_SECRET": "s3cr3t-value-123"})
    assert cfg.dashboard.auth == "github" and cfg.dashboard.github_team == "triagers"
    assert cfg.dashboard.oauth_client_id == "Iv1.abc"
    f.write_text("dashboard:\n  auth: password\n")
    with pytest.raises(ConfigError, match="dashboard.auth"):
        load_config(f, {})


def test_serve_on_a_public_address_without_login_does_not_start(tmp_path: Path):
    env = {"PATH": "/usr/bin:/bin", "GITHUB_WEBHOOK_SECRET": WEBHOOK_SECRET,
           "PYTHONPATH": str(Path(__file__).resolve().parent.parent), "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-m", "bot.cli", "serve", "--host", "0.0.0.0",
                          "--port", "1"], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert "open to anyone on 0.0.0.0" in out.stderr and "dashboard.auth" in out.stderr


def test_sessions_are_signed_and_expire():
    key = b"k" * 32
    s = make_session(key, "alice", 60, now=1000)
    assert read_session(key, s, now=1030) == "alice"
    assert read_session(key, s, now=1061) is None
    assert read_session(b"x" * 32, s, now=1030) is None
    data, _, sig = s.partition(".")
    forged = make_session(key, "mallory", 60, now=1000).partition(".")[0] + "." + sig
    assert read_session(key, forged, now=1030) is None
    assert read_session(key, "garbage", now=1030) is None


@pytest.mark.parametrize("target,safe", [
    ("/", "/"), ("/api/status?x=1", "/api/status?x=1"), ("//evil.example/", "/"),
    ("https://evil.example/", "/"), ("/\\evil.example", "/"), ("", "/"),
])
def test_only_local_pages_are_returned_to(target: str, safe: str):
    assert safe_next(target) == safe


# ---------------------------------------------------------------------------- token mode
def add_later_routes(app: object) -> None:
    """Routes another module adds after the app is made (like the history pages) get the
    login too, without doing anything."""
    from fastapi.responses import PlainTextResponse

    app.get("/metrics")(lambda: PlainTextResponse("reprobot_up 1\n"))  # type: ignore[attr-defined]
    app.get("/anything-added-later")(lambda: {"ok": True})  # type: ignore[attr-defined]


@pytest.fixture
def token_client(redis_url: str) -> Iterator[TestClient]:
    app = create_app(config(redis_url, auth="token", token=TOKEN), auth_mode="token")
    add_later_routes(app)
    with TestClient(app) as c:
        yield c


def test_token_mode_guards_every_page_but_the_webhook(token_client: TestClient):
    c = token_client
    for path in PROTECTED:
        r = c.get(path, headers={"Accept": "application/json"})
        assert r.status_code == 401, path
        assert "hostname" not in r.text and "sandbox" not in r.text
        page = c.get(path, headers={"Accept": "text/html"}, follow_redirects=False)
        assert page.status_code == 303 and page.headers["location"].startswith("/auth/login")
    assert c.get("/api/status", headers={"Authorization": "Bearer wrong"}).status_code == 401
    ok = c.get("/api/status", headers={"Authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200 and "workers" in ok.json()
    assert c.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    # Public: GitHub's webhook (it has its own signature) and the health check.
    assert c.get("/healthz").status_code == 200
    body = b'{"zen": "x", "hook_id": 1}'
    assert c.post("/webhook", content=body,
                  headers=webhook_headers("ping", body)).status_code == 200


def test_token_mode_browser_login(token_client: TestClient):
    c = token_client
    form = c.get("/auth/login?next=/api/status")
    assert form.status_code == 200 and 'name=next value="/api/status"' in form.text
    bad = c.post("/auth/token", content="token=nope&next=/", follow_redirects=False,
                 headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert bad.status_code == 401 and "reprobot_session" not in bad.cookies
    good = c.post("/auth/token", content=urllib.parse.urlencode({"token": TOKEN,
                                                                  "next": "/api/status"}),
                  headers={"Content-Type": "application/x-www-form-urlencoded"},
                  follow_redirects=False)
    assert good.status_code == 303 and good.headers["location"] == "/api/status"
    assert c.get("/api/status").status_code == 200  # the session cookie
    assert c.get("/").status_code == 200
    c.get("/auth/logout", follow_redirects=False)
    c.cookies.clear()
    assert c.get("/api/status").status_code == 401


# ---------------------------------------------------------------------------- GitHub mode
CLIENT_ID, CLIENT_SECRET = "Iv1.fake0001", "oauth-secret-fake-0001"


@pytest.fixture
def oauth_github() -> Iterator[FakeGitHub]:
    gh = FakeGitHub().start()
    gh.add_oauth_app(CLIENT_ID, CLIENT_SECRET)
    gh.add_org_member("octo-org", "maintainer")
    gh.add_team("octo-org", "triagers", "triager")
    gh.add_user("stranger")
    yield gh
    gh.stop()


def github_client(redis_url: str, gh: FakeGitHub, team: str = "") -> TestClient:
    cfg = config(redis_url, auth="github", github_org="octo-org", github_team=team,
                 oauth_client_id=CLIENT_ID, oauth_client_secret=CLIENT_SECRET,
                 github_url=gh.origin)
    cfg = replace(cfg, github=replace(cfg.github, api_url=gh.url))
    check_exposure(cfg, "0.0.0.0")
    return TestClient(create_app(cfg, auth_mode="github"))


def sign_in(c: TestClient, gh: FakeGitHub, login: str | None, target: str = "/api/status"
            ) -> httpx.Response:
    """Walk the browser through the flow: our /auth/login -> GitHub's authorize page ->
    back to our callback with a code; returns our callback's answer."""
    gh.sign_in_as(login)
    start = c.get("/", headers={"Accept": "text/html"}, follow_redirects=False)
    assert start.status_code == 303
    login_page = c.get(start.headers["location"].replace("next=%2F", "next=" +
                                                         urllib.parse.quote(target, safe="")),
                       follow_redirects=False)
    assert login_page.status_code == 303
    authorize = login_page.headers["location"]
    assert authorize.startswith(gh.origin + "/login/oauth/authorize?")
    q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(authorize).query))
    assert q["client_id"] == CLIENT_ID and q["state"] and q["scope"] == "read:org"
    at_github = httpx.get(authorize, follow_redirects=False, timeout=10)
    if at_github.status_code != 302:
        return at_github
    back = at_github.headers["location"]
    assert back.startswith("http://testserver/auth/callback?")
    return c.get(back, follow_redirects=False)


def test_org_member_signs_in_with_github(redis_url: str, oauth_github: FakeGitHub):
    gh = oauth_github
    with github_client(redis_url, gh) as c:
        assert c.get("/api/status").status_code == 401
        done = sign_in(c, gh, "maintainer")
        assert done.status_code == 303 and done.headers["location"] == "/api/status"
        assert c.get("/api/status").status_code == 200
        assert c.get("/").status_code == 200
    # The token was used for /user and the membership check, then dropped.
    assert gh.requests_to("GET", r"^/user$")[-1].principal == "maintainer"
    assert gh.requests_to("GET", r"^/orgs/octo-org/members/maintainer$")[-1].status == 204


@pytest.mark.parametrize("login", ["stranger", "triager-not-member"])
def test_non_members_are_refused(redis_url: str, oauth_github: FakeGitHub, login: str):
    gh = oauth_github
    gh.add_user(login)
    with github_client(redis_url, gh) as c:
        done = sign_in(c, gh, login)
        assert done.status_code == 403 and "not a member of the organization octo-org" in done.text
        assert c.get("/api/status").status_code == 401


def test_team_restriction(redis_url: str, oauth_github: FakeGitHub):
    gh = oauth_github
    with github_client(redis_url, gh, team="triagers") as c:
        refused = sign_in(c, gh, "maintainer")  # in the org, not in the team
        assert refused.status_code == 403 and "octo-org/triagers" in refused.text
        assert sign_in(c, gh, "triager").status_code == 303
        assert c.get("/api/status").status_code == 200


def test_forged_or_replayed_callbacks_are_refused(redis_url: str, oauth_github: FakeGitHub):
    gh = oauth_github
    with github_client(redis_url, gh) as c:
        # A callback this browser did not start (no state cookie): refused.
        assert c.get("/auth/callback?code=abc&state=xyz").status_code == 400
        done = sign_in(c, gh, "maintainer")
        assert done.status_code == 303
        c.cookies.clear()
        # The same code again (someone replays the URL): the state cookie is gone.
        assert c.get("/auth/callback?code=abc&state=xyz").status_code == 400
        assert c.get("/api/status").status_code == 401


def test_wrong_client_secret_is_a_clear_refusal(redis_url: str, oauth_github: FakeGitHub):
    gh = oauth_github
    gh.add_oauth_app(CLIENT_ID, "rotated-secret-on-github")
    with github_client(redis_url, gh) as c:
        done = sign_in(c, gh, "maintainer")
        assert done.status_code == 403 and "did not accept the login" in done.text


def test_public_url_sets_the_callback_behind_a_proxy(redis_url: str, oauth_github: FakeGitHub):
    gh = oauth_github
    cfg = config(redis_url, auth="github", github_org="octo-org", oauth_client_id=CLIENT_ID,
                 oauth_client_secret=CLIENT_SECRET, github_url=gh.origin,
                 public_url="https://reprobot.example.org/")
    with TestClient(create_app(cfg, auth_mode="github")) as c:
        r = c.get("/auth/login", follow_redirects=False)
        q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(r.headers["location"]).query))
        assert q["redirect_uri"] == "https://reprobot.example.org/auth/callback"
        assert "secure" in r.headers["set-cookie"].lower()
