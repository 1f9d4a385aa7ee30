"""The warm start's wire: the hook shipped into a prestarted sandbox, and the one message to it.

A prestarted run (``tasks.runner.SandboxRunner.prestart``) starts the interpreter exactly as a
run does (``python -X faulthandler repro.py``, same sandbox, limits and environment) before the
script is known, with ``PYTHONPATH=/proc/self/fd/N``: N is a memfd holding a zip whose only
file is ``sitecustomize.py`` (``tasks/warm_hook.py``, with the channel's fd number written
in). The hook waits for :func:`preload_message` (the imports to do, in order: the script's
leading ones), does them, says ``1`` on the channel (an AF_UNIX socket), waits for
:func:`message`, says ``2`` and lets Python run the script (see the hook's docstring); ``0``
at either step means "not equivalent": the bot runs the script cold. Nothing is
mounted for it: once it has closed its fds the sandbox looks as in a cold run. The imports
come over the channel, not in the zip, so that a run can start before the issue is read
(``tasks.launch``).
"""

from __future__ import annotations

import os
import struct
import zlib

TYPE_CHECKING = False  # typing's, without importing typing: see bot/records.py
if TYPE_CHECKING:
    from collections.abc import Sequence

HOOK_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "warm_hook.py")
HOOK_NAME = "sitecustomize.py"
READY = b"1"  # tvm imported: send the script
NOT_EQUIVALENT = b"0"  # the bot runs the script cold
STARTED = b"2"  # repro.py written, argv set: Python runs it now

_hook_source: str | None = None


def hook_source(channel_fd: int) -> bytes:
    """The hook's source with the channel's fd number written in."""
    global _hook_source
    if _hook_source is None:
        with open(HOOK_FILE, encoding="utf-8") as f:
            _hook_source = f.read()
    line, value = "_CHANNEL_FD = -1", f"_CHANNEL_FD = {int(channel_fd)}"
    if f"\n{line}\n" not in _hook_source:
        raise RuntimeError(f"{HOOK_FILE} lost its {line!r} line")
    return _hook_source.replace(f"\n{line}\n", f"\n{value}\n", 1).encode()


def preload_message(preload: Sequence[tuple[str, Sequence[str]]] = (("tvm", ()),)) -> bytes:
    """``LEN\\n`` then one line per import, ``module name,name``; ValueError for a name
    that is not a dotted identifier (or ``*`` in a fromlist)."""
    lines = []
    for module, fromlist in preload:
        names = tuple(fromlist)
        if not all(part.isidentifier() for part in module.split(".")) or \
                not all(n == "*" or n.isidentifier() for n in names):
            raise ValueError(f"not an import: {module!r} {names!r}")
        lines.append(f"{module} {','.join(names)}")
    body = "\n".join(lines).encode()
    return b"%d\n" % len(body) + body


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


def hook_zip(channel_fd: int) -> bytes:
    return stored_zip(HOOK_NAME, hook_source(channel_fd))


def message(script: str, args: Sequence[str]) -> bytes:
    """``LEN\\nSCRIPT`` then each argument followed by a NUL (none may contain one)."""
    body = script.encode("utf-8", "surrogateescape")
    tail = b"".join(a.encode("utf-8", "surrogateescape") + b"\0" for a in args)
    return b"%d\n" % len(body) + body + tail
