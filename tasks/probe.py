"""Environment probe: what the target interpreter runs (TVM, LLVM, CUDA, GPU, Python, OS, CPU).

``probe_environment`` runs ``tasks/probe_script.py`` with the target interpreter (our own
trusted code, outside the sandbox: it may call ``nvidia-smi``) and caches the answer on disk per
interpreter, keyed by the interpreter's real path and mtime and by the installed TVM package
(directory mtimes and dist-info names in the interpreter's site-packages). A new build or a
``pip install -U apache-tvm`` changes the key; repeated runs pay nothing but a few ``stat``s.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from bot.errors import InfraError
from tasks import sandbox as sb

KEYS = (
    "tvm_version",
    "tvm_commit",
    "tvm_commit_date",
    "llvm_version",
    "cuda_enabled",
    "cuda_version",
    "gpu",
    "gpu_driver",
    "python",
    "numpy",
    "os",
    "cpu",
)
PROBE_SCRIPT = Path(__file__).with_name("probe_script.py")
PROBE_TIMEOUT_S = 180.0
_CACHE_VERSION = "1"
_memo: dict[str, dict[str, str]] = {}


def default_cache_dir(environ: Mapping[str, str]) -> Path:
    """``$XDG_CACHE_HOME/reprobot`` (else ``~/.cache/reprobot``); the CLI passes it down."""
    base = environ.get("XDG_CACHE_HOME") or str(Path(environ.get("HOME") or "~").expanduser()
                                                / ".cache")
    return Path(base) / "reprobot"


def probe_environment(python: str, *, cache_dir: Path | None = None) -> dict[str, str]:
    """Facts about the interpreter that runs the repros; every key of ``KEYS``, "" if unknown.

    Cached in memory and, when ``cache_dir`` is given, on disk. Raises InfraError when the
    interpreter is missing or the probe itself cannot run.
    """
    key = cache_key(python, cache_dir)
    if key in _memo:
        return dict(_memo[key])
    path = cache_dir / f"env-{key}.json" if cache_dir is not None else None
    if path is not None:
        cached = _read_cache(path)
        if cached is not None:
            _memo[key] = cached
            return dict(cached)
    info = _run_probe(python, cache_dir)
    _memo[key] = info
    if path is not None:
        _write_cache(path, info)
    return dict(info)


def cache_key(python: str, cache_dir: Path | None = None) -> str:
    """Changes when the interpreter or its installed TVM changes."""
    layout = sb.interpreter_layout(python, cache_dir)  # raises InfraError when missing
    real = os.path.realpath(layout.executable)
    parts = [_CACHE_VERSION, layout.executable, real, _mtime(real)]
    for site in layout.site:
        parts.append(site)
        with contextlib.suppress(OSError):
            for name in sorted(os.listdir(site)):
                low = name.lower()
                if low == "tvm" or low.startswith(("apache_tvm", "tvm-", "tvm_")) or \
                        low.endswith(".pth"):
                    parts += [name, _mtime(os.path.join(site, name))]
                    if low == "tvm":
                        parts += _lib_mtimes(os.path.join(site, name))
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def _lib_mtimes(tvm_dir: str) -> list[str]:
    out: list[str] = []
    for sub in ("", "lib"):
        p = os.path.join(tvm_dir, sub)
        with contextlib.suppress(OSError):
            for name in sorted(os.listdir(p)):
                if name.endswith(".so") or name == "_version.py":
                    out += [name, _mtime(os.path.join(p, name))]
    return out


def _mtime(p: str) -> str:
    try:
        return str(os.stat(p).st_mtime_ns)
    except OSError:
        return "-"


def _run_probe(python: str, cache_dir: Path | None = None) -> dict[str, str]:
    exe = sb.interpreter_layout(python, cache_dir).executable
    try:
        r = subprocess.run(
            [exe, "-I", str(PROBE_SCRIPT)],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            env={"PATH": os.environ.get("PATH", sb.SANDBOX_PATH), "LANG": "C.UTF-8",
                 "HOME": tempfile.gettempdir()},
            cwd=tempfile.gettempdir(),
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InfraError(f"environment probe with {exe!r} failed: {e}") from e
    try:
        raw = json.loads(r.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError) as e:
        raise InfraError(
            f"environment probe with {exe!r} printed no result (exit {r.returncode}): "
            f"{r.stderr.strip()[-400:]}"
        ) from e
    info = {k: str(raw.get(k, "") or "") for k in KEYS}
    if raw.get("tvm_error"):
        info["tvm_error"] = str(raw["tvm_error"])
    return info


def _read_cache(path: Path) -> dict[str, str] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not all(k in data for k in KEYS):
        return None
    return {str(k): str(v) for k, v in data.items()}


def _write_cache(path: Path, info: Mapping[str, str]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".env-", suffix=".json")
        with os.fdopen(fd, "w") as f:
            json.dump(dict(info), f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        pass  # a cache we cannot write is only slower, never wrong
