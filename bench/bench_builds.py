"""Full vs incremental build of the TVM-shaped fixture: what the persistent build directory saves.

Makes the fixture repository (tests/tvm_fixture.py) with ``--units`` C++ files, then
``builds update`` twice through the real registry: the first build (everything compiles), then
after a commit that changes one file (one file compiles). Prints, for the wheel build alone
and for the whole update (fetch, wheel, fresh venv, install, smoke test), the seconds and the
ratio full / incremental. ccache is switched off so "full" really compiles everything.

    .venv/bin/python bench/bench_builds.py [--units 8] [--depth 120] [--sandbox bwrap]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from tvm_fixture import SMOKE, TvmRepo  # noqa: E402

from bot.builds import make_spec  # noqa: E402
from bot.config import SandboxConfig  # noqa: E402
from tasks.builder import Registry  # noqa: E402


def wheel_seconds(log: str) -> float:
    """Seconds of the wheel build, from the timestamps the bench puts around it."""
    m = re.search(r"wheel-start (\S+)\n.*wheel-end (\S+)", log, re.S)
    return float(m.group(2)) - float(m.group(1)) if m else float("nan")


class TimedRegistry(Registry):
    def build_wheel(self, spec, src, log):  # type: ignore[no-untyped-def]
        log.write(f"wheel-start {time.perf_counter()}\n")
        out = super().build_wheel(spec, src, log)
        log.write(f"wheel-end {time.perf_counter()}\n")
        return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--units", type=int, default=8)
    ap.add_argument("--depth", type=int, default=120, help="template depth: seconds per unit")
    ap.add_argument("--sandbox", default="bwrap")
    a = ap.parse_args()
    os.environ["CCACHE_DISABLE"] = "1"
    tmp = Path(tempfile.mkdtemp(prefix="bench-builds-"))
    repo = TvmRepo.create(tmp / "tvm", units=a.units, depth=a.depth)
    (tmp / "smoke.py").write_text(SMOKE)
    reg = TimedRegistry(tmp / "builds", sandbox=SandboxConfig(backend=a.sandbox))
    reg.add(make_spec("main", git=repo.url), smoke_file=tmp / "smoke.py")

    rows = []
    for label in ("full", "incremental"):
        if label == "incremental":
            repo.touch_unit(0, salt=1, depth=a.depth)
        t = time.perf_counter()
        info = reg.update("main")
        total = time.perf_counter() - t
        log = (tmp / "builds" / "main" / "installs" / info.install_id / "build.log").read_text()
        rows.append((label, wheel_seconds(log), total, log.count("Building CXX object")))

    print(f"fixture: {a.units} C++ units (depth {a.depth}), {os.cpu_count()} cores, "
          f"sandbox {a.sandbox}, ccache off")
    print(f"{'build':<12} {'compiled':>8} {'wheel s':>9} {'update s':>9}")
    for label, wheel, total, compiled in rows:
        print(f"{label:<12} {compiled:>8} {wheel:>9.2f} {total:>9.2f}")
    (_, w_full, t_full, _), (_, w_inc, t_inc, _) = rows
    print(f"ratio full/incremental: wheel build {w_full / w_inc:.1f}x, "
          f"whole update {t_full / t_inc:.1f}x")


if __name__ == "__main__":
    main()
