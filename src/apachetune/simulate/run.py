"""One simulation: an effective MPM section and a workload in, what the clients saw out."""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from apachetune.config.conditions import DEFAULT_VERSION
from apachetune.mpm.buckets import listen_buckets
from apachetune.mpm.versions import rules_for
from apachetune.simulate.clients import (
    AbClient,
    AbCount,
    Arrivals,
    Client,
    ClientThread,
    CrowdClient,
    CrowdFormation,
    LoopClient,
    Replay,
    SilentClient,
)
from apachetune.simulate.clock import Clock
from apachetune.simulate.cpu import CFS_PERIOD_S, CpuCosts, Processors, RunQueue, autogroup_enabled
from apachetune.simulate.parent import RESTART_SECONDS, Parent
from apachetune.simulate.server import ACCEPT_SPACING, DEFER_ACCEPT, LISTENER_WAKE, Server
from apachetune.simulate.stats import Stats, as_wrk_reports, percentile
from apachetune.simulate.workload import Workload
from apachetune.sizing.machine import cpu_allowance

DEFAULT_SOMAXCONN = 4096  # Linux since 5.4
MAX_EVENTS = 5_000_000  # about 45 s here: a run asked for more stops there and says so
# The share of the cores busy from which a run's throughput is the CPU figures' (a static file
# under ab -k -c 100 simulated 99% busy; 20 ms requests at 300 clients, 74%, were bound by the pool).
ASSUMED_CPU_BINDS = 0.85


def somaxconn() -> int:
    """net.core.somaxconn on this machine: the kernel caps ListenBacklog at it."""
    try:
        return int(Path("/proc/sys/net/core/somaxconn").read_text())
    except (OSError, ValueError):
        return DEFAULT_SOMAXCONN


@dataclass
class SimResult:
    mpm: str
    httpd_version: str
    section: dict[str, object]
    workload: str
    seconds: float
    warmup: float
    completed: int
    throughput: float  # requests a second, counted after the warm-up
    latency_ms: dict[str, float]  # mean, p50, p95, p99, max of the workload's requests
    errors: dict[str, int]
    events: dict[str, int]
    timeline: list[dict[str, float]]
    peak_memory_mib: float | None
    accept_queue: int
    wall_seconds: float
    crowd_latency_ms: dict[str, float] = field(default_factory=dict)
    stopped_at: float | None = None  # simulated time where MAX_EVENTS ran out, if it did
    latencies: list[float] = field(default_factory=list, repr=False)  # seconds, each counted request
    cores: int | None = None  # the CPUs shared, when the workload has a CPU part
    cpu_quota: float | None = None  # the CPU time a second a cgroup's quota leaves them, when less
    cpu_period: float | None = None  # that quota's CFS period, seconds
    cpu_utilisation: float | None = None  # share of those cores busy over the run
    # how the cores are shared: "processor sharing", or "run queue" (a local client under autogroup)
    cpu_scheduler: str | None = None
    ab: dict[str, float] | None = None  # workload.requests: what `ab -n` would print
    costs: CpuCosts | None = None  # httpd's own CPU a request (and the client's), when modelled
    workload_cpu: float = 0.0  # the share of the service time on CPU (--cpu-fraction)
    recycled: list[int] = field(default_factory=list)  # connections each process took before MaxConnectionsPerChild stopped it
    accept_defer: float = DEFER_ACCEPT  # what a silent connection met: the kernel's defer, then the read timeout
    read_timeout: float | None = None
    worker_return: float = 0.0  # event: mean seconds from a worker's request done to its being idle
    client_first: float = 0.0  # event: share of keep-alive responses whose next request beats the worker back
    client_first_fade: float = 0.0  # ... fading to none at this many keep-alive responses a second (0: constant)
    first_pass: float = 1.0  # seconds from the load's start to the parent's first maintenance pass
    listener_wake: float = 0.0  # event: seconds a disabled listener takes to act on a worker gone idle
    accept_spacing: float = 0.0  # event: seconds between the requests of connections accepted back to back
    turnaround: float = 0.0  # the closed loop's mean turnaround (Workload.turnaround)
    turnaround_assumed: bool = False  # that turnaround is the CLI's default (a load generator on loopback)
    clients: int = 0  # the closed loop's clients (Workload.clients), wrk's connections
    fixed_think: float = 0.0  # a keep-alive closed loop's pause when it is fixed, not drawn
    # the same run with the parent's first maintenance pass at each of PASS_PHASES (a pool that
    # grows during the run grows at passes whose phase against the load is chance): the lowest and
    # highest throughput (req/s) and p99 (ms), with this run's own among them; set by the caller
    phases: dict[str, list[float]] | None = None
    # event, a keep-alive closed loop with more clients than MaxRequestWorkers: its closes and
    # its tail hang on races of microseconds (docs/simulate.md, "event's parked requests")
    keepalive_overload: bool = False
    # what httpd prints at start-up about the section it was given (the section above is what
    # it then runs with), "AHnnnnn: text" as -t shows them; set by the caller that read the file
    startup_messages: list[str] = field(default_factory=list)
    # an open loop's requests still out when the run ended (not drained): not in the latencies,
    # and in an overload the slowest; a closed loop's, those out longer than the counted p99
    # (clients left waiting behind others that hold every worker), and the longest's wait, s
    unanswered: int = 0
    unanswered_longest: float = 0.0
    # wrk's --timeout for the latencies as it prints them: slower responses are its "timeout"
    # errors instead (None: no limit; the CLI sets wrk's default, 2 s)
    wrk_timeout: float | None = None
    # simulated seconds the idle crowd took to form before the load started (the timeline's t
    # counts from its first client; the latencies and throughput from the load's start)
    load_start: float = 0.0
    limit_seconds: int = 0  # of events[CONNECTION_LIMIT_SECONDS], those after the warm-up
    _as_wrk: dict[str, float] | None = field(default=None, repr=False, compare=False)

    def latency_as_wrk_ms(self) -> dict[str, float]:
        """The latency summary as wrk 4.x would print it for this run (stats.as_wrk_reports):
        its correction for coordinated omission counts long waits again at shorter ones, and
        responses slower than `wrk_timeout` are not in it (wrk_timeouts)."""
        if self._as_wrk is None:  # (sorted once: the plan's verdict and the JSON report both ask)
            self._as_wrk = summary_ms(as_wrk_reports(self.latencies, self.seconds - self.warmup, self.clients,
                                                     self.wrk_timeout))
        return self._as_wrk

    @property
    def wrk_timeouts(self) -> int:
        """Responses wrk would count as "timeout" errors: slower than its --timeout."""
        return 0 if self.wrk_timeout is None else sum(1 for x in self.latencies if x >= self.wrk_timeout)

    @property
    def left_out(self) -> int:
        """The unanswered requests worth telling (0: none): an open loop's when more than 1% of
        those answered, a closed loop's when one has waited a second or more (a client starved
        all run is news however few)."""
        if self.clients:
            return self.unanswered if self.unanswered_longest >= 1.0 else 0
        return self.unanswered if self.unanswered > 0.01 * self.completed else 0

    @property
    def assumed_cpu_binds(self) -> bool:
        """The CPUs bound this run (ASSUMED_CPU_BINDS of them busy) on httpd's CPU figures that were
        assumed (a lab machine's), not measured on this one: its throughput is then theirs."""
        return bool(self.costs and self.costs.source.startswith("assumed") and self.cpu_utilisation is not None
                    and self.cpu_utilisation >= ASSUMED_CPU_BINDS)

    @property
    def peak_processes(self) -> int:
        return max((int(s["processes"]) for s in self.timeline), default=0)

    def to_json(self) -> dict[str, Any]:
        return {
            "mpm": self.mpm, "httpd_version": self.httpd_version, "section": self.section, "workload": self.workload,
            "simulated_seconds": self.seconds, "warmup_seconds": self.warmup,
            "completed": self.completed, "throughput_rps": round(self.throughput, 1),
            "latency_ms": self.latency_ms, "crowd_latency_ms": self.crowd_latency_ms,
            "latency_as_wrk_ms": self.latency_as_wrk_ms() if self.clients else None,
            "wrk_timeout_s": self.wrk_timeout if self.clients else None,
            "wrk_timeouts": self.wrk_timeouts if self.clients else None,
            "errors": self.errors, "events": self.events,
            "peak_processes": self.peak_processes,
            "peak_memory_mib": None if self.peak_memory_mib is None else round(self.peak_memory_mib, 1),
            "accept_queue": self.accept_queue, "load_start_s": self.load_start, "timeline": self.timeline,
            "wall_seconds": round(self.wall_seconds, 3), "stopped_at": self.stopped_at,
            "cores": self.cores, "cpu_quota": self.cpu_quota,
            "cpu_period_ms": None if self.cpu_period is None else round(self.cpu_period * 1000, 3), "cpu_utilisation": self.cpu_utilisation,
            "cpu_scheduler": self.cpu_scheduler, "ab": self.ab,
            "cpu_costs": self.costs.to_json() if self.costs else None,
            "assumed_cpu_binds": self.assumed_cpu_binds,
            "worker_return_us": round(self.worker_return * 1e6, 3) if self.mpm == "event" else None,
            "client_first": round(self.client_first, 4) if self.mpm == "event" else None,
            "client_first_fade_rps": self.client_first_fade or None if self.mpm == "event" else None,
            "first_pass_s": self.first_pass,
            "listener_wake_us": round(self.listener_wake * 1e6, 3) if self.mpm == "event" else None,
            "accept_spacing_us": round(self.accept_spacing * 1e6, 3) if self.mpm == "event" else None,
            "turnaround_us": round(self.turnaround * 1e6, 3) if self.clients else None,
            "turnaround_assumed": self.turnaround_assumed,
            "pass_phases": self.phases,
            "unanswered": self.unanswered,
            "unanswered_longest_s": self.unanswered_longest, "keepalive_overload": self.keepalive_overload, "startup_messages": self.startup_messages,
            "recycled": {"processes": len(self.recycled), "connections_min": min(self.recycled),
                         "connections_max": max(self.recycled)} if self.recycled else None,
        }


def _processors(clock: Clock, cores: int | None, quota: float | None, period: float | None,
                local_client: bool, autogroup: bool | None, seed: int) -> Processors:
    """The CPUs the server's work shares: `cores` under `quota` (throttled a `period` at a time,
    the kernel's default 100 ms when none is given), or this machine's (the CPUs its affinity
    and cgroup's cpuset leave it, under its cgroup's quota and period) when no cores are given.
    A `local_client` (a closed loop's, on this machine) that the kernel schedules apart from httpd
    (`autogroup`; None: as this machine's kernel does) leaves httpd's threads a queue (RunQueue)."""
    if cores is None:
        allowance = cpu_allowance()
        if quota is None:
            quota, period = allowance.quota, period or allowance.period
        cores = allowance.runs_on
    cpu = Processors(clock, cores, quota, period or CFS_PERIOD_S)
    if local_client and cpu.quota is None and (autogroup_enabled() if autogroup is None else autogroup):
        return RunQueue(clock, cpu.cores, random.Random(seed * 7919 + 17))  # its own draws: the workload's stay
    return cpu


def simulate(mpm: str, section: dict[str, object], workload: Workload, seconds: float = 30.0, *,
             warmup: float = 0.0, seed: int = 1, backlog: int | None = None,
             memory: tuple[float, float] | None = None, spawn_delay: float = 0.005,
             max_events: int = MAX_EVENTS, version: str | None = None, cores: int | None = None,
             graceful_at: tuple[float, ...] = (), restart_start_servers: int | None = None,
             drain: bool = False, costs: CpuCosts | None = None, first_pass: float = 1.0,
             accept_defer: float = DEFER_ACCEPT, read_timeout: float | None = None,
             worker_return: float = 0.0, client_first: float = 0.0, client_first_fade: float = 0.0,
             listener_wake: float = LISTENER_WAKE, accept_spacing: float = ACCEPT_SPACING,
             cpu_quota: float | None = None, cpu_period: float | None = None,
             restart_seconds: float = RESTART_SECONDS, autogroup: bool | None = None) -> SimResult:
    """Run `workload` against httpd's `mpm` with `section` (the effective directives, as
    validate.section.load_directives gives them) for `seconds` of simulated time.

    `backlog`: the accept queue (default min(ListenBacklog, somaxconn)); `memory`: MiB a process
    and MiB a worker, for the peak; `spawn_delay`: how long a forked child takes to accept;
    `version`: the httpd 2.4.x modelled (event's connection limit changed in 2.4.30); `cores`:
    the server's online CPUs (default: this machine's), which a workload with a `cpu_fraction`
    shares and which set the listener buckets of a ListenCoresBucketsRatio (from 2.4.17; the
    section's spare bounds are those load_directives raised for them); `graceful_at`: seconds
    into the load at which the parent is told to restart gracefully (apachectl graceful);
    `restart_start_servers`: the StartServers a restart starts, when the section's is the pool
    found running instead (validate's plan); `drain`: closed-loop clients send nothing after
    `seconds`, no visitor arrives after it, and the run goes on until the requests sent and the
    visitors come are answered or given up, as validate's client waits for its last ones (a
    request sent into a restart's gap is counted; an overloaded open loop's tail is the
    requests still waiting at the end); throughput then runs to the last answer;
    `costs`: httpd's own CPU a request and a connection (and a local client's), shared over the
    cores with the workload's CPU part (none: the CPUs never limit what httpd itself does);
    `first_pass`: seconds from the start to the parent's first maintenance pass (then one a
    second): a server started before its load is at some phase of its tick, which decides when
    a process that stopped is replaced (measured beside a run, it makes the run comparable);
    `accept_defer`: how long the kernel keeps a connection that sends nothing from httpd (Linux,
    the default AcceptFilter: 31 s; 0 with `AcceptFilter http none`); `read_timeout`: how long a
    worker waits for a request line (mod_reqtimeout's header timeout; None: the section's
    Timeout); `worker_return`: event's way back to idle after a request (Server; 0: none);
    `client_first`: the share of event's keep-alive responses whose next request is in before
    their worker is idle again (a client preempting the worker on its core; Server), fading
    linearly to none as the keep-alive responses near `client_first_fade` a second (0: constant);
    `listener_wake`, `accept_spacing`: event's listener as a thread (Server; 0: instant);
    `cpu_quota`: the CPU time a second the server's cgroup allows when below its cores (docker
    --cpus 0.5: half a core's time shared by all its threads; default with `cores` not given:
    this machine's own quota); `cpu_period`: that quota's CFS period in seconds (cpu.max's second
    field; default the machine's with its quota, else the kernel's 100 ms): a throttled cgroup
    waits for the rest of its period, so the period sets the length of a throttled request's wait;
    `restart_seconds`: what a graceful restart's re-read of the configuration takes: children
    that exit meanwhile are replaced at once, one for one. `autogroup`: the kernel schedules a
    local closed loop's client apart from httpd (its own session's group: cpu.RunQueue) rather than
    sharing the cores alike (None: as this machine's kernel.sched_autogroup_enabled says)."""
    if not 0 <= client_first <= 1:
        raise ValueError("client_first is a share, from 0 to 1")
    if seconds <= 0 or not 0 <= warmup < seconds:
        raise ValueError("seconds must be above 0 and the warm-up shorter")
    started = time.perf_counter()
    rng = random.Random(seed)
    clock, stats = Clock(), Stats(warmup=warmup)
    if backlog is None:
        # Linux queues one connection more than listen()'s backlog (sk_acceptq_is_full: ">")
        backlog = min(int(section.get("ListenBacklog", 511)), somaxconn()) + 1  # type: ignore[call-overload]
    if costs and not workload.clients:  # only a closed loop's client has threads (an open loop's CPU is the request's)
        costs = replace(costs, client_threads=0)
    # this machine's CPUs by default: what its cgroup's quota or cpuset and the affinity allow
    local_client = bool(costs and costs.has_client_threads)
    cpu = _processors(clock, cores, cpu_quota, cpu_period, local_client, autogroup, seed) \
        if workload.cpu_fraction or costs else None
    ratio = section.get("ListenCoresBucketsRatio")
    # httpd's buckets count the CPUs online (sysconf), whatever a quota allows
    buckets = listen_buckets(ratio, cores) if rules_for(version).buckets and isinstance(ratio, int) else 1
    server = Server(clock, mpm, section, workload.service, rng, stats, backlog, version, cpu, workload.cpu_fraction,
                    buckets, workload.fin_after, costs, accept_defer, read_timeout, worker_return, client_first,
                    listener_wake, accept_spacing, client_first_fade)
    parent = Parent(clock, server, mpm, section, stats, spawn_delay, memory)
    parent.first_pass = first_pass
    parent.restart_seconds = restart_seconds
    if restart_start_servers is not None:
        parent.restart_start_servers = min(restart_start_servers, parent.limit)
    parent.start()
    lead = form_crowd(clock, server, stats, workload, max_events)
    stats.warmup = lead + warmup
    for at in graceful_at:
        clock.at(lead + at, parent.graceful)
    for _ in range(workload.silent):
        clock.at(lead, SilentClient(clock, server, stats, workload).request)
    count = AbCount(workload.requests) if workload.requests else None
    loop_clients = []
    # a local load generator's threads, its connections dealt among them as wrk deals them
    threads = [ClientThread(cpu, costs) for _ in range(max(1, costs.client_threads))] \
        if cpu is not None and costs is not None and costs.has_client else []
    for i in range(workload.clients):
        client = LoopClient(clock, server, stats, workload) if count is None else \
            AbClient(clock, server, stats, workload, count)
        if threads:
            client.cpu_thread = threads[i % len(threads)]
        if drain:
            client.until = lead + seconds
        loop_clients.append(client)
        clock.at(lead + i * workload.ramp_up / workload.clients, client.request)
    arrivals = None
    if workload.rate:
        arrivals = Arrivals(clock, server, stats, workload, rng)
        if drain:
            arrivals.until = lead + seconds
        arrivals.start()
    replay = None
    if workload.replay:  # runs until its last request is answered or given up (at most `seconds`)
        replay = Replay(clock, server, stats, workload, rng)
        replay.start(lead)
    stop = replay.done if replay else (lambda: count.complete) if count else None
    horizon = seconds
    if drain and (loop_clients or arrivals) and not replay and not count:
        horizon, stop = _drained(clock, lead, seconds, workload, loop_clients, arrivals)
    finished = clock.run(lead + horizon, max_events, stop)
    end = clock.now - lead  # `seconds`, or where a replay or ab's requests ended or the events ran out
    ended = bool(stop and finished and end != seconds)
    stats.events["simulation events"] = clock.events
    latency = summary_ms(stats.latencies)
    unanswered, longest = left_behind(clock.now, arrivals.present if arrivals else loop_clients,
                                      0.0 if arrivals else latency.get("p99", 0.0) / 1000)
    return SimResult(
        mpm=mpm, httpd_version=str(version or DEFAULT_VERSION), section=dict(section), workload=workload.label(),
        seconds=round(end, 3) if ended else seconds, warmup=warmup,
        completed=len(stats.latencies), throughput=len(stats.latencies) / max(1e-9, end - warmup),
        latency_ms=latency, errors=dict(stats.errors), events=dict(stats.events),
        timeline=stats.timeline, peak_memory_mib=stats.peak_memory_mib if memory else None,
        accept_queue=backlog, wall_seconds=time.perf_counter() - started,
        crowd_latency_ms=summary_ms(stats.crowd_latencies), stopped_at=None if finished else round(end, 3),
        latencies=stats.latencies, cores=cpu.cores if cpu else None, cpu_quota=cpu.quota if cpu else None,
        cpu_period=cpu.period if cpu and cpu.quota is not None else None,
        cpu_utilisation=round(cpu.utilisation(lead + end), 3) if cpu else None,
        cpu_scheduler=None if cpu is None else "run queue" if isinstance(cpu, RunQueue) else "processor sharing",
        ab=ab_report(count, end, lead) if count else None, costs=costs or None,
        workload_cpu=workload.cpu_fraction, recycled=stats.recycled, accept_defer=accept_defer,
        read_timeout=read_timeout, worker_return=worker_return, client_first=client_first,
        client_first_fade=client_first_fade, first_pass=first_pass, listener_wake=listener_wake, accept_spacing=accept_spacing, turnaround=workload.turnaround,
        fixed_think=workload.think if workload.keepalive and workload.think_draw is None else 0.0,
        clients=workload.clients, unanswered=unanswered, unanswered_longest=round(longest, 3),
        load_start=round(lead, 3),
        limit_seconds=stats.limit_seconds,
        keepalive_overload=mpm == "event" and workload.keepalive
        and workload.clients > int(section.get("MaxRequestWorkers", 0)))  # type: ignore[call-overload]


def left_behind(now: float, clients: Iterable[Client], longer_than: float) -> tuple[int, float]:
    """Requests still out at the end for longer than `longer_than` (s), and the longest wait:
    an open loop's backlog (0: every visitor waiting), a closed loop's clients left behind (its
    counted p99: say 20 keep-alive clients queued behind 10 that hold every worker of prefork
    or worker, each for its 100 requests). Without --drain the percentiles count only what was
    answered, and would say nothing of them."""
    late = [age for c in clients if c.waiting and c.conn is not None and (age := now - c.conn.sent_at) > longer_than]
    return len(late), max(late, default=0.0)


def _drained(clock: Clock, lead: float, seconds: float, workload: Workload, loop_clients: list[LoopClient],
             arrivals: Arrivals | None) -> tuple[float, Callable[[], bool]]:
    """A drained run's horizon and its end: past `seconds`, no request out and no visitor left."""
    # every request still out can take a timeout (a visitor's each, and its gaps between)
    per_visitor = workload.requests_per_connection * (workload.timeout + workload.gap) if arrivals else 0.0

    def stop() -> bool:
        return (clock.now >= lead + seconds and not any(c.waiting for c in loop_clients)
                and (arrivals is None or not arrivals.present))
    return seconds + max(workload.timeout, per_visitor) + 1.0, stop


# the rows of ab's "Percentage of the requests served within a certain time (ms)"
AB_PERCENTAGES = (50, 66, 75, 80, 90, 95, 98, 99, 100)


def ab_report(count: AbCount, end: float, lead: float) -> dict[str, object]:
    """ab's summary lines: its time runs from the first request to the last one done; its
    percentile table is of every request done, failures included (a keep-alive connection the
    server closed idle at the end counts its wait), at stats[done x p / 100] (support/ab.c)."""
    taken = (count.finished_at - lead) if count.finished_at is not None else end
    times = sorted(count.times)
    table = {str(p): round(1000 * times[min(len(times) - 1, len(times) * p // 100)], 1) for p in AB_PERCENTAGES} \
        if times else {}
    return {"requests": count.requests, "complete": count.done, "failed_length": count.failed_length,
            "time_taken_s": round(taken, 3), "requests_per_second": round(count.done / max(taken, 1e-9), 1),
            "percentiles_ms": table}


def form_crowd(clock: Clock, server: Server, stats: Stats, workload: Workload, max_events: int) -> float:
    """The idle keep-alive crowd forms first, a client at a time (CrowdFormation), and the load
    starts once it has: idle browsers are there before a rush, and validate forms its crowd
    before the load. Returns when the load starts; the run's seconds are counted from there.
    (The order matters on event: a burst that finds every worker of a process busy closes its
    idle connections, and the limit measured on httpd was reached by clients one at a time.)"""
    if not workload.crowd:
        return 0.0
    formation = CrowdFormation(clock, [CrowdClient(clock, server, stats, workload) for _ in range(workload.crowd)])
    formation.start()
    clock.run(math.inf, max_events, stop=lambda: formation.done)
    return clock.now


def summary_ms(latencies: list[float]) -> dict[str, float]:
    if not latencies:
        return {}
    xs = sorted(latencies)

    def pct(q: float) -> float:
        return percentile(xs, q) * 1000

    return {"mean": round(sum(xs) / len(xs) * 1000, 2), "p50": round(pct(0.50), 2), "p95": round(pct(0.95), 2),
            "p99": round(pct(0.99), 2), "max": round(xs[-1] * 1000, 2), "count": len(xs)}
