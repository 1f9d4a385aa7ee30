"""Printed values: the atoms of a printed value, and whether two printed values are the same.

Pure. Read by :mod:`bot.classify` (what a run printed) and :mod:`bot.reported` (the output a
reporter shows), so a printed value and a pasted one are compared by the same rules: numbers to
the precision written, ``nan`` with ``nan``, numpy's arrays spread over several lines joined,
lines labelled as TVM's result ("tvm  :") and the reference's ("numpy:").
"""

from __future__ import annotations

import re

from bot import lazyre

# The atoms of a printed value: numbers, nan, inf and booleans, in order (``[ 0. nan  2.]`` and
# ``[0.0, nan, 2.0]`` are the same value).
ATOM_RE = lazyre.compile(
    r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])|(?<!\w)[-+]?(?:nan|inf)\b"
    r"|\b(?:True|False)\b"
)


def printed_chunks(lines: list[str]) -> list[str]:
    """The printed lines, with an array numpy spread over several lines (``[[2. 2. 2.]`` then
    `` [2. 2. 2.]]``) joined into one."""
    out: list[str] = []
    k = 0
    while k < len(lines):
        line = lines[k]
        depth = line.count("[") - line.count("]")
        j = k
        while depth > 0 and j + 1 < len(lines) and j - k < 50:
            j += 1
            line += " " + lines[j]
            depth += lines[j].count("[") - lines[j].count("]")
        out.append(line if depth == 0 else lines[k])
        k = j + 1 if depth == 0 else k + 1
    return out


def same_atoms(got: list[str], want: list[str]) -> bool:
    """The same value, atom by atom: numbers equal to the precision ``want`` is written in."""
    if len(got) != len(want):
        return False
    for a, b in zip(got, want, strict=True):
        if a == b:
            continue
        if a in ("True", "False") or b in ("True", "False"):
            return False
        x, y = float(a), float(b)
        if x != x or y != y:  # nan against nan: same when both are
            if not (x != x and y != y):
                return False
            continue
        if x in (float("inf"), float("-inf")) or y in (float("inf"), float("-inf")):
            return False  # (a == b would have matched above; no tolerance makes inf near 1e-7)
        decimals = len(b.split(".", 1)[1]) if "." in b and "e" not in b.lower() else 6
        if abs(x - y) > max(0.5 * 10.0 ** -decimals, 1e-6 * max(abs(x), abs(y))):
            return False
    return True


# A printed line labelled as TVM's result or as the reference's: "tvm  : [2]", "numpy: 1".
# (the label may name what was computed: "tvm count:", "numpy_sum =", not "tvm version:")
_WHAT = r"(?:[ _](?!version\b)[a-z]\w{0,19})?"
_TVM_LABEL_RE = lazyre.compile(r"^(?:tvm|relax|tir|tirx|te|ours?|compiled|vm)" + _WHAT
                               + r"\s*[:=]\s*(\S.{0,300})$", re.IGNORECASE)
_REF_LABEL_RE = lazyre.compile(
    r"^(?:numpy|np|torch|pytorch|onnx ?runtime|ort|ref(?:erence)?|expected)" + _WHAT
    + r"\s*[:=]\s*(\S.{0,300})$", re.IGNORECASE)


# A duration: "790.41 ms", "1.2 s", "35us", "0.8 sec".
_TIMING_RE = lazyre.compile(
    r"\d\s{0,2}(?:ms|msec|s|sec|secs|seconds?|us|µs|ns|milliseconds?|microseconds?)\b",
    re.IGNORECASE)


def printed_pair_differs(lines: list[str]) -> str:
    """One line with TVM's value and one with the reference's, each under its label and with
    numbers in it, whose values differ: the TVM line, else ""."""
    tvm = [(ln, m.group(1)) for ln in lines for m in (_TVM_LABEL_RE.match(ln),) if m]
    ref = [m.group(1) for ln in lines for m in (_REF_LABEL_RE.match(ln),) if m]
    if len(tvm) != 1 or len(ref) != 1:
        return ""
    if _TIMING_RE.search(tvm[0][1]) or _TIMING_RE.search(ref[0]):
        return ""  # ("tvm   : 790.41 ms", "numpy : 25.12 ms": how fast, not what was computed)
    got, want = ATOM_RE.findall(tvm[0][1]), ATOM_RE.findall(ref[0])
    if not got or not want or same_atoms(got, want):
        return ""
    return tvm[0][0]


# A printed difference: "max_abs_diff=8.195639e-08", "max diff: 1.2e-07", "abs err 3e-8".
_DIFF_RE = lazyre.compile(
    r"\b(?:max(?:imum)?[_ ]?)?(?:abs(?:olute)?[_ ]?)?(?:diff(?:erence)?|err(?:or)?|delta)s?"
    r"\s{0,3}[:=]?\s{0,3}([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)(?![\w.])", re.IGNORECASE)
_SHAPE_RE = lazyre.compile(r"\bshape\s{0,3}[:=]?\s{0,3}[\[(][^\])\n]{0,80}[\])]", re.IGNORECASE)
# A float written as one (a point or an exponent): a value, not a count or an index.
_FLOAT_RE = lazyre.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][-+]?\d+)?(?![\w.])")
# float32 keeps about 7 significant digits: differences this small between two builds of the
# same float32 program are rounding (another order of the same sums), not a wrong result.
ROUNDING = 1e-5


def within_rounding(lines: list[str]) -> float | None:
    """The printed ``lines`` report differences ("max_abs_diff=8.2e-08 equal=False"), each
    within float32 rounding (:data:`ROUNDING`): the largest one; else None. Values printed
    beside them count only when no line gives the maximum difference ("max diff 1.49e-08"
    under the two arrays it compares says how far apart they are)."""
    diffs: list[float] = []
    maximum = values = False
    for ln in lines:
        for m in _DIFF_RE.finditer(ln):
            diffs.append(abs(float(m.group(1))))
            maximum = maximum or m.group(0).lower().startswith("max")
        values = values or bool(_FLOAT_RE.search(_SHAPE_RE.sub(" ", _DIFF_RE.sub(" ", ln))))
    if not diffs or max(diffs) > ROUNDING or (values and not maximum):
        return None
    return max(diffs)


# numpy's testing message for values that are not close: the largest absolute and relative
# differences among the elements that failed ("Max absolute difference among violations: 3e-08",
# "Max relative difference: 0.00012" on numpy 1.x).
_CHECK_ABS_RE = lazyre.compile(
    r"^\s*Max absolute difference(?: among violations)?:\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$",
    re.MULTILINE)
_CHECK_REL_RE = lazyre.compile(
    r"^\s*Max relative difference(?: among violations)?:\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$",
    re.MULTILINE)
# ... relatively: float32 keeps about 7 significant digits, and a sum of a few thousand terms
# in another order loses a few of them; a wrong value is off by far more than 0.1%.
RELATIVE_ROUNDING = 1e-3


def check_within_rounding(text: str) -> tuple[float, float] | None:
    """numpy's failed closeness check in ``text`` (``assert_allclose``) whose elements differ by
    at most float32 rounding, absolutely (:data:`ROUNDING`) and relatively
    (:data:`RELATIVE_ROUNDING`): the two largest differences; else None. (A tolerance with no
    ``atol`` fails on a value near zero that is right to float precision.)"""
    a, r = _CHECK_ABS_RE.search(text), _CHECK_REL_RE.search(text)
    if a is None or r is None:
        return None
    absolute, relative = abs(float(a.group(1))), abs(float(r.group(1)))
    if absolute > ROUNDING or relative > RELATIVE_ROUNDING:
        return None
    return absolute, relative
