"""Stage 7: the one comment the bot writes on an issue, and its labels.

Pure. The comment starts with :data:`bot.labels.MARKER` so later runs edit it in place. Text
that comes from strangers (the script, its output, the issue) is made harmless: ANSI escapes
and control characters are stripped, ``@mentions`` get a zero-width joiner so nobody is
pinged, code fences are longer than any backtick run inside, and the whole comment stays
under GitHub's 65,536-character limit (the output tails are cut first, then the script).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

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
from bot.models import Outcome, Repro, Triage, Verdict

__all__ = ["is_own_label", "labels_for", "render_comment", "render_status", "MAX_COMMENT"]

GITHUB_LIMIT = 65_536
MAX_COMMENT = 60_000  # what we aim for: a margin under GitHub's limit
MIN_OUTPUT = 4_000  # the output keeps at least this much, even next to a huge script
ZWJ = "\u200d"
GPU_DEVICES = ("cuda", "rocm", "vulkan", "metal", "opencl")

VERDICT_HEAD = {
    Verdict.REPRODUCED: "🐞 Reproduced",
    Verdict.DIFFERENT_FAILURE: "⚠️ Fails differently",
    Verdict.NOT_REPRODUCED: "✅ Not reproduced",
    Verdict.INCONCLUSIVE: "❔ Inconclusive",
}
OUTCOME_TEXT = {
    Outcome.CRASH: "the process crashed",
    Outcome.INTERNAL_ERROR: "a TVM internal check failed",
    Outcome.TVM_ERROR: "TVM raised an error",
    Outcome.WRONG_RESULT: "the script's result check failed",
    Outcome.PYTHON_ERROR: "the script's own code failed",
    Outcome.API_MISMATCH: "the script uses a TVM API that no longer exists",
    Outcome.MISSING_DEPENDENCY: "a package or input file the script needs is missing",
    Outcome.NEEDS_GPU: "the script needs a GPU",
    Outcome.RESOURCE_LIMIT: "the run hit a sandbox limit",
    Outcome.TIMEOUT: "the run timed out",
    Outcome.PASSED: "the script ran without failing",
    Outcome.NO_REPRO: "no runnable script found",
    Outcome.INFRA_ERROR: "the bot's own infrastructure failed",
}
ENV_KEYS = (
    ("tvm_version", "TVM"),
    ("tvm_commit", "TVM commit"),
    ("tvm_commit_date", "TVM commit date"),
    ("llvm_version", "LLVM"),
    ("cuda_enabled", "CUDA enabled"),
    ("cuda_version", "CUDA"),
    ("gpu", "GPU"),
    ("gpu_driver", "GPU driver"),
    ("python", "Python"),
    ("numpy", "NumPy"),
    ("os", "OS"),
    ("cpu", "CPU"),
)

# ---------------------------------------------------------------------------------------------
# Making strangers' text harmless

_ANSI_RE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC
    r"|\x1b[@-Z\\-_]"  # other two-byte escapes
)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_MENTION_RE = re.compile(r"(?<![\w`])@(?=[A-Za-z0-9])")
_DECORATOR_LINE_RE = re.compile(r"^(\s*)@(?=[A-Za-z_])", re.M)


def strip_ansi(text: str) -> str:
    text = _ANSI_RE.sub("", text).replace("\r\n", "\n")
    # A bare carriage return redraws the line (progress bars): keep the last state.
    text = "\n".join(line.rsplit("\r", 1)[-1] for line in text.split("\n"))
    return _CONTROL_RE.sub("", text)


def neutralize_mentions(text: str) -> str:
    """``@name`` -> ``@<ZWJ>name``: shown the same, pings nobody."""
    return _MENTION_RE.sub("@" + ZWJ, text)


def neutralize_script(text: str) -> str:
    """Like :func:`neutralize_mentions`, but Python decorators at a line start stay intact."""
    marked = _DECORATOR_LINE_RE.sub(lambda m: m.group(1) + "\x00DECO\x00", text)
    return neutralize_mentions(marked).replace("\x00DECO\x00", "@")


def safe(text: str) -> str:
    return neutralize_mentions(strip_ansi(text))


def fence_for(text: str, char: str = "`") -> str:
    """A fence longer than any run of ``char`` in ``text`` (at least three)."""
    longest = max((len(m) for m in re.findall(re.escape(char) + "+", text)), default=0)
    return char * max(3, longest + 1)


def code_block(text: str, lang: str = "") -> str:
    fence = fence_for(text)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{fence}{lang}\n{body}{fence}"


def inline_code(text: str, limit: int = 300) -> str:
    one = " ".join(safe(text).split())
    if len(one) > limit:
        one = one[: limit - 1] + "…"
    if not one:
        return ""
    longest = max((len(m) for m in re.findall("`+", one)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if one.startswith("`") or one.endswith("`") else ""
    return f"{ticks}{pad}{one}{pad}{ticks}"


def _cell(text: str) -> str:
    return safe(" ".join(text.split())).replace("|", "\\|").replace("<", "&lt;") or "—"


def _cut_head(text: str, budget: int) -> str:
    """Keep the end of an output tail within ``budget`` characters."""
    if len(text) <= budget:
        return text
    if budget <= 60:
        return ""
    keep = max(0, budget - 60)
    cut = len(text) - keep
    return f"[… {cut} earlier characters cut …]\n" + text[len(text) - keep :]


def _cut_tail(text: str, budget: int) -> str:
    """Keep the start of a script within ``budget`` characters."""
    if len(text) <= budget:
        return text
    keep = max(0, budget - 60)
    return text[:keep] + f"\n# [… {len(text) - keep} more characters cut …]\n"


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
# The comment


def render_comment(t: Triage, *, label_prefix: str = DEFAULT_PREFIX) -> str:
    """The whole comment for one triage result (markdown, marker first)."""
    labels = t.labels or labels_for(t.outcome, t.verdict, t.needs, prefix=label_prefix)
    head = _headline(t)
    summary = _summary(t)
    compare = _reported_vs_observed(t)
    env = _environment(t.environment)
    source = _source_line(t.repro)
    foot = [
        "**Labels:** " + ", ".join(inline_code(lb) for lb in labels),
        "",
        f"<sub>{RERUN_HINT}</sub>",
    ]

    def assemble(script: str, out: str) -> str:
        parts = [MARKER, head, "", *summary, ""]
        if compare:
            parts += [*compare, ""]
        if env:
            parts += [*env, ""]
        if source:
            parts += [source, ""]
        if script:
            parts += [script, ""]
        if out:
            parts += [out, ""]
        parts += foot
        return "\n".join(parts) + "\n"

    script_text = neutralize_script(strip_ansi(t.repro.script)) if t.repro.found else ""
    stdout = safe(normalize_paths(t.run.stdout_tail)) if t.run else ""
    stderr = safe(normalize_paths(t.run.stderr_tail)) if t.run else ""

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
        stderr = _cut_head(stderr, room - out_room)
        stdout = _cut_head(stdout, room - len(stderr))
    comment = assemble(_script_details(script_text, t.repro), _output_details(t, stdout, stderr))
    if len(comment) > GITHUB_LIMIT - 100:  # last resort: never exceed GitHub's limit
        comment = assemble(_script_details(_cut_tail(script_text, 1_000), t.repro), empty_out)
    return comment


def _headline(t: Triage) -> str:
    if t.outcome == Outcome.INFRA_ERROR:
        return "### 🛠️ Inconclusive — the bot could not run the script (our side, not yours)"
    return f"### {VERDICT_HEAD[t.verdict]} — `{t.outcome.value}`: {OUTCOME_TEXT[t.outcome]}"


def _summary(t: Triage) -> list[str]:
    cls = t.classification
    lines: list[str] = []
    if t.outcome == Outcome.NO_REPRO:
        reason = (cls.detail or t.repro.reason or "").strip()
        lines.append(
            safe(reason) if reason else "The bot found no runnable Python script in this issue."
        )
        if NO_REPRO_ASK not in reason and "minimal" not in reason.lower():
            lines += ["", NO_REPRO_ASK]
        return lines
    if t.outcome == Outcome.INFRA_ERROR:
        lines.append(INFRA_MESSAGE)
        if cls.signature:
            lines += ["", f"What failed on our side: {inline_code(cls.signature)}"]
        return lines
    if cls.signature:
        lines.append(f"**{_outcome_word(t.outcome)}:** {inline_code(cls.signature)}")
    if cls.detail:
        lines.append("")
        lines.append(safe(cls.detail))
    if cls.frames:  # a crash outside TVM: the frames that matter, not the whole backtrace
        lines += ["", code_block("\n".join(cls.frames))]
    extra = {
        Outcome.API_MISMATCH: API_MISMATCH_ASK,
        Outcome.MISSING_DEPENDENCY: (
            MISSING_DEPENDENCY_NOTE if "not in the issue" not in cls.detail else ""
        ),
        Outcome.NEEDS_GPU: NEEDS_GPU_NOTE if "GPU" not in cls.detail else "",
    }.get(t.outcome, "")
    if extra:
        lines += ["", extra]
    if (
        t.outcome == Outcome.PASSED
        and t.reported is not None
        and t.reported.outcome == Outcome.WRONG_RESULT
        and not _CHECKS_RESULT_RE.search(t.repro.script)
    ):
        lines += ["", UNCHECKED_RESULT_NOTE]
    note = (t.repro.reason or "").strip()
    if note and t.outcome not in (Outcome.PASSED, Outcome.MISSING_DEPENDENCY):
        # e.g. the script loads a model file the issue does not include.
        lines += ["", f"Note: {safe(note)}"]
    return lines


# A script that checks its own result (so that a pass means the result is right).
_CHECKS_RESULT_RE = re.compile(
    r"^\s*assert\b|assert_allclose|assert_equal|assert_array|allclose\(|array_equal\(|"
    r"tvm\.testing\.|\braise\b|sys\.exit\(|\bexit\(",
    re.M,
)


def _outcome_word(outcome: Outcome) -> str:
    return {
        Outcome.PASSED: "Exit",
        Outcome.TIMEOUT: "Stopped",
        Outcome.RESOURCE_LIMIT: "Limit",
        Outcome.CRASH: "Signal",
        Outcome.WRONG_RESULT: "Failed check",
    }.get(outcome, "Error")


def _reported_vs_observed(t: Triage) -> list[str]:
    if t.outcome == Outcome.NO_REPRO and t.reported is None:
        return []
    rep = t.reported
    if rep is None or rep.outcome in (None, Outcome.NO_REPRO):
        reported = "nothing specific"
    else:
        reported = f"`{rep.outcome.value}`" + (
            f" — {inline_code(rep.signature)}" if rep.signature else ""
        )
    observed = f"`{t.outcome.value}`" + (
        f" — {inline_code(t.classification.signature)}" if t.classification.signature else ""
    )
    why = next(
        (e for e in reversed(t.evidence) if not e.startswith(("reported:", "observed:"))), ""
    )
    rows = [
        "| | |",
        "|---|---|",
        f"| **Reported** | {reported.replace('|', chr(92) + '|')} |",
        f"| **Observed** | {observed.replace('|', chr(92) + '|')} |",
        f"| **Verdict** | `{t.verdict.value}`" + (f": {_cell(why)}" if why else "") + " |",
    ]
    if t.run is not None:
        if t.run.signal is not None:
            status = f"signal {t.run.signal}"
        elif t.run.exit_code is not None:
            status = f"exit code {t.run.exit_code}"
        else:
            status = "stopped"
        extra = ", timed out" if t.run.timed_out else ""
        rows.append(
            f"| **Run** | {status}, {t.run.seconds:.1f} s{extra}"
            + (f", sandbox `{_cell(t.run.sandbox)}`" if t.run.sandbox else "")
            + " |"
        )
    return rows


def _environment(env: dict[str, str]) -> list[str]:
    if not env:
        return []
    rows = ["<details><summary>Environment</summary>", "", "| | |", "|---|---|"]
    known = dict(ENV_KEYS)
    for key, title in ENV_KEYS:
        if key in env and str(env[key]).strip():
            rows.append(f"| {title} | {_cell(str(env[key]))} |")
    for key in sorted(env):
        if key not in known and str(env[key]).strip():
            rows.append(f"| {_cell(key)} | {_cell(str(env[key]))} |")
    rows += ["", "</details>"]
    return rows


def _source_line(repro: Repro) -> str:
    if not repro.found:
        return ""
    blocks = ", ".join(f"`{_cell(b)}`" for b in repro.blocks) or "the issue"
    line = f"**Script:** from {blocks} · sha256 `{repro.sha256}`"
    if repro.args:
        line += " · arguments " + inline_code(" ".join(repro.args))
    return line


def _script_details(script: str, repro: Repro) -> str:
    if not repro.found:
        return ""
    n = len(repro.script.splitlines())
    return "\n".join(
        [
            f"<details><summary>Script that was run ({n} lines)</summary>",
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
    what = f"{state} on a {worker} worker"
    lines = [MARKER, f"### {icon} reprobot: {what}", ""]
    if repro.found:
        blocks = ", ".join(f"`{_cell(b)}`" for b in repro.blocks) or "the issue"
        lines.append(
            f"The script from {blocks} (sha256 `{repro.sha256}`) is {what}; this comment will be "
            "edited with the result."
        )
    else:
        lines.append(f"Job {what}; this comment will be edited with the result.")
    return "\n".join(lines) + "\n"
