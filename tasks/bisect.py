"""Bisection between two commits of a source build: build midpoints, run the script on each.

The decisions (where to look next, when to stop, what the result says) are
``bot.history.bisect_commits``'; this module does the I/O: ``Registry.build_commit`` (an
incremental build of that commit into its own install), the sandboxed run, and ``git log`` for
the subject. Used by ``reprobot bisect`` and by the ``reprobot.bisect`` task.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

from bot.builds import BuildInfo
from bot.history import BisectResult, bisect_commits, run_state
from bot.models import Issue
from bot.pipeline import Plan, conclude
from tasks.builder import BuildError, Registry, registry_for

log = logging.getLogger("reprobot.bisect")


def run_on(config: Any, info: BuildInfo, the_plan: Plan, *, cache_dir: Path | None,
           state: Any = None, force: bool = False) -> tuple[Any, dict[str, str]]:
    """Run the plan's script on one install (through the result cache when ``state`` is given)."""
    from bot.models import RunResult
    from tasks.probe import probe_environment
    from tasks.runner import run_script

    sha = hashlib.sha256(the_plan.repro.script.encode()).hexdigest()
    kind = the_plan.worker
    ident = info.commit or info.version
    if state is not None and ident and not force:
        hit = state.cached_result(sha, info.name, ident, kind)
        if hit is not None and hit.get("run"):
            return RunResult.from_dict(hit["run"]), dict(hit.get("environment") or {})
    pass_env = {k: os.environ[k] for k in config.tvm.pass_env if k in os.environ}
    run = run_script(the_plan.repro.script, python=info.python, args=the_plan.repro.args,
                     sandbox=config.sandbox, gpu=the_plan.worker == "gpu", pass_env=pass_env,
                     cache_dir=cache_dir)
    env = dict(probe_environment(info.python, cache_dir=cache_dir))
    if info.commit:
        env["tvm_commit"] = info.commit
    if state is not None and ident:
        state.store_result(sha, info.name, ident, kind,
                           {"run": run.to_dict(), "environment": env, "infra_error": ""})
    return run, env


def subject(reg: Registry, name: str, sha: str) -> str:
    src = reg.root / name / "src"
    r = subprocess.run(["git", "-C", str(src), "log", "-1", "--format=%s", sha],
                       capture_output=True, text=True, timeout=60)
    return r.stdout.strip() if r.returncode == 0 else ""


def bisect_build(
    config: Any,
    reg: Registry,
    name: str,
    issue: Issue,
    the_plan: Plan,
    old_commit: str,
    new_commit: str,
    old_state: str,
    *,
    max_steps: int,
    cache_dir: Path | None = None,
    state: Any = None,
) -> BisectResult:
    """Bisect the commits after ``old_commit`` up to ``new_commit`` (``old_state`` is the run's
    state at ``old_commit``: "bad" when looking for the fix, "good" for the regression)."""
    between = reg.commits(name, old_commit, new_commit)
    if not between:
        raise BuildError(f"{new_commit[:12]} does not come after {old_commit[:12]} on {name}")
    commits = [old_commit, *between]

    def probe(sha: str) -> str:
        try:
            info = reg.build_commit(name, sha)
        except BuildError as e:  # a commit that does not build is skipped, as git bisect skip
            log.warning("bisect %s: %s does not build: %s", name, sha[:12], str(e)[:200])
            return ""
        info = replace(info, name=name)
        run, env = run_on(config, info, the_plan, cache_dir=cache_dir, state=state)
        t = conclude(issue, the_plan, run, env, label_prefix=config.label_prefix, build=info)
        verdict = run_state(t.outcome.value, t.verdict.value)
        log.info("bisect %s: %s -> %s / %s (%s)", name, sha[:12], t.outcome.value,
                 t.verdict.value, verdict or "skip")
        return verdict

    result = bisect_commits(commits, old_state, probe, max_steps=max_steps)
    if result.commit:
        result = replace(result, subject=subject(reg, name, result.commit))
    return result


def bisect_job(config: Any, request: dict[str, Any], *, state: Any = None,
               cache_dir: Path | None = None) -> dict[str, Any]:
    """The ``reprobot.bisect`` task's work: JSON in, JSON out."""
    reg = registry_for(config)
    issue = Issue.from_dict(request["issue"])
    the_plan = Plan.from_dict(request["plan"])
    old, new = request["old"], request["new"]
    res = bisect_build(config, reg, str(request["build"]), issue, the_plan,
                       str(old["commit"]), str(new["commit"]), str(request["old_state"]),
                       max_steps=int(request.get("max_steps") or config.bisect.max_steps),
                       cache_dir=cache_dir, state=state)
    return {"job_id": request["job_id"], "repo": request["repo"], "number": request["number"],
            "old": old, "new": new, **res.to_json()}
