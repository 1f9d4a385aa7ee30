"""Making TVM builds on disk: venvs, pip, git, CMake (scikit-build-core), the smoke test, the registry.

A build is a name (``main``, ``0.26.0``) with installs under ``<root>/<name>/installs/<id>/``;
``<root>/<name>/current`` is a symlink to the install runs use. Layout::

    <root>/.ccache/                        shared ccache (source builds)
    <root>/<name>/spec.json                how to make it (bot.builds.BuildSpec)
    <root>/<name>/smoke.py                 copy of ``--smoke FILE`` (if given)
    <root>/<name>/state.json               the last attempt: status, error, log tail
    <root>/<name>/lock                     flock held while the build is made
    <root>/<name>/current -> installs/<id> switched by os.replace of a new symlink (atomic)
    <root>/<name>/installs/<id>/venv/      the environment (python = venv/bin/python)
    <root>/<name>/installs/<id>/build.json its BuildInfo, written LAST (none = not usable)
    <root>/<name>/installs/<id>/build.log
    <root>/<name>/installs/<id>/inuse      flock (shared) held by runs; prune skips it
    <root>/<name>/src/                     source builds: persistent git checkout
    <root>/<name>/cmake-build/             persistent CMake build directory (incremental)

A source build is built as a wheel by the repository's own ``pyproject.toml`` (scikit-build-core
+ CMake) with ``pip wheel --no-build-isolation`` run by this interpreter (which has
scikit-build-core: the ``builds`` extra), ``-C build-dir=<name>/cmake-build`` so the next commit
is incremental, ``-C cmake.define.K=V`` for the flags and ccache when it is installed; the wheel
is installed into a fresh venv. Only the configured repository is built (trusted code).

An install becomes current only after its smoke test passed in the sandbox; a failed fetch,
build or smoke test keeps the previous current install and is recorded in ``state.json``.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from bot.builds import (
    KIND_RELEASE,
    KIND_SOURCE,
    STATUS_BUILDING,
    STATUS_FAILED,
    STATUS_READY,
    BuildInfo,
    BuildSpec,
    check_name,
    order_builds,
)
from bot.config import SandboxConfig
from bot.errors import InfraError, ReprobotError

_List = list  # Registry has a method named list

LOG_TAIL_LINES = 40
GIT_TIMEOUT_S = 1800
BUILD_TIMEOUT_S = 6 * 3600
PIP_TIMEOUT_S = 1800
SMOKE_TIMEOUT_S = 300.0

# The default smoke test: import TVM, compile a tiny kernel for llvm and run it (TVM 0.2x APIs).
DEFAULT_SMOKE = '''\
import numpy as np
import tvm
from tvm import te

print("tvm", tvm.__version__)
n = 16
A = te.placeholder((n,), name="A", dtype="float32")
B = te.compute((n,), lambda i: A[i] * 2.0 + 1.0, name="B")
func = te.create_prim_func([A, B])
build = getattr(tvm, "compile", None) or tvm.build
mod = build(func, target="llvm")
dev = tvm.cpu(0)
tensor = getattr(tvm.runtime, "tensor", None) or tvm.nd.array
a = tensor(np.arange(n, dtype="float32"), dev)
b = tensor(np.zeros(n, dtype="float32"), dev)
mod(a, b)
np.testing.assert_allclose(b.numpy(), np.arange(n, dtype="float32") * 2.0 + 1.0)
print("smoke ok")
'''

# How an install tells its version and commit (run outside the sandbox: trusted, no script).
_IDENTITY = '''\
import json
try:
    import tvm
    v = str(getattr(tvm, "__version__", ""))
    c = ""
    try:
        c = str(tvm.support.libinfo().get("GIT_COMMIT_HASH", ""))
    except Exception:
        pass
    if not c or c == "NOT-FOUND":
        try:  # release wheels: setuptools-scm's "g<short sha>"
            from tvm import _version
            c = str(_version.__commit_id__ or "")
            c = c[1:] if c.startswith("g") and len(c) > 7 else c
        except Exception:
            c = ""
    print(json.dumps({"version": v, "commit": "" if c == "NOT-FOUND" else c}))
except Exception as e:
    print(json.dumps({"error": type(e).__name__ + ": " + str(e)}))
'''


class BuildError(ReprobotError):
    """A build could not be made (fetch, compile, install or smoke test), or is not there."""


def install_id_for(sha: str, defines: Sequence[tuple[str, str]]) -> str:
    """``<sha[:12]>``, plus a hash of the CMake flags when there are any."""
    if not defines:
        return sha[:12]
    import hashlib

    digest = hashlib.sha256(json.dumps(sorted(defines)).encode()).hexdigest()[:8]
    return f"{sha[:12]}-{digest}"


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def default_builds_dir(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME") or "~").expanduser()
                                                / ".cache")
    return Path(base) / "reprobot" / "builds"


def _tail(text: str, lines: int = LOG_TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


class _Log:
    """The log of one attempt: every command and its output, kept in a file."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._f: IO[str] = open(path, "w", encoding="utf-8", errors="replace")  # noqa: SIM115

    def write(self, text: str) -> None:
        self._f.write(text)
        self._f.flush()

    def close(self) -> None:
        self._f.close()

    def tail(self) -> str:
        try:
            return _tail(self.path.read_text(errors="replace"))
        except OSError:
            return ""

    def run(self, argv: Sequence[str], *, what: str, cwd: Path | None = None,
            env: Mapping[str, str] | None = None, timeout: float = GIT_TIMEOUT_S) -> str:
        """Run a command, logging it; its stdout is returned; BuildError names ``what`` on failure."""
        self.write(f"$ {' '.join(argv)}\n")
        try:
            r = subprocess.run(list(argv), cwd=cwd,
                               env=dict(env) if env is not None else _no_secrets(os.environ),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               errors="replace", timeout=timeout)
        except subprocess.TimeoutExpired as e:
            out = e.stdout if isinstance(e.stdout, str) else ""
            self.write(out + f"\n[timed out after {timeout:.0f} s]\n")
            raise BuildError(f"{what} timed out after {timeout:.0f} s") from e
        except OSError as e:
            self.write(f"[cannot run: {e}]\n")
            raise BuildError(f"{what}: cannot run {argv[0]}: {e.strerror or e}") from e
        self.write(r.stdout)
        if r.returncode != 0:
            self.write(f"[exit {r.returncode}]\n")
            raise BuildError(f"{what} failed (exit {r.returncode})")
        return r.stdout


def _no_secrets(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment of build commands: no GitHub credentials (builds never need them)."""
    return {k: v for k, v in environ.items()
            if not k.startswith(("GITHUB_", "REPROBOT_DASHBOARD_", "REPROBOT_OAUTH_",
                                      "REPROBOT_SESSION_"))}


@contextlib.contextmanager
def _flock(path: Path, *, shared: bool = False, wait: bool = True) -> Iterator[bool]:
    """Hold a lock file; yields False (holding nothing) when ``wait`` is off and it is taken."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        flags = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        if not wait:
            flags |= fcntl.LOCK_NB
        try:
            fcntl.flock(fd, flags)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Write a JSON file atomically (a reader sees the old or the new file, never half)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(dict(data), f, indent=1, sort_keys=True)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class Registry:
    """The builds under one directory (config ``builds.dir``)."""

    def __init__(self, root: Path | str, *, sandbox: SandboxConfig | None = None,
                 base_python: str | None = None):
        self.root = Path(root).expanduser()
        self.sandbox = sandbox or SandboxConfig()
        # The interpreter that makes the venvs and runs pip / the wheel build.
        self.base_python = base_python or sys.executable

    # -- reading ---------------------------------------------------------------------------
    def _dir(self, name: str) -> Path:
        return self.root / check_name(name)

    def names(self) -> _List[str]:
        try:
            entries = sorted(os.listdir(self.root))
        except OSError:
            return []
        return [n for n in entries if not n.startswith(".") and (self.root / n / "spec.json").is_file()]

    def exists(self, name: str) -> bool:
        return (self._dir(name) / "spec.json").is_file()

    def spec(self, name: str) -> BuildSpec:
        data = _read_json(self._dir(name) / "spec.json")
        if data is None:
            raise BuildError(f"no build named {name!r} in {self.root} "
                             f"(known: {', '.join(self.names()) or 'none'})")
        return BuildSpec.from_json(data)

    def _install_info(self, install: Path) -> BuildInfo | None:
        data = _read_json(install / "build.json")
        if data is None:
            return None
        return BuildInfo.from_json(data)

    def current(self, name: str) -> BuildInfo | None:
        """The current install of ``name`` (resolved once: its python is the install's own)."""
        link = self._dir(name) / "current"
        try:
            target = os.readlink(link)
        except OSError:
            return None
        return self._install_info(link.parent / target)

    def _state(self, name: str) -> dict[str, Any]:
        return _read_json(self._dir(name) / "state.json") or {}

    def info(self, name: str) -> BuildInfo:
        """The list entry: the current install's identity with the last attempt's status."""
        spec = self.spec(name)
        cur = self.current(name)
        state = self._state(name)
        status = str(state.get("status") or (STATUS_READY if cur else STATUS_FAILED))
        if status == STATUS_BUILDING and not self._building(name):
            status = STATUS_FAILED  # the builder died: say so rather than "building" forever
            state.setdefault("error", "the build was interrupted")
        if not state and cur is None:
            state = {"error": f"not built yet (run: reprobot builds update {name})"}
        error = str(state.get("error") or "") if status == STATUS_FAILED else ""
        if cur is None:
            return BuildInfo(name=name, kind=spec.kind, status=status, error=error,
                             flags=spec.cmake_defines, source=spec.source)
        return BuildInfo(
            name=name, kind=cur.kind, version=cur.version, commit=cur.commit,
            built_at=cur.built_at, status=status, python=cur.python, error=error,
            flags=cur.flags, source=cur.source, install_id=cur.install_id,
        )

    def _building(self, name: str) -> bool:
        with _flock(self._dir(name) / "lock", wait=False) as got:
            return not got

    def list(self) -> _List[BuildInfo]:  # noqa: A003
        return order_builds(self.info(n) for n in self.names())

    def get(self, name: str) -> BuildInfo:
        """The current install of ``name``; BuildError when it has none (yet)."""
        spec = self.spec(name)  # raises "no build named"
        cur = self.current(name)
        if cur is None:
            state = self._state(name)
            why = state.get("error") or state.get("status") or "never built"
            raise BuildError(f"build {name!r} ({spec.source}) has no ready install: "
                             f"{str(why).splitlines()[0]} (run: reprobot builds update {name})")
        return cur

    def python(self, name: str) -> str:
        return self.get(name).python

    @contextlib.contextmanager
    def use(self, name: str) -> Iterator[BuildInfo]:
        """Resolve ``name``'s current install once and hold it in use (prune keeps it) meanwhile."""
        info = self.get(name)
        inuse = self._dir(name) / "installs" / info.install_id / "inuse"
        with _flock(inuse, shared=True):
            yield info

    def installs(self, name: str) -> _List[BuildInfo]:
        """Every complete install of ``name`` on disk, newest first."""
        base = self._dir(name) / "installs"
        try:
            ids = os.listdir(base)
        except OSError:
            return []
        found = [i for i in (self._install_info(base / x) for x in ids if not x.startswith("."))
                 if i is not None]
        return sorted(found, key=lambda b: b.built_at, reverse=True)

    def find_install(self, name: str, commit: str) -> BuildInfo | None:
        """A complete install of ``commit`` (a prefix will do) built with the build's current
        source and flags, if there is one."""
        spec = self.spec(name)
        for b in self.installs(name):
            if commit and b.commit.startswith(commit) and b.flags == spec.cmake_defines \
                    and b.source == spec.source:
                return b
        return None

    # -- changing --------------------------------------------------------------------------
    def add(self, spec: BuildSpec, *, smoke_file: Path | None = None) -> None:
        """Record how to make a build (``builds add``); replaces an older spec of that name."""
        d = self._dir(spec.name)
        d.mkdir(parents=True, exist_ok=True)
        smoke = ""
        if smoke_file is not None:
            try:
                text = Path(smoke_file).read_text()
            except OSError as e:
                raise BuildError(f"cannot read smoke script {smoke_file}: {e.strerror or e}") from e
            (d / "smoke.py").write_text(text)
            smoke = "smoke.py"
        elif (d / "smoke.py").exists() and spec.smoke != "smoke.py":
            (d / "smoke.py").unlink()
        from dataclasses import replace

        _write_json(d / "spec.json", replace(spec, smoke=smoke).to_json())

    def remove(self, name: str) -> None:
        d = self._dir(name)
        if not d.exists():
            raise BuildError(f"no build named {name!r} in {self.root}")
        with _flock(d / "lock", wait=False) as got:
            if not got:
                raise BuildError(f"build {name!r} is being built; remove it afterwards")
            (d / "spec.json").unlink(missing_ok=True)  # invisible from now on
            with contextlib.suppress(FileNotFoundError):
                os.unlink(d / "current")
        shutil.rmtree(d, ignore_errors=True)

    def prune(self, keep: int, name: str | None = None) -> _List[str]:
        """Delete all but the newest ``keep`` installs of each build (never the current one, nor
        one a run is using); returns "name/id" of what was deleted."""
        if keep < 1:
            raise BuildError("--keep must be at least 1")
        removed: _List[str] = []
        for n in [name] if name else self.names():
            cur = self.current(n)
            base = self._dir(n) / "installs"
            with _flock(self._dir(n) / "lock", wait=False) as idle:
                if idle:  # nothing is being built: unfinished installs are debris
                    for entry in sorted(os.listdir(base)) if base.is_dir() else []:
                        if not (base / entry / "build.json").exists():
                            shutil.rmtree(base / entry, ignore_errors=True)
                            removed.append(f"{n}/{entry} (unfinished)")
            for b in self.installs(n)[keep:]:
                if cur is not None and b.install_id == cur.install_id:
                    continue
                with _flock(base / b.install_id / "inuse", wait=False) as free:
                    if not free:
                        continue
                    (base / b.install_id / "build.json").unlink(missing_ok=True)
                shutil.rmtree(base / b.install_id, ignore_errors=True)
                removed.append(f"{n}/{b.install_id}")
        return removed

    def _switch(self, name: str, install_id: str) -> None:
        d = self._dir(name)
        tmp = d / f".current.{os.getpid()}"
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        os.symlink(os.path.join("installs", install_id), tmp)
        os.replace(tmp, d / "current")

    def _set_state(self, name: str, status: str, **extra: Any) -> None:
        _write_json(self._dir(name) / "state.json", {"status": status, "at": utc_now(), **extra})

    def update(self, name: str, *, force: bool = False) -> BuildInfo:
        """Create or refresh ``name``: a release installs once; a source build fetches its ref
        and builds when the commit moved. Returns the current install; raises BuildError (the
        previous current install stays) when the fetch, build or smoke test failed."""
        spec = self.spec(name)
        d = self._dir(name)
        with _flock(d / "lock", wait=False) as got:
            if not got:
                raise BuildError(f"build {name!r} is already being built")
            started = utc_now()
            self._set_state(name, STATUS_BUILDING, started=started)
            log = _Log(d / "last.log")
            try:
                if spec.kind == KIND_RELEASE:
                    cur = self.current(name)
                    if cur is not None and cur.source == spec.source and not force:
                        info = cur
                    else:
                        info = self._make_release(spec, log)
                        self._switch(name, info.install_id)
                else:
                    sha = self._fetch(spec, log)
                    cur = self.current(name)
                    same = cur is not None and cur.commit == sha and \
                        cur.flags == spec.cmake_defines and cur.source == spec.source
                    if cur is not None and same and not force:
                        info = cur
                    else:
                        found = None if force else self.find_install(name, sha)
                        if found is not None:  # built before (e.g. by bisection): smoke it
                            self._smoke(spec, found.python, log)
                            info = found
                        else:
                            info = self._make_source(spec, sha, log, smoke=True)
                        self._switch(name, info.install_id)
            except (BuildError, InfraError) as e:
                log.close()
                self._drop_unfinished(name)
                error = f"{e}\n{log.tail()}".strip()
                self._set_state(name, STATUS_FAILED, started=started, error=error)
                raise BuildError(f"build {name!r}: {e}\n{log.tail()}") from e
            log.close()
            self._set_state(name, STATUS_READY, started=started, commit=info.commit,
                            install_id=info.install_id)
            return info

    def build_commit(self, name: str, commit: str, *, smoke: bool = True,
                     make_current: bool = False) -> BuildInfo:
        """Build and install any commit of the source build ``name`` (for bisection), reusing the
        build's checkout and CMake build directory (incremental). Returns the install's
        BuildInfo; the current install changes only with ``make_current``."""
        spec = self.spec(name)
        if spec.kind != KIND_SOURCE:
            raise BuildError(f"build {name!r} is a release build: it has no commits to build")
        d = self._dir(name)
        with _flock(d / "lock") as _:
            log = _Log(d / "last-commit.log")
            try:
                sha = self._fetch(spec, log, commit=commit)
                info = self.find_install(name, sha) or self._make_source(spec, sha, log,
                                                                         smoke=smoke)
            except (BuildError, InfraError) as e:
                self._drop_unfinished(name)
                raise BuildError(f"build {name!r} at {commit}: {e}\n{log.tail()}") from e
            finally:
                log.close()
            if make_current:
                self._switch(name, info.install_id)
            return info

    def commits(self, name: str, good: str, bad: str) -> _List[str]:
        """Full shas after ``good`` up to and including ``bad``, oldest first (first parent)."""
        src = self._dir(name) / "src"
        r = subprocess.run(["git", "-C", str(src), "rev-list", "--first-parent", "--reverse",
                            f"{good}..{bad}"], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise BuildError(f"git rev-list {good}..{bad} failed: {r.stderr.strip()[-300:]}")
        return r.stdout.split()

    # -- making ----------------------------------------------------------------------------
    def _fetch(self, spec: BuildSpec, log: _Log, *, commit: str = "") -> str:
        """Fetch the ref (or ``commit``) into the persistent checkout; returns the full sha."""
        src = self._dir(spec.name) / "src"
        git = ["git", "-C", str(src)]
        if not (src / ".git").exists():
            shutil.rmtree(src, ignore_errors=True)
            src.mkdir(parents=True)
            log.run([*git, "init", "-q"], what="git init")
            log.run([*git, "remote", "add", "origin", spec.git], what="git remote add")
        else:
            log.run([*git, "remote", "set-url", "origin", spec.git], what="git remote set-url")
        want = commit or spec.ref
        try:
            log.run([*git, "fetch", "-q", "--tags", "origin", want], what=f"git fetch {want}")
            target = "FETCH_HEAD"
        except BuildError:
            if not commit:
                raise
            # A commit git cannot fetch by name: fetch the ref, then look for it there.
            log.run([*git, "fetch", "-q", "--tags", "origin", spec.ref],
                    what=f"git fetch {spec.ref}")
            target = commit
        sha = log.run([*git, "rev-parse", f"{target}^{{commit}}"], what="git rev-parse").strip()
        return sha

    def _checkout(self, spec: BuildSpec, sha: str, log: _Log) -> Path:
        src = self._dir(spec.name) / "src"
        git = ["git", "-C", str(src)]
        # Only files that differ are rewritten, so their mtimes (and the rebuild) stay small.
        log.run([*git, "checkout", "-q", "--force", "--detach", sha], what=f"git checkout {sha}")
        log.run([*git, "clean", "-q", "-fdx", "-e", "build/"], what="git clean")
        if (src / ".gitmodules").exists():
            log.run([*git, "submodule", "update", "-q", "--init", "--recursive", "--force"],
                    what="git submodule update")
        return src

    def _drop_unfinished(self, name: str) -> None:
        """Remove installs an attempt left without build.json (caller holds the build lock)."""
        base = self._dir(name) / "installs"
        with contextlib.suppress(OSError):
            for entry in os.listdir(base):
                if not (base / entry / "build.json").exists():
                    shutil.rmtree(base / entry, ignore_errors=True)

    def _new_install(self, name: str, install_id: str) -> tuple[str, Path]:
        """A fresh directory for an install: (id, path). A complete install already there (the
        current one, or one a run may use) is never overwritten: the new one gets another id."""
        base = self._dir(name) / "installs"
        if (base / install_id / "build.json").exists():
            install_id = f"{install_id}-{utc_now().replace('-', '').replace(':', '')}"
        inst = base / install_id
        if inst.exists():  # an earlier attempt that did not finish (no build.json)
            shutil.rmtree(inst)
        inst.mkdir(parents=True)
        return install_id, inst

    def _venv(self, inst: Path, log: _Log) -> str:
        venv = inst / "venv"
        log.run([self.base_python, "-m", "venv", "--without-pip", str(venv)], what="venv")
        return str(venv / "bin" / "python")

    def _pip_install(self, python: str, args: Sequence[str], log: _Log) -> None:
        log.run([self.base_python, "-m", "pip", "--python", python, "install",
                 "--disable-pip-version-check", "--no-input", *args],
                what="pip install", timeout=PIP_TIMEOUT_S)

    def _identity(self, python: str, log: _Log) -> dict[str, str]:
        out = log.run([python, "-I", "-c", _IDENTITY], what="import tvm", timeout=300)
        try:
            data = json.loads(out.strip().splitlines()[-1])
        except (IndexError, ValueError) as e:
            raise BuildError("the install's TVM printed no identity") from e
        if data.get("error"):
            raise BuildError(f"the installed TVM does not import: {data['error']}")
        return {"version": str(data.get("version", "")), "commit": str(data.get("commit", ""))}

    def _smoke(self, spec: BuildSpec, python: str, log: _Log) -> None:
        from dataclasses import replace

        from tasks.runner import run_script

        script = DEFAULT_SMOKE
        if spec.smoke:
            script = (self._dir(spec.name) / spec.smoke).read_text()
        limits = replace(self.sandbox.limits, timeout_s=min(self.sandbox.limits.timeout_s,
                                                            SMOKE_TIMEOUT_S))
        log.write(f"$ smoke test ({'default' if not spec.smoke else spec.smoke}) in the "
                  f"{self.sandbox.backend} sandbox\n")
        run = run_script(script, python=python, sandbox=replace(self.sandbox, limits=limits))
        log.write(run.stdout_tail + run.stderr_tail)
        if run.exit_code != 0 or run.timed_out:
            how = "timed out" if run.timed_out else (
                f"signal {run.signal}" if run.signal else f"exit {run.exit_code}")
            raise BuildError(f"smoke test failed ({how})")
        log.write("[smoke test passed]\n")

    def _finish(self, inst: Path, log: _Log, info: BuildInfo) -> BuildInfo:
        shutil.copyfile(log.path, inst / "build.log")
        _write_json(inst / "build.json", info.to_json())  # last: now the install is complete
        return info

    def _make_release(self, spec: BuildSpec, log: _Log) -> BuildInfo:
        install_id, inst = self._new_install(spec.name,
                                             "r" + utc_now().replace("-", "").replace(":", ""))
        python = self._venv(inst, log)
        self._pip_install(python, list(spec.pip), log)
        ident = self._identity(python, log)
        self._smoke(spec, python, log)
        return self._finish(inst, log, BuildInfo(
            name=spec.name, kind=KIND_RELEASE, version=ident["version"], commit=ident["commit"],
            built_at=utc_now(), python=python, source=spec.source, install_id=install_id,
        ))

    def build_env(self) -> dict[str, str]:
        """The environment of a wheel build: ccache (when installed) with a shared cache."""
        env = _no_secrets(os.environ)
        bindir = os.path.dirname(self.base_python)
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "/usr/bin:/bin")
        if shutil.which("ccache"):
            env["CMAKE_C_COMPILER_LAUNCHER"] = "ccache"
            env["CMAKE_CXX_COMPILER_LAUNCHER"] = "ccache"
            env.setdefault("CCACHE_DIR", str(self.root / ".ccache"))
            env.setdefault("CCACHE_BASEDIR", str(self.root))
        return env

    def build_wheel(self, spec: BuildSpec, src: Path, log: _Log) -> Path:
        """Build the checkout as a wheel (incremental in ``<name>/cmake-build``); its path."""
        d = self._dir(spec.name)
        out = d / "wheels"
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        settings = [f"build-dir={d / 'cmake-build'}"]
        settings += [f"cmake.define.{k}={v}" for k, v in spec.cmake_defines]
        argv = [self.base_python, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation",
                "--disable-pip-version-check", "--no-input", "-w", str(out)]
        for s in settings:
            argv += ["-C", s]
        argv.append(str(src))
        log.run(argv, what="wheel build", env=self.build_env(), timeout=BUILD_TIMEOUT_S)
        wheels = sorted(out.glob("*.whl"))
        if not wheels:
            raise BuildError("the wheel build made no wheel")
        return wheels[0]

    def _make_source(self, spec: BuildSpec, sha: str, log: _Log, *, smoke: bool) -> BuildInfo:
        src = self._checkout(spec, sha, log)
        wheel = self.build_wheel(spec, src, log)
        install_id, inst = self._new_install(spec.name, install_id_for(sha, spec.cmake_defines))
        python = self._venv(inst, log)
        self._pip_install(python, [str(wheel)], log)
        ident = self._identity(python, log)
        if smoke:
            self._smoke(spec, python, log)
        return self._finish(inst, log, BuildInfo(
            name=spec.name, kind=KIND_SOURCE, version=ident["version"], commit=sha,
            built_at=utc_now(), python=python, flags=spec.cmake_defines, source=spec.source,
            install_id=install_id,
        ))


def wait_ready(registry: Registry, name: str, timeout_s: float) -> BuildInfo:
    """Poll until ``name`` has a current install (tests and tools)."""
    deadline = time.monotonic() + timeout_s
    while True:
        cur = registry.current(name)
        if cur is not None:
            return cur
        if time.monotonic() > deadline:
            raise BuildError(f"build {name!r} did not become ready in {timeout_s:.0f} s")
        time.sleep(0.2)


def registry_for(config: Any) -> Registry:
    """The registry of ``config.builds.dir`` with the configured sandbox (for smoke tests)."""
    return Registry(Path(config.builds.dir or default_builds_dir(os.environ)),
                    sandbox=config.sandbox)


@contextlib.contextmanager
def use_for_job(config: Any, name: str) -> Iterator[BuildInfo]:
    """The build a run uses, resolved once and held in use for the run: ``name``, else the
    default build, else the configured interpreter as an ad-hoc build. BuildError when ``name``
    is not ready on this worker."""
    from bot.builds import KIND_ADHOC, default_build

    reg = registry_for(config)
    if not name and reg.names():
        name = default_build(reg.list(), config.builds.default) or ""
    if not name:
        yield BuildInfo(name=KIND_ADHOC, kind=KIND_ADHOC, python=config.tvm.python)
        return
    with reg.use(name) as info:
        yield info


def update_builds(config: Any, names: Sequence[str]) -> dict[str, Any]:
    """Update ``names`` (default: all); declared builds are recorded first. Per name: the
    current install's list entry, or the error (the previous install stays current)."""
    reg = registry_for(config)
    for spec in getattr(config.builds, "declared", ()):
        if not reg.exists(spec.name):
            reg.add(spec, smoke_file=Path(spec.smoke).expanduser() if spec.smoke else None)
    out: dict[str, Any] = {}
    for name in list(names) or reg.names():
        try:
            out[name] = reg.update(name).to_json()
        except BuildError as e:
            out[name] = {"name": name, "status": STATUS_FAILED, "error": str(e)}
    return out
