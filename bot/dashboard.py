"""What the dashboard shows, from plain data: the grid of issues over builds, the views and
their counts, the filters, one issue's runs, the re-test sweep's progress.

Pure: no Redis, no clock (``now`` is passed in), no HTML. ``bot.web`` gathers the plain data
from ``bot.state`` and renders these view models (escaping everything).

An issue, as gathered (every key optional)::

    {"repo", "number", "title", "url",
     "latest": the newest result record (bot.service / bot.sweep record_result),
     "history": result records, newest first,
     "matrix": {build name: stored matrix row (bot.history.row_to_store)},
     "main": the issue's latest main result (bot.sweep.remember_main),
     "closed": bool}
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bot.builds import version_key

MAIN = "main"

# The views a maintainer starts from (name, title), in the order they are shown.
VIEW_REPRODUCES = "reproduces-on-main"
VIEW_FIXED = "fixed-on-main"
VIEW_REGRESSED = "regressed"
VIEW_OURS = "inconclusive-ours"
VIEWS: tuple[tuple[str, str], ...] = (
    (VIEW_REPRODUCES, "reproduces on main"),
    (VIEW_FIXED, "fixed on main: can be closed"),
    (VIEW_REGRESSED, "regressed"),
    (VIEW_OURS, "inconclusive because of us"),
)
VIEW_NAMES = frozenset(name for name, _ in VIEWS)
# Outcomes that say our side failed or ran out of time, not the user's script.
OURS_OUTCOMES = frozenset({"infra-error", "timeout"})
FIXED_LABEL_SUFFIX = "fixed-on-main"

# Cell colour classes by outcome (the legend lists them).
OUTCOME_CLASS: dict[str, str] = {
    "passed": "ok",
    "crash": "bad", "internal-error": "bad", "tvm-error": "bad", "wrong-result": "bad",
    "python-error": "bad",
    "infra-error": "ours", "timeout": "ours",
    "api-mismatch": "inc", "missing-dependency": "inc", "needs-gpu": "inc",
    "resource-limit": "inc", "no-repro": "inc",
}


def outcome_class(outcome: str, verdict: str = "") -> str:
    if verdict == "reproduced":
        return "repro"
    return OUTCOME_CLASS.get(outcome, "unknown")


@dataclass(frozen=True)
class Column:
    """One build in the grid: a main commit, another source build's commit, or a release."""

    build: str
    kind: str = "release"  # release | source | ad-hoc
    commit: str = ""
    version: str = ""
    built_at: str = ""

    @property
    def key(self) -> tuple[str, str]:
        # A release is one column whatever its recorded commit; a source build is one per commit.
        if self.kind == "source":
            return (self.build, self.commit)
        return (self.build, "" if self.build else self.version)

    @property
    def label(self) -> str:
        if self.kind == "source":
            return f"{self.build}@{self.commit[:7]}" if self.commit else self.build
        if not self.build:
            return f"TVM {self.version}" if self.version else "TVM (unknown)"
        return self.build


@dataclass(frozen=True)
class Run:
    """One run of an issue's script on one build (from a record or a matrix row)."""

    build: str
    kind: str
    commit: str = ""
    version: str = ""
    outcome: str = ""
    verdict: str = ""
    seconds: float | None = None
    built_at: str = ""
    finished: float | None = None
    reason: str = ""

    @property
    def column(self) -> Column:
        return Column(self.build, self.kind, self.commit, self.version, self.when)

    @property
    def when(self) -> str:
        """When the build was made, else when this run finished (ISO-8601 UTC): what orders
        a source build's commits."""
        if self.built_at or self.finished is None:
            return self.built_at
        return datetime.fromtimestamp(self.finished, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")

    @property
    def state(self) -> str:
        if self.verdict == "reproduced":
            return "bad"
        if self.outcome == "passed":
            return "good"
        return ""


@dataclass(frozen=True)
class Cell:
    outcome: str
    verdict: str
    css: str
    href: str
    title: str


@dataclass(frozen=True)
class Row:
    repo: str
    number: int
    title: str
    url: str
    outcome: str
    verdict: str
    labels: tuple[str, ...]
    views: frozenset[str]
    cells: dict[tuple[str, str], Cell]
    href: str
    comment_url: str = ""  # the bot's comment on GitHub

    @property
    def ref(self) -> str:
        return f"{self.repo}#{self.number}"


@dataclass(frozen=True)
class Filters:
    view: str = ""
    outcome: str = ""
    verdict: str = ""
    label: str = ""

    @classmethod
    def from_query(cls, q: Mapping[str, str]) -> Filters:
        view = str(q.get("view") or "").strip()
        return cls(view=view if view in VIEW_NAMES else "",
                   outcome=str(q.get("outcome") or "").strip()[:100],
                   verdict=str(q.get("verdict") or "").strip()[:100],
                   label=str(q.get("label") or "").strip()[:200])

    def keep(self, row: Row) -> bool:
        return ((not self.view or self.view in row.views)
                and (not self.outcome or row.outcome == self.outcome)
                and (not self.verdict or row.verdict == self.verdict)
                and (not self.label or self.label in row.labels))

    def query(self, **change: str) -> str:
        """The query string of these filters with ``change`` applied ("" drops a filter)."""
        d = {"view": self.view, "outcome": self.outcome, "verdict": self.verdict,
             "label": self.label, **change}
        q = urllib.parse.urlencode({k: v for k, v in d.items() if v})
        return "?" + q if q else ""

    @property
    def active(self) -> bool:
        return bool(self.view or self.outcome or self.verdict or self.label)


@dataclass(frozen=True)
class Grid:
    columns: list[Column]
    rows: list[Row]  # after the filters
    total: int  # open triaged issues before the filters
    view_counts: dict[str, int]  # over all open issues
    outcome_counts: dict[str, int]
    verdict_counts: dict[str, int]
    label_counts: dict[str, int]
    filters: Filters = field(default_factory=Filters)


# -- links -------------------------------------------------------------------------------------
def issue_href(repo: str, number: int) -> str:
    return f"/issues/{urllib.parse.quote(repo, safe='/')}/{int(number)}"


def run_href(repo: str, number: int, col: Column) -> str:
    """The page of one run's output: the issue, the build, and the commit (or version)."""
    q = urllib.parse.urlencode({"build": col.build, "commit": col.commit,
                                "version": col.version})
    return f"{issue_href(repo, number)}/run?{q}"


# -- an issue's runs ---------------------------------------------------------------------------
def _secs(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None


def _kind(build: str, given: Any, kinds: Mapping[str, str]) -> str:
    if given in ("release", "source", "ad-hoc"):
        return str(given)
    if not build:
        return "ad-hoc"
    if build in kinds:
        return kinds[build]
    return "source" if build == MAIN else "release"


def issue_runs(issue: Mapping[str, Any], kinds: Mapping[str, str] | None = None,
               built: Mapping[tuple[str, str], str] | None = None) -> list[Run]:
    """Every run of the issue's script we know of, newest first (one entry per build column
    is the newest; older runs of the same column follow).

    ``kinds``: build name -> release | source; ``built``: (build, commit) -> built_at, both
    from the workers' heartbeats (the recorded rows do not all carry them).
    """
    kinds = dict(kinds or {})
    built = dict(built or {})
    for row in [*(issue.get("matrix") or {}).values(), issue.get("main") or {}]:
        if row.get("build") and row.get("commit") and row.get("built_at"):
            built.setdefault((str(row["build"]), str(row["commit"])), str(row["built_at"]))
    for row in (issue.get("matrix") or {}).values():  # stored rows know their kind
        if row.get("build") and row.get("kind"):
            kinds.setdefault(str(row["build"]), str(row["kind"]))
    main = issue.get("main") or {}
    if main.get("build") and main.get("kind"):
        kinds.setdefault(str(main["build"]), str(main["kind"]))
    runs: list[Run] = []

    def add(d: Mapping[str, Any], finished: Any = None, reason: str = "",
            commit_key: str = "commit", version_key_: str = "version") -> None:
        build = str(d.get("build") or "")
        commit = str(d.get(commit_key) or d.get("commit") or "")
        runs.append(Run(
            build=build, kind=_kind(build, d.get("kind"), kinds), commit=commit,
            version=str(d.get(version_key_) or d.get("version") or ""),
            outcome=str(d.get("outcome") or ""), verdict=str(d.get("verdict") or ""),
            seconds=_secs(d.get("seconds")),
            built_at=str(d.get("built_at") or built.get((build, commit), "")),
            finished=_secs(finished), reason=reason))

    for rec in issue.get("history") or []:
        fin, reason = rec.get("finished"), str(rec.get("reason") or "")
        if rec.get("matrix"):
            for row in rec["matrix"]:
                add(row, fin, reason)
        else:
            add(rec, fin, reason, commit_key="tvm_commit", version_key_="tvm_version")
    seen = {r.column.key for r in runs}
    for row in [*(issue.get("matrix") or {}).values(), *([main] if main else [])]:
        # latest per build: only for builds whose runs fell out of the (trimmed) history
        before = len(runs)
        add(row, row.get("updated"))
        key = runs[-1].column.key
        if key in seen:
            del runs[before:]
        seen.add(key)
    # newest first by finish time (rows without one keep their place at the end)
    indexed = list(enumerate(runs))
    indexed.sort(key=lambda ir: (ir[1].finished is None, -(ir[1].finished or 0), ir[0]))
    return [r for _, r in indexed]


def latest_per_column(runs: Sequence[Run]) -> dict[tuple[str, str], Run]:
    out: dict[tuple[str, str], Run] = {}
    for r in runs:
        out.setdefault(r.column.key, r)
    return out


def _main_runs(runs: Sequence[Run]) -> list[Run]:
    """Runs on main, one per commit, newest commit first (by built time, then finish time)."""
    seen: dict[str, Run] = {}
    for r in runs:
        if r.build == MAIN and r.kind == "source":
            seen.setdefault(r.commit, r)
    return sorted(seen.values(), key=lambda r: (r.when, r.finished or 0), reverse=True)


def issue_views(issue: Mapping[str, Any], runs: Sequence[Run]) -> frozenset[str]:
    """Which of ``VIEWS`` the issue belongs to."""
    latest = issue.get("latest") or {}
    main = issue.get("main") or {}
    labels = [str(x) for x in latest.get("labels") or []]
    mains = _main_runs(runs)
    views: set[str] = set()
    newest_main = mains[0] if mains else None
    if newest_main is not None and newest_main.verdict == "reproduced":
        views.add(VIEW_REPRODUCES)
    older_states = [r.state for r in mains[1:] if r.state]
    fixed = (bool(main.get("fixed_on_main"))
             or any(x.endswith(FIXED_LABEL_SUFFIX) for x in labels)
             or latest.get("change") == "fixed"
             or (newest_main is not None and newest_main.state == "good"
                 and bool(older_states) and older_states[0] == "bad"))
    if fixed and newest_main is not None and newest_main.state != "bad":
        views.add(VIEW_FIXED)
    hist = latest.get("history") or {}
    regressed = (latest.get("change") == "regressed"
                 or (newest_main is not None and newest_main.state == "bad"
                     and bool(older_states) and older_states[0] == "good")
                 or (isinstance(hist, Mapping) and hist.get("kind") == "regressed"))
    if regressed:
        views.add(VIEW_REGRESSED)
    if str(latest.get("outcome") or "") in OURS_OUTCOMES:
        views.add(VIEW_OURS)
    return frozenset(views)


# -- the grid ----------------------------------------------------------------------------------
def order_columns(cols: Iterable[Column]) -> list[Column]:
    """main commits newest first, other source builds (by name, newest first), then releases
    newest to oldest, then ad-hoc interpreters."""
    uniq: dict[tuple[str, str], Column] = {}
    for c in cols:
        have = uniq.get(c.key)
        if have is None or (c.built_at and (not have.built_at or c.built_at < have.built_at)):
            uniq[c.key] = c

    def key(c: Column) -> tuple[Any, ...]:
        if c.kind == "source":
            return (0 if c.build == MAIN else 1, c.build, _neg_str(c.built_at), c.commit)
        if c.kind == "release":
            return (2, _negate(version_key(c.version or c.build)), c.build)
        return (3, _negate(version_key(c.version)), c.version)

    return sorted(uniq.values(), key=key)


def _negate(k: tuple[Any, ...]) -> tuple[Any, ...]:
    out: list[Any] = []
    for x in k:
        if isinstance(x, tuple):
            out.append(_negate(x))
        elif isinstance(x, int | float):
            out.append(-x)
        else:
            out.append(_neg_str(str(x)))
    return tuple(out)


def _neg_str(s: str) -> tuple[int, ...]:
    """Sorts strings in reverse (ISO times newest first); "" last."""
    if not s:
        return (1,)
    return (0, *(-ord(ch) for ch in s), 0)


def build_grid(issues: Sequence[Mapping[str, Any]], builds: Sequence[Mapping[str, Any]] = (),
               filters: Filters | None = None) -> Grid:
    """Rows: open triaged issues (newest first, as given); columns: the builds they ran on."""
    filters = filters or Filters()
    kinds = {str(b.get("name")): str(b.get("kind")) for b in builds
             if b.get("name") and b.get("kind") in ("release", "source")}
    built = {(str(b.get("name")), str(b.get("commit"))): str(b.get("built_at"))
             for b in builds if b.get("name") and b.get("commit") and b.get("built_at")}
    rows: list[Row] = []
    cols: list[Column] = []
    for issue in issues:
        if issue.get("closed"):
            continue
        latest = issue.get("latest") or {}
        if not latest:
            continue  # not triaged yet
        repo, number = str(issue.get("repo") or ""), int(issue.get("number") or 0)
        runs = issue_runs(issue, kinds, built)
        cells: dict[tuple[str, str], Cell] = {}
        for key, run in latest_per_column(runs).items():
            col = run.column
            cols.append(col)
            secs = f", {run.seconds:.1f} s" if run.seconds is not None else ""
            cells[key] = Cell(run.outcome, run.verdict, outcome_class(run.outcome, run.verdict),
                              run_href(repo, number, col),
                              f"{col.label}: {run.outcome or '?'} / {run.verdict or '?'}{secs}")
        rows.append(Row(
            repo=repo, number=number,
            title=str(latest.get("title") or issue.get("title") or ""),
            url=str(latest.get("url") or issue.get("url") or ""),
            outcome=str(latest.get("outcome") or ""), verdict=str(latest.get("verdict") or ""),
            labels=tuple(str(x) for x in latest.get("labels") or []),
            views=issue_views(issue, runs), cells=cells, href=issue_href(repo, number),
            comment_url=_comment_url(str(latest.get("url") or ""), latest.get("comment_id"))))
    view_counts = {name: sum(1 for r in rows if name in r.views) for name, _ in VIEWS}
    shown = [r for r in rows if filters.keep(r)]
    used = {k for r in shown for k in r.cells}
    columns = [c for c in order_columns(cols) if c.key in used]
    return Grid(columns=columns, rows=shown, total=len(rows), view_counts=view_counts,
                outcome_counts=_count(r.outcome for r in rows),
                verdict_counts=_count(r.verdict for r in rows),
                label_counts=_count(x for r in rows for x in r.labels), filters=filters)


def _comment_url(url: str, comment_id: Any) -> str:
    if not url.startswith(("https://", "http://")) or not isinstance(comment_id, int) \
            or isinstance(comment_id, bool):
        return ""
    return f"{url}#issuecomment-{comment_id}"


def _count(values: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        if v:
            out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))


# -- one run -----------------------------------------------------------------------------------
def find_run(runs: Sequence[Run], build: str, commit: str, version: str) -> Run | None:
    """The newest run of the issue on that build (and commit, for a source build)."""
    for r in runs:
        if r.build != build:
            continue
        if r.kind == "source" and commit and r.commit != commit:
            continue
        if not build and version and r.version != version:
            continue
        return r
    return None


def cache_ident(run: Run) -> str:
    """The build identity the result cache keys a run by (bot.service.cache_key)."""
    return run.commit or run.version


# -- queues, builds, the re-test sweep ---------------------------------------------------------
@dataclass(frozen=True)
class QueueRow:
    name: str
    waiting: int
    low_priority: int  # re-tests and bisections (priority 9) among ``waiting``


def queue_rows(depths: Mapping[str, Mapping[str, int]]) -> list[QueueRow]:
    return [QueueRow(name, int(d.get("total", 0)), int(d.get("low", 0)))
            for name, d in depths.items()]


@dataclass(frozen=True)
class SweepProgress:
    build: str  # e.g. main@abc1234
    commit: str
    tracked: int  # open issues in the re-test set
    due: int  # of those, the ones the sweep re-tests (their verdict is in retest.verdicts)
    done: int  # due issues whose latest main result is on this commit
    waiting: int  # low-priority messages still queued

    @property
    def percent(self) -> int:
        return 100 if not self.due else int(100 * self.done / self.due)


def sweep_progress(mains: Mapping[str, Mapping[str, Any] | None], current_commit: str,
                   verdicts: Sequence[str], low_waiting: int) -> SweepProgress | None:
    """How far the re-test sweep on the current main build has come.

    ``mains``: each tracked issue's latest main result (or None). An issue is due when its
    main result on an older commit has a verdict the sweep re-tests, or it is already on the
    current commit (re-tested).
    """
    if not current_commit:
        return None
    due = done = 0
    for main in mains.values():
        if not main:
            continue
        on_current = str(main.get("commit") or "") == current_commit
        if on_current:
            due += 1
            done += 1
        elif str(main.get("verdict") or "") in verdicts or main.get("fixed_on_main"):
            due += 1
    return SweepProgress(f"{MAIN}@{current_commit[:7]}", current_commit, len(mains), due, done,
                         low_waiting)


def current_main(builds: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The newest ready main build any worker reports."""
    ready = [b for b in builds if b.get("name") == MAIN and b.get("status", "ready") == "ready"
             and b.get("commit")]
    return max(ready, key=lambda b: str(b.get("built_at") or "")) if ready else None


def age_seconds(iso: str, now: float) -> float | None:
    """Seconds since an ISO-8601 UTC time ("2026-11-30T05:20:00Z"); None when not parseable."""
    if not iso:
        return None
    try:
        t = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        return None
    return max(0.0, now - t.timestamp())


def human_age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    s = int(seconds)
    if s < 120:
        return f"{s} s"
    if s < 7200:
        return f"{s // 60} min"
    if s < 3 * 86400:
        return f"{s // 3600} h"
    return f"{s // 86400} d"
