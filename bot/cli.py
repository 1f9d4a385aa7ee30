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
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from bot.config import SANDBOX_BACKENDS, Config, SandboxConfig, check_number, load_config
from bot.errors import ReprobotError

if TYPE_CHECKING:
    from bot.service import ScriptRunner

EXIT_BOT_ERROR = 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return EXIT_BOT_ERROR
    try:
        cfg = load_config(args.config, os.environ)
        result: int = args.func(args, cfg)
        return result
    except ReprobotError as e:
        one_line = " ".join(str(e).split())
        print(f"reprobot: error: {one_line}", file=sys.stderr)
        return EXIT_BOT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `reprobot triage x.md | head`
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - silence the flush at exit
        return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="reprobot",
        description="Triage Apache TVM bug reports by running their repro scripts.",
    )
    p.add_argument("--config", help="path to reprobot.yml (default: $REPROBOT_CONFIG)")
    sub = p.add_subparsers(dest="command")

    t = sub.add_parser("triage", help="triage one issue on this machine (no Redis, no GitHub)")
    t.add_argument("source", help="issue as .md (body; '# heading' = title) or .json, or - for stdin")
    t.add_argument("--json", action="store_true", help="print one JSON object instead of markdown")
    t.add_argument("--tvm-python", help="interpreter with apache-tvm installed (default: this one)")
    t.add_argument("--timeout", type=float, help="wall-time limit for the script in seconds")
    t.add_argument("--sandbox", choices=SANDBOX_BACKENDS, help="sandbox backend (default: bwrap)")
    t.add_argument("--no-cache", action="store_true", help="re-probe the environment")
    t.set_defaults(func=_cmd_triage)

    e = sub.add_parser("eval", help="measure the bot against a folder of triaged issues",
                       description="Measure the bot against a folder of triaged issues.")
    from bot.evaluate import add_arguments as eval_arguments

    eval_arguments(e)
    e.set_defaults(func=_cmd_eval)

    s = sub.add_parser("serve", help="serve the webhook receiver and the dashboard")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8000)
    s.set_defaults(func=_cmd_serve)

    w = sub.add_parser("worker", help="start a Celery worker")
    w.add_argument("--queues", default="triage,cpu", help="comma-separated: triage,cpu,gpu")
    w.add_argument("--concurrency", type=int, default=1)
    w.add_argument("--beat", action="store_true",
                   help="also run the periodic tasks (redelivery sweep); in one worker only")
    w.set_defaults(func=_cmd_worker)

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

    h = sub.add_parser("healthcheck",
                       help="exit 0 when this container's reprobot process is healthy")
    h.add_argument("--port", type=int, default=0,
                   help="receiver port (default: from the running 'reprobot serve')")
    h.set_defaults(func=_cmd_healthcheck)
    return p


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
    from bot.plan import plan
    from bot.source import issue_from_text

    if args.tvm_python:
        cfg = replace(cfg, tvm=replace(cfg.tvm, python=args.tvm_python))
    if args.sandbox:
        cfg = replace(cfg, sandbox=replace(cfg.sandbox, backend=args.sandbox))
    if args.timeout is not None:
        check_number("--timeout", args.timeout, "sandbox.limits.timeout_s")
        limits = replace(cfg.sandbox.limits, timeout_s=float(args.timeout))
        cfg = replace(cfg, sandbox=replace(cfg.sandbox, limits=limits))

    text, name = _read_source(args.source)
    issue = issue_from_text(text, name)
    the_plan = plan(issue)

    run = None
    environment: dict[str, str] = {}
    if the_plan.repro.found:
        from tasks.runner import SandboxRunner

        cache = None if args.no_cache else _cache_dir()
        runner = SandboxRunner(cfg.sandbox, cache_dir=cache)  # the backend, chosen once
        # (docker: tvm.python is the interpreter inside the image)
        python = (_resolve_python(cfg.tvm.python) if runner.sandbox.host_interpreter
                  else cfg.tvm.python)
        pass_env = {k: os.environ[k] for k in cfg.tvm.pass_env if k in os.environ}
        # While the script runs, a second thread probes the environment (cached per
        # interpreter) and loads the second half of the pipeline, so neither adds wall time.
        side = _Beside(lambda: _probe_and_load(
            lambda p, cache_dir: runner.environment(p), python, cache))
        run = runner.run(
            the_plan.repro.script,
            python=python,
            args=the_plan.repro.args,
            gpu=the_plan.worker == "gpu",
            pass_env=pass_env,
        )
        environment = side.result()

    from bot.pipeline import conclude

    triage = conclude(issue, the_plan, run, environment, label_prefix=cfg.label_prefix)
    if args.json:
        print(json.dumps(triage.to_json(), indent=2))
    else:
        print(triage.comment)
        print()
        print("Labels: " + ", ".join(triage.labels))
    return 0


class _Beside:
    """Run one function in a thread beside the caller; ``result()`` joins it (and re-raises)."""

    def __init__(self, fn: Callable[[], dict[str, str]]) -> None:
        self._fn = fn
        self._value: dict[str, str] = {}
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="reprobot-probe", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._fn()
        except BaseException as e:  # handed to the caller by result()
            self._error = e

    def result(self) -> dict[str, str]:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


def _probe_and_load(probe: Callable[..., dict[str, str]], python: str,
                    cache: Path | None) -> dict[str, str]:
    import bot.pipeline  # noqa: F401  (loaded here, beside the run, for conclude)

    return probe(python, cache_dir=cache)


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
    bad = [q for q in queues if q not in ("triage", "cpu", "gpu")]
    if not queues or bad:
        raise ReprobotError(f"--queues takes triage, cpu and/or gpu (got {args.queues!r})")
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


if __name__ == "__main__":
    raise SystemExit(main())
