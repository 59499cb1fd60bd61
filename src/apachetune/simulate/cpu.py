"""The machine's CPUs, shared: processor sharing over `cores`.

A request's CPU work (`--cpu-fraction` of its service time) runs alongside every other request
on CPU: with n of them and c cores each progresses at min(1, c / n) of a core, as the kernel's
scheduler shares time slices. So a CPU-bound application saturates at c / (CPU time a request)
whatever MaxRequestWorkers says, and every extra worker only makes each request slower: the
knee that a model counting workers alone misses. The rest of the service time (waiting on a
database, the disk, a backend) is spent off CPU and overlaps freely.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from apachetune.simulate.clock import Clock

_DONE = 1e-9  # seconds of work left that count as done (a nanosecond: well above the rounding of `virtual`)


# A load generator's CPU (µs) a keep-alive request and what a new connection adds, measured on
# loopback beside httpd 2.4.71 event on the lab's 2-core machine (10 and 100 clients; 2026-11-26):
# a benchmark's client on the server's machine shares its cores (simulate --client-cpu).
CLIENT_CPU = {"ab": (21.0, 43.0), "wrk": (22.0, 45.0)}
# Its threads: ab has one; wrk runs two unless told otherwise (-t).
CLIENT_THREADS = {"ab": 1, "wrk": 2}


# httpd's figures at a few and at many connections: ((connections, request s, connection s), ...)
Span = tuple[tuple[float, float, float], tuple[float, float, float]]
# httpd's connection figure on a small pool and on a full one: ((workers, connection s), ...)
PoolSpan = tuple[tuple[float, float], tuple[float, float]]


@dataclass(frozen=True)
class CpuCosts:
    """CPU a request costs besides the application's (seconds of one core): httpd's own (its
    hooks, filters, the request's pool, the write), more on a request that opens a connection
    (the accept, the connection's pool, the lingering close), and, for a benchmark whose client
    runs on the same machine (ab or wrk on loopback), the client's. Shared over the cores with
    the application's CPU part. A closed loop's client is `client_threads` threads, each
    handling one response (and writing the next request) at a time, so its CPU queues at the
    client as a load generator's does (clients.ClientThread); an open loop's is part of the
    request's. A hello-world page costs httpd 50-120 µs of CPU on these 2-core
    machines: without it a 1 ms page on 400 workers would be "served" at 400,000 requests a
    second, where httpd tops out near 25,000."""

    request: float = 0.0
    connection: float = 0.0  # added to a connection's first request
    client_request: float = 0.0
    client_connection: float = 0.0
    source: str = ""  # where httpd's figures come from (calibrated, given, assumed)
    client_threads: int = 1  # a closed loop's client: its threads, each one response at a time (0: an open loop's)
    # httpd's figures as they grow with its open connections (more processes or threads to switch
    # between): (connections, request, connection) at a few and at many, measured; between them
    # they follow the logarithm of the connections, beyond them they stay at the end's. Measured on
    # httpd 2.4.71 prefork, a keep-alive request (medians of 3 runs): 48.7 µs at 10 connections,
    # 50.1 at 30, 57.4 at 100, 64.5 at 300; worker 49.6 to 60.9; event flat (55-59). `request` and
    # `connection` are then the two ends' mean (the knee's figure). None: the same at any number.
    span: Span | None = None
    # What a new connection costs as the pool grows: prefork's children each block in accept()
    # and the kernel wakes the one that waited longest, so connections rotate over every idle
    # child, each on a cold cache (httpd 2.4.71, 10 clients: 24.6 µs on 12 children, 33.4 on 40,
    # 45.3 on 120, 46.4 on 320; validate/calibration.py SMALL_POOLS). The connection figure is
    # scaled by the pool's, which follows the logarithm of the workers started between the two
    # ends (the end's beyond them); the span's figures are the full pool's. None: the same on
    # any pool.
    pool: PoolSpan | None = None
    client_source: str = ""  # where the client's figures come from, when not given (assumed: wrk on loopback)

    def of(self, first_on_connection: bool, connections: int = 0, client: bool = True, workers: int = 0) -> float:
        """A request's CPU with `connections` open at the server (0: not known, the mean) and
        `workers` started (0: not known, the full pool's); `client`: with the client's (False:
        the client's threads spend it, `client_of`)."""
        request, connection = self.httpd_at(connections, workers)
        if first_on_connection:
            request += connection
        return request + (self.client_of(first_on_connection) if client else 0.0)

    def client_of(self, first_on_connection: bool) -> float:
        """The client's CPU for one request: reading the response and writing the request,
        and on a new connection its connect and close."""
        return self.client_request + (self.client_connection if first_on_connection else 0.0)

    def httpd_at(self, connections: int, workers: int = 0) -> tuple[float, float]:
        """httpd's request and connection figures with that many connections open and workers started."""
        if self.span is None or connections <= 0:
            request, connection = self.request, self.connection
        else:
            (n0, r0, c0), (n1, r1, c1) = self.span
            x = _between(connections, n0, n1)
            request, connection = r0 + (r1 - r0) * x, c0 + (c1 - c0) * x
        if self.pool is not None and workers > 0:
            (w0, p0), (w1, p1) = self.pool
            if p1 > 0:
                connection *= (p0 + (p1 - p0) * _between(workers, w0, w1)) / p1
        return request, connection

    @property
    def has_client(self) -> bool:
        """A local client's CPU is part of the run (ab or wrk on the server's machine)."""
        return bool(self.client_request or self.client_connection)

    @property
    def has_client_threads(self) -> bool:
        """A closed loop's local client, whose threads spend its CPU (clients.ClientThread)."""
        return bool(self.client_threads and self.has_client)

    def __bool__(self) -> bool:
        return bool(self.request or self.connection or self.has_client)

    def mean(self, requests_per_connection: float) -> float:
        """The CPU a request costs on average when a connection carries that many."""
        return self.request + self.client_request + (self.connection + self.client_connection) / max(
            1.0, requests_per_connection)

    def to_json(self) -> dict[str, Any]:
        out = {"httpd_request_us": round(self.request * 1e6, 1),
               "httpd_connection_us": round(self.connection * 1e6, 1),
               "client_request_us": round(self.client_request * 1e6, 1),
               "client_connection_us": round(self.client_connection * 1e6, 1), "source": self.source}
        if self.has_client_threads:
            out["client_threads"] = self.client_threads
        if self.client_source and self.has_client:
            out["client_source"] = self.client_source
        if self.pool is not None:
            out["httpd_connection_by_pool"] = [{"workers": w, "connection_us": round(c * 1e6, 1)} for w, c in self.pool]
        if self.span is not None:
            out["httpd_by_connections"] = [{"connections": n, "request_us": round(r * 1e6, 1),
                                            "connection_us": round(c * 1e6, 1)} for n, r, c in self.span]
        return out

    @classmethod
    def spanning(cls, span: Span, client_request: float = 0.0, client_connection: float = 0.0,
                 source: str = "", client_threads: int = 1, pool: PoolSpan | None = None) -> CpuCosts:
        """httpd's figures at a few and at many connections; the mean of the two stands for both."""
        (_, r0, c0), (_, r1, c1) = span
        return cls((r0 + r1) / 2, (c0 + c1) / 2, client_request, client_connection, source, client_threads, span,
                   pool)


def _between(value: float, low: float, high: float) -> float:
    """Where `value` lies from `low` (0) to `high` (1) on a logarithmic scale, clamped."""
    if high <= low:
        return 0.0 if value <= low else 1.0
    return min(1.0, max(0.0, (math.log(value) - math.log(low)) / (math.log(high) - math.log(low))))


# CFS bandwidth control's period (cpu.cfs_period_us, cpu.max's second field): 100 ms, the
# kernel's default, which docker, Kubernetes and systemd's CPUQuota= keep.
CFS_PERIOD_S = 0.1


class Processors:
    """Every job on CPU progresses at the same rate, so one counter of the work each has done
    since the start (`virtual`) orders them all: a job that needs w finishes when the counter
    has grown by w. A heap of those finishing points makes each step O(log n), where updating
    every job's work left was O(n) (hundreds of workers on CPU at thousands of requests a second).

    Under a cgroup's CPU quota (docker --cpus 0.25, CPUQuota=150%) the jobs run as the kernel's
    CFS bandwidth control runs them: on the cores at full speed until the quota's share of the
    period (quota x 100 ms of CPU time) is spent, then not at all until the period ends. Measured
    on mpmd in a 0.25-CPU cgroup, one client of 10 ms of CPU a request: 24.6 req/s, median 15 ms
    and p99 88 ms (two or three requests a period run at once, the next waits out the other 75
    ms), where spreading the quota evenly made every request 40 ms."""

    def __init__(self, clock: Clock, cores: int, quota: float | None = None, period: float = CFS_PERIOD_S):
        if cores < 1:
            raise ValueError("cores must be at least 1")
        if quota is not None and quota <= 0:
            raise ValueError("a CPU quota must be above 0")
        self.clock, self.cores = clock, cores
        # What the jobs share over time: the cores, or less under a quota
        self.capacity = float(cores) if quota is None else min(float(cores), quota)
        self.quota = quota if quota is not None and quota < cores else None
        self.period = period
        self.budget = 0.0 if self.quota is None else self.quota * period  # CPU seconds a period
        self._period_no = 0  # the period `used` counts in
        self.used = 0.0  # CPU seconds spent in that period
        self.virtual = 0.0  # core-seconds each job on CPU has received since the start
        self.heap: list[tuple[float, int, Callable[..., Any], tuple[Any, ...]]] = []  # (virtual finish, ...)
        self._ids = itertools.count()
        self._since = 0.0  # when `virtual` was last brought up to date
        self._on_timer = self._finish  # (bound once: set at every job started or done)
        self.busy = 0.0  # core-seconds spent, for the utilisation

    def _rate(self) -> float:
        """The share of a core each job gets now."""
        if self.quota is not None and self.used >= self.budget - _DONE:  # throttled
            return 0.0
        n = len(self.heap)
        return 1.0 if n <= self.cores else self.cores / n

    def _advance(self) -> None:
        """Bring the counters up to now. The interval lies within one period and one rate:
        while jobs run, an event is pending at the period's end and where the budget runs out."""
        now = self.clock.now
        elapsed = now - self._since
        if elapsed > 0 and self.heap:
            rate = self._rate()
            self.virtual += elapsed * rate
            spent = elapsed * rate * len(self.heap)
            self.busy += spent
            self.used += spent
        self._since = now
        if self.quota is not None:
            period_no = math.floor(now / self.period + 1e-9)
            if period_no != self._period_no:
                self._period_no, self.used = period_no, 0.0

    def run(self, work: float, fn: Callable[..., Any], *args: Any) -> None:
        """Call fn(*args) once `work` seconds of one core have been spent on it."""
        self._advance()
        heapq.heappush(self.heap, (self.virtual + max(0.0, work), next(self._ids), fn, args))
        self._schedule()

    def _schedule(self) -> None:
        """The next completion (or the period's end, or the budget's) on the clock's timer,
        in place of the one set before."""
        if not self.heap:
            self.clock.cancel_timer()
            return
        rate = self._rate()
        delay = math.inf if rate == 0 else max(0.0, self.heap[0][0] - self.virtual) / rate
        if self.quota is not None:
            period_end = (self._period_no + 1) * self.period - self.clock.now
            delay = min(delay, max(0.0, period_end))
            if rate > 0:  # where this period's budget runs out at the present rate
                delay = min(delay, max(0.0, self.budget - self.used) / (rate * len(self.heap)))
        self.clock.set_timer(delay, self._on_timer)

    def _finish(self) -> None:
        self._advance()
        callbacks = []
        while self.heap and self.heap[0][0] - self.virtual <= _DONE:
            _, _, fn, args = heapq.heappop(self.heap)
            callbacks.append((fn, args))
        self._schedule()
        for fn, args in callbacks:  # last: a callback may start new work
            fn(*args)

    def utilisation(self, seconds: float) -> float:
        """Share of the CPU time the cores (or the quota) allow that was spent over the first
        `seconds` of the run."""
        self._advance()
        return self.busy / (seconds * self.capacity) if seconds > 0 else 0.0

    def run_first(self, work: float, fn: Callable[..., Any], *args: Any) -> None:
        """A job of a thread the scheduler runs at once (RunQueue: a local client in a session of
        its own); shared like any other here."""
        self.run(work, fn, *args)


class RunQueue(Processors):
    """The cores as the kernel shares them between httpd and a load generator in another session
    under autogroup (kernel.sched_autogroup_enabled=1, the default on Debian and Ubuntu kernels;
    ab or wrk typed in a shell beside httpd started by systemd): each session is a group that
    gets an equal share of a core, so the client's thread runs as soon as it has a response to
    read (`run_first`, at most a core each), and httpd's runnable threads queue on the cores for
    what is left. A thread then runs its whole burst (a static request is 50-100 µs of CPU, far
    below a time slice), and which of the sixty-odd queued ones runs next is, for the requests,
    chance: each job is picked at random from the waiting ones when a core frees.

    Measured (docs/benchmarks.md, "A run queue, not processor sharing"): 100 keep-alive clients of
    a 17-byte file under ab, autogroup on, had p50 2.5-3 ms and p99 9.5-18 ms (EnableMMAP Off),
    the random order's shape (p99 about 4.6x the mean); processor sharing gives every request the
    same ~3.4 ms. With autogroup off the threads float over both cores, the client waits its turn
    like them, and the tail is short (p99 6-7 ms): Processors. Not under a CPU quota (Processors'
    throttling); the memory-map lock's hand-offs that make worker's and event's tails longer still
    with EnableMMAP On are not in it."""

    def __init__(self, clock: Clock, cores: int, rng: random.Random):
        super().__init__(clock, cores)
        self.rng = rng
        self.waiting: list[list[Any]] = []  # httpd's jobs not on a core: [work, fn, args]
        self.serving: list[list[Any]] = []  # httpd's jobs on a core: [work left, fn, args]
        self.firsts: list[list[Any]] = []  # the client's jobs, each on a core at once
        self._now_rates = (0.0, 0.0)  # _rates() as of the last change to the jobs (_schedule)

    def _rates(self) -> tuple[float, float]:
        """(the share of a core each of the client's jobs gets: a core each, as far as the cores
        go; each of httpd's jobs on a core: what the client's leave, split between them)."""
        first = min(1.0, self.cores / len(self.firsts)) if self.firsts else 0.0
        free = self.cores - first * len(self.firsts)
        return first, (min(1.0, free / len(self.serving)) if self.serving else 0.0)

    def _advance(self) -> None:
        now = self.clock.now
        elapsed = now - self._since
        if elapsed > 0:
            first, rate = self._now_rates  # no job started or ended since they were worked out
            for job in self.serving:
                job[0] -= elapsed * rate
            for job in self.firsts:
                job[0] -= elapsed * first
            self.busy += elapsed * (rate * len(self.serving) + first * len(self.firsts))
        self._since = now

    def run(self, work: float, fn: Callable[..., Any], *args: Any) -> None:
        self._advance()
        self.waiting.append([max(0.0, work), fn, args])
        self._start()
        self._schedule()

    def run_first(self, work: float, fn: Callable[..., Any], *args: Any) -> None:
        self._advance()
        self.firsts.append([max(0.0, work), fn, args])
        self._schedule()

    def _start(self) -> None:
        """Waiting jobs onto the cores httpd's jobs do not hold, each picked at random."""
        while self.waiting and len(self.serving) < self.cores:
            i = self.rng.randrange(len(self.waiting))
            self.waiting[i], self.waiting[-1] = self.waiting[-1], self.waiting[i]
            self.serving.append(self.waiting.pop())

    def _schedule(self) -> None:
        first, rate = self._now_rates = self._rates()
        delays = ([job[0] / first for job in self.firsts] if first > 0 else []) + \
            ([job[0] / rate for job in self.serving] if rate > 0 else [])
        if delays:
            self.clock.set_timer(max(0.0, min(delays)), self._on_timer)
        else:
            self.clock.cancel_timer()

    def _finish(self) -> None:
        self._advance()
        done = [job for job in (*self.firsts, *self.serving) if job[0] <= _DONE]
        self.firsts = [job for job in self.firsts if job[0] > _DONE]
        self.serving = [job for job in self.serving if job[0] > _DONE]
        self._start()
        self._schedule()
        for _, fn, args in done:  # last: a callback may start new work
            fn(*args)


def autogroup_enabled() -> bool:
    """Whether this machine's kernel groups the scheduling of each session (autogroup)."""
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            return f.read().strip() == "1"
    except OSError:
        return False
