"""Regular expressions compiled on first use.

``reprobot triage`` imports the pipeline while its sandboxed script is already running, and on a
small machine the bot's own CPU slows that script down. Compiling the bot's ~230 module-level
patterns was the largest part of that CPU (about 100 ms), yet a typical triage uses only a
third of them: which ones depends on the report and on the run's output. So every module-level
pattern of the bot is ``lazyre.compile(...)``: the same source and flags, compiled by
:func:`re.compile` the first time one of its methods is called. After that, the methods are
the compiled pattern's own (no wrapper on the per-line hot paths).
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # not typing's: the launch path imports this module (see bot.records)
if TYPE_CHECKING:
    from typing import Any

_METHODS = ("match", "search", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class Pattern:
    """Stands in for a :class:`re.Pattern` until first use; ``pattern`` is the source. Any other
    attribute (``flags``, ``groups``, ``groupindex``) compiles it too."""

    def __init__(self, source: str, flags: int = 0) -> None:
        self.pattern = source
        self._flags = flags

    @property
    def compiled(self) -> re.Pattern[str]:
        # re.compile has its own cache, so a second call costs one dict lookup; after the first,
        # the instance's own attributes shadow the methods below and this is not reached again.
        compiled = re.compile(self.pattern, self._flags)
        for name in _METHODS:
            self.__dict__[name] = getattr(compiled, name)
        return compiled

    def match(self, *args: Any, **kwargs: Any) -> Any:
        return self.compiled.match(*args, **kwargs)

    def search(self, *args: Any, **kwargs: Any) -> Any:
        return self.compiled.search(*args, **kwargs)

    def fullmatch(self, *args: Any, **kwargs: Any) -> Any:
        return self.compiled.fullmatch(*args, **kwargs)

    def finditer(self, *args: Any, **kwargs: Any) -> Any:
        return self.compiled.finditer(*args, **kwargs)

    def findall(self, *args: Any, **kwargs: Any) -> Any:
        return self.compiled.findall(*args, **kwargs)

    def sub(self, *args: Any, **kwargs: Any) -> Any:
        return self.compiled.sub(*args, **kwargs)

    def subn(self, *args: Any, **kwargs: Any) -> Any:
        return self.compiled.subn(*args, **kwargs)

    def split(self, *args: Any, **kwargs: Any) -> Any:
        return self.compiled.split(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # not a pattern attribute (copy, pickle, a half-built object)
            raise AttributeError(name)
        return getattr(self.compiled, name)

    def __repr__(self) -> str:
        return f"lazyre.compile({self.pattern!r}, {self._flags!r})"


def compile(source: str, flags: int = 0) -> re.Pattern[str]:  # noqa: A001 (re.compile's twin)
    """``re.compile(source, flags)``, done on first use. Typed as the pattern it stands for."""
    return Pattern(source, flags)  # type: ignore[return-value]
