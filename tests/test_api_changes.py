"""The removed/renamed TVM API table: lookup rules, and every replacement really exists."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bot.api_changes import ApiChange, lookup, lookup_member, parse_table, table


def test_table_loads_from_package_data() -> None:
    entries = table()
    assert len(entries) >= 20
    names = [e.name for e in entries]
    assert len(names) == len(set(names)), "duplicate entries"
    # TVM's own names, or packages that once shipped with TVM (nnvm, topi, vta).
    assert all(e.name.split(".")[0] in ("tvm", "nnvm", "topi", "vta") for e in entries)
    assert all(e.note for e in entries), "every entry explains itself"


@pytest.mark.parametrize(
    ("name", "matched", "replacement"),
    [
        ("tvm.relay", "tvm.relay", None),
        ("tvm.relay.testing.mobilenet", "tvm.relay", None),
        ("tvm.tir", "tvm.tir", "tvm.tirx"),
        ("tvm.tir.Var", "tvm.tir", "tvm.tirx.Var"),
        ("tvm.tir.Schedule", "tvm.tir.Schedule", "tvm.s_tir.Schedule"),
        ("tvm.script.tir", "tvm.script.tir", "tvm.script.tirx"),
        ("tvm.nd.array", "tvm.nd.array", "tvm.runtime.tensor"),
        ("tvm.nd.cpu", "tvm.nd", None),
        ("tvm.gpu", "tvm.gpu", "tvm.cuda"),
        ("tvm.te.create_schedule", "tvm.te.create_schedule", None),
        ("tvm.relax.TensorStructInfo", "tvm.relax.TensorStructInfo", "tvm.relax.TensorType"),
        (
            "tvm.tirx.script.parser.block",
            "tvm.tirx.script.parser.block",
            "tvm.tirx.script.parser.sblock",
        ),
    ],
)
def test_longest_prefix_wins(name: str, matched: str, replacement: str | None) -> None:
    change = lookup(name)
    assert change is not None
    assert change.name == matched
    assert change.replacement_for(name) == replacement
    text = change.describe(name)
    if replacement:
        assert replacement in text


@pytest.mark.parametrize(
    "name",
    [
        "tvm",
        "tvm.relax",
        "tvm.tirx.Var",
        "tvm.ndarray_like",
        "torch",
        "tvm.tirx.script.parser.sblock",
    ],
)
def test_names_that_did_not_change(name: str) -> None:
    assert lookup(name) is None


def test_member_lookup() -> None:
    change = lookup_member("Schedule", "get_block")
    assert (
        change is not None
        and change.replacement_for(change.name) == "tvm.s_tir.Schedule.get_sblock"
    )
    assert lookup_member("Schedule", "split") is None
    # an entry names the classes an error may name as the member's owner
    dtype = lookup_member("FloatImm", "dtype")
    assert dtype is not None and dtype.replacement_for(dtype.name) == "tvm.ir.Expr.ty"
    assert lookup_member("FloatImm", "value") is None


def test_a_maintainer_can_extend_the_table() -> None:
    extra = parse_table(
        "changes:\n"
        "  - name: tvm.old_thing\n    replacement: tvm.new_thing\n    note: moved\n"
        "  - name: tvm.gone\n    replacement: null\n"
    )
    assert extra == (
        ApiChange("tvm.old_thing", "tvm.new_thing", "moved"),
        ApiChange("tvm.gone", None, ""),
    )
    found = lookup("tvm.old_thing.f", extra)
    assert found is not None and found.replacement_for("tvm.old_thing.f") == "tvm.new_thing.f"
    assert "`tvm.gone` no longer exists" in extra[1].describe("tvm.gone")


@pytest.mark.parametrize(
    "bad",
    [
        "[]",
        "changes: 3",
        "changes:\n  - replacement: x\n",
        "changes:\n  - name: a\n    replacement: [1]\n",
    ],
)
def test_malformed_table_is_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="api_changes"):
        parse_table(bad)


_PROBE = r"""
import importlib, json, sys
out = {}
for name in json.loads(sys.argv[1]):
    parts = name.split(".")
    ok = False
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except Exception:
            continue
        try:
            for p in parts[i:]:
                obj = getattr(obj, p)
            ok = True
        except AttributeError:
            ok = False
        break
    out[name] = ok
print(json.dumps(out))
"""


@pytest.mark.tvm
def test_every_replacement_exists_and_every_old_name_is_gone_in_installed_tvm() -> None:
    """The table is checked against the TVM the bot runs (apache-tvm in this environment)."""
    replacements = sorted({e.replacement for e in table() if e.replacement})
    olds = sorted(e.name for e in table())
    p = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(replacements + olds)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert p.returncode == 0, p.stderr
    exists = json.loads(p.stdout.strip().splitlines()[-1])
    missing = [r for r in replacements if not exists[r]]
    assert not missing, f"replacements not in the installed TVM: {missing}"
    still_there = [o for o in olds if exists[o]]
    assert not still_there, f"names listed as removed still exist: {still_there}"


def test_keyword_renames_load_and_match_by_the_functions_last_name() -> None:
    from bot.api_changes import keyword_table, lookup_keyword

    assert keyword_table(), "the packaged table lists keyword renames"
    change = lookup_keyword("call_tir", "out_sinfo")
    assert change is not None and change.replacement == "out_ty"
    assert "`out_ty=`" in change.describe()
    assert lookup_keyword("tvm.relax.op.call_dps_packed", "out_sinfo") is not None
    assert lookup_keyword("call_tir", "out_ty") is None  # the new keyword is fine
    assert lookup_keyword("matmul", "out_sinfo") is None  # not a function that took it


@pytest.mark.parametrize("bad", [
    "keywords: 3",
    "keywords:\n  - keyword: x\n",
    "keywords:\n  - functions: [tvm.f]\n",
    "keywords:\n  - functions: [tvm.f]\n    keyword: a\n    replacement: [1]\n",
])
def test_malformed_keyword_entries_are_refused(bad: str) -> None:
    from bot.api_changes import parse_keywords

    with pytest.raises(ValueError, match="api_changes"):
        parse_keywords(bad)


_SIGNATURES = r"""
import importlib, inspect, json, sys
out = {}
for name in json.loads(sys.argv[1]):
    mod, _, attr = name.rpartition(".")
    try:
        params = inspect.signature(getattr(importlib.import_module(mod), attr)).parameters
        out[name] = [p.name for p in params.values() if p.kind is not p.VAR_KEYWORD] + (
            ["**"] if any(p.kind is p.VAR_KEYWORD for p in params.values()) else [])
    except Exception as e:
        out[name] = repr(e)
print(json.dumps(out))
"""


@pytest.mark.tvm
def test_every_keyword_rename_matches_the_installed_tvm() -> None:
    """Each function exists, takes the new keyword, and no longer takes the old one."""
    from bot.api_changes import keyword_table

    funcs = sorted({f for e in keyword_table() for f in e.functions})
    p = subprocess.run([sys.executable, "-c", _SIGNATURES, json.dumps(funcs)],
                       capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stderr
    params = json.loads(p.stdout.strip().splitlines()[-1])
    for e in keyword_table():
        for f in e.functions:
            assert isinstance(params[f], list), f"{f}: {params[f]}"
            assert "**" not in params[f] and e.keyword not in params[f], f
            assert e.replacement is None or e.replacement in params[f], f


def test_the_triage_pipeline_loads_yaml_only_for_the_table() -> None:
    """The table's YAML is parsed only when a run's error names a TVM API: importing the
    pipeline pulls no PyYAML (its import costs CPU next to every script)."""
    import subprocess
    import sys

    code = ("import sys, bot.plan, bot.pipeline, bot.classify; a = 'yaml' in sys.modules\n"
            "from bot.api_changes import table; table(); print(a, 'yaml' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["False", "True"]
