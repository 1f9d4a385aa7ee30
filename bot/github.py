"""The bot's one GitHub module: a thin client over PyGithub, with no policy.

It reads issues and comments, writes the bot's single comment (found again by its hidden marker
and edited, never duplicated), adds and removes only the bot's own labels, reacts, replies and
reads permissions. Authentication is a plain token or a GitHub App (app id + private key ->
an installation token per repository's installation, refreshed by PyGithub before it expires).

Every call is retried here, not inside PyGithub: rate limits wait for ``Retry-After`` or
``X-RateLimit-Reset``; 5xx answers and network errors back off exponentially; everything is
bounded by :class:`RetryPolicy`. A write whose answer was lost (a 502 after GitHub may already
have created the comment) is never blindly repeated: the comments are scanned again first.
Failures leave as :class:`GitHubError` subclasses (all :class:`bot.errors.InfraError`).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import requests
from github import Auth, Github, GithubException, GithubIntegration
from github.IssueComment import IssueComment
from github.Repository import Repository

from bot.config import GitHubConfig
from bot.errors import InfraError
from bot.models import Comment, Issue

T = TypeVar("T")
log = logging.getLogger(__name__)

ROLES = ("none", "read", "triage", "write", "maintain", "admin")
REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")
DEFAULT_LABEL_COLOR = "ededed"


class GitHubError(InfraError):
    """GitHub refused or failed a request (after retries where retrying made sense)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class GitHubUnavailable(GitHubError):
    """GitHub kept failing (5xx, network, timeouts) until the retry budget ran out."""


class GitHubRateLimited(GitHubUnavailable):
    """Rate limited for longer than the policy allows waiting; ``retry_at`` is epoch seconds."""

    def __init__(self, message: str, *, status: int | None, retry_at: float) -> None:
        super().__init__(message, status=status)
        self.retry_at = retry_at


class GitHubAuthError(GitHubError):
    """Bad credentials (401) or not allowed (403 that is not a rate limit)."""


class GitHubNotFound(GitHubError):
    """404: no such repository, issue, comment or label (or not visible to these credentials)."""


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5  # tries per call for 5xx answers and network errors
    backoff_s: float = 1.0  # first back-off; doubles each retry
    max_backoff_s: float = 30.0
    max_rate_wait_s: float = 900.0  # wait at most this long for one rate-limit reset
    max_total_wait_s: float = 1800.0  # all the sleeping one call may do
    secondary_wait_s: float = 60.0  # secondary limit without Retry-After (GitHub: >= 1 min)
    rate_margin_s: float = 1.0  # added to X-RateLimit-Reset (clock skew, whole seconds)
    timeout_s: int = 15  # per HTTP request (connect and read)
    request_interval_s: float = 0.0  # PyGithub's minimum pause between requests
    write_interval_s: float = 1.0  # ... and between writes (GitHub's advice against abuse limits)


# Fast settings for tests and one-shot tools: the same logic with small numbers.
FAST_POLICY = RetryPolicy(
    attempts=4, backoff_s=0.05, max_backoff_s=0.5, max_rate_wait_s=10.0, max_total_wait_s=20.0,
    secondary_wait_s=1.0, rate_margin_s=0.2, timeout_s=5, write_interval_s=0.0,
)


def _header(headers: Mapping[str, Any] | None, name: str) -> str | None:
    if not headers:
        return None
    for k, v in headers.items():
        if str(k).lower() == name.lower():
            return str(v)
    return None


def _next_cursor(link: str) -> str:
    """The ``cursor`` of the rel="next" page in a Link header, or ''."""
    import urllib.parse

    for part in link.split(","):
        url, _, rel = part.partition(";")
        if 'rel="next"' in rel:
            query = urllib.parse.urlsplit(url.strip().strip("<>")).query
            return dict(urllib.parse.parse_qsl(query)).get("cursor", "")
    return ""


def _message(e: GithubException) -> str:
    data = e.data
    if isinstance(data, dict) and data.get("message"):
        return str(data["message"])
    return str(data or e.message or "")


class GitHubClient:
    """One repository-agnostic client; repositories are given as "owner/name"."""

    def __init__(
        self,
        api_url: str = "https://api.github.com",
        *,
        token: str = "",
        app_id: str = "",
        private_key: str = "",
        bot_login: str = "",
        policy: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        user_agent: str = "reprobot",
    ) -> None:
        if not token and not (app_id and private_key):
            raise GitHubAuthError("no GitHub credentials: give a token, or an app id and key")
        self.api_url = api_url.rstrip("/")
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._clock = clock
        self._lock = threading.Lock()
        self._bot_login = bot_login or None
        self._login_checked = False
        p = self.policy
        common: dict[str, Any] = {
            "base_url": self.api_url,
            "timeout": p.timeout_s,
            "user_agent": user_agent,
            "retry": None,  # retried here, where a lost write is checked before repeating
            "seconds_between_requests": p.request_interval_s or None,
            "seconds_between_writes": p.write_interval_s or None,
            "lazy": True,  # no GET of a repository/issue just to reach its sub-resources
        }
        self._token_gh: Github | None = None
        self._integration: GithubIntegration | None = None
        self._installations: dict[str, int] = {}  # "owner/name" -> installation id
        self._inst_gh: dict[int, Github] = {}
        if token:
            self._token_gh = Github(auth=Auth.Token(token), per_page=100, **common)
        else:
            self._integration = GithubIntegration(
                auth=Auth.AppAuth(app_id, private_key), **common
            )

    @classmethod
    def from_config(
        cls,
        cfg: GitHubConfig,
        *,
        bot_login: str = "",
        policy: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> GitHubClient:
        """App credentials win over a token when both are configured."""
        use_app = bool(cfg.app_id and cfg.private_key)
        return cls(
            cfg.api_url,
            token="" if use_app else cfg.token,
            app_id=cfg.app_id if use_app else "",
            private_key=cfg.private_key if use_app else "",
            bot_login=bot_login,
            policy=policy,
            sleep=sleep,
            clock=clock,
        )

    def close(self) -> None:
        for gh in [self._token_gh, *self._inst_gh.values()]:
            if gh is not None:
                gh.close()
        if self._integration is not None:
            self._integration.close()

    # ------------------------------------------------------------------ reading
    def get_issue(self, repo: str, number: int) -> dict[str, Any]:
        """The issue as plain data (labels as names)."""

        def op() -> dict[str, Any]:
            d = self._repo(repo).get_issue(number).raw_data
            return {
                "number": d.get("number"),
                "title": d.get("title") or "",
                "body": d.get("body") or "",
                "user": {"login": (d.get("user") or {}).get("login", "")},
                "labels": [lb["name"] if isinstance(lb, dict) else str(lb)
                           for lb in d.get("labels") or []],
                "state": d.get("state"),
                "html_url": d.get("html_url") or "",
                "author_association": d.get("author_association") or "",
                "is_pull_request": bool(d.get("pull_request")),
            }

        return self._call(f"GET issue {repo}#{number}", op)

    def get_comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        """All comments, oldest first, as plain data."""
        return self._call(f"GET comments {repo}#{number}", lambda: self._comments(repo, number))

    def fetch_issue(self, repo: str, number: int, *, with_comments: bool = True) -> Issue:
        """The issue as the pipeline sees it; the bot's own comments are left out."""
        d = self.get_issue(repo, number)
        comments: tuple[Comment, ...] = ()
        if with_comments:
            me = self.bot_login()
            comments = tuple(
                Comment(author=c["user"]["login"], body=c["body"])
                for c in self.get_comments(repo, number)
                if c["user"]["login"] != me
            )
        return Issue(
            title=d["title"],
            body=d["body"],
            author=d["user"]["login"],
            labels=tuple(d["labels"]),
            comments=comments,
            number=d["number"],
            repo=repo,
            url=d["html_url"],
        )

    def permission(self, repo: str, user: str) -> str:
        """admin | maintain | write | triage | read | none (role_name when GitHub gives one)."""

        def op() -> str:
            gh = self._gh(repo)
            url = f"/repos/{repo}/collaborators/{urllib.parse.quote(user, safe='')}/permission"
            try:
                _, data = gh.requester.requestJsonAndCheck("GET", url)
            except GithubException as e:
                if e.status == 404:  # no such user: nobody to grant anything
                    return "none"
                raise
            role = str(data.get("role_name") or "")
            if role in ROLES:
                return role
            legacy = str(data.get("permission") or "none")
            return legacy if legacy in ROLES else "none"

        return self._call(f"GET permission {repo} {user}", op)

    def bot_login(self) -> str | None:
        """The login the bot writes as ("slug[bot]" for an app), asked of GitHub once.

        GitHub's answer wins over the configured ``bot_login`` (a wrong setting must not make
        the bot miss its own comment and post a second one); the setting is the fallback when
        the credentials cannot say who they are. None: unknown, match comments by marker only.
        """
        with self._lock:
            if self._login_checked:
                return self._bot_login

        def op() -> str:
            if self._integration is not None:
                return f"{self._integration.get_app().slug}[bot]"
            assert self._token_gh is not None
            return str(self._token_gh.get_user().login)

        try:
            login: str | None = self._call("GET bot login", op)
        except (GitHubAuthError, GitHubNotFound):
            login = None  # e.g. a token without user scope
        with self._lock:
            self._login_checked = True
            if login:
                self._bot_login = login
            return self._bot_login

    def _learn_login(self, login: str) -> None:
        """When the credentials could not say who they are, the author of the comment the bot
        just wrote can: later upserts then find (and edit) that comment."""
        with self._lock:
            if login and self._bot_login is None:
                self._bot_login = login

    # ------------------------------------------------------------------ writing
    def upsert_bot_comment(self, repo: str, number: int, body: str, marker: str) -> int:
        """Edit the bot's comment (first line ``marker``) or create it once; return its id."""
        if not body.startswith(marker):
            body = f"{marker}\n{body}"
        me = self.bot_login()

        def is_ours(c: dict[str, Any]) -> bool:
            # The marker AND the author: anyone can paste the marker into a comment, and a bot
            # with write access could edit it. With no known login, no comment is taken as ours.
            first = c["body"].lstrip().split("\n", 1)[0].strip()
            return first == marker.strip() and me is not None and _same_login(c, me)

        def just_posted(c: dict[str, Any]) -> bool:
            # After a lost answer: a new comment that is ours, or (login unknown) holds our body.
            return is_ours(c) or (me is None and c["body"] == body)

        existing = self.get_comments(repo, number)
        ours = [c for c in existing if is_ours(c)]
        if ours:
            try:
                return self._edit_comment(repo, ours[0], body)
            except GitHubNotFound:  # deleted meanwhile (by a maintainer): write a new one
                existing = [c for c in existing if c["id"] != ours[0]["id"]]
        return self._create_comment(
            repo, number, body, known={c["id"] for c in existing}, is_ours=just_posted
        )

    def reply(self, repo: str, number: int, body: str) -> int:
        """Post a short comment (once, even when an answer is lost); return its id."""
        me = self.bot_login()
        existing = self.get_comments(repo, number)

        def is_ours(c: dict[str, Any]) -> bool:
            return c["body"] == body and (me is None or _same_login(c, me))

        return self._create_comment(
            repo, number, body, known={c["id"] for c in existing}, is_ours=is_ours
        )

    def set_bot_labels(
        self,
        repo: str,
        number: int,
        labels: Sequence[str],
        *,
        is_own: Callable[[str], bool],
        specs: Mapping[str, tuple[str, str]] | None = None,
    ) -> list[str]:
        """Make the bot's labels on the issue exactly ``labels``; return the issue's labels.

        Missing labels are added (created in the repository first, with colour and description
        from ``specs``); labels for which ``is_own`` holds and that are not wanted are removed;
        every other label is left alone.
        """
        specs = specs or {}
        wanted: list[str] = []
        for name in labels:
            if name.lower() not in (w.lower() for w in wanted):
                wanted.append(name)
        current = self._call(
            f"GET labels {repo}#{number}",
            lambda: [lb.name for lb in self._repo(repo).get_issue(number).get_labels()],
        )
        have = {c.lower() for c in current}
        want = {w.lower() for w in wanted}
        to_add = [w for w in wanted if w.lower() not in have]
        to_remove = [c for c in current if is_own(c) and c.lower() not in want]
        for name in to_add:
            color, description = specs.get(name, (DEFAULT_LABEL_COLOR, ""))
            self._ensure_label(repo, name, color, description)
        if to_add:
            self._call(
                f"POST labels {repo}#{number}",
                lambda: self._repo(repo).get_issue(number).add_to_labels(*to_add),
            )
        for name in to_remove:
            self._call(
                f"DELETE label {name!r} {repo}#{number}",
                functools.partial(self._remove_label, repo, number, name),
            )
        result = [c for c in current if c not in to_remove] + to_add
        return result

    def react(self, repo: str, comment_id: int, content: str = "eyes") -> None:
        """React to a comment (GitHub keeps one reaction per user and kind: safe to repeat)."""
        if content not in REACTIONS:
            raise ValueError(f"unknown reaction {content!r}")
        self._call(
            f"POST reaction {repo} comment {comment_id}",
            lambda: self._comment_obj(repo, comment_id).create_reaction(content),
        )

    def react_issue(self, repo: str, number: int, content: str = "eyes") -> None:
        if content not in REACTIONS:
            raise ValueError(f"unknown reaction {content!r}")
        self._call(
            f"POST reaction {repo}#{number}",
            lambda: self._repo(repo).get_issue(number).create_reaction(content),
        )

    # ------------------------------------------------------------------ the App's webhook
    def hook_deliveries(self, *, max_pages: int = 10) -> list[dict[str, Any]]:
        """The App's recent webhook deliveries, newest first (needs GitHub App credentials)."""
        if self._integration is None:
            raise GitHubAuthError("listing webhook deliveries needs GitHub App credentials")
        req = self._integration.requester
        out: list[dict[str, Any]] = []
        params: dict[str, Any] = {"per_page": 100}
        for _ in range(max_pages):
            query = dict(params)

            def page(q: dict[str, Any] = query) -> tuple[dict[str, Any], Any]:
                return req.requestJsonAndCheck("GET", "/app/hook/deliveries", parameters=q)

            headers, data = self._call("list webhook deliveries", page)
            out.extend(x for x in (data or []) if isinstance(x, dict))
            cursor = _next_cursor(str(headers.get("link") or ""))
            if not cursor:
                break
            params["cursor"] = cursor
        return out

    def redeliver(self, delivery_id: int) -> None:
        """Ask GitHub to send a delivery again (it comes with the same X-GitHub-Delivery)."""
        if self._integration is None:
            raise GitHubAuthError("redelivering webhook deliveries needs GitHub App credentials")
        req = self._integration.requester
        self._call(
            f"redeliver webhook delivery {delivery_id}",
            lambda: req.requestJsonAndCheck(
                "POST", f"/app/hook/deliveries/{int(delivery_id)}/attempts"),
        )

    # ------------------------------------------------------------------ internals
    def _gh(self, repo: str) -> Github:
        if self._token_gh is not None:
            return self._token_gh
        assert self._integration is not None
        with self._lock:
            iid = self._installations.get(repo)
        if iid is None:
            owner, name = repo.split("/", 1)
            iid = int(self._integration.get_repo_installation(owner, name).id)
        with self._lock:
            self._installations[repo] = iid
            gh = self._inst_gh.get(iid)
            if gh is None:
                # AppInstallationAuth fetches the token on first use and again before expiry.
                gh = self._inst_gh[iid] = self._integration.get_github_for_installation(iid)
        return gh

    def _forget_installations(self) -> None:
        with self._lock:
            self._installations.clear()
            self._inst_gh.clear()

    def _repo(self, repo: str) -> Repository:
        if repo.count("/") != 1:
            raise ValueError(f"repository must be 'owner/name', not {repo!r}")
        return self._gh(repo).get_repo(repo)

    def _comment_obj(self, repo: str, comment_id: int) -> IssueComment:
        # Lazy: no request until used (PyGithub has no Repository.get_issue_comment).
        url = f"/repos/{repo}/issues/comments/{int(comment_id)}"
        return IssueComment(self._gh(repo).requester, url=url)

    def _comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        out = []
        for c in self._repo(repo).get_issue(number).get_comments():
            out.append(self._comment_dict(c))
        return out

    @staticmethod
    def _comment_dict(c: IssueComment) -> dict[str, Any]:
        return {
            "id": c.id,
            "user": {"login": c.user.login if c.user else "", "type": c.user.type if c.user else ""},
            "body": c.body or "",
            "created_at": c.created_at.isoformat() if c.created_at else "",
            "updated_at": c.updated_at.isoformat() if c.updated_at else "",
            "html_url": c.html_url,
        }

    def _edit_comment(self, repo: str, comment: dict[str, Any], body: str) -> int:
        cid = int(comment["id"])
        if comment["body"] == body:
            return cid  # nothing changed: no write

        def op() -> None:
            self._comment_obj(repo, cid).edit(body)

        self._call(f"PATCH comment {repo} {cid}", op)
        return cid

    def _create_comment(
        self,
        repo: str,
        number: int,
        body: str,
        *,
        known: set[int],
        is_ours: Callable[[dict[str, Any]], bool],
    ) -> int:
        """POST a comment; after a lost answer, look for it before posting again."""

        def post() -> int:
            made = self._repo(repo).get_issue(number).create_comment(body)
            self._learn_login(made.user.login if made.user else "")
            return int(made.id)

        def landed() -> int | None:
            for c in self._comments(repo, number):
                if c["id"] not in known and is_ours(c):
                    if c["body"] != body:
                        self._comment_obj(repo, c["id"]).edit(body)
                    return int(c["id"])
            return None

        return self._call(f"POST comment {repo}#{number}", post, check_landed=landed)

    def _ensure_label(self, repo: str, name: str, color: str, description: str) -> None:
        def op() -> None:
            r = self._repo(repo)
            try:
                r.get_label(name).complete()  # lazy object: complete() fetches it
                return
            except GithubException as e:
                if e.status != 404:
                    raise
            try:
                r.create_label(name, color.lstrip("#"), description[:100])
            except GithubException as e:
                # 422 already_exists: created meanwhile (or our lost answer): fine
                if e.status != 422 or "already_exists" not in str(e.data):
                    raise

        self._call(f"ensure label {name!r} in {repo}", op)

    def _remove_label(self, repo: str, number: int, name: str) -> None:
        try:
            self._repo(repo).get_issue(number).remove_from_labels(name)
        except GithubException as e:
            if e.status != 404:  # already gone: that is what we wanted
                raise

    def _rate_limit_wait(self, e: GithubException) -> float | None:
        """Seconds to wait when ``e`` is a rate limit; None when it is not one."""
        if e.status not in (403, 429):
            return None
        retry_after = _header(e.headers, "Retry-After")
        if retry_after is not None:
            try:
                return max(0.0, float(retry_after))
            except ValueError:
                return self.policy.secondary_wait_s
        remaining = _header(e.headers, "X-RateLimit-Remaining")
        reset = _header(e.headers, "X-RateLimit-Reset")
        if remaining == "0" and reset is not None:
            try:
                return max(0.0, float(reset) - self._clock()) + self.policy.rate_margin_s
            except ValueError:
                return self.policy.secondary_wait_s
        msg = _message(e).lower()
        if e.status == 429 or "rate limit" in msg:
            return self.policy.secondary_wait_s
        return None

    def _call(
        self,
        what: str,
        fn: Callable[[], T],
        *,
        check_landed: Callable[[], T | None] | None = None,
    ) -> T:
        """Run ``fn`` with the retry policy; map failures to GitHubError subclasses.

        ``check_landed`` (for non-idempotent writes) runs before a retry that follows an
        ambiguous failure (5xx, network): when it finds the write already done, its result is
        returned instead of writing again.
        """
        p = self.policy
        failures = 0
        limited = 0
        waited = 0.0
        ambiguous = False
        while True:
            try:
                if ambiguous and check_landed is not None:
                    found = check_landed()
                    if found is not None:
                        return found
                return fn()
            except GithubException as e:
                status = e.status
                wait = self._rate_limit_wait(e)
                if wait is not None:
                    limited += 1
                    if (wait > p.max_rate_wait_s or waited + wait > p.max_total_wait_s
                            or limited > p.attempts):
                        raise GitHubRateLimited(
                            f"{what}: rate limited by GitHub ({status}) for {wait:.0f}s more",
                            status=status, retry_at=self._clock() + wait,
                        ) from e
                    log.warning("%s: rate limited (%s), waiting %.1fs", what, status, wait)
                    self._sleep(wait)
                    waited += wait
                    continue  # a refused request changed nothing: not ambiguous
                if status is not None and 500 <= status < 600:
                    cause: Exception = e
                    detail = f"HTTP {status}"
                elif status == 401:
                    self._forget_installations()  # app: look installations up again
                    raise GitHubAuthError(
                        f"{what}: bad credentials (401): {_message(e)}", status=401
                    ) from e
                elif status == 403:
                    raise GitHubAuthError(
                        f"{what}: forbidden (403): {_message(e)}", status=403
                    ) from e
                elif status == 404:
                    raise GitHubNotFound(f"{what}: not found (404)", status=404) from e
                else:
                    raise GitHubError(
                        f"{what}: GitHub answered {status}: {_message(e)}", status=status
                    ) from e
            except (requests.exceptions.ConnectionError, requests.exceptions.Timeout,
                    requests.exceptions.ChunkedEncodingError) as e:
                cause, detail, status = e, f"{type(e).__name__}", None
            failures += 1
            ambiguous = True
            if failures >= p.attempts:
                raise GitHubUnavailable(
                    f"{what}: GitHub unavailable after {failures} tries ({detail})",
                    status=status,
                ) from cause
            delay = min(p.max_backoff_s, p.backoff_s * 2 ** (failures - 1))
            if waited + delay > p.max_total_wait_s:
                raise GitHubUnavailable(
                    f"{what}: GitHub unavailable ({detail}); gave up after {waited:.0f}s",
                    status=status,
                ) from cause
            log.warning("%s: %s (try %d of %d), retrying in %.1fs",
                        what, detail, failures, p.attempts, delay)
            self._sleep(delay)
            waited += delay


def _same_login(comment: dict[str, Any], login: str) -> bool:
    """GitHub logins are case-insensitive."""
    return str((comment.get("user") or {}).get("login") or "").lower() == login.lower()
