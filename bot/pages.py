"""The dashboard's HTML, from ``bot.dashboard``'s view models. Pure; every piece of text that
came from outside (titles, labels, build names, comments, scripts, output) is escaped, and the
bot's comment (markdown that quotes untrusted text) is rendered with raw HTML disabled.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping, Sequence
from typing import Any

from markdown_it import MarkdownIt

from bot import lazyre
from bot.dashboard import (
    VIEWS,
    Column,
    Grid,
    QueueRow,
    Run,
    SweepProgress,
    age_seconds,
    human_age,
    outcome_class,
    run_href,
)

e = html.escape

_CSS = """body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin-bottom:1.5em}td,th{border:1px solid #ccc;padding:3px 7px;
text-align:left;font-size:14px;vertical-align:top}th{background:#f4f4f4}.err{color:#b00}
code,pre{font-size:13px}pre{white-space:pre-wrap;max-width:110em;background:#f8f8f8;padding:6px}
nav a{margin-right:1em}.views a{margin-right:1.2em}.on{font-weight:bold}
td.cell{text-align:center;min-width:5em}td.cell a{display:block;color:#000;text-decoration:none}
.repro{background:#f4a7a7}.bad{background:#f7d08a}.ok{background:#a9dfa9}.ours{background:#b9c6f0}
.inc{background:#e3e3e3}.unknown{background:#fff}.legend span{padding:2px 8px;margin-right:6px}
.comment{border:1px solid #ccc;padding:0 1em;max-width:60em}form.filters select{margin-right:1em}"""

LEGEND = (("repro", "reproduced"), ("bad", "fails another way"), ("ok", "passes"),
          ("ours", "our side failed / timed out"), ("inc", "inconclusive"))


def page(title: str, inner: str, *, refresh: bool = False) -> str:
    meta = "<meta http-equiv=refresh content=60>" if refresh else ""
    return (f"<!doctype html><html><head><meta charset=utf-8><title>{e(title)}</title>{meta}"
            f"<style>{_CSS}</style></head><body><nav><a href=\"/\">grid</a>"
            f"<a href=\"/#queues\">queues</a><a href=\"/#builds\">builds</a>"
            f"<a href=\"/metrics\">metrics</a></nav><h1>{e(title)}</h1>{inner}</body></html>")


def error_page(message: str) -> str:
    return page("reprobot", f"<p class=err>{e(message)}</p>")


def _link(href: str, text: str, **attrs: str) -> str:
    extra = "".join(f" {k}=\"{e(v)}\"" for k, v in attrs.items())
    return f"<a href=\"{e(href)}\"{extra}>{e(text)}</a>"


def _ext_link(url: str, text: str) -> str:
    return _link(url, text) if url.startswith(("https://", "http://")) else e(text)


# -- the grid ----------------------------------------------------------------------------------
def render_views(grid: Grid) -> str:
    f = grid.filters
    parts = [f"<p class=views id=views>{_link('/', f'all open ({grid.total})', **_on(not f.view))}"]
    for name, title in VIEWS:
        n = grid.view_counts.get(name, 0)
        parts.append(_link("/" + f.query(view=name), f"{title} ({n})",
                           id=f"view-{name}", **_on(f.view == name)))
    parts.append("</p>")
    return "".join(parts)


def _on(on: bool) -> dict[str, str]:
    return {"class": "on"} if on else {}


def _select(name: str, current: str, counts: Mapping[str, int]) -> str:
    opts = [f"<option value=\"\">any {e(name)}</option>"]
    for v, n in counts.items():
        sel = " selected" if v == current else ""
        opts.append(f"<option value=\"{e(v)}\"{sel}>{e(v)} ({n})</option>")
    return f"<select name=\"{e(name)}\" id=\"filter-{e(name)}\">{''.join(opts)}</select>"


def render_filters(grid: Grid) -> str:
    f = grid.filters
    view = f"<input type=hidden name=view value=\"{e(f.view)}\">" if f.view else ""
    clear = _link("/", "clear filters") if f.active else ""
    return (f"<form class=filters method=get action=\"/\">{view}"
            f"{_select('outcome', f.outcome, grid.outcome_counts)}"
            f"{_select('verdict', f.verdict, grid.verdict_counts)}"
            f"{_select('label', f.label, grid.label_counts)}"
            f"<button type=submit id=apply>filter</button> {clear}</form>")


def _column_head(c: Column) -> str:
    when = f" built {c.built_at}" if c.built_at else ""
    tip = f"{c.kind} build {c.build} {c.commit or c.version}{when}".strip()
    return f"<th title=\"{e(tip)}\">{e(c.label)}</th>"


def render_grid(grid: Grid) -> str:
    legend = "".join(f"<span class={cls}>{e(text)}</span>" for cls, text in LEGEND)
    head = (f"<p>{len(grid.rows)} of {grid.total} open triaged issues shown.</p>"
            f"<p class=legend>{legend}</p>")
    if not grid.rows:
        return head + "<p id=empty>No open triaged issue matches.</p>"
    parts = [head, "<table id=grid><thead><tr><th>issue</th><th>title</th><th>outcome</th>"
             "<th>verdict</th><th>labels</th>"]
    parts += [_column_head(c) for c in grid.columns]
    parts.append("</tr></thead><tbody>")
    for r in grid.rows:
        parts.append(
            f"<tr class=issue data-issue=\"{e(r.ref)}\"><td>{_link(r.href, r.ref)}</td>"
            f"<td>{_ext_link(r.url, r.title[:90])}</td><td>{e(r.outcome)}</td>"
            f"<td>{_ext_link(r.comment_url, r.verdict) if r.comment_url else e(r.verdict)}</td>"
            f"<td>{e(', '.join(r.labels))}</td>")
        for c in grid.columns:
            cell = r.cells.get(c.key)
            if cell is None:
                parts.append("<td class=\"cell none\"></td>")
                continue
            text = "reproduced" if cell.verdict == "reproduced" else cell.outcome or "?"
            parts.append(f"<td class=\"cell {e(cell.css)}\" title=\"{e(cell.title)}\">"
                         f"{_link(cell.href, text)}</td>")
        parts.append("</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


# -- queues, workers, builds -------------------------------------------------------------------
def render_queues(queues: Sequence[QueueRow], sweep: SweepProgress | None) -> str:
    parts = ["<h2 id=queues>Queues</h2><table><tr><th>queue</th><th>waiting</th>"
             "<th>of which re-tests / bisections</th></tr>"]
    parts += [f"<tr><td>{e(q.name)}</td><td>{q.waiting}</td><td>{q.low_priority}</td></tr>"
              for q in queues]
    parts.append("</table>")
    if sweep is None:
        parts.append("<p>Re-test sweep: no main build reported by any worker.</p>")
    else:
        parts.append(
            f"<p id=sweep>Re-test sweep on {e(sweep.build)}: {sweep.done} of {sweep.due} "
            f"issues re-tested ({sweep.percent}%), {sweep.tracked} open issues tracked, "
            f"{sweep.waiting} re-tests waiting in the queues.</p>")
    return "".join(parts)


def render_workers(workers: Sequence[Mapping[str, Any]]) -> str:
    parts = ["<h2 id=workers>Workers</h2>"]
    if not workers:
        return parts[0] + "<p>No worker has sent a heartbeat in the last minute.</p>"
    parts.append("<table><tr><th>worker</th><th>queues</th><th>heartbeat</th><th>TVM</th>"
                 "<th>commit</th><th>builds ready</th><th>GPU</th></tr>")
    for w in workers:
        parts.append(
            f"<tr><td>{e(str(w.get('name', '')))}</td>"
            f"<td>{e(', '.join(str(q) for q in w.get('queues') or []))}</td>"
            f"<td>{human_age(w.get('heartbeat_age_s'))} ago</td>"
            f"<td>{e(str(w.get('tvm_version', '')))}</td>"
            f"<td><code>{e(str(w.get('tvm_commit', ''))[:12])}</code></td>"
            f"<td>{e(', '.join(str(b) for b in w.get('builds') or []) or '-')}</td>"
            f"<td>{e(str(w.get('gpu') or '-'))}</td></tr>")
    parts.append("</table>")
    return "".join(parts)


def render_builds(builds: Sequence[Mapping[str, Any]], now: float) -> str:
    parts = ["<h2 id=builds>TVM builds</h2>"]
    if not builds:
        return parts[0] + "<p>No worker reports a TVM build.</p>"
    parts.append("<table><tr><th>build</th><th>kind</th><th>status</th><th>TVM</th>"
                 "<th>commit</th><th>built</th><th>age</th><th>workers</th><th>error</th></tr>")
    for b in builds:
        err = str(b.get("error") or "")
        status = str(b.get("status", ""))
        parts.append(
            f"<tr><td>{e(str(b.get('name', '')))}</td><td>{e(str(b.get('kind', '')))}</td>"
            f"<td class=\"{'err' if status == 'failed' else ''}\">{e(status)}</td>"
            f"<td>{e(str(b.get('version', '')))}</td>"
            f"<td><code>{e(str(b.get('commit', ''))[:12])}</code></td>"
            f"<td>{e(str(b.get('built_at', '')))}</td>"
            f"<td>{human_age(age_seconds(str(b.get('built_at') or ''), now))}</td>"
            f"<td>{e(', '.join(b.get('workers') or []) or 'none')}</td>"
            f"<td>{'<pre>' + e(err[-2000:]) + '</pre>' if err else ''}</td></tr>")
    parts.append("</table>")
    return "".join(parts)


def render_home(grid: Grid, queues: Sequence[QueueRow], sweep: SweepProgress | None,
                workers: Sequence[Mapping[str, Any]], builds: Sequence[Mapping[str, Any]],
                now: float) -> str:
    inner = (render_views(grid) + render_filters(grid) + render_grid(grid)
             + render_queues(queues, sweep) + render_workers(workers)
             + render_builds(builds, now))
    return page("reprobot", inner, refresh=not grid.filters.active)


# -- one issue ---------------------------------------------------------------------------------
_MD = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


_HTML_COMMENT = lazyre.compile(r"<!--.*?-->", re.S)


def render_markdown(text: str) -> str:
    """The bot's comment as GitHub would show it, minus raw HTML (escaped, never passed
    through; HTML comments such as the bot's marker are hidden, as GitHub hides them);
    markdown-it refuses javascript:/data: links."""
    return _MD.render(_HTML_COMMENT.sub("", text))


def _runs_table(repo: str, number: int, runs: Sequence[Run]) -> str:
    if not runs:
        return "<p>No run recorded.</p>"
    parts = ["<table id=runs><tr><th>build</th><th>commit / version</th><th>outcome</th>"
             "<th>verdict</th><th>seconds</th><th>why</th><th>output</th></tr>"]
    for r in runs:
        col = r.column
        secs = f"{r.seconds:.1f}" if r.seconds is not None else "-"
        parts.append(
            f"<tr><td>{e(col.label)}</td><td><code>{e(r.commit[:12] or r.version)}</code></td>"
            f"<td class=\"{outcome_class(r.outcome, r.verdict)}\">{e(r.outcome)}</td>"
            f"<td>{e(r.verdict)}</td><td>{secs}</td><td>{e(r.reason)}</td>"
            f"<td>{_link(run_href(repo, number, col), 'output')}</td></tr>")
    parts.append("</table>")
    return "".join(parts)


def render_issue(issue: Mapping[str, Any], runs: Sequence[Run], script: str,
                 comment: str) -> str:
    repo, number = str(issue.get("repo")), int(issue.get("number") or 0)
    latest = issue.get("latest") or {}
    url = str(latest.get("url") or issue.get("url") or "")
    title = str(latest.get("title") or issue.get("title") or "")
    parts = [f"<p>{_ext_link(url, f'{repo}#{number}')}: {e(title)}</p>"]
    if issue.get("closed"):
        parts.append("<p>Closed on GitHub (not re-tested any more).</p>")
    if latest:
        parts.append(
            f"<p>Latest: <b>{e(str(latest.get('outcome', '')))}</b> / "
            f"<b>{e(str(latest.get('verdict', '')))}</b>; labels: "
            f"{e(', '.join(str(x) for x in latest.get('labels') or [])) or 'none'}</p>")
        if latest.get("infra_error"):
            parts.append(f"<p class=err>Our side: {e(str(latest['infra_error']))}</p>")
    bis = issue.get("bisect") or {}
    if bis.get("commit"):
        parts.append(f"<p>Bisection: {e(str(bis.get('kind', '')))} by "
                     f"<code>{e(str(bis['commit'])[:12])}</code> "
                     f"{e(str(bis.get('subject', '')))} ({e(str(bis.get('steps', '')))} "
                     f"steps)</p>")
    parts.append("<h2>Runs over builds</h2>" + _runs_table(repo, number, runs))
    parts.append("<h2>The bot's comment</h2>")
    if comment:
        parts.append(f"<div class=comment id=comment>{render_markdown(comment)}</div>")
    else:
        cid = latest.get("comment_id")
        link = _ext_link(f"{url}#issuecomment-{cid}", "on GitHub") if cid and url else ""
        parts.append(f"<p>Not stored here {link}.</p>")
    parts.append("<h2>The script</h2>")
    parts.append(f"<pre id=script>{e(script)}</pre>" if script else
                 "<p>No script found in the issue.</p>")
    return page(f"{repo}#{number}", "".join(parts))


def render_run(issue: Mapping[str, Any], run: Run | None, result: Mapping[str, Any] | None,
               latest: Mapping[str, Any] | None) -> str:
    """One run's output: what the cache stored for that script on that build."""
    repo, number = str(issue.get("repo")), int(issue.get("number") or 0)
    back = _link(f"/issues/{repo}/{number}", f"{repo}#{number}")
    if run is None:
        return page("run", f"<p>{back}: no run on that build.</p>")
    col = run.column
    parts = [f"<p>{back} on <b>{e(col.label)}</b> ({e(col.kind)}"
             f"{', TVM ' + e(run.version) if run.version else ''}"
             f"{', commit <code>' + e(run.commit) + '</code>' if run.commit else ''}): "
             f"<span class=\"{outcome_class(run.outcome, run.verdict)}\" id=outcome>"
             f"{e(run.outcome)}</span> / {e(run.verdict)}</p>"]
    ran = (result or {}).get("run") or {}
    if not ran:
        infra = str((latest or {}).get("infra_error") or (result or {}).get("infra_error") or "")
        parts.append("<p>No output stored for this run"
                     + (f": our side failed: {e(infra)}" if infra else
                        " (runs before the result cache, or our side failed before the run)")
                     + ".</p>")
        return page(f"{repo}#{number} on {col.label}", "".join(parts))
    exit_code = ran.get("exit_code")
    sig = ran.get("signal")
    parts.append(
        f"<p>exit code {e(str(exit_code))}{', signal ' + e(str(sig)) if sig else ''}, "
        f"{e(str(ran.get('seconds', '')))} s"
        f"{', timed out' if ran.get('timed_out') else ''}"
        f"{', limit hit: ' + e(str(ran.get('limit_hit'))) if ran.get('limit_hit') else ''}, "
        f"sandbox {e(str(ran.get('sandbox', '')))}</p>")
    for stream in ("stderr", "stdout"):
        text = str(ran.get(f"{stream}_tail") or "")
        cut = " (tail)" if ran.get(f"{stream}_truncated") else ""
        parts.append(f"<h2>{stream}{cut}</h2><pre id={stream}>{e(text) or '(empty)'}</pre>")
    env = (result or {}).get("environment") or {}
    if env:
        rows = "".join(f"<tr><td>{e(str(k))}</td><td>{e(str(v))}</td></tr>"
                       for k, v in sorted(env.items()))
        parts.append(f"<h2>Environment</h2><table>{rows}</table>")
    return page(f"{repo}#{number} on {col.label}", "".join(parts))
