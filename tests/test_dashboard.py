"""bot.dashboard: what the dashboard shows, from plain data (tables)."""

from __future__ import annotations

from typing import Any

import pytest

from bot.dashboard import (
    VIEW_FIXED,
    VIEW_OURS,
    VIEW_REGRESSED,
    VIEW_REPRODUCES,
    Column,
    Filters,
    age_seconds,
    build_grid,
    current_main,
    find_run,
    human_age,
    issue_runs,
    issue_views,
    order_columns,
    outcome_class,
    run_href,
    sweep_progress,
)

REPO = "o/r"
A, B, C = "a" * 40, "b" * 40, "c" * 40
T1, T2, T3 = "2026-11-28T00:00:00Z", "2026-11-29T00:00:00Z", "2026-11-30T00:00:00Z"


def main_row(commit: str, built: str, outcome: str, verdict: str) -> dict[str, Any]:
    return {"build": "main", "kind": "source", "commit": commit, "version": "0.30.dev0",
            "built_at": built, "outcome": outcome, "verdict": verdict, "seconds": 1.0}


def rel_row(name: str, outcome: str, verdict: str) -> dict[str, Any]:
    return {"build": name, "kind": "release", "commit": "", "version": name,
            "outcome": outcome, "verdict": verdict, "seconds": 2.0}


def rec(row: dict[str, Any], finished: float, **over: Any) -> dict[str, Any]:
    """A recorded result (bot.service._finish) of one run."""
    return {"build": row["build"], "tvm_commit": row["commit"], "tvm_version": row["version"],
            "outcome": row["outcome"], "verdict": row["verdict"], "seconds": row["seconds"],
            "finished": finished, "labels": [f"repro: {row['outcome']}"], **over}


def issue(number: int, runs: list[dict[str, Any]], *, main: dict[str, Any] | None = None,
          **latest_over: Any) -> dict[str, Any]:
    """Runs oldest first; the newest is the latest record."""
    history = [rec(r, 1000.0 + i) for i, r in enumerate(runs)][::-1]
    latest = {**history[0], "title": f"issue {number}",
              "url": f"https://github.com/{REPO}/issues/{number}", **latest_over}
    history[0] = latest
    matrix = {r["build"]: r for r in runs}
    return {"repo": REPO, "number": number, "latest": latest, "history": history,
            "matrix": matrix, "main": main}


# -- views: should / should-not -------------------------------------------------------------
VIEW_CASES: list[tuple[str, dict[str, Any], set[str]]] = [
    ("reproduces on today's main",
     issue(1, [main_row(A, T1, "crash", "reproduced")]), {VIEW_REPRODUCES}),
    ("reproduces on a release only: not on main",
     issue(2, [rel_row("0.26.0", "crash", "reproduced")]), set()),
    ("fixed: reproduced on the old main, passes on the new one",
     issue(3, [main_row(A, T1, "crash", "reproduced"), main_row(B, T2, "passed", "not-reproduced")]),
     {VIEW_FIXED}),
    ("fixed-on-main from the sweep's record",
     issue(4, [main_row(B, T2, "passed", "not-reproduced")],
           main={**main_row(B, T2, "passed", "not-reproduced"), "fixed_on_main": True}),
     {VIEW_FIXED}),
    ("fixed label but failing again on main: not closable",
     issue(5, [main_row(B, T2, "crash", "reproduced")], labels=["repro: fixed-on-main"]),
     {VIEW_REPRODUCES}),
    ("regressed: passed on the old main, reproduces on the new one",
     issue(6, [main_row(A, T1, "passed", "not-reproduced"), main_row(B, T2, "crash", "reproduced")]),
     {VIEW_REPRODUCES, VIEW_REGRESSED}),
    ("regressed between releases (history kind)",
     issue(7, [rel_row("0.26.0", "crash", "reproduced")],
           history={"kind": "regressed", "last_good": "0.25.0", "first_bad": "0.26.0"}),
     {VIEW_REGRESSED}),
    ("an older main build that passed, with an inconclusive run between: still regressed",
     issue(8, [main_row(A, T1, "passed", "not-reproduced"),
               main_row(B, T2, "api-mismatch", "inconclusive"),
               main_row(C, T3, "crash", "reproduced")]),
     {VIEW_REPRODUCES, VIEW_REGRESSED}),
    ("our side failed", issue(9, [main_row(A, T1, "infra-error", "inconclusive")]), {VIEW_OURS}),
    ("timed out", issue(10, [main_row(A, T1, "timeout", "inconclusive")]), {VIEW_OURS}),
    ("the script's own API is wrong: inconclusive, but not because of us",
     issue(11, [main_row(A, T1, "api-mismatch", "inconclusive")]), set()),
    ("different failure: none of the views",
     issue(12, [main_row(A, T1, "python-error", "different-failure")]), set()),
]


@pytest.mark.parametrize("why,data,views", VIEW_CASES, ids=[c[0] for c in VIEW_CASES])
def test_views(why: str, data: dict[str, Any], views: set[str]):
    assert issue_views(data, issue_runs(data)) == views, why


# -- columns ---------------------------------------------------------------------------------
def test_columns_main_newest_first_then_other_source_then_releases_newest_first():
    cols = [Column("0.25.0", "release", version="0.25.0"),
            Column("main", "source", A, built_at=T1),
            Column("0.27.0.post1", "release", version="0.27.0.post1"),
            Column("fork", "source", C, built_at=T3),
            Column("main", "source", B, built_at=T2),
            Column("0.26.0", "release", version="0.26.0"),
            Column("main", "source", B, built_at=T2),  # the same column twice
            Column("", "ad-hoc", version="0.24.0")]
    assert [c.label for c in order_columns(cols)] == [
        "main@bbbbbbb", "main@aaaaaaa", "fork@ccccccc", "0.27.0.post1", "0.26.0", "0.25.0",
        "TVM 0.24.0"]


@pytest.mark.parametrize("col,key,label", [
    (Column("main", "source", A), ("main", A), "main@aaaaaaa"),
    (Column("0.26.0", "release", "abc", "0.26.0"), ("0.26.0", ""), "0.26.0"),  # one column
    (Column("", "ad-hoc", version="0.21.0"), ("", "0.21.0"), "TVM 0.21.0"),
    (Column("", "ad-hoc"), ("", ""), "TVM (unknown)"),
])
def test_column_identity(col: Column, key: tuple[str, str], label: str):
    assert col.key == key and col.label == label


# -- the grid --------------------------------------------------------------------------------
def grid_issues() -> list[dict[str, Any]]:
    return [
        issue(1, [rel_row("0.26.0", "crash", "reproduced"), main_row(A, T1, "crash", "reproduced"),
                  main_row(B, T2, "crash", "reproduced")]),
        issue(2, [main_row(A, T1, "crash", "reproduced"), main_row(B, T2, "passed", "not-reproduced")]),
        issue(3, [rel_row("0.26.0", "infra-error", "inconclusive")],
              labels=["repro: infra-error", "needs: gpu"]),
        {**issue(4, [main_row(B, T2, "crash", "reproduced")]), "closed": True},
        {"repo": REPO, "number": 5, "latest": None},  # queued, not triaged yet
    ]


def test_grid_rows_columns_cells():
    g = build_grid(grid_issues())
    assert [r.number for r in g.rows] == [1, 2, 3] and g.total == 3
    assert [c.label for c in g.columns] == ["main@bbbbbbb", "main@aaaaaaa", "0.26.0"]
    one, two, three = g.rows
    assert {c.label: one.cells[c.key].css for c in g.columns} == {
        "main@bbbbbbb": "repro", "main@aaaaaaa": "repro", "0.26.0": "repro"}
    assert [two.cells[c.key].outcome if c.key in two.cells else None for c in g.columns] == [
        "passed", "crash", None]
    assert three.cells[("0.26.0", "")].css == "ours"
    cell = two.cells[("main", B)]
    assert cell.href == run_href(REPO, 2, Column("main", "source", B, "0.30.dev0"))
    assert cell.href.startswith("/issues/o/r/2/run?build=main&commit=" + B)
    assert one.comment_url == "" and one.href == "/issues/o/r/1"


@pytest.mark.parametrize("query,shown,columns", [
    ({}, [1, 2, 3], 3),
    ({"view": VIEW_REPRODUCES}, [1], 3),
    ({"view": VIEW_FIXED}, [2], 2),
    ({"view": VIEW_OURS}, [3], 1),
    ({"view": VIEW_REGRESSED}, [], 0),
    ({"view": "no-such-view"}, [1, 2, 3], 3),  # an unknown view is no filter
    ({"outcome": "crash"}, [1], 3),
    ({"verdict": "not-reproduced"}, [2], 2),
    ({"label": "needs: gpu"}, [3], 1),
    ({"label": "needs"}, [], 0),  # labels match whole
    ({"view": VIEW_REPRODUCES, "outcome": "passed"}, [], 0),
])
def test_filters_narrow_the_rows_and_the_columns(query: dict[str, str], shown: list[int],
                                                 columns: int):
    g = build_grid(grid_issues(), filters=Filters.from_query(query))
    assert [r.number for r in g.rows] == shown
    assert len(g.columns) == columns
    # the counts are over all open issues, whatever the filter
    assert g.total == 3 and g.view_counts == {VIEW_REPRODUCES: 1, VIEW_FIXED: 1,
                                              VIEW_REGRESSED: 0, VIEW_OURS: 1}
    assert g.outcome_counts == {"crash": 1, "infra-error": 1, "passed": 1}


def test_filter_query_strings():
    f = Filters.from_query({"view": VIEW_FIXED, "label": "a&b=c"})
    assert f.query() == "?view=fixed-on-main&label=a%26b%3Dc"
    assert f.query(view="") == "?label=a%26b%3Dc"
    assert Filters().query() == "" and not Filters().active


def test_a_build_kind_comes_from_the_workers_when_the_rows_lack_it():
    data = {"repo": REPO, "number": 1, "latest": {"outcome": "passed", "build": "nightly",
                                                   "tvm_commit": A, "finished": 1.0},
            "history": [{"outcome": "passed", "build": "nightly", "tvm_commit": A,
                         "finished": 1.0}]}
    g = build_grid([data], builds=[{"name": "nightly", "kind": "source"}])
    assert [c.label for c in g.columns] == ["nightly@aaaaaaa"]
    g = build_grid([data])
    assert [c.label for c in g.columns] == ["nightly"]  # unknown name: a release


def test_each_run_once_though_recorded_in_history_matrix_and_main():
    row = main_row(B, T2, "crash", "reproduced")
    data = issue(1, [row], main=row)
    assert [(r.build, r.commit) for r in issue_runs(data)] == [("main", B)]
    data["history"] = []  # trimmed: the stored latest rows still show the runs
    assert [(r.build, r.commit) for r in issue_runs(data)] == [("main", B)]


def test_runs_newest_first_and_find_run():
    data = issue(2, [main_row(A, T1, "crash", "reproduced"),
                     main_row(B, T2, "passed", "not-reproduced")])
    runs = issue_runs(data)
    assert [(r.commit, r.outcome) for r in runs[:2]] == [(B, "passed"), (A, "crash")]
    found = find_run(runs, "main", A, "")
    assert found is not None and found.outcome == "crash"
    assert find_run(runs, "main", C, "") is None
    assert find_run(runs, "0.26.0", "", "0.26.0") is None


def test_retest_records_and_matrix_records_both_count():
    """A re-test record (bot.sweep) names "commit"; a matrix record lists several builds."""
    data = {"repo": REPO, "number": 1, "latest": {"outcome": "passed", "verdict": "not-reproduced",
                                                   "build": "main", "commit": B,
                                                   "change": "fixed", "finished": 3.0},
            "history": [
                {"outcome": "passed", "verdict": "not-reproduced", "build": "main", "commit": B,
                 "change": "fixed", "finished": 3.0},
                {"outcome": "crash", "verdict": "reproduced", "finished": 2.0,
                 "matrix": [main_row(A, T1, "crash", "reproduced"),
                            rel_row("0.26.0", "passed", "not-reproduced")]},
            ],
            "main": {**main_row(B, T2, "passed", "not-reproduced"), "fixed_on_main": True}}
    runs = issue_runs(data)
    assert [(r.build, r.commit[:1], r.outcome) for r in runs[:3]] == [
        ("main", "b", "passed"), ("main", "a", "crash"), ("0.26.0", "", "passed")]
    assert issue_views(data, runs) == {VIEW_FIXED}


# -- sweep progress, builds ------------------------------------------------------------------
@pytest.mark.parametrize("mains,done,due,tracked", [
    ({}, 0, 0, 0),
    ({"o/r#1": {"commit": B, "verdict": "reproduced"}}, 1, 1, 1),
    ({"o/r#1": {"commit": A, "verdict": "reproduced"}}, 0, 1, 1),
    ({"o/r#1": {"commit": A, "verdict": "not-reproduced"}}, 0, 0, 1),  # not re-tested
    ({"o/r#1": {"commit": A, "verdict": "not-reproduced", "fixed_on_main": True}}, 0, 1, 1),
    ({"o/r#1": {"commit": A, "verdict": "different-failure"},
      "o/r#2": {"commit": B, "verdict": "not-reproduced"}, "o/r#3": None}, 1, 2, 3),
])
def test_sweep_progress(mains: dict[str, Any], done: int, due: int, tracked: int):
    p = sweep_progress(mains, B, ("reproduced", "different-failure"), 4)
    assert p is not None
    assert (p.done, p.due, p.tracked, p.waiting) == (done, due, tracked, 4)
    assert p.build == "main@bbbbbbb"
    assert sweep_progress(mains, "", ("reproduced",), 0) is None


def test_current_main_is_the_newest_ready_one():
    builds = [{"name": "main", "commit": A, "built_at": T1, "status": "ready"},
              {"name": "main", "commit": C, "built_at": T3, "status": "failed"},
              {"name": "main", "commit": B, "built_at": T2, "status": "ready"},
              {"name": "0.26.0", "commit": "", "built_at": T3, "status": "ready"}]
    assert (current_main(builds) or {})["commit"] == B
    assert current_main([]) is None


@pytest.mark.parametrize("iso,now,age", [
    ("2026-11-30T00:00:00Z", 1795996800.0 + 90, 90.0),
    ("2026-11-30T00:00:00+00:00", 1795996800.0, 0.0),
    ("2026-11-30T00:00:00", 1795996800.0, None),  # no zone: not guessed
    ("yesterday", 0.0, None), ("", 0.0, None),
])
def test_age_seconds(iso: str, now: float, age: float | None):
    assert age_seconds(iso, now) == age


@pytest.mark.parametrize("secs,text", [(None, "-"), (5, "5 s"), (600, "10 min"),
                                       (7200, "2 h"), (5 * 86400, "5 d")])
def test_human_age(secs: float | None, text: str):
    assert human_age(secs) == text


@pytest.mark.parametrize("outcome,verdict,css", [
    ("crash", "reproduced", "repro"), ("passed", "not-reproduced", "ok"),
    ("crash", "different-failure", "bad"), ("infra-error", "inconclusive", "ours"),
    ("timeout", "inconclusive", "ours"), ("api-mismatch", "inconclusive", "inc"),
    ("something-new", "", "unknown"),
])
def test_outcome_colours(outcome: str, verdict: str, css: str):
    assert outcome_class(outcome, verdict) == css
