"""bot.mdsafe: the primitives every stranger's string goes through, checked with markdown-it."""

from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from bot.mdsafe import code_block, code_span, escape_text, prose, visible

MD = MarkdownIt("commonmark", {"linkify": True}).enable(["table", "strikethrough", "linkify"])


def inline_tokens(md: str) -> list[tuple[str, str]]:
    tokens = MD.parse(md)
    out: list[tuple[str, str]] = []
    for tok in tokens:
        if tok.type == "inline" and tok.children:
            out += [(c.type, c.content) for c in tok.children]
        elif tok.type not in ("paragraph_open", "paragraph_close"):
            out.append((tok.type, tok.content))
    return out


@pytest.mark.parametrize(
    "text",
    ["plain", "a `b` c", "`", "``", "x`", "`x", "a ``` b", "` `", "<img src=x>", "@user #1",
     "ends with \\", "| pipe |"],
)
def test_code_span_is_one_code_span_holding_the_text(text: str) -> None:
    assert inline_tokens(code_span(text)) == [("code_inline", text.strip() or text)]


def test_code_span_flattens_and_limits() -> None:
    assert code_span("a\n\n## b") == "`a ## b`"
    assert code_span("x" * 500, limit=10) == "`" + "x" * 9 + "…`"
    assert code_span("   ") == ""


@pytest.mark.parametrize(
    "text", ["print('```')\n", "````\n# h\n</details>\n", "", "a\n```\n````\nb"]
)
def test_code_block_holds_the_text_whatever_it_contains(text: str) -> None:
    tokens = MD.parse(code_block(text, "text") + "\n\nafter\n")
    assert tokens[0].type == "fence" and tokens[0].content == text + (
        "" if not text or text.endswith("\n") else "\n"
    )
    assert tokens[-2].type == "inline" and tokens[-2].content == "after"


def test_code_block_refuses_a_language_it_did_not_choose() -> None:
    with pytest.raises(ValueError):
        code_block("x", "python\n<img>")


@pytest.mark.parametrize(
    "text, shown",
    [
        ("a\u202eb", "a<U+202E>b"),
        ("zero\u200bwidth", "zero<U+200B>width"),
        ("x\u2066y\u2069", "x<U+2066>y<U+2069>"),
        ("tag\U000e0041", "tag<U+E0041>"),
        ("\x1b[31mred\x1b[0m\x07", "red"),
        ("10%\r50%\r100%\nnext", "100%\nnext"),
    ],
)
def test_visible_spells_out_what_cannot_be_seen(text: str, shown: str) -> None:
    assert visible(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "<img src=x>", "![i](y)", "[a](http://e.invalid)", "*em* _em_ **b** ~~s~~", "# head",
        "- item", "1. item", "> quote", "===", "&#64;user &amp;", "`code`", "\\", "a | b",
        "[x]: http://e.invalid", "<!-- c -->", "</details>", "$math$",
    ],
)
def test_escape_text_renders_the_text_literally(text: str) -> None:
    md = escape_text(text)
    tokens = MD.parse(md)
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"], md
    children = tokens[1].children or []
    assert all(c.type in ("text", "code_inline") for c in children), (md, children)
    assert "".join(c.content for c in children) == text


@pytest.mark.parametrize(
    "word", ["@user", "\uff20user", "#12", "GH-7", "https://e.invalid", "www.e.invalid",
             "a@b.invalid", "owner/repo#3", "deadbeef12"]
)
def test_escape_text_sets_live_words_in_code(word: str) -> None:
    md = escape_text(f"see {word} now")
    assert f"`{word}`" in md
    assert [c.type for c in MD.parse(md)[1].children or []] == ["text", "code_inline", "text"]


def test_escape_text_leaves_ordinary_words_alone() -> None:
    assert escape_text("Debian GNU/Linux 12 (x86_64), 3.11.7") == (
        "Debian GNU/Linux 12 (x86_64), 3.11.7"
    )


@pytest.mark.parametrize(
    "text, spans",
    [
        ("`foo` is not installed on this worker.", ["foo"]),
        ("The installed `pkg` has no `a`b` (x).", ["pkg", "a"]),
        ("`x` <img src=x> `@y`", ["x", "@y"]),
        ("``a`b`` then `c`", ["a`b", "c"]),
        ("unclosed ` tick <b>", []),
    ],
)
def test_prose_keeps_quoted_names_as_code_and_escapes_the_rest(text: str,
                                                                spans: list[str]) -> None:
    md = prose(text)
    children = MD.parse(md)[1].children or []
    assert all(c.type in ("text", "code_inline") for c in children), (md, children)
    assert [c.content for c in children if c.type == "code_inline"] == spans
