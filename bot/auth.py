"""Who may see the dashboard and ``/api/*``: an optional login in front of the web app.

Modes (``dashboard.auth`` in ``reprobot.yml``):

- ``github``: sign in with GitHub (OAuth web flow); only members of ``dashboard.github_org``
  (or of its team ``dashboard.github_team``) get in. The GitHub token is used once, at login,
  and never stored: the browser keeps a signed session cookie.
- ``token``: a shared token, sent as ``Authorization: Bearer <token>`` (scripts, Prometheus) or
  typed once into the login form (browsers get the same session cookie).
- ``none``: no login. It is the default only while the receiver listens on loopback; on any
  other address ``reprobot serve`` refuses to start unless it is set explicitly (e.g. behind a
  proxy that authenticates).

Deny by default: the middleware guards every path except the webhook, ``/healthz`` and the
login pages themselves, so routes added later are behind the login without doing anything.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import html
import ipaddress
import logging
import secrets
import time
import urllib.parse
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from bot.config import Config, DashboardConfig
from bot.errors import ConfigError

log = logging.getLogger("reprobot.auth")

PUBLIC_PATHS = frozenset({"/webhook", "/healthz"})
AUTH_PREFIX = "/auth/"
SESSION_COOKIE = "reprobot_session"
STATE_COOKIE = "reprobot_oauth_state"
AUTH_MODES = ("none", "token", "github")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


# -- pure checks -----------------------------------------------------------------------------
def is_loopback(host: str) -> bool:
    if host in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def effective_mode(dash: DashboardConfig, host: str) -> str:
    """The mode the web app runs with, or ConfigError when the dashboard would be public."""
    mode = dash.auth or ("none" if is_loopback(host) else "")
    if not mode:
        raise ConfigError(
            f"the dashboard and /api/* would be open to anyone on {host}: set dashboard.auth "
            "in reprobot.yml to 'github' (with dashboard.github_org) or 'token' (with "
            "REPROBOT_DASHBOARD_TOKEN), or 'none' to serve it without a login on purpose; "
            "or listen on 127.0.0.1"
        )
    return mode


def check_exposure(config: Config, host: str) -> str:
    """At start: the mode, after checking its settings (names the key to fix)."""
    from bot.config import is_placeholder

    dash = config.dashboard
    mode = effective_mode(dash, host)
    if mode == "token" and (is_placeholder(dash.token) or len(dash.token) < 16):
        raise ConfigError("dashboard.auth is 'token' but REPROBOT_DASHBOARD_TOKEN "
                          "(dashboard.token) is missing, a placeholder or under 16 characters")
    if mode == "github":
        if not dash.github_org:
            raise ConfigError("dashboard.auth is 'github' but dashboard.github_org is not set")
        if not dash.oauth_client_id or is_placeholder(dash.oauth_client_secret):
            raise ConfigError(
                "dashboard.auth is 'github' but the OAuth app is not configured: set "
                "REPROBOT_OAUTH_CLIENT_ID and REPROBOT_OAUTH_CLIENT_SECRET "
                "(dashboard.oauth_client_id / oauth_client_secret)")
    if mode == "none" and not is_loopback(host):
        log.warning("dashboard.auth is 'none' on %s: the dashboard is open to anyone who can "
                    "reach it", host)
    return mode


def session_key(config: Config) -> bytes:
    """Signs session cookies: the configured secret, else one derived from the webhook secret
    (stable across restarts and receiver processes, never sent anywhere)."""
    dash = config.dashboard
    base = dash.session_secret or config.github.webhook_secret or secrets.token_hex(32)
    return hmac.new(base.encode(), b"reprobot dashboard session", hashlib.sha256).digest()


def make_session(key: bytes, login: str, ttl_s: int, now: float | None = None) -> str:
    exp = int((now if now is not None else time.time()) + ttl_s)
    data = base64.urlsafe_b64encode(f"{login}\n{exp}".encode()).decode().rstrip("=")
    sig = hmac.new(key, data.encode(), hashlib.sha256).hexdigest()
    return f"{data}.{sig}"


def read_session(key: bytes, value: str, now: float | None = None) -> str | None:
    """The login in a valid, unexpired session cookie, else None."""
    data, _, sig = value.partition(".")
    want = hmac.new(key, data.encode(), hashlib.sha256).hexdigest()
    if not sig or not hmac.compare_digest(want, sig):
        return None
    try:
        login, exp = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)).decode().split("\n")
        if int(exp) < (now if now is not None else time.time()):
            return None
    except ValueError:
        return None
    return login


def safe_next(target: str) -> str:
    """Only a local path may be the page to return to after login (no open redirect)."""
    if target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"


# -- the middleware ----------------------------------------------------------------------------
def _cookies(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in scope.get("headers", []):
        if name == b"cookie":
            for part in value.decode("latin-1").split(";"):
                k, _, v = part.strip().partition("=")
                if k:
                    out[k] = v
    return out


def _header(scope: Scope, name: bytes) -> str:
    for k, v in scope.get("headers", []):
        if k == name:
            return str(v.decode("latin-1"))
    return ""


async def _send(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-length", str(len(body)).encode()), *headers]})
    await send({"type": "http.response.body", "body": body})


class AuthMiddleware:
    """Pure ASGI: costs nothing on the public paths (the webhook stays fast)."""

    def __init__(self, app: ASGIApp, config: Config, mode: str) -> None:
        self.app = app
        self.mode = mode
        self.dash = config.dashboard
        self.key = session_key(config)

    def user(self, scope: Scope) -> str | None:
        session = _cookies(scope).get(SESSION_COOKIE)
        if session:
            login = read_session(self.key, session)
            if login:
                return login
        if self.mode == "token":
            auth = _header(scope, b"authorization")
            scheme, _, cred = auth.partition(" ")
            if scheme.lower() == "bearer" and hmac.compare_digest(
                    cred.strip().encode(), self.dash.token.encode()):
                return "token"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.mode == "none":
            await self.app(scope, receive, send)
            return
        path = str(scope.get("path", ""))
        if path in PUBLIC_PATHS or path.startswith(AUTH_PREFIX):
            await self.app(scope, receive, send)
            return
        login = self.user(scope)
        if login is not None:
            scope.setdefault("state", {})["user"] = login
            await self.app(scope, receive, send)
            return
        wants_html = "text/html" in _header(scope, b"accept")
        if scope.get("method") == "GET" and wants_html:
            target = path + ("?" + scope["query_string"].decode("latin-1")
                             if scope.get("query_string") else "")
            loc = "/auth/login?" + urllib.parse.urlencode({"next": target})
            await _send(send, 303, b"", [(b"location", loc.encode())])
            return
        await _send(send, 401, b'{"error":"login required"}',
                    [(b"content-type", b"application/json"),
                     (b"www-authenticate", b'Bearer realm="reprobot"')])


# -- the login routes ------------------------------------------------------------------------
def install_auth(app: Any, config: Config, mode: str | None = None) -> None:
    """Add the login pages and the middleware to the FastAPI app (mode: from the config and
    the address; ``serve`` checks it first, tests pass it)."""
    dash = config.dashboard
    mode = mode or dash.auth or "none"
    if mode not in AUTH_MODES:
        raise ConfigError(f"dashboard.auth must be one of {', '.join(AUTH_MODES)}")
    key = session_key(config)
    github_url = dash.github_url.rstrip("/")
    api_url = config.github.api_url.rstrip("/")

    def callback_url(request: Request) -> str:
        if dash.public_url:
            return dash.public_url.rstrip("/") + "/auth/callback"
        return str(request.url_for("oauth_callback"))

    def https(request: Request) -> bool:
        return request.url.scheme == "https" or dash.public_url.startswith("https://")

    def logged_in(request: Request, login: str, target: str) -> Response:
        resp = RedirectResponse(safe_next(target), status_code=303)
        resp.set_cookie(SESSION_COOKIE, make_session(key, login, dash.session_ttl_s),
                        max_age=dash.session_ttl_s, httponly=True, samesite="lax",
                        secure=https(request), path="/")
        resp.delete_cookie(STATE_COOKIE, path="/")
        return resp

    def page(inner: str, status: int = 200) -> HTMLResponse:
        return HTMLResponse("<!doctype html><html><head><meta charset=utf-8><title>reprobot "
                            f"login</title></head><body><h1>reprobot</h1>{inner}</body></html>",
                            status_code=status)

    @app.get("/auth/login")
    async def login(request: Request, next: str = "/") -> Response:  # noqa: A002
        target = safe_next(next)
        if mode == "token":
            return page("<form method=post action=/auth/token>"
                        f"<input type=hidden name=next value=\"{html.escape(target)}\">"
                        "<label>Dashboard token <input type=password name=token></label> "
                        "<button>Sign in</button></form>")
        if mode != "github":
            return RedirectResponse(target, status_code=303)
        state = secrets.token_urlsafe(24)
        query = urllib.parse.urlencode({
            "client_id": dash.oauth_client_id,
            "redirect_uri": callback_url(request),
            "scope": "read:org",
            "state": state,
            "allow_signup": "false",
        })
        resp = RedirectResponse(f"{github_url}/login/oauth/authorize?{query}", status_code=303)
        signed = hmac.new(key, f"{state}\n{target}".encode(), hashlib.sha256).hexdigest()
        cookie = base64.urlsafe_b64encode(f"{state}\n{target}".encode()).decode()
        resp.set_cookie(STATE_COOKIE, f"{cookie}.{signed}", max_age=600, httponly=True,
                        samesite="lax", secure=https(request), path="/")
        return resp

    @app.post("/auth/token")
    async def token_login(request: Request) -> Response:
        raw = b""
        async for chunk in request.stream():  # a small form; never more than 4 KiB is read
            raw += chunk
            if len(raw) > 4096:
                return page("<p>Form too large.</p>", 413)
        form = urllib.parse.parse_qs(raw.decode("utf-8", "replace"))
        token = (form.get("token") or [""])[0]
        next = (form.get("next") or ["/"])[0]  # noqa: A001
        if mode != "token" or not hmac.compare_digest(token.encode(), dash.token.encode()):
            return page("<p>Wrong token. <a href=/auth/login>Try again</a></p>", 401)
        return logged_in(request, "token", next)

    @app.get("/auth/callback", name="oauth_callback")
    async def oauth_callback(request: Request, code: str = "", state: str = "") -> Response:
        if mode != "github":
            return JSONResponse({"error": "GitHub login is not configured"}, status_code=404)
        raw = request.cookies.get(STATE_COOKIE, "")
        data, _, signed = raw.partition(".")
        try:
            saved_state, target = base64.urlsafe_b64decode(data).decode().split("\n", 1)
        except ValueError:
            saved_state, target = "", "/"
        want = hmac.new(key, f"{saved_state}\n{target}".encode(), hashlib.sha256).hexdigest()
        if (not code or not state or not signed or not hmac.compare_digest(want, signed)
                or not hmac.compare_digest(saved_state, state)):
            return page("<p>The login expired or did not start here. "
                        "<a href=/auth/login>Sign in again</a></p>", 400)
        try:
            login = await github_member(code, callback_url(request))
        except OAuthError as e:
            log.warning("dashboard login refused: %s", e)
            return page(f"<p>{html.escape(str(e))}</p>", 403)
        log.info("dashboard login: %s", login)
        return logged_in(request, login, target)

    @app.get("/auth/logout")
    async def logout() -> Response:
        resp = RedirectResponse("/auth/login", status_code=303)
        resp.delete_cookie(SESSION_COOKIE, path="/")
        return resp

    async def github_member(code: str, redirect_uri: str) -> str:
        import httpx

        async with httpx.AsyncClient(timeout=10) as client:
            try:
                r = await client.post(f"{github_url}/login/oauth/access_token",
                                      headers={"Accept": "application/json"},
                                      data={"client_id": dash.oauth_client_id,
                                            "client_secret": dash.oauth_client_secret,
                                            "code": code, "redirect_uri": redirect_uri})
                token = r.json().get("access_token") if r.status_code == 200 else None
                if not isinstance(token, str) or not token:
                    raise OAuthError("GitHub did not accept the login (the code is invalid or "
                                     "expired); sign in again")
                gh = {"Authorization": f"Bearer {token}",
                      "Accept": "application/vnd.github+json"}
                me = await client.get(f"{api_url}/user", headers=gh)
                user = me.json().get("login") if me.status_code == 200 else None
                if not isinstance(user, str) or not user:
                    raise OAuthError("GitHub did not say who signed in")
                org = dash.github_org
                if dash.github_team:
                    if not await _in_team(client, api_url, gh, org, dash.github_team):
                        raise OAuthError(f"{user} is not in the team {org}/{dash.github_team}")
                else:
                    m = await client.get(f"{api_url}/orgs/{org}/members/{user}", headers=gh,
                                         follow_redirects=False)
                    if m.status_code != 204:
                        raise OAuthError(f"{user} is not a member of the organization {org}")
            except httpx.HTTPError as e:
                raise OAuthError(f"GitHub could not be reached: {type(e).__name__}") from e
            except ValueError as e:
                raise OAuthError("GitHub answered something that is not JSON") from e
        return user

    app.add_middleware(AuthMiddleware, config=config, mode=mode)


class OAuthError(Exception):
    """The GitHub login did not get through (shown to the person signing in)."""


async def _in_team(client: Any, api_url: str, headers: dict[str, str], org: str,
                   team: str) -> bool:
    url: str | None = f"{api_url}/user/teams?per_page=100"
    pages = 0
    while url and pages < 20:
        r = await client.get(url, headers=headers)
        if r.status_code != 200:
            return False
        for t in r.json():
            o = (t.get("organization") or {}).get("login", "") if isinstance(t, dict) else ""
            if (str(o).lower() == org.lower()
                    and str(t.get("slug", "")).lower() == team.lower()):
                return True
        url = r.links.get("next", {}).get("url")
        pages += 1
    return False
