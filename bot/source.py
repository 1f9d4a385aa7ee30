"""Turn the text of a triage SOURCE (markdown issue body or GitHub issue JSON) into an Issue.

Pure: the CLI reads the file and passes its text here.
"""

from __future__ import annotations

import json
from typing import Any

from markdown_it import MarkdownIt

from bot.errors import ReprobotError
from bot.models import Issue


class SourceError(ReprobotError):
    """The SOURCE could not be understood; the message says what is wrong."""


def issue_from_text(text: str, name: str) -> Issue:
    """``name`` is the file name (``-`` for stdin): ``.json`` or JSON-looking text is an issue
    object, anything else is a markdown body whose first top-level heading is the title."""
    stripped = text.lstrip()
    if name.endswith(".json") or (name == "-" and stripped.startswith("{")):
        return issue_from_json(text, name)
    return issue_from_markdown(text)


def issue_from_json(text: str, name: str = "-") -> Issue:
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as e:
        raise SourceError(f"{name} is not valid JSON: {e}") from e
    if isinstance(data, dict) and isinstance(data.get("issue"), dict):
        # A whole webhook payload: take its issue (and repository name when present).
        repo = data.get("repository", {}).get("full_name", "") if isinstance(
            data.get("repository"), dict) else ""
        return Issue.from_github(data["issue"], repo=repo)
    if not isinstance(data, dict):
        raise SourceError(f"{name} must hold a JSON object (a GitHub issue), not {type(data).__name__}")
    if "body" not in data and "title" not in data:
        raise SourceError(f"{name} does not look like a GitHub issue: it has no 'title' or 'body'")
    return Issue.from_github(data)


def issue_from_markdown(text: str) -> Issue:
    md = MarkdownIt("commonmark")
    tokens = md.parse(text)
    lines = text.splitlines(keepends=True)
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.tag == "h1" and tok.map:
            title = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
            start, end = tok.map
            body = "".join(lines[:start] + lines[end:]).strip("\n")
            return Issue(title=title, body=body)
    return Issue(title="", body=text)
