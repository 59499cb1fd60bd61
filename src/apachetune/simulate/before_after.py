"""The recommended section against the current one, simulated under the workload `size` sized
for (apachetune size --curve / --plot): throughput and p99 at half the stated peak rate up to
three times it, so that the operator sees what the change buys before deploying it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from apachetune.simulate.curve import CurvePoint, Knee, knee, points_at
from apachetune.simulate.parent import MIDDLE_FIRST_PASS
from apachetune.simulate.run import SimResult, simulate
from apachetune.simulate.workload import ServiceTime, Workload

if TYPE_CHECKING:
    from collections.abc import Callable

    from apachetune.config.resolver import ResolveOptions
    from apachetune.sizing.session import SizingSession

RATE_FACTORS = (0.5, 1.0, 1.5, 2.0, 3.0)  # of the stated peak rate
SECONDS = 10.0


@dataclass
class Side:
    label: str
    mpm: str
    section: dict[str, object]
    at_rate: SimResult  # the stated peak rate, from the section's start (its spawn ramp included)
    points: list[CurvePoint]
    knee: Knee


@dataclass
class BeforeAfter:
    workload: Workload
    rate: float
    after: Side
    before: Side | None

    def sides(self) -> list[Side]:
        return [self.after] + ([self.before] if self.before is not None else [])

    def to_json(self) -> dict[str, Any]:
        return {"workload": self.workload.label(), "new_connections_a_second": self.rate, **{
            side.label.split()[0]: {"mpm": side.mpm, "section": side.section,
                                    "knee_rps": round(side.knee.capacity, 1),
                                    "knee_new_connections_a_second": round(side.knee.at, 2),
                                    # the CPUs the requests shared (None: the CPUs never bind)
                                    "cores": side.at_rate.cores, "cpu_quota": side.at_rate.cpu_quota,
                                    "cpu_period_ms": None if side.at_rate.cpu_period is None
                                    else round(side.at_rate.cpu_period * 1000, 3),
                                    "points": [p.to_json() for p in side.points],
                                    "at_rate_from_start": {"throughput_rps": round(side.at_rate.throughput, 1),
                                                           "latency_ms": side.at_rate.latency_ms,
                                                           "errors": side.at_rate.errors}}
            for side in self.sides()}}


def _number(fig: Any) -> float | None:
    return float(fig.value) if isinstance(fig.value, (int, float)) and not isinstance(fig.value, bool) else None


def workload_of(session: SizingSession) -> Workload | None:
    """The open loop the sizing assumed: visitors at rate / requests a connection, each making
    its requests `gap` apart on one connection (keep-alive as configured) and leaving it open
    after the last until the server closes it (model.idle_keepalive_clients), exponential service
    (Erlang C's assumption), the CPU part when the CPU time a request is known. None without a
    rate: there is no load to simulate."""
    i = session.inputs
    rate, service = _number(i.rate), _number(i.service_time)
    if not rate or not service:
        return None
    keepalive = str(i.keepalive.value).lower() == "on"
    per_connection = max(1, int(_number(i.requests_per_connection) or 1)) if keepalive else 1
    cpu_seconds = _number(i.cpu_seconds)
    cpu = cpu_seconds / service if cpu_seconds and _number(i.cpus) else 0.0
    # visitors making several requests are browsers, which leave a connection open after their
    # last until KeepAliveTimeout, as the sizing's count of idle keep-alive connections has it
    # (model.idle_keepalive_clients; a request a connection: none)
    return Workload(ServiceTime("exp", service), rate=rate / per_connection, keepalive=keepalive,
                    requests_per_connection=per_connection, gap=_number(i.gap) or 0.0,
                    holds_open=keepalive and per_connection > 1, cpu_fraction=min(1.0, cpu))


def before_after(session: SizingSession, seed: int = 1,
                 read_as: Callable[[str], ResolveOptions | None] | None = None) -> BeforeAfter | None:
    """None without a rate. `before` is the configuration's own MPM and section (httpd's
    defaults for the recommended MPM without a file); None when httpd would not start with it.
    `read_as(mpm)`: how to read the file for that MPM (default: as size read it)."""
    from apachetune.errors import UsageError
    from apachetune.validate.section import load_directives

    workload = workload_of(session)
    if workload is None:
        return None
    rec, i = session.recommendation, session.inputs
    version = str(i.httpd_version.value) if i.httpd_version.value else None  # the release size modelled
    keep = {"KeepAlive": str(i.keepalive.value), "KeepAliveTimeout": _number(i.keepalive_timeout) or 5,
            "MaxKeepAliveRequests": _number(i.max_keepalive_requests) or 100}
    file = session.request.file
    current_mpm = (session.eff.mpm if session.eff is not None and session.eff.mpm else None) or rec.mpm
    read = read_as or (lambda mpm: session.request.resolve)  # the tree read as size read it (-d, -D, ...)
    try:
        after = {**load_directives(file, rec.mpm, listen_backlog=True, version=version, context=read(rec.mpm)),
                 **rec.values(), **keep}
    except UsageError:  # httpd would not start with the file (a typo, said by size): the defaults under it
        after = {**load_directives(None, rec.mpm, listen_backlog=True, version=version), **rec.values(), **keep}
    try:
        before: dict[str, object] | None = {**load_directives(file, current_mpm, listen_backlog=True, version=version,
                                                              context=read(current_mpm)), **keep}
    except UsageError:
        before = None
    # a CPU figure below the cores the threads run on (the machine's, read with its quota; else
    # the figure rounded up: 0.25, 1.5) is a cgroup's quota, throttled a period at a time
    cpus, runs_on = _number(i.cpus), _number(i.cpu_runs_on)
    cores = max(1, int(runs_on) if runs_on else math.ceil(cpus)) if cpus else None
    quota = cpus if cpus and cores and cpus < cores else None
    period = _number(i.cpu_period) if quota else None
    sides = [_side("after (recommended)", rec.mpm, after, workload, cores, quota, period, seed, version)]
    if before is not None:
        sides.append(_side(f"before (current, {current_mpm})", current_mpm, before, workload, cores, quota,
                           period, seed, version))
    return BeforeAfter(workload, workload.rate, sides[0], sides[1] if len(sides) > 1 else None)


def _side(label: str, mpm: str, section: dict[str, object], workload: Workload, cores: int | None,
          quota: float | None, period: float | None, seed: int, version: str | None = None) -> Side:
    k = knee(mpm, section, workload, quota or cores or 1, version=version)
    points = points_at(mpm, section, workload, "rate", [round(workload.rate * f, 1) for f in RATE_FACTORS],
                       seconds=SECONDS, seed=seed, version=version, cores=cores, cpu_quota=quota, cpu_period=period)
    # from the section's start, the parent's first pass at the middle of its chance, as simulate's CLI
    start = simulate(mpm, section, workload, SECONDS, seed=seed, version=version, cores=cores, cpu_quota=quota,
                     cpu_period=period, first_pass=MIDDLE_FIRST_PASS)
    return Side(label, mpm, section, start, points, k)
