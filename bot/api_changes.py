"""The table of removed or renamed TVM Python APIs (``bot/data/api_changes.yaml``).

A maintainer extends the YAML file; this module only loads it (once, from the package data) and
answers "what happened to this dotted name?" by the longest matching dotted prefix.
"""

from __future__ import annotations

import functools

from bot.records import record

DATA_FILE = "api_changes.yaml"


@record
class ApiChange:
    """One table entry: ``name`` was removed (``replacement`` None) or renamed."""

    name: str
    replacement: str | None = None
    note: str = ""
    # For a member (``Class.attr``): the classes an error may name as its owner, besides the
    # one in ``name`` (``'FloatImm' object has no attribute 'dtype'`` for ``tvm.ir.Expr.dtype``).
    owners: tuple[str, ...] = ()

    def replacement_for(self, name: str) -> str | None:
        """The new spelling of ``name`` (which this entry matched by prefix), if any.

        ``tvm.tir`` -> ``tvm.tirx`` gives ``tvm.tirx.Var`` for ``tvm.tir.Var``.
        """
        if self.replacement is None:
            return None
        if name == self.name or not name.startswith(self.name + "."):
            return self.replacement
        return self.replacement + name[len(self.name) :]

    def describe(self, name: str) -> str:
        """One markdown sentence or two for the comment about ``name``."""
        new = self.replacement_for(name)
        text = self.note or f"`{name}` no longer exists in this TVM."
        if new is not None and new not in text:
            text = f"{text} Use `{new}`."
        return text


def _yaml(text: str) -> object:
    # (PyYAML is imported only when a run's error names a TVM API: not on every triage, where
    # it would cost ~15 ms of CPU next to the script)
    import yaml

    return yaml.safe_load(text) or {}


def parse_table(text: str) -> tuple[ApiChange, ...]:
    """Parse the YAML text of the table; raises ValueError on a malformed entry."""
    data = _yaml(text)
    raw = data.get("changes") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        raise ValueError("api_changes: top level must be a mapping with a 'changes' list")
    out: list[ApiChange] = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise ValueError(f"api_changes: entry {i} needs a 'name' string")
        repl = entry.get("replacement")
        if repl is not None and not isinstance(repl, str):
            raise ValueError(f"api_changes: entry {i} ({entry['name']}): bad 'replacement'")
        owners = entry.get("owners") or []
        if not isinstance(owners, list) or not all(isinstance(o, str) for o in owners):
            raise ValueError(f"api_changes: entry {i} ({entry['name']}): 'owners' must be a list of names")
        out.append(
            ApiChange(
                name=entry["name"].strip(), replacement=repl, note=str(entry.get("note") or ""),
                owners=tuple(o.strip() for o in owners),
            )
        )
    return tuple(out)


@record
class KeywordChange:
    """A keyword argument renamed (``replacement``) or removed (None) on ``functions``."""

    functions: tuple[str, ...]  # dotted names
    keyword: str
    replacement: str | None = None
    note: str = ""

    def describe(self) -> str:
        text = self.note or f"`{self.keyword}=` is no longer accepted."
        if self.replacement is not None and f"{self.replacement}=" not in text:
            text = f"{text} Use `{self.replacement}=`."
        return text


def parse_keywords(text: str) -> tuple[KeywordChange, ...]:
    """The ``keywords`` list of the table's YAML text (optional); ValueError when malformed."""
    data = _yaml(text)
    raw = data.get("keywords", []) if isinstance(data, dict) else None
    if not isinstance(raw, list):
        raise ValueError("api_changes: 'keywords' must be a list")
    out: list[KeywordChange] = []
    for i, entry in enumerate(raw):
        funcs = entry.get("functions") if isinstance(entry, dict) else None
        if not isinstance(funcs, list) or not funcs or not all(isinstance(f, str) for f in funcs) \
                or not isinstance(entry.get("keyword"), str):
            raise ValueError(f"api_changes: keywords entry {i} needs 'functions' and 'keyword'")
        repl = entry.get("replacement")
        if repl is not None and not isinstance(repl, str):
            raise ValueError(f"api_changes: keywords entry {i}: bad 'replacement'")
        out.append(KeywordChange(tuple(funcs), entry["keyword"], repl,
                                 str(entry.get("note") or "")))
    return tuple(out)


def _data_text() -> str:
    from importlib import resources

    return resources.files("bot").joinpath("data").joinpath(DATA_FILE).read_text(
        encoding="utf-8")


@functools.cache
def keyword_table() -> tuple[KeywordChange, ...]:
    """The packaged table's keyword renames, read once."""
    text = _data_text()
    return parse_keywords(text)


def lookup_keyword(function: str, keyword: str,
                   changes: tuple[KeywordChange, ...] | None = None) -> KeywordChange | None:
    """The entry for ``keyword`` on a function named ``function`` (its last dotted part is
    enough: errors say ``call_tir() got an unexpected keyword argument 'out_sinfo'``)."""
    short = function.rsplit(".", 1)[-1]
    for entry in keyword_table() if changes is None else changes:
        if entry.keyword == keyword and any(f.rsplit(".", 1)[-1] == short
                                            for f in entry.functions):
            return entry
    return None


@functools.cache
def table() -> tuple[ApiChange, ...]:
    """The packaged table, read once."""
    text = _data_text()
    return parse_table(text)


def lookup(name: str, changes: tuple[ApiChange, ...] | None = None) -> ApiChange | None:
    """The entry for the longest dotted prefix of ``name`` (``tvm.nd.array`` before ``tvm.nd``)."""
    entries = table() if changes is None else changes
    best: ApiChange | None = None
    for entry in entries:
        if (name == entry.name or name.startswith(entry.name + ".")) and (
            best is None or len(entry.name) > len(best.name)
        ):
            best = entry
    return best


def lookup_member(
    owner: str, member: str, changes: tuple[ApiChange, ...] | None = None
) -> ApiChange | None:
    """An entry for ``<something>.owner.member`` (``'Schedule' object has no attribute 'get_block'``)."""
    entries = table() if changes is None else changes
    suffix = f".{owner}.{member}"
    for entry in entries:
        if entry.name.endswith(suffix) or (
                owner in entry.owners and entry.name.endswith(f".{member}")):
            return entry
    return None
