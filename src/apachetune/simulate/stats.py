"""What a simulation counts as it runs."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field


def percentile(ordered: Sequence[float], q: float) -> float:
    """The nearest-rank q-quantile (0 < q <= 1) of values sorted ascending: the smallest value
    with at least q of all values at or below it. One definition for the simulator and for
    validate's measurements, so a simulated p99 and a measured one are comparable."""
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def as_wrk_reports(latencies: Sequence[float], seconds: float, connections: int,
                   timeout: float | None = None) -> list[float]:
    """`latencies` (seconds) as wrk 4.x counts them for the percentiles it prints, sorted. At the
    end of a run it corrects for coordinated omission (stats_correct in its stats.c): with
    `interval` the run's length over the requests each connection completed (whole requests, in
    microseconds), every latency of at least two intervals also counts once at each interval
    below it, down to more than one interval. A client that waited 5.1 s for its first answer on
    a run of 270 ms intervals adds 17 latencies between 0.3 and 4.8 s: httpd worker, 400 wrk
    keep-alive clients on 75 threads, printed p95 2,954 ms where every response on the wire but
    150 came in 51 ms. `timeout`: wrk's --timeout (its default 2 s; None: no limit): a response slower than it
    is one of wrk's "timeout" errors and not in its latencies (stats_record refuses it), though
    it counts among the requests that set the interval."""
    per_connection = len(latencies) // connections if connections > 0 else 0
    recorded = latencies if timeout is None else [x for x in latencies if x < timeout]
    if per_connection <= 0:
        return sorted(recorded)
    us = [int(x * 1e6) for x in recorded]
    interval = int(seconds * 1e6 / per_connection)
    added = []
    for n in us:
        if n >= 2 * interval > 0:
            added.extend(range(n - interval, interval, -interval))
    return sorted(x / 1e6 for x in us + added)


@dataclass
class Stats:
    warmup: float = 0.0  # requests completed before this are not counted
    latencies: list[float] = field(default_factory=list)  # workload requests, seconds
    crowd_latencies: list[float] = field(default_factory=list)
    completed_at: list[float] = field(default_factory=list)  # when each counted request completed
    errors: Counter[str] = field(default_factory=Counter)  # timeout, connect-timeout
    events: Counter[str] = field(default_factory=Counter)  # SYN drops, keep-alive closes, spawns, ...
    timeline: list[dict[str, float]] = field(default_factory=list)  # one sample a second
    peak_memory_mib: float = 0.0
    crowd_answered: int = 0  # the crowd's responses, the warm-up's included
    recycled: list[int] = field(default_factory=list)  # connections each process took before MaxConnectionsPerChild
    limit_seconds: int = 0  # event's connection-limit seconds (events[CONNECTION_LIMIT_SECONDS]) after the warm-up

    def response(self, now: float, latency: float, crowd: bool) -> None:
        self.crowd_answered += crowd
        if now < self.warmup:
            return
        if crowd:
            self.crowd_latencies.append(latency)
        else:
            self.latencies.append(latency)
            self.completed_at.append(now)

    def error(self, now: float, kind: str) -> None:
        if now >= self.warmup:
            self.errors[kind] += 1
