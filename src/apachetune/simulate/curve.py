"""The load curve: one section simulated at loads around its predicted knee, so that an operator
sees where throughput stops growing and the tail starts to climb before deploying it.

The knee is the simplest model's: MaxRequestWorkers / service time requests a second (and, with
a CPU part, cores / CPU time a request, and with a local client's CPU, its threads / its CPU a
request, whichever is lowest). A closed loop reaches it at
capacity x (service + think) clients, where a keep-alive client that thinks holds its worker
meanwhile on prefork and worker (up to KeepAliveTimeout: MaxRequestWorkers / (service + think)
requests a second, at MaxRequestWorkers clients); an open loop at that rate over the
requests a visitor makes, or where prefork's or worker's visitors holding a worker through
their gaps use every worker, if sooner. On event the connections parked between requests fill
its connection limit instead (ThreadsPerChild + idle workers x AsyncRequestWorkerFactor a
process), and idle or silent connections that the rest of the workload keeps open take their
workers, or event's room, off the load's."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from apachetune.mpm import spawn
from apachetune.mpm.versions import rules_for
from apachetune.simulate.cpu import CpuCosts
from apachetune.simulate.run import ACCEPT_SPACING, DEFER_ACCEPT, LISTENER_WAKE, SimResult, simulate
from apachetune.simulate.server import DEFAULT_TIMEOUT
from apachetune.simulate.workload import Workload

# Loads as fractions of the knee: below it, at it, beyond it.
CLOSED_FRACTIONS = (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0)
OPEN_FRACTIONS = (0.25, 0.5, 0.7, 0.85, 0.95, 1.05, 1.25)
POINT_SECONDS = 10.0  # simulated time a point is measured over, at most


@dataclass(frozen=True)
class Knee:
    axis: str  # "clients" (closed loop) or "rate" (open loop, new clients a second)
    at: float  # where the model puts the knee on that axis
    capacity: float  # requests a second there


@dataclass(frozen=True)
class CurvePoint:
    load: float  # clients or rate
    throughput: float
    p99_ms: float | None
    errors: int
    # event: seconds of the point's measurement (after the spawn ramp) that its connection limit
    # held connections back with workers idle (keep-alive clients can hold a lighter load there,
    # where a heavier one makes room)
    limit_seconds: int = 0
    # requests still out at the end that the p99 leaves out, when worth telling (SimResult.left_out):
    # a closed loop's clients left waiting behind others that hold every worker, an open loop's backlog
    unanswered: int = 0
    seconds: float = 0.0  # how long the point was measured (after its spawn ramp)

    def to_json(self) -> dict[str, Any]:
        return {"load": self.load, "throughput_rps": round(self.throughput, 1),
                "p99_ms": None if self.p99_ms is None else round(self.p99_ms, 1), "errors": self.errors,
                "connection_limit_s": self.limit_seconds, "unanswered": self.unanswered}


def knee(mpm: str, section: dict[str, object], workload: Workload, cores: float,
         costs: CpuCosts | None = None, *, version: str | None = None, accept_defer: float = DEFER_ACCEPT,
         read_timeout: float | None = None) -> Knee:
    """Where the section stops keeping up (`accept_defer`, `read_timeout` as simulate takes them:
    how long a silent connection holds a worker)."""
    service = workload.service.mean
    workers = int(section["MaxRequestWorkers"])  # type: ignore[call-overload]
    keepalive = str(section.get("KeepAlive", "On")).lower() == "on"
    kat = float(section.get("KeepAliveTimeout", 5))  # type: ignore[arg-type]
    visits = workload.requests_per_connection if workload.keepalive else 1  # an open loop's requests a visitor
    # What the rest of the workload keeps: a silent connection holds a worker through the read
    # timeout once the kernel's defer lets it in, then comes back; an idle keep-alive client (the
    # crowd) keeps its connection, and on prefork and worker its worker, up to KeepAliveTimeout
    # and comes back at once.
    silent = 0.0
    if workload.silent:
        timeout = float(read_timeout if read_timeout is not None
                        else section.get("Timeout", DEFAULT_TIMEOUT))  # type: ignore[arg-type]
        start = ramp_seconds(mpm, section) + 1.0
        silent = workload.silent * _held_share(accept_defer, timeout, start, start + POINT_SECONDS)
    crowd = workload.crowd if keepalive else 0
    # Seconds a request's connection waits on the client between requests: a thinking client, a
    # visitor's gaps (over its requests) and a browser's idle connection after its last, the
    # turnaround. prefork's and worker's workers wait with it (up to KeepAliveTimeout); event
    # parks it, but it counts against the process's connection limit, ThreadsPerChild + idle
    # workers x AsyncRequestWorkerFactor: with B workers busy of W the processes hold
    # W (1 + F) - F B connections, so a request there costs (1 + F) x service
    # + the wait of that room (httpd 2.4.30-2.4.46 closes parked connections over the limit instead).
    waits = workload.keepalive and keepalive
    if not waits:
        wait = 0.0
    elif workload.clients:
        wait = min(workload.think, kat) + workload.turnaround
    else:  # a visitor's gaps, and a browser's connection left open after its last answer
        wait = ((visits - 1) * min(workload.gap, kat) + (kat if workload.holds_open else 0.0)) / visits
    factor = 0.0
    if mpm == "event":
        rules = rules_for(version)
        if rules.limit_closes_keepalive:
            wait, crowd = 0.0, 0
        raw = float(section.get("AsyncRequestWorkerFactor", 2))  # type: ignore[arg-type]
        factor = float(int(raw)) if rules.integer_factor else raw
    room = max(1.0 + factor, (workers - silent) * (1 + factor) - crowd)  # at least one worker's
    capacity = room / ((1 + factor) * service + wait)
    per_connection = visits if workload.rate else (
        float(section.get("MaxKeepAliveRequests", 100) or 1e9) if workload.keepalive else 1.0)  # type: ignore[arg-type]
    cpu = workload.cpu_fraction * service + (costs.mean(per_connection) if costs else 0.0)
    if cpu:
        capacity = min(capacity, cores / cpu)
    if not workload.clients:  # the axis counts visitors, each making `visits` requests
        return Knee("rate", capacity / visits, capacity)
    client = costs.client_request + costs.client_connection / per_connection if costs else 0.0
    if client:  # a closed loop's client reads that many responses a second at most (ClientThread)
        capacity = min(capacity, min(costs.client_threads, cores) / client)  # type: ignore[union-attr]
    # a client's round: its request, its pause, and with keep-alive the turnaround to the next
    cycle = service + workload.think + (workload.turnaround if workload.keepalive else 0.0)
    return Knee("clients", capacity * cycle, capacity)


def _held_share(defer: float, timeout: float, start: float, end: float) -> float:
    """The share of [start, end] that a silent connection opened at 0 holds a worker: from the
    defer to the timeout after it, then again after the next defer. The simulated ones open
    together, so with the kernel's 31 s defer none reaches a worker before a curve's point ends."""
    if timeout <= 0:  # Timeout 0: read, found empty and closed at once, holding no worker
        return 0.0
    period = defer + timeout

    def held_by(t: float) -> float:
        return (t // period) * timeout + max(0.0, t % period - defer)

    return (held_by(end) - held_by(start)) / (end - start)


def curve(mpm: str, section: dict[str, object], workload: Workload, the_knee: Knee, *, seconds: float,
          seed: int = 1, version: str | None = None, cores: int | None = None,
          costs: CpuCosts | None = None, accept_defer: float = DEFER_ACCEPT,
          read_timeout: float | None = None, worker_return: float = 0.0,
          client_first: float = 0.0, listener_wake: float = LISTENER_WAKE, accept_spacing: float = ACCEPT_SPACING,
          client_first_fade: float = 0.0, cpu_quota: float | None = None, cpu_period: float | None = None,
          autogroup: bool | None = None) -> list[CurvePoint]:
    """The workload at each load around the knee (the crowd, silent connections, think time and
    service as given; `accept_defer`, `read_timeout`, `worker_return`, `client_first`,
    `client_first_fade`, `listener_wake` and `accept_spacing` as simulate takes them)."""
    fractions = CLOSED_FRACTIONS if the_knee.axis == "clients" else OPEN_FRACTIONS
    if the_knee.axis == "clients":
        loads = sorted({float(max(1, round(the_knee.at * f))) for f in fractions})
    else:
        loads = [round(the_knee.at * f, 1) for f in fractions]
    return points_at(mpm, section, workload, the_knee.axis, loads, seconds=seconds, seed=seed, version=version,
                     cores=cores, costs=costs, accept_defer=accept_defer, read_timeout=read_timeout,
                     worker_return=worker_return, client_first=client_first, listener_wake=listener_wake,
                     accept_spacing=accept_spacing, client_first_fade=client_first_fade, cpu_quota=cpu_quota, cpu_period=cpu_period,
                     autogroup=autogroup)


def points_at(mpm: str, section: dict[str, object], workload: Workload, axis: str, loads: list[float], *,
              seconds: float, seed: int = 1, version: str | None = None, cores: int | None = None,
              costs: CpuCosts | None = None, accept_defer: float = DEFER_ACCEPT,
              read_timeout: float | None = None, worker_return: float = 0.0,
              client_first: float = 0.0, listener_wake: float = LISTENER_WAKE, accept_spacing: float = ACCEPT_SPACING,
              client_first_fade: float = 0.0, cpu_quota: float | None = None, cpu_period: float | None = None,
              autogroup: bool | None = None) -> list[CurvePoint]:
    """The workload with its clients (axis "clients") or rate set to each load in turn, each
    measured for up to POINT_SECONDS after the spawn ramp."""
    span = min(seconds, POINT_SECONDS)
    warmup = ramp_seconds(mpm, section) + 1.0
    points = []
    # a point is the load in steady state: ab's -n (requests) says how long a run lasts, not a load
    steady = dataclasses.replace(workload, requests=0)
    for load in loads:
        w = (dataclasses.replace(steady, clients=int(load)) if axis == "clients"
             else dataclasses.replace(steady, rate=load))
        r = simulate(mpm, section, w, warmup + span, warmup=warmup, seed=seed, version=version, cores=cores,
                     costs=costs, accept_defer=accept_defer, read_timeout=read_timeout, worker_return=worker_return,
                     client_first=client_first, listener_wake=listener_wake, accept_spacing=accept_spacing,
                     client_first_fade=client_first_fade, cpu_quota=cpu_quota, cpu_period=cpu_period,
                     autogroup=autogroup)
        points.append(_point(load, r, span))
    return points


def ramp_seconds(mpm: str, section: dict[str, object]) -> float:
    """How long the parent takes to grow the pool from StartServers to every process
    MaxRequestWorkers allows (mpm.spawn's ramp: 1, 2, 4 ... 32 a second): each point is measured
    after it, so that the curve shows the section at that load and not its start (a point's own
    start is what the main run shows)."""
    threads = 1 if mpm == "prefork" else int(section.get("ThreadsPerChild", 25))  # type: ignore[call-overload]
    full = -(-int(section["MaxRequestWorkers"]) // threads)  # type: ignore[call-overload]
    return float(spawn.ramp_seconds(int(section.get("StartServers", 1)), full))  # type: ignore[call-overload]


def _point(load: float, r: SimResult, seconds: float) -> CurvePoint:
    return CurvePoint(load, r.throughput, r.latency_ms.get("p99"), sum(r.errors.values()),
                      r.limit_seconds, r.left_out, seconds)
