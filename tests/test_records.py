"""bot.records: records behave as the frozen / mutable dataclasses they replace, without
importing dataclasses."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys

import pytest

from bot.records import (
    FrozenInstanceError,
    asdict,
    field,
    field_names,
    is_record,
    record,
    replace,
)


@record
class Limits:
    """A frozen record with a factory field."""

    timeout_s: float = 60.0
    names: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


@record
class Named:
    name: str
    limits: Limits = field(default_factory=Limits)


@record(frozen=False)
class Launch:
    argv: list[str]
    paths: list[str] = field(default_factory=list)
    name: str = ""


@record
class Base:
    a: int = 1


@record
class Child(Base):
    b: str = "x"


def test_init_defaults_positional_and_keywords():
    assert Limits() == Limits(60.0, (), {})
    assert Limits(5).timeout_s == 5
    assert Named("n", limits=Limits(1.0)).limits.timeout_s == 1.0
    a, b = Limits(), Limits()
    assert a.env == {} and a.env is not b.env  # a fresh dict per instance


@pytest.mark.parametrize("make, message", [
    (lambda: Named(), "missing required argument: 'name'"),
    (lambda: Limits(1, (), {}, 4), "takes 4 positional arguments but 5 were given"),
    (lambda: Limits(1, timeout_s=2), "multiple values for argument 'timeout_s'"),
    (lambda: Limits(timeout=2), "unexpected keyword argument 'timeout'"),
])
def test_init_refuses_what_a_dataclass_refuses(make, message):
    with pytest.raises(TypeError, match=message):
        make()


def test_frozen_equal_hashable_repr():
    x = Limits(2.0, ("a",))
    with pytest.raises(FrozenInstanceError):
        x.timeout_s = 3.0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del x.names  # type: ignore[misc]
    assert x == Limits(2.0, ("a",)) and x != Limits(3.0)
    assert x != Named("a")  # another class is never equal
    assert hash(Child(2, "y")) == hash(Child(2, "y"))
    assert repr(x) == "Limits(timeout_s=2.0, names=('a',), env={})"


def test_mutable_record_assigns_and_is_unhashable():
    launch = Launch(["python"])
    launch.name = "bwrap"
    launch.paths.append("/tmp/x")
    assert launch == Launch(["python"], ["/tmp/x"], "bwrap")
    with pytest.raises(TypeError):
        hash(launch)


def test_inheritance_puts_base_fields_first():
    assert field_names(Child) == ("a", "b")
    assert Child(2, "y") == Child(a=2, b="y")


def test_replace_fields_and_is_record():
    x = Limits(2.0)
    y = replace(x, names=("b",))
    assert (y.timeout_s, y.names) == (2.0, ("b",)) and x.names == ()
    assert field_names(Limits) == field_names(x) == ("timeout_s", "names", "env")
    assert is_record(x) and not is_record(Limits) and not is_record({"a": 1})


def test_dataclasses_functions_work_on_records():
    named = Named("n", Limits(3.0, ("a",), {"K": "v"}))
    assert dataclasses.is_dataclass(named)
    assert [f.name for f in dataclasses.fields(Named)] == ["name", "limits"]
    assert dataclasses.replace(named, name="m") == Named("m", named.limits)
    assert dataclasses.asdict(named) == {
        "name": "n", "limits": {"timeout_s": 3.0, "names": ("a",), "env": {"K": "v"}}}
    assert dataclasses.replace(Launch(["a"]), name="z").name == "z"


def test_copy_and_pickle_round_trip():
    named = Named("n", Limits(3.0))
    assert copy.deepcopy(named) == named
    assert pickle.loads(pickle.dumps(named)) == named


def test_mutable_defaults_are_refused():
    with pytest.raises(ValueError, match="default_factory"):
        @record
        class Bad:
            items: list[int] = []  # noqa: RUF012

    with pytest.raises(TypeError, match="non-default argument 'b' follows default"):
        @record
        class Order:
            a: int = 1
            b: int  # type: ignore[misc]


def test_the_launch_path_imports_no_costly_module():
    """What `reprobot triage` imports before its sandbox starts (bot.cli, the runner, the
    warm start's guess) must not pull dataclasses, inspect, typing, platform, hashlib or ast back
    in (together ~50 ms, added to every triage)."""
    code = ("import sys, bot.cli, tasks.runner, bot.warmstart; print(sorted(m for m in "
            "('dataclasses', 'inspect', 'typing', 'platform', 'hashlib', 'ast') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


@dataclasses.dataclass(frozen=True)
class Plain:
    """A dataclass that is not a record (a third party's, or one off the triage path)."""

    name: str
    tags: tuple[str, ...] = ()


def test_asdict_is_dataclasses_asdict_for_records_and_what_they_hold():
    nested = Named("n", Limits(3.0, ("a",), {"K": "v"}))
    mixed = {"rec": [nested, (Limits(),)], "plain": Plain("p", ("x",)), "n": None}
    assert asdict(nested) == dataclasses.asdict(nested)
    assert asdict(Plain("p")) == dataclasses.asdict(Plain("p"))
    got = asdict(mixed)
    assert got == {"rec": [dataclasses.asdict(nested), (dataclasses.asdict(Limits()),)],
                   "plain": {"name": "p", "tags": ("x",)}, "n": None}
    env = {"K": "v"}
    assert asdict(Limits(env=env))["env"] is not env  # (copied, as dataclasses does)


def test_replace_also_takes_a_dataclass_that_is_not_a_record():
    assert replace(Plain("p"), tags=("t",)) == Plain("p", ("t",))
    with pytest.raises(TypeError):
        replace(Plain("p"), nope=1)
    with pytest.raises(TypeError):
        replace(Limits(), nope=1)


def test_the_triage_path_defines_records_not_dataclasses():
    """Each ``@dataclass`` costs ~1.4 ms of CPU at import (generated methods compiled by exec),
    beside the running script: the classes of the modules `reprobot triage` loads are records.
    (``dataclasses`` itself stays: markdown_it's Token is one.)"""
    code = (
        "import sys, bot.cli, bot.pipeline, bot.api_changes\n"
        "found = []\n"
        "for name, mod in sorted(sys.modules.items()):\n"
        "    if not name.startswith(('bot', 'tasks')): continue\n"
        "    for obj in vars(mod).values():\n"
        "        if isinstance(obj, type) and obj.__module__ == name and "
        "'__dataclass_params__' in obj.__dict__:\n"
        "            found.append(f'{name}.{obj.__qualname__}')\n"
        "print(found)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
