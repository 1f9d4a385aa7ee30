"""Hostile text: time per MiB of every stage, as a ratio against plain text of the same size.

    python bench/bench_hostile.py [--quick] [--only NAME]

Stages and sizes (the largest GitHub and the runner allow):

* ``extract``  — ``extract_repro`` on issue bodies of 65,536 characters;
* ``reported`` — ``parse_reported`` on the same bodies;
* ``classify`` — ``classify`` on a failed run whose stderr tail is 2 MiB;
* ``conclude`` — the whole ``conclude`` (classify, reported, compare, labels, render) on both
  (its plan, made before the run, is not timed).

Each pathological input (bench/hostile_inputs.py: every special character repeated, pairs,
long lines, many lines, nested frames, half-made traceback and markdown lines) is timed
beside a plain-text baseline of the same size, in the same run, and printed as a ratio. A
stage that is linear in its input shows ratios near 1 at every size; a super-linear one
shows a ratio that grows when the size doubles (``--quick`` runs at half and full size so the
growth is visible). No assertion here: this prints numbers.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from hostile_inputs import PLAIN_LINE, inputs, make  # noqa: E402

from bot.classify import classify  # noqa: E402
from bot.extract import extract_repro  # noqa: E402
from bot.models import Issue, Repro, RunResult  # noqa: E402
from bot.pipeline import conclude, plan  # noqa: E402
from bot.reported import parse_reported  # noqa: E402

BODY = 65_536
OUTPUT = 2 * 1024 * 1024
SCRIPT = "import tvm\nfrom tvm import relax\nmod = relax.transform.FuseOps()(mod)\n"


def _issue(body: str) -> Issue:
    return Issue(title="[Bug] FuseOps fails", body=body, author="someone")


def _body_with_script(filler: str) -> str:
    return f"{filler}\n\n```python\n{SCRIPT}```\n"


def _run(stderr: str) -> RunResult:
    tail = 'Traceback (most recent call last):\n  File "repro.py", line 3, in <module>\n'
    return RunResult(exit_code=1, signal=None, seconds=1.0, stderr_tail=stderr + "\n" + tail)


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def stages(size_body: int, size_out: int) -> dict[str, Callable[[str], Callable[[], object]]]:
    def ex(unit: str) -> Callable[[], object]:
        body = make(unit, size_body)
        return lambda: extract_repro(_issue(body))

    def rep(unit: str) -> Callable[[], object]:
        issue = _issue(_body_with_script(make(unit, size_body)))
        repro = Repro(found=True, script=SCRIPT)
        return lambda: parse_reported(issue, repro)

    def cls(unit: str) -> Callable[[], object]:
        run = _run(make(unit, size_out))
        return lambda: classify(run, script=SCRIPT)

    def whole(unit: str) -> Callable[[], object]:
        issue = _issue(_body_with_script(make(unit, size_body)))
        run = _run(make(unit, size_out))
        # plan (extraction) runs before the script; conclude after it: timed alone here.
        p = replace(plan(_issue(_body_with_script(""))), repro=Repro(found=True, script=SCRIPT))
        return lambda: conclude(issue, p, run, {"tvm": "0.0"})

    return {"extract": ex, "reported": rep, "classify": cls, "conclude": whole}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    ap.add_argument("--quick", action="store_true", help="half and full size, fewer inputs")
    ap.add_argument("--only", default="", help="only inputs whose name contains this")
    ap.add_argument("--stage", default="", help="only this stage")
    args = ap.parse_args()
    scales = (0.5, 1.0) if args.quick else (1.0,)
    named = {k: v for k, v in inputs().items() if args.only in k}
    if args.quick and not args.only:
        named = {k: v for k, v in named.items() if not k.startswith("pair")}
    worst: dict[str, tuple[float, str]] = {}
    for scale in scales:
        sb, so = int(BODY * scale), int(OUTPUT * scale)
        table = stages(sb, so)
        for stage, make_fn in table.items():
            if args.stage and stage != args.stage:
                continue
            size = sb if stage in ("extract", "reported") else so
            base = min(_timed(make_fn(PLAIN_LINE)) for _ in range(2))
            base = max(base, 1e-4)
            mib = size / (1024 * 1024)
            print(f"\n== {stage}  ({size:,} chars; plain text {base / mib * 1000:.1f} ms/MiB)")
            for name, unit in named.items():
                t = _timed(make_fn(unit))
                ratio = t / base
                print(f"  {ratio:8.2f}x  {t / mib * 1000:9.1f} ms/MiB  {name}", flush=True)
                if ratio > worst.get(stage, (0.0, ""))[0]:
                    worst[stage] = (ratio, f"{name} at {size:,}")
    print("\nworst ratio per stage:")
    for stage, (ratio, name) in worst.items():
        print(f"  {stage:9s} {ratio:8.2f}x  ({name})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
