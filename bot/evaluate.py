"""``reprobot eval CORPUS_DIR``: measure the bot against issues a human has triaged.

Each case is a folder with ``issue.json`` (a GitHub issue object, with ``comments``),
``expected.yaml`` (``has_repro``, ``repro_shape``, ``needs``, ``reported.outcome``,
``observed.outcome``, ``verdict``) and, where the human found one, ``repro.py``. For every case the
bot plans (extract + needs), runs the script against the TVM under test (unless ``--no-run``),
probes the environment and concludes; then this prints the agreement with the human per field,
per outcome and per verdict, and lists every disagreement with a one-line why.

This is a measuring tool, not a test: the corpus path is an argument and nothing from it is copied
into the repository.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from bot.config import SandboxConfig
from bot.errors import ReprobotError
from bot.models import Issue, Repro, RunLimits, RunResult
from bot.pipeline import conclude, plan
from bot.runs import again_while_clean

if TYPE_CHECKING:
    from bot.service import ScriptRunner

# Makes the script runner for a sandbox config (``tasks.runner.SandboxRunner``); injected by
# the entry point (``bot.cli``): ``bot`` never imports ``tasks``.
RunnerFactory = Callable[[SandboxConfig], "ScriptRunner"]

FIELDS = ("has_repro", "shape", "script", "needs", "reported", "observed", "verdict")


@dataclass
class CaseResult:
    name: str
    expected: dict[str, Any]
    repro: Repro
    needs: tuple[str, ...]
    script_match: str = ""  # identical | same-code | differs | "" (nothing to compare)
    script_diff: str = ""
    outcome: str | None = None
    verdict: str | None = None
    reported: str | None = None
    signature: str = ""
    last_line: str = ""
    seconds: float | None = None
    error: str = ""
    # field -> (expected, got, why) for each disagreement
    disagreements: dict[str, tuple[str, str, str]] = field(default_factory=dict)
    checked: set[str] = field(default_factory=set)


# --------------------------------------------------------------------------------------------
# Swappable shell pieces (the real runner / probe / pipeline when they are installed)


def _runner(factory: RunnerFactory, python: str, sandbox: str | None,
            timeout: float) -> tuple[Callable[[Repro], RunResult], Callable[[], dict[str, str]]]:
    cfg = SandboxConfig(limits=RunLimits(timeout_s=timeout))
    if sandbox:
        cfg = replace(cfg, backend=sandbox)
    runner = factory(cfg)

    def run(repro: Repro) -> RunResult:
        return runner.run(repro.script, python=python, args=repro.args, gpu=False, pass_env={})

    def probe() -> dict[str, str]:
        return dict(runner.environment(python))

    return run, probe


# --------------------------------------------------------------------------------------------
# Cases


def load_case(folder: Path) -> tuple[Issue, dict[str, Any], str | None]:
    data = json.loads((folder / "issue.json").read_text(encoding="utf-8"))
    issue = Issue.from_github(data)
    expected = yaml.safe_load((folder / "expected.yaml").read_text(encoding="utf-8")) or {}
    repro_py = folder / "repro.py"
    script = repro_py.read_text(encoding="utf-8") if repro_py.is_file() else None
    return issue, expected, script


def find_cases(corpus: Path) -> list[Path]:
    return sorted(p for p in corpus.iterdir() if (p / "issue.json").is_file()
                  and (p / "expected.yaml").is_file())


def compare_scripts(got: str, want: str) -> tuple[str, str]:
    """identical (modulo whitespace) | same-code (same AST) | differs, with the first difference."""
    g, w = _norm_lines(got), _norm_lines(want)
    if g == w:
        return "identical", ""
    try:
        if ast.dump(ast.parse(got)) == ast.dump(ast.parse(want)):
            return "same-code", ""
    except (SyntaxError, ValueError):
        pass
    for k in range(max(len(g), len(w))):
        a = g[k] if k < len(g) else "<end>"
        b = w[k] if k < len(w) else "<end>"
        if a != b:
            return "differs", f"line {k + 1}: got {a[:60]!r}, want {b[:60]!r}"
    return "differs", ""


def _norm_lines(s: str) -> list[str]:
    return [ln.rstrip() for ln in s.replace("\r\n", "\n").split("\n") if ln.strip()]


def evaluate_case(
    folder: Path, *, run: Callable[[Repro], RunResult] | None, python: str,
    probe: Callable[[], dict[str, str]] | None = None,
) -> CaseResult:
    issue, exp, want_script = load_case(folder)
    the_plan = plan(issue)
    repro: Repro = the_plan.repro
    res = CaseResult(folder.name, exp, repro, tuple(the_plan.needs))
    _check(res, "has_repro", bool(exp.get("has_repro")), repro.found,
           repro.reason if not repro.found else f"found in {', '.join(repro.blocks)}")
    if repro.found == bool(exp.get("has_repro")):
        # From the script when there is one, else from what the report says.
        _check(res, "needs", sorted(exp.get("needs") or []), sorted(res.needs), "")
        _check(res, "shape", str(exp.get("repro_shape", "")), repro.shape,
               f"blocks {', '.join(repro.blocks)}" if repro.found else repro.reason[:80])
    if repro.found and exp.get("has_repro") and want_script is not None:
        res.script_match, res.script_diff = compare_scripts(repro.script, want_script)
        res.checked.add("script")
        if res.script_match == "differs":
            res.disagreements["script"] = ("repro.py", "differs", res.script_diff)
    if run is None:
        if not repro.found:
            res.outcome = "no-repro"
            _check(res, "observed", _get(exp, "observed", "outcome"), "no-repro", "")
        return res
    result = None
    environment: dict[str, str] = {}
    infra = ""
    if repro.found:
        try:
            result = again_while_clean(run(repro), lambda: run(repro), the_plan.attempts,
                                       the_plan.rerun_for or "intermittent")
            environment = probe() if probe is not None else {}
        except ReprobotError as e:  # our side failed: counted as infra-error, never the script's
            infra = str(e)
    triage = conclude(issue, the_plan, result, environment, infra_error=infra)
    res.outcome = triage.outcome.value
    res.verdict = triage.verdict.value
    res.reported = triage.reported.outcome.value if triage.reported and triage.reported.outcome else None
    res.signature = triage.classification.signature
    if result is not None:
        res.seconds = result.seconds
        tail = (result.stderr_tail.strip() or result.stdout_tail.strip()).split("\n")
        res.last_line = tail[-1] if tail else ""
    why = res.signature or res.last_line
    _check(res, "reported", _get(exp, "reported", "outcome"), res.reported or "none",
           triage.reported.signature if triage.reported else "nothing parsed")
    _check(res, "observed", _get(exp, "observed", "outcome"), res.outcome, why)
    _check(res, "verdict", str(exp.get("verdict", "")), res.verdict,
           f"outcome {res.outcome}, reported {res.reported}")
    return res


def _get(d: dict[str, Any], *keys: str) -> str:
    cur: Any = d
    for k in keys:
        cur = cur.get(k) if isinstance(cur, dict) else None
    return str(cur) if cur not in (None, "") else "none"


def _check(res: CaseResult, name: str, want: Any, got: Any, why: str) -> None:
    res.checked.add(name)
    if want != got:
        res.disagreements[name] = (_fmt(want), _fmt(got), why)


def _fmt(v: Any) -> str:
    if isinstance(v, list | tuple):
        return "[" + ", ".join(str(x) for x in v) + "]"
    return str(v)


# --------------------------------------------------------------------------------------------
# Report


def report(results: list[CaseResult], *, ran: bool) -> str:
    out: list[str] = []
    n = len(results)
    out.append(f"reprobot eval: {n} cases" + ("" if ran else " (extraction only, --no-run)"))
    out.append("")
    out.append("agreement with the human triager, per field:")
    for f in FIELDS:
        checked = [r for r in results if f in r.checked]
        if not checked:
            continue
        agree = sum(1 for r in checked if f not in r.disagreements)
        out.append(f"  {f:<10} {agree:>3}/{len(checked):<3} {100 * agree / len(checked):5.1f}%")
    scripts = Counter(r.script_match for r in results if r.script_match)
    if scripts:
        out.append("  script vs repro.py: " + ", ".join(f"{k} {v}" for k, v in sorted(scripts.items())))
    for f, key in (("observed", ("observed", "outcome")), ("verdict", ("verdict",)),
                   ("reported", ("reported", "outcome"))):
        checked = [r for r in results if f in r.checked]
        if not checked:
            continue
        out.append("")
        out.append(f"{f} per expected value (agree/total, then what the bot said):")
        by: dict[str, list[CaseResult]] = {}
        for r in checked:
            by.setdefault(_get(r.expected, *key), []).append(r)
        for value in sorted(by):
            rs = by[value]
            agree = sum(1 for r in rs if f not in r.disagreements)
            wrong = Counter(r.disagreements[f][1] for r in rs if f in r.disagreements)
            extra = (" | got " + ", ".join(f"{k} x{v}" for k, v in wrong.most_common())) if wrong else ""
            out.append(f"  {value:<20} {agree}/{len(rs)}{extra}")
    out.append("")
    dis = [(r, f) for r in results for f in FIELDS if f in r.disagreements]
    out.append(f"disagreements ({len(dis)}):")
    for r, f in dis:
        want, got, why = r.disagreements[f]
        line = f"  {r.name:<28} {f:<9} expected {want}, got {got}"
        if why:
            line += f" -- {' '.join(why.split())[:140]}"
        out.append(line)
    errors = [r for r in results if r.error]
    if errors:
        out.append("")
        out.append("not evaluated:")
        for r in errors:
            out.append(f"  {r.name}: {r.error}")
    return "\n".join(out)


def run_eval(args: argparse.Namespace, *, runner: RunnerFactory | None = None) -> int:
    """``runner`` makes the script runner (needed unless ``--no-run``)."""
    from bot.config import check_number
    from bot.errors import ConfigError

    try:
        check_number("--timeout", args.timeout, "sandbox.limits.timeout_s")
        if args.jobs < 1:
            raise ConfigError(f"--jobs must be at least 1 (got {args.jobs})")
    except ConfigError as e:
        print(f"reprobot eval: {e}", file=sys.stderr)
        return 2
    corpus = Path(args.corpus)
    if not corpus.is_dir():
        print(f"reprobot eval: {corpus} is not a folder", file=sys.stderr)
        return 2
    cases = [c for c in find_cases(corpus) if not args.case or c.name in args.case]
    if not cases:
        print(f"reprobot eval: no cases (folders with issue.json + expected.yaml) in {corpus}",
              file=sys.stderr)
        return 2
    run = probe = None
    if not args.no_run:
        if runner is None:
            print("reprobot eval: no script runner given (run it as `reprobot eval`)",
                  file=sys.stderr)
            return 2
        run, probe = _runner(runner, args.tvm_python, args.sandbox, args.timeout)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(
            lambda c: evaluate_case(c, run=run, python=args.tvm_python, probe=probe), cases))
    if args.show:
        for r in results:
            print(f"===== {r.name}: found={r.repro.found} shape={r.repro.shape} "
                  f"blocks={list(r.repro.blocks)} args={list(r.repro.args)} needs={list(r.needs)}")
            print(r.repro.script if r.repro.found else r.repro.reason)
    print(report(results, ran=run is not None))
    return 0
