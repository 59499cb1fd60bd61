"""How much of the machine's CPU other processes took while a load step ran.

A saturation verdict compares the throughput a pool should reach with what it reached; when
something else on the machine (another test's servers, a build, a CPU hog) takes the CPUs the
server and its client need, the measurement says nothing about the pool. The meter reads the
machine's busy CPU time (/proc/stat through psutil) and the CPU time of the server's processes
and of this process with its children (the load client, wrk), before and after; what is left is
the others' share of the CPUs over the window. The server's processes are looked at every
quarter second, so one that exits during the window is still counted.

"The CPUs" are the ones this process may run on (its affinity, which a cgroup cpuset narrows
too): the server and its client are started from here and inherit them. Under `taskset -c 0`
on a 2-CPU machine validate predicted what two CPUs carry (the pool's 7,872 req/s) where the
one CPU served 6,098. A cgroup's CPU quota bounds them further (cpu_capacity).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import psutil

from apachetune.sizing.machine import cpu_allowance, cpus_text


def _allowed() -> list[int] | None:
    """The CPU numbers this process may run on, when they are fewer than /proc/stat's CPUs and
    each has its own line there (psutil lists a line per online CPU, in order); else None: all."""
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
    online = psutil.cpu_count() or 1
    if len(allowed) >= online or online != os.cpu_count() or allowed[-1] >= online:
        return None
    return allowed


def _busy(t: object) -> float:
    """Busy seconds of one cpu_times record (not idle, iowait or guest, which user counts)."""
    idle = getattr(t, "idle", 0.0) + getattr(t, "iowait", 0.0)
    return sum(t) - idle - getattr(t, "guest", 0.0) - getattr(t, "guest_nice", 0.0)  # type: ignore[call-overload]


def busy_seconds() -> float:
    """The busy CPU seconds so far over the CPUs this process may run on (/proc/stat)."""
    allowed = _allowed()
    if allowed is None:
        return _busy(psutil.cpu_times())
    per_cpu = psutil.cpu_times(percpu=True)
    return sum(_busy(per_cpu[i]) for i in allowed)


def _own_seconds() -> tuple[float, float]:
    """This process's CPU time (the watcher's threads, an asyncio client) and its reaped
    children's (wrk)."""
    t = psutil.Process().cpu_times()
    return t.user + t.system, t.children_user + t.children_system


class OthersCpu:
    """with OthersCpu(pids) as meter: ... then meter.share: the others' share of all CPUs."""

    def __init__(self, pids: Callable[[], list[int]], interval: float = 0.25):
        self._pids, self._interval = pids, interval
        self._first: dict[int, float] = {}
        self._last: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = False
        self.share = 0.0
        # The window's totals, in CPU seconds, once stopped: the machine's busy time, the
        # server's processes' part of it, this process's and its children's
        self.wall = self.busy = self.server = self.own = self.children = 0.0

    def _look(self) -> None:
        for pid in self._pids():
            try:
                t = psutil.Process(pid).cpu_times()
            except psutil.Error:
                continue
            seconds = t.user + t.system
            self._first.setdefault(pid, 0.0 if self._started else seconds)  # born in the window: all of it
            self._last[pid] = seconds

    def _watch(self) -> None:
        while not self._stop.wait(self._interval):
            self._look()

    def __enter__(self) -> OthersCpu:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> OthersCpu:
        self._started = False
        self._look()
        self._started = True
        self._wall, self._busy, self._own = time.monotonic(), busy_seconds(), _own_seconds()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Ends the window and sets `share` (nothing if it never started, or already ended)."""
        if self._thread is None or self._stop.is_set():
            return
        self._stop.set()
        self._thread.join()
        self._look()
        self.wall = time.monotonic() - self._wall
        self.busy = busy_seconds() - self._busy
        self.server = sum(self._last[p] - self._first.get(p, 0.0) for p in self._last)
        self.own, self.children = (now - then for now, then in zip(_own_seconds(), self._own, strict=True))
        self.share = share_over([self])


def share_over(meters: list[OthersCpu]) -> float:
    """The others' share of all CPUs over the stopped meters' windows taken together: what the
    machine spent besides the server's processes, this process and its children."""
    wall = sum(m.wall for m in meters)
    rest = sum(m.busy - m.own - m.children - m.server for m in meters)
    return max(0.0, rest) / max(1e-9, wall * cpus())


def cpus() -> int:
    """The CPUs busy_seconds is spread over: those this process may run on."""
    allowed = _allowed()
    return len(allowed) if allowed is not None else psutil.cpu_count() or 1


def cpu_capacity() -> tuple[float, str]:
    """CPUs' worth of time a second the server and its client may use, and why: the CPUs they
    may run on, or their cgroup's quota when that is less (`docker run --cpus 1` on a 64-CPU
    host: 1, not 64)."""
    n = cpus()
    quota = cpu_allowance().quota
    if quota is not None and quota < n:
        return quota, f"a cgroup quota of {cpus_text(f'{quota:g}')}"
    return float(n), cpus_text(n) + (" (CPU affinity)" if _allowed() is not None else "")


def cpus_used(meter: OthersCpu) -> float:
    """CPUs' worth the server, this process and its children (the load client) used over the
    meter's window."""
    return (meter.server + meter.own + meter.children) / meter.wall if meter.wall > 0 else 0.0


def cpus_filled(meter: OthersCpu, at: float = 0.9) -> tuple[float, str] | None:
    """The CPUs the server, this process and its children (the load client) used over the
    meter's window, and the capacity's description, when they used at least `at` of the CPUs
    they may use: the run then measured those CPUs, not the pool. A quota of 1 CPU: mpmd
    worker's 600 clients a connection each request served 1,196 req/s where the pool alone,
    simulated, carries 7,696; the whole machine (2 CPUs): httpd worker served 5,727 of 7,676
    to wrk. None otherwise."""
    capacity, which = cpu_capacity()
    ours = cpus_used(meter)  # (0 over an empty window)
    return (ours, which) if ours >= at * capacity else None
