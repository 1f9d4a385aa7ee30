"""Stage 7: the one comment the bot writes on an issue, and its labels.

Pure. The comment starts with :data:`bot.labels.MARKER` so later runs edit it in place. It leads
with one heading a maintainer can act on (the verdict and what happened, in plain words), then
says each fact once: the error, what the report showed when that differs, why the run cannot
tell (inconclusive), how the script ran, and then, folded away, the environment, the script and
its output. The whole comment stays under GitHub's 65,536-character limit (the output tails are
cut first, then the script).

Every string the bot did not write itself reaches the comment through :mod:`bot.mdsafe` (code
blocks, code spans, escaped prose), so nothing a stranger typed or printed becomes live markdown,
HTML, a link, a mention or an issue reference.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot import lazyre
from bot.builds import BuildInfo, commit_url
from bot.classify import normalize_paths
from bot.labels import (
    API_MISMATCH_ASK,
    DEFAULT_PREFIX,
    INFRA_MESSAGE,
    MARKER,
    MISSING_DEPENDENCY_NOTE,
    NEEDS_GPU_NOTE,
    NEEDS_GPU_SUFFIX,
    NO_REPRO_ASK,
    OUTCOME_LABELS,
    RERUN_HINT,
    UNCHECKED_RESULT_NOTE,
    VERDICT_LABELS,
    is_own_label,
)
from bot.mdsafe import code_block, code_span, escape_text, prose, visible
from bot.models import Outcome, Repro, Triage, Verdict
from bot.runs import ran_clean

__all__ = [
    "is_own_label",
    "labels_for",
    "render_comment",
    "render_status",
    "describe_blocks",
    "MAX_COMMENT",
]

GITHUB_LIMIT = 65_536
MAX_COMMENT = 60_000  # what we aim for: a margin under GitHub's limit
MIN_OUTPUT = 4_000  # the output keeps at least this much, even next to a huge script
_LOOK_AT = 4 * MAX_COMMENT  # of each output tail, only the end this long is rendered
GPU_DEVICES = ("cuda", "rocm", "vulkan", "metal", "opencl")

OUTCOME_TEXT = {
    Outcome.CRASH: "the process crashed",
    Outcome.INTERNAL_ERROR: "a TVM internal check failed",
    Outcome.TVM_ERROR: "TVM raised an error",
    Outcome.WRONG_RESULT: "the script's own check of the result failed",
    Outcome.PYTHON_ERROR: "the script's own code failed (not TVM)",
    Outcome.API_MISMATCH: "the script uses a TVM API that no longer exists",
    Outcome.MISSING_DEPENDENCY: "the script needs a package or file that the worker does not have",
    Outcome.NEEDS_GPU: "the script needs a GPU, and this worker has none",
    Outcome.RESOURCE_LIMIT: "the run hit a sandbox limit before it could show the problem",
    Outcome.TIMEOUT: "the script did not finish within the time limit",
    Outcome.PASSED: "the script ran without failing",
    Outcome.NO_REPRO: "no runnable script in the issue",
    Outcome.INFRA_ERROR: "the bot could not run the script (our side, not yours)",
}

# The first line: the verdict, and what happened in plain words (what a maintainer acts on).
_HEADLINE = {
    Verdict.REPRODUCED: "🐞 Reproduced on the current TVM: {what}, as reported",
    Verdict.DIFFERENT_FAILURE: "⚠️ Fails differently on the current TVM: {what}, not as reported",
    Verdict.NOT_REPRODUCED: (
        "✅ Not reproduced: the script runs without failing on the current TVM, "
        "so the reported problem may be fixed"
    ),
    Verdict.INCONCLUSIVE: "❔ Inconclusive: {what}",
}
# Not reproduced by a run that failed: TVM refuses now what the report says it took silently.
_REFUSED_NOW = ("✅ Not reproduced: {what} where the report says it went through silently, so "
                "the reported problem may be fixed")

# What the environment probe found, in plain words (keys as ``tasks/probe_script.py`` names them).
# TVM's version and commit are on the run line, not repeated here.
ENV_KEYS = (
    ("llvm_version", "LLVM"),
    ("cuda_enabled", "CUDA"),
    ("cuda_version", "CUDA version"),
    ("gpu", "GPU"),
    ("gpu_driver", "GPU driver"),
    ("python", "Python"),
    ("numpy", "NumPy"),
    ("os", "OS"),
    ("cpu", "CPU"),
    ("tvm_error", "TVM import error"),
)
_ON_RUN_LINE = frozenset({"tvm_version", "tvm_commit", "tvm_commit_date"})
_CUDA_WORDS = {
    "yes": "built into this TVM, and the worker has a GPU driver",
    "built-in, no driver": "built into this TVM, but this worker has no GPU driver",
    "no": "not built into this TVM",
}

# Details from the classifier that only restate the heading or the error line: not shown again.
_RESTATING_DETAILS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("the heading says it", lazyre.compile(r"A TVM internal check failed\.")),
    ("the heading says it", lazyre.compile(r"The script's own check of the result failed\.")),
    ("the error line names it", lazyre.compile(r"TVM raised `[^`]*`\.")),
    ("the error line names it", lazyre.compile(r"The script itself raised `[^`]*` \(not TVM\)\.")),
    ("the error line names it", lazyre.compile(r"The process was killed by [A-Z0-9 ]+\.", re.I)),
    ("the error line names it", lazyre.compile(r"`[^`]*` is not installed on this worker\.")),
    (
        "the run line says it",
        lazyre.compile(r"The script did not finish within the wall-time limit; it was stopped\."),
    ),
)
# Error lines that only restate how the run ended (the run line says that).
_RUN_ONLY_SIGNATURE_RE = lazyre.compile(
    r"exit code -?\d+|timed out after \d+ s|killed by \w+ \(signal \d+\)|killed by SIGKILL"
)


# ---------------------------------------------------------------------------------------------
# Labels


def labels_for(
    outcome: Outcome,
    verdict: Verdict,
    needs: Iterable[str] = (),
    *,
    prefix: str = DEFAULT_PREFIX,
) -> tuple[str, ...]:
    """The bot's labels for one result: outcome, verdict, and needs-gpu when relevant."""
    names = [OUTCOME_LABELS[outcome].name(prefix), VERDICT_LABELS[verdict].name(prefix)]
    gpu = f"{prefix}{NEEDS_GPU_SUFFIX}"
    if any(n in GPU_DEVICES for n in needs) and gpu not in names:
        names.append(gpu)
    return tuple(names)


# ---------------------------------------------------------------------------------------------
# Where the script came from, in words


_BLOCK_RE = lazyre.compile(r"(body|title|comment(\d+))(?:#(\d+)|:(\w+))")
_HOW = {"unfenced": "not in a code block", "prose": "inline code", "quote": "a quote"}


def describe_blocks(blocks: Iterable[str]) -> str:
    """``("body#0", "body#1", "comment2#0")`` -> "the issue text, code blocks 1 and 2; comment 2,
    code block 1" (safe markdown: labels the bot does not know are shown as code)."""
    groups: dict[str, list[str]] = {}
    for label in blocks:
        m = _BLOCK_RE.fullmatch(label)
        if m is None:
            groups.setdefault(code_span(label), [])
            continue
        where = (
            "the issue text" if m.group(1) == "body"
            else "the title" if m.group(1) == "title"
            else f"comment {int(m.group(2))}"
        )
        items = groups.setdefault(where, [])
        if m.group(3) is not None:
            items.append(str(int(m.group(3)) + 1))
        else:
            items.append(_HOW.get(m.group(4), escape_text(m.group(4))))
    parts = []
    for where, items in groups.items():
        numbers = [i for i in items if i.isdigit()]
        others = [i for i in items if not i.isdigit()]
        text = where
        if numbers:
            word = "code block" if len(numbers) == 1 else "code blocks"
            listed = numbers[0] if len(numbers) == 1 else ", ".join(numbers[:-1]) + " and " + numbers[-1]
            text += f", {word} {listed}"
        if others:
            text += " (" + ", ".join(others) + ")"
        parts.append(text)
    return "; ".join(parts) or "the issue"


# ---------------------------------------------------------------------------------------------
# The comment


def render_comment(t: Triage, *, label_prefix: str = DEFAULT_PREFIX) -> str:
    """The whole comment for one triage result (markdown, marker first).

    ``label_prefix`` is accepted for callers that pass it; the labels themselves are set on the
    issue, not repeated in the comment.
    """
    head = "### " + _headline(t)
    body = _body(t)
    env = _environment(t.environment, t.build)
    foot = f"<sub>{RERUN_HINT}</sub>"

    def assemble(script: str, out: str) -> str:
        parts = [MARKER, head, ""]
        for block in (*body, *env, script, out):
            if block:
                parts += [block, ""]
        parts.append(foot)
        return "\n".join(parts) + "\n"

    script_text = t.repro.script if t.repro.found else ""
    # Only the end of each output tail can fit: what is before it is never looked at.
    out_raw = t.run.stdout_tail if t.run else ""
    err_raw = t.run.stderr_tail if t.run else ""
    out_skipped = max(0, len(out_raw) - _LOOK_AT)
    err_skipped = max(0, len(err_raw) - _LOOK_AT)
    stdout = visible(normalize_paths(out_raw[out_skipped:]))
    stderr = visible(normalize_paths(err_raw[err_skipped:]))

    empty_out = _output_details(t, "", "")
    room = MAX_COMMENT - len(assemble(_script_details(script_text, t.repro), empty_out)) - 200
    if room < MIN_OUTPUT and script_text:
        # A huge script: cut it (keeping its start) so the output still gets MIN_OUTPUT.
        script_text = _cut_tail(script_text, max(1_000, len(script_text) - (MIN_OUTPUT - room)))
        room = MAX_COMMENT - len(assemble(_script_details(script_text, t.repro), empty_out)) - 200
    room = max(room, 0)
    if len(stdout) + len(stderr) > room:
        # The output tails are cut first, keeping their ends; stderr gets the larger share.
        out_room = min(len(stdout), room // 4)
        stderr = _cut_head(stderr, room - out_room, err_skipped)
        stdout = _cut_head(stdout, room - len(stderr), out_skipped)
    else:
        stderr = _cut_head(stderr, len(stderr) + 60, err_skipped)
        stdout = _cut_head(stdout, len(stdout) + 60, out_skipped)
    comment = assemble(_script_details(script_text, t.repro), _output_details(t, stdout, stderr))
    if len(comment) > GITHUB_LIMIT - 100:  # last resort: never exceed GitHub's limit
        comment = assemble(_script_details(_cut_tail(script_text, 1_000), t.repro), empty_out)
    return comment


def _headline(t: Triage) -> str:
    if t.outcome == Outcome.INFRA_ERROR:
        return "🛠️ Inconclusive: " + OUTCOME_TEXT[Outcome.INFRA_ERROR]
    if t.verdict == Verdict.NOT_REPRODUCED and t.outcome != Outcome.PASSED:
        # (TVM now refuses what the report says it accepted: the run failed, not as reported)
        return _REFUSED_NOW.format(what=OUTCOME_TEXT[t.outcome])
    return _HEADLINE[t.verdict].format(what=OUTCOME_TEXT[t.outcome])


def _body(t: Triage) -> list[str]:
    """The paragraphs under the heading, each fact once."""
    cls = t.classification
    out: list[str] = []
    if t.outcome == Outcome.NO_REPRO:
        reason = (cls.detail or t.repro.reason or "").strip()  # a fragment's reason: classify
        out.append(prose(reason) if reason else "The bot found no runnable Python script in this issue.")
        if NO_REPRO_ASK not in reason and "minimal" not in reason.lower():
            out.append(NO_REPRO_ASK)
        return out
    if t.outcome == Outcome.INFRA_ERROR:
        out.append(INFRA_MESSAGE)
        if cls.signature:
            out.append(f"What failed on our side: {code_span(cls.signature)}")
        return out

    signature = cls.signature.strip()
    show_signature = bool(signature) and not _RUN_ONLY_SIGNATURE_RE.fullmatch(signature)
    if show_signature:
        out.append(f"**{_signature_word(t.outcome)}:** {code_span(signature)}")
    detail = cls.detail.strip()
    if detail and not any(rx.fullmatch(detail) for _, rx in _RESTATING_DETAILS):
        out.append(prose(detail))
    if cls.frames:  # a crash outside TVM: the frames that matter, not the whole backtrace
        out.append(code_block("\n".join(cls.frames)))
    reported = _reported_line(t)
    if reported:
        out.append(reported)
    why = _why(t)
    if why:
        out.append(why)
    extra = {
        # (not when the report is about that very error: then the run shows it)
        Outcome.API_MISMATCH: API_MISMATCH_ASK if t.verdict != Verdict.REPRODUCED else "",
        Outcome.MISSING_DEPENDENCY: (
            MISSING_DEPENDENCY_NOTE if "not in the issue" not in cls.detail else ""
        ),
        Outcome.NEEDS_GPU: NEEDS_GPU_NOTE if not cls.detail else "",
    }.get(t.outcome, "")
    if extra:
        out.append(extra)
    if (
        t.outcome == Outcome.PASSED
        and t.reported is not None
        and t.reported.outcome == Outcome.WRONG_RESULT
        and not _CHECKS_RESULT_RE.search(t.repro.script)
    ):
        out.append(UNCHECKED_RESULT_NOTE)
    note = (t.repro.reason or "").strip()
    if note and (t.outcome not in (Outcome.PASSED, Outcome.MISSING_DEPENDENCY)
                 or t.repro.cut_at):  # (a cut-off script's pass is why it is inconclusive)
        # e.g. the script loads a model file the issue does not include.
        out.append("Note: " + prose(note))
    runs = _runs_line(t)
    if runs:
        out.append(runs)
    out.append(_run_line(t, signature if show_signature else ""))
    return out


def _runs_line(t: Triage) -> str:
    """How many runs were made, when the report's failure is intermittent and so more than one."""
    run = t.run
    if run is None or run.runs <= 1:
        return ""
    if run.rerun_for == "varying":
        if run.output_varied:
            return ("The report says the printed values change from run to run: the script ran "
                    f"{run.runs} times on the same input and printed different values.")
        return ("The report says the printed values change from run to run: the script ran "
                f"{run.runs} times and printed the same output each time.")
    if ran_clean(run):
        return (f"The report says the failure comes only sometimes: the script ran {run.runs} "
                f"times and passed every time.")
    passed = run.runs - 1
    return (f"The report says the failure comes only sometimes: the script passed "
            f"{passed} time{'s' if passed > 1 else ''} before this run failed (run {run.runs}).")


# A script that checks its own result (so that a pass means the result is right).
_CHECKS_RESULT_RE = lazyre.compile(
    r"^\s*assert\b|assert_allclose|assert_equal|assert_array|allclose\(|array_equal\(|"
    r"tvm\.testing\.|\braise\b|sys\.exit\(|\bexit\(",
    re.M,
)


def _signature_word(outcome: Outcome) -> str:
    return {
        Outcome.CRASH: "Crash",
        Outcome.RESOURCE_LIMIT: "Limit",
        Outcome.WRONG_RESULT: "Failed check",
    }.get(outcome, "Error")


def _reported_line(t: Triage) -> str:
    """What the report showed, when that is not what the run showed (said once)."""
    rep = t.reported
    if rep is None or rep.outcome in (None, Outcome.NO_REPRO) or t.verdict == Verdict.REPRODUCED:
        return ""
    said = rep.signature.strip()
    if said and said == t.classification.signature.strip():
        return ""
    what = OUTCOME_TEXT.get(rep.outcome, rep.outcome.value) if rep.outcome else ""
    if said:
        return f"**The report shows:** {code_span(said)}"
    if rep.outcome == Outcome.PASSED and rep.about_speed:
        return ("**The report says:** the script runs, too slowly. One run on a shared worker "
                "cannot judge speed, so the bot does not.")
    if rep.outcome == Outcome.PASSED and rep.about_acceptance:
        return ("**The report says:** TVM accepts this without an error, and it should "
                "refuse it.")
    if rep.outcome == Outcome.PASSED:
        return "**The report says:** the script worked for the reporter."
    return f"**The report says:** {what}."


def _why(t: Triage) -> str:
    """The comparison's reason, only when it adds to the heading (where two failures match)."""
    why = next(
        (e for e in reversed(t.evidence) if not e.startswith(("reported:", "observed:"))), ""
    )
    if t.verdict == Verdict.REPRODUCED and why.startswith("same kind of failure at the same place"):
        place = why.split(":", 1)[1] if ":" in why else ""
        return "Same kind of failure at the same place: " + code_span(place) if place.strip() else ""
    if t.verdict == Verdict.REPRODUCED and why.startswith("the issue quotes no error"):
        return "The issue quotes no error message; the run fails inside TVM."
    return ""


def _run_line(t: Triage, shown_signature: str) -> str:
    """How the script ran, on one line: where it came from, how it ended, on which TVM."""
    facts: list[str] = []
    if t.repro.found:
        src = "the script from " + describe_blocks(t.repro.blocks)
        if t.repro.args:
            src += " with arguments " + code_span(" ".join(t.repro.args))
        facts.append(src)
    run = t.run
    if run is not None:
        if run.timed_out:
            status = "stopped at the time limit"
        elif run.signal is not None:
            status = f"killed by signal {run.signal}"
        elif run.exit_code is not None:
            status = f"exit code {run.exit_code}"
        else:
            status = "stopped"
        said = shown_signature.lower()
        if (run.signal is not None and f"signal {run.signal}" in said) or status in said:
            status = ""
        took = f"{run.seconds:.1f} s"
        facts.append(f"{status} after {took}" if status else f"took {took}")
        if run.sandbox:
            facts.append(escape_text(run.sandbox) + " sandbox")
    env = dict(t.environment)
    build = t.build
    if build is not None and build.commit:
        env["tvm_commit"] = build.commit  # from git (or the wheel), not the probe's guess
    version = str(env.get("tvm_version", "") or (build.version if build else "")).strip()
    if version:
        tvm = "TVM " + escape_text(version)
        if build is not None and build.kind != "ad-hoc":
            tvm += " on build " + code_span(build.name)
        commit = str(env.get("tvm_commit", "")).strip()
        if commit:
            tvm += " (commit " + _commit_link(build, commit, 12) + ")"
        facts.append(tvm)
    return "**Run:** " + " · ".join(facts) if facts else ""


def _commit_link(build: BuildInfo | None, commit: str, width: int) -> str:
    """The commit as code, linked to its page when the build's repository has one."""
    url = commit_url(build.source, commit) if build is not None else ""
    span = code_span(commit[:width])
    return f"[{span}]({url})" if url else span


def _build_row(build: BuildInfo) -> str:
    """``- Build: `main` (source build, git: URL@main, built …) at commit <full sha link>``."""
    what = {"source": "source build", "release": "release"}.get(build.kind, build.kind)
    row = f"- Build: {code_span(build.name)} ({escape_text(what)}"
    if build.source:
        row += ", " + code_span(build.source)
    if build.built_at:
        row += ", built " + escape_text(build.built_at)
    row += ")"
    if build.commit:
        row += " at commit " + _commit_link(build, build.commit, 40)
    return row


def _environment(env: dict[str, str], build: BuildInfo | None = None) -> list[str]:
    rows: list[str] = [_build_row(build)] if build is not None and build.kind != "ad-hoc" else []
    known = dict(ENV_KEYS)
    for key, title in ENV_KEYS:
        value = str(env.get(key, "")).strip()
        if not value:
            continue
        if key == "cuda_enabled":
            rows.append(f"- {title}: " + (_CUDA_WORDS.get(value) or escape_text(value)))
        else:
            rows.append(f"- {title}: {escape_text(value)}")
    for key in sorted(env):
        value = str(env[key]).strip()
        if key not in known and key not in _ON_RUN_LINE and value:
            rows.append(f"- {escape_text(key)}: {escape_text(value)}")
    if not rows:
        return []
    return ["<details><summary>Environment</summary>", "\n".join(rows), "</details>"]


def _cut_head(text: str, budget: int, skipped: int = 0) -> str:
    """Keep the end of an output tail within ``budget`` characters (``skipped`` characters
    before ``text`` were already left out)."""
    if len(text) <= budget and not skipped:
        return text
    if budget <= 60:
        return ""
    keep = min(len(text), budget - 60)
    cut = len(text) - keep + skipped
    return f"[… {cut} earlier characters cut …]\n" + text[len(text) - keep :]


def _cut_tail(text: str, budget: int) -> str:
    """Keep the start of a script within ``budget`` characters."""
    if len(text) <= budget:
        return text
    keep = max(0, budget - 60)
    return text[:keep] + f"\n# [… {len(text) - keep} more characters cut …]\n"


def _script_details(script: str, repro: Repro) -> str:
    if not repro.found:
        return ""
    n = len(repro.script.splitlines())
    return "\n".join(
        [
            f"<details><summary>Script that was run ({n} lines)</summary>",
            "",
            f"sha256 `{repro.sha256}`",
            "",
            code_block(script, "python"),
            "",
            "</details>",
        ]
    )


def _output_details(t: Triage, stdout: str, stderr: str) -> str:
    if t.run is None:
        return ""
    parts = ["<details><summary>Output</summary>", ""]
    if t.run.stderr_truncated or t.run.stdout_truncated:
        parts += ["Only the end of the output was kept.", ""]
    if stderr.strip():
        parts += ["stderr (end):", "", code_block(stderr.rstrip("\n"), "text"), ""]
    if stdout.strip():
        parts += ["stdout (end):", "", code_block(stdout.rstrip("\n"), "text"), ""]
    if not stderr.strip() and not stdout.strip():
        parts += ["(no output)", ""]
    parts.append("</details>")
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------------
# Status comment while the job waits or runs


def render_status(state: str, worker: str, repro: Repro) -> str:
    """The comment shown while the job is queued or running (edited later with the result)."""
    icon = "⏳" if state == "queued" else "⚙️"
    what = f"{escape_text(state)} on a {escape_text(worker)} worker"
    lines = [MARKER, f"### {icon} reprobot: {what}", ""]
    if repro.found:
        lines.append(
            f"The script from {describe_blocks(repro.blocks)} (sha256 `{repro.sha256}`) is "
            f"{what}; this comment will be edited with the result."
        )
    else:
        lines.append(f"Job {what}; this comment will be edited with the result.")
    return "\n".join(lines) + "\n"
