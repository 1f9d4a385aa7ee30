"""The GitHub App manifest for the bot (``reprobot app manifest``): pure functions, no I/O.

GitHub's manifest flow registers an App from this JSON: the maintainer posts it from a browser
(``manifest_form`` makes the page), GitHub creates the App and redirects back with a code, and
``POST /app-manifests/{code}/conversions`` returns the App id, its private key and the webhook
secret (see README, "Create the GitHub App").
"""

from __future__ import annotations

import html
import json
import urllib.parse
from typing import Any

from bot import lazyre
from bot.errors import ConfigError

# What the bot needs and nothing more: read issues' metadata, write comments and labels.
PERMISSIONS = {"issues": "write", "metadata": "read"}
# The webhook events the receiver routes (bot/events.py): new/edited/labelled issues, /retest.
EVENTS = ("issues", "issue_comment")
WEBHOOK_PATH = "/webhook"
DEFAULT_NAME = "reprobot"
GITHUB_WEB = "https://github.com"

_NAME = lazyre.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,33}$")
_ORG = lazyre.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$")


def base_url(url: str) -> str:
    """The bot's public base URL, checked: http(s), a host, no query or fragment; no final /."""
    text = url.strip()
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ConfigError(
            f"--url must be the bot's public address, like https://bot.example.org (got {url!r})"
        )
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ConfigError(f"--url must have no query, fragment or credentials (got {url!r})")
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))


def manifest(url: str, *, name: str = DEFAULT_NAME, public: bool = False) -> dict[str, Any]:
    """The App manifest JSON for a bot served at ``url`` (webhook at ``url``/webhook)."""
    base = base_url(url)
    if not _NAME.match(name):
        raise ConfigError(
            f"--name must be 1-34 letters, digits, spaces, '.', '_' or '-' (got {name!r})"
        )
    return {
        "name": name,
        "url": base + "/",
        "description": "Triages Apache TVM bug reports by running their repro scripts.",
        "hook_attributes": {"url": base + WEBHOOK_PATH, "active": True},
        # GitHub sends the browser back here with ?code=...; the code is what you convert.
        "redirect_url": base + "/",
        "public": public,
        "default_permissions": dict(PERMISSIONS),
        "default_events": list(EVENTS),
    }


def registration_url(org: str = "", *, github: str = GITHUB_WEB) -> str:
    """Where the manifest is posted: the user's or an organization's 'new App' page."""
    if org:
        if not _ORG.match(org):
            raise ConfigError(f"--org must be a GitHub organization name (got {org!r})")
        return f"{github}/organizations/{org}/settings/apps/new"
    return f"{github}/settings/apps/new"


def manifest_form(data: dict[str, Any], org: str = "") -> str:
    """A one-button HTML page that posts the manifest to GitHub (open it in a browser)."""
    action = html.escape(registration_url(org), quote=True)
    value = html.escape(json.dumps(data, indent=2), quote=True)
    name = html.escape(str(data.get("name", DEFAULT_NAME)))
    return (
        "<!doctype html>\n<meta charset=\"utf-8\">\n"
        f"<title>Create the {name} GitHub App</title>\n"
        f"<form action=\"{action}\" method=\"post\">\n"
        f"<textarea name=\"manifest\" rows=\"24\" cols=\"80\">{value}</textarea><br>\n"
        f"<button type=\"submit\">Create the {name} GitHub App on GitHub</button>\n"
        "</form>\n"
    )
