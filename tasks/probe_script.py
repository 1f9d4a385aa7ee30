"""Environment probe, run by the TARGET interpreter (the one with apache-tvm), not the bot.

Prints one JSON object on stdout: see ``tasks.probe.KEYS``. Every value is a string ("" when
unknown); nothing here may raise out: a probe that cannot find a fact leaves it empty.
Standard library + tvm/numpy only; runs with ``python -I``.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import subprocess
from collections.abc import Callable


def _try(fn: Callable[[], object], default: str = "") -> str:
    try:
        v = fn()
    except Exception:
        return default
    return default if v is None else str(v)


def _nvidia_smi() -> tuple[str, str, str]:
    """(gpu names, driver version, driver CUDA version) from nvidia-smi, if present."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return "", "", ""
    try:
        q = subprocess.run(
            [smi, "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=30,
        )
        full = subprocess.run([smi], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "", "", ""
    names: list[str] = []
    driver = ""
    for line in q.stdout.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 2:
            names.append(parts[0])
            driver = parts[1]
    cuda = ""
    for token in full.stdout.split("CUDA Version:")[1:2]:
        cuda = token.split()[0].strip("|") if token.split() else ""
    gpus = ", ".join(f"{n} x{names.count(n)}" if names.count(n) > 1 else n
                     for n in dict.fromkeys(names))
    return gpus, driver, cuda


def _os_name() -> str:
    pretty = ""
    with contextlib.suppress(OSError, AttributeError):
        pretty = platform.freedesktop_os_release().get("PRETTY_NAME", "")
    kernel = f"{platform.system()} {platform.release()} {platform.machine()}"
    return f"{pretty} ({kernel})" if pretty else kernel


def _cpu() -> str:
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith(("model name", "hardware", "cpu model")):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    model = model or platform.processor() or platform.machine()
    n = os.cpu_count() or 0
    return f"{model} ({n} cores)" if n else model


def _cuda_built(tvm: object, lib: dict[str, str]) -> bool:
    pkg = os.path.dirname(getattr(tvm, "__file__", "") or "")
    for sub in ("lib", ""):
        try:
            if any(n.startswith("libtvm_runtime_cuda") for n in os.listdir(os.path.join(pkg, sub))):
                return True
        except OSError:
            pass
    return False


def main() -> None:
    info: dict[str, str] = {
        "python": platform.python_version(),
        "os": _os_name(),
        "cpu": _cpu(),
        "numpy": _try(lambda: __import__("numpy").__version__),
    }
    gpus, driver, driver_cuda = _nvidia_smi()
    info["gpu_driver"] = driver
    try:
        import tvm  # noqa: F401
    except Exception as e:  # a broken TVM install is a fact to report, not a probe crash
        info.update(tvm_version="", tvm_commit="", tvm_commit_date="", llvm_version="",
                    cuda_enabled="", cuda_version=driver_cuda, gpu=gpus,
                    tvm_error=f"{type(e).__name__}: {e}"[:300])
        print(json.dumps(info))
        return
    lib: dict[str, str] = {}
    try:
        lib = {str(k): str(v) for k, v in tvm.support.libinfo().items()}
    except Exception:
        lib = {}
    info["tvm_version"] = _try(lambda: tvm.__version__)
    commit = lib.get("GIT_COMMIT_HASH", "")
    if not commit or commit == "NOT-FOUND":
        commit = _try(lambda: __import__("tvm._version", fromlist=["x"]).__commit_id__)
        commit = commit[1:] if commit.startswith("g") and len(commit) > 7 else commit
    info["tvm_commit"] = commit
    info["tvm_commit_date"] = str(lib.get("GIT_COMMIT_TIME", "")).replace("NOT-FOUND", "")
    llvm = str(lib.get("LLVM_VERSION", ""))
    if not llvm or llvm == "NOT-FOUND":
        llvm = _try(lambda: tvm.target.codegen.llvm_version_major(allow_none=True))
    info["llvm_version"] = llvm
    enabled = _try(lambda: bool(tvm.runtime.enabled("cuda")))
    if enabled == "True":
        info["cuda_enabled"] = "yes"
    elif _cuda_built(tvm, lib):
        # The build has CUDA, but its runtime cannot load here (no driver / no GPU).
        info["cuda_enabled"] = "built-in, no driver"
    else:
        info["cuda_enabled"] = "no"
    cuda = str(lib.get("CUDA_VERSION", "")).replace("NOT-FOUND", "")
    if not cuda and info["cuda_enabled"] == "yes":
        cuda = _try(lambda: __import__("tvm.contrib.nvcc", fromlist=["x"]).get_cuda_version())
    info["cuda_version"] = cuda or driver_cuda
    if not gpus and info["cuda_enabled"] == "yes":
        try:
            dev = tvm.cuda(0)
            if dev.exist:
                gpus = str(dev.device_name)
        except Exception:
            pass
    info["gpu"] = gpus
    print(json.dumps(info))


if __name__ == "__main__":
    main()
