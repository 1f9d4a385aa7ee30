"""``GET /metrics``: Prometheus text, counted in Redis so that every process agrees.

The receiver may run as several processes (uvicorn workers, replicas behind a proxy) and runs
are reported by Celery workers on other machines; per-process counters would each see a part.
So every count lives in Redis (``bot.state`` increments it, in the same pipeline as the write it
counts) and each scrape builds a fresh registry from one read of that state.

Pure here: what a record or a delivery adds to the counters (``run_increments``,
``delivery_increments``) and the metric families made from a plain snapshot
(``families``). ``bot.state`` does the I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from bot.dashboard import age_seconds

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
SEP = "\x1f"  # between label values in a Redis hash field

# Webhook handling time (s): the receiver answers in milliseconds; GitHub gives up at 10 s.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# Script run time (s): from an import error to the sandbox's time limit.
RUN_BUCKETS = (0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)


def _bucket_fields(prefix: str, value: float, buckets: tuple[float, ...]) -> dict[str, float]:
    """Cumulative histogram buckets this observation falls into (+Inf always)."""
    out = {f"{prefix}le{SEP}{b}": 1.0 for b in buckets if value <= b}
    out[f"{prefix}le{SEP}+Inf"] = 1.0
    out[f"{prefix}sum"] = float(value)
    out[f"{prefix}count"] = 1.0
    return out


def delivery_increments(status: int, seconds: float) -> dict[str, float]:
    """What one webhook delivery adds to the ``webhook`` hash."""
    return {f"status{SEP}{int(status)}": 1.0, **_bucket_fields("", seconds, LATENCY_BUCKETS)}


def run_increments(record: Mapping[str, Any]) -> dict[str, float]:
    """What one recorded result adds to the ``runs`` hash: one run per build it ran on (a
    matrix record counts each row); run seconds only for runs that really ran (not a cache
    hit, not our failure before the run)."""
    rows: Iterable[Mapping[str, Any]] = record.get("matrix") or [record]
    cached = bool(record.get("cached"))
    out: dict[str, float] = {}
    for row in rows:
        build = str(row.get("build") or "") or "default"
        outcome = str(row.get("outcome") or "") or "unknown"
        k = f"runs{SEP}{build}{SEP}{outcome}"
        out[k] = out.get(k, 0.0) + 1.0
        secs = row.get("seconds")
        if not cached and isinstance(secs, int | float) and not isinstance(secs, bool) \
                and math.isfinite(secs) and secs >= 0:
            for f, v in _bucket_fields("seconds", float(secs), RUN_BUCKETS).items():
                out[f] = out.get(f, 0.0) + v
    return out


def _hist(name: str, doc: str, raw: Mapping[str, float], prefix: str,
          buckets: tuple[float, ...]) -> HistogramMetricFamily:
    pairs = [(str(b), raw.get(f"{prefix}le{SEP}{b}", 0.0)) for b in buckets]
    pairs.append(("+Inf", raw.get(f"{prefix}le{SEP}+Inf", 0.0)))
    return HistogramMetricFamily(name, doc, buckets=pairs, sum_value=raw.get(f"{prefix}sum", 0.0))


def families(snap: Mapping[str, Any], now: float) -> list[Metric]:
    """Metric families from a plain snapshot::

        {"webhook": {field: n}, "runs": {field: n}, "queues": {name: {"total", "low"}},
         "builds": [list entries with "workers"], "workers": n}
    """
    web = {str(k): float(v) for k, v in (snap.get("webhook") or {}).items()}
    runs = {str(k): float(v) for k, v in (snap.get("runs") or {}).items()}
    out: list[Metric] = []

    deliveries = CounterMetricFamily("reprobot_webhook_deliveries",
                                     "Webhook deliveries answered, by HTTP status",
                                     labels=["status"])
    for f, v in sorted(web.items()):
        if f.startswith(f"status{SEP}"):
            deliveries.add_metric([f.split(SEP, 1)[1]], v)
    out.append(deliveries)
    out.append(_hist("reprobot_webhook_seconds", "Time to answer a webhook delivery", web, "",
                     LATENCY_BUCKETS))

    depth = GaugeMetricFamily("reprobot_queue_depth", "Messages waiting in a queue",
                              labels=["queue", "priority"])
    for q, d in (snap.get("queues") or {}).items():
        total, low = int(d.get("total", 0)), int(d.get("low", 0))
        depth.add_metric([q, "normal"], total - low)
        depth.add_metric([q, "low"], low)
    out.append(depth)

    by = CounterMetricFamily("reprobot_runs", "Script runs reported, by build and outcome",
                             labels=["build", "outcome"])
    for f, v in sorted(runs.items()):
        if f.startswith(f"runs{SEP}"):
            _, build, outcome = f.split(SEP, 2)
            by.add_metric([build, outcome], v)
    out.append(by)
    out.append(_hist("reprobot_run_seconds", "Wall time of script runs (cache hits excluded)",
                     runs, "seconds", RUN_BUCKETS))

    age = GaugeMetricFamily("reprobot_build_age_seconds",
                            "Seconds since the current install of a build was made",
                            labels=["build", "commit"])
    failed = GaugeMetricFamily("reprobot_build_failed",
                               "1 when the last attempt to make or update a build failed",
                               labels=["build"])
    ready = GaugeMetricFamily("reprobot_build_workers", "Workers that have a build ready",
                              labels=["build"])
    seen: set[str] = set()
    for b in snap.get("builds") or []:
        name = str(b.get("name") or "")
        a = age_seconds(str(b.get("built_at") or ""), now)
        if a is not None:
            age.add_metric([name, str(b.get("commit") or "")[:12]], a)
        if name in seen:
            continue
        seen.add(name)
        failed.add_metric([name], 1.0 if b.get("status") == "failed" else 0.0)
        ready.add_metric([name], float(len(b.get("workers") or [])))
    out += [age, failed, ready]
    workers = GaugeMetricFamily("reprobot_workers", "Workers with a live heartbeat")
    workers.add_metric([], float(snap.get("workers") or 0))
    out.append(workers)
    return out


class _Snapshot(Collector):
    def __init__(self, metrics: list[Metric]) -> None:
        self.metrics = metrics

    def collect(self) -> Iterable[Metric]:
        return self.metrics


def exposition(snap: Mapping[str, Any], now: float) -> bytes:
    """The text a scrape gets: a registry made for this scrape only (no global state)."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Snapshot(families(snap, now)))
    return generate_latest(registry)
