"""``reprobot triage ISSUE.md`` vs a bare ``python repro.py`` of the same ~2 s TVM script.

In one process, alternating, N times each: the bot's whole pipeline (extraction, sandboxed run,
probe from its cache, classification, rendering) as a subprocess of the console script, against
the script alone. Prints the medians and the median ratio (target <= 1.05).

    .venv/bin/python bench/bench_triage.py [N] [--tvm-first] [--bot-arg=--no-warm] [--tree DIR]

``reprobot triage`` uses its warm start here (the sandbox does the script's leading imports
``time``, ``numpy``, ``tvm``, ``tvm.te`` while the issue is read); ``--tvm-first`` moves
``import tvm`` first. ``--bot-arg`` adds an option to the ``reprobot triage`` command line
(repeat), e.g. ``--bot-arg=--no-warm`` for the cold path on the same machine. ``--tree DIR``
(repeat) also times another checkout of reprobot (e.g. a ``git worktree`` of the previous
commit: the baseline of a change) in the same alternation; then every checkout, this one
included, runs through the same driver (``python -c``, the checkout first on ``PYTHONPATH``,
its own cache directory) rather than the console script.
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

SCRIPT = '''\
import time
import numpy as np
import tvm
from tvm import te

n = 64
A = te.placeholder((n, n), name="A")
B = te.compute((n, n), lambda i, j: A[i, j] * 2.0, name="B")
f = tvm.build(te.create_prim_func([A, B]), target="llvm")
a = tvm.runtime.tensor(np.ones((n, n), dtype="float32"))
b = tvm.runtime.tensor(np.zeros((n, n), dtype="float32"))
t = time.time()
while time.time() - t < 0.5:  # some work after the import
    f(a, b)
assert float(b.numpy().sum()) == 2.0 * n * n
print("done")
'''

ISSUE = f"""# [Bug] doubling kernel

Running this:

```python
{SCRIPT}```

It prints `done` but I expected it to fail.
"""


# `reprobot triage` of the checkout first on PYTHONPATH, as the console script runs it.
DRIVER = """\
import sys
sys.argv = ["reprobot", *sys.argv[1:]]
from bot.entry import console
console()
"""

TVM_FIRST = SCRIPT.replace("import time\nimport numpy as np\nimport tvm\n",
                           "import tvm\nimport time\nimport numpy as np\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("n", nargs="?", type=int, default=7)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--tvm-first", action="store_true", help="the script imports tvm first")
    ap.add_argument("--bot-arg", action="append", default=[], help="extra reprobot triage option")
    ap.add_argument("--versus", metavar="ARG",
                    help="also time `reprobot triage ... ARG` in the same alternation "
                    "(e.g. --versus=--no-warm)")
    ap.add_argument("--tree", action="append", default=[], help="another reprobot checkout")
    a = ap.parse_args()
    script = TVM_FIRST if a.tvm_first else SCRIPT
    issue = ISSUE.replace(SCRIPT, script)
    bindir = Path(a.python).parent
    reprobot = shutil.which("reprobot", path=str(bindir)) or shutil.which("reprobot")
    if reprobot is None:
        sys.exit("no `reprobot` console script next to the interpreter (pip install -e .)")
    work = Path(tempfile.mkdtemp(prefix="bench-triage-"))
    try:
        _measure(a, script, issue, reprobot, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _measure(a: argparse.Namespace, script: str, issue: str, reprobot: str, work: Path) -> None:
    (work / "issue.md").write_text(issue)
    (work / "repro.py").write_text(script)
    env = dict(os.environ, XDG_CACHE_HOME=str(work / "cache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user runs it: with .pyc files
    args = ["triage", str(work / "issue.md"), "--json", "--tvm-python", a.python, *a.bot_arg]
    bots: dict[str, tuple[list[str], dict[str, str]]] = {}
    if a.tree:
        here = Path(__file__).resolve().parent.parent
        for i, tree in enumerate([here, *(Path(t).resolve() for t in a.tree)]):
            label = "this checkout" if i == 0 else str(tree)
            bots[label] = ([a.python, "-c", DRIVER, *args],
                           dict(env, PYTHONPATH=str(tree), XDG_CACHE_HOME=str(work / f"cache{i}")))
    else:
        bots["reprobot triage issue.md"] = ([reprobot, *args], env)
    if a.versus:
        for label, (cmd, benv) in list(bots.items()):
            bots[f"{label} {a.versus}"] = ([*cmd, a.versus], benv)
    bare = [a.python, "-X", "faulthandler", "repro.py"]
    for cmd, benv in bots.values():  # fills the probe cache and the launch recipe
        first = subprocess.run(cmd, cwd=work, capture_output=True, text=True, env=benv)
        if first.returncode != 0 or '"passed"' not in first.stdout:
            sys.exit(f"reprobot triage did not pass the script:\n{first.stdout[-2000:]}\n"
                     f"{first.stderr[-2000:]}")
    t_bare: list[float] = []
    times: dict[str, list[float]] = {label: [] for label in bots}
    for _ in range(a.n):
        t = time.perf_counter()
        subprocess.run(bare, cwd=work, capture_output=True, check=True, env=env)
        t_bare.append(time.perf_counter() - t)
        for label, (cmd, benv) in bots.items():
            t = time.perf_counter()
            subprocess.run(cmd, cwd=work, capture_output=True, check=True, env=benv)
            times[label].append(time.perf_counter() - t)
    shape = "import tvm first" if a.tvm_first else "import time, numpy, then tvm"
    print(f"runs: {a.n} each, alternating; script: {shape}; bot options: "
          f"{' '.join(a.bot_arg) or 'none'}")
    print(f"bare python repro.py      median {statistics.median(t_bare):6.2f} s")
    for label, ts in times.items():
        ratios = [b / s for b, s in zip(ts, t_bare, strict=True)]
        added = statistics.median(b - s for b, s in zip(ts, t_bare, strict=True))
        print(f"{label}  median {statistics.median(ts):6.2f} s, "
              f"added (median of pairs) {added * 1000:4.0f} ms, "
              f"median ratio {statistics.median(ratios):.3f} (target <= 1.05); "
              f"best of each {min(ts):.2f} / {min(t_bare):.2f} s = "
              f"{min(ts) / min(t_bare):.3f} (a busy machine's noise is one-sided)")

if __name__ == "__main__":
    main()
