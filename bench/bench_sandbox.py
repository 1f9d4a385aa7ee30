"""Start-up cost of a sandboxed run, per backend, vs a bare ``python repro.py`` of the same tiny
script.

Alternates bare and every backend this machine can run (bwrap; docker when a daemon and the
image are there, else it says why it is skipped), N times each, in one process; prints the
medians, the added milliseconds and the ratio to bare. Target: bwrap adds well under 100 ms;
docker costs a container start.

    .venv/bin/python bench/bench_sandbox.py [N] [--backends bwrap,docker]
        [--docker-image reprobot-sandbox-test:latest] [--docker-python /usr/bin/python3]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bot.config import SandboxConfig
from bot.errors import InfraError
from tasks.backends import Sandbox, make_sandbox
from tasks.runner import run_script

SCRIPT = "import sys\nprint('hello from', sys.argv[0])\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=20)
    ap.add_argument("--backends", default="bwrap,docker")
    ap.add_argument("--python", default=sys.executable, help="interpreter for bwrap / none")
    ap.add_argument("--docker-image", default="reprobot-sandbox-test:latest")
    ap.add_argument("--docker-python", default="/usr/bin/python3",
                    help="interpreter inside the docker image")
    a = ap.parse_args()

    boxes: dict[str, tuple[Sandbox, str]] = {}
    for name in [b.strip() for b in a.backends.split(",") if b.strip()]:
        cfg = SandboxConfig(backend=name, docker_image=a.docker_image)
        python = a.docker_python if name == "docker" else a.python
        if name == "docker" and shutil.which("docker") is None:
            print(f"{name:>6}: skipped (no docker command)")
            continue
        try:
            box = make_sandbox(cfg)
            box.check()
            run_script(SCRIPT, python=python, sandbox=box)  # warm caches (interpreter layout)
        except InfraError as e:
            print(f"{name:>6}: skipped ({' '.join(str(e).split())[:200]})")
            continue
        boxes[name] = (box, python)

    scratch = Path(tempfile.mkdtemp(prefix="bench-bare-"))
    (scratch / "repro.py").write_text(SCRIPT)
    bare: list[float] = []
    timed: dict[str, list[float]] = {name: [] for name in boxes}
    for _ in range(a.n):
        t = time.perf_counter()
        subprocess.run([a.python, "-X", "faulthandler", "repro.py"], cwd=scratch,
                       capture_output=True, check=True)
        bare.append(time.perf_counter() - t)
        for name, (box, python) in boxes.items():
            t = time.perf_counter()
            res = run_script(SCRIPT, python=python, sandbox=box)
            timed[name].append(time.perf_counter() - t)
            assert res.exit_code == 0, res
    shutil.rmtree(scratch, ignore_errors=True)
    mb = statistics.median(bare)
    print(f"runs: {a.n} each, alternating")
    print(f"{'bare':>6}: python repro.py   median {mb * 1000:7.1f} ms")
    for name, times in timed.items():
        ms = statistics.median(times)
        print(f"{name:>6}: run_script       median {ms * 1000:7.1f} ms   "
              f"added {1000 * (ms - mb):7.1f} ms   ratio {ms / mb:5.2f}")


if __name__ == "__main__":
    main()
