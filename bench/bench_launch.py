"""How soon ``reprobot triage`` starts its sandbox: the part of its overhead that is the bot's
own start-up (interpreter, imports, config, the launch), measured without the script's noise.

bench_triage.py times whole triages of a 2 s script, where a run-to-run spread of +-150 ms on
a shared 2-core machine hides a 20 ms change. This bench times only the span from spawning
``reprobot triage`` to the moment it spawns the sandbox (an audit hook on ``subprocess.Popen`` and ``os.posix_spawn``
reports it), against the bare interpreter's own start (``python -c pass``) in the same
alternation. The sandbox is then killed: no script runs.

    .venv/bin/python bench/bench_launch.py [N] [--tree DIR ...]

``--tree DIR`` (repeat) also times another checkout of reprobot (e.g. a ``git worktree`` of an
older commit), put first on ``PYTHONPATH``: the baseline of a change.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ISSUE = """# [Bug] doubling kernel

```python
import numpy as np
import tvm
from tvm import te

A = te.placeholder((8,), name="A")
B = te.compute((8,), lambda i: A[i] * 2.0, name="B")
print(tvm.build(te.create_prim_func([A, B]), target="llvm"))
```
"""

# Runs the console entry with a hook that prints the time the sandbox is spawned, then exits
# at once (os._exit: the prestarted sandbox dies with its parent, bwrap --die-with-parent).
DRIVER = """\
import os, sys, time
def hook(event, args):  # (an early start spawns with os.posix_spawn)
    if event in ("subprocess.Popen", "os.posix_spawn") and str(args[0]).endswith("sh"):
        os.write(2, b"SPAWN %r\\n" % time.time())
        os._exit(0)
sys.addaudithook(hook)
sys.argv = ["reprobot", "triage", *sys.argv[1:]]
tree = os.environ["PYTHONPATH"].split(os.pathsep)[0]
if os.path.exists(os.path.join(tree, "bot", "entry.py")):
    from bot.entry import console
else:  # (a checkout from before bot/entry.py; not by ImportError: the editable install's
    from bot.cli import console  # finder would find this checkout's bot.entry)
console()
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=20)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--tree", action="append", default=[], help="another reprobot checkout")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-launch-"))
    try:
        _measure(a, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _spawn_ms(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    t0 = time.time()
    r = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    spawn = [ln for ln in r.stderr.splitlines() if ln.startswith("SPAWN ")]
    if not spawn:
        sys.exit(f"no sandbox was started:\n{r.stdout[-1500:]}\n{r.stderr[-1500:]}")
    return (float(spawn[0].split()[1]) - t0) * 1000


def _measure(a: argparse.Namespace, work: Path) -> None:
    (work / "issue.md").write_text(ISSUE)
    env = dict(os.environ, XDG_CACHE_HOME=str(work / "cache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user runs it: with .pyc files
    args = [str(work / "issue.md"), "--json", "--tvm-python", a.python]
    here = str(Path(__file__).resolve().parent.parent)
    trees = [here, *(str(Path(t).resolve()) for t in a.tree)]
    cmds = {t: ([a.python, "-c", DRIVER, *args], dict(env, PYTHONPATH=t)) for t in trees}
    for cmd, tenv in cmds.values():  # fills the probe and layout caches, compiles .pyc
        _spawn_ms(cmd, tenv, work)
    bare: list[float] = []
    times: dict[str, list[float]] = {t: [] for t in trees}
    for _ in range(a.n):
        t0 = time.perf_counter()
        subprocess.run([a.python, "-c", "pass"], env=env, cwd=work, check=True)
        bare.append((time.perf_counter() - t0) * 1000)
        for t, (cmd, tenv) in cmds.items():
            times[t].append(_spawn_ms(cmd, tenv, work))
    print(f"runs: {a.n} each, alternating")
    print(f"python -c pass (the interpreter's start)   median {statistics.median(bare):6.1f} ms,"
          f" best {min(bare):6.1f} ms")
    for t, ts in times.items():
        label = "this checkout" if t == here else t
        print(f"reprobot triage -> sandbox spawned, {label}: median {statistics.median(ts):6.1f} ms,"
              f" best {min(ts):6.1f} ms; ratio to the interpreter's start "
              f"{statistics.median(ts) / statistics.median(bare):.2f} (median), "
              f"{min(ts) / min(bare):.2f} (best)")


if __name__ == "__main__":
    main()
