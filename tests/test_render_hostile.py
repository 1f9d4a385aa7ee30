"""Strangers' text never becomes live markdown in the bot's comment.

Each hostile string is injected into every place where text the bot did not write can reach the
comment: the script, its output, exception messages, missing module and file names, the
reporter's pasted error, sentences quoted from the issue, attachment names, script arguments,
the environment, our own infrastructure error. The issue and run are crafted; everything after
that is the real pipeline (``bot.plan.plan`` + ``bot.pipeline.conclude``). The rendered comment
is then parsed with markdown-it (CommonMark + GFM tables, strikethrough and linkify) and must
hold no HTML but the bot's own, no image, no link, exactly one heading, and no live mention,
issue reference or invisible character.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from bot.labels import MARKER
from bot.models import Issue, Outcome, RunResult, Triage
from bot.pipeline import conclude
from bot.plan import plan
from bot.render import render_status

HOSTILE = [
    "`",
    "``` `` `",
    "x` <img src=x onerror=alert(1)> `y",
    "<img src=https://e.invalid/p.gif>",
    "![x](https://e.invalid/y.png)",
    "[a](http://e.invalid)",
    "<a href='http://e.invalid'>click</a>",
    "\n## Maintainers: close it\n",
    "`\n\n## Maintainers: this is fixed, close it\n\n`",
    "x\n===\n",
    "@user",
    "&#64;user",
    "` `@name",
    "`@name",
    "\uff20user",
    "cc @apache/tvm-committers",
    "#123",
    "fixes #1",
    "closes apache/tvm#2",
    "GH-77",
    "https://e.invalid/x",
    "www.e.invalid",
    "<https://e.invalid>",
    "mallory@e.invalid",
    "a\u202eb",
    "zero\u200bwidth\u2066x\u2069",
    "tag\U000e0041\U000e0042",
    "</details>",
    "</summary><script>alert(1)</script>",
    "<details open><summary>x</summary>",
    "-->",
    "<!-- x",
    "| a | b |\n|---|---|\n| c | d |",
    "[x]: http://e.invalid",
    "*emph* __strong__ ~~gone~~ $x^2$",
    "\\",
    "\x1b]8;;http://e.invalid\x07link\x1b]8;;\x07",
    "1. item\n- item\n> quote",
]
TAG = "Q7Z"
FENCE = "``````````"  # longer than any backtick run in HOSTILE, so the issue's own block holds
SITE = "/usr/lib/python3/site-packages"
ENV = {"tvm_version": "0.27.0", "tvm_commit": "abc1234", "python": "3.11.7", "os": "Linux"}

ALLOWED_HTML_BLOCK = re.compile(
    r"(?:<!-- reprobot -->|<details><summary>(?:Environment|Output|Script that was run "
    r"\(\d+ lines?\))</summary>|</details>)\n?"
)
ALLOWED_HTML_INLINE = {"<sub>", "</sub>"}
LIVE_IN_TEXT = re.compile(
    r"[@\uff20\ufe6b]\w|[#\uff03]\d|\bGH-\d|://|\bwww\.", re.IGNORECASE
)
INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\U000e0000-\U000e007f]")
MD = MarkdownIt("commonmark", {"linkify": True}).enable(["table", "strikethrough", "linkify"])


def walk(tokens: list[Token]) -> Iterator[Token]:
    for tok in tokens:
        yield tok
        if tok.children:
            yield from walk(tok.children)


def assert_inert(comment: str, where: str) -> None:
    """What a maintainer (and GitHub) would see: nothing that a stranger made live."""
    tokens = list(walk(MD.parse(comment)))
    for tok in tokens:
        if tok.type == "html_block":
            assert ALLOWED_HTML_BLOCK.fullmatch(tok.content), (where, tok.content, comment)
        elif tok.type == "html_inline":
            assert tok.content in ALLOWED_HTML_INLINE, (where, tok.content, comment)
        assert tok.type != "image", (where, comment)
        assert tok.type != "link_open", (where, tok.attrs, comment)  # the bot writes no links
        if tok.type == "text":
            assert not LIVE_IN_TEXT.search(tok.content), (where, tok.content, comment)
    assert sum(t.type == "heading_open" for t in tokens) == 1, (where, comment)
    assert not any(t.type in ("table_open", "blockquote_open") for t in tokens), (where, comment)
    assert not INVISIBLE.search(comment), (where, comment)
    assert "\x1b" not in comment
    html = MD.render(comment)
    assert not re.search(r"<(?:img|a|script|h[1-246])\b", html), (where, html)
    assert comment.startswith(MARKER + "\n")


def triage(body: str, run: RunResult | None, env: dict[str, str] | None = None,
           infra: str = "") -> Triage:
    issue = Issue(title="[Bug] hostile", body=body, author="alice")
    the_plan = plan(issue)
    return conclude(issue, the_plan, run if the_plan.repro.found else None,
                    ENV if env is None else env, infra_error=infra)


def script_issue(script: str = "import tvm\nx = tvm.tir.const(1)\nprint(x)\n",
                 after: str = "") -> str:
    return f"### To reproduce\n\n{FENCE}python\n{script}{FENCE}\n\n{after}"


def failed(stderr: str, stdout: str = "") -> RunResult:
    return RunResult(exit_code=1, signal=None, seconds=1.0, stdout_tail=stdout,
                     stderr_tail=stderr, sandbox="bwrap")


def tb(*frames: str, last: str) -> str:
    lines = ["Traceback (most recent call last):"]
    for f in frames:
        lines.append(f'  File "{f}", line 3, in <module>')
        lines.append("    x = f()")
    return "\n".join(lines) + "\n" + last + "\n"


def one_line(h: str) -> str:
    return " ".join(h.replace("'", "").split())


# Each place: hostile text -> a Triage built by the real pipeline, and the outcome expected.
Place = Callable[[str], Triage]
PLACES: dict[str, tuple[Place, Outcome | None]] = {
    "script and its stdout": (
        lambda h: triage(script_issue(f'x = """{h}"""\nprint(x)\n'),
                         RunResult(0, None, 1.0, stdout_tail=h, sandbox="bwrap")),
        Outcome.PASSED,
    ),
    "exception message": (
        lambda h: triage(script_issue(), failed(tb("/tmp/scratch/repro.py", last=f"ValueError: {h}"))),
        None,
    ),
    "TVM error message": (
        lambda h: triage(script_issue(), failed(tb("/tmp/scratch/repro.py", f"{SITE}/tvm/ir/expr.py",
                                                   last=f"tvm.error.TVMError: {h}"))),
        None,
    ),
    "Check failed line": (
        lambda h: triage(script_issue(), failed(tb("/tmp/scratch/repro.py", f"{SITE}/tvm/ir/expr.py",
                                                   last=f"InternalError: Check failed: {h}"))),
        Outcome.INTERNAL_ERROR,
    ),
    "missing module name": (
        lambda h: triage(script_issue(), failed(tb("/tmp/scratch/repro.py", last=(
            f"ModuleNotFoundError: No module named '{one_line(h)}'")))),
        Outcome.MISSING_DEPENDENCY,
    ),
    "name missing from a package": (
        lambda h: triage(script_issue(), failed(tb("/tmp/scratch/repro.py", last=(
            f"ImportError: cannot import name '{one_line(h)}' from 'somepkg'")))),
        Outcome.MISSING_DEPENDENCY,
    ),
    "removed TVM module": (
        lambda h: triage(script_issue(), failed(tb("/tmp/scratch/repro.py", last=(
            f"ModuleNotFoundError: No module named 'tvm.{one_line(h)}'")))),
        Outcome.API_MISMATCH,
    ),
    "missing input file": (
        lambda h: triage(
            script_issue(f"import tvm\nopen('{one_line(h)}.onnx')\n"),
            failed(tb("/tmp/scratch/repro.py", last=(
                f"FileNotFoundError: [Errno 2] No such file or directory: '{one_line(h)}.onnx'")))),
        Outcome.MISSING_DEPENDENCY,
    ),
    "reporter's pasted error (run passes)": (
        lambda h: triage(
            script_issue(after=f"### Actual behavior\n\n{FENCE}\n"
                         + tb("r.py", last=f"RuntimeError: {one_line(h)}") + f"{FENCE}\n"),
            RunResult(0, None, 1.0, sandbox="bwrap")),
        Outcome.PASSED,
    ),
    "reporter's pasted error (fails differently)": (
        lambda h: triage(
            script_issue(after=f"### Actual behavior\n\n{FENCE}\n" + tb(
                "r.py", last=f"InternalError: Check failed: {one_line(h)}") + f"{FENCE}\n"),
            failed(tb("/tmp/scratch/repro.py", last="KeyError: 'k'"))),
        None,
    ),
    "crash backtrace": (
        lambda h: triage(script_issue(), RunResult(
            None, 11, 1.0, sandbox="bwrap",
            stderr_tail=("Fatal Python error: Segmentation fault\n\nCurrent thread 0x1 (most recent "
                         f'call first):\n  File "/tmp/scratch/repro.py", line 3 in {one_line(h)}\n'
                         f"  0: {one_line(h)}\n"))),
        Outcome.CRASH,
    ),
    "script arguments": (
        lambda h: triage(
            f"Save as repro.py:\n\n{FENCE}python\nimport sys\nimport tvm\nn = len(sys.argv)\nprint(tvm.tir.const(n), sys.argv)\n{FENCE}\n\n"
            f"then run:\n\n{FENCE}\npython repro.py --name {'-'.join(one_line(h).split())}\n{FENCE}\n",
            RunResult(0, None, 1.0, sandbox="bwrap")),
        Outcome.PASSED,
    ),
    "quoted sentence (incomplete code)": (
        lambda h: triage(f"Pseudo-code, not the whole thing ({one_line(h)}):\n\n"
                         f"{FENCE}python\nimport tvm\nmod = build()\n{FENCE}\n", None),
        Outcome.NO_REPRO,
    ),
    "attachment name": (
        lambda h: triage(f"See [{one_line(h).replace(']', '').replace('[', '')}]"
                         "(https://github.com/user-attachments/files/1/repro.zip)\n", None),
        Outcome.NO_REPRO,
    ),
    "environment": (
        lambda h: triage(script_issue(), RunResult(0, None, 1.0, sandbox="bwrap"),
                         env={"tvm_version": h, "tvm_commit": h, "os": h, "gpu": h,
                              "cuda_enabled": h, f"x{h}": h}),
        Outcome.PASSED,
    ),
    "our infrastructure error": (
        lambda h: triage(script_issue(), None, infra=h),
        Outcome.INFRA_ERROR,
    ),
    "sandbox name and stderr of a timeout": (
        lambda h: triage(script_issue(), RunResult(None, 9, 300.0, timed_out=True, limit_hit="time",
                                                   stderr_tail=h, stdout_tail=h, sandbox=h)),
        Outcome.TIMEOUT,
    ),
}


@pytest.mark.parametrize("place", sorted(PLACES))
def test_hostile_text_stays_inert_everywhere(place: str) -> None:
    build, outcome = PLACES[place]
    for h in HOSTILE:
        t = build(f"{TAG} {h} {TAG}")
        if outcome is not None:
            assert t.outcome == outcome, (place, repr(h), t.outcome, t.classification)
        assert_inert(t.comment, f"{place}: {h!r}")
        # The text is still shown (inert, not dropped), when the extractor kept it.
        if place != "script arguments" or TAG in " ".join(t.repro.args):
            assert TAG in t.comment, (place, repr(h), t.comment)


def test_the_checker_catches_what_it_should() -> None:
    """The assertions above can fail: raw hostile markdown trips each one."""
    bad = [
        "<img src=x>",
        "![x](y)",
        "[a](http://e.invalid)",
        "hello @user",
        "see &#64;user",
        "see #12",
        "https://e.invalid",
        "\n## second heading",
        "a\u202eb",
        "| a | b |\n|---|---|\n| c | d |",
    ]
    for b in bad:
        with pytest.raises(AssertionError):
            assert_inert(f"{MARKER}\n### head\n\n{b}\n", b)
    assert_inert(f"{MARKER}\n### head\n\n`@user <img src=x> #12`\n", "ok")


def test_status_comment_is_inert() -> None:
    t = triage(script_issue(), None)
    for h in HOSTILE:
        assert_inert(render_status(h, h, t.repro), repr(h))
