"""Record classes: what ``@dataclass`` gives (``__init__``, ``__repr__``, ``__eq__``, a
``__hash__`` when frozen, frozen attributes), without its import-time cost.

``reprobot triage`` starts its sandbox before it reads the issue, and everything imported before
that start is added to every triage's wall time. ``dataclasses`` is expensive there: importing
it pulls ``inspect`` (12-18 ms), and each ``@dataclass`` compiles generated source for its
methods (about 1 ms a class; the launch path defines ~20). A ``@record`` class builds its
methods from closures instead: no ``exec``, no ``inspect``; a few microseconds a class.

Records stay dataclasses to the rest of the code: ``dataclasses.replace``, ``fields``,
``asdict`` and ``is_dataclass`` work on them, through a ``__dataclass_fields__`` built on first
use (only then is ``dataclasses`` imported); ``records.replace`` and ``records.asdict`` do the
same without it. Type checkers see ``@record`` as a dataclass transform. Use ``@record`` for
the classes ``reprobot triage`` loads: before its sandbox starts (configuration, limits, the
sandbox's launch) every ms is wall time, and while the script runs the bot's CPU slows the
script on a small machine (the models, the extractor's and the readers' classes: ~35 ms of
``@dataclass`` work per triage). Plain ``@dataclass`` everywhere else (the service, the
dashboard).

The same modules do not import ``typing`` at run time either (5 ms): they write
``TYPE_CHECKING = False`` and import ``typing``'s names under ``if TYPE_CHECKING:`` (type
checkers take any ``TYPE_CHECKING`` as true). tests/test_records.py holds the launch path to
this.

    @record                      # frozen (the default)
    class Limits:
        timeout_s: float = 60.0
        names: tuple[str, ...] = ()
        env: dict[str, str] = field(default_factory=dict)

    @record(frozen=False)        # mutable
    class Launch: ...
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs the launch path 5-7 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar, dataclass_transform

    T = TypeVar("T")
else:
    def dataclass_transform(**_: object) -> object:
        return lambda decorated: decorated


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FrozenInstanceError(AttributeError):
    """Assigning to a field of a frozen record (as ``dataclasses.FrozenInstanceError``)."""


class _Field:
    __slots__ = ("default", "default_factory")

    def __init__(self, default: Any, default_factory: Any) -> None:
        self.default = default
        self.default_factory = default_factory


def field(*, default: Any = MISSING, default_factory: Callable[[], Any] | Any = MISSING) -> Any:
    """A field's default, or the factory that makes a fresh one per instance (for lists,
    dicts): ``dataclasses.field``'s two arguments that records use."""
    if default is not MISSING and default_factory is not MISSING:
        raise ValueError("cannot specify both default and default_factory")
    return _Field(default, default_factory)


def _is_classvar(annotation: object) -> bool:
    text = annotation if isinstance(annotation, str) else repr(annotation)
    return text.startswith(("ClassVar", "typing.ClassVar", "t.ClassVar"))


class _DataclassFields:
    """``__dataclass_fields__`` on demand: the ``dataclasses.Field`` objects of an equivalent
    dataclass, made once, the first time something asks (``replace``, ``fields``, ``asdict``)."""

    def __get__(self, obj: object, owner: type) -> dict[str, Any]:
        made = owner.__dict__.get("_record_dataclass_fields")
        if made is None:
            import dataclasses

            specs = []
            for name, default, factory in owner.__record_specs__:  # type: ignore[attr-defined]
                if factory is not MISSING:
                    spec = dataclasses.field(default_factory=factory)
                elif default is not MISSING:
                    spec = dataclasses.field(default=default)
                else:
                    spec = dataclasses.field()
                specs.append((name, owner.__record_types__[name], spec))  # type: ignore[attr-defined]
            twin = dataclasses.make_dataclass(owner.__name__, specs)
            made = dict(twin.__dataclass_fields__)  # type: ignore[attr-defined]
            type.__setattr__(owner, "_record_dataclass_fields", made)
        return made


def _specs(cls: type) -> list[tuple[str, Any, Any]]:
    """(name, default, factory) per field, the bases' first (as dataclasses orders them)."""
    specs: dict[str, tuple[str, Any, Any]] = {}
    types: dict[str, Any] = {}
    for base in reversed(cls.__mro__[1:]):
        for spec in base.__dict__.get("__record_specs__", ()):
            specs[spec[0]] = spec
        types.update(base.__dict__.get("__record_types__", {}))
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        if _is_classvar(annotation):
            continue
        value = cls.__dict__.get(name, MISSING)
        if isinstance(value, _Field):
            default, factory = value.default, value.default_factory
            if default is MISSING:
                delattr(cls, name)  # no class attribute for a factory field, as in dataclasses
            else:
                setattr(cls, name, default)
        else:
            default, factory = value, MISSING
            if isinstance(default, (list, dict, set)):
                raise ValueError(f"mutable default {type(default)} for field {name} is not "
                                 "allowed: use default_factory")
        specs[name] = (name, default, factory)
        types[name] = annotation
    seen_default = None
    for name, default, factory in specs.values():
        if default is MISSING and factory is MISSING:
            if seen_default is not None:
                raise TypeError(f"non-default argument {name!r} follows default argument "
                                f"{seen_default!r}")
        else:
            seen_default = name
    type.__setattr__(cls, "__record_types__", types)
    return list(specs.values())


def _make(cls: type[T], frozen: bool) -> type[T]:
    specs = _specs(cls)
    names = tuple(name for name, _, _ in specs)
    known = frozenset(names)
    qualname = cls.__qualname__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(names):
            raise TypeError(f"{qualname}.__init__() takes {len(names) + 1} positional "
                            f"arguments but {len(args) + 1} were given")
        values = dict(zip(names, args, strict=False))
        for key in kwargs:
            if key in values:
                raise TypeError(f"{qualname}.__init__() got multiple values for argument "
                                f"{key!r}")
            if key not in known:
                raise TypeError(f"{qualname}.__init__() got an unexpected keyword argument "
                                f"{key!r}")
        values.update(kwargs)
        for name, default, factory in specs:
            if name not in values:
                if default is not MISSING:
                    values[name] = default
                elif factory is not MISSING:
                    values[name] = factory()
                else:
                    raise TypeError(f"{qualname}.__init__() missing required argument: "
                                    f"{name!r}")
        self.__dict__.update(values)
        post_init = getattr(self, "__post_init__", None)
        if post_init is not None:
            post_init()

    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{qualname}({inner})"

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in names)

    def _frozen(self: Any, name: str, *_: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    methods: dict[str, Any] = {"__init__": __init__, "__repr__": __repr__, "__eq__": __eq__,
                               "__match_args__": names, "__record_specs__": tuple(specs)}
    if frozen:
        methods["__hash__"] = lambda self: hash(tuple(getattr(self, n) for n in names))
        methods["__setattr__"] = _frozen
        methods["__delattr__"] = _frozen
    else:
        methods["__hash__"] = None  # mutable and compared by value: unhashable, as dataclasses
    for name, method in methods.items():
        if callable(method):
            method.__qualname__ = f"{qualname}.{name}"
        if name != "__hash__" and name in cls.__dict__:
            continue  # the class's own (as dataclasses keeps a __repr__ the class defines)
        type.__setattr__(cls, name, method)
    type.__setattr__(cls, "__dataclass_fields__", _DataclassFields())
    return cls


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: type[T] | None = None, /, *, frozen: bool = True) -> Any:
    """Make ``cls`` a record (see the module docstring)."""
    if cls is None:
        return lambda c: _make(c, frozen)
    return _make(cls, frozen)


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of the record ``obj`` with ``changes`` (as ``dataclasses.replace``, which it
    calls for a dataclass that is not a record)."""
    if not is_record(obj):
        import dataclasses

        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
    values = {name: getattr(obj, name) for name in field_names(obj)}
    values.update(changes)
    return type(obj)(**values)


def asdict(obj: Any, /) -> Any:
    """``dataclasses.asdict`` for records: a dict of the fields, records, dataclasses, lists,
    tuples and dicts inside converted the same way (without building the record's twin
    dataclass)."""
    if is_record(obj):
        return {name: asdict(getattr(obj, name)) for name in field_names(obj)}
    if isinstance(obj, str | int | float | bool | type(None)):
        return obj
    if hasattr(type(obj), "__dataclass_fields__") and not isinstance(obj, type):
        import dataclasses

        return dataclasses.asdict(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a namedtuple
        return type(obj)(*(asdict(v) for v in obj))
    if isinstance(obj, list | tuple):
        return type(obj)(asdict(v) for v in obj)
    if isinstance(obj, dict):
        return type(obj)((asdict(k), asdict(v)) for k, v in obj.items())
    import copy

    return copy.deepcopy(obj)


def field_names(obj: Any, /) -> tuple[str, ...]:
    """The field names of a record or record class, in order (cheap: no ``dataclasses``)."""
    cls = obj if isinstance(obj, type) else type(obj)
    specs: tuple[tuple[str, Any, Any], ...] = getattr(cls, "__record_specs__")  # noqa: B009
    return tuple(name for name, _, _ in specs)


def is_record(obj: Any, /) -> bool:
    """Is ``obj`` a record instance (not a class)?"""
    return not isinstance(obj, type) and hasattr(type(obj), "__record_specs__")
