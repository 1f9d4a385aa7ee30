"""What a run's watcher saw (``Watched``) and how a backend's launcher status is decoded.

Below both ``tasks.runner`` (which watches every backend's run the same way) and
``tasks.backends`` (which decode how their own run ended), so neither imports the other back.
"""

from __future__ import annotations

import json

from bot.records import field, record
from bot.runs import RunResult
from tasks import sandbox as sb

_READ_CHUNK = 1 << 16


class _Tail:
    """Keeps the last ``cap`` bytes of a stream and counts all of it."""

    def __init__(self, cap: int) -> None:
        self.cap = max(0, int(cap))
        self.buf = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.buf += chunk
        if len(self.buf) > 2 * self.cap + _READ_CHUNK:
            del self.buf[: len(self.buf) - self.cap]

    @property
    def truncated(self) -> bool:
        return self.total > self.cap

    def text(self) -> str:
        data = bytes(self.buf[-self.cap:]) if self.cap else b""
        return data.decode("utf-8", errors="replace")


@record(frozen=False)
class Watched:
    """What the watcher saw of one run: exit, time, output tails, status, limits hit."""

    returncode: int
    seconds: float
    stdout: _Tail
    stderr: _Tail
    status: bytes  # what the launcher and bwrap wrote to the status pipe
    killed_by_us: bool
    timed_out: bool
    limit_hit: str | None
    extra: dict[str, int] = field(default_factory=dict)

    def result(self, code: int | None, sig: int | None, backend: str) -> RunResult:
        return RunResult(
            exit_code=code,
            signal=sig,
            seconds=round(self.seconds, 3),
            timed_out=self.timed_out,
            stdout_tail=self.stdout.text(),
            stderr_tail=self.stderr.text(),
            stdout_truncated=self.stdout.truncated,
            stderr_truncated=self.stderr.truncated,
            limit_hit=self.limit_hit,
            sandbox=backend,
        )


def parse_status(data: bytes) -> dict[str, object]:
    """Merge the JSON documents bwrap wrote to --json-status-fd (after our launcher's "R")."""
    text = data.decode("utf-8", errors="replace")
    if text.startswith("R"):
        text = text[1:]
    dec = json.JSONDecoder()
    out: dict[str, object] = {}
    i = 0
    while True:
        while i < len(text) and text[i] in " \r\n\t":
            i += 1
        if i >= len(text):
            break
        try:
            obj, i = dec.raw_decode(text, i)
        except json.JSONDecodeError:
            break
        if isinstance(obj, dict):
            out.update(obj)
    return out


def decode_shell_status(code: int) -> tuple[int | None, int | None]:
    """bwrap and docker report a child killed by signal N as exit status 128+N."""
    if 128 < code < 128 + 65:
        return None, code - 128
    return code, None


def setup_failure(what: str, res: Watched) -> str:
    msg = res.stderr.text().strip()[-600:] or f"exit status {res.returncode}"
    hint = ""
    if "namespace" in msg or "uid map" in msg or "Operation not permitted" in msg:
        hint = " " + sb.USERNS_HELP
    return f"{what} failed before the script started: {msg}{hint}"
