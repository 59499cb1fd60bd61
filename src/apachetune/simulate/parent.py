"""httpd's parent process: it forks StartServers children, then once a second counts the idle
workers and forks or stops children (perform_idle_server_maintenance in prefork.c, worker.c and
event.c, 2.4.71):

- more idle than MaxSpareServers / MaxSpareThreads: stop one child gracefully, spawn rate back
  to 1;
- fewer idle than MinSpareServers / MinSpareThreads: fork `rate` children (no more than the free
  slots), then double the rate, up to 32 (MAX_SPAWN_RATE); at the limit, the rate goes back to 1;
- otherwise the rate goes back to 1.

A child still starting counts as idle, as httpd counts its scoreboard slots; an event process
over its connection limit does not (it has stopped accepting: ps->not_accepting). One listener
bucket (ListenCoresBucketsRatio 0, the default)."""

from __future__ import annotations

from apachetune.mpm.spawn import MAX_SPAWN_RATE
from apachetune.simulate.clock import Clock
from apachetune.simulate.server import Process, Server
from apachetune.simulate.stats import Stats
from apachetune.sizing.model import EVENT_CONNECTION_MIB


class Parent:
    def __init__(self, clock: Clock, server: Server, mpm: str, section: dict[str, object], stats: Stats,
                 spawn_delay: float, memory: tuple[float, float] | None):
        self.clock, self.server, self.stats = clock, server, stats
        self.prefork = mpm == "prefork"
        mrw = int(section["MaxRequestWorkers"])  # type: ignore[call-overload]
        threads = server.threads
        self.limit = mrw if self.prefork else max(1, mrw // threads)  # ap_daemons_limit
        spare = ("MinSpareServers", "MaxSpareServers") if self.prefork else ("MinSpareThreads", "MaxSpareThreads")
        self.min_spare, self.max_spare = (int(section[n]) for n in spare)  # type: ignore[call-overload]
        self.start_servers = min(int(section["StartServers"]), self.limit)  # type: ignore[call-overload]
        self.spawn_delay = spawn_delay
        self.memory = memory  # MiB (a process, a worker), if known
        self.rate = 1
        self.free_slots = list(range(self.limit))
        server.on_exit = self._exited

    def start(self) -> None:
        for _ in range(self.start_servers):
            self._fork()
        self._sample(0)
        self.clock.at(1.0, self.tick)

    def tick(self) -> None:
        server = self.server
        running = [p for p in server.processes if not p.quiescing]
        idle = sum(server.idle(p) for p in running if not server.not_accepting(p))
        spawned = 0
        if idle > self.max_spare:
            self._stop_one(running)
            self.rate = 1
        elif idle < self.min_spare:
            if not self.free_slots:
                self.stats.events["seconds short of idle workers at MaxRequestWorkers"] += 1
                self.rate = 1
            else:
                spawned = min(self.rate, len(self.free_slots))
                for _ in range(spawned):
                    self._fork()
                self.rate = min(MAX_SPAWN_RATE, self.rate * 2)
        else:
            self.rate = 1
        self._sample(spawned)
        self.clock.after(1.0, self.tick)

    def _fork(self) -> None:
        p = Process(self.free_slots.pop(0), self.server.threads, self.clock.now + self.spawn_delay)
        self.server.processes.append(p)
        self.stats.events["children forked"] += 1
        self.clock.at(p.ready_at, self.server.dispatch)

    def _stop_one(self, running: list[Process]) -> None:
        """The pipe of death: an idle child reads it (prefork), or a child is told to stop
        gracefully (worker, event)."""
        if not running:
            return
        idle_ones = [p for p in running if self.server.idle(p) == p.workers] or running
        victim = max(idle_ones, key=lambda p: p.slot)
        self.stats.events["children stopped"] += 1
        self.server.quiesce(victim)

    def _exited(self, p: Process) -> None:
        self.free_slots.append(p.slot)
        self.free_slots.sort()

    def _sample(self, spawned: int) -> None:
        server = self.server
        procs = server.processes
        busy = sum(p.workers - server.idle(p) for p in procs)
        conns = sum(len(p.conns) for p in procs)
        sample: dict[str, float] = {
            "t": round(self.clock.now, 3), "processes": len(procs), "forked": spawned,
            "busy_workers": busy, "idle_workers": sum(server.idle(p) for p in procs),
            "connections": conns, "accept_queue": len(server.queue)}
        if self.memory is not None:
            per_process, per_worker = self.memory
            mib = len(procs) * (0.0 if self.prefork else per_process) + \
                sum(p.workers for p in procs) * per_worker + \
                (conns * EVENT_CONNECTION_MIB + sum(p.kept for p in procs) * server.kept_mib if server.event else 0.0)
            sample["memory_mib"] = round(mib, 1)
            self.stats.peak_memory_mib = max(self.stats.peak_memory_mib, mib)
        self.stats.timeline.append(sample)

