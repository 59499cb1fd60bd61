"""httpd's parent process: it forks StartServers children, then once a second counts the idle
workers and forks or stops children (perform_idle_server_maintenance in prefork.c, worker.c and
event.c, 2.4.71):

- more idle than MaxSpareServers / MaxSpareThreads: stop one child gracefully, spawn rate back
  to 1;
- fewer idle than MinSpareServers / MinSpareThreads: fork `rate` children (no more than the free
  slots), then double the rate, up to 32 (MAX_SPAWN_RATE); at the limit, the rate goes back to 1;
- otherwise the rate goes back to 1.

A child still starting counts as idle, as httpd counts its scoreboard slots; an event process
over its connection limit does not (it has stopped accepting: ps->not_accepting).

With listener buckets (ListenCoresBucketsRatio), the child of slot s serves bucket s % buckets.
prefork keeps one count for all and stops a child of each bucket in turn
(bucket_kill_child_record); worker and event run the maintenance once a bucket, over that
bucket's slots, against MinSpareThreads / buckets and MaxSpareThreads / buckets, with a spawn
rate a bucket that doubles while below 32 / buckets. (The spare bounds the section holds were
already raised for the buckets at start-up: mpm.simulate_startup.)

The parent's loop (server_main_loop, ap_wait_or_timeout) reaps exited children only between
its one-second sleeps: a child that exits during a sleep holds its scoreboard slot through the
next maintenance pass and is reaped right after it.

A graceful restart (`graceful`, apachectl graceful / SIGUSR1): every running child quiesces
(stops accepting, answers what it has with Connection: close, closes its idle keep-alive
connections, exits when done); the parent re-reads its configuration (RESTART_SECONDS) and
restarts its loop: it replaces each child it reaps one for one until StartServers are started,
and after its first one-second sleep starts what is left in any free slot, below ServerLimit;
then maintenance, the spawn rate held at 1 for 10 spawning passes
(hold_off_on_exponential_spawning). New children need free slots. event's are any below
ServerLimit: with ServerLimit equal to MaxRequestWorkers / ThreadsPerChild, old children still
busy hold every slot, and nothing starts until they exit. worker's are those below
MaxRequestWorkers / ThreadsPerChild whatever ServerLimit says, and its maintenance also forks
into the slot of a stopping child whose idle threads have exited (worker.c: "slot is still in
use - back of the bus", after the wholly free ones): the new child starts threads in the dead
thread slots and, once a second, in those its predecessor's threads free as they finish
(start_threads). Measured on httpd 2.4.71, worker 2 x 25, 40 keep-alive clients, SIGUSR1 at
3.1 s: with 1 s requests the old children are gone before a pass could squat (no process from
4.3 to 5.3 s, one to 6.3, ServerLimit 2 or 4 alike: 265 done, the slowest 3.1 s); with 3 s
requests a third process appears at 5.3 s in a stopping child's slot and nothing waits (the
slowest 3.1 s; event, ServerLimit 2: 5.1 s)."""

from __future__ import annotations

from apachetune.mpm.spawn import MAX_SPAWN_RATE
from apachetune.simulate.clock import Clock
from apachetune.simulate.server import Process, Server
from apachetune.simulate.stats import Stats
from apachetune.sizing.model import EVENT_CONNECTION_MIB

# What the parent takes to read its configuration again before its loop restarts (a few ms on
# httpd 2.4.71 with a small configuration: idle children had exited, and were replaced, by then).
RESTART_SECONDS = 0.01
HOLD_OFF_AFTER_RESTART = 10  # spawning passes without doubling the rate after a graceful restart

# When the parent's first maintenance pass comes after a load starts, besides a second in (the
# default): its phase against a load is chance, and a pool that grows during the load grows at
# those passes. mpmd worker, 11 of 16 processes read, 600 clients beside 200 idle ones for 3 s:
# 2,083-2,717 req/s over these phases, 2,233 a second in, 2,574 measured; httpd prefork, Debian's
# section, wrk -c 300 for 8 s: 6,193 requests where the pass a second in gives 5,000.
PASS_PHASES = (0.05, 0.2, 0.4, 0.6, 0.8)
# ... and for a server started at an unknown moment before its load, the middle of that chance,
# the CLI's default: the first pass half a second in (the spot checks' servers, started 1.5 s
# before ab or wrk, met theirs about then: benchmarks/cli_spot_checks.py, docs/simulate.md)
MIDDLE_FIRST_PASS = 0.5

# event: maintenance passes (one a second) that found connections waiting while a process over
# its connection limit had idle workers (the report names AsyncRequestWorkerFactor for it)
CONNECTION_LIMIT_SECONDS = "seconds with connections waiting at event's connection limit, workers idle"


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
        self.restart_start_servers = self.start_servers  # what a graceful restart starts
        self.spawn_delay = spawn_delay
        self.memory = memory  # MiB (a process, a worker), if known
        self.buckets = server.buckets
        self.rates = [1] * self.buckets  # the spawn rate (one a bucket on worker and event)
        # the scoreboard's process slots: ServerLimit (worker, event; prefork: MaxRequestWorkers)
        server_limit = int(section.get("ServerLimit", self.limit))  # type: ignore[call-overload]
        self.squats = mpm == "worker"  # forks into a stopping child's slot (see the module docstring)
        slots = max(self.limit, server_limit) if mpm == "event" else self.limit
        self.free_slots = list(range(slots))
        self.squatted: dict[int, Process] = {}  # slot -> the stopping child a new one shares it with
        self.kill_record = -1  # prefork: the bucket whose child is stopped next
        self.unreaped: list[Process] = []  # exited since the last pass: their slots are still taken
        self.remaining = 0  # children a graceful restart still has to start
        self.hold_off = 0  # spawning passes before the rate may double again
        self.loop = 0  # bumped when the parent's loop restarts: a pending pass of the old one is dropped
        self.first_pass = 1.0  # when its first maintenance pass comes (then one a second)
        self.restart_seconds = RESTART_SECONDS  # what a graceful restart's re-read of the configuration takes
        server.on_exit = self._exited

    def start(self) -> None:
        for _ in range(self.start_servers):
            self._fork(self.free_slots[0])
        self._sample(0)
        self.clock.at(self.first_pass, self.tick, self.loop)

    def tick(self, loop: int) -> None:
        if loop != self.loop:
            return  # the loop restarted (a graceful restart) since this pass was planned
        if self.remaining:  # a graceful restart's children not started by replacement
            spawned = self._startup(self.remaining)
            self.remaining = 0
        elif self.prefork or self.buckets == 1:
            spawned = self._maintain(None)
        else:
            spawned = sum(self._maintain(b) for b in range(self.buckets))
        self._sample(spawned)
        self._reap()
        self.clock.after(1.0, self.tick, loop)

    def graceful(self) -> None:
        """A graceful restart now (apachectl graceful): see the module docstring."""
        self.stats.events["graceful restarts"] += 1
        for p in [p for p in self.server.processes if not p.quiescing]:
            self.server.quiesce(p)
        self.remaining = self.restart_start_servers
        self.hold_off = HOLD_OFF_AFTER_RESTART  # (the spawn rate itself is kept, as httpd's retained one)
        self.loop += 1
        self.clock.after(self.restart_seconds, self._restarted, self.loop)

    def _restarted(self, loop: int) -> None:
        if loop != self.loop:
            return  # restarted again meanwhile
        self._reap()  # the loop's first look: children that exited meanwhile are replaced at once
        self.clock.after(1.0, self.tick, loop)

    def _startup(self, count: int) -> int:
        """startup_children: up to `count` children in free slots, lowest first."""
        slots = self.free_slots[:max(0, min(count, self._room()))]
        for slot in slots:
            self._fork(slot)
        return len(slots)

    def _room(self) -> int:
        """Processes that may still start: MaxRequestWorkers' processes less those running (not stopping)."""
        return self.limit - sum(1 for p in self.server.processes if not p.quiescing)

    def _reap(self) -> None:
        """The children that exited since the last pass give their slots back; while a
        graceful restart has children to start, each is replaced in its slot at once."""
        for p in self.unreaped:
            if self.squatted.get(p.slot) is p:
                del self.squatted[p.slot]  # out of the scoreboard already: its slot is the new child's
                continue
            self.free_slots.append(p.slot)
            self.free_slots.sort()
            if self.remaining:
                self._fork(p.slot)
                self.remaining -= 1
        self.unreaped.clear()

    def _maintain(self, bucket: int | None) -> int:
        """One maintenance pass over every child (`bucket` None) or one bucket's: the children
        it forked."""
        server, share = self.server, 1 if bucket is None else self.buckets
        rate = self.rates[bucket or 0]
        running = [p for p in server.processes if not p.quiescing and (bucket is None or p.bucket == bucket)]
        free = [s for s in self.free_slots if bucket is None or s % self.buckets == bucket]
        idle = sum(server.idle(p) for p in running if not server.not_accepting(p))
        if server.event and server.waiting() and any(server.idle(p) > 0 and server.not_accepting(p)
                                                     for p in running):
            # connections wait while workers are idle: the connection limit binds, not the pool
            self.stats.events[CONNECTION_LIMIT_SECONDS] += 1
            self.stats.limit_seconds += self.clock.now > self.stats.warmup  # (a pass a second: at most the seconds measured)
        spawned = 0
        if idle > self.max_spare // share:
            self._stop_one(running)
            rate = 1
        elif idle < self.min_spare // share:
            # no free slot, or as many running (not stopping) processes as MaxRequestWorkers allows
            shared = self._squattable(bucket) if self.squats else []
            room = min(len(free) + len(shared), self._room())
            if room <= 0:
                self.stats.events["seconds short of idle workers at MaxRequestWorkers"] += 1
                rate = 1
            else:
                spawned = min(rate, room)
                for slot in free[:spawned]:
                    self._fork(slot)
                for old in shared[:spawned - len(free[:spawned])]:
                    self._fork_beside(old)
                if self.hold_off:
                    self.hold_off -= 1
                elif rate < MAX_SPAWN_RATE // share:
                    rate *= 2
        else:
            rate = 1
        self.rates[bucket or 0] = rate
        return spawned

    def _fork(self, slot: int) -> None:
        self.free_slots.remove(slot)
        p = Process(slot, self.server.threads, self.clock.now + self.spawn_delay, slot % self.buckets)
        self.server.processes.append(p)
        self.stats.events["children forked"] += 1
        self.clock.at(p.ready_at, self.server.dispatch)

    def _squattable(self, bucket: int | None) -> list[Process]:
        """worker: stopping children below MaxRequestWorkers / ThreadsPerChild with a dead
        thread (an idle one exits at once) and no new child in their slot yet; those that have
        exited but are not reaped first (every thread dead: worker.c prefers them)."""
        server = self.server
        return [p for p in self.unreaped + sorted(server.processes, key=lambda p: p.slot)
                if p.quiescing and p.slot < self.limit and p.slot not in self.squatted
                and (bucket is None or p.bucket == bucket) and (p.gone or server.idle(p) > 0)]

    def _fork_beside(self, old: Process) -> None:
        """A new child in `old`'s slot: its threads start in the thread slots `old` has freed,
        then once a second in those freed since."""
        self.squatted[old.slot] = old
        threads = self.server.threads if old.gone else self.server.idle(old)
        p = Process(old.slot, threads, self.clock.now + self.spawn_delay, old.bucket)
        self.server.processes.append(p)
        self.stats.events["children forked"] += 1
        self.clock.at(p.ready_at, self._start_threads, p, old)

    def _start_threads(self, p: Process, old: Process) -> None:
        if p.gone:
            return
        p.workers = self.server.threads - (0 if old.gone else len(old.conns))
        self.server.dispatch(p)
        if p.workers < self.server.threads:
            self.clock.after(1.0, self._start_threads, p, old)

    def _stop_one(self, running: list[Process]) -> None:
        """The pipe of death: an idle child reads it (prefork), or a child is told to stop
        gracefully (worker, event)."""
        if self.prefork and self.buckets > 1:  # the pipe of death of each bucket in turn
            self.kill_record = (self.kill_record + 1) % self.buckets
            running = [p for p in running if p.bucket == self.kill_record]
        if not running:
            return
        idle_ones = [p for p in running if self.server.idle(p) == p.workers] or running
        victim = max(idle_ones, key=lambda p: p.slot)
        self.stats.events["children stopped"] += 1
        self.server.quiesce(victim)

    def _exited(self, p: Process) -> None:
        self.unreaped.append(p)  # its slot comes back when the parent next reaps

    def _sample(self, spawned: int) -> None:
        server = self.server
        procs = server.processes
        busy = sum(p.workers - server.idle(p) for p in procs)
        conns = sum(len(p.conns) for p in procs)
        sample: dict[str, float] = {
            "t": round(self.clock.now, 3), "processes": len(procs), "forked": spawned,
            "busy_workers": busy, "idle_workers": sum(server.idle(p) for p in procs),
            "connections": conns, "accept_queue": server.waiting()}
        if self.memory is not None:
            per_process, per_worker = self.memory
            mib = len(procs) * (0.0 if self.prefork else per_process) + \
                sum(p.workers for p in procs) * per_worker + \
                ((conns + sum(p.lingering for p in procs)) * EVENT_CONNECTION_MIB
                 + sum(p.kept for p in procs) * server.kept_mib if server.event else 0.0)
            sample["memory_mib"] = round(mib, 1)
            self.stats.peak_memory_mib = max(self.stats.peak_memory_mib, mib)
        self.stats.timeline.append(sample)

