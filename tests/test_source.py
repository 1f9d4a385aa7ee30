import json

import pytest

from bot.source import SourceError, issue_from_text


def test_markdown_heading_is_title_and_removed_from_body():
    issue = issue_from_text("# [Bug] crash in Foo\n\nSome text.\n\n```python\nimport tvm\n```\n", "x.md")
    assert issue.title == "[Bug] crash in Foo"
    assert issue.body.startswith("Some text.")
    assert "```python" in issue.body


def test_markdown_without_heading_keeps_body():
    issue = issue_from_text("No heading here\n", "x.md")
    assert issue.title == ""
    assert issue.body == "No heading here\n"


def test_hash_inside_code_is_not_a_heading():
    text = "```python\n# not a title\nimport tvm\n```\n"
    issue = issue_from_text(text, "x.md")
    assert issue.title == ""
    assert "# not a title" in issue.body


def test_json_issue_with_comments():
    data = {
        "number": 7,
        "title": "[Bug] x",
        "body": "b",
        "user": {"login": "alice"},
        "labels": [{"name": "type: bug"}],
        "comments": [{"user": {"login": "bob"}, "body": "hi"}],
    }
    issue = issue_from_text(json.dumps(data), "issue.json")
    assert (issue.number, issue.title, issue.author) == (7, "[Bug] x", "alice")
    assert issue.labels == ("type: bug",)
    assert issue.comments[0].author == "bob"


def test_json_on_stdin_and_webhook_payload():
    payload = {"action": "opened", "issue": {"title": "t", "body": "b", "user": {"login": "u"}},
               "repository": {"full_name": "o/r"}}
    issue = issue_from_text(json.dumps(payload), "-")
    assert issue.repo == "o/r" and issue.title == "t"


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"foo": 1}'])
def test_bad_json_is_a_clear_error(text: str):
    with pytest.raises(SourceError):
        issue_from_text(text, "issue.json")
