"""Webhook events -> decisions. One handler per event, composed in one router; all pure.

The receiver calls :func:`route` with the event name and the parsed payload and gets back a
:class:`Decision`: answer ``ping``, ``ignore`` (with a reason, answered 202), or ``triage`` (with
the arguments of the ``triage`` task). Nothing here does I/O: fetching the issue, reacting to a
command and checking the commenter's permission happen in the triage task, so the receiver
answers in milliseconds.

Decisions taken here:
- ``issues``: ``opened`` / ``reopened`` triage; ``edited`` triages again only when the body or
  title changed, and the triage task then skips unless the extracted script's sha256 differs
  from the stored one (extraction sees the comments too, which the payload lacks);
  ``labeled`` with a label that selects issues triages once (same "unchanged script" rule).
- ``issue_comment`` ``created`` with a ``/retest`` command (bot.commands) asks for a retest; the
  author / permission check, the reaction and the cooldown are the triage task's.
- Pull requests (and comments on them) are not issues here. Comments by the bot itself (its
  login, a ``Bot`` account, or a body with the bot's marker) never trigger anything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot import lazyre
from bot.config import Config, FilterConfig

PING = "ping"
IGNORE = "ignore"
TRIAGE = "triage"

# Reasons a triage task is asked for (stored with the job; shown on the dashboard).
REASON_OPENED = "opened"
REASON_REOPENED = "reopened"
REASON_EDITED = "edited"
REASON_LABELED = "labeled"
REASON_RETEST = "retest"
REASON_CLOSED = "closed"  # the issue leaves the re-test set (nothing is run)

# Reasons whose triage is skipped when the script did not change since the last result.
ONLY_IF_CHANGED = frozenset({REASON_EDITED, REASON_LABELED})



@dataclass(frozen=True)
class Decision:
    action: str  # ping | ignore | triage
    reason: str
    task: dict[str, Any] = field(default_factory=dict)  # kwargs of the triage task
    hook_id: int | None = None


def ignore(reason: str) -> Decision:
    return Decision(IGNORE, reason)


# GitHub's issue numbers are positive 32-bit integers; anything else is a malformed payload.
MAX_ISSUE_NUMBER = 2**31 - 1
_REPO_NAME = lazyre.compile(r"[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}")


def _int(value: Any) -> int | None:
    """A JSON integer (not a boolean, not a float) in GitHub's id range, else None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 < value <= 2**63 - 1 else None


def _repo(payload: Mapping[str, Any]) -> str:
    repo = payload.get("repository")
    name = repo.get("full_name") if isinstance(repo, dict) else None
    return name if isinstance(name, str) and _REPO_NAME.fullmatch(name) else ""


def _str(value: Any) -> str:
    """A JSON string, else '' (a number, list or object where text belongs is no text)."""
    return value if isinstance(value, str) else ""


def _login(user: Any) -> str:
    return _str(user.get("login")) if isinstance(user, dict) else ""


def _labels(issue: Mapping[str, Any]) -> tuple[str, ...]:
    out = []
    labels = issue.get("labels")
    for lb in labels if isinstance(labels, list) else []:
        name = lb.get("name") if isinstance(lb, dict) else lb
        if isinstance(name, str):
            out.append(name)
    return tuple(out)


def repo_served(repo: str, filters: FilterConfig) -> bool:
    if not filters.repositories:
        return True
    return repo.lower() in {r.lower() for r in filters.repositories}


def issue_selected(issue: Mapping[str, Any], filters: FilterConfig) -> bool:
    """An issue is triaged when it has one of the labels OR its title starts with a prefix.

    With neither configured, every issue is.
    """
    if not filters.labels and not filters.title_prefixes:
        return True
    wanted = {x.lower() for x in filters.labels}
    if any(lb.lower() in wanted for lb in _labels(issue)):
        return True
    raw_title = issue.get("title")
    title = raw_title.lstrip() if isinstance(raw_title, str) else ""
    return any(title.lower().startswith(p.lower()) for p in filters.title_prefixes if p)


def is_bot_comment(comment: Mapping[str, Any], bot_login: str) -> bool:
    """Written by this bot (its login) or by another bot account; never decided by the body:
    anyone can paste the bot's marker into a comment of their own."""
    user = comment.get("user")
    login = _login(user)
    if bot_login and login.lower() == bot_login.lower():
        return True
    return isinstance(user, dict) and str(user.get("type") or "") == "Bot"


def _common(payload: Mapping[str, Any], cfg: Config) -> tuple[str, Mapping[str, Any]] | Decision:
    repo = _repo(payload)
    issue = payload.get("issue")
    if not repo or not isinstance(issue, dict):
        return ignore("payload has no repository or issue")
    number = _int(issue.get("number"))
    if number is None or number > MAX_ISSUE_NUMBER:
        return ignore("payload's issue.number is not a valid issue number")
    if not repo_served(repo, cfg.filters):
        return ignore(f"repository {repo} is not served")
    if issue.get("pull_request"):
        return ignore("pull requests are not triaged")
    return repo, issue


def handle_ping(payload: Mapping[str, Any], cfg: Config) -> Decision:
    return Decision(PING, "pong", hook_id=_int(payload.get("hook_id")))


def handle_issues(payload: Mapping[str, Any], cfg: Config) -> Decision:
    action = _str(payload.get("action"))
    common = _common(payload, cfg)
    if isinstance(common, Decision):
        return common
    repo, issue = common
    if action == REASON_CLOSED:
        if not issue_selected(issue, cfg.filters):
            return ignore("the issue does not match the configured labels or title prefixes")
        return Decision(TRIAGE, action, task={"repo": repo, "number": int(issue["number"]),
                                              "reason": action})
    if action not in (REASON_OPENED, REASON_REOPENED, REASON_EDITED, REASON_LABELED):
        return ignore(f"issues.{action} is not acted on")
    if _str(issue.get("state")) not in ("", "open"):
        return ignore("the issue is closed")
    if not issue_selected(issue, cfg.filters):
        return ignore("the issue does not match the configured labels or title prefixes")
    if action == REASON_EDITED:
        changes = payload.get("changes")
        if isinstance(changes, dict) and changes and not ({"body", "title"} & set(changes)):
            return ignore("neither the title nor the body changed")
    if action == REASON_LABELED:
        label = payload.get("label")
        name = _str(label.get("name")) if isinstance(label, dict) else ""
        if name.lower() not in {x.lower() for x in cfg.filters.labels}:
            return ignore(f"label {name!r} does not select issues")
    return Decision(TRIAGE, action, task={"repo": repo, "number": int(issue["number"]),
                                          "reason": action})


def handle_issue_comment(
    payload: Mapping[str, Any],
    cfg: Config,
    *,
    parse: Callable[[str], list[Any]] | None = None,
) -> Decision:
    action = _str(payload.get("action"))
    if action != "created":
        return ignore(f"issue_comment.{action} is not acted on")
    common = _common(payload, cfg)
    if isinstance(common, Decision):
        return common
    repo, issue = common
    comment = payload.get("comment")
    if not isinstance(comment, dict):
        return ignore("payload has no comment")
    if is_bot_comment(comment, cfg.service.bot_login):
        return ignore("the bot's own comment")
    body = _str(comment.get("body"))
    if parse is None:
        from bot.commands import parse_commands

        commands: list[Any] = parse_commands(body, bot_login=cfg.service.bot_login)
    else:
        commands = parse(body)
    retests = [c for c in commands if str(getattr(c, "name", "")) == "retest"]
    if not retests:
        return ignore("no command in the comment")
    comment_id = comment.get("id")
    task: dict[str, Any] = {
        "repo": repo,
        "number": int(issue["number"]),
        "reason": REASON_RETEST,
        "requested_by": _login(comment.get("user")),
        "comment_id": _int(comment_id),
    }
    from bot.commands import Command, retest_target

    first = retests[0]
    target = retest_target(first).to_arg() if isinstance(first, Command) else ""
    if target:  # "/retest all" or "/retest 0.26.0" (a plain /retest keeps the old task shape)
        task["target"] = target
    return Decision(TRIAGE, REASON_RETEST, task=task)


Handler = Callable[[Mapping[str, Any], Config], Decision]

ROUTER: dict[str, Handler] = {
    "ping": handle_ping,
    "issues": handle_issues,
    "issue_comment": handle_issue_comment,
}


def route(event: str, payload: Mapping[str, Any], cfg: Config) -> Decision:
    handler = ROUTER.get(event)
    if handler is None:
        return ignore(f"event {event!r} is not handled")
    return handler(payload, cfg)
