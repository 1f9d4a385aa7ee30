"""Printed values: atoms, pairs, differences within rounding (bot/printed.py)."""

from __future__ import annotations

import pytest

from bot.printed import (
    ATOM_RE,
    check_within_rounding,
    printed_pair_differs,
    same_atoms,
    within_rounding,
)


@pytest.mark.parametrize(("lines", "largest"), [
    (["output[0] shape=(2, 32) max_abs_diff=8.195639e-08 equal=False", "MISMATCH FOUND"], 8.195639e-08),
    (["max diff: 1.2e-07", "max diff: 3e-06"], 3e-06),
    (["abs err 2.5e-6 (llvm vs c)"], 2.5e-06),
    # a difference beyond rounding
    (["max_abs_diff=0.0117"], None),
    # a value printed beside a difference that is not the maximum is a result of its own
    (["diff: 1e-07", "tvm: 0.5"], None),
    # ... while the maximum difference says how far apart the printed arrays are
    (["[[0.01165623 0.23412167]]", "[[0.01165623 0.23412165]]", "max diff 1.4901161e-08"],
     1.4901161e-08),
    # no difference printed at all
    (["[1. 2. 3.]"], None),
    (["MISMATCH FOUND"], None),
])
def test_printed_differences_within_float32_rounding(lines: list[str], largest: float | None) -> None:
    assert within_rounding(lines) == largest


_CHECK = """AssertionError:
Not equal to tolerance rtol=1e-05, atol=0

Mismatched elements: 1 / 12 (8.33%)
Mismatch at index:
 [2, 0]: 0.00025975704193115234 (ACTUAL), 0.0002597249113023281 (DESIRED)
Max absolute difference among violations: {abs}
Max relative difference among violations: {rel}
"""


@pytest.mark.parametrize(("absolute", "relative", "rounding"), [
    ("3.213063e-08", "0.00012371", True),   # a value near zero, right to float precision
    ("0.8134", "0.31", False),              # a wrong value
    ("2e-06", "0.5", False),                # small values, half wrong
    ("3e-08", "inf", False),                # against a zero that should be zero
    ("0.02", "0.0001", False),              # large values, off by more than rounding
])
def test_a_failed_closeness_check_within_float32_rounding(
        absolute: str, relative: str, rounding: bool) -> None:
    got = check_within_rounding(_CHECK.format(abs=absolute, rel=relative))
    assert (got is not None) is rounding
    # numpy 1.x words it without "among violations"
    old = _CHECK.format(abs=absolute, rel=relative).replace(" among violations", "")
    assert (check_within_rounding(old) is not None) is rounding
    assert check_within_rounding("Mismatched elements: 1 / 12 (8.33%)") is None


@pytest.mark.parametrize(("lines", "differs"), [
    (["tvm  : [-4  3]", "numpy: [-3  3]"], True),
    (["tvm: 0.33333334", "numpy: 0.3333333333333333"], False),  # float32 against float64
    (["tvm count: [ True  True] bool", "expected : [4 1]"], True),
    (["tvm version: 0.27.0", "numpy: 2.1.0"], False),
    (["tvm: 1", "tvm: 2", "numpy: 1"], False),  # which tvm line?
    (["tvm   : 790.41 ms", "numpy : 25.12 ms"], False),  # how fast, not what was computed
    (["tvm: 3 s", "numpy: 1s"], False),
])
def test_a_tvm_line_against_a_reference_line(lines: list[str], differs: bool) -> None:
    assert bool(printed_pair_differs(lines)) is differs


def test_atoms_are_compared_to_the_precision_written() -> None:
    assert same_atoms(ATOM_RE.findall("[0.34 nan]"), ATOM_RE.findall("[0.33 nan]")) is False
    assert same_atoms(ATOM_RE.findall("[0.33333334 nan]"), ATOM_RE.findall("[0.333 nan]"))
    assert not same_atoms(ATOM_RE.findall("[1 2]"), ATOM_RE.findall("[1 2 3]"))
