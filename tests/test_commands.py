"""The command parser: what fires and what must not."""

from __future__ import annotations

import pytest

from bot.commands import Command, CommandName, parse_commands

RETEST = CommandName.RETEST

# (comment body, should it fire?)
TABLE: list[tuple[str, bool]] = [
    # fires
    ("/retest", True),
    ("/retest\n", True),
    ("  /retest", True),  # up to 3 spaces is still a paragraph
    ("/retest please", True),
    ("/retest\r\n", True),
    ("/Retest", True),  # phone keyboards capitalise
    ("/RETEST", True),
    ("Thanks for the fix!\n/retest", True),  # a later line of the paragraph
    ("Fixed in #123.\n\n/retest", True),
    ("line one  \n/retest", True),  # after a hard break
    ("/retest `--target=llvm`", True),
    ("/retest\n> quoted below", True),
    ("<details>\n\n/retest\n\n</details>", True),  # visible text inside <details>
    ("```\ncode\n```\n/retest", True),  # after a fence closes
    # does not fire
    ("Please /retest", False),  # mid-line
    ("please /retest this", False),
    ("/retesting", False),
    ("/retest-now", False),
    ("/retest_now", False),
    ("/retest.py", False),
    ("retest", False),
    ("//retest", False),
    ("```\n/retest\n```", False),  # fenced code
    ("~~~\n/retest\n~~~", False),
    ("```python\nx = 1\n/retest\n```", False),
    ("    /retest", False),  # indented code block
    ("\t/retest", False),
    ("`/retest`", False),  # inline code
    ("`/retest` is the command", False),
    ("> /retest", False),  # block quote
    (">/retest", False),
    ("> some text\n> /retest", False),
    ("> quote\n/retest", False),  # lazy continuation: still inside the quote
    ("<!-- /retest -->", False),  # HTML comment
    ("<!--\n/retest\n-->", False),
    ("text <!--\n/retest -->", False),  # inline HTML comment spanning lines
    ("- /retest", False),  # list item
    ("1. /retest", False),
    ("# /retest", False),  # heading
    ("\\/retest", False),  # escaped slash
    ("*/retest*", False),  # emphasis: not a plain command line
    ("[/retest](http://example.invalid)", False),
    ("", False),
    ("/rebuild", False),  # unknown command
]


@pytest.mark.parametrize("body,fires", TABLE, ids=[repr(b) for b, _ in TABLE])
def test_fire_table(body: str, fires: bool) -> None:
    cmds = parse_commands(body)
    assert bool(cmds) is fires, cmds
    if fires:
        assert cmds[0].name is RETEST


def test_arguments_are_the_rest_of_the_line() -> None:
    assert parse_commands("/retest please now") == [
        Command(RETEST, ("please", "now"), "/retest please now")
    ]
    assert parse_commands("/retest `--gpu`")[0].args == ("--gpu",)
    assert parse_commands("/retest\nthanks")[0].args == ()


def test_every_command_is_returned_in_order() -> None:
    cmds = parse_commands("/retest a\n\ntext\n/retest b\n\n> /retest c")
    assert [c.args for c in cmds] == [("a",), ("b",)]


def test_mention_of_this_bot_fires_and_of_another_does_not() -> None:
    assert parse_commands("@reprobot /retest", bot_login="reprobot[bot]")[0].name is RETEST
    assert parse_commands("@ReproBot /retest", bot_login="reprobot")
    assert parse_commands("@otherbot /retest", bot_login="reprobot") == []
    assert parse_commands("@reprobot /retest") == []  # the bot's name is unknown
    assert parse_commands("@reprobot please /retest", bot_login="reprobot") == []


def test_none_and_non_text_bodies() -> None:
    assert parse_commands(None) == []  # type: ignore[arg-type]
    assert parse_commands("\n\n\n") == []


# (comment body, expected target: "" default | "all" | build name)
TARGET_TABLE: list[tuple[str, str]] = [
    ("/retest", ""),
    ("/retest all", "all"),
    ("/retest ALL", "all"),
    ("/retest all.", "all"),
    ("/retest 0.26.0", "0.26.0"),
    ("/retest v0.26.0", "0.26.0"),
    ("/retest 0.27.0.post1", "0.27.0.post1"),
    ("/retest 0.27.0rc0", "0.27.0rc0"),
    ("/retest main", "main"),
    ("/retest main-cuda", "main-cuda"),
    ("/retest `0.26.0`", "0.26.0"),
    ("@reprobot /retest all", "all"),
    # default build: other words are not targets
    ("/retest please", ""),
    ("/retest please all", ""),
    ("/retest allow", ""),
    ("/retest 26", ""),
    ("/retest mainly", ""),
    ("/retest http://x/0.26.0", ""),
    ("/retest ../0.26.0", ""),
]


@pytest.mark.parametrize("body,target", TARGET_TABLE, ids=[b for b, _ in TARGET_TABLE])
def test_retest_target_table(body: str, target: str) -> None:
    from bot.commands import RetestTarget, retest_target

    cmds = parse_commands(body, bot_login="reprobot")
    assert cmds, body
    got = retest_target(cmds[0])
    assert got.to_arg() == target
    assert RetestTarget.from_arg(got.to_arg()) == got


@pytest.mark.parametrize("body", [
    "```\n/retest all\n```", "> /retest 0.26.0", "`/retest all`", "- /retest all",
    "please /retest all", "<!-- /retest all -->",
])
def test_retest_with_target_does_not_fire_where_retest_does_not(body: str) -> None:
    assert parse_commands(body) == []
