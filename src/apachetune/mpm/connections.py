"""How many client connections httpd holds at once before new ones wait in the listen backlog.

prefork and worker: a connection holds its worker from accept to close, idle keep-alive time
included, so MaxRequestWorkers connections at most; one more idle keep-alive client and new
connections wait until some connection's KeepAliveTimeout runs out.

event (2.4.30 and later, connections_above_limit in event.c): a process stops accepting while
its open connections (lingering closes not counted) reach ThreadsPerChild + its idle workers x
the integer part of AsyncRequestWorkerFactor, and always when it has no idle worker
(measured on 2.4.71: the idle count is one short while a worker takes the new connection). Idle
keep-alive connections wait in the listener and hold no worker, but they do count against that
limit: a crowd of idle clients larger than it stalls new connections although every worker is
free (measured: 200 idle clients on 2 x 25 threads with factor 2 stalled for 13 s; factor 4 did not).
Clients arriving one at a time, each finding every worker idle, get up to processes x
(ThreadsPerChild + ThreadsPerChild x factor) in (150 there, 146 once the listener has been off):
the limit used here is the lower one, so the advice never leans on the difference.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from apachetune.mpm.versions import rules_for

# Idle clients are not spread evenly over the processes and come and go; the limit is kept
# this much above the expected crowd plus the busy connections.
CROWD_MARGIN = 1.25


def event_processes(max_request_workers: int, threads_per_child: int) -> int:
    """Processes event runs at most: MaxRequestWorkers / ThreadsPerChild (httpd's ap_daemons_limit)."""
    return max(1, int(max_request_workers) // max(1, int(threads_per_child)))


def connection_limit(mpm: str, values: Mapping[str, Any], busy: float = 0.0, version: str | None = None) -> int:
    """Connections the server accepts before new ones wait, with `busy` workers busy on average.

    `values` are the effective MPM values (after httpd's start-up adjustments); `version` the
    httpd modelled (before 2.4.30 event used the whole factor, in 1/16ths)."""
    mrw = int(values["MaxRequestWorkers"])
    if mpm != "event":
        return mrw
    tpc = int(values["ThreadsPerChild"])
    factor = float(values.get("AsyncRequestWorkerFactor", 2))
    processes = event_processes(mrw, tpc)
    busy_each = min(float(tpc), busy / processes)
    if busy_each >= tpc:
        return int(busy)  # no idle worker anywhere: nothing more is accepted
    # One idle worker fewer than the idle count: the limit is met while a worker takes the
    # connection just accepted (measured on 2.4.71: 2 x 25 threads, factor 2 held 146, not 150).
    idle = max(0.0, tpc - 1 - busy_each)
    if rules_for(version).integer_factor:
        extra = idle * math.floor(factor)
    else:  # idle x worker_factor / WORKER_FACTOR_SCALE in integers (event.c before 2.4.30)
        extra = math.floor(idle * max(1, int(factor * 16)) / 16)
    return math.floor(processes * (tpc + extra))


def factor_for_crowd(crowd: float, busy: float, max_request_workers: int, threads_per_child: int,
                     margin: float = CROWD_MARGIN) -> int | None:
    """The smallest integer AsyncRequestWorkerFactor whose connection limit holds `crowd` idle
    clients plus the busy ones, with `margin`; None when the busy workers leave no idle one."""
    processes = event_processes(max_request_workers, threads_per_child)
    tpc = max(1, int(threads_per_child))
    busy_each = busy / processes
    if busy_each >= tpc - 1:
        return None
    needed = margin * (crowd + busy)  # connections the server must accept
    factor = max(1, math.ceil((needed / processes - tpc) / max(1.0, tpc - 1 - busy_each)))
    section = {"MaxRequestWorkers": processes * tpc, "ThreadsPerChild": tpc}
    while connection_limit("event", {**section, "AsyncRequestWorkerFactor": factor}, busy) < needed:
        factor += 1  # the limit is a whole number of connections
    return factor


def stall(mpm: str, values: Mapping[str, Any], crowd: float, busy: float = 0.0, version: str | None = None) -> str | None:
    """Why `crowd` idle keep-alive clients (plus `busy` busy workers) stall new connections on
    this section, or None when they do not."""
    if crowd <= 0:
        return None
    limit = connection_limit(mpm, values, busy, version)
    if crowd + busy < limit:
        return None
    if mpm == "event":
        # 2.4.30-2.4.46 made room by closing the process's idle keep-alive connections instead
        then = ("and each new connection makes the process close all its idle keep-alive ones "
                f"(httpd {version}, as 2.4.30-2.4.46 do): their clients must connect again, and new "
                "connections can still wait until the keep-alive deadline the listener had set when those clients "
                "keep their side open"
                if rules_for(version).limit_closes_keepalive else "and new connections wait")
        return (f"event accepts about {limit} connections here (ThreadsPerChild "
                f"{values['ThreadsPerChild']} + idle workers x AsyncRequestWorkerFactor "
                f"{float(values.get('AsyncRequestWorkerFactor', 2)):g} per process, "
                f"{event_processes(int(values['MaxRequestWorkers']), int(values['ThreadsPerChild']))} "
                f"processes): {crowd:g} idle keep-alive clients fill it {then}")
    what = "process" if mpm == "prefork" else "thread"
    return (f"each of {crowd:g} idle keep-alive clients holds a {what} until KeepAliveTimeout; "
            f"MaxRequestWorkers {limit} leaves no worker for new connections")
