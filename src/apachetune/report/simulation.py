"""A simulation (apachetune simulate) rendered for a terminal: one run, or the three MPMs side
by side."""

from __future__ import annotations

from rich.table import Table

from apachetune.console import out
from apachetune.mpm.versions import behaviour_changes, rules_for
from apachetune.simulate import SimResult
from apachetune.simulate.before_after import BeforeAfter
from apachetune.simulate.cpu import CFS_PERIOD_S
from apachetune.simulate.curve import CurvePoint, Knee
from apachetune.simulate.parent import CONNECTION_LIMIT_SECONDS

_SECTION_ORDER = ("StartServers", "MinSpareServers", "MaxSpareServers", "MinSpareThreads", "MaxSpareThreads",
                  "ServerLimit", "ThreadsPerChild", "MaxRequestWorkers", "AsyncRequestWorkerFactor",
                  "MaxConnectionsPerChild", "KeepAlive", "KeepAliveTimeout", "MaxKeepAliveRequests",
                  "ListenCoresBucketsRatio", "MaxMemFree")


def section_line(r: SimResult) -> str:
    return ", ".join(f"{k} {r.section[k]:g}" if isinstance(r.section[k], float) else f"{k} {r.section[k]}"
                     for k in _SECTION_ORDER if k in r.section) + f"; accept queue {r.accept_queue}"


def _under_load(r: SimResult) -> list[dict[str, float]]:
    """The timeline's samples from the load's start on (after an idle crowd formed)."""
    return [s for s in r.timeline if s["t"] >= r.load_start - 1e-9]


def _at_load(r: SimResult) -> str:
    """The processes when the load started, where an idle crowd formed first."""
    before = [s for s in r.timeline if s["t"] <= r.load_start + 1e-9]  # the last sample then is the pool's
    if not r.load_start or not before:
        return ""
    return (f"{int(before[-1]['processes'])} when the load started ({r.load_start:,.1f} s in: the idle crowd "
            "formed a client at a time), ")


def _forked(r: SimResult) -> str:
    """Children forked each second of the load, the first 12 (the sample at 0 is the start's)."""
    samples = _under_load(r)[0 if r.load_start else 1:]
    return ", ".join(str(int(s["forked"])) for s in samples[:12]) + (" ..." if len(samples) > 12 else "")


def rows(r: SimResult) -> list[tuple[str, str]]:
    """(what, value) lines of one run: the same in the single and the side-by-side view."""
    lat = r.latency_ms
    first, last = r.timeline[0], r.timeline[-1]
    out_rows = [
        ("throughput", f"{r.throughput:,.0f} req/s ({r.completed:,} requests)"),
        ("latency", "no request completed" if not lat else
         f"mean {lat['mean']:,.1f} ms, p50 {lat['p50']:,.1f}, p95 {lat['p95']:,.1f}, p99 {lat['p99']:,.1f}, "
         f"max {lat['max']:,.1f}"),
        *_as_wrk_prints(r),
        ("errors", ", ".join(f"{k} {v:,}" for k, v in sorted(r.errors.items())) or "none"),
        *_unanswered(r),
        ("processes", f"{int(first['processes'])} at start, " + _at_load(r) + f"{int(last['processes'])} at the end, "
                      f"{r.peak_processes} at most"),
        ("forked a second", _forked(r)),
    ]
    shown = {k: v for k, v in r.events.items() if k not in ("simulation events", "accepted")}
    if shown:
        out_rows.append(("events", ", ".join(f"{k} {v:,}" for k, v in sorted(shown.items()))))
    if r.recycled:
        low, high = min(r.recycled), max(r.recycled)
        took = f"{low:,}" if low == high else f"{low:,}-{high:,}"
        out_rows.append(("recycled", f"{len(r.recycled):,} processes stopped by MaxConnectionsPerChild, "
                                     f"after {took} connections each"))
    if r.crowd_latency_ms:
        out_rows.append(("crowd's requests", f"p50 {r.crowd_latency_ms['p50']:,.1f} ms, "
                                             f"p99 {r.crowd_latency_ms['p99']:,.1f} ms"))
    if r.cpu_utilisation is not None:
        queued = ("; httpd's threads queue for what the local client, in a session of its own (autogroup), "
                  "leaves them" if r.cpu_scheduler == "run queue" else "")
        out_rows.append(("CPU", f"{r.cpu_utilisation:.0%} of {cpus_of(r)} busy{queued}"))
    if r.costs:
        out_rows.append(("CPU a request", cost_line(r.costs)))
    if r.worker_return and r.mpm == "event":
        out_rows.append(("worker return", f"a worker idle again {r.worker_return * 1e6:g} us (mean, exponential) "
                                          "after its request"))
    if r.client_first and r.mpm == "event":
        fade = (f", fading to none as the keep-alive responses near {r.client_first_fade:,.0f} a second"
                if r.client_first_fade else "")
        assumed = (f"; assumed: a load generator on loopback, on processes of {r.section.get('ThreadsPerChild')} "
                   "threads" if r.turnaround_assumed and r.client_first_fade else "")
        out_rows.append(("client first", f"{r.client_first:.0%} of keep-alive requests in before their worker "
                                         f"is idle again{fade}{assumed}"))
    if (r.listener_wake or r.accept_spacing) and r.mpm == "event":
        out_rows.append(("listener", f"acts {r.listener_wake * 1e6:g} us after a worker goes idle; accepts "
                                     f"{r.accept_spacing * 1e6:g} us apart"))
    if r.ab is not None:
        ab = r.ab
        out_rows.append(("ab would print", f"Complete requests {ab['complete']:,}, Failed requests "
                         f"{ab['failed_length']:,} (Length: {ab['failed_length']:,}), Time taken "
                         f"{ab['time_taken_s']:,.3f} s, Requests per second {ab['requests_per_second']:,.1f}"
                         + _ab_table(ab)))
    if r.phases and (r.phases["throughput_rps"][0] != r.phases["throughput_rps"][1]
                     or r.phases["p99_ms"][0] != r.phases["p99_ms"][1]):
        low, high = r.phases["throughput_rps"]
        p99_low, p99_high = r.phases["p99_ms"]
        first, *_, last = r.phases["first_pass_s"]
        out_rows.append(("pool growth", f"{low:,.1f}-{high:,.1f} req/s, p99 {p99_low:,.1f}-{p99_high:,.1f} ms with "
                         f"the parent's first pass {first:g} s to {last:g} s after the load starts (its phase is "
                         f"chance; the figures above: {r.first_pass:g} s)"))
    if r.peak_memory_mib is not None:
        out_rows.append(("peak memory", f"{r.peak_memory_mib:,.1f} MiB (sampled once a second)"))
    else:  # a worker's memory is the application's: measured (apachetune size), never guessed
        out_rows.append(("peak memory", "--per-worker-mib M [--per-process-mib M] gives it (apachetune size "
                                        "measures them on a running httpd)"))
    return out_rows


def cost_line(c) -> str:
    """httpd's own CPU a request (and a local client's), with where the figures come from."""
    def pair(request: float, connection: float) -> str:
        return f"{request * 1e6:,.0f} µs" + (f" (+{connection * 1e6:,.0f} a new connection)" if connection else "")

    if c.span is not None and c.span[0][1:] != c.span[1][1:]:  # growing with the connections open
        (n0, r0, c0), (n1, r1, c1) = c.span
        line = f"httpd {pair(r0, c0)} at {n0:g} connections to {pair(r1, c1)} at {n1:g}"
    else:
        line = f"httpd {pair(c.request, c.connection)}"
    if c.pool is not None:
        (w0, p0), (w1, p1) = c.pool
        line += f"; a new connection {p0 * 1e6:,.0f} µs on {w0:g} workers to {p1 * 1e6:,.0f} on {w1:g}"
    if c.source:
        line += f" ({c.source})"
    if c.has_client:
        line += f", client {pair(c.client_request, c.client_connection)}"
        if c.client_threads:
            line += f" in {c.client_threads} thread{'s' if c.client_threads > 1 else ''}"
        if c.client_source:
            line += f" ({c.client_source})"
    return line


# Machines differ: a 2-core firecracker VM (AMD EPYC, kernel 6.18) measured httpd 1.7-2.3x the
# lab's figures a request and ab 1.6x (docs/benchmarks.md, "A second machine").
ASSUMED_CPU_NOTE = (
    "The CPUs set the throughput here ({busy:.0%} busy), and httpd's CPU a request is a lab machine's, not this one's: "
    "another 2-core VM took 1.7-2.3x as much (a static file under ab -k -c 100 on worker: 25,260 req/s "
    "simulated with the lab's figures, 15,300 with that machine's, 12,700-14,200 measured). "
    "`apachetune mpmd calibrate` measures this machine's (about 5 minutes; needs httpd and ab).")


def print_simulation(r: SimResult) -> None:
    out.print(f"{r.mpm}: {r.workload}")
    out.print(f"section: {section_line(r)}")
    if r.startup_messages:  # the section above is what httpd runs after these
        out.print("httpd changes the section at start-up (`lint` says where):")
        for line in r.startup_messages:
            out.print(f"  {line}", markup=False, highlight=False)
    counted = f", the first {r.warmup:g} s not counted" if r.warmup else ""
    if r.stopped_at is None:
        out.print(f"{r.seconds:g} s simulated{counted} in {r.wall_seconds:.2f} s")
    else:
        out.print(f"{r.stopped_at:g} s of the {r.seconds:g} asked simulated{counted} in {r.wall_seconds:.2f} s: "
                  "the event budget ran out (fewer clients or seconds finish); the numbers cover what ran")
    table = Table(show_header=False)
    table.add_column()
    table.add_column()
    for what, value in rows(r):
        table.add_row(what, value)
    out.print(table)
    cpu = "" if r.cpu_utilisation is not None else "CPU contention (--cpu-fraction, --httpd-cpu), "
    app = "the application's CPU (--cpu-fraction), " if r.costs and not r.workload_cpu else ""
    # a local client's thread shares the cores by processor sharing (or, under autogroup, takes a
    # core at once while httpd's threads queue: cpu.RunQueue); the kernel's time slices keep about
    # half the requests waiting in httpd's workers, which grows its pool (stock_sections_bench);
    # and on a static file worker's and event's threads block on their process's memory-map lock
    # (EnableMMAP), which the kernel's autogroup makes slow to pass on (docs/simulate.md, "What
    # most of it is"): a longer tail
    lock = ("on a static file with EnableMMAP On, httpd's default, worker's and event's threads block on their "
            "process's memory-map lock to map and unmap each file, and where the kernel's autogroup has queued "
            "httpd's threads on one core apart from the client's the lock passes on at that queue's pace (a "
            "blocked thread slept 41 ms at the median): 100 keep-alive clients of a 17-byte file had p99 39-54 ms, "
            "9.5-19 with EnableMMAP Off, 6-7 with kernel.sched_autogroup_enabled=0 as well")
    if r.cpu_scheduler == "run queue":
        local = (f"beside a local client, the memory-map lock ({lock}; the run queue gives the tail with "
                 "EnableMMAP Off, p99 about 4.6x the mean), ")
    else:
        local = ("the kernel's time slices beside a local client (httpd may keep more requests in its workers "
                 "and grow its pool further, and its tail is longer: ab on loopback against Debian's stock "
                 "sections had p95 1.1-6x and p99 1.3-14x the simulated, throughput within 15%, 35% on a noisier "
                 f"VM; {lock}; --autogroup models the kernel's queue), ")
    if not (r.costs and r.costs.has_client_threads):
        local = ""
    out.print(f"Not modelled: {cpu}{app}{local}the network (docs/simulate.md).")
    if r.assumed_cpu_binds:
        out.print(ASSUMED_CPU_NOTE.format(busy=r.cpu_utilisation))
    limited = r.events.get(CONNECTION_LIMIT_SECONDS, 0)
    if limited:
        out.print(f"event's connection limit bound for {limited:,} s (connections waited while processes over "
                  "ThreadsPerChild + idle workers x AsyncRequestWorkerFactor connections had workers idle): more "
                  "workers do not help; a larger AsyncRequestWorkerFactor does (apachetune size "
                  "--keepalive-clients N sizes it for N idle connections).")
    if r.fixed_think and r.mpm == "event" and (r.events.get("keep-alive closed, workers busy") or limited):
        out.print("A fixed pause (--think) keeps the simulated clients in step, where real ones drift out of it: "
                  "on event how many parked connections are closed then hangs on how the clients started "
                  "(--ramp-up) and on their timers (docs/simulate.md, \"Think time\"); --think exp:MEAN draws "
                  "each pause, as people and most load tools pause.")
    closed = r.events.get("keep-alive request closed, workers busy", 0)
    if r.mpm == "event" and closed and rules_for(r.httpd_version).two_idle_to_read:
        out.print(f"httpd {r.httpd_version} closes a parked keep-alive request when one worker is idle, not only "
                  f"when none is ({closed:,} closed here): its non-blocking get_worker needed two, until 2.4.30. "
                  "Builds of 2.4.27-2.4.29 closed 3-7 times as many as 2.4.30 and later under the same overload "
                  "(docs/simulate.md, \"event before 2.4.30\"); --versus 2.4.71 shows what an upgrade changes.")
    overload = ("More keep-alive clients than workers on event: how many requests it closes, and the tail, hang "
                "on microseconds: the client's turnaround (this run: ")
    if r.keepalive_overload and r.turnaround_assumed:
        first = (f"{r.client_first:.0%} of the responses, fading with the rate, assumed too" if r.client_first_fade
                 else f"{r.client_first:.0%} of the responses, as given")
        out.print(overload + f"{r.turnaround * 1e6:.0f} µs on average, assumed: a load generator on loopback on "
                  f"a 2-core VM) and whether it runs first on the worker's core (this run: {first}). For clients "
                  "on other machines give --turnaround (their round trip) and --client-first 0 (docs/simulate.md, "
                  "\"event's parked requests\").")
    elif r.keepalive_overload and not r.turnaround:
        # the worker's way back matters only with a turnaround to race it; 0 is right for clients
        # on other machines or cores (benchmarks/event_race_trace.py)
        out.print(overload + "none; --turnaround) and, if the client shares httpd's cores (a benchmark on "
                  "loopback), a worker's way back to idle: --client-first 0.13 (docs/simulate.md, \"event's "
                  "parked requests\" and \"event's listener\").")


def _ab_table(ab: dict) -> str:
    """ab's percentile lines, the ones people read (its table counts the failures too)."""
    table = ab.get("percentiles_ms") or {}
    if not table:
        return ""
    return "; served within (ms) " + ", ".join(f"{p}% {table[p]:,.0f}" for p in ("50", "95", "99", "100"))


def _unanswered(r: SimResult) -> list[tuple[str, str]]:
    """An open loop cut at its end with more than 1% of its requests still out: the slowest,
    which its percentiles leave out."""
    if not r.left_out:
        return []
    if r.clients:  # a closed loop's clients left waiting longer than the p99
        return [("not counted", f"{r.unanswered:,} of the {r.clients:,} clients still waiting at the end, longer "
                                f"than the p99 (up to {r.unanswered_longest:,.1f} s): --drain waits for them and "
                                "counts them")]
    return [("not counted", f"{r.unanswered:,} requests still waiting at the end (up to "
                            f"{r.unanswered_longest:,.1f} s), the slowest: --drain waits for them and counts them")]


def _as_wrk_prints(r: SimResult) -> list[tuple[str, str]]:
    """A closed loop whose long waits wrk would count again (its correction for coordinated
    omission): the latencies as wrk would print them, when its p95 or p99 differs by a tenth."""
    lat = r.latency_ms
    wrk = r.latency_as_wrk_ms() if r.clients and lat else {}
    late = r.wrk_timeouts if wrk else 0
    if not wrk or (not late and all(abs(wrk[q] - lat[q]) <= 0.1 * lat[q] for q in ("p95", "p99"))):
        return []
    slow = (f"; {late:,} responses slower than its --timeout ({r.wrk_timeout:g} s) are its \"timeout\" errors "
            "instead" if late else "")
    return [("as wrk prints it", f"mean {wrk['mean']:,.1f} ms, p50 {wrk['p50']:,.1f}, p95 {wrk['p95']:,.1f}, "
                                 f"p99 {wrk['p99']:,.1f}: wrk 4.x also counts each wait of two intervals "
                                 f"between a connection's requests or more at every interval below it{slow}")]


def print_comparison(results: list[SimResult]) -> None:
    out.print(f"workload: {results[0].workload}; {results[0].seconds:g} s simulated")
    table = Table()
    table.add_column("")
    by_version = len({r.httpd_version for r in results}) > 1  # --versus: the same MPM, two releases
    for r in results:
        table.add_column(f"{r.mpm} (httpd {r.httpd_version})" if by_version else r.mpm)
    per = [dict(rows(r)) for r in results]
    names = list(dict.fromkeys(k for p in per for k in p))
    for name in names:
        table.add_row(name, *(p.get(name, "") for p in per))
    out.print(table)
    for r in results:
        out.print(f"{r.mpm}: {section_line(r)}")
        for line in r.startup_messages:  # what httpd changed to get there
            out.print(f"  httpd at start-up: {line}", markup=False, highlight=False)
    if by_version:
        a, b = results[0], results[-1]
        changes = behaviour_changes(a.mpm, a.httpd_version, b.httpd_version)
        between = f"between httpd {a.httpd_version} and {b.httpd_version}, the model of {a.mpm}"
        out.print(f"{between} differs in:" if changes else f"{between} is the same: any difference above comes "
                  "from the section each makes of the configuration at start-up", markup=False, highlight=False)
        for line in changes:
            out.print(f"  {line}", markup=False, highlight=False)
    bound = [r for r in results if r.assumed_cpu_binds]
    if bound:  # the comparison may hang on the CPU figures: say so once, at the busiest
        out.print(ASSUMED_CPU_NOTE.format(busy=max(r.cpu_utilisation or 0.0 for r in bound)))


def print_curve(label: str, knee: Knee, points: list[CurvePoint]) -> None:
    """The load curve as a table, the rows past the knee, held at event's connection limit or
    leaving clients unanswered marked."""
    unit = "clients" if knee.axis == "clients" else "new clients/s"
    out.print(f"{label}: the load curve (predicted knee at {knee.at:,.0f} {unit}, {knee.capacity:,.0f} req/s)")
    table = Table()
    for name in (unit, "req/s", "p99 ms", "errors", ""):
        table.add_column(name, justify="right")
    for p in points:
        notes = ["past the knee"] if p.load > knee.at * 1.001 else []
        if p.limit_seconds:
            notes.append(f"connection limit {p.limit_seconds:,} of {p.seconds:g} s")
        if p.unanswered:
            notes.append(f"{p.unanswered:,} {'clients' if knee.axis == 'clients' else 'requests'} unanswered")
        table.add_row(f"{p.load:,.0f}" if knee.axis == "clients" else f"{p.load:,.1f}", f"{p.throughput:,.0f}",
                      "-" if p.p99_ms is None else f"{p.p99_ms:,.1f}", f"{p.errors:,}", "; ".join(notes))
    out.print(table)
    if any(p.limit_seconds for p in points):
        out.print("connection limit: seconds of the point's measurement that event's "
                  "connection limit held connections back while workers were idle, so such a point can serve "
                  "less than a heavier load that keeps every worker of a process busy, which makes the process "
                  "close its parked connections; a larger AsyncRequestWorkerFactor lifts the limit.")
    if any(p.unanswered for p in points):
        out.print("unanswered: still waiting at the end of the point's measurement, longer than its p99 (clients "
                  "queued behind others that hold every worker), or an open loop's backlog; its p99 leaves them "
                  "out.")


def cpus_of(r: SimResult) -> str:
    """The CPUs a run's requests shared: "2 cores", "a 0.5-CPU quota on 2 cores"."""
    period = "" if r.cpu_period in (None, CFS_PERIOD_S) else f" (a {r.cpu_period * 1000:g} ms period)"
    cores = f"{r.cores} core" + ("" if r.cores == 1 else "s")
    return f"a {r.cpu_quota:g}-CPU quota{period} on {cores}" if r.cpu_quota is not None else cores


def print_simulated_before_after(ba: BeforeAfter) -> None:
    """size --curve: the recommended section and the current one at each rate, side by side."""
    sides = ba.sides()
    on = f", on {cpus_of(sides[0].at_rate)}" if sides[0].at_rate.cpu_utilisation is not None else ""
    out.print(f"Simulated under the load sized for ({ba.workload.label()}){on}, each rate after the spawn ramp:")
    table = Table()
    table.add_column("visitors/s", justify="right", no_wrap=True)  # "25.0 (peak)" on one line
    for side in sides:
        for what in ("req/s", "p99 ms", "errors"):
            table.add_column(f"{side.label.split(' (')[0]}: {what}", justify="right")
    for n, point in enumerate(sides[0].points):
        row = [f"{point.load:,.1f}" + (" (peak)" if abs(point.load - ba.rate) < 0.05 else "")]
        for side in sides:
            p = side.points[n]
            row += [f"{p.throughput:,.0f}", "-" if p.p99_ms is None else f"{p.p99_ms:,.1f}", f"{p.errors:,}"]
        table.add_row(*row)
    out.print(table)
    for side in sides:
        lat = side.at_rate.latency_ms
        out.print(f"{side.label}: {side.mpm}, knee at {side.knee.at:,.1f} visitors/s ({side.knee.capacity:,.0f} "
                  "req/s); at the peak rate from "
                  f"its start (StartServers {side.section.get('StartServers', '-')}): p99 "
                  + ("-" if not lat else f"{lat['p99']:,.1f} ms") + f", {sum(side.at_rate.errors.values()):,} errors")
