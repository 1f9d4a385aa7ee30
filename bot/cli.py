"""The ``reprobot`` command: triage | eval | serve | worker.

This is the entry point: configuration is read here, once, and passed down. Heavy modules (web,
Celery, the runner) are imported by the subcommand that needs them, so ``reprobot triage`` stays
cheap to start.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from bot.config import SANDBOX_BACKENDS, Config, SandboxConfig, check_number, load_config
from bot.errors import ReprobotError
from bot.records import replace

TYPE_CHECKING = False  # typing's, without importing typing (5 ms): see bot/records.py
if TYPE_CHECKING:
    from typing import Any

    from bot.service import ScriptRunner
    from tasks.launch import Early

EXIT_BOT_ERROR = 2


# Commands that finish with nothing left to tear down: their console run ends with os._exit.
_ONE_SHOT = frozenset({"triage", "eval"})


def console(early: Early | None = None) -> None:
    """The ``reprobot`` console script (after ``bot.entry``'s early start). A one-shot command (``triage``, ``eval``) has closed,
    cleaned up and printed everything by the time it returns; it then exits without the
    interpreter's teardown of every loaded module (35-55 ms, a tenth of a triage's overhead,
    measured with bench/bench_triage.py), once stdout and stderr are flushed."""
    code, command = _main(sys.argv[1:], early)
    if command not in _ONE_SHOT:
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:  # e.g. `reprobot triage x.md | head`
        pass
    except OSError:
        code = code or EXIT_BOT_ERROR  # the output could not be written
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    return _main(argv)[0]


def _main(argv: Sequence[str] | None, early: Early | None = None) -> tuple[int, str | None]:
    """(exit code, the command that ran). ``early``: the sandbox run ``bot.entry`` started
    for ``reprobot triage`` (``tasks.launch``); killed here unless the triage took it."""
    try:
        return _command(argv, early)
    finally:
        if early is not None:
            early.discard()


def _command(argv: Sequence[str] | None, early: Early | None) -> tuple[int, str | None]:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _parser(_command_in(argv))
    args = parser.parse_args(argv)
    args.early = early
    command = getattr(args, "command", None)
    if not command:
        parser.print_help()
        return EXIT_BOT_ERROR, None
    try:
        cfg = load_config(args.config, os.environ)
        result: int = args.func(args, cfg)
        return result, command
    except ReprobotError as e:
        one_line = " ".join(str(e).split())
        print(f"reprobot: error: {one_line}", file=sys.stderr)
        return EXIT_BOT_ERROR, command
    except KeyboardInterrupt:
        return 130, command
    except BrokenPipeError:  # e.g. `reprobot triage x.md | head`
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return 0, command


def _command_in(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` names, when it is a known one and nothing before it is an
    option other than ``--config``; None otherwise (then the whole parser is built)."""
    skip = False
    for token in argv:
        if skip:
            skip = False
        elif token == "--config":
            skip = True
        elif token.startswith("--config="):
            continue
        elif token.startswith("-"):
            return None
        else:
            return token if token in _SUBCOMMANDS else None
    return None


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line. With ``command``, only that subcommand's parser is built (the same
    options, help and errors): ``reprobot triage`` starts its sandbox sooner without the other
    subcommands' parsers (about 10 ms)."""
    p = argparse.ArgumentParser(
        prog="reprobot",
        description="Triage Apache TVM bug reports by running their repro scripts.",
    )
    p.add_argument("--config", help="path to reprobot.yml (default: $REPROBOT_CONFIG)")
    sub = p.add_subparsers(dest="command")
    for name, add in _SUBCOMMANDS.items():
        if command is None or name == command:
            add(sub)
    return p


def _triage_parser(sub: Any) -> None:
    t = sub.add_parser("triage", help="triage one issue on this machine (no Redis, no GitHub)")
    t.add_argument("source", help="issue as .md (body; '# heading' = title) or .json, or - for stdin")
    t.add_argument("--json", action="store_true", help="print one JSON object instead of markdown")
    t.add_argument("--tvm-python", help="interpreter with apache-tvm installed (default: this one)")
    t.add_argument("--timeout", type=float, help="wall-time limit for the script in seconds")
    t.add_argument("--sandbox", choices=SANDBOX_BACKENDS, help="sandbox backend (default: bwrap)")
    t.add_argument("--no-cache", action="store_true", help="re-probe the environment")
    t.add_argument("--no-warm", action="store_true",
                   help="no warm start: start the sandbox only once the script is known "
                   "(also sandbox.warm_start: false)")
    t.add_argument("--build", help="TVM build to run on (see `reprobot builds list`; default: "
                   "builds.default, else main, else the newest release)")
    t.add_argument("--builds-dir", help="where builds live (default: builds.dir)")
    t.set_defaults(func=_cmd_triage)

    t.add_argument("--matrix", action="store_true",
                   help="run on every ready build (main, then releases newest first); --json "
                   "gains matrix and history")
    t.add_argument("--builds", metavar="A,B,C", help="with --matrix: only these builds")


def _eval_parser(sub: Any) -> None:
    e = sub.add_parser("eval", help="measure the bot against a folder of triaged issues",
                       description="Measure the bot against a folder of triaged issues.")
    _eval_arguments(e)
    e.set_defaults(func=_cmd_eval)


def _serve_parser(sub: Any) -> None:
    s = sub.add_parser("serve", help="serve the webhook receiver and the dashboard")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8000)
    s.set_defaults(func=_cmd_serve)


def _worker_parser(sub: Any) -> None:
    w = sub.add_parser("worker", help="start a Celery worker")
    w.add_argument("--queues", default="triage,cpu",
                   help="comma-separated: triage,cpu,gpu,build")
    w.add_argument("--concurrency", type=int, default=1)
    w.add_argument("--builds-dir", help="where builds live (default: builds.dir)")
    w.add_argument("--beat", action="store_true",
                   help="also run the periodic tasks (redelivery sweep); in one worker only")
    w.set_defaults(func=_cmd_worker)


def _beat_parser(sub: Any) -> None:
    b = sub.add_parser("beat", help="schedule `builds update main` every builds.update_every")
    b.set_defaults(func=_cmd_beat)


def _app_parser(sub: Any) -> None:
    a = sub.add_parser("app", help="the GitHub App: print its manifest")
    app_sub = a.add_subparsers(dest="app_command", required=True)
    m = app_sub.add_parser("manifest", help="print the GitHub App manifest JSON (manifest flow)")
    m.add_argument("--url", required=True, help="the bot's public base URL, e.g. https://HOST")
    m.add_argument("--name", default="reprobot", help="the App's name on GitHub")
    m.add_argument("--public", action="store_true", help="let other accounts install the App")
    m.add_argument("--form", action="store_true",
                   help="print an HTML page that posts the manifest to GitHub instead")
    m.add_argument("--org", default="", help="with --form: register the App under this org")
    m.set_defaults(func=_cmd_app_manifest)


def _healthcheck_parser(sub: Any) -> None:
    h = sub.add_parser("healthcheck",
                       help="exit 0 when this container's reprobot process is healthy")
    h.add_argument("--port", type=int, default=0,
                   help="receiver port (default: from the running 'reprobot serve')")
    h.set_defaults(func=_cmd_healthcheck)


def _builds_parser(sub: Any) -> None:
    p = sub.add_parser("builds", help="TVM builds: add, update, list, remove, prune")
    p.add_argument("--builds-dir", help="where builds live (default: builds.dir, "
                   "$REPROBOT_BUILDS_DIR, ~/.cache/reprobot/builds)")
    bsub = p.add_subparsers(dest="builds_command")
    a = bsub.add_parser("add", help="declare a build (then: reprobot builds update NAME)")
    a.add_argument("name")
    a.add_argument("--pip", action="append", default=[], metavar="SPEC",
                   help="pip spec of a release build (repeat), e.g. apache-tvm==0.26.0")
    a.add_argument("--git", default="", metavar="URL", help="git repository of a source build")
    a.add_argument("--ref", default="", help="branch, tag or commit (default: main)")
    a.add_argument("--cmake-define", action="append", default=[], metavar="KEY=VALUE",
                   help="CMake flag of a source build (repeat), e.g. USE_LLVM=ON")
    a.add_argument("--smoke", metavar="FILE", help="smoke-test script (default: an llvm kernel)")
    a.add_argument("--no-update", action="store_true", help="only record it; build later")
    a.set_defaults(func=_cmd_builds_add)
    u = bsub.add_parser("update", help="create or refresh builds (default: all)")
    u.add_argument("names", nargs="*")
    u.add_argument("--force", action="store_true", help="rebuild even if nothing moved")
    u.set_defaults(func=_cmd_builds_update)
    ls = bsub.add_parser("list", help="one line (or JSON entry) per build")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=_cmd_builds_list)
    r = bsub.add_parser("remove", help="delete a build and its installs")
    r.add_argument("name")
    r.set_defaults(func=_cmd_builds_remove)
    pr = bsub.add_parser("prune", help="delete old installs (old commits) of builds")
    pr.add_argument("--keep", type=int, required=True, metavar="N")
    pr.add_argument("names", nargs="*")
    pr.set_defaults(func=_cmd_builds_prune)
    p.set_defaults(func=lambda args, cfg: (p.print_help(), EXIT_BOT_ERROR)[1])


def _registry(args: argparse.Namespace, cfg: Config) -> Any:
    from tasks.builder import Registry, default_builds_dir

    where = getattr(args, "builds_dir", None) or cfg.builds.dir
    return Registry(Path(where).expanduser() if where else default_builds_dir(os.environ),
                    sandbox=cfg.sandbox)


def _sync_declared(reg: Any, cfg: Config) -> None:
    """Builds declared in reprobot.yml are recorded (or their changed spec replaces the old)."""
    for spec in cfg.builds.declared:
        smoke = Path(spec.smoke).expanduser() if spec.smoke else None
        if not reg.exists(spec.name) or _differs(reg.spec(spec.name), spec):
            reg.add(spec, smoke_file=smoke)


def _differs(old: Any, new: Any) -> bool:
    a, b = old.to_json(), new.to_json()
    a.pop("smoke", None)
    b.pop("smoke", None)
    return bool(a != b)


def _cmd_builds_add(args: argparse.Namespace, cfg: Config) -> int:
    from bot.builds import make_spec

    spec = make_spec(args.name, pip=args.pip, git=args.git, ref=args.ref,
                     cmake_defines=args.cmake_define)
    reg = _registry(args, cfg)
    reg.add(spec, smoke_file=Path(args.smoke) if args.smoke else None)
    print(f"build {spec.name}: {spec.source}")
    if args.no_update:
        return 0
    return _update(reg, [spec.name], force=False)


def _cmd_builds_update(args: argparse.Namespace, cfg: Config) -> int:
    reg = _registry(args, cfg)
    _sync_declared(reg, cfg)
    names = list(args.names) or reg.names()
    if not names:
        raise ReprobotError("no builds yet: add one with `reprobot builds add NAME --pip SPEC` "
                            "or `--git URL`")
    return _update(reg, names, force=args.force)


def _update(reg: Any, names: list[str], *, force: bool) -> int:
    from tasks.builder import BuildError

    failed = 0
    for name in names:
        try:
            info = reg.update(name, force=force)
        except BuildError as e:
            failed += 1
            print(f"reprobot: build {name} failed (the previous install stays current):\n{e}",
                  file=sys.stderr)
            continue
        print(f"{info.name}: ready, tvm {info.version or '?'}"
              + (f" @ {info.commit}" if info.commit else "") + f" ({info.python})")
    return 1 if failed else 0


def _cmd_builds_list(args: argparse.Namespace, cfg: Config) -> int:
    reg = _registry(args, cfg)
    _sync_declared(reg, cfg)
    builds = reg.list()
    if args.json:
        print(json.dumps([b.to_json() for b in builds], indent=2))
        return 0
    if not builds:
        print(f"no builds in {reg.root}")
        return 0
    for b in builds:
        commit = b.commit[:12] if b.commit else "-"
        print(f"{b.name:<16} {b.kind:<8} {b.status:<9} {b.version or '-':<16} {commit:<12} "
              f"{b.built_at or '-'}  {b.python or '-'}")
        if b.error:
            for line in b.error.splitlines():
                print(f"    {line}")
    return 0


def _cmd_builds_remove(args: argparse.Namespace, cfg: Config) -> int:
    _registry(args, cfg).remove(args.name)
    print(f"removed build {args.name}")
    return 0


def _cmd_builds_prune(args: argparse.Namespace, cfg: Config) -> int:
    reg = _registry(args, cfg)
    removed: list[str] = []
    for name in list(args.names) or [None]:
        removed += reg.prune(args.keep, name)
    print("\n".join(f"removed {r}" for r in removed) or "nothing to prune")
    return 0


def _cmd_beat(args: argparse.Namespace, cfg: Config) -> int:
    from tasks.app import run_beat

    run_beat(cfg)
    return 0


def _read_source(source: str) -> tuple[str, str]:
    """The issue text; a file that is not UTF-8 text (an image, an archive) is refused."""
    if source == "-":
        data, name = sys.stdin.buffer.read(), "-"
    else:
        path = Path(source)
        try:
            data, name = path.read_bytes(), path.name
        except OSError as e:
            raise ReprobotError(f"cannot read {source}: {e.strerror or e}") from e
    shown = "stdin" if source == "-" else source
    if b"\x00" in data:
        raise ReprobotError(f"{shown} is a binary file, not an issue: give a .md or .json file")
    try:
        return data.decode("utf-8-sig"), name
    except UnicodeDecodeError as e:
        raise ReprobotError(
            f"{shown} is not UTF-8 text (byte {e.start}): give the issue as a UTF-8 .md or .json file"
        ) from e


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "reprobot"


def _resolve_python(python: str) -> str:
    found = shutil.which(python) if os.sep not in python else python
    if not found or not os.access(found, os.X_OK):
        raise ReprobotError(
            f"TVM interpreter {python!r} not found or not executable: "
            "pass --tvm-python PATH (or set tvm.python / REPROBOT_TVM_PYTHON)"
        )
    return found


def _cmd_triage(args: argparse.Namespace, cfg: Config) -> int:
    if args.tvm_python:
        cfg = replace(cfg, tvm=replace(cfg.tvm, python=args.tvm_python))
    if args.sandbox:
        cfg = replace(cfg, sandbox=replace(cfg.sandbox, backend=args.sandbox))
    if args.timeout is not None:
        check_number("--timeout", args.timeout, "sandbox.limits.timeout_s")
        limits = replace(cfg.sandbox.limits, timeout_s=float(args.timeout))
        cfg = replace(cfg, sandbox=replace(cfg.sandbox, limits=limits))

    text, name = _read_source(args.source)
    if args.matrix or args.builds:
        from bot.plan import plan
        from bot.source import issue_from_text

        issue = issue_from_text(text, name)
        return _triage_matrix(args, cfg, issue, plan(issue))

    run = None
    environment: dict[str, str] = {}
    build = None
    reported: Any = None  # read beside the run (with no run, conclude reads it)
    with contextlib.ExitStack() as stack:
        cache = None if args.no_cache else _cache_dir()
        # The sandbox starts (and imports tvm) while the issue is read below; it is used only
        # when the plan makes that start exactly what the script does first.
        if args.early is not None and (args.no_warm or not cfg.sandbox.warm_start):
            args.early.discard(forget=True)
        runner, build, warm = (_prestart(args, cfg, stack, cache, text)
                               if cfg.sandbox.warm_start and not args.no_warm
                               else (None, None, None))
        # (markdown, the extractor's rules: imported only now, after the prestart)
        from bot.plan import plan
        from bot.source import issue_from_text

        issue = issue_from_text(text, name)
        the_plan = plan(issue)
        if the_plan.repro.found:
            if runner is None or build is None:
                from tasks.runner import SandboxRunner

                runner = SandboxRunner(cfg.sandbox, cache_dir=cache)  # the backend, chosen once
                build = _pick_build(args, cfg, stack, host=runner.sandbox.host_interpreter)
            run, environment, build, reported = _run_triage(args, cfg, issue, the_plan, build,
                                                            runner, cache, warm=warm)
        else:
            build = None
            if warm is not None:
                warm.discard()

    from bot.pipeline import UNREAD, conclude

    triage = conclude(issue, the_plan, run, environment, label_prefix=cfg.label_prefix,
                      build=build, reported=reported if run is not None else UNREAD)
    if args.json:
        print(json.dumps(triage.to_json(), indent=2))
    else:
        print(triage.comment)
        print()
        print("Labels: " + ", ".join(triage.labels))
    return 0


def _pick_build(args: argparse.Namespace, cfg: Config, stack: contextlib.ExitStack, *,
                host: bool = True) -> Any:
    """The build a triage runs on, resolved once and held in use until the run ends:
    --tvm-python (ad hoc) > --build > the default build > the configured interpreter (ad hoc)."""
    from bot.builds import KIND_ADHOC, BuildInfo, default_build

    if not args.tvm_python:
        reg = _registry(args, cfg)
        name = args.build
        if not name and (reg.names() or cfg.builds.default):
            name = default_build(reg.list(), cfg.builds.default)
        if name:
            return stack.enter_context(reg.use(name))
    # (docker: tvm.python is the interpreter inside the image)
    python = _resolve_python(cfg.tvm.python) if host else cfg.tvm.python
    return BuildInfo(name=KIND_ADHOC, kind=KIND_ADHOC, python=python, source="")


def _prestart(args: argparse.Namespace, cfg: Config, stack: contextlib.ExitStack,
              cache: Path | None, text: str) -> tuple[Any, Any, Any]:
    """(runner, build, a prestarted CPU run on the build's interpreter or None), before the
    issue is read; it imports what the issue's first code block imports first, when that
    includes tvm, else tvm (``bot.warmstart.guess_preload``). Anything that stops it leaves the
    cold path to do (and report) the same."""
    from bot.errors import InfraError
    from bot.warmstart import guess_preload
    from tasks.runner import SandboxRunner

    runner = SandboxRunner(cfg.sandbox, cache_dir=cache)  # the backend, chosen once
    try:
        build = _pick_build(args, cfg, stack, host=runner.sandbox.host_interpreter)
    except ReprobotError:
        return runner, None, None
    pass_env = {k: os.environ[k] for k in cfg.tvm.pass_env if k in os.environ}
    try:
        warm = runner.prestart(build.python, pass_env=pass_env, preload=guess_preload(text),
                               early=args.early if cache is not None else None)
    except InfraError:
        return runner, build, None
    if warm is not None:
        stack.callback(warm.discard)  # unused (no repro, an error): killed, cleaned up
    return runner, build, warm


def _run_triage(args: argparse.Namespace, cfg: Config, issue: Any, the_plan: Any, build: Any,
                runner: Any, cache: Path | None, *,
                warm: Any = None) -> tuple[Any, dict[str, str], Any, Any]:
    """Run the repro on ``build``'s interpreter; (run, environment, build with its identity,
    what the report says). ``warm``: a prestarted run on that interpreter, used when the plan
    allows (``bot.warmstart.warm_start_eligible``), else discarded."""
    from bot.builds import KIND_ADHOC
    from bot.records import replace as _replace
    from bot.warmstart import warm_start_eligible

    python = build.python
    pass_env = {k: os.environ[k] for k in cfg.tvm.pass_env if k in os.environ}
    # While the script runs, a second thread probes the environment (cached per interpreter),
    # loads the second half of the pipeline and reads what the report says, so none of it
    # adds wall time.
    side = _Beside(lambda: _beside_the_run(
        lambda p, cache_dir: runner.environment(p), python, cache, issue, the_plan))
    if warm is not None and the_plan.worker == "cpu" and warm_start_eligible(
            the_plan.repro.script, warm.preload):
        run = warm.go(the_plan.repro.script, the_plan.repro.args)
    else:
        if warm is not None:
            warm.discard()
        run = runner.run(
            the_plan.repro.script,
            python=python,
            args=the_plan.repro.args,
            gpu=the_plan.worker == "gpu",
            pass_env=pass_env,
        )
    if the_plan.attempts > 1:  # fails only sometimes / values vary: again while it passes
        from bot.runs import again_while_clean

        run = again_while_clean(run, lambda: runner.run(
            the_plan.repro.script, python=python, args=the_plan.repro.args,
            gpu=the_plan.worker == "gpu", pass_env=pass_env), the_plan.attempts,
            the_plan.rerun_for or "intermittent")
    environment, reported = side.result()
    if build.kind == KIND_ADHOC:
        build = _replace(build, version=environment.get("tvm_version", ""),
                         commit=environment.get("tvm_commit", ""))
    elif build.commit:
        environment["tvm_commit"] = build.commit  # from git, not guessed by the probe
    return run, environment, build, reported


def _apply_run_options(args: argparse.Namespace, cfg: Config) -> Config:
    if getattr(args, "sandbox", None):
        cfg = replace(cfg, sandbox=replace(cfg.sandbox, backend=args.sandbox))
    if getattr(args, "timeout", None) is not None:
        if args.timeout <= 0:
            raise ReprobotError("--timeout must be a positive number of seconds")
        limits = replace(cfg.sandbox.limits, timeout_s=float(args.timeout))
        cfg = replace(cfg, sandbox=replace(cfg.sandbox, limits=limits))
    return cfg


def _matrix_builds(args: argparse.Namespace, cfg: Config, reg: Any) -> list[Any]:
    """The ready builds a --matrix runs on (all, or those named by --builds), in matrix order."""
    from bot.builds import order_builds

    ready = [b for b in reg.list() if b.python]
    if args.builds:
        wanted = [n.strip() for n in args.builds.split(",") if n.strip()]
        have = {b.name for b in ready}
        missing = [n for n in wanted if n not in have]
        if missing:
            raise ReprobotError(
                f"no ready build named {', '.join(missing)} in {reg.root} "
                f"(ready: {', '.join(sorted(have)) or 'none'}; see `reprobot builds list`)")
        ready = [b for b in ready if b.name in wanted]
    if not ready:
        raise ReprobotError(f"--matrix needs ready builds and {reg.root} has none: add some with "
                            "`reprobot builds add NAME --pip SPEC` or `--git URL`")
    return order_builds(ready)


def _triage_matrix(args: argparse.Namespace, cfg: Config, issue: Any, the_plan: Any) -> int:
    """``triage --matrix``: the script on every (chosen) build; the default build's result is
    the comment's main part, one row per build below it, and the history line."""
    from bot.builds import default_build
    from bot.history import row_from_build, with_matrix
    from bot.pipeline import conclude

    if args.tvm_python:
        raise ReprobotError("--matrix runs on builds: use --builds, not --tvm-python")
    reg = _registry(args, cfg)
    _sync_declared(reg, cfg)
    builds = _matrix_builds(args, cfg, reg)
    primary_name = args.build or default_build(builds, cfg.builds.default) or builds[0].name
    runs: list[tuple[Any, Any]] = []
    if the_plan.repro.found:
        from tasks.runner import SandboxRunner

        cache = None if args.no_cache else _cache_dir()
        runner = SandboxRunner(cfg.sandbox, cache_dir=cache)  # the backend, chosen once
        for b in builds:
            with reg.use(b.name) as info:
                run, environment, info, reported = _run_triage(args, cfg, issue, the_plan, info,
                                                               runner, cache)
            t = conclude(issue, the_plan, run, environment, label_prefix=cfg.label_prefix,
                         build=info, reported=reported)
            runs.append((info, t))
    if not runs:
        t = conclude(issue, the_plan, None, {}, label_prefix=cfg.label_prefix)
        out = t.to_json()
        out.update(matrix=[], history=None)
        _print_triage(args, out, t.comment, t.labels)
        return 0
    rows = [row_from_build(info, t.outcome.value, t.verdict.value,
                           t.run.seconds if t.run else None) for info, t in runs]
    primary = next((t for info, t in runs if info.name == primary_name), runs[0][1])
    view = with_matrix(primary.comment, rows, f"{issue.title}\n{issue.body}")
    out = primary.to_json()
    out.update(comment=view.comment, matrix=[r.to_json() for r in view.rows],
               history=view.history.to_json() if view.history else None)
    _print_triage(args, out, view.comment, primary.labels)
    return 0


def _print_triage(args: argparse.Namespace, out: dict[str, Any], comment: str,
                  labels: Sequence[str]) -> None:
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(comment)
        print()
        print("Labels: " + ", ".join(labels))


def _bisect_parser(sub: Any) -> None:
    b = sub.add_parser("bisect", help="find the commit that fixed or broke an issue's script "
                       "between two commits of a source build")
    b.add_argument("source", help="issue as .md or .json, or - for stdin")
    b.add_argument("--build", required=True, help="the source build whose commits to build")
    b.add_argument("--good", required=True, metavar="REF", help="a commit where the run passes")
    b.add_argument("--bad", required=True, metavar="REF",
                   help="a commit where the reported failure is seen")
    b.add_argument("--max-steps", type=int, help="builds to try at most (default bisect.max_steps)")
    b.add_argument("--json", action="store_true", help="print one JSON object")
    b.add_argument("--builds-dir", help="where builds live (default: builds.dir)")
    b.add_argument("--timeout", type=float, help="wall-time limit for each run in seconds")
    b.add_argument("--sandbox", choices=SANDBOX_BACKENDS, help="sandbox backend (default: bwrap)")
    b.add_argument("--no-cache", action="store_true", help="re-probe the environment")
    b.set_defaults(func=_cmd_bisect)


def _cmd_bisect(args: argparse.Namespace, cfg: Config) -> int:
    import subprocess

    from bot.history import (
        History,
        HistoryKind,
        MatrixRow,
        bisect_sentence,
        with_bisection,
    )
    from bot.plan import plan
    from bot.source import issue_from_text
    from tasks.bisect import bisect_build, run_on
    from tasks.builder import BuildError

    cfg = _apply_run_options(args, cfg)
    max_steps = args.max_steps or cfg.bisect.max_steps
    if max_steps < 1:
        raise ReprobotError("--max-steps must be at least 1")
    text, name = _read_source(args.source)
    issue = issue_from_text(text, name)
    the_plan = plan(issue)
    if not the_plan.repro.found:
        raise ReprobotError(f"no runnable script in {args.source}: nothing to bisect")
    reg = _registry(args, cfg)
    _sync_declared(reg, cfg)
    if reg.spec(args.build).kind != "source":
        raise ReprobotError(f"build {args.build!r} is a release build: only a source build has "
                            "commits to bisect (between releases, compare their tags)")
    cache = None if args.no_cache else _cache_dir()

    def state_at(ref: str) -> tuple[str, str]:
        try:
            info = reg.build_commit(args.build, ref)
        except BuildError as e:
            raise ReprobotError(f"cannot build {ref} of {args.build}: {e}") from e
        from bot.history import run_state
        from bot.pipeline import conclude

        run, env = run_on(cfg, replace(info, name=args.build), the_plan, cache_dir=cache)
        t = conclude(issue, the_plan, run, env, label_prefix=cfg.label_prefix, build=info)
        return info.commit, run_state(t.outcome.value, t.verdict.value)

    good, good_state = state_at(args.good)
    bad, bad_state = state_at(args.bad)
    if good_state != "good" or bad_state != "bad":
        raise ReprobotError(
            f"the ends do not disagree as given: the run is {good_state or 'neither'} at --good "
            f"{good[:12]} and {bad_state or 'neither'} at --bad {bad[:12]} (good = passes, "
            "bad = the reported failure)")
    src = str(reg.root / args.build / "src")
    fixed = subprocess.run(["git", "-C", src, "merge-base", "--is-ancestor", bad, good],
                           capture_output=True).returncode == 0
    old, new = (bad, good) if fixed else (good, bad)
    res = bisect_build(cfg, reg, args.build, issue, the_plan, old, new,
                       "bad" if fixed else "good", max_steps=max_steps, cache_dir=cache)
    kind = HistoryKind.FIXED if fixed else HistoryKind.REGRESSED
    older = MatrixRow(build=f"{args.build}@{old[:7]}", commit=old, kind="source",
                      outcome="", verdict="")
    newer = MatrixRow(build=f"{args.build}@{new[:7]}", commit=new, kind="source",
                      outcome="", verdict="")
    history = with_bisection(History(kind=kind, older=older, newer=newer), res)
    if args.json:
        print(json.dumps({"history": history.to_json(), "bisect": res.to_json()}, indent=2))
    else:
        word = "fixed by" if fixed else "regressed in"
        if res.commit:
            print(f"{word} {res.commit} {res.subject}".rstrip() + f" ({res.steps} steps)")
        else:
            print(f"not narrowed to one commit in {res.steps} steps:"
                  + bisect_sentence(res))
    return 0


class _Beside:
    """Run one function in a thread beside the caller; ``result()`` joins it (and re-raises)."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self._fn = fn
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="reprobot-probe", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._fn()
        except BaseException as e:  # handed to the caller by result()
            self._error = e

    def result(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


def _beside_the_run(probe: Callable[..., dict[str, str]], python: str, cache: Path | None,
                    issue: Any, the_plan: Any) -> tuple[dict[str, str], Any]:
    """(the environment, what the report says): the work of a triage that needs no run."""
    from bot.pipeline import read_report  # (and with it the rest of conclude's modules)

    return probe(python, cache_dir=cache), read_report(issue, the_plan)


def _eval_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``reprobot eval`` (here, so that parsing loads no pipeline module)."""
    p.add_argument("corpus", help="folder of cases (issue.json, expected.yaml, repro.py)")
    p.add_argument("--jobs", type=int, default=2, help="cases run in parallel (default 2)")
    p.add_argument("--no-run", action="store_true", help="extraction and needs only; run nothing")
    p.add_argument("--tvm-python", default=sys.executable, help="interpreter with apache-tvm")
    p.add_argument("--sandbox", choices=SANDBOX_BACKENDS, help="sandbox backend")
    p.add_argument("--timeout", type=float, default=300.0, help="wall-time limit per script (s)")
    p.add_argument("--case", action="append", default=[], help="only this case (repeatable)")
    p.add_argument("--show", action="store_true", help="print each extracted script")


def _cmd_eval(args: argparse.Namespace, cfg: Config) -> int:
    from bot.evaluate import run_eval

    return run_eval(args, runner=_runner_factory)


def _runner_factory(sandbox: SandboxConfig) -> ScriptRunner:
    """The composition root's script runner (the sandbox backend is chosen here)."""
    from tasks.runner import SandboxRunner

    return SandboxRunner(sandbox, cache_dir=_cache_dir())


def _cmd_serve(args: argparse.Namespace, cfg: Config) -> int:
    from bot.web import serve

    if not 1 <= args.port <= 65535:
        raise ReprobotError(f"--port must be between 1 and 65535 (got {args.port})")
    serve(cfg, args.host, args.port)
    return 0


def _cmd_worker(args: argparse.Namespace, cfg: Config) -> int:
    from tasks.app import run_worker

    queues = [q.strip() for q in args.queues.split(",") if q.strip()]
    bad = [q for q in queues if q not in ("triage", "cpu", "gpu", "build")]
    if not queues or bad:
        raise ReprobotError(f"--queues takes triage, cpu, gpu and/or build (got {args.queues!r})")
    if args.builds_dir:
        cfg = replace(cfg, builds=replace(cfg.builds, dir=str(Path(args.builds_dir).expanduser())))
    if args.concurrency < 1:
        raise ReprobotError("--concurrency must be at least 1")
    run_worker(cfg, queues, args.concurrency, with_beat=args.beat)
    return 0


def _cmd_app_manifest(args: argparse.Namespace, cfg: Config) -> int:
    from bot.app_manifest import manifest, manifest_form

    data = manifest(args.url, name=args.name, public=args.public)
    if args.form:
        print(manifest_form(data, args.org), end="")
    else:
        if args.org:
            raise ReprobotError("--org goes with --form")
        print(json.dumps(data, indent=2))
    return 0


def _cmd_healthcheck(args: argparse.Namespace, cfg: Config) -> int:
    from bot.health import check

    ok, message = check(cfg, port=args.port)
    print(message)
    return 0 if ok else 1


# The subcommands, in the order `reprobot --help` lists them.
_SUBCOMMANDS: dict[str, Callable[[Any], None]] = {
    "triage": _triage_parser,
    "builds": _builds_parser,
    "bisect": _bisect_parser,
    "eval": _eval_parser,
    "serve": _serve_parser,
    "worker": _worker_parser,
    "beat": _beat_parser,
    "app": _app_parser,
    "healthcheck": _healthcheck_parser,
}


if __name__ == "__main__":
    raise SystemExit(main())

