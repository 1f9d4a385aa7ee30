"""Results over builds: the version matrix, its history, and what changed on main.

Pure: no I/O, no clock, no logging. The shells (``reprobot triage --matrix``, the service's
re-test sweep, ``reprobot bisect``) run the script on builds and hand the rows here.

- :func:`order_builds` / :func:`order_rows`: main (source builds, newest first), then releases
  from the newest version to the oldest.
- :func:`compute_history`: ``fixed`` / ``regressed`` / ``None`` over rows ordered newest first.
  "bad" = the reported failure is seen (verdict ``reproduced``); "good" = the run passed;
  every other row (inconclusive, another failure) is skipped. When the rows flip more than
  once, the newest boundary is the one named.
- :func:`parse_reported_version` / :func:`match_build`: the version a report names ->
  the build to also run.
- :func:`compare_url` / :func:`commit_url`: links into the TVM repository.
- :func:`main_change`: what a re-test on a new main build means for the issue (fixed, fails
  again, nothing), and the messages the bot posts then.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from bot import lazyre
from bot.models import Outcome, Verdict

DEFAULT_REPO_URL = "https://github.com/apache/tvm"
MAIN = "main"

# Labels and messages (constants; the suffix goes after the configured label prefix).
FIXED_ON_MAIN_SUFFIX = "fixed-on-main"
FIXED_ON_MAIN_COLOR = "0e8a16"
FIXED_ON_MAIN_DESCRIPTION = "The repro no longer fails on TVM main: a maintainer may close"

MSG_FIXED_ON_MAIN = (
    "This no longer reproduces on {new_link} (it did on {old_link}): the script now runs "
    "without failing. Changes in between: {compare}.{bisect}\n\n"
    "A maintainer may close this issue if the fix is confirmed."
)
MSG_FAILS_AGAIN = (
    "This fails again on {new_link} (it passed on {old_link}), so the label "
    "`{label}` was removed. Changes in between: {compare}.{bisect}"
)
MSG_BISECT_FIXED = " Bisection: fixed by {commit}."
MSG_BISECT_REGRESSED = " Bisection: regressed in {commit}."
MSG_BISECT_RANGE = " Bisection narrowed it to {compare} ({steps} builds)."


class HistoryKind(StrEnum):
    FIXED = "fixed"
    REGRESSED = "regressed"


@dataclass(frozen=True)
class BuildInfo:
    """What the matrix needs to know of a build (a plain view of the builds registry)."""

    name: str
    kind: str = "release"  # release | source
    version: str = ""
    commit: str = ""
    built_at: str = ""  # ISO-8601 UTC (sorts as text)
    repo_url: str = DEFAULT_REPO_URL

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BuildInfo:
        return cls(
            name=str(d.get("name") or ""),
            kind=str(d.get("kind") or "release"),
            version=str(d.get("version") or ""),
            commit=str(d.get("commit") or ""),
            built_at=str(d.get("built_at") or ""),
            repo_url=str(d.get("repo_url") or d.get("git") or DEFAULT_REPO_URL),
        )


@dataclass(frozen=True)
class MatrixRow:
    """One run of the script on one build."""

    build: str
    version: str = ""
    commit: str = ""
    outcome: str = ""
    verdict: str = ""
    seconds: float | None = None
    kind: str = "release"  # release | source (not in the JSON row; decides link and order)
    built_at: str = ""
    repo_url: str = DEFAULT_REPO_URL

    def to_json(self) -> dict[str, Any]:
        return {
            "build": self.build,
            "version": self.version,
            "commit": self.commit,
            "outcome": self.outcome,
            "verdict": self.verdict,
            "seconds": None if self.seconds is None else round(float(self.seconds), 3),
        }

    @property
    def state(self) -> str:
        """``bad`` (reported failure seen), ``good`` (passed), or ``""`` (neither)."""
        return run_state(self.outcome, self.verdict)

    @property
    def label(self) -> str:
        """How the build is named in text: ``main@abc1234`` or ``0.26.0``."""
        if self.kind == "source" and self.commit:
            return f"{self.build}@{self.commit[:7]}"
        return self.build


@dataclass(frozen=True)
class History:
    kind: HistoryKind
    older: MatrixRow  # last_bad (fixed) / last_good (regressed)
    newer: MatrixRow  # first_good (fixed) / first_bad (regressed)
    commit: str = ""  # bisection: the commit that fixed / broke it
    subject: str = ""
    steps: int | None = None
    narrowed: tuple[str, str] = ("", "")  # bisection ended with a range (good, bad commits)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        if self.kind == HistoryKind.FIXED:
            out: dict[str, Any] = {"kind": "fixed", "last_bad": self.older.build,
                                   "first_good": self.newer.build}
        else:
            out = {"kind": "regressed", "last_good": self.older.build,
                   "first_bad": self.newer.build}
        out["compare"] = boundary_compare_url(self.older, self.newer)
        if self.steps is not None:
            out["commit"] = self.commit or None
            out["steps"] = self.steps
            if self.subject:
                out["subject"] = self.subject
            if not self.commit and any(self.narrowed):
                out["range"] = list(self.narrowed)
        return out


# ---------------------------------------------------------------------------------------------
# Order


_VERSION_PART = lazyre.compile(r"(\d+)|([A-Za-z]+)")


def version_key(version: str) -> tuple[Any, ...]:
    """A sort key for TVM versions: 0.9 < 0.10 < 0.26.0 < 0.27.0rc0 < 0.27.0 < 0.27.0.post1."""
    v = version.strip().lower().lstrip("v")
    m = re.match(r"^(\d+(?:\.\d+)*)(.*)$", v)
    if not m:
        return ((), 0, 0, v)
    release = tuple(int(x) for x in m.group(1).split("."))
    while len(release) > 1 and release[-1] == 0:
        release = release[:-1]
    rest = m.group(2).lstrip(".-_")
    # dev < a < b < rc < final < post
    rank: float = 3
    num = 0
    tag = re.match(r"^(dev|a|alpha|b|beta|rc|c|post)\.?(\d*)", rest)
    if tag:
        rank = {"dev": 0, "a": 1, "alpha": 1, "b": 2, "beta": 2, "rc": 2.5, "c": 2.5,
                "post": 4}[tag.group(1)]
        num = int(tag.group(2) or 0)
    return (release, rank, num, rest)


def _is_main(kind: str) -> bool:
    return kind == "source"


def order_builds(builds: Iterable[BuildInfo]) -> list[BuildInfo]:
    """Main (source builds, newest build first), then releases from newest to oldest."""
    items = list(builds)
    source = sorted((b for b in items if _is_main(b.kind)), key=lambda b: b.built_at,
                    reverse=True)
    source = sorted(source, key=lambda b: (b.name != MAIN, b.name))  # stable: newest first
    release = sorted((b for b in items if not _is_main(b.kind)),
                     key=lambda b: (version_key(b.version or b.name), b.name), reverse=True)
    return source + release


def order_rows(rows: Iterable[MatrixRow]) -> list[MatrixRow]:
    by_key = {(r.build, r.commit): r for r in rows}
    infos = [BuildInfo(r.build, r.kind, r.version, r.commit, r.built_at) for r in by_key.values()]
    return [by_key[(b.name, b.commit)] for b in order_builds(infos)]


# ---------------------------------------------------------------------------------------------
# History


def run_state(outcome: str, verdict: str) -> str:
    if verdict == Verdict.REPRODUCED.value:
        return "bad"
    if outcome == Outcome.PASSED.value:
        return "good"
    return ""


def compute_history(rows: Sequence[MatrixRow]) -> History | None:
    """The newest boundary between "bad" and "good" over rows ordered newest first."""
    decided = [r for r in rows if r.state]
    for newer, older in zip(decided, decided[1:], strict=False):
        if newer.state == older.state:
            continue
        kind = HistoryKind.FIXED if older.state == "bad" else HistoryKind.REGRESSED
        return History(kind=kind, older=older, newer=newer)
    return None


def with_bisection(history: History, result: BisectResult) -> History:
    return replace(history, commit=result.commit, subject=result.subject, steps=result.steps,
                   narrowed=(result.good, result.bad))


# ---------------------------------------------------------------------------------------------
# Links


def repo_web_url(repo_url: str) -> str:
    """``https://github.com/owner/name`` for a GitHub git URL; the default TVM one otherwise."""
    m = re.match(r"^(?:https?://|git@|ssh://git@)github\.com[/:]([\w.-]+)/([\w.-]+?)(?:\.git)?/?$",
                 repo_url.strip())
    if not m:
        return DEFAULT_REPO_URL
    return f"https://github.com/{m.group(1)}/{m.group(2)}"


_REF_RE = lazyre.compile(r"^[\w][\w.\-]*$")


def compare_url(old: str, new: str, repo_url: str = DEFAULT_REPO_URL) -> str:
    """``https://github.com/apache/tvm/compare/old...new`` (refs: commits or tags)."""
    if not (_REF_RE.match(old) and _REF_RE.match(new)):
        raise ValueError(f"not a git ref: {old!r} / {new!r}")
    return f"{repo_web_url(repo_url)}/compare/{old}...{new}"


def commit_url(sha: str, repo_url: str = DEFAULT_REPO_URL) -> str:
    if not re.fullmatch(r"[0-9a-fA-F]{7,40}", sha):
        raise ValueError(f"not a commit sha: {sha!r}")
    return f"{repo_web_url(repo_url)}/commit/{sha}"


def release_tag(version: str) -> str:
    """The git tag of a release: ``0.26.0`` -> ``v0.26.0``; ``0.27.0.post1`` -> ``v0.27.0``."""
    v = version.strip().lstrip("v")
    v = re.sub(r"\.post\d+$", "", v)
    return f"v{v}"


def _ref(row: MatrixRow) -> str:
    if row.commit and re.fullmatch(r"[0-9a-fA-F]{7,40}", row.commit):
        return row.commit if _is_main(row.kind) else release_tag(row.version or row.build)
    return release_tag(row.version or row.build)


def boundary_compare_url(older: MatrixRow, newer: MatrixRow) -> str:
    """Commits for two main builds; release tags otherwise."""
    if _is_main(older.kind) and _is_main(newer.kind) and older.commit and newer.commit:
        return compare_url(older.commit, newer.commit, older.repo_url)
    old = older.commit if _is_main(older.kind) and older.commit else _ref(older)
    new = newer.commit if _is_main(newer.kind) and newer.commit else _ref(newer)
    return compare_url(old, new, newer.repo_url)


# ---------------------------------------------------------------------------------------------
# The version a report names


@dataclass(frozen=True)
class ReportedVersion:
    version: str = ""
    commit: str = ""

    def __bool__(self) -> bool:
        return bool(self.version or self.commit)


_VERSION = r"v?(?P<v>\d+\.\d+(?:\.\d+)?(?:\.?(?:dev|rc|post|a|b)\d*)?)"
_VERSION_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # pip spellings: "apache-tvm==0.26.0", "apache-tvm 0.26.0", "apache_tvm-0.26.0-..."
    ("pip", lazyre.compile(r"\bapache[-_]tvm(?:[-_]cu\d+)?\s*(?:==|\s|-|:)\s*" + _VERSION, re.I)),
    # "TVM v0.25", "TVM version: 0.26.0", "tvm.__version__ = 0.26.0", "TVM Version 0.25.0"
    ("tvm", lazyre.compile(r"(?<![\w.-])tvm(?:\.__version__)?(?:\s+version)?\s*(?:[:=]|is)?\s*"
                       r"['\"]?" + _VERSION + r"(?![\w.])", re.I)),
)
_ENV_HEADING = lazyre.compile(r"^\s{0,3}(?:#{1,6}\s*|\*\*)?\s*environment\b.*$", re.I | re.M)
_NEXT_HEADING = lazyre.compile(r"^\s{0,3}(?:#{1,6}\s+\S|\*\*[^*]+\*\*\s*$)", re.M)
_SHA = lazyre.compile(r"(?<![0-9a-zA-Z])(?:commit|sha|hash|git[ _-]?(?:commit|hash|rev))?"
                  r"[\s:=@#]*(?P<sha>[0-9a-f]{7,40})(?![0-9a-zA-Z])", re.I)


def _environment_section(text: str) -> str:
    m = _ENV_HEADING.search(text)
    if m is None:
        return ""
    rest = text[m.end():]
    nxt = _NEXT_HEADING.search(rest)
    return rest[: nxt.start()] if nxt else rest


def parse_reported_version(text: str) -> ReportedVersion:
    """The TVM version (or commit) a report says it was seen on; empty when none."""
    version = ""
    for _name, rule in _VERSION_RULES:
        m = rule.search(text)
        if m:
            version = m.group("v")
            break
    commit = ""
    env = _environment_section(text)
    for m in _SHA.finditer(env):
        sha = m.group("sha")
        # a sha has letters and digits; "1234567" or "deadbee"-free words are not commits
        if re.search(r"[a-f]", sha, re.I) and re.search(r"\d", sha):
            commit = sha.lower()
            break
    return ReportedVersion(version=version, commit=commit)


def match_build(reported: ReportedVersion, builds: Iterable[BuildInfo]) -> str:
    """The build to also run for the reported version: '' when none matches.

    A commit matches a build at that commit; a version matches a release build of that
    version ("0.25" matches 0.25.0 and 0.25.0.post1, the newest of them).
    """
    items = list(builds)
    if reported.commit:
        for b in items:
            if b.commit and b.commit.lower().startswith(reported.commit):
                return b.name
    if not reported.version:
        return ""
    want = version_key(reported.version)
    candidates = []
    for b in items:
        if _is_main(b.kind):
            continue
        have = version_key(b.version or b.name)
        if have[0] == want[0] and (want[1:3] == (3, 0) or have[1:3] == want[1:3]):
            candidates.append(b)
    if not candidates:
        return ""
    return order_builds(candidates)[0].name


# ---------------------------------------------------------------------------------------------
# Re-test on a new main build: what changed


class Change(StrEnum):
    NONE = "none"
    FIXED = "fixed"  # failed on the old main, passes on the new one
    FAILS_AGAIN = "fails-again"  # was marked fixed on main, fails again


RETEST_VERDICTS_DEFAULT = (Verdict.REPRODUCED.value, Verdict.DIFFERENT_FAILURE.value)


def should_retest(verdict: str, verdicts: Iterable[str] = RETEST_VERDICTS_DEFAULT,
                  *, fixed_on_main: bool = False) -> bool:
    """An open issue is re-tested on a new main build when its latest main verdict is one of
    ``verdicts``, or when it is marked fixed on main (to see it fail again)."""
    return fixed_on_main or verdict in set(verdicts)


def main_change(old: MatrixRow | None, new: MatrixRow, *, fixed_on_main: bool,
                verdicts: Iterable[str] = RETEST_VERDICTS_DEFAULT) -> Change:
    """What the new main run means: fixed, fails again, or nothing to say."""
    failing = {v for v in verdicts if v != Verdict.NOT_REPRODUCED.value}
    if fixed_on_main:
        if new.verdict in failing or new.state == "bad":
            return Change.FAILS_AGAIN
        return Change.NONE
    if old is None:
        return Change.NONE
    if (old.verdict in failing or old.state == "bad") and new.state == "good":
        return Change.FIXED
    return Change.NONE


@dataclass(frozen=True)
class BisectResult:
    """Where a bisection ended: ``commit`` when one commit is left, else the narrowed range."""

    good: str  # newest commit known good (fixed: the first good side)
    bad: str
    commit: str = ""
    subject: str = ""
    steps: int = 0
    kind: HistoryKind = HistoryKind.FIXED

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "commit": self.commit or None, "subject": self.subject,
                "steps": self.steps, "good": self.good, "bad": self.bad}


def bisect_sentence(result: BisectResult | None, repo_url: str = DEFAULT_REPO_URL) -> str:
    if result is None:
        return ""
    if result.commit:
        what = f"[`{result.commit[:10]}`]({commit_url(result.commit, repo_url)})"
        if result.subject:
            what += " " + _subject(result.subject)
        tpl = MSG_BISECT_FIXED if result.kind == HistoryKind.FIXED else MSG_BISECT_REGRESSED
        return tpl.format(commit=what)
    old, new = ((result.bad, result.good) if result.kind == HistoryKind.FIXED
                else (result.good, result.bad))
    link = compare_url(old, new, repo_url)
    return MSG_BISECT_RANGE.format(compare=link, steps=result.steps)


def _span(text: str, limit: int) -> str:
    """An inline code span through the one escaping module (``bot.mdsafe``)."""
    from bot.mdsafe import code_span

    return code_span(text, limit=limit)


def _subject(subject: str) -> str:
    """A commit subject (trusted repository, still made inert): inline code, one line."""
    return _span(subject, 120)


def _code(text: str, limit: int = 60) -> str:
    """Inline code for a table cell or a sentence (the render module's escaping; no pipes)."""
    return (_span(text, limit) or "—").replace("|", "\\|")


def _build_link(row: MatrixRow) -> str:
    if row.commit and re.fullmatch(r"[0-9a-fA-F]{7,40}", row.commit):
        return f"[{_code(row.label)}]({commit_url(row.commit, row.repo_url)})"
    return _code(row.label)


def change_message(change: Change, old: MatrixRow, new: MatrixRow, *, label: str,
                   bisect: BisectResult | None = None) -> str:
    """The one short comment posted on a change (notifies the issue's subscribers)."""
    if change == Change.NONE:
        return ""
    compare = (compare_url(old.commit, new.commit, new.repo_url)
               if old.commit and new.commit else "(unknown commits)")
    args = {"new_link": _build_link(new), "old_link": _build_link(old), "compare": compare,
            "bisect": bisect_sentence(bisect, new.repo_url), "label": label}
    if change == Change.FIXED:
        return MSG_FIXED_ON_MAIN.format(**args)
    return MSG_FAILS_AGAIN.format(**args)


# ---------------------------------------------------------------------------------------------
# Bisection steps (the shell builds and runs; this decides where to look next)


def bisect_next(commits: Sequence[str], good_index: int, bad_index: int) -> int | None:
    """Index of the next commit to try between two known ends of ``commits`` (oldest first);
    None when they are neighbours (one commit is left)."""
    lo, hi = sorted((good_index, bad_index))
    if hi - lo <= 1:
        return None
    return (lo + hi) // 2


# ---------------------------------------------------------------------------------------------
# The comment's rows (added below the main result; every value made inert)

HISTORY_FIXED = "**History:** fails on {older}, passes on {newer}: looks fixed{where}. {link}"
HISTORY_REGRESSED = "**History:** passes on {older}, fails on {newer}: a regression{where}. {link}"


def render_matrix(rows: Sequence[MatrixRow], history: History | None,
                  reported_build: str = "") -> list[str]:
    """Markdown lines: one row per build run (build, commit link, outcome, seconds) and the
    history line. Values that come from outside (build names, versions) go through the
    render module's escaping."""
    if not rows:
        return []
    out = ["**Builds:**", "", "| build | commit | outcome | verdict | seconds |",
           "|---|---|---|---|---|"]
    for r in rows:
        name = _code(r.build)
        if r.build == reported_build:
            name += " (your version)"
        if r.commit and re.fullmatch(r"[0-9a-fA-F]{7,40}", r.commit):
            commit = f"[`{r.commit[:7]}`]({commit_url(r.commit, r.repo_url)})"
        else:
            commit = _code(r.version, limit=40)
        secs = "—" if r.seconds is None else f"{float(r.seconds):.1f}"
        out.append(f"| {name} | {commit} | `{_word(r.outcome)}` | `{_word(r.verdict)}` "
                   f"| {secs} |")
    out.append("")
    if history is not None:
        out.append(history_line(history))
    return out


def _word(value: str) -> str:
    return re.sub(r"[^a-z-]", "", value.lower()) or "—"


def history_line(history: History) -> str:
    older = _build_link(history.older)
    newer = _build_link(history.newer)
    where = " on main" if _is_main(history.newer.kind) else f" in {newer}"
    link = f"[Changes between them]({boundary_compare_url(history.older, history.newer)})."
    tpl = HISTORY_FIXED if history.kind == HistoryKind.FIXED else HISTORY_REGRESSED
    line = tpl.format(older=older, newer=newer, where=where, link=link)
    if history.steps is not None:
        result = BisectResult(good=history.narrowed[0], bad=history.narrowed[1],
                              commit=history.commit, subject=history.subject,
                              steps=history.steps, kind=history.kind)
        if result.commit or (result.good and result.bad):
            line += bisect_sentence(result, history.newer.repo_url)
    return line


def insert_section(comment: str, lines: Sequence[str]) -> str:
    """Put the matrix section into the rendered comment, above its footer (the labels line or
    the re-run hint), or at its end."""
    if not lines:
        return comment
    block = "\n".join(lines).rstrip("\n") + "\n\n"
    for anchor in ("\n**Labels:**", "\n<sub>"):
        idx = comment.rfind(anchor)
        if idx >= 0:
            return comment[: idx + 1] + block + comment[idx + 1:]
    return comment.rstrip("\n") + "\n\n" + block


@dataclass(frozen=True)
class MatrixView:
    """One issue's results over builds, ready for the comment and the JSON."""

    rows: tuple[MatrixRow, ...]  # in order: main builds first, then releases newest first
    history: History | None
    comment: str  # the main result's comment with the table and the history line in it


def with_matrix(comment: str, rows: Iterable[MatrixRow], issue_text: str) -> MatrixView:
    """The main result's ``comment`` with one row per build below it and the history line; the
    build the report names (``issue_text``: title and body) is marked. Shared by
    ``reprobot triage --matrix`` and the triage service."""
    ordered = order_rows(rows)
    history = compute_history(ordered)
    reported = match_build(parse_reported_version(issue_text),
                           [BuildInfo(r.build, r.kind, r.version, r.commit) for r in ordered])
    return MatrixView(tuple(ordered), history,
                      insert_section(comment, render_matrix(ordered, history, reported)))


def row_from_build(build: Any, outcome: str, verdict: str, seconds: float | None) -> MatrixRow:
    """A matrix row from a build (anything with name/kind/version/commit/built_at) and a run."""
    return MatrixRow(
        build=str(getattr(build, "name", "") or ""),
        version=str(getattr(build, "version", "") or ""),
        commit=str(getattr(build, "commit", "") or ""),
        outcome=outcome,
        verdict=verdict,
        seconds=seconds,
        kind=str(getattr(build, "kind", "") or "release"),
        built_at=str(getattr(build, "built_at", "") or ""),
    )


def row_from_json(d: Mapping[str, Any]) -> MatrixRow:
    secs = d.get("seconds")
    return MatrixRow(
        build=str(d.get("build") or ""), version=str(d.get("version") or ""),
        commit=str(d.get("commit") or ""), outcome=str(d.get("outcome") or ""),
        verdict=str(d.get("verdict") or ""),
        seconds=float(secs) if isinstance(secs, int | float) else None,
        kind=str(d.get("kind") or "release"), built_at=str(d.get("built_at") or ""),
    )


def row_to_store(row: MatrixRow) -> dict[str, Any]:
    """The JSON row plus what ordering and links need (for Redis)."""
    return {**row.to_json(), "kind": row.kind, "built_at": row.built_at}


def bisect_commits(
    commits: Sequence[str],
    old_state: str,
    probe: Callable[[str], str],
    *,
    max_steps: int = 8,
) -> BisectResult:
    """Bisect ``commits`` (oldest first; the first one is the old end, known ``old_state``;
    the last one the new end, known the other state) with ``probe(sha) -> "bad" | "good" | ""``.

    A commit whose run is neither good nor bad is skipped (dropped from the range, as
    ``git bisect skip``). Stops when one commit is left or after ``max_steps`` probes; the
    result names the commit where the state flipped, or the narrowed range.
    """
    if old_state not in ("bad", "good"):
        raise ValueError(f"old_state must be bad or good, not {old_state!r}")
    if len(commits) < 2:
        raise ValueError("bisection needs at least the two ends")
    kind = HistoryKind.FIXED if old_state == "bad" else HistoryKind.REGRESSED
    new_state = "good" if old_state == "bad" else "bad"
    span = list(commits)
    lo, hi, steps = 0, len(span) - 1, 0
    while steps < max_steps:
        mid = bisect_next(span, lo, hi)
        if mid is None:
            break
        state = probe(span[mid])
        steps += 1
        if state == old_state:
            lo = mid
        elif state == new_state:
            hi = mid
        else:
            del span[mid]  # neither: skip it
            hi -= 1
    old_end, new_end = span[lo], span[hi]
    commit = new_end if hi - lo == 1 else ""
    good, bad = (new_end, old_end) if kind == HistoryKind.FIXED else (old_end, new_end)
    return BisectResult(good=good, bad=bad, commit=commit, steps=steps, kind=kind)
