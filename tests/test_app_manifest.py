"""`reprobot app manifest`: the GitHub App manifest JSON and the HTML form that posts it."""

from __future__ import annotations

import html
import json
import re

import pytest

from bot.app_manifest import manifest, manifest_form
from bot.cli import main
from bot.errors import ConfigError


def test_cli_prints_the_manifest_github_expects(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["app", "manifest", "--url", "https://bot.example.org"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["name"] == "reprobot"
    assert data["url"] == "https://bot.example.org/"
    assert data["hook_attributes"] == {"url": "https://bot.example.org/webhook", "active": True}
    assert data["redirect_url"] == "https://bot.example.org/"
    assert data["default_events"] == ["issues", "issue_comment"]
    assert data["default_permissions"] == {"issues": "write", "metadata": "read"}
    assert data["public"] is False


@pytest.mark.parametrize(
    ("url", "webhook"),
    [
        ("https://bot.example.org/", "https://bot.example.org/webhook"),
        ("https://example.org/reprobot", "https://example.org/reprobot/webhook"),
        ("https://example.org:8443/", "https://example.org:8443/webhook"),
        ("  http://10.0.0.5:8000  ", "http://10.0.0.5:8000/webhook"),
    ],
)
def test_webhook_url_follows_the_base_url(url: str, webhook: str) -> None:
    assert manifest(url)["hook_attributes"]["url"] == webhook


@pytest.mark.parametrize(
    "url",
    ["", "bot.example.org", "ftp://bot.example.org", "https://", "https://h/?x=1",
     "https://h/#top", "https://user:pw@h/", "javascript:alert(1)"],
)
def test_bad_urls_are_refused_with_a_clear_error(url: str, capsys: pytest.CaptureFixture[str]
                                                 ) -> None:
    with pytest.raises(ConfigError, match="--url"):
        manifest(url)
    assert main(["app", "manifest", "--url", url]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "--url" in captured.err


@pytest.mark.parametrize("name", ["", " x", "a" * 40, "bot<script>", "bot\nname"])
def test_bad_names_are_refused(name: str) -> None:
    with pytest.raises(ConfigError, match="--name"):
        manifest("https://h", name=name)


def test_name_and_public_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["app", "manifest", "--url", "https://h", "--name", "tvm-repro bot",
                 "--public"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["name"] == "tvm-repro bot"
    assert data["public"] is True


def test_form_posts_the_same_manifest_to_github(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["app", "manifest", "--url", "https://h", "--form", "--org", "my-org"]) == 0
    page = capsys.readouterr().out
    action = re.search(r'<form action="([^"]+)" method="post">', page)
    assert action and action.group(1) == "https://github.com/organizations/my-org/settings/apps/new"
    field = re.search(r'<textarea name="manifest"[^>]*>(.*)</textarea>', page, re.S)
    assert field is not None
    assert json.loads(html.unescape(field.group(1))) == manifest("https://h")


def test_form_without_org_goes_to_the_users_page() -> None:
    page = manifest_form(manifest("https://h"))
    assert 'action="https://github.com/settings/apps/new"' in page


def test_form_escapes_what_it_embeds() -> None:
    page = manifest_form(manifest("https://h/a&b"))
    assert "https://h/a&b" not in page  # escaped as &amp;
    assert "https://h/a&amp;b/webhook" in page


def test_org_is_checked_and_only_goes_with_form(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["app", "manifest", "--url", "https://h", "--form", "--org", "a/b"]) == 2
    assert "--org" in capsys.readouterr().err
    assert main(["app", "manifest", "--url", "https://h", "--org", "my-org"]) == 2
    assert "--org goes with --form" in capsys.readouterr().err
