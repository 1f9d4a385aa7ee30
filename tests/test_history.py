"""The pure core of results over builds: order, history, reported version, links, changes."""

from __future__ import annotations

import pytest

from bot.history import (
    BisectResult,
    BuildInfo,
    Change,
    HistoryKind,
    MatrixRow,
    ReportedVersion,
    bisect_next,
    change_message,
    compare_url,
    compute_history,
    insert_section,
    main_change,
    match_build,
    order_builds,
    order_rows,
    parse_reported_version,
    release_tag,
    render_matrix,
    repo_web_url,
    should_retest,
    version_key,
    with_bisection,
)

A = "a" * 40
B = "b" * 40


def row(build: str, outcome: str, verdict: str, *, kind: str = "release", commit: str = "",
        version: str = "", built_at: str = "") -> MatrixRow:
    return MatrixRow(build=build, version=version or build, commit=commit, outcome=outcome,
                     verdict=verdict, seconds=1.0, kind=kind, built_at=built_at)


BAD = ("internal-error", "reproduced")
GOOD = ("passed", "not-reproduced")
OTHER = ("python-error", "different-failure")
INCONCLUSIVE = ("api-mismatch", "inconclusive")
TIMEOUT = ("timeout", "inconclusive")


# -- order -------------------------------------------------------------------------------------
def test_order_main_first_then_releases_newest_to_oldest() -> None:
    builds = [
        BuildInfo("0.9.0", version="0.9.0"),
        BuildInfo("0.26.0", version="0.26.0"),
        BuildInfo("main", kind="source", version="0.28.dev0", commit=A, built_at="2026-11-30T05:00:00Z"),
        BuildInfo("0.27.0.post1", version="0.27.0.post1"),
        BuildInfo("0.10.0", version="0.10.0"),
        BuildInfo("0.27.0rc0", version="0.27.0rc0"),
        BuildInfo("0.25.0.post1", version="0.25.0.post1"),
    ]
    assert [b.name for b in order_builds(builds)] == [
        "main", "0.27.0.post1", "0.27.0rc0", "0.26.0", "0.25.0.post1", "0.10.0", "0.9.0"]


def test_main_builds_newest_first() -> None:
    rows = [row("main", *BAD, kind="source", commit=A, built_at="2026-11-29T05:00:00Z"),
            row("main", *GOOD, kind="source", commit=B, built_at="2026-11-30T05:00:00Z"),
            row("0.26.0", *BAD)]
    assert [r.commit for r in order_rows(rows)] == [B, A, ""]


@pytest.mark.parametrize("lo,hi", [
    ("0.9", "0.10"), ("0.26.0", "0.27.0rc0"), ("0.27.0rc0", "0.27.0"),
    ("0.27.0", "0.27.0.post1"), ("0.27.0.dev5", "0.27.0rc0"), ("v0.25", "0.25.1"),
])
def test_version_key(lo: str, hi: str) -> None:
    assert version_key(lo) < version_key(hi)
    assert version_key("0.26") == version_key("0.26.0")


# -- history -----------------------------------------------------------------------------------
# (rows newest first as (outcome, verdict), expected (kind, older index, newer index) or None)
HISTORY_TABLE: list[tuple[str, list[tuple[str, str]], tuple[str, int, int] | None]] = [
    ("fixed between the two", [GOOD, BAD], ("fixed", 1, 0)),
    ("regressed between the two", [BAD, GOOD], ("regressed", 1, 0)),
    ("all bad", [BAD, BAD, BAD], None),
    ("all good", [GOOD, GOOD], None),
    ("one build only", [BAD], None),
    ("nothing", [], None),
    ("inconclusive skipped", [GOOD, INCONCLUSIVE, BAD], ("fixed", 2, 0)),
    ("timeout skipped", [BAD, TIMEOUT, TIMEOUT, GOOD], ("regressed", 3, 0)),
    ("another failure is neither", [GOOD, OTHER, BAD], ("fixed", 2, 0)),
    ("only inconclusive and one bad", [INCONCLUSIVE, BAD], None),
    ("other failures only", [OTHER, OTHER], None),
    ("flips twice: newest boundary", [GOOD, BAD, GOOD], ("fixed", 1, 0)),
    ("flips twice the other way", [BAD, GOOD, BAD], ("regressed", 1, 0)),
    ("boundary further down", [GOOD, GOOD, BAD, BAD], ("fixed", 2, 1)),
    ("different-failure is not bad", [GOOD, OTHER], None),
]


@pytest.mark.parametrize("name,states,expected", HISTORY_TABLE,
                         ids=[t[0] for t in HISTORY_TABLE])
def test_history_table(name: str, states: list[tuple[str, str]],
                       expected: tuple[str, int, int] | None) -> None:
    rows = [row(f"b{i}", o, v) for i, (o, v) in enumerate(states)]
    h = compute_history(rows)
    if expected is None:
        assert h is None
        return
    assert h is not None
    kind, older, newer = expected
    assert h.kind.value == kind
    assert h.older.build == f"b{older}" and h.newer.build == f"b{newer}"


def test_history_json_shapes() -> None:
    fixed = compute_history([row("0.27.0.post1", *GOOD), row("0.26.0", *BAD)])
    assert fixed is not None
    assert fixed.to_json() == {
        "kind": "fixed", "last_bad": "0.26.0", "first_good": "0.27.0.post1",
        "compare": "https://github.com/apache/tvm/compare/v0.26.0...v0.27.0"}
    reg = compute_history([row("main", *BAD, kind="source", commit=B),
                           row("0.26.0", *GOOD)])
    assert reg is not None
    j = reg.to_json()
    assert (j["kind"], j["last_good"], j["first_bad"]) == ("regressed", "0.26.0", "main")
    assert j["compare"] == f"https://github.com/apache/tvm/compare/v0.26.0...{B}"
    bis = with_bisection(reg, BisectResult(good=A, bad=B, commit=B, subject="x", steps=3,
                                           kind=HistoryKind.REGRESSED))
    assert bis.to_json()["commit"] == B and bis.to_json()["steps"] == 3


# -- reported version --------------------------------------------------------------------------
VERSION_TABLE: list[tuple[str, ReportedVersion]] = [
    ("I use apache-tvm 0.26.0 on Linux", ReportedVersion("0.26.0")),
    ("pip install apache-tvm==0.25.0.post1", ReportedVersion("0.25.0.post1")),
    ("TVM v0.25", ReportedVersion("0.25")),
    ("- TVM version: 0.26.0", ReportedVersion("0.26.0")),
    ("tvm.__version__ = '0.27.0'", ReportedVersion("0.27.0")),
    ("TVM 0.27.0rc0 on macOS", ReportedVersion("0.27.0rc0")),
    ("apache_tvm-0.26.0-cp311-cp311-manylinux_2_28_x86_64.whl", ReportedVersion("0.26.0")),
    ("### Environment\n\nTVM built from source, commit 1f2e3d4c5b6a\n",
     ReportedVersion(commit="1f2e3d4c5b6a")),
    ("### Environment\n- git hash: a1b2c3d\n- OS: Ubuntu 22.04\n", ReportedVersion(commit="a1b2c3d")),
    ("**Environment**\nTVM v0.25, commit deadbeef12\n",
     ReportedVersion("0.25", "deadbeef12")),
    # should not
    ("Python 3.11 and numpy 1.26.4", ReportedVersion()),
    ("See commit 1f2e3d4c5b6a in the description", ReportedVersion()),  # not under Environment
    ("### Environment\nCUDA 12.4, driver 550.54.15\n", ReportedVersion()),
    ("### Environment\nbuild 1234567\n", ReportedVersion()),  # digits only: not a sha
    ("tvm.relay was removed in 0.20", ReportedVersion()),
    ("mytvm 0.3.1", ReportedVersion()),
    ("### Environment\nOS: Ubuntu\n\n### Steps\ncommit 1f2e3d4c5b6a\n", ReportedVersion()),
]


@pytest.mark.parametrize("text,expected", VERSION_TABLE, ids=[t for t, _ in VERSION_TABLE])
def test_reported_version_table(text: str, expected: ReportedVersion) -> None:
    assert parse_reported_version(text) == expected


BUILDS = [
    BuildInfo("main", kind="source", version="0.28.dev0", commit=A),
    BuildInfo("0.27.0.post1", version="0.27.0.post1", commit="c" * 40),
    BuildInfo("0.26.0", version="0.26.0"),
    BuildInfo("0.25.0", version="0.25.0"),
    BuildInfo("0.25.0.post1", version="0.25.0.post1"),
]
MATCH_TABLE: list[tuple[ReportedVersion, str]] = [
    (ReportedVersion("0.26.0"), "0.26.0"),
    (ReportedVersion("0.26"), "0.26.0"),
    (ReportedVersion("0.25"), "0.25.0.post1"),  # the newest of that version
    (ReportedVersion("0.25.0.post1"), "0.25.0.post1"),
    (ReportedVersion("0.27.0"), "0.27.0.post1"),
    (ReportedVersion(commit="aaaaaaa"), "main"),
    (ReportedVersion(commit="ccccccccc"), "0.27.0.post1"),
    (ReportedVersion("0.24.0"), ""),
    (ReportedVersion("0.28.dev0"), ""),  # main is not a release
    (ReportedVersion(commit="1234abc"), ""),
    (ReportedVersion(), ""),
]


@pytest.mark.parametrize("reported,expected", MATCH_TABLE, ids=[repr(r) for r, _ in MATCH_TABLE])
def test_match_build_table(reported: ReportedVersion, expected: str) -> None:
    assert match_build(reported, BUILDS) == expected


# -- links -------------------------------------------------------------------------------------
def test_links() -> None:
    assert compare_url("abc1234", "def5678") == \
        "https://github.com/apache/tvm/compare/abc1234...def5678"
    assert compare_url("v0.26.0", "v0.27.0", "git@github.com:me/tvm.git") == \
        "https://github.com/me/tvm/compare/v0.26.0...v0.27.0"
    assert repo_web_url("file:///tmp/fixture") == "https://github.com/apache/tvm"
    assert release_tag("0.27.0.post1") == "v0.27.0" and release_tag("v0.26.0") == "v0.26.0"
    for bad in ("a b", "x)](http://evil", "", "../x"):
        with pytest.raises(ValueError):
            compare_url(bad, "v1")


# -- changes on main ---------------------------------------------------------------------------
def main_row(state: tuple[str, str], commit: str) -> MatrixRow:
    return row("main", *state, kind="source", commit=commit)


CHANGE_TABLE: list[tuple[str, tuple[str, str] | None, tuple[str, str], bool, Change]] = [
    ("reproduced -> passed", BAD, GOOD, False, Change.FIXED),
    ("different-failure -> passed", OTHER, GOOD, False, Change.FIXED),
    ("reproduced -> reproduced", BAD, BAD, False, Change.NONE),
    ("reproduced -> inconclusive", BAD, INCONCLUSIVE, False, Change.NONE),
    ("reproduced -> timeout", BAD, TIMEOUT, False, Change.NONE),
    ("reproduced -> other failure", BAD, OTHER, False, Change.NONE),
    ("no old result", None, GOOD, False, Change.NONE),
    ("inconclusive -> passed", INCONCLUSIVE, GOOD, False, Change.NONE),
    ("fixed, still passes", GOOD, GOOD, True, Change.NONE),
    ("fixed, fails again", GOOD, BAD, True, Change.FAILS_AGAIN),
    ("fixed, fails differently", GOOD, OTHER, True, Change.FAILS_AGAIN),
    ("fixed, now inconclusive", GOOD, INCONCLUSIVE, True, Change.NONE),
]


@pytest.mark.parametrize("name,old,new,fixed,expected", CHANGE_TABLE,
                         ids=[t[0] for t in CHANGE_TABLE])
def test_main_change_table(name: str, old: tuple[str, str] | None, new: tuple[str, str],
                           fixed: bool, expected: Change) -> None:
    o = main_row(old, A) if old else None
    assert main_change(o, main_row(new, B), fixed_on_main=fixed) is expected


@pytest.mark.parametrize("verdict,fixed,expected", [
    ("reproduced", False, True), ("different-failure", False, True),
    ("not-reproduced", False, False), ("inconclusive", False, False),
    ("not-reproduced", True, True),
])
def test_should_retest(verdict: str, fixed: bool, expected: bool) -> None:
    assert should_retest(verdict, fixed_on_main=fixed) is expected


def test_change_messages() -> None:
    old, new = main_row(BAD, A), main_row(GOOD, B)
    msg = change_message(Change.FIXED, old, new, label="repro: fixed-on-main",
                         bisect=BisectResult(good=B, bad=A, commit=B, subject="Fix it", steps=3))
    assert f"https://github.com/apache/tvm/compare/{A}...{B}" in msg
    assert "main@bbbbbbb" in msg and "main@aaaaaaa" in msg
    assert "maintainer may close" in msg and "fixed by" in msg and "Fix it" in msg
    again = change_message(Change.FAILS_AGAIN, new, old, label="repro: fixed-on-main")
    assert "fails again" in again and "`repro: fixed-on-main`" in again and "removed" in again
    assert change_message(Change.NONE, old, new, label="x") == ""


@pytest.mark.parametrize("commits,good,bad,expected", [
    (list("abcdefgh"), 0, 7, 3), (list("abcdefgh"), 3, 7, 5), (list("ab"), 0, 1, None),
    (list("abc"), 2, 0, 1),
])
def test_bisect_next(commits: list[str], good: int, bad: int, expected: int | None) -> None:
    assert bisect_next(commits, good, bad) == expected


# -- comment rows ------------------------------------------------------------------------------
def test_matrix_rows_are_inert_and_complete() -> None:
    rows = [main_row(GOOD, B), row("0.26.0`](http://x)@team", *BAD)]
    h = compute_history([main_row(GOOD, B), row("0.26.0", *BAD)])
    lines = render_matrix(rows, h, reported_build="0.26.0`](http://x)@team")
    text = "\n".join(lines)
    assert f"https://github.com/apache/tvm/commit/{B}" in text
    # The whole name is one code span: neither the link nor the mention is live.
    assert "| ``0.26.0`](http://x)@team`` (your version) |" in text
    assert "(your version)" in text
    assert "**History:** fails on `0.26.0`, passes on" in text and "looks fixed on main" in text
    assert "| 1.0 |" in text
    comment = "<!-- reprobot -->\n### head\n\n**Labels:** `x`\n"
    merged = insert_section(comment, lines)
    assert merged.index("**Builds:**") < merged.index("**Labels:**")
    assert merged.startswith("<!-- reprobot -->")


# -- bisection ---------------------------------------------------------------------------------
def probe_for(flip_at: int, old: str, *, skip: tuple[int, ...] = ()):
    seen: list[str] = []
    new = "good" if old == "bad" else "bad"

    def probe(sha: str) -> str:
        seen.append(sha)
        i = int(sha[1:])
        if i in skip:
            return ""
        return new if i >= flip_at else old

    return probe, seen


@pytest.mark.parametrize("n,flip,old,skip", [
    (8, 6, "bad", ()),  # the fixture: bug at commit 1, fixed at 6 of 8
    (8, 2, "bad", ()), (8, 8, "bad", ()), (8, 5, "good", ()), (2, 2, "bad", ()),
    (100, 37, "good", ()), (8, 6, "bad", (4,)), (8, 6, "bad", (5,)),
])
def test_bisect_finds_the_flip(n: int, flip: int, old: str, skip: tuple[int, ...]) -> None:
    from bot.history import bisect_commits

    commits = [f"c{i}" for i in range(1, n + 1)]
    probe, seen = probe_for(flip, old, skip=skip)
    res = bisect_commits(commits, old, probe, max_steps=8)
    assert res.commit == f"c{flip}", (res, seen)
    assert res.steps == len(seen) <= 8
    assert "c1" not in seen and f"c{n}" not in seen  # the ends are known
    assert res.kind.value == ("fixed" if old == "bad" else "regressed")


def test_bisect_stops_at_max_steps_with_a_range() -> None:
    from bot.history import bisect_commits

    commits = [f"c{i}" for i in range(1, 1001)]
    probe, seen = probe_for(700, "bad")
    res = bisect_commits(commits, "bad", probe, max_steps=3)
    assert res.commit == "" and res.steps == 3 == len(seen)
    lo, hi = int(res.bad[1:]), int(res.good[1:])
    assert lo < 700 <= hi and hi - lo < 1000
    assert "narrowed" in bisect_sentence_for(res)


def bisect_sentence_for(res: BisectResult) -> str:
    from bot.history import bisect_sentence

    return bisect_sentence(BisectResult(good="a" * 40, bad="b" * 40, steps=res.steps))


def test_section_goes_above_the_rerun_hint_when_there_is_no_labels_line() -> None:
    comment = "<!-- reprobot -->\n### head\n\nbody\n\n<sub>To run it again ...</sub>\n"
    merged = insert_section(comment, ["**Builds:**", "", "| a |"])
    assert merged.index("**Builds:**") < merged.index("<sub>")
    assert merged.startswith("<!-- reprobot -->") and merged.endswith("</sub>\n")
    assert insert_section("no footer", ["x"]).endswith("x\n\n")
    assert insert_section("same", []) == "same"


def test_with_matrix_orders_rows_marks_the_reported_build_and_places_the_history() -> None:
    from bot.history import with_matrix

    comment = "<!-- reprobot -->\n## ✅ Not reproduced on current TVM\n\nDetails.\n"
    rows = [row("0.26.0", *BAD),
            row("main", *GOOD, kind="source", commit=A, version="0.28.dev0"),
            row("0.27.0.post1", *BAD)]
    view = with_matrix(comment, rows, "[Bug] crash\n\nTVM version: 0.26.0 (pip)\n")
    assert [r.build for r in view.rows] == ["main", "0.27.0.post1", "0.26.0"]
    assert view.history is not None and view.history.kind == "fixed"
    assert "`0.26.0` (your version)" in view.comment
    assert view.comment.index("Details.") < view.comment.index("| build |")
    assert view.comment.count("| build |") == 1
