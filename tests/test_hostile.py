"""Hang guard: every output-side stage finishes on pathological text (the sizes GitHub and the
runner allow). No timing is asserted here (bench/bench_hostile.py prints time per MiB against a
plain-text baseline); a bound far above a linear stage's time only stops a hang."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from hostile_inputs import UNITS, make  # noqa: E402

from bot.classify import classify  # noqa: E402
from bot.compare import compare  # noqa: E402
from bot.models import Issue, Repro, RunResult  # noqa: E402
from bot.reported import parse_reported  # noqa: E402
from bot.tracebacks import cpp_frames, crash_frames, normalize_paths, parse_last_error  # noqa: E402

SIZE = 256 * 1024
HANG_S = 60.0
UNITS_TO_TRY = {
    **UNITS,
    "slashes": "/",
    "newlines": "\n",
    "brackets": "[",
    "angles": "<",
    "backticks": "`",
    "spaces": " ",
}


@pytest.mark.parametrize("unit", list(UNITS_TO_TRY.values()), ids=list(UNITS_TO_TRY))
def test_output_stages_finish_on_hostile_text(unit: str) -> None:
    text = make(unit, SIZE)
    t0 = time.monotonic()
    run = RunResult(exit_code=1, signal=None, seconds=1.0, stderr_tail=text)
    cls = classify(run, script="import tvm\n")
    classify(RunResult(exit_code=None, signal=11, seconds=1.0, stderr_tail=text))
    normalize_paths(text)
    parse_last_error(text)
    cpp_frames(text.split("\n"))
    crash_frames(text)
    rep = parse_reported(Issue("[Bug] wrong output", text[:65_536], "me"), Repro(True, "x=1"))
    compare(rep, cls)
    assert time.monotonic() - t0 < HANG_S


def test_the_slash_flood_of_issue_10_keeps_its_paths_private() -> None:
    text = "/" * 48 * 1024 + " /usr/lib/python3.11/site-packages/tvm/x.py\n"
    out = normalize_paths(text)
    assert out.endswith(" <site-packages>/tvm/x.py\n")
