"""bot.pages: the dashboard's HTML escapes everything from outside."""

from __future__ import annotations

import pytest

from bot.dashboard import Filters, Run, build_grid
from bot.pages import render_grid, render_issue, render_markdown, render_run, render_views

EVIL = '<img src=x onerror="alert(1)">'


@pytest.mark.parametrize("text,must,must_not", [
    ("**bold**", "<strong>bold</strong>", None),
    ("<script>alert(1)</script>", "&lt;script&gt;", "<script>"),
    ("<b>raw</b> html", "&lt;b&gt;raw&lt;/b&gt;", "<b>"),
    ("[x](javascript:alert(1))", None, 'href="javascript:'),
    ("<!-- reprobot -->\n| a | b |\n|---|---|\n| 1 | 2 |", "<td>1</td>", "reprobot"),
    ("a <!-- x\ny --> b <!-- <script>", "a  b &lt;!-- &lt;script&gt;", "<script>"),
    ("```\n" + EVIL + "\n```", "&lt;img", "<img"),
])
def test_markdown_without_raw_html(text: str, must: str | None, must_not: str | None):
    out = render_markdown(text)
    if must:
        assert must in out
    if must_not:
        assert must_not not in out


def _evil_issue() -> dict:
    row = {"build": EVIL, "kind": "source", "commit": "a" * 40, "outcome": EVIL,
           "verdict": "reproduced", "finished": 1.0, "labels": [EVIL],
           "title": EVIL, "url": "javascript:alert(1)"}
    return {"repo": "o/r", "number": 1, "latest": row, "history": [row]}


def test_grid_escapes_titles_labels_builds_and_refuses_script_urls():
    grid = build_grid([_evil_issue()], filters=Filters(label=EVIL))
    html = render_grid(grid) + render_views(grid)
    assert "<img" not in html and "&lt;img src=x" in html
    assert 'href="javascript:' not in html
    assert len(grid.rows) == 1  # the label filter matched the raw label


def test_issue_and_run_pages_escape():
    issue = _evil_issue()
    run = Run(build=EVIL, kind="source", commit="a" * 40, outcome=EVIL, verdict="reproduced")
    html = render_issue(issue, [run], script=EVIL + "\nprint('</pre>')", comment=EVIL)
    assert "<img" not in html and "&lt;/pre&gt;" in html
    out = render_run(issue, run, {"run": {"exit_code": 1, "stderr_tail": EVIL,
                                          "stdout_tail": "</pre><script>x</script>",
                                          "seconds": 1.0},
                                  "environment": {EVIL: EVIL}}, issue["latest"])
    assert "<img" not in out and "<script>" not in out and "&lt;/pre&gt;" in out
    assert "No output stored" in render_run(issue, run, None, {"infra_error": EVIL})
    assert "<img" not in render_run(issue, run, None, {"infra_error": EVIL})
