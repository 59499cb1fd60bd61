"""`apachetune simulate`: a configuration's MPM section under a workload, in simulated time."""

from __future__ import annotations

import json

import click

from apachetune.cli.options import MPM_CHOICE, tree_context, tree_options
from apachetune.cli.params import Finite


class Seconds(click.ParamType):
    """A duration: 50ms, 0.2s, 2 (seconds)."""

    name = "duration"

    def convert(self, value, param, ctx):
        if isinstance(value, (int, float)):
            return float(value)
        from apachetune.errors import UsageError
        from apachetune.simulate.workload import parse_seconds

        try:
            return parse_seconds(str(value), param.opts[0] if param else "duration")
        except UsageError as e:
            self.fail(e.message, param, ctx)


class Draw(click.ParamType):
    """30us (each exactly that), exp:160us or lognormal:125us:0.4 (each a draw): a turnaround or
    a think time."""

    name = "duration"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        from apachetune.errors import UsageError
        from apachetune.simulate.workload import parse_draw

        try:
            return parse_draw(str(value), param.opts[0] if param else "duration")
        except UsageError as e:
            self.fail(e.message, param, ctx)


@click.command("simulate")
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False))
@click.option("--mpm", type=MPM_CHOICE, help="The MPM [default: the one FILE loads, else event].")
@click.option("--max-request-workers", type=Finite(1, 200000, integer=True))
@click.option("--threads-per-child", type=Finite(1, 256, integer=True))
@click.option("--keepalive-timeout", type=Finite(1, 300, integer=True))
@click.option("--clients", type=Finite(0, 100000, integer=True), default=0,
              help="Closed loop: clients each sending its next request after a response (ab -c, wrk -c).")
@click.option("--rate", type=Finite(0, 1e6), default=0, help="Open loop: new visitors a second (Poisson).")
@click.option("--keepalive/--no-keepalive", default=True, show_default=True,
              help="Clients keep their connection open (ab -k) or open one per request.")
@click.option("--think", type=Draw(), default="0",
              help="Closed loop: pause after each response; exp:200ms or lognormal:200ms:0.5: each a draw "
                   "(people and most load tools pause at random; a fixed pause keeps clients in step).")
@click.option("--naive-reuse", is_flag=True,
              help="Closed loop: the client writes its next request into a keep-alive connection the server "
                   "closed while it paused (KeepAliveTimeout, event closing parked connections), unchecked, and "
                   "loses it: an error (raw sockets, asyncio, JMeter without its stale check). Default: it "
                   "notices and opens a new connection (browsers, curl, requests, Go).")
@click.option("--ramp-up", type=Seconds(), default="0",
              help="Closed loop: start the clients evenly over this long (JMeter's ramp-up, Locust's spawn "
                   "rate; 0: all at once, as ab and wrk). With a fixed --think the start decides whether "
                   "event's closes of parked connections die out.")
@click.option("--turnaround", type=Draw(),
              help="Closed loop: from a response to the next request on that connection reaching the server "
                   "(the client's read and write; across a network, its round trip too); lognormal:122us:0.41: "
                   "each a draw (wrk on loopback, measured on a 2-core AMD EPYC). On event a keep-alive "
                   "connection is parked that long, and may be closed. [default with keep-alive: ab's on "
                   "loopback, lognormal:64us:0.95, with --requests, else wrk's, lognormal:72us:0.52 (both "
                   "timed on the wire on a 2-core Intel VM); 0: an instant client]")
@click.option("--worker-return", type=Seconds(), default="0",
              help="event: a worker done with a request counts as idle again this long after it (the mean of "
                   "an exponential draw; it first finishes the request and puts the connection back in the "
                   "listener's pollset: 35-75us of CPU with mod_lua, 10-40 for a small file). A request that "
                   "comes back on its connection sooner, every other worker of its process busy, is closed "
                   "unread. It comes back sooner when the client runs on the worker's core and preempts it, so "
                   "0 (the default) is right for clients on other machines or cores of their own; for a client "
                   "sharing httpd's cores on loopback, 45us fitted wrk on processes of 5 threads, 25us on "
                   "processes of 25; --client-first fits all of them with one share (docs/simulate.md; "
                   "benchmarks/event_race_trace.py traces it).")
@click.option("--client-first", type=Finite(0, 1), default=None,
              help="event: the share (0-1) of keep-alive responses whose next request is in before their "
                   "worker is idle again, whatever the turnaround: a client on the same machine, woken by the "
                   "response on the worker's core, runs first. Traced with perf on a 2-core machine, wrk "
                   "preempted the worker after 36-44% of the responses at 200-1,000 req/s and 19% at 1,900; "
                   "0.1-0.13 fitted its closes and p99 from 200 to 1,900 req/s, however fast wrk answered. "
                   "Default: with the assumed turnaround (a load generator on loopback: no --turnaround) 0.13 "
                   "on processes of 25 threads or more, x (25 / ThreadsPerChild)^0.35 on smaller ones (0.19 "
                   "at 8), fading to 0 as the keep-alive responses near 12,000 a second (fitted to ab and wrk on a "
                   "2-core VM); else 0, for clients on other machines or cores (docs/simulate.md; "
                   "benchmarks/event_race_trace.py).")
@click.option("--autogroup/--no-autogroup", default=None,
              help="A local load generator (ab, wrk) runs in a session of its own and the kernel's autogroup "
                   "gives it a core's share at once: httpd's threads queue for the rest and are served in what "
                   "is, for the requests, random order, which makes the tail (100 keep-alive clients of a small "
                   "file on 2 cores: p99 about 4.6x the mean, measured 9.5-18 ms at a p50 of 2.5-3). "
                   "--no-autogroup: the client shares the cores alike (processor sharing), as with "
                   "kernel.sched_autogroup_enabled=0 or a client in httpd's session. Default: as this machine's "
                   "kernel.sched_autogroup_enabled says.")
@click.option("--listener-wake", type=Seconds(), default="150us", show_default=True,
              help="event: a listener that disabled its listen sockets (every worker busy) acts this long after "
                   "a worker goes idle and wakes it, on what it finds then: a parked request that came "
                   "meanwhile has the worker. The default fitted httpd 2.4.71 under wrk and ab on loopback on "
                   "a 2-core VM (docs/simulate.md, \"event's listener\"); 0: at once.")
@click.option("--accept-spacing", type=Seconds(), default="100us", show_default=True,
              help="event: connections the listener accepts back to back reach their workers this far apart "
                   "(an accept, a hand-off, a thread's wake-up each; 100-150us measured on a 2-core VM). 0: "
                   "together.")
@click.option("--fin-after", type=Seconds(), default="0",
              help="A client keeps its side of a connection the server ended (Connection: close) open this "
                   "long (0: closes at once, as ab and wrk). httpd lingers up to 2 s for it: a worker each on "
                   "prefork and worker.")
@click.option("--requests", "ab_requests", type=Finite(1, 10_000_000, integer=True), default=None,
              help="Closed loop: stop after N requests, counted as ab -n counts them (a request lost on a "
                   "closed keep-alive connection is done and a Length failure); prints ab's summary.")
@click.option("--requests-per-connection", type=Finite(1, 100000, integer=True), default=1, show_default=True,
              help="Open loop: requests a visitor makes on its connection.")
@click.option("--gap", type=Seconds(), default="0", help="Open loop: pause between a visitor's requests.")
@click.option("--hold-open", is_flag=True,
              help="Open loop: after its last answer a visitor leaves its connection open until the server "
                   "closes it (KeepAliveTimeout), as browsers do: a worker each meanwhile on prefork and worker, "
                   "room at event's connection limit. Default: it hangs up at once.")
@click.option("--crowd", type=Finite(0, 100000, integer=True), default=0,
              help="Idle keep-alive clients holding connections open (one request each, then idle).")
@click.option("--silent", type=Finite(0, 100000, integer=True), default=0,
              help="Connections that never send a request (unused preconnections, slowloris): each is "
                   "opened again when the server closes it. On Linux the default AcceptFilter keeps them "
                   "from httpd 31 s; accepted, each holds a worker until mod_reqtimeout's header timeout "
                   "or Timeout (from FILE).")
@click.option("--service", default="50ms", show_default=True,
              help="Time a request takes on the server: 50ms, exp:50ms or lognormal:50ms[:sigma]. A set "
                   "length varies by 0.1% from one request to the next, as on a real server (requests of "
                   "exactly one length finish in lock-step).")
@click.option("--documents", metavar="surge|FILE",
              help="Static documents: each request asks one (by its share of the requests) and takes --service "
                   "plus --per-kib for each KiB of it. `surge`: validate's SURGE set (heavy-tailed sizes, Zipf "
                   "popularity); FILE: a document a line, its size in bytes and optionally its share.")
@click.option("--per-kib", type=Seconds(), default="0",
              help="With --documents: the time each KiB of a document adds to its request (the copy to the client).")
@click.option("--access-log", type=click.Path(dir_okay=False),
              help="Replay this access log (each request when %t says, for the time %D or %T logged); "
                   "with --clients or --rate, draw the service times from the log's instead.")
@click.option("--log-format", default="combined", show_default=True,
              help="The access log's LogFormat: a nickname (common, combined, vhost_combined) or the format "
                   "string; %D or %T gives each request's time.")
@click.option("--speed", type=Finite(0.01, 1000), default=1, show_default=True,
              help="Replay the access log this many times faster (2: the same traffic, twice as dense).")
@click.option("--cpu-fraction", type=Finite(0, 1), default=0, show_default=True,
              help="Share of the service time spent on CPU, shared over --cores (0: CPUs never limit).")
@click.option("--cores", type=Finite(1, 4096, integer=True), default=None,
              help="CPUs the server has, for --cpu-fraction [default: this machine's, as its cgroup and CPU affinity allow].")
@click.option("--cpu-quota", type=Finite(0.01, 4096), default=None,
              help="CPU time a second the server's cgroup allows, when less than its cores (docker --cpus 0.5, "
                   "CPUQuota=50%): shared by all its threads [default: this machine's quota, without --cores].")
@click.option("--cpu-period-ms", "cpu_period_ms", type=Finite(1, 1000), default=None,
              help="The quota's CFS period (cpu.max's second field, cpu.cfs_period_us; Kubernetes' "
                   "--cpu-cfs-quota-period): a throttled cgroup waits out the rest of it [default: this machine's "
                   "with its quota, else the kernel's 100 ms].")
@click.option("--httpd-cpu", default="machine", show_default=True,
              help="httpd's own CPU a request, shared over the cores with --cpu-fraction's: machine (measured "
                   "here by `apachetune mpmd calibrate`, else a lab machine's), 0 (not modelled), or a request's "
                   "and what a new connection adds, e.g. 55us,60us.")
@click.option("--client-cpu", default=None,
              help="The load generator's CPU a request when it runs on the server's machine (ab or wrk on "
                   "loopback), shared with httpd's: 0 (clients elsewhere), ab, wrk, or e.g. 21us,45us. A closed "
                   "loop's client spends it in its own threads, one response at a time. Default: for a closed "
                   "loop (--clients) without --turnaround, the load generator assumed on loopback (ab's with "
                   "--requests, else wrk's; a static file's throughput is otherwise up to twice httpd's, "
                   "docs/simulate.md); else 0.")
@click.option("--client-threads", type=click.IntRange(1, 1024), default=None,
              help="With --client-cpu: the load generator's threads (wrk -t) [default: ab 1, wrk 2, else 1].")
@click.option("--timeout", type=Seconds(), default="30", help="A client gives up on a request after this.")
@click.option("--syn-schedule", default="machine", show_default=True,
              help="When the clients' kernel sends a dropped SYN again: machine (this kernel's settings), "
                   "linux (1 s doubling, before 6.5), linux-6.5 (1 s five times, then doubling), rfc1122 "
                   "(3 s doubling, before 2011), or the seconds between retransmissions, e.g. 1,2,4,8.")
@click.option("--seconds", type=Finite(0.1, 3600), default=None,
              help="Simulated time [default: 30; a replay: the whole log, or its first SECONDS].")
@click.option("--warmup", type=Finite(0, 3600), default=0, show_default=True,
              help="Simulated seconds not counted in throughput and latency.")
@click.option("--seed", type=Finite(0, 2**31, integer=True), default=1, show_default=True)
@click.option("--first-pass", type=Seconds(), default=None,
              help="from the load's start to the parent's first maintenance pass (then one a second), which "
                   "grows the pool: a server started before its load meets it at a phase that is chance, and "
                   "the report's \"pool growth\" row gives the range. Default: its middle, 0.5s.")
@click.option("--per-worker-mib", type=Finite(0, 1e6), help="Memory a worker holds (from `size`), for the peak.")
@click.option("--wrk-timeout", type=Seconds(), default="2s", show_default=True,
              help="The latencies \"as wrk prints it\": wrk's --timeout (its default, 2 s); slower responses are "
                   "its \"timeout\" errors instead.")
@click.option("--facts", "facts_path", type=click.Path(exists=True, dir_okay=False),
              help="A measurement saved by `apachetune size --save-facts`: its httpd's memory a worker and a "
                   "process give the peak memory of the MPM it measured (--per-worker-mib overrides it).")
@click.option("--per-process-mib", type=Finite(0, 1e6), default=0, show_default=True,
              help="Memory a worker/event process holds besides its threads.")
@click.option("--httpd-version", metavar="X.Y.Z", default=None,
              help="The httpd 2.4.x to model: its start-up checks and event's connection limit "
                   "[default: the installed httpd's, else 2.4.71].")
@click.option("--versus", metavar="X.Y.Z", default=None,
              help="The same section and workload on another httpd version, side by side.")
@click.option("--compare", is_flag=True, help="The same workload on prefork, worker and event (httpd's "
              "default section for each, or FILE's with the options above).")
@click.option("--curve", is_flag=True,
              help="Also simulate the workload from a quarter of the predicted knee to twice it (clients for a "
                   "closed loop, new visitors a second for an open one) and show throughput and p99 at each load, "
                   "marking the points past the knee and those event's connection limit held back.")
@click.option("--plot", "plot_dir", type=click.Path(file_okay=False),
              help="Write curve.png (throughput and p99 against the load, the knee marked) and processes.png "
                   "to this directory; implies --curve; needs matplotlib (the plots extra).")
@click.option("--graceful-at", "graceful_at", type=Finite(0, 3600), multiple=True,
              help="Restart gracefully (apachectl graceful) this many seconds into the load (repeatable).")
@click.option("--drain", is_flag=True,
              help="After --seconds no client sends a new request and no visitor comes, and the run goes on "
                   "until every request sent is answered or given up: all of them counted, throughput to the "
                   "last answer (a load client that waits for its last requests; without it an overloaded "
                   "open loop's slowest requests, still waiting at the end, are not in its percentiles; a replay and --requests always wait).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@tree_options
def command(file, mpm, max_request_workers, threads_per_child, keepalive_timeout, clients, rate, keepalive, think,
            naive_reuse, ramp_up, turnaround, worker_return, client_first, autogroup, listener_wake, accept_spacing, fin_after, ab_requests, requests_per_connection, gap, hold_open, crowd, silent, service, documents, per_kib, access_log, log_format, speed, cpu_fraction, cores, cpu_quota, cpu_period_ms, httpd_cpu,
            client_cpu, client_threads, timeout, syn_schedule, seconds, warmup, seed, first_pass, per_worker_mib, facts_path,
            wrk_timeout,
            per_process_mib, httpd_version, versus, compare, curve, plot_dir, graceful_at, drain, fmt,
            server_root, defines, modules, env_file, sysroot):
    """Predict what an MPM section does under a workload: throughput, latency percentiles,
    errors, processes over time and peak memory, from a model of httpd's MPMs in simulated time
    (seconds of real time for minutes of load)."""
    from apachetune.errors import UsageError
    from apachetune.generate.switch import read_as_switched
    from apachetune.report.plots import prepare_plot_dir
    from apachetune.simulate import simulate
    from apachetune.simulate.syn import SynSchedule
    from apachetune.simulate.workload import ServiceTime, Workload
    from apachetune.validate.section import load_directives, read_server, silent_connection_timeouts

    prepare_plot_dir(plot_dir)
    service_time = _documents(ServiceTime.parse(service), documents, per_kib, access_log)
    replay: tuple[tuple[float, float | None], ...] = ()
    source = ""
    if speed != 1 and (not access_log or clients or rate):
        raise UsageError("--speed replays an --access-log faster; there is none to replay")
    if access_log:
        service_time, replay, source = _from_log(access_log, log_format, speed, service_time, bool(clients or rate),
                                                 seconds)
        if replay and (curve or plot_dir):
            raise UsageError("--curve and --plot vary --clients or --rate; a replay has neither (try --speed)")
    turnaround_given = turnaround is not None
    turnaround, assumed = _turnaround(turnaround, bool(clients and keepalive), bool(ab_requests))
    workload = Workload(service_time, clients=clients, rate=rate, keepalive=keepalive, think=think[0], think_draw=think[1],
                        naive_reuse=naive_reuse, ramp_up=ramp_up,
                        requests_per_connection=requests_per_connection, gap=gap, holds_open=hold_open, crowd=crowd,
                        silent=silent, timeout=timeout,
                        cpu_fraction=cpu_fraction, replay=replay, replay_source=source,
                        syn=SynSchedule.parse(syn_schedule), turnaround=turnaround[0],
                        turnaround_draw=turnaround[1], requests=ab_requests or 0,
                        fin_after=fin_after)
    seconds = _run_seconds(workload, seconds)
    if warmup >= seconds:
        raise UsageError("--warmup must be shorter than --seconds")
    if first_pass is None:
        from apachetune.simulate.parent import MIDDLE_FIRST_PASS

        first_pass = MIDDLE_FIRST_PASS
    if not 0 < first_pass <= 1:
        raise UsageError("--first-pass: the parent's passes are a second apart: give 1s or less, above 0")
    period = _cpu_period(cpu_period_ms, cpu_quota, cores)
    version = _versions(httpd_version, versus, compare)
    context = tree_context(server_root, defines, modules, env_file, sysroot)
    mpms = ["prefork", "worker", "event"] if compare else [mpm or _mpm_of(file, context)]
    runs = [(m, version) for m in mpms] + ([(mpms[0], versus)] if versus else [])
    memory = _memory(per_worker_mib, per_process_mib, facts_path, mpms)
    client, threads, client_source = _client(client_cpu, client_threads, bool(clients),
                                             _assumed_client(clients, turnaround_given, ab_requests, httpd_cpu))
    results = []
    # the server-wide settings (a silent connection's timeouts, EnableMMAP) do not depend on the
    # MPM simulated: the tree is read for them once a version
    servers = {v: read_server(file, v, context) for _, v in runs}
    for m, v in runs:
        said: list[str] = []  # httpd's start-up warnings about the section (it runs the corrected one)
        section = load_directives(file, m, max_request_workers, threads_per_child, keepalive_timeout,
                                  listen_backlog=True, version=v, cores=cores, keep_server_limit=True,
                                  startup_messages=said,
                                  context=read_as_switched(file, context, m, v) if file else context)
        defer, read_timeout = silent_connection_timeouts(servers[v]) if silent else (0.0, None)
        share, fade = _client_first(client_first, assumed and m == "event", int(section.get("ThreadsPerChild", 1)))

        def run(first_pass: float = first_pass, m=m, v=v, section=section, defer=defer, read_timeout=read_timeout,
                share=share, fade=fade):
            return simulate(m, section, workload, seconds, warmup=warmup, seed=seed, memory=memory.get(m), version=v,
                            cores=cores, graceful_at=tuple(graceful_at), costs=_costs(m, httpd_cpu, client, threads, client_source, servers[v]),
                            accept_defer=defer, read_timeout=read_timeout, worker_return=worker_return,
                            client_first=share, client_first_fade=fade,
                            listener_wake=listener_wake, accept_spacing=accept_spacing,
                            cpu_quota=cpu_quota, cpu_period=period, drain=drain, first_pass=first_pass,
                            autogroup=autogroup)

        results.append(run())
        results[-1].wrk_timeout = wrk_timeout or None
        results[-1].startup_messages = said
        results[-1].turnaround_assumed = assumed
    several = compare or versus
    _phases(results, run, graceful_at, replay)  # (one run: `run` is its)
    curves = _curves(results, workload, seconds, seed, cores, cpu_quota, period, bool(versus)) if curve or plot_dir else []
    written = []
    if plot_dir:
        from apachetune.report.plots import write_simulation_plots

        written = write_simulation_plots(plot_dir, [(label, r, points, k) for label, r, k, points in curves])
    if fmt == "json":
        doc = [r.to_json() for r in results]
        for d, (_, _, knee, points) in zip(doc, curves, strict=False):  # no curves: none
            d["curve"] = {"axis": knee.axis, "knee": round(knee.at, 1), "capacity_rps": round(knee.capacity, 1),
                          "points": [p.to_json() for p in points]}
        click.echo(json.dumps(doc if several else doc[0], indent=2))
        return
    from apachetune.report.simulation import print_comparison, print_curve, print_simulation

    if several:
        print_comparison(results)
    else:
        print_simulation(results[0])
    for label, _, knee, points in curves:
        print_curve(label, knee, points)
    for path in written:
        click.echo(f"wrote {path}")


def _memory(per_worker_mib, per_process_mib, facts_path, mpms: list[str]) -> dict:
    """MPM -> (MiB a process, MiB a worker) for the peak: as given (every MPM), else from a facts
    file's httpd (the MPM it measured: a prefork child's memory is no thread's)."""
    from apachetune.errors import UsageError
    from apachetune.sizing.facts import HostFacts

    if per_worker_mib is not None:
        return dict.fromkeys(mpms, (per_process_mib, per_worker_mib))
    if facts_path is None:
        return {}
    httpd = HostFacts.load(facts_path).httpd
    if httpd is None or httpd.mpm is None or httpd.per_worker_mib <= 0:
        raise UsageError(f"{facts_path}: no httpd measured in it (apachetune size --save-facts while httpd runs), "
                         "or give --per-worker-mib")
    if httpd.idle:
        raise UsageError(f"{facts_path}: the httpd measured was idle ({httpd.idle}): its workers are as small as a "
                         "fresh fork's; measure it under load (apachetune size --sample N --save-facts) or give "
                         "--per-worker-mib")
    if httpd.mpm not in mpms:
        raise UsageError(f"{facts_path}: the httpd measured ran {httpd.mpm}, whose memory a worker says nothing of "
                         f"{' or '.join(mpms)}'s; give --per-worker-mib")
    return {httpd.mpm: (httpd.per_process_mib, httpd.per_worker_mib)}


def _versions(httpd_version, versus, compare) -> str | None:
    """The httpd version modelled (given, else the installed one's), each named version checked."""
    from apachetune.cli.options import httpd_version_or_installed, modelled_version
    from apachetune.errors import UsageError

    if compare and versus:
        raise UsageError("--compare and --versus: one comparison at a time")
    version = httpd_version_or_installed(httpd_version)[0]
    for v, option in ((version, "--httpd-version"), (versus, "--versus")):
        if v:
            modelled_version(v, option)
    return version


# the phase range costs five more runs: only for runs this small (simulation events)
PHASES_MAX_EVENTS = 300_000


def _phases(results, rerun, graceful_at, replay) -> None:
    """One run (no comparison, restart or replay) whose pool grew during it grew at the parent's
    passes, a second apart, whose phase against the load is chance (the run's: --first-pass):
    its `phases`, the throughput and p99 over the first pass at each of PASS_PHASES and 1 s too."""
    from apachetune.simulate.parent import PASS_PHASES

    if len(results) != 1 or graceful_at or replay:
        return
    r = results[0]
    grew = bool(r.timeline) and r.peak_processes > r.timeline[0]["processes"]
    if not grew or r.events.get("simulation events", 0) > PHASES_MAX_EVENTS or not r.completed:
        return
    phases = sorted({*PASS_PHASES, 1.0} - {r.first_pass})
    runs = [r, *(rerun(first_pass) for first_pass in phases)]
    rates = [x.throughput for x in runs]
    p99s = [x.latency_ms.get("p99", 0.0) for x in runs]
    r.phases = {"first_pass_s": sorted([*phases, r.first_pass]), "throughput_rps": [round(min(rates), 1), round(max(rates), 1)],
                "p99_ms": [round(min(p99s), 1), round(max(p99s), 1)]}


def _turnaround(given, keepalive_loop: bool, ab: bool):
    """(--turnaround as given, False), else for a keep-alive closed loop a load generator's on
    loopback (ab's with --requests, else wrk's), True: no real client is instant."""
    from apachetune.simulate.workload import AB_TURNAROUND, WRK_TURNAROUND

    if given is not None:
        return given, False
    if not keepalive_loop:
        return (0.0, None), False
    draw = AB_TURNAROUND if ab else WRK_TURNAROUND
    return (draw.mean, draw), True


def _client_first(given: float | None, assumed: bool, threads_per_child: int) -> tuple[float, float]:
    """(--client-first, its fade): as given, constant; else with the assumed turnaround a load
    generator's on event's cores (its share on processes of that many threads, fading by the
    rate), else none."""
    from apachetune.simulate.workload import LOOPBACK_CLIENT_FIRST_FADE, loopback_client_first

    if given is not None:
        return given, 0.0
    return (loopback_client_first(threads_per_child), LOOPBACK_CLIENT_FIRST_FADE) if assumed else (0.0, 0.0)


def _cpu_pair(text: str, option: str, named: dict[str, tuple[float, float]]) -> tuple[float, float]:
    """(a request, a new connection's extra) in seconds from `0`, a name, or `55us[,60us]`."""
    from apachetune.errors import UsageError
    from apachetune.simulate.workload import parse_seconds

    text = text.strip().lower()
    if text in named:
        request, connection = named[text]
        return request / 1e6, connection / 1e6
    parts = [p.strip() for p in text.split(",")]
    if len(parts) > 2 or not all(parts):
        raise UsageError(f"{option}: {text!r}: expected {', '.join([*named, ''])}a request's CPU, or a "
                         "request's and what a new connection adds, e.g. 55us,60us")
    values = [parse_seconds(p, option) for p in parts]
    if any(v < 0 or v > 1 for v in values):
        raise UsageError(f"{option}: {text!r}: a request's CPU is between 0 and 1 s")
    return values[0], values[1] if len(values) == 2 else 0.0


def _assumed_client(clients: int | None, turnaround_given: bool, ab_requests: int | None, httpd_cpu: str) -> str:
    """The load generator a closed loop is assumed to be when nothing says where its clients
    are (no --turnaround, as _turnaround assumes): ab with --requests (ab -n), else wrk, on
    loopback, sharing the server's cores. "": none (an open loop, a described client, or no CPU
    model: --httpd-cpu 0)."""
    if not clients or turnaround_given:
        return ""
    if httpd_cpu.strip().lower() != "machine" and not any(_cpu_pair(httpd_cpu, "--httpd-cpu", {})):
        return ""
    return "ab" if ab_requests else "wrk"


def _client(client_cpu: str | None, client_threads: int | None, closed_loop: bool,
            assumed: str = "") -> tuple[tuple[float, float], int, str]:
    """The local client's CPU (a request, a new connection's extra), its threads and where the
    figures come from: as given, else the `assumed` generator's ("": none)."""
    from apachetune.errors import UsageError
    from apachetune.simulate.cpu import CLIENT_THREADS
    from apachetune.validate.generator_cpu import figures

    source = ""
    if client_cpu is None:
        client_cpu = assumed or "0"
        source = f"assumed: {assumed} on loopback" if assumed else ""
    named = figures()
    name = client_cpu.strip().lower()
    if name in named:  # its figures: this machine's, measured, else the lab's
        source = "; ".join(filter(None, [source, named[name][2]]))
    client = _cpu_pair(client_cpu, "--client-cpu", {n: (r, c) for n, (r, c, _) in named.items()})
    if client_threads is not None and not any(client):
        raise UsageError("--client-threads: the client's threads spend --client-cpu; there is none")
    if client_threads is not None and not closed_loop:
        raise UsageError("--client-threads: only a closed loop's client (--clients) has threads")
    return client, client_threads or CLIENT_THREADS.get(client_cpu.strip().lower(), 1), source


def _costs(mpm: str, httpd_cpu: str, client: tuple[float, float], threads: int = 1, client_source: str = "",
           server=None):
    """The CPU a request costs besides the application's: httpd's (this machine's calibration,
    a lab machine's, or given) and a local client's. The measured figures had httpd map the file
    it sent: a `server` (read_server) with EnableMMAP Off is charged less."""
    from dataclasses import replace

    from apachetune.simulate.cpu import CpuCosts
    from apachetune.validate.calibration import machine_costs
    from apachetune.validate.section import maps_files

    if httpd_cpu.strip().lower() == "machine":
        return replace(machine_costs(mpm, client[0], client[1], threads, maps_files(server)),
                       client_source=client_source)
    request, connection = _cpu_pair(httpd_cpu, "--httpd-cpu", {})
    return CpuCosts(request, connection, client[0], client[1], "given", threads, client_source=client_source)


def _documents(service_time, documents, per_kib, access_log):
    """The service time: --service's alone, or a document set's with --service as the fixed part."""
    from apachetune.errors import UsageError
    from apachetune.simulate.workload import ServiceTime, read_documents

    if per_kib and not documents:
        raise UsageError("--per-kib is the time a KiB of a document adds: it needs --documents")
    if not documents:
        return service_time
    if access_log:
        raise UsageError("--documents and --access-log: one source of service times at a time")
    if service_time.kind != "fixed":
        raise UsageError("--documents: --service is the fixed part of a request's time (e.g. 60us); "
                         "the documents' sizes make the rest")
    docs = read_documents(documents)
    name = "SURGE set" if documents == "surge" else documents
    mean_kib = sum(size * w for size, w in docs) / sum(w for _, w in docs) / 1024
    return ServiceTime.documents(service_time, per_kib, docs,
                                 f"{len(docs)} documents ({name}, {mean_kib:.1f} KiB a request): "
                                 f"{service_time.mean * 1e6:g} us + {per_kib * 1e6:g} us a KiB")


def _run_seconds(workload, seconds):
    """Simulated seconds: a replay runs until its last request is answered or given up, ab -n
    until its N are done (at most 600 s unless told), anything else 30 s unless told."""
    if workload.replay:
        return workload.replay_horizon()
    if seconds is None:
        return 600.0 if workload.requests else 30.0
    return seconds


# The longest replay simulated at once (simulated seconds): the parent's pass and the timeline
# tick every second, busy or not, so a quiet log costs its span (3 days of 200 requests: 6.4 s
# beside two CPU hogs; a week about 15 s; a month had run on past a minute).
MAX_REPLAY_SPAN = 7 * 86400.0


def _from_log(path, log_format, speed, service_time, synthetic, seconds):
    """(service time, replayed requests, their source) from an access log: with a synthetic load
    (--clients, --rate) only the log's response times are used."""
    from apachetune.errors import UsageError
    from apachetune.simulate.workload import ServiceTime
    from apachetune.sizing.workload import logged_requests

    window = None if seconds is None else seconds * speed  # --seconds of the replay, in the log's time
    logged = logged_requests(path, log_format, None if synthetic else window)
    if synthetic:
        if not logged.timed:
            raise UsageError(f"--access-log {path}: no response times in it (the LogFormat needs %D or %T; "
                             f"--log-format is {log_format!r})")
        return ServiceTime.empirical(logged.timed), (), ""
    replay = tuple((t / speed, d) for t, d in zip(logged.arrivals, logged.durations, strict=True))
    if replay and replay[-1][0] > MAX_REPLAY_SPAN:  # a month of a quiet site: minutes of idle passes, not seconds
        raise UsageError(f"--access-log {path}: its requests span {replay[-1][0] / 86400:.1f} days, more than the "
                         f"{MAX_REPLAY_SPAN / 86400:g} a replay simulates at once: replay its first part with "
                         "--seconds, or all of it faster with --speed")
    source = path if speed == 1 else f"{path} at {speed:g}x"
    if logged.skipped:  # a log of another format, or damaged: said, never silently dropped
        source += f" ({logged.skipped:,} line{'s' if logged.skipped > 1 else ''} without a timestamp skipped)"
    return service_time, replay, source


def _cpu_period(ms: float | None, quota: float | None, cores: int | None) -> float | None:
    """--cpu-period-ms in seconds; a period needs a quota (given, or this machine's)."""
    from apachetune.errors import UsageError

    if ms is not None and quota is None and cores is not None:
        raise UsageError("--cpu-period-ms is a quota's period: give --cpu-quota too (or neither --cores)")
    return None if ms is None else ms / 1000


def _curves(results, workload, seconds, seed, cores, cpu_quota, cpu_period, by_version):
    """(label, result, knee, points) for each run: its section at loads around its knee."""
    from apachetune.simulate.curve import curve, knee

    curves = []
    for r in results:
        # the CPU time the run's processors shared (its quota, else its cores); none: CPUs never bind
        k = knee(r.mpm, r.section, workload, r.cpu_quota or r.cores or 1, r.costs, version=r.httpd_version,
                 accept_defer=r.accept_defer, read_timeout=r.read_timeout)
        points = curve(r.mpm, r.section, workload, k, seconds=seconds, seed=seed, version=r.httpd_version,
                       cores=cores, costs=r.costs, accept_defer=r.accept_defer, read_timeout=r.read_timeout,
                       worker_return=r.worker_return, client_first=r.client_first,
                       client_first_fade=r.client_first_fade, listener_wake=r.listener_wake, accept_spacing=r.accept_spacing, cpu_quota=cpu_quota,
                       cpu_period=cpu_period, autogroup=r.cpu_scheduler == "run queue")
        curves.append((f"{r.mpm} {r.httpd_version}" if by_version else r.mpm, r, k, points))
    return curves


def _mpm_of(file: str | None, context=None) -> str:
    """The MPM `file` loads (event, httpd's default on Linux, when none or no file)."""
    if not file:
        return "event"
    from apachetune.config.resolver import ResolveOptions, resolve

    return resolve(file, context or ResolveOptions()).mpm or "event"
