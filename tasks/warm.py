"""The warm start's wire: the hook shipped into a prestarted sandbox, and the one message to it.

A prestarted run (``tasks.runner.SandboxRunner.prestart``) starts the interpreter exactly as a
run does (``python -X faulthandler repro.py``, same sandbox, limits and environment) before the
script is known, with ``PYTHONPATH=/proc/self/fd/N``: N is a memfd holding a zip whose only
file is ``sitecustomize.py`` (``tasks/warm_hook.py``, with the channel's fd number and the
imports to do written in). The hook does those imports (tvm's), says ``1`` on the channel (an AF_UNIX socket), waits for
:func:`message`, says ``2`` and lets Python run the script (see the hook's docstring); ``0``
at either step means "not equivalent": the bot runs the script cold. Nothing is
mounted for it: once it has closed its fds the sandbox looks as in a cold run.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Sequence
from pathlib import Path

HOOK_FILE = Path(__file__).with_name("warm_hook.py")
HOOK_NAME = "sitecustomize.py"
READY = b"1"  # tvm imported: send the script
NOT_EQUIVALENT = b"0"  # the bot runs the script cold
STARTED = b"2"  # repro.py written, argv set: Python runs it now

_hook_source: str | None = None


def hook_source(channel_fd: int, preload: Sequence[tuple[str, Sequence[str]]] = (
        ("tvm", ()),)) -> bytes:
    """The hook's source with the channel's fd number and the preload written in."""
    global _hook_source
    if _hook_source is None:
        _hook_source = HOOK_FILE.read_text(encoding="utf-8")
    imports = tuple((m, tuple(f)) for m, f in preload)
    for module, fromlist in imports:
        if not all(part.isidentifier() for part in module.split(".")) or \
                not all(n == "*" or n.isidentifier() for n in fromlist):
            raise ValueError(f"not an import: {module!r} {fromlist!r}")
    text = _hook_source
    for line, value in (("_CHANNEL_FD = -1", f"_CHANNEL_FD = {int(channel_fd)}"),
                        ('_PRELOAD = (("tvm", ()),)', f"_PRELOAD = {imports!r}")):
        if f"\n{line}\n" not in text:
            raise RuntimeError(f"{HOOK_FILE} lost its {line!r} line")
        text = text.replace(f"\n{line}\n", f"\n{value}\n", 1)
    return text.encode()


def stored_zip(name: str, data: bytes) -> bytes:
    """A zip archive holding one uncompressed file (what zipimport reads), without zipfile."""
    fname = name.encode()
    crc = zlib.crc32(data) & 0xFFFFFFFF
    dos_time, dos_date = 0, (1 << 5) | 1  # 1980-01-01 00:00
    local = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 0, dos_time, dos_date,
                        crc, len(data), len(data), len(fname), 0) + fname
    central = struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, 0, dos_time,
                          dos_date, crc, len(data), len(data), len(fname), 0, 0, 0, 0,
                          0o100644 << 16, 0) + fname
    offset = len(local) + len(data)
    end = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 1, 1, len(central), offset, 0)
    return local + data + central + end


def hook_zip(channel_fd: int, preload: Sequence[tuple[str, Sequence[str]]] = (
        ("tvm", ()),)) -> bytes:
    return stored_zip(HOOK_NAME, hook_source(channel_fd, preload))


def message(script: str, args: Sequence[str]) -> bytes:
    """``LEN\\nSCRIPT`` then each argument followed by a NUL (none may contain one)."""
    body = script.encode("utf-8", "surrogateescape")
    tail = b"".join(a.encode("utf-8", "surrogateescape") + b"\0" for a in args)
    return b"%d\n" % len(body) + body + tail
