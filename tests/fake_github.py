"""A fake GitHub REST API: a small threaded HTTP server on 127.0.0.1, state in memory.

It answers the endpoints the bot uses through PyGithub, with payloads shaped like GitHub's REST
API (issues, comments, labels, reactions, collaborator permissions, GitHub App installations and
installation tokens), checks credentials (plain tokens, installation tokens that expire, and
RS256-signed app JWTs), sends rate-limit headers, paginates with ``Link`` headers, and lets a test
inject failures (a 502, a rate limit window, a slow answer) and read back every request it got.

Usage::

    gh = FakeGitHub().start()
    gh.add_token("tok", "reprobot-bot")
    gh.add_repo("apache/tvm")
    n = gh.add_issue("apache/tvm", title="[Bug] crash", body="...", user="alice")
    ...  # point the client at gh.url with token "tok"
    assert len(gh.comments("apache/tvm", n)) == 1
    gh.stop()

Everything is guarded by one lock, so tests may seed and read state while the server runs.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import math
import re
import secrets
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ROLES = ("none", "read", "triage", "write", "maintain", "admin")
# The legacy ``permission`` field of the collaborator-permission endpoint.
_LEGACY_PERMISSION = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
    "none": "none",
}
REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")
_DOCS = "https://docs.github.com/rest"


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _node_id(kind: str, ident: int) -> str:
    return base64.b64encode(f"{kind}{ident}".encode()).decode().rstrip("=")


@dataclass
class _User:
    login: str
    id: int
    type: str = "User"  # "User" | "Bot"


@dataclass
class _Label:
    id: int
    name: str
    color: str
    description: str | None
    default: bool = False


@dataclass
class _Reaction:
    id: int
    user: str
    content: str
    created_at: float


@dataclass
class _Comment:
    id: int
    repo: str
    number: int
    user: str
    body: str
    created_at: float
    updated_at: float
    reactions: list[_Reaction] = field(default_factory=list)


@dataclass
class _Issue:
    id: int
    number: int
    title: str
    body: str | None
    user: str
    labels: list[str]  # label names, canonical spelling
    state: str
    pull_request: bool
    created_at: float
    updated_at: float
    closed_at: float | None = None
    comment_ids: list[int] = field(default_factory=list)
    reactions: list[_Reaction] = field(default_factory=list)


@dataclass
class _Repo:
    id: int
    full_name: str
    private: bool
    created_at: float
    labels: dict[str, _Label] = field(default_factory=dict)  # lower-case name -> label
    issues: dict[int, _Issue] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)  # login -> role

    @property
    def owner(self) -> str:
        return self.full_name.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.full_name.split("/", 1)[1]


@dataclass
class _Installation:
    id: int
    account: str


@dataclass
class _InstallationToken:
    token: str
    installation_id: int
    expires_at: float


@dataclass(frozen=True)
class Request:
    """One request the fake answered, as a test reads it back."""

    method: str
    path: str  # without the API prefix, decoded, e.g. "/repos/o/r/issues/1/comments"
    query: dict[str, str]
    status: int
    principal: str  # login, "app:<id>", or "" when unauthenticated
    body: Any = None  # the parsed JSON body, if any
    injected: bool = False  # answered by an injected fault or rate-limit window
    applied: bool = True  # whether the request changed the fake's state (or would have)


@dataclass
class _Fault:
    method: str
    path: re.Pattern[str]
    status: int | None
    headers: dict[str, str]
    body: Any
    times: int
    apply: bool
    delay: float
    before: Callable[[], None] | None = None


@dataclass
class _Window:
    method: str
    path: re.Pattern[str]
    until: float
    kind: str  # "primary" | "secondary" | "429"


@dataclass
class _Principal:
    kind: str  # "user" | "installation" | "app"
    login: str = ""
    installation_id: int | None = None


class _Response:
    def __init__(
        self, status: int, body: Any = None, headers: dict[str, str] | None = None
    ) -> None:
        self.status = status
        self.body = body
        self.headers = dict(headers or {})


class _HTTPError(Exception):
    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.payload = {"message": message, "documentation_url": _DOCS, **extra}


def _not_found() -> _HTTPError:
    return _HTTPError(404, "Not Found")


class FakeGitHub:
    """In-memory GitHub REST API served over HTTP on 127.0.0.1 (or ``host``)."""

    def __init__(
        self,
        *,
        prefix: str = "",
        app_id: int | str | None = None,
        app_public_key: str | bytes | None = None,
        app_slug: str = "reprobot",
        token_ttl_s: float = 3600.0,
        rate_limit: int = 5000,
        host: str = "127.0.0.1",
    ) -> None:
        # ``host``: the address served on and written into the URLs of the answers (another
        # address than loopback lets containers reach the fake, e.g. the docker bridge's).
        self.host = host
        # ``prefix`` mimics GitHub Enterprise's "/api/v3".
        self.prefix = "/" + prefix.strip("/") if prefix.strip("/") else ""
        self.app_id = str(app_id) if app_id is not None else None
        self.app_public_key = app_public_key
        self.app_slug = app_slug
        self.token_ttl_s = token_ttl_s
        self.rate_limit_total = rate_limit
        self._lock = threading.RLock()
        self._ids = itertools.count(1000)
        self._users: dict[str, _User] = {}
        self._tokens: dict[str, str] = {}  # token -> login
        self._repos: dict[str, _Repo] = {}
        self._comments: dict[int, _Comment] = {}
        self._installations: dict[int, _Installation] = {}
        self._inst_tokens: dict[str, _InstallationToken] = {}
        self._faults: list[_Fault] = []
        self._windows: list[_Window] = []
        self._requests: list[Request] = []
        self._used = 0
        self._reset_at = int(time.time()) + 3600
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None
        self._conns: set[socket.socket] = set()
        # The App's webhook: its deliveries (newest last) and where redeliveries go.
        self._deliveries: list[dict[str, Any]] = []
        self._delivery_payloads: dict[int, tuple[str, bytes]] = {}  # id -> (event, body)
        self._hook: tuple[str, str] | None = None  # (url, secret)
        # OAuth apps (client id -> secret), pending codes, who signs in at the authorize page.
        self._oauth_apps: dict[str, str] = {}
        self._oauth_codes: dict[str, tuple[str, str, str, float]] = {}  # code -> (client, uri,
        self._oauth_login: str | None = None                          #          login, expiry)
        self._org_members: dict[str, set[str]] = {}  # org -> logins
        self._teams: dict[tuple[str, str], tuple[int, set[str]]] = {}  # (org, slug) -> id, logins

    # ------------------------------------------------------------------ lifecycle
    def start(self, port: int | None = None) -> FakeGitHub:
        """Serve on ``host`` (a free port, or the port of the previous start / ``port``)."""
        if self._server is not None:
            return self
        fake = self

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            allow_reuse_address = True
            block_on_close = False

        class Handler(_Handler):
            owner = fake

        use_port = port if port is not None else (self._port or 0)
        self._server = Server((self.host, use_port), Handler)
        self._port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-github",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop answering: the listening socket and every open connection are closed."""
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        with self._lock:
            conns = list(self._conns)
            self._conns.clear()
        for s in conns:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                s.close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._server is not None

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("FakeGitHub is not started")
        return self._port

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def url(self) -> str:
        """The API base URL to give the client (``GITHUB_API_URL``)."""
        return self.origin + self.prefix

    # ------------------------------------------------------------------ seeding
    def add_user(self, login: str, *, type: str = "User") -> None:
        with self._lock:
            self._user(login, type=type)

    def add_token(self, token: str, login: str) -> None:
        """A plain (personal access) token acting as ``login``."""
        with self._lock:
            self._user(login)
            self._tokens[token] = login

    def add_repo(self, full_name: str, *, private: bool = False) -> None:
        with self._lock:
            if full_name in self._repos:
                return
            self._user(full_name.split("/", 1)[0])
            self._repos[full_name] = _Repo(
                id=next(self._ids), full_name=full_name, private=private, created_at=time.time()
            )

    def add_label(
        self, repo: str, name: str, *, color: str = "ededed", description: str | None = None
    ) -> None:
        with self._lock:
            r = self._repo(repo)
            r.labels[name.lower()] = _Label(next(self._ids), name, color, description)

    def add_issue(
        self,
        repo: str,
        *,
        title: str,
        body: str | None = "",
        user: str = "alice",
        labels: Iterable[str] = (),
        number: int | None = None,
        state: str = "open",
        pull_request: bool = False,
    ) -> int:
        """Create an issue (or a pull request when ``pull_request``); return its number."""
        with self._lock:
            r = self._repo(repo)
            self._user(user)
            if number is None:
                number = max(r.issues, default=0) + 1
            names = []
            for name in labels:
                if name.lower() not in r.labels:
                    r.labels[name.lower()] = _Label(next(self._ids), name, "ededed", None)
                names.append(r.labels[name.lower()].name)
            now = time.time()
            r.issues[number] = _Issue(
                id=next(self._ids),
                number=number,
                title=title,
                body=body,
                user=user,
                labels=names,
                state=state,
                pull_request=pull_request,
                created_at=now,
                updated_at=now,
                closed_at=now if state == "closed" else None,
            )
            return number

    def add_comment(self, repo: str, number: int, body: str, *, user: str = "alice") -> int:
        """Add a comment as ``user``; return its id."""
        with self._lock:
            self._user(user)
            return self._new_comment(self._repo(repo), self._issue(repo, number), user, body).id

    def delete_comment(self, repo: str, comment_id: int) -> None:
        with self._lock:
            c = self._comments.pop(comment_id)
            self._repo(repo).issues[c.number].comment_ids.remove(comment_id)

    def label_issue(self, repo: str, number: int, *names: str) -> None:
        """Put labels on an issue (as a maintainer would), creating missing repo labels."""
        with self._lock:
            self._attach(self._repo(repo), self._issue(repo, number), list(names))

    def set_permission(self, repo: str, user: str, role: str) -> None:
        """``role``: admin | maintain | write | triage | read | none."""
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}")
        with self._lock:
            self._user(user)
            self._repo(repo).roles[user] = role

    def install_app(self, account: str, installation_id: int | None = None) -> int:
        """Install the app on an account (owner); every repository of it is reachable."""
        with self._lock:
            self._user(account)
            iid = installation_id if installation_id is not None else next(self._ids)
            self._installations[iid] = _Installation(iid, account)
            self._user(self.bot_login, type="Bot")
            return iid

    @property
    def bot_login(self) -> str:
        """The login the app's installation tokens act as."""
        return f"{self.app_slug}[bot]"

    # ------------------------------------------------------------------ faults
    # -- the App's webhook deliveries (GET /app/hook/deliveries, POST .../attempts) ---------
    def set_hook(self, url: str, secret: str) -> None:
        """Where the App's webhook points: redeliveries are POSTed there, signed with secret."""
        with self._lock:
            self._hook = (url, secret)

    def add_hook_delivery(
        self,
        guid: str,
        event: str,
        *,
        action: str | None = None,
        status_code: int = 200,
        payload: Any = None,
        delivered_at: float | None = None,
        redelivery: bool = False,
        repository_id: int | None = None,
    ) -> int:
        """Record one delivery attempt as GitHub lists it (status_code 0: no answer); returns
        its id. ``payload`` is what a redelivery sends again."""
        with self._lock:
            ident = next(self._ids)
            ok = 200 <= status_code < 300
            self._deliveries.append({
                "id": ident,
                "guid": guid,
                "delivered_at": _iso(delivered_at if delivered_at is not None else time.time()),
                "redelivery": redelivery,
                "duration": 0.05,
                "status": "OK" if ok else (f"Invalid HTTP Response: {status_code}"
                                           if status_code else "timed out"),
                "status_code": status_code,
                "event": event,
                "action": action,
                "installation_id": next(iter(self._installations), None),
                "repository_id": repository_id,
                "throttled_at": None,
            })
            if payload is not None:
                body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self._delivery_payloads[ident] = (event, body)
            else:
                for d in reversed(self._deliveries[:-1]):
                    if d["guid"] == guid and d["id"] in self._delivery_payloads:
                        self._delivery_payloads[ident] = self._delivery_payloads[d["id"]]
                        break
            return ident

    def hook_deliveries(self) -> list[dict[str, Any]]:
        """Every delivery attempt, oldest first (a test reads them back)."""
        with self._lock:
            return [dict(d) for d in self._deliveries]

    # -- OAuth web flow and organizations (dashboard login) ----------------------------------
    def add_oauth_app(self, client_id: str, client_secret: str) -> None:
        with self._lock:
            self._oauth_apps[client_id] = client_secret

    def sign_in_as(self, login: str | None) -> None:
        """Who approves the next /login/oauth/authorize (None: nobody is signed in)."""
        with self._lock:
            if login:
                self._user(login)
            self._oauth_login = login

    def add_org_member(self, org: str, login: str) -> None:
        with self._lock:
            self._user(org)
            self._user(login)
            self._org_members.setdefault(org.lower(), set()).add(login.lower())

    def add_team(self, org: str, slug: str, *members: str) -> None:
        with self._lock:
            self._user(org)
            tid, logins = self._teams.setdefault((org.lower(), slug.lower()),
                                                 (next(self._ids), set()))
            for m in members:
                self._user(m)
                logins.add(m.lower())
                self._org_members.setdefault(org.lower(), set()).add(m.lower())

    def fail_next(
        self,
        method: str,
        path_regex: str,
        status: int | None,
        headers: dict[str, str] | None = None,
        *,
        times: int = 1,
        body: Any = None,
        apply: bool = False,
        delay: float = 0.0,
        before: Callable[[], None] | None = None,
    ) -> None:
        """Answer the next ``times`` matching requests with ``status`` instead.

        ``method`` is an HTTP method or "*"; ``path_regex`` is searched in the decoded path
        (without the API prefix). ``apply=True`` performs the request first and then answers with
        the failure (a write that happened but whose answer was lost). ``delay`` seconds are
        waited before answering; ``status=None`` with a delay only slows the request down.
        ``body`` as bytes is sent as is (text/html), like a proxy's error page. ``before`` runs
        just before the request is handled (e.g. someone deletes the comment meanwhile).
        """
        with self._lock:
            self._faults.append(
                _Fault(
                    method=method.upper(),
                    path=re.compile(path_regex),
                    status=status,
                    headers=dict(headers or {}),
                    body=body,
                    times=times,
                    apply=apply,
                    delay=delay,
                    before=before,
                )
            )

    def rate_limit(
        self, method: str = "*", path_regex: str = ".*", *, seconds: float = 1.0,
        kind: str = "primary",
    ) -> float:
        """Refuse matching requests for ``seconds``, as GitHub does when a limit is hit.

        ``kind``: "primary" (403, ``X-RateLimit-Remaining: 0`` and ``X-RateLimit-Reset``),
        "secondary" (403 with ``Retry-After``) or "429" (429 with ``Retry-After``). A client that
        retries before the window ends is refused again. Returns the end of the window (epoch s).
        """
        if kind not in ("primary", "secondary", "429"):
            raise ValueError(kind)
        until = time.time() + seconds
        if kind == "primary":
            until = float(math.ceil(until))  # X-RateLimit-Reset is whole epoch seconds
        with self._lock:
            self._windows.append(_Window(method.upper(), re.compile(path_regex), until, kind))
        return until

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()
            self._windows.clear()

    # ------------------------------------------------------------------ reading state
    @property
    def requests(self) -> list[Request]:
        with self._lock:
            return list(self._requests)

    def requests_to(self, method: str, path_regex: str) -> list[Request]:
        rx = re.compile(path_regex)
        return [
            r for r in self.requests
            if (method == "*" or r.method == method.upper()) and rx.search(r.path)
        ]

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    def comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        """The issue's comments as GitHub returns them (oldest first)."""
        with self._lock:
            issue = self._issue(repo, number)
            return [self._comment_json(self._comments[c]) for c in issue.comment_ids]

    def comment(self, repo: str, comment_id: int) -> dict[str, Any]:
        with self._lock:
            c = self._comments.get(comment_id)
            if c is None or c.repo != repo:
                raise KeyError(comment_id)
            return self._comment_json(c)

    def issue_labels(self, repo: str, number: int) -> list[str]:
        with self._lock:
            return list(self._issue(repo, number).labels)

    def repo_labels(self, repo: str) -> dict[str, dict[str, Any]]:
        """name -> {"color", "description"} for every label of the repository."""
        with self._lock:
            return {
                lb.name: {"color": lb.color, "description": lb.description}
                for lb in self._repo(repo).labels.values()
            }

    def reactions(
        self, repo: str, *, comment_id: int | None = None, issue: int | None = None
    ) -> list[tuple[str, str]]:
        """(user, content) pairs on a comment or on an issue."""
        with self._lock:
            if comment_id is not None:
                c = self._comments[comment_id]
                return [(x.user, x.content) for x in c.reactions]
            if issue is None:
                raise ValueError("give comment_id or issue")
            return [(x.user, x.content) for x in self._issue(repo, issue).reactions]

    @property
    def issued_tokens(self) -> list[str]:
        """Installation tokens handed out, oldest first."""
        with self._lock:
            return list(self._inst_tokens)

    # JSON views, for tests that build webhook payloads consistent with the fake's state.
    def issue_json(self, repo: str, number: int) -> dict[str, Any]:
        with self._lock:
            return self._issue_json(self._repo(repo), self._issue(repo, number))

    def repo_json(self, repo: str) -> dict[str, Any]:
        with self._lock:
            return self._repo_json(self._repo(repo))

    def user_json(self, login: str) -> dict[str, Any]:
        with self._lock:
            return self._user_json(self._user(login))

    def webhook_payload(
        self,
        event: str,
        action: str,
        repo: str,
        number: int,
        *,
        comment_id: int | None = None,
        sender: str | None = None,
        installation_id: int | None = None,
        changes: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A webhook body for ``issues`` / ``issue_comment`` events, built from the fake's state."""
        with self._lock:
            r = self._repo(repo)
            issue = self._issue(repo, number)
            payload: dict[str, Any] = {
                "action": action,
                "issue": self._issue_json(r, issue),
                "repository": self._repo_json(r),
            }
            if changes is not None:
                payload["changes"] = changes
            if event == "issue_comment":
                if comment_id is None:
                    raise ValueError("issue_comment needs comment_id")
                c = self._comments[comment_id]
                payload["comment"] = self._comment_json(c)
                sender = sender or c.user
            elif event != "issues":
                raise ValueError(f"unsupported event {event!r}")
            payload["sender"] = self._user_json(self._user(sender or issue.user))
            if installation_id is None:
                for inst in self._installations.values():
                    if inst.account == r.owner:
                        installation_id = inst.id
            if installation_id is not None:
                payload["installation"] = {
                    "id": installation_id,
                    "node_id": _node_id("Installation", installation_id),
                }
            return payload

    # ------------------------------------------------------------------ internals: state
    def _user(self, login: str, *, type: str | None = None) -> _User:
        u = self._users.get(login)
        if u is None:
            kind = type or ("Bot" if login.endswith("[bot]") else "User")
            u = self._users[login] = _User(login, next(self._ids), kind)
        return u

    def _repo(self, full_name: str) -> _Repo:
        r = self._repos.get(full_name)
        if r is None:
            raise KeyError(f"no repository {full_name}")
        return r

    def _issue(self, repo: str, number: int) -> _Issue:
        i = self._repo(repo).issues.get(number)
        if i is None:
            raise KeyError(f"no issue {repo}#{number}")
        return i

    def _new_comment(self, r: _Repo, issue: _Issue, user: str, body: str) -> _Comment:
        now = time.time()
        c = _Comment(next(self._ids), r.full_name, issue.number, user, body, now, now)
        self._comments[c.id] = c
        issue.comment_ids.append(c.id)
        issue.updated_at = now
        return c

    def _role(self, r: _Repo, login: str) -> str:
        if login == r.owner:
            return "admin"
        if login in r.roles:
            return r.roles[login]
        return "none" if r.private else "read"

    # ------------------------------------------------------------------ internals: JSON
    def _user_json(self, u: _User) -> dict[str, Any]:
        api = f"{self.url}/users/{urllib.parse.quote(u.login)}"
        return {
            "login": u.login,
            "id": u.id,
            "node_id": _node_id("User" if u.type == "User" else "Bot", u.id),
            "avatar_url": f"{self.origin}/avatars/u/{u.id}",
            "gravatar_id": "",
            "url": api,
            "html_url": f"{self.origin}/{u.login}",
            "followers_url": f"{api}/followers",
            "following_url": f"{api}/following{{/other_user}}",
            "gists_url": f"{api}/gists{{/gist_id}}",
            "starred_url": f"{api}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{api}/subscriptions",
            "organizations_url": f"{api}/orgs",
            "repos_url": f"{api}/repos",
            "events_url": f"{api}/events{{/privacy}}",
            "received_events_url": f"{api}/received_events",
            "type": u.type,
            "user_view_type": "public",
            "site_admin": False,
        }

    def _repo_json(self, r: _Repo) -> dict[str, Any]:
        api = f"{self.url}/repos/{r.full_name}"
        return {
            "id": r.id,
            "node_id": _node_id("Repository", r.id),
            "name": r.name,
            "full_name": r.full_name,
            "private": r.private,
            "owner": self._user_json(self._user(r.owner)),
            "html_url": f"{self.origin}/{r.full_name}",
            "description": None,
            "fork": False,
            "url": api,
            "issues_url": f"{api}/issues{{/number}}",
            "issue_comment_url": f"{api}/issues/comments{{/number}}",
            "labels_url": f"{api}/labels{{/name}}",
            "collaborators_url": f"{api}/collaborators{{/collaborator}}",
            "comments_url": f"{api}/comments{{/number}}",
            "pulls_url": f"{api}/pulls{{/number}}",
            "clone_url": f"{self.origin}/{r.full_name}.git",
            "default_branch": "main",
            "visibility": "private" if r.private else "public",
            "has_issues": True,
            "archived": False,
            "disabled": False,
            "open_issues_count": sum(1 for i in r.issues.values() if i.state == "open"),
            "created_at": _iso(r.created_at),
            "updated_at": _iso(r.created_at),
            "pushed_at": _iso(r.created_at),
        }

    def _label_json(self, r: _Repo, lb: _Label) -> dict[str, Any]:
        return {
            "id": lb.id,
            "node_id": _node_id("Label", lb.id),
            "url": f"{self.url}/repos/{r.full_name}/labels/{urllib.parse.quote(lb.name, safe='')}",
            "name": lb.name,
            "color": lb.color,
            "default": lb.default,
            "description": lb.description,
        }

    def _reactions_summary(self, url: str, reactions: list[_Reaction]) -> dict[str, Any]:
        out: dict[str, Any] = {"url": url, "total_count": len(reactions)}
        for content in REACTIONS:
            out[content] = sum(1 for x in reactions if x.content == content)
        return out

    def _association(self, r: _Repo, login: str) -> str:
        if login == r.owner:
            return "OWNER"
        if r.roles.get(login, "none") not in ("none", "read"):
            return "COLLABORATOR"
        return "NONE"

    def _issue_json(self, r: _Repo, i: _Issue) -> dict[str, Any]:
        api = f"{self.url}/repos/{r.full_name}/issues/{i.number}"
        kind = "pull" if i.pull_request else "issues"
        out: dict[str, Any] = {
            "url": api,
            "repository_url": f"{self.url}/repos/{r.full_name}",
            "labels_url": f"{api}/labels{{/name}}",
            "comments_url": f"{api}/comments",
            "events_url": f"{api}/events",
            "html_url": f"{self.origin}/{r.full_name}/{kind}/{i.number}",
            "id": i.id,
            "node_id": _node_id("Issue", i.id),
            "number": i.number,
            "title": i.title,
            "user": self._user_json(self._user(i.user)),
            "labels": [self._label_json(r, r.labels[n.lower()]) for n in i.labels],
            "state": i.state,
            "state_reason": "completed" if i.state == "closed" else None,
            "locked": False,
            "assignee": None,
            "assignees": [],
            "milestone": None,
            "comments": len(i.comment_ids),
            "created_at": _iso(i.created_at),
            "updated_at": _iso(i.updated_at),
            "closed_at": _iso(i.closed_at) if i.closed_at else None,
            "author_association": self._association(r, i.user),
            "active_lock_reason": None,
            "body": i.body,
            "reactions": self._reactions_summary(f"{api}/reactions", i.reactions),
            "timeline_url": f"{api}/timeline",
            "performed_via_github_app": None,
        }
        if i.pull_request:
            pr = f"{self.url}/repos/{r.full_name}/pulls/{i.number}"
            out["pull_request"] = {
                "url": pr,
                "html_url": f"{self.origin}/{r.full_name}/pull/{i.number}",
                "diff_url": f"{self.origin}/{r.full_name}/pull/{i.number}.diff",
                "patch_url": f"{self.origin}/{r.full_name}/pull/{i.number}.patch",
                "merged_at": None,
            }
            out["draft"] = False
        return out

    def _comment_json(self, c: _Comment) -> dict[str, Any]:
        r = self._repos[c.repo]
        api = f"{self.url}/repos/{c.repo}/issues/comments/{c.id}"
        kind = "pull" if r.issues[c.number].pull_request else "issues"
        return {
            "url": api,
            "html_url": f"{self.origin}/{c.repo}/{kind}/{c.number}#issuecomment-{c.id}",
            "issue_url": f"{self.url}/repos/{c.repo}/issues/{c.number}",
            "id": c.id,
            "node_id": _node_id("IssueComment", c.id),
            "user": self._user_json(self._user(c.user)),
            "created_at": _iso(c.created_at),
            "updated_at": _iso(c.updated_at),
            "author_association": self._association(r, c.user),
            "body": c.body,
            "reactions": self._reactions_summary(f"{api}/reactions", c.reactions),
            "performed_via_github_app": None,
        }

    def _reaction_json(self, x: _Reaction) -> dict[str, Any]:
        return {
            "id": x.id,
            "node_id": _node_id("Reaction", x.id),
            "user": self._user_json(self._user(x.user)),
            "content": x.content,
            "created_at": _iso(x.created_at),
        }

    def _installation_json(self, inst: _Installation) -> dict[str, Any]:
        acct = self._user(inst.account)
        return {
            "id": inst.id,
            "account": self._user_json(acct),
            "repository_selection": "all",
            "access_tokens_url": f"{self.url}/app/installations/{inst.id}/access_tokens",
            "repositories_url": f"{self.url}/installation/repositories",
            "html_url": f"{self.origin}/settings/installations/{inst.id}",
            "app_id": int(self.app_id) if self.app_id and self.app_id.isdigit() else self.app_id,
            "app_slug": self.app_slug,
            "target_id": acct.id,
            "target_type": "User",
            "permissions": {"issues": "write", "metadata": "read"},
            "events": ["issues", "issue_comment"],
            "created_at": _iso(time.time()),
            "updated_at": _iso(time.time()),
            "single_file_name": None,
            "suspended_by": None,
            "suspended_at": None,
        }

    # ------------------------------------------------------------------ internals: HTTP
    def _authenticate(self, header: str) -> _Principal | None:
        parts = header.split(None, 1)
        if len(parts) != 2 or parts[0].lower() not in ("token", "bearer"):
            return None
        cred = parts[1].strip()
        with self._lock:
            if cred in self._tokens:
                return _Principal("user", self._tokens[cred])
            it = self._inst_tokens.get(cred)
            if it is not None:
                if it.expires_at <= time.time():
                    return None
                return _Principal("installation", self.bot_login, it.installation_id)
        if cred.count(".") == 2 and self.app_id is not None and self.app_public_key is not None:
            import jwt  # PyJWT, a dependency of PyGithub

            try:
                claims = jwt.decode(
                    cred,
                    self.app_public_key,
                    algorithms=["RS256"],
                    options={"require": ["iat", "exp", "iss"]},
                    leeway=5,
                )
            except jwt.PyJWTError:
                return None
            if str(claims.get("iss")) != self.app_id:
                return None
            if claims["exp"] - claims["iat"] > 600 + 60:  # GitHub: at most 10 minutes
                return None
            return _Principal("app", f"app:{self.app_id}")
        return None

    def _rate_headers(self) -> dict[str, str]:
        with self._lock:
            now = time.time()
            if now >= self._reset_at:
                self._reset_at = int(now) + 3600
                self._used = 0
            self._used += 1
            return {
                "X-RateLimit-Limit": str(self.rate_limit_total),
                "X-RateLimit-Remaining": str(max(0, self.rate_limit_total - self._used)),
                "X-RateLimit-Reset": str(self._reset_at),
                "X-RateLimit-Used": str(self._used),
                "X-RateLimit-Resource": "core",
            }

    def handle(
        self, method: str, raw_path: str, headers: dict[str, str], raw_body: bytes
    ) -> tuple[_Response, float]:
        """Answer one request; returns the response and a delay to wait before sending it."""
        split = urllib.parse.urlsplit(raw_path)
        path = split.path
        query = dict(urllib.parse.parse_qsl(split.query))
        body: Any = None
        if raw_body:
            try:
                body = json.loads(raw_body)
            except ValueError:
                body = None
                bad_json = True
            else:
                bad_json = False
        else:
            bad_json = False

        def done(resp: _Response, principal: str, *, injected: bool = False,
                 applied: bool = True, delay: float = 0.0) -> tuple[_Response, float]:
            resp.headers = {**self._rate_headers(), **resp.headers}
            with self._lock:
                self._requests.append(
                    Request(method, rel, query, resp.status, principal, body, injected, applied)
                )
            return resp, delay

        if self.prefix and not (path == self.prefix or path.startswith(self.prefix + "/")
                                or path.startswith("/login/oauth/")):
            rel = path
            return done(_Response(404, {"message": "Not Found", "documentation_url": _DOCS}), "")
        rel = urllib.parse.unquote(path[len(self.prefix):]) or "/"

        route = self._route(method, path[len(self.prefix):] or "/")
        if route is None and path.startswith("/login/oauth/"):  # github.com, not the API
            route = self._route(method, path)
        if route is not None and route[2] == "none":
            if "application/x-www-form-urlencoded" in headers.get("content-type", ""):
                body = dict(urllib.parse.parse_qsl(raw_body.decode("utf-8", "replace")))
            handler, args, _ = route
            with self._lock:
                resp = handler(_Principal("anonymous"), query, body, *args)
            return done(resp, "")
        principal = self._authenticate(headers.get("authorization", ""))
        who = principal.login if principal else ""
        if principal is None:
            return done(_Response(401, {"message": "Bad credentials", "documentation_url": _DOCS}), "")
        if route is None:
            return done(_Response(404, {"message": "Not Found", "documentation_url": _DOCS}), who)
        handler, args, needs = route
        if needs == "app" and principal.kind != "app":
            return done(_Response(401, {
                "message": "A JSON web token could not be decoded", "documentation_url": _DOCS}),
                who)
        if needs != "app" and principal.kind == "app":
            return done(_Response(401, {"message": "Bad credentials", "documentation_url": _DOCS}),
                        who)

        # Rate-limit windows refuse the request outright.
        now = time.time()
        with self._lock:
            self._windows = [w for w in self._windows if w.until > now]
            window = next(
                (w for w in self._windows
                 if (w.method == "*" or w.method == method) and w.path.search(rel)),
                None,
            )
        if window is not None:
            if window.kind == "primary":
                resp = _Response(403, {
                    "message": f"API rate limit exceeded for {who}.",
                    "documentation_url": _DOCS,
                }, {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(window.until))})
                return done(resp, who, injected=True, applied=False)
            wait = max(1, math.ceil(window.until - now))
            status = 429 if window.kind == "429" else 403
            resp = _Response(status, {
                "message": "You have exceeded a secondary rate limit. "
                           "Please wait a few minutes before you try again.",
                "documentation_url": _DOCS,
            }, {"Retry-After": str(wait)})
            return done(resp, who, injected=True, applied=False)

        with self._lock:
            fault = next(
                (f for f in self._faults
                 if f.times > 0 and (f.method == "*" or f.method == method)
                 and f.path.search(rel)),
                None,
            )
            if fault is not None:
                fault.times -= 1
                self._faults = [f for f in self._faults if f.times > 0]
        if fault is not None and fault.before is not None:
            fault.before()
        if fault is not None and fault.status is not None and not fault.apply:
            fb = fault.body if fault.body is not None else {
                "message": "Server Error" if fault.status >= 500 else "Injected failure"}
            return done(_Response(fault.status, fb, fault.headers), who, injected=True,
                        applied=False, delay=fault.delay)

        if bad_json:
            resp = _Response(400, {"message": "Problems parsing JSON", "documentation_url": _DOCS})
        else:
            try:
                with self._lock:
                    resp = handler(principal, query, body, *args)
            except _HTTPError as e:
                resp = _Response(e.status, e.payload)
        if fault is not None and fault.status is not None:  # applied, then the answer is lost
            fb = fault.body if fault.body is not None else {"message": "Server Error"}
            return done(_Response(fault.status, fb, fault.headers), who, injected=True,
                        applied=True, delay=fault.delay)
        return done(resp, who, delay=fault.delay if fault is not None else 0.0)

    # ------------------------------------------------------------------ routes
    _ROUTES: list[tuple[str, str, str, str]] = [
        # (method, path regex over the raw (still quoted) path, handler name, auth kind)
        ("GET", r"/user", "_h_get_user", "user"),
        ("GET", r"/rate_limit", "_h_rate_limit", "user"),
        ("GET", r"/app", "_h_get_app", "app"),
        ("GET", r"/repos/([^/]+)/([^/]+)/installation", "_h_repo_installation", "app"),
        ("GET", r"/app/installations/(\d+)", "_h_get_installation", "app"),
        ("POST", r"/app/installations/(\d+)/access_tokens", "_h_access_token", "app"),
        ("GET", r"/repos/([^/]+)/([^/]+)", "_h_get_repo", "user"),
        ("GET", r"/repos/([^/]+)/([^/]+)/issues/(\d+)", "_h_get_issue", "user"),
        ("GET", r"/repos/([^/]+)/([^/]+)/issues/(\d+)/comments", "_h_list_comments", "user"),
        ("POST", r"/repos/([^/]+)/([^/]+)/issues/(\d+)/comments", "_h_create_comment", "user"),
        ("GET", r"/repos/([^/]+)/([^/]+)/issues/comments/(\d+)", "_h_get_comment", "user"),
        ("PATCH", r"/repos/([^/]+)/([^/]+)/issues/comments/(\d+)", "_h_edit_comment", "user"),
        ("DELETE", r"/repos/([^/]+)/([^/]+)/issues/comments/(\d+)", "_h_delete_comment", "user"),
        ("GET", r"/repos/([^/]+)/([^/]+)/issues/comments/(\d+)/reactions",
         "_h_list_comment_reactions", "user"),
        ("POST", r"/repos/([^/]+)/([^/]+)/issues/comments/(\d+)/reactions",
         "_h_react_comment", "user"),
        ("GET", r"/repos/([^/]+)/([^/]+)/issues/(\d+)/reactions",
         "_h_list_issue_reactions", "user"),
        ("POST", r"/repos/([^/]+)/([^/]+)/issues/(\d+)/reactions", "_h_react_issue", "user"),
        ("GET", r"/repos/([^/]+)/([^/]+)/issues/(\d+)/labels", "_h_issue_labels", "user"),
        ("POST", r"/repos/([^/]+)/([^/]+)/issues/(\d+)/labels", "_h_add_issue_labels", "user"),
        ("PUT", r"/repos/([^/]+)/([^/]+)/issues/(\d+)/labels", "_h_set_issue_labels", "user"),
        ("DELETE", r"/repos/([^/]+)/([^/]+)/issues/(\d+)/labels", "_h_clear_issue_labels",
         "user"),
        ("DELETE", r"/repos/([^/]+)/([^/]+)/issues/(\d+)/labels/([^/]+)",
         "_h_remove_issue_label", "user"),
        ("GET", r"/repos/([^/]+)/([^/]+)/labels", "_h_list_labels", "user"),
        ("POST", r"/repos/([^/]+)/([^/]+)/labels", "_h_create_label", "user"),
        ("GET", r"/repos/([^/]+)/([^/]+)/labels/([^/]+)", "_h_get_label", "user"),
        ("PATCH", r"/repos/([^/]+)/([^/]+)/labels/([^/]+)", "_h_update_label", "user"),
        ("DELETE", r"/repos/([^/]+)/([^/]+)/labels/([^/]+)", "_h_delete_label", "user"),
        ("GET", r"/repos/([^/]+)/([^/]+)/collaborators/([^/]+)/permission",
         "_h_permission", "user"),
        ("GET", r"/app/hook/deliveries", "_h_hook_deliveries", "app"),
        ("POST", r"/app/hook/deliveries/(\d+)/attempts", "_h_redeliver", "app"),
        ("GET", r"/orgs/([^/]+)/members/([^/]+)", "_h_org_member", "user"),
        ("GET", r"/user/teams", "_h_user_teams", "user"),
        # The OAuth web flow lives on github.com itself, not the API: no credentials.
        ("GET", r"/login/oauth/authorize", "_h_oauth_authorize", "none"),
        ("POST", r"/login/oauth/access_token", "_h_oauth_token", "none"),
    ]
    _COMPILED = [(m, re.compile(p + r"/?"), h, a) for m, p, h, a in _ROUTES]

    def _route(
        self, method: str, raw_rel: str
    ) -> tuple[Callable[..., _Response], tuple[str, ...], str] | None:
        for m, rx, name, auth in self._COMPILED:
            if m != method:
                continue
            match = rx.fullmatch(raw_rel)
            if match:
                args = tuple(urllib.parse.unquote(g) for g in match.groups())
                return getattr(self, name), args, auth
        return None

    # Access checks -------------------------------------------------------------------
    def _visible_repo(self, p: _Principal, owner: str, name: str) -> _Repo:
        r = self._repos.get(f"{owner}/{name}")
        if r is None:
            raise _not_found()
        if p.kind == "installation":
            inst = self._installations.get(p.installation_id or -1)
            if inst is None or inst.account != r.owner:
                raise _not_found()
        elif r.private and self._role(r, p.login) == "none":
            raise _not_found()
        return r

    def _visible_issue(self, p: _Principal, owner: str, name: str, number: str) -> tuple[
        _Repo, _Issue
    ]:
        r = self._visible_repo(p, owner, name)
        i = r.issues.get(int(number))
        if i is None:
            raise _not_found()
        return r, i

    def _visible_comment(self, p: _Principal, owner: str, name: str, cid: str) -> tuple[
        _Repo, _Comment
    ]:
        r = self._visible_repo(p, owner, name)
        c = self._comments.get(int(cid))
        if c is None or c.repo != r.full_name:
            raise _not_found()
        return r, c

    def _paginate(self, items: list[Any], query: dict[str, str], path: str) -> _Response:
        try:
            per_page = min(100, max(1, int(query.get("per_page", "30"))))
            page = max(1, int(query.get("page", "1")))
        except ValueError as e:
            raise _HTTPError(422, "Invalid pagination parameters") from e
        last = max(1, math.ceil(len(items) / per_page))
        chunk = items[(page - 1) * per_page: page * per_page]
        links = []

        def link(n: int, rel: str) -> str:
            q = dict(query, per_page=str(per_page), page=str(n))
            return f'<{self.url}{path}?{urllib.parse.urlencode(q)}>; rel="{rel}"'

        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        if page > 1:
            links += [link(1, "first"), link(page - 1, "prev")]
        headers = {"Link": ", ".join(links)} if links else {}
        return _Response(200, chunk, headers)

    @staticmethod
    def _need_str(body: Any, key: str) -> str:
        if not isinstance(body, dict) or not isinstance(body.get(key), str):
            raise _HTTPError(422, "Invalid request.", errors=[
                {"resource": "Issue", "code": "missing_field", "field": key}])
        return str(body[key])

    # Handlers (called with the lock held) ---------------------------------------------
    def _h_get_user(self, p: _Principal, q: dict[str, str], body: Any) -> _Response:
        if p.kind == "installation":
            raise _HTTPError(403, "Resource not accessible by integration")
        return _Response(200, self._user_json(self._user(p.login)))

    def _h_rate_limit(self, p: _Principal, q: dict[str, str], body: Any) -> _Response:
        core = {
            "limit": self.rate_limit_total,
            "remaining": max(0, self.rate_limit_total - self._used),
            "reset": self._reset_at,
            "used": self._used,
        }
        return _Response(200, {"resources": {"core": core}, "rate": core})

    def _h_get_app(self, p: _Principal, q: dict[str, str], body: Any) -> _Response:
        owner = self._user("reprobot-owner")
        return _Response(200, {
            "id": int(self.app_id) if self.app_id and self.app_id.isdigit() else self.app_id,
            "slug": self.app_slug,
            "node_id": _node_id("App", 1),
            "owner": self._user_json(owner),
            "name": self.app_slug,
            "description": "",
            "external_url": self.origin,
            "html_url": f"{self.origin}/apps/{self.app_slug}",
            "created_at": _iso(time.time()),
            "updated_at": _iso(time.time()),
            "permissions": {"issues": "write", "metadata": "read"},
            "events": ["issues", "issue_comment"],
            "installations_count": len(self._installations),
        })

    def _h_repo_installation(self, p: _Principal, q: dict[str, str], body: Any, owner: str,
                             name: str) -> _Response:
        if f"{owner}/{name}" not in self._repos:
            raise _not_found()
        for inst in self._installations.values():
            if inst.account == owner:
                return _Response(200, self._installation_json(inst))
        raise _not_found()

    def _h_get_installation(self, p: _Principal, q: dict[str, str], body: Any,
                            iid: str) -> _Response:
        inst = self._installations.get(int(iid))
        if inst is None:
            raise _not_found()
        return _Response(200, self._installation_json(inst))

    def _h_access_token(self, p: _Principal, q: dict[str, str], body: Any,
                        iid: str) -> _Response:
        inst = self._installations.get(int(iid))
        if inst is None:
            raise _not_found()
        token = "ghs_" + secrets.token_hex(18)
        expires = time.time() + self.token_ttl_s
        self._inst_tokens[token] = _InstallationToken(token, inst.id, expires)
        return _Response(201, {
            "token": token,
            "expires_at": _iso(expires),
            "permissions": {"issues": "write", "metadata": "read"},
            "repository_selection": "all",
        })

    def _h_get_repo(self, p: _Principal, q: dict[str, str], body: Any, owner: str,
                    name: str) -> _Response:
        return _Response(200, self._repo_json(self._visible_repo(p, owner, name)))

    def _h_get_issue(self, p: _Principal, q: dict[str, str], body: Any, owner: str, name: str,
                     number: str) -> _Response:
        r, i = self._visible_issue(p, owner, name, number)
        return _Response(200, self._issue_json(r, i))

    def _h_list_comments(self, p: _Principal, q: dict[str, str], body: Any, owner: str,
                         name: str, number: str) -> _Response:
        r, i = self._visible_issue(p, owner, name, number)
        items = [self._comment_json(self._comments[c]) for c in i.comment_ids]
        return self._paginate(items, q, f"/repos/{r.full_name}/issues/{i.number}/comments")

    def _h_create_comment(self, p: _Principal, q: dict[str, str], body: Any, owner: str,
                          name: str, number: str) -> _Response:
        r, i = self._visible_issue(p, owner, name, number)
        text = self._need_str(body, "body")
        if len(text) > 65536:
            raise _HTTPError(422, "Validation Failed", errors=[
                {"resource": "IssueComment", "code": "custom", "field": "body",
                 "message": "body is too long (maximum is 65536 characters)"}])
        c = self._new_comment(r, i, p.login, text)
        return _Response(201, self._comment_json(c), {"Location": self._comment_json(c)["url"]})

    def _h_get_comment(self, p: _Principal, q: dict[str, str], body: Any, owner: str, name: str,
                       cid: str) -> _Response:
        _, c = self._visible_comment(p, owner, name, cid)
        return _Response(200, self._comment_json(c))

    def _h_edit_comment(self, p: _Principal, q: dict[str, str], body: Any, owner: str,
                        name: str, cid: str) -> _Response:
        r, c = self._visible_comment(p, owner, name, cid)
        text = self._need_str(body, "body")
        if c.user != p.login and self._role(r, p.login) not in ("write", "maintain", "admin"):
            raise _HTTPError(403, "Resource not accessible by integration"
                             if p.kind == "installation" else "Must have admin rights")
        c.body = text
        c.updated_at = time.time()
        return _Response(200, self._comment_json(c))

    def _h_delete_comment(self, p: _Principal, q: dict[str, str], body: Any, owner: str,
                          name: str, cid: str) -> _Response:
        r, c = self._visible_comment(p, owner, name, cid)
        r.issues[c.number].comment_ids.remove(c.id)
        del self._comments[c.id]
        return _Response(204)

    def _react(self, reactions: list[_Reaction], login: str, body: Any) -> _Response:
        content = self._need_str(body, "content")
        if content not in REACTIONS:
            raise _HTTPError(422, "Validation Failed", errors=[
                {"resource": "Reaction", "code": "custom", "field": "content"}])
        for x in reactions:
            if x.user == login and x.content == content:
                return _Response(200, self._reaction_json(x))
        x = _Reaction(next(self._ids), login, content, time.time())
        reactions.append(x)
        return _Response(201, self._reaction_json(x))

    def _h_list_comment_reactions(self, p: _Principal, q: dict[str, str], body: Any, owner: str,
                                  name: str, cid: str) -> _Response:
        r, c = self._visible_comment(p, owner, name, cid)
        items = [self._reaction_json(x) for x in c.reactions]
        return self._paginate(items, q, f"/repos/{r.full_name}/issues/comments/{c.id}/reactions")

    def _h_react_comment(self, p: _Principal, q: dict[str, str], body: Any, owner: str,
                         name: str, cid: str) -> _Response:
        _, c = self._visible_comment(p, owner, name, cid)
        return self._react(c.reactions, p.login, body)

    def _h_list_issue_reactions(self, p: _Principal, q: dict[str, str], body: Any, owner: str,
                                name: str, number: str) -> _Response:
        r, i = self._visible_issue(p, owner, name, number)
        items = [self._reaction_json(x) for x in i.reactions]
        return self._paginate(items, q, f"/repos/{r.full_name}/issues/{i.number}/reactions")

    def _h_react_issue(self, p: _Principal, q: dict[str, str], body: Any, owner: str, name: str,
                       number: str) -> _Response:
        _, i = self._visible_issue(p, owner, name, number)
        return self._react(i.reactions, p.login, body)

    def _issue_labels_json(self, r: _Repo, i: _Issue) -> list[dict[str, Any]]:
        return [self._label_json(r, r.labels[n.lower()]) for n in i.labels]

    def _label_names(self, body: Any) -> list[str]:
        raw = body.get("labels") if isinstance(body, dict) else body
        if not isinstance(raw, list):
            raise _HTTPError(422, "Invalid request.")
        names = []
        for x in raw:
            if isinstance(x, dict):
                x = x.get("name")
            if not isinstance(x, str) or not x:
                raise _HTTPError(422, "Invalid request.")
            names.append(x)
        return names

    def _attach(self, r: _Repo, i: _Issue, names: list[str]) -> None:
        for n in names:
            lb = r.labels.get(n.lower())
            if lb is None:  # GitHub creates a missing label with a default colour
                lb = r.labels[n.lower()] = _Label(next(self._ids), n, "ededed", None)
            if lb.name.lower() not in (x.lower() for x in i.labels):
                i.labels.append(lb.name)
        i.updated_at = time.time()

    def _h_issue_labels(self, p: _Principal, q: dict[str, str], body: Any, owner: str,
                        name: str, number: str) -> _Response:
        r, i = self._visible_issue(p, owner, name, number)
        return self._paginate(self._issue_labels_json(r, i), q,
                              f"/repos/{r.full_name}/issues/{i.number}/labels")

    def _h_add_issue_labels(self, p: _Principal, q: dict[str, str], body: Any, owner: str,
                            name: str, number: str) -> _Response:
        r, i = self._visible_issue(p, owner, name, number)
        self._attach(r, i, self._label_names(body))
        return _Response(200, self._issue_labels_json(r, i))

    def _h_set_issue_labels(self, p: _Principal, q: dict[str, str], body: Any, owner: str,
                            name: str, number: str) -> _Response:
        r, i = self._visible_issue(p, owner, name, number)
        names = self._label_names(body)
        i.labels = []
        self._attach(r, i, names)
        return _Response(200, self._issue_labels_json(r, i))

    def _h_clear_issue_labels(self, p: _Principal, q: dict[str, str], body: Any, owner: str,
                              name: str, number: str) -> _Response:
        _, i = self._visible_issue(p, owner, name, number)
        i.labels = []
        return _Response(204)

    def _h_remove_issue_label(self, p: _Principal, q: dict[str, str], body: Any, owner: str,
                              name: str, number: str, label: str) -> _Response:
        r, i = self._visible_issue(p, owner, name, number)
        keep = [n for n in i.labels if n.lower() != label.lower()]
        if len(keep) == len(i.labels):
            raise _HTTPError(404, "Label does not exist")
        i.labels = keep
        i.updated_at = time.time()
        return _Response(200, self._issue_labels_json(r, i))

    def _h_list_labels(self, p: _Principal, q: dict[str, str], body: Any, owner: str,
                       name: str) -> _Response:
        r = self._visible_repo(p, owner, name)
        items = [self._label_json(r, lb) for lb in r.labels.values()]
        return self._paginate(items, q, f"/repos/{r.full_name}/labels")

    def _h_create_label(self, p: _Principal, q: dict[str, str], body: Any, owner: str,
                        name: str) -> _Response:
        r = self._visible_repo(p, owner, name)
        label = self._need_str(body, "name")
        color = str(body.get("color") or "ededed").lstrip("#")
        if not re.fullmatch(r"[0-9a-fA-F]{6}", color):
            raise _HTTPError(422, "Validation Failed", errors=[
                {"resource": "Label", "code": "invalid", "field": "color"}])
        if label.lower() in r.labels:
            raise _HTTPError(422, "Validation Failed", errors=[
                {"resource": "Label", "code": "already_exists", "field": "name"}])
        desc = body.get("description")
        if desc is not None and len(str(desc)) > 100:
            raise _HTTPError(422, "Validation Failed", errors=[
                {"resource": "Label", "code": "custom", "field": "description",
                 "message": "description is too long (maximum is 100 characters)"}])
        lb = r.labels[label.lower()] = _Label(next(self._ids), label, color.lower(), desc)
        return _Response(201, self._label_json(r, lb))

    def _h_get_label(self, p: _Principal, q: dict[str, str], body: Any, owner: str, name: str,
                     label: str) -> _Response:
        r = self._visible_repo(p, owner, name)
        lb = r.labels.get(label.lower())
        if lb is None:
            raise _not_found()
        return _Response(200, self._label_json(r, lb))

    def _h_update_label(self, p: _Principal, q: dict[str, str], body: Any, owner: str,
                        name: str, label: str) -> _Response:
        r = self._visible_repo(p, owner, name)
        lb = r.labels.get(label.lower())
        if lb is None or not isinstance(body, dict):
            raise _not_found()
        if "color" in body:
            lb.color = str(body["color"]).lstrip("#").lower()
        if "description" in body:
            lb.description = body["description"]
        if "new_name" in body:
            del r.labels[lb.name.lower()]
            for i in r.issues.values():
                i.labels = [body["new_name"] if n == lb.name else n for n in i.labels]
            lb.name = str(body["new_name"])
            r.labels[lb.name.lower()] = lb
        return _Response(200, self._label_json(r, lb))

    def _h_delete_label(self, p: _Principal, q: dict[str, str], body: Any, owner: str,
                        name: str, label: str) -> _Response:
        r = self._visible_repo(p, owner, name)
        lb = r.labels.pop(label.lower(), None)
        if lb is None:
            raise _not_found()
        for i in r.issues.values():
            i.labels = [n for n in i.labels if n.lower() != label.lower()]
        return _Response(204)

    def _h_permission(self, p: _Principal, q: dict[str, str], body: Any, owner: str, name: str,
                      user: str) -> _Response:
        r = self._visible_repo(p, owner, name)
        if user not in self._users:
            raise _not_found()
        role = self._role(r, user)
        return _Response(200, {
            "permission": _LEGACY_PERMISSION[role],
            "role_name": role,
            "user": self._user_json(self._users[user]),
        })

    # The App's webhook deliveries ------------------------------------------------------
    def _h_hook_deliveries(self, p: _Principal, q: dict[str, str], body: Any) -> _Response:
        try:
            per_page = min(100, max(1, int(q.get("per_page", "30"))))
            cursor = int(q["cursor"]) if q.get("cursor") else None
        except ValueError as e:
            raise _HTTPError(400, "Bad request: invalid cursor or per_page") from e
        wanted = q.get("status")
        if wanted not in (None, "success", "failure"):
            raise _HTTPError(422, "Validation Failed: status must be success or failure")
        items = sorted(self._deliveries, key=lambda d: -int(d["id"]))  # newest first
        if wanted:
            items = [d for d in items if (200 <= d["status_code"] < 300) == (wanted == "success")]
        if cursor is not None:
            items = [d for d in items if int(d["id"]) <= cursor]
        page, rest = items[:per_page], items[per_page:]
        headers = {}
        if rest:
            nq = dict(q, per_page=str(per_page), cursor=str(rest[0]["id"]))
            headers["Link"] = (f'<{self.url}/app/hook/deliveries?'
                               f'{urllib.parse.urlencode(nq)}>; rel="next"')
        return _Response(200, [dict(d) for d in page], headers)

    def _h_redeliver(self, p: _Principal, q: dict[str, str], body: Any,
                     delivery_id: str) -> _Response:
        d = next((x for x in self._deliveries if x["id"] == int(delivery_id)), None)
        if d is None:
            raise _not_found()
        stored = self._delivery_payloads.get(d["id"])
        hook = self._hook
        if stored is not None and hook is not None:
            threading.Thread(target=self._deliver_again, args=(d, stored, hook),
                             name="fake-github-redelivery", daemon=True).start()
        return _Response(202, {})

    def _deliver_again(self, d: dict[str, Any], stored: tuple[str, bytes],
                       hook: tuple[str, str]) -> None:
        """POST the delivery again as GitHub does (same GUID), and record the attempt."""
        import hashlib
        import hmac
        import urllib.request

        event, raw = stored
        url, secret = hook
        sig = "sha256=" + hmac.new(secret.encode(), raw, hashlib.sha256).hexdigest()
        req = urllib.request.Request(url, data=raw, method="POST", headers={
            "Content-Type": "application/json", "User-Agent": "GitHub-Hookshot/fake",
            "X-GitHub-Event": event, "X-GitHub-Delivery": d["guid"],
            "X-Hub-Signature-256": sig})
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                code = resp.status
        except urllib.error.HTTPError as e:
            code = e.code
        except OSError:
            code = 0
        self.add_hook_delivery(d["guid"], event, action=d.get("action"), status_code=code,
                               redelivery=True, repository_id=d.get("repository_id"))

    # Organizations and the OAuth web flow ----------------------------------------------
    def _h_org_member(self, p: _Principal, q: dict[str, str], body: Any, org: str,
                      username: str) -> _Response:
        members = self._org_members.get(org.lower())
        if members is None:
            raise _not_found()
        if p.login.lower() not in members:
            # A non-member asking is sent to the public membership check.
            return _Response(302, None, {
                "Location": f"{self.url}/orgs/{org}/public_members/{username}"})
        if username.lower() in members:
            return _Response(204)
        raise _HTTPError(404, "User does not exist or is not a member of the organization")

    def _h_user_teams(self, p: _Principal, q: dict[str, str], body: Any) -> _Response:
        teams = []
        for (org, slug), (tid, logins) in sorted(self._teams.items()):
            if p.login.lower() in logins:
                o = self._user(org)
                teams.append({
                    "id": tid, "node_id": _node_id("Team", tid),
                    "url": f"{self.url}/teams/{tid}",
                    "html_url": f"{self.origin}/orgs/{org}/teams/{slug}",
                    "members_url": f"{self.url}/teams/{tid}/members{{/member}}",
                    "repositories_url": f"{self.url}/teams/{tid}/repos",
                    "name": slug, "slug": slug, "description": None, "privacy": "closed",
                    "notification_setting": "notifications_enabled", "permission": "pull",
                    "type": "organization", "parent": None,
                    "created_at": _iso(time.time()), "updated_at": _iso(time.time()),
                    "members_count": len(logins), "repos_count": 0,
                    "organization": dict(self._user_json(o), type="Organization"),
                })
        return self._paginate(teams, q, "/user/teams")

    def _h_oauth_authorize(self, p: _Principal, q: dict[str, str], body: Any) -> _Response:
        client = q.get("client_id", "")
        uri = q.get("redirect_uri", "")
        if client not in self._oauth_apps or not uri:
            return _Response(404, b"<html><body>Not Found</body></html>")
        sep = "&" if "?" in uri else "?"
        if self._oauth_login is None:  # nobody signs in: GitHub shows its login page
            return _Response(200, b"<html><body>Sign in to GitHub</body></html>")
        code = secrets.token_hex(10)
        self._oauth_codes[code] = (client, uri, self._oauth_login, time.time() + 600)
        query = urllib.parse.urlencode({"code": code, "state": q.get("state", "")})
        return _Response(302, None, {"Location": f"{uri}{sep}{query}"})

    def _h_oauth_token(self, p: _Principal, q: dict[str, str], body: Any) -> _Response:
        form = body if isinstance(body, dict) else {}
        client = str(form.get("client_id", ""))
        if self._oauth_apps.get(client) is None or \
                self._oauth_apps[client] != str(form.get("client_secret", "")):
            return _Response(200, {"error": "incorrect_client_credentials",
                                   "error_description": "The client_id and/or client_secret "
                                                        "passed are incorrect.",
                                   "error_uri": _DOCS})
        pending = self._oauth_codes.pop(str(form.get("code", "")), None)
        if (pending is None or pending[0] != client or pending[3] < time.time()
                or (form.get("redirect_uri") and form.get("redirect_uri") != pending[1])):
            return _Response(200, {"error": "bad_verification_code",
                                   "error_description": "The code passed is incorrect or "
                                                        "expired.",
                                   "error_uri": _DOCS})
        token = "gho_" + secrets.token_hex(18)
        self._tokens[token] = pending[2]
        return _Response(200, {"access_token": token, "token_type": "bearer",
                               "scope": "read:org"})


class _Handler(BaseHTTPRequestHandler):
    owner: FakeGitHub
    protocol_version = "HTTP/1.1"
    server_version = "FakeGitHub/1.0"

    def setup(self) -> None:
        super().setup()
        with self.owner._lock:
            self.owner._conns.add(self.connection)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        with self.owner._lock:
            self.owner._conns.discard(self.connection)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        resp, delay = self.owner.handle(self.command, self.path, headers, raw)
        if delay:
            time.sleep(delay)
        if not self.owner.running:
            self.close_connection = True
            return
        if isinstance(resp.body, bytes):  # raw answer, e.g. a proxy's HTML error page
            data, ctype = resp.body, "text/html; charset=utf-8"
        else:
            data = b"" if resp.body is None else json.dumps(resp.body).encode()
            ctype = "application/json; charset=utf-8"
        self.send_response(resp.status)
        if data:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-GitHub-Media-Type", "github.v3; format=json")
        self.send_header("X-GitHub-Request-Id", secrets.token_hex(8).upper())
        for k, v in resp.headers.items():
            self.send_header(k, v)
        self.end_headers()
        if data and self.command != "HEAD":
            self.wfile.write(data)

    do_GET = _serve
    do_POST = _serve
    do_PATCH = _serve
    do_PUT = _serve
    do_DELETE = _serve
