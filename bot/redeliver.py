"""Which failed webhook deliveries to ask GitHub for again (pure).

GitHub does not redeliver a failed delivery by itself. The sweeper (a beat task) lists the
App's recent deliveries and passes them here with what the bot knows: a delivery GUID the
receiver queued is handled; one we already asked for too often is left alone. A GUID is asked
for again when no attempt of it got a 2xx answer, it is an event the bot acts on, its newest
attempt is recent enough for GitHub to redeliver (3 days), it was not refused for its payload
(400, 413: sending it again cannot help), and it was not handled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

GITHUB_REDELIVERY_WINDOW_S = 3 * 24 * 3600
MAX_ASKS = 3
# The receiver's deliberate refusals of the payload itself: sending it again cannot help.
# (A 401 can: after a webhook-secret mix-up is fixed, the redelivery gets in.)
FINAL_REFUSALS = frozenset({400, 413, 422})


@dataclass(frozen=True)
class Redelivery:
    delivery_id: int  # the newest attempt's id (what POST .../attempts takes)
    guid: str  # X-GitHub-Delivery, the same on every attempt
    event: str
    why: str


def _when(item: Mapping[str, Any]) -> float | None:
    raw = item.get("delivered_at")
    if not isinstance(raw, str):
        return None
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _ok(item: Mapping[str, Any]) -> bool:
    code = item.get("status_code")
    return isinstance(code, int) and 200 <= code < 300


def pick_redeliveries(
    items: Iterable[Mapping[str, Any]],
    *,
    events: Iterable[str],
    handled: Callable[[str], bool],
    asks: Callable[[str], int],
    now: float,
    max_age_s: float = GITHUB_REDELIVERY_WINDOW_S - 3600,
    max_asks: int = MAX_ASKS,
) -> list[Redelivery]:
    """The deliveries to ask for again, oldest first (so events replay in order)."""
    wanted = set(events)
    by_guid: dict[str, list[Mapping[str, Any]]] = {}
    for it in items:
        guid, ident = it.get("guid"), it.get("id")
        if isinstance(guid, str) and guid and isinstance(ident, int) \
                and not isinstance(ident, bool):
            by_guid.setdefault(guid, []).append(it)
    out: list[tuple[float, Redelivery]] = []
    for guid, attempts in by_guid.items():
        newest = max(attempts, key=lambda a: int(a["id"]))
        event = str(newest.get("event") or "")
        when = _when(newest)
        if any(_ok(a) for a in attempts) or event not in wanted:
            continue
        if newest.get("status_code") in FINAL_REFUSALS:
            continue
        if when is None or now - when > max_age_s:
            continue
        if handled(guid) or asks(guid) >= max_asks:
            continue
        code = newest.get("status_code")
        why = f"answered {code}" if code else "no answer"
        out.append((when, Redelivery(int(newest["id"]), guid, event, why)))
    return [r for _, r in sorted(out, key=lambda x: x[0])]
