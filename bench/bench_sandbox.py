"""Start-up cost of a sandboxed run vs a bare ``python repro.py`` on the same tiny script.

Alternates the two, N times each, in one process; prints the medians, the added milliseconds
and the ratio. Target: the sandbox adds well under 100 ms.

    .venv/bin/python bench/bench_sandbox.py [N] [--backend bwrap|none]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bot.config import SandboxConfig
from tasks.runner import run_script

SCRIPT = "import sys\nprint('hello from', sys.argv[0])\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=30)
    ap.add_argument("--backend", default="bwrap")
    ap.add_argument("--python", default=sys.executable)
    a = ap.parse_args()
    cfg = SandboxConfig(backend=a.backend)
    scratch = Path(tempfile.mkdtemp(prefix="bench-bare-"))
    (scratch / "repro.py").write_text(SCRIPT)
    run_script(SCRIPT, python=a.python, sandbox=cfg)  # warm caches (interpreter layout)
    bare: list[float] = []
    boxed: list[float] = []
    for _ in range(a.n):
        t = time.perf_counter()
        subprocess.run([a.python, "-X", "faulthandler", "repro.py"], cwd=scratch,
                       capture_output=True, check=True)
        bare.append(time.perf_counter() - t)
        t = time.perf_counter()
        res = run_script(SCRIPT, python=a.python, sandbox=cfg)
        boxed.append(time.perf_counter() - t)
        assert res.exit_code == 0, res
    mb, ms = statistics.median(bare), statistics.median(boxed)
    print(f"runs: {a.n} each, alternating; backend: {a.backend}")
    print(f"bare python repro.py   median {mb * 1000:7.1f} ms")
    print(f"sandboxed run_script   median {ms * 1000:7.1f} ms")
    print(f"added by the sandbox   {1000 * (ms - mb):7.1f} ms   ratio {ms / mb:.2f}")


if __name__ == "__main__":
    main()
