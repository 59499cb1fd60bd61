"""The machine's CPUs, shared: processor sharing over `cores`.

A request's CPU work (`--cpu-fraction` of its service time) runs alongside every other request
on CPU: with n of them and c cores each progresses at min(1, c / n) of a core, as the kernel's
scheduler shares time slices. So a CPU-bound application saturates at c / (CPU time a request)
whatever MaxRequestWorkers says, and every extra worker only makes each request slower: the
knee that a model counting workers alone misses. The rest of the service time (waiting on a
database, the disk, a backend) is spent off CPU and overlaps freely.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from apachetune.simulate.clock import Clock

_DONE = 1e-12  # seconds of work left that count as done (floating-point rounding)


class Processors:
    def __init__(self, clock: Clock, cores: int):
        if cores < 1:
            raise ValueError("cores must be at least 1")
        self.clock, self.cores = clock, cores
        self.jobs: dict[int, list[Any]] = {}  # id -> [work left (s), callback, args]
        self._ids = itertools.count()
        self._since = 0.0  # when the work left was last brought up to date
        self._token = 0  # the one pending completion event; an older one is stale
        self.busy = 0.0  # core-seconds spent, for the utilisation

    def _rate(self) -> float:
        """The share of a core each job gets now."""
        n = len(self.jobs)
        return 1.0 if n <= self.cores else self.cores / n

    def _advance(self) -> None:
        now = self.clock.now
        elapsed = now - self._since
        if elapsed > 0 and self.jobs:
            done = elapsed * self._rate()
            for job in self.jobs.values():
                job[0] -= done
            self.busy += elapsed * min(len(self.jobs), self.cores)
        self._since = now

    def run(self, work: float, fn: Callable[..., Any], *args: Any) -> None:
        """Call fn(*args) once `work` seconds of one core have been spent on it."""
        self._advance()
        self.jobs[next(self._ids)] = [max(0.0, work), fn, args]
        self._schedule()

    def _schedule(self) -> None:
        self._token += 1
        if self.jobs:
            first = min(job[0] for job in self.jobs.values())
            self.clock.after(max(0.0, first) / self._rate(), self._finish, self._token)

    def _finish(self, token: int) -> None:
        if token != self._token:
            return  # the jobs changed since: a newer event is pending
        self._advance()
        finished = [key for key, job in self.jobs.items() if job[0] <= _DONE]
        callbacks = [self.jobs.pop(key)[1:] for key in finished]
        self._schedule()
        for fn, args in callbacks:  # last: a callback may start new work
            fn(*args)

    def utilisation(self, seconds: float) -> float:
        """Share of the cores busy over the first `seconds` of the run."""
        self._advance()
        return self.busy / (seconds * self.cores) if seconds > 0 else 0.0
