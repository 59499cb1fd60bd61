"""Facts + workload -> a full, consistent MPM section, each value with its reason.

The section is built to be a fixed point of httpd's start-up model (no message, no silent
change; checked with apachetune.mpm.is_fixed_point) and clean under our own lint.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from apachetune.lint.metadata import option_default
from apachetune.mpm import is_fixed_point, simulate_startup
from apachetune.mpm.connections import CROWD_MARGIN, factor_for_crowd, stall
from apachetune.mpm.directives import LIMITS
from apachetune.mpm.restart import restart_headroom
from apachetune.mpm.spawn import ramp_seconds
from apachetune.sizing import model
from apachetune.sizing.machine import cpus_text


@dataclass(frozen=True)
class Figure:
    value: float | int | str | bool | None
    source: str  # "measured", "profile <name>", "given", "default", "config"

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "source": self.source}

    @property
    def num(self) -> float:
        """The value as a number, for a figure that has one (a caller that may meet None checks
        `.value` first)."""
        if isinstance(self.value, (int, float)):
            return float(self.value)
        raise ValueError(f"{self.source}: {self.value!r} is not a number")


@dataclass
class SizingInputs:
    mpm: Figure
    available_mib: Figure
    reserved_mib: Figure
    headroom: Figure
    per_worker_mib: Figure
    per_process_mib: Figure
    rate: Figure  # peak requests per second (None: unknown)
    service_time: Figure
    requests_per_connection: Figure
    gap: Figure
    keepalive_timeout: Figure
    threads_per_child: Figure
    reqtimeout_loaded: Figure
    cpus: Figure = Figure(None, "unknown")
    # under a cgroup's quota: the whole CPUs its threads may run on, and its CFS period (s)
    cpu_runs_on: Figure = Figure(None, "no quota read")
    cpu_period: Figure = Figure(None, "no quota read")
    cpu_seconds: Figure = Figure(None, "unknown")  # CPU a request uses (at most its service time)
    cpu_under_way: Figure = Figure(None, "not measured")  # requests under way when cpu_seconds was measured
    task_limit: Figure = Figure(None, "unknown")  # workers the kernel's task limits leave room for
    saturated_at: Figure = Figure(None, "no error log read")  # a MaxRequestWorkers the log says was reached
    keepalive: Figure = Figure("On", "default")  # KeepAlive as configured
    max_keepalive_requests: Figure = Figure(100, "default")
    timeout: Figure = Figure(60, "default")
    max_mem_free: Figure = Figure(2048, "default")  # KiB each allocator keeps free (0: no limit)
    listen_buckets: Figure = Figure(1, "default")  # ListenCoresBucketsRatio's buckets on these CPUs
    keepalive_clients: Figure = Figure(None, "unknown")  # idle keep-alive clients at the peak
    burst: Figure = Figure(None, "none given")  # requests arriving together
    burst_rate: Figure = Figure(None, "none measured")  # requests in the busiest second
    tune_keepalive: Figure = Figure(False, "default")  # re-tune keep-alive values lint finds safe
    httpd_version: Figure = Figure(None, "default")  # the 2.4.x modelled (None: the tables' own)

    def to_json(self) -> dict[str, Any]:
        return {k: v.to_json() for k, v in self.__dict__.items()}


@dataclass
class Setting:
    directive: str
    value: int | float | str
    reason: str


@dataclass
class Recommendation:
    mpm: str
    settings: list[Setting]
    usable_mib: float
    memory_bound: int
    load_workers: int | None
    offered_load: float | None
    max_request_workers: int
    predicted_capacity_rps: float
    predicted_wait_ms: float | None
    verdict: str
    memory_short_mib: float = 0.0
    mpm_reasons: list[str] = field(default_factory=list)
    cpu_bound: int | None = None  # workers the CPUs can keep busy (beyond: they only queue)
    task_bound: int | None = None  # workers the kernel's task limits leave room for
    bound_by: str = "memory"  # which bound set MaxRequestWorkers
    keepalive_clients: float | None = None  # idle keep-alive clients the section was sized for
    connections_mib: float = 0.0  # memory set aside for the connections event holds itself
    pool: int | None = None  # workers kept running for the peak and its bursts
    capacity_by: str = "workers"  # what sets predicted_capacity_rps: the workers or the CPUs
    capacity_if_cpu_grows: float | None = None  # the CPUs' capacity if the CPU a request grows as measured
    notes: list[str] = field(default_factory=list)  # what the operator should know beyond the values

    def values(self) -> dict[str, int | float | str]:
        return {s.directive: s.value for s in self.settings}

    def to_json(self) -> dict[str, Any]:
        return {
            "mpm": self.mpm, "mpm_reasons": self.mpm_reasons,
            "settings": [{"directive": s.directive, "value": s.value, "reason": s.reason}
                         for s in self.settings],
            "usable_mib": round(self.usable_mib, 1), "memory_bound_workers": self.memory_bound,
            "load_workers": self.load_workers, "offered_load_erlangs": self.offered_load,
            "max_request_workers": self.max_request_workers,
            "predicted_capacity_rps": round(self.predicted_capacity_rps, 1), "capacity_set_by": self.capacity_by,
            "capacity_if_cpu_grows_rps": None if self.capacity_if_cpu_grows is None
            else round(self.capacity_if_cpu_grows, 1),
            "predicted_mean_wait_ms": None if self.predicted_wait_ms is None
            else round(self.predicted_wait_ms, 2),
            "verdict": self.verdict, "memory_short_mib": round(self.memory_short_mib, 1),
            "cpu_bound_workers": self.cpu_bound, "task_bound_workers": self.task_bound,
            "bound_by": self.bound_by,
            "keepalive_clients": None if self.keepalive_clients is None else round(self.keepalive_clients, 1),
            "connections_mib": round(self.connections_mib, 1),
            "pool_workers": self.pool, "notes": self.notes,
        }


NON_THREAD_SAFE = ("php_module", "php5_module", "php7_module", "php8_module")


def choose_mpm(loaded_modules: set[str] | frozenset[str], current: str | None) -> tuple[str, list[str]]:
    """event unless a module that is not thread-safe forces prefork."""
    unsafe = sorted(m for m in loaded_modules if m in NON_THREAD_SAFE)
    if unsafe:
        return "prefork", [f"{', '.join(unsafe)} is not thread-safe: only prefork runs it safely "
                           "(or move PHP to php-fpm behind mod_proxy_fcgi and use event)"]
    reasons = ["event: idle keep-alive connections are parked in its listener and hold no worker, "
               "so the same memory carries more clients than worker or prefork"]
    if current and current != "event":
        reasons.append(f"the server runs {current} today; nothing loaded requires it")
    return "event", reasons


def _wanted(mpm: str, tpc: int, inputs: SizingInputs, load_workers: int | None, cpu_bound: int | None,
            crowd_floor: int | None, burst: int | None) -> tuple[int | None, str, int | None]:
    """The workers the load asks for, before the hard bounds (memory, httpd, kernel), why, and
    what the bound asked before the floor of whole processes lifted it."""
    # What the load needs, twice over (bursts, slow clients), but no more than the CPUs can keep
    # busy; without a load, what the CPUs can keep busy.
    soft = [(b, why) for b, why in ((2 * load_workers if load_workers is not None else None, "load"),
                                     (cpu_bound, "CPU")) if b is not None]
    wanted, wanted_by = min(soft) if soft else (None, "")
    # Floors the CPU bound does not cap: workers the error log says ran out, and on prefork and
    # worker the idle keep-alive clients given (they hold workers but use no CPU).
    floors = [(math.ceil(EVIDENCE_MARGIN * int(inputs.saturated_at.num)) if inputs.saturated_at.value else None,
               "error-log evidence"), (crowd_floor, "idle keep-alive clients"), (burst or None, "burst")]
    for floor, why in floors:
        if floor is not None and (wanted is None or floor > wanted):
            wanted, wanted_by = floor, why
    if wanted is None:
        return None, wanted_by, None
    # At least two processes' worth of threads (one child of prefork), so a section never
    # shrinks ThreadsPerChild to fit.
    if mpm == "prefork":
        return max(wanted, 2), wanted_by, wanted
    return max(2 * tpc, math.ceil(wanted / tpc) * tpc), wanted_by, wanted


def _mean_wait_ms(workers: int, offered: float | None, service_s: float) -> float | None:
    if offered is None:
        return None
    w = model.mean_queue_wait(workers, offered, service_s)
    return None if math.isinf(w) else w * 1000


def recommend(inputs: SizingInputs, mpm: str | None = None, max_utilisation: float = 0.75) -> Recommendation:
    mpm = mpm or str(inputs.mpm.value)
    tpc = 1 if mpm == "prefork" else (int(inputs.threads_per_child.num) if inputs.threads_per_child.value else 25)
    usable = model.usable_memory(inputs.available_mib.num, inputs.reserved_mib.num,
                                 inputs.headroom.num)
    per_worker, per_process = inputs.per_worker_mib.num, inputs.per_process_mib.num
    s = inputs.service_time.num
    keepalive = inputs.keepalive.value != "Off" or bool(inputs.tune_keepalive.value)
    kat = inputs.keepalive_timeout.num
    if mpm in ("prefork", "worker"):
        kat = min(kat, float(option_default("AT302", "max_seconds")))  # lint's AT302: longer pins workers
    rate = inputs.rate.num if inputs.rate.value else None
    rpc, gap = inputs.requests_per_connection.num, inputs.gap.num
    load_workers = offered = None
    busy = 0.0  # workers busy serving (not idling in keep-alive) at the peak, on average
    crowd, crowd_given = _crowd(inputs, rate, rpc, gap, kat, keepalive)
    # event keeps the idle crowd itself, each connection in its own memory: set it aside before
    # the workers are counted (validate measured the peak 10-25% over without it).
    held_mib = crowd * model.EVENT_CONNECTION_MIB if mpm == "event" and crowd else 0.0

    def process_mib(threads: int) -> float:
        return _process_mib(mpm, per_process, threads, int(inputs.max_mem_free.num))

    bound = model.memory_bound_workers(max(0.0, usable - held_mib), per_worker, process_mib(tpc), tpc)
    if rate:
        # A given crowd replaces the one the offered load would estimate from the rate.
        offered = model.offered_load(mpm, rate, s, rpc, gap, kat, keepalive and not crowd_given)
        load_workers = model.workers_for(offered, s, max_utilisation)
        busy = rate * s
    # A given crowd holds workers on prefork/worker (one estimated from the rate is already in
    # the offered load; on event idle connections hold none).
    crowd_held = crowd_given and mpm != "event"
    held_crowd = crowd if crowd_held and crowd is not None else 0.0  # idle clients holding workers
    limit = LIMITS[mpm]["ServerLimit"] * (1 if mpm == "prefork" else min(tpc, LIMITS[mpm]["ThreadLimit"]))
    cpu_bound = _cpu_bound(mpm, inputs, s, kat, max_utilisation, keepalive)
    task_bound = int(inputs.task_limit.num) if inputs.task_limit.value else None
    pool, burst = _pool(inputs, load_workers, s, max_utilisation)
    wanted, wanted_by, asked = _wanted(mpm, tpc, inputs, load_workers, cpu_bound,
                                math.ceil(CROWD_MARGIN * (held_crowd + busy)) if crowd_held else None, burst)
    # Hard bounds: what fits in memory, what httpd compiles in, what the kernel lets run.
    hard = [(bound, "memory"), (limit, "httpd's compile-time limit"),
            (task_bound, "the kernel's task limits (pid_max, threads-max)")]
    mrw, bound_by = min((b, why) for b, why in hard if b is not None)
    if wanted is not None and wanted < mrw:
        mrw, bound_by = wanted, wanted_by
    mrw = max(1, mrw)
    tpc, race_note = _race_free_threads(mpm, tpc, mrw)
    if mpm != "prefork" and inputs.threads_per_child.source != "given":
        tpc, mrw = _fit_threads(mrw, tpc, lambda t: model.memory_bound_workers(usable - held_mib, per_worker,
                                                                               process_mib(t), t))
    short_mib = 0.0
    if load_workers is not None and load_workers > bound:
        cost = per_worker + (0.0 if mpm == "prefork" else process_mib(tpc) / tpc)
        short_mib = (load_workers - bound) * cost
    notes: list[str] = [race_note] if race_note else []
    stated = _rounded(mpm, mrw, tpc)  # MaxRequestWorkers as the section states it
    if crowd_held and stall(mpm, {"MaxRequestWorkers": stated}, held_crowd, busy):
        # The crowd cannot be held: a short KeepAliveTimeout frees its workers sooner.
        shorter = max(1.0, math.floor(kat * max(0.0, mrw - busy) / (CROWD_MARGIN * held_crowd)))
        if shorter < kat:
            kat = shorter
        notes.append(f"{held_crowd:g} idle keep-alive clients do not fit in MaxRequestWorkers {stated} ({bound_by} "
                     f"bound): each holds a {'process' if mpm == 'prefork' else 'thread'} until KeepAliveTimeout "
                     f"({kat:g} s), so new connections can wait that long; event holds them without a worker")
    if crowd_held:  # the crowd holds workers: they must already be running
        pool = max(pool or 0, math.ceil(CROWD_MARGIN * (held_crowd + busy)))
    if burst is not None and burst > stated:
        notes.append(f"a burst of {burst} requests exceeds MaxRequestWorkers {stated}: {burst - stated} wait in "
                     "the listen backlog")
    # Workers held at the peak on average: serving, and on prefork/worker idling in keep-alive.
    held = (offered or 0.0) + held_crowd
    raised_from = asked if bound_by == wanted_by and asked is not None and asked < stated else None
    settings = _section(mpm, mrw, tpc, kat, inputs, bound_by, pool=pool, busy=busy, crowd=crowd,
                        keepalive=keepalive, held=held, raised_from=raised_from)
    buckets = int(inputs.listen_buckets.num)
    settings = _bucket_floors(mpm, settings, buckets)
    values = {x.directive: x.value for x in settings if x.directive in _MPM_KEYS and isinstance(x.value, (int, float))}
    assert is_fixed_point(mpm, values, listen_buckets=buckets), (mpm, values)
    real_mrw = int(next(x.value for x in settings if x.directive == "MaxRequestWorkers"))
    if crowd and mpm == "event":
        version = inputs.httpd_version.value
        stalled = stall(mpm, values, crowd, busy, version=str(version) if version else None)
        if stalled:
            notes.append(stalled)
    demand = cpu_demand(inputs)
    if demand is not None and max_utilisation < demand < 1:
        notes.append(f"the peak keeps the CPUs {demand:.0%} busy ({inputs.rate.num:g} req/s x {_cpu_ms(inputs):g} ms "
                     f"of CPU on {inputs.cpus.value}): above {max_utilisation:.0%}, requests wait for a core "
                     "and response times grow however many workers there are")
    capacity, capacity_by = _capacity(inputs, real_mrw, s)
    grown = _capacity_as_cpu_grows(inputs, real_mrw, s, capacity) if capacity_by == "CPUs" else None
    if grown is not None:
        notes.append(grown[1])
    wait = _mean_wait_ms(real_mrw, offered, s)
    verdict = _verdict(inputs, load_workers, bound, cpu_bound, short_mib, max_utilisation)
    return Recommendation(mpm, settings, usable, bound, load_workers, offered, real_mrw, capacity, wait,
                          verdict, short_mib, cpu_bound=cpu_bound, task_bound=task_bound, bound_by=bound_by,
                          keepalive_clients=crowd, pool=pool, notes=notes, connections_mib=held_mib,
                          capacity_by=capacity_by, capacity_if_cpu_grows=grown[0] if grown else None)


def _rounded(mpm: str, mrw: int, tpc: int) -> int:
    """MaxRequestWorkers as the section will state it (worker/event: a multiple of ThreadsPerChild)."""
    if mpm == "prefork":
        return mrw
    tpc = max(1, min(tpc, mrw))
    return max(tpc, mrw - mrw % tpc)


def _verdict(inputs: SizingInputs, load_workers: int | None, bound: int, cpu_bound: int | None,
             short_mib: float, max_utilisation: float) -> str:
    evidence = ""
    if inputs.saturated_at.value:
        evidence = (f"; the error log shows MaxRequestWorkers {inputs.saturated_at.value} reached "
                    f"({inputs.saturated_at.source})")
    if load_workers is None and inputs.saturated_at.value:
        return (f"sized from the error log: the server ran out of workers at MaxRequestWorkers "
                f"{inputs.saturated_at.value} ({inputs.saturated_at.source}), so at least "
                f"{EVIDENCE_MARGIN - 1:.0%} more, within the machine's bounds")
    if load_workers is None:
        verdict = (f"no peak load given (--rate, --access-log or --status-url): MaxRequestWorkers is "
                   f"sized to what the CPUs can keep busy, not to all of memory ({bound} workers would "
                   "fit): " + _cpu_assumption(inputs, cpu_bound))
    elif (demand := cpu_demand(inputs)) is not None and demand >= 1:
        # The rate asks more CPU-seconds a second than there are cores: no number of workers
        # serves it (they queue without bound), whatever memory allows.
        verdict = (f"the CPUs cannot carry the load: {inputs.rate.num:g} req/s x {_cpu_ms(inputs):g} ms of CPU "
                   f"is {demand * float(inputs.cpus.num):.2f} CPUs' work, {inputs.cpus.value} available "
                   f"({inputs.cpus.source}; CPU a request {inputs.cpu_seconds.source}): at most "
                   f"{float(inputs.cpus.num) / (_cpu_ms(inputs) / 1000):.0f} req/s" + _cpu_hint(inputs))
    elif cpu_bound is not None and load_workers > cpu_bound:
        verdict = (f"the CPUs cannot carry the load: {load_workers} workers needed, {cpu_bound} keep "
                   f"{cpus_text(inputs.cpus.value)} busy ({_cpu_assumption(inputs, cpu_bound)}); more workers "
                   "would only queue" + _cpu_hint(inputs))
    elif load_workers <= bound:
        verdict = (f"memory carries the load: {load_workers} workers needed at "
                   f"{max_utilisation:.0%} utilisation, {bound} fit in memory")
    else:
        verdict = (f"memory cannot carry the load: {load_workers} workers needed, {bound} fit; "
                   f"short by {load_workers - bound} workers (~{short_mib:.0f} MiB)")
    return verdict + evidence


def _crowd(inputs: SizingInputs, rate: float | None, rpc: float, gap: float, kat: float,
           keepalive: bool) -> tuple[float | None, bool]:
    """Idle keep-alive clients at the peak, and whether they were given (rather than estimated
    from the rate: then prefork/worker already count them in the offered load)."""
    if inputs.keepalive_clients.value is not None:
        return inputs.keepalive_clients.num, True
    if rate and keepalive:
        return model.idle_keepalive_clients(rate, rpc, gap, kat), False
    return None, False


def _pool(inputs: SizingInputs, load_workers: int | None, s: float,
          utilisation: float) -> tuple[int | None, int | None]:
    """Workers to keep running so that the peak and its bursts find them already forked (httpd
    adds children only 1, 2, 4 ... 32 a second), and the burst in requests."""
    burst = None
    if inputs.burst.value is not None:
        burst = int(inputs.burst.num)
    elif inputs.burst_rate.value:
        burst = model.workers_for(inputs.burst_rate.num * s, s, utilisation)
    need = max(load_workers or 0, burst or 0)
    return (need or None), burst


def _capacity(inputs: SizingInputs, workers: int, s: float) -> tuple[float, str]:
    """The requests a second `workers` serve with every one busy, and what sets it: the workers,
    or the CPUs when they run out first or, near the knee, make requests wait for a core while
    other workers are away from them (model.closed_loop_throughput)."""
    capacity = workers / s if s > 0 else math.inf
    cpus, cpu = inputs.cpus.value, inputs.cpu_seconds.value
    if cpus and cpu and s > 0:
        on_cpu = min(float(cpu), s)
        knee = model.closed_loop_throughput(workers, on_cpu, float(cpus), s - on_cpu)
        if knee < 0.999 * capacity:
            return knee, "CPUs"
    return capacity, "workers"


# How much the server's CPU a request grew for each doubling of the requests under way, where
# measured on these machines (docs/sizing.md, "The CPU a request under load"): httpd prefork
# 50 -> 79 µs from 10 to 300 keep-alive clients (12% a doubling), httpd event 250 -> 290-340 µs
# from half its knee to 1.5-2x (keep-alive connections closed and opened again: 8-18%), a
# php-like mod_lua app 36 -> 44-49 ms from half of its 27 workers busy to all (page faults and
# memory bandwidth: 22-36%). 15% puts that app's 27 workers at 41.0 req/s; it served 40.9.
CPU_GROWTH_PER_DOUBLING = 0.15


def _capacity_as_cpu_grows(inputs: SizingInputs, workers: int, s: float,
                           capacity: float) -> tuple[float, str] | None:
    """When the CPUs set the capacity and the CPU a request was measured with far fewer
    requests under way than the `workers` busy at the capacity: the capacity if it grows as it
    did where measured, and a note that says so. None when it was not measured that way."""
    under_way, cpu, cpus = inputs.cpu_under_way.value, inputs.cpu_seconds.value, inputs.cpus.value
    if not under_way or not cpu or not cpus or workers < 2 * float(under_way):
        return None
    grown = min(float(cpu) * (1 + CPU_GROWTH_PER_DOUBLING * math.log2(workers / float(under_way))), s)
    lower = model.closed_loop_throughput(workers, grown, float(cpus), s - grown)
    note = (f"the CPU a request ({float(cpu) * 1000:.2f} ms) was measured with {float(under_way):.1f} requests under "
            f"way; at the capacity {workers} are. Where measured, httpd's CPU a request grew about "
            f"{CPU_GROWTH_PER_DOUBLING:.0%} for each doubling of them (8-36%: connections reopened, page "
            f"faults, memory bandwidth): at {grown * 1000:.2f} ms the CPUs serve about {lower:.0f} req/s, not "
            f"{capacity:.0f}. Sample the CPU under the peak (--status-url while it serves it) or measure it "
            "(apachetune validate --target httpd)")
    return lower, note


def _process_mib(mpm: str, per_process: float, threads: int, max_mem_free_kib: int = 2048) -> float:
    """A process's own memory (none apart from its worker on prefork); on event with the pools of
    closed connections it keeps for the next ones (model.recycled_pools), which are there at the
    peak beside every live connection: validate measured httpd event's peak 16-20 MiB above its
    all-busy step without them (docs/validate.md). Each costs what a connection does, or what
    MaxMemFree lets its allocator keep if less. With MaxMemFree 0 none is ever given back: a
    process keeps a pool for every connection it served at once, its ThreadsPerChild at least."""
    if mpm == "prefork":
        return 0.0
    if mpm != "event":
        return per_process
    pools = model.recycled_pools(1, threads, max_mem_free_kib)
    return per_process + (threads if pools is None else pools) * model.kept_pool_mib(
        model.EVENT_CONNECTION_MIB, max_mem_free_kib)


def _fit_threads(mrw: int, tpc: int, bound_for: Callable[[int], int]) -> tuple[int, int]:
    """ThreadsPerChild (at most `tpc`) that keeps MaxRequestWorkers from being rounded down to a
    multiple of it (a bound of 49 with 25 threads a process would become 25): as many processes
    as rounding up needs, each with as many threads as fit. `bound_for(t)` is the memory bound
    with t threads a process (smaller processes cost a little more each)."""
    if mrw <= tpc or mrw % tpc == 0:
        return tpc, mrw
    processes = math.ceil(mrw / tpc)
    threads = mrw // processes
    while threads > 1 and processes * threads > bound_for(threads):
        threads -= 1
    if processes * threads > mrw - mrw % tpc:
        return threads, processes * threads
    return tpc, mrw


# event: fewer threads a process than this lose workers to accept races (lint AT206).
EVENT_MIN_THREADS = 3


def _race_free_threads(mpm: str, tpc: int, mrw: int) -> tuple[int, str]:
    """event in more than one process: at least EVENT_MIN_THREADS threads each, and why (lint's
    AT206: a process of one or two threads that loses an accept race to another keeps a worker
    reserved and uncounted; with one thread it never accepts again)."""
    if mpm != "event" or tpc >= EVENT_MIN_THREADS or mrw <= tpc:
        return tpc, ""
    return EVENT_MIN_THREADS, (
        f"ThreadsPerChild {tpc} raised to {EVENT_MIN_THREADS}: event processes of one or two threads lose "
        "workers to accept races between processes (a one-thread process stops accepting for good; lint "
        "AT206); for one thread a process use prefork")


# When the error log says MaxRequestWorkers was reached, at least this much more is recommended.
EVIDENCE_MARGIN = 1.25


# Workers beyond what the CPUs keep busy only queue; twice that covers bursts and the part of a
# worker's time the model does not see (slow clients, blocking I/O).
CPU_BURST = 2


def _cpu_bound(mpm: str, inputs: SizingInputs, s: float, kat: float, utilisation: float,
               keepalive: bool = True) -> int | None:
    """Workers the CPUs can keep busy: each request holds a worker for its occupancy (the service
    time, and on prefork/worker the keep-alive waits) but uses a CPU only for its CPU time (at most
    the service time), so cpus x occupancy / CPU time at the target utilisation, times CPU_BURST."""
    cpus, cpu = inputs.cpus.value, inputs.cpu_seconds.value
    if not cpus or not cpu or s <= 0:
        return None
    held = model.offered_load(mpm, 1.0, s, inputs.requests_per_connection.num,
                              inputs.gap.num, kat, keepalive)  # worker-seconds per request
    return max(1, math.ceil(CPU_BURST * float(cpus) * held / min(float(cpu), s) / utilisation))


def cpu_demand(inputs: SizingInputs) -> float | None:
    """The share of the CPUs the peak rate keeps busy (rate x CPU a request / cores), or None."""
    rate, cpus, cpu = inputs.rate.value, inputs.cpus.value, inputs.cpu_seconds.value
    if not rate or not cpus or not cpu:
        return None
    return float(rate) * min(float(cpu), inputs.service_time.num or float(cpu)) / float(cpus)


def _cpu_ms(inputs: SizingInputs) -> float:
    return round(min(inputs.cpu_seconds.num, inputs.service_time.num or inputs.cpu_seconds.num) * 1000, 3)


def _cpu_hint(inputs: SizingInputs) -> str:
    if inputs.cpu_seconds.source.startswith("assumed"):
        return ("; the CPU a request is assumed: measure it under load (--status-url with the server "
                "running here) or give --cpu-ms")
    return ""


def _cpu_assumption(inputs: SizingInputs, cpu_bound: int | None) -> str:
    if cpu_bound is None:
        return "the CPU count is unknown"
    s = inputs.service_time.num
    cpu = min(inputs.cpu_seconds.num, s)
    return (f"{cpu_bound} workers for {cpus_text(inputs.cpus.value)} ({inputs.cpus.source}), each request "
            f"using {cpu * 1000:g} ms of CPU of its {s * 1000:g} ms ({inputs.cpu_seconds.source})")


_MPM_KEYS = {"StartServers", "MinSpareServers", "MaxSpareServers", "MinSpareThreads", "MaxSpareThreads",
             "ServerLimit", "ThreadLimit", "ThreadsPerChild", "MaxRequestWorkers",
             "AsyncRequestWorkerFactor", "MaxConnectionsPerChild"}


def _section(mpm: str, mrw: int, tpc: int, kat: float, inputs: SizingInputs, bound_by: str = "memory",
             pool: int | None = None, busy: float = 0.0, crowd: float | None = None,
             keepalive: bool = True, held: float = 0.0, raised_from: int | None = None) -> list[Setting]:
    src = f"{inputs.per_worker_mib.value} MiB a worker ({inputs.per_worker_mib.source})"
    # the bound asked for fewer workers than whole processes hold (a section never shrinks
    # ThreadsPerChild to fit; prefork keeps two children)
    raised = "" if raised_from is None else (
        f" ({raised_from} workers, raised to " + ("two children)" if mpm == "prefork" else "whole processes, at least two)"))
    out: list[Setting] = []
    if mpm == "prefork":
        out += _prefork_pool(mrw, pool, held)
        out += [
            Setting("ServerLimit", mrw, "equal to MaxRequestWorkers: no scoreboard reserved unused"),
            Setting("MaxRequestWorkers", mrw, f"set by the {bound_by} bound{raised}; memory at {src}"),
            Setting("MaxConnectionsPerChild", 10000 if _php(inputs) else 0,
                    "recycle children now and then (leaks in application code)" if _php(inputs)
                    else "children are never recycled"),
        ]
    else:
        tpc = max(1, min(tpc, mrw))
        mrw = _rounded(mpm, mrw, tpc)
        servers = mrw // tpc
        headroom = min(restart_headroom(mpm, servers), LIMITS[mpm]["ServerLimit"] - servers)
        factor = _async_factor(mrw, tpc, busy, crowd) if mpm == "event" else None
        # a factor raised for an idle crowd counts on every process running: the pool is all of
        # them, else the parent reaps the ones only the connections need, and each stopping
        # process closes its keep-alive connections (2 of 4 processes started, MaxSpareThreads
        # 51: 7 stopped and 1,566 connections closed in 30 s, simulated; docs/benchmarks.md)
        every = factor is not None and int(factor.value) > 2  # (_async_factor raises it above 2 only for a crowd)
        out += _threaded_pool(mrw, tpc, max(pool or 0, mrw) if every else pool, held, every)
        out += [
            Setting("ServerLimit", servers + headroom,
                    f"MaxRequestWorkers / ThreadsPerChild = {servers}, plus {headroom} for processes that "
                    "finish their requests during a graceful restart"),
            Setting("ThreadLimit", tpc, "equal to ThreadsPerChild: no scoreboard reserved unused"),
            Setting("ThreadsPerChild", tpc, "threads per process (httpd's default of 25 unless "
                    "MaxRequestWorkers needs another division)"),
            Setting("MaxRequestWorkers", mrw, f"set by the {bound_by} bound{raised}; memory at {src}; a multiple "
                    "of ThreadsPerChild"),
        ]
        if factor is not None:
            out.append(factor)
        out.append(Setting("MaxConnectionsPerChild", 0, "processes are never recycled"))
    return out + _keepalive_settings(mpm, kat, inputs, keepalive)


def _bucket_floors(mpm: str, settings: list[Setting], buckets: int) -> list[Setting]:
    """With listener buckets httpd raises StartServers and the spare bounds at start-up (a
    process to start and spares for each bucket: prefork.c, worker.c, event.c), and lets as many
    processes run as there are buckets: state the raised values (and a ServerLimit that holds
    those processes), so that the section is what httpd runs (lint's AT113-AT115 would refuse it)."""
    if buckets <= 1:
        return settings
    why = f"raised to what httpd keeps for {buckets} listener buckets (ListenCoresBucketsRatio)"
    for _ in range(3):  # a raised MaxRequestWorkers needs a ServerLimit that holds it
        values = {x.directive: x.value for x in settings if x.directive in _MPM_KEYS}
        effective = dict(simulate_startup(mpm, {k: str(v) for k, v in values.items()}, listen_buckets=buckets).effective)
        processes = int(effective["MaxRequestWorkers"]) // (1 if mpm == "prefork" else int(effective["ThreadsPerChild"]))
        effective["ServerLimit"] = max(int(values.get("ServerLimit", 0)), processes)
        changed = [x for x in settings if x.directive in effective and isinstance(x.value, int)
                   and effective[x.directive] != x.value]
        if not changed:
            break
        settings = [Setting(x.directive, effective[x.directive], x.reason if why in x.reason else f"{x.reason}; {why}")
                    if x in changed else x for x in settings]
    return settings


def _prefork_pool(mrw: int, pool: int | None, held: float) -> list[Setting]:
    """StartServers and the spare bounds: from the load when there is one (the pool is forked at
    start and never reaped below it), else small and httpd-like. MinSpareServers stays within
    what MaxRequestWorkers leaves above the workers held at the peak: with fewer idle than it and
    no slot free, httpd logs AH00161 "server reached MaxRequestWorkers" though nothing waits."""
    if pool:
        pool = min(mrw, pool)
        max_spare = max(2, pool)
        min_spare = max(1, min(max_spare - 1, pool - math.ceil(held), mrw - math.ceil(held)))
        start = max(1, min(pool, max_spare))
        return [
            Setting("StartServers", start, f"the pool the peak needs, forked at start{_ramp(start, mrw)}"),
            Setting("MinSpareServers", min_spare, "idle children kept at the peak: the pool less the "
                    "workers held on average"),
            Setting("MaxSpareServers", max_spare, "at least the pool, so idle children are not killed "
                    "between bursts and re-forked one a second"),
        ]
    min_spare = max(1, min(5, mrw // 10))
    max_spare = max(min_spare + 1, min(10, mrw // 5))
    start = max(1, min(5, mrw, max_spare))
    return [
        Setting("StartServers", start, "children forked at start (within MaxSpareServers, "
                f"so none is killed as idle right away){_ramp(start, mrw)}"),
        Setting("MinSpareServers", min_spare, "idle children kept ready for bursts"),
        Setting("MaxSpareServers", max_spare, "idle children above this are stopped"),
    ]


def _threaded_pool(mrw: int, tpc: int, pool: int | None, held: float, for_crowd: bool = False) -> list[Setting]:
    """As _prefork_pool, in threads (AH00286 / AH00484 when MinSpareThreads cannot be met).
    `for_crowd`: event's pool is every process, which the connection limit for the crowd needs."""
    servers = mrw // tpc
    if pool:
        pool = min(mrw, pool)
        start = max(1, min(servers, math.ceil(pool / tpc)))
        spare = max(pool - math.ceil(held), _default_min_spare_threads(mrw))
        min_spare = max(1, min(start * tpc, spare, mrw - math.ceil(held)))
        max_spare = max(min_spare + tpc + 1, start * tpc)
        what = ("every process, whose connections AsyncRequestWorkerFactor counts on for the idle crowd"
                if for_crowd else f"processes for the pool the peak needs ({pool} threads)")
        return [
            Setting("StartServers", start, f"{what}, started at once{_ramp(start, servers)}"),
            Setting("MinSpareThreads", min_spare, "idle threads kept at the peak: the pool less the "
                    "workers held on average"),
            Setting("MaxSpareThreads", max_spare, "at least the pool (and MinSpareThreads + "
                    "ThreadsPerChild + 1, as httpd requires), so the pool is not reaped between bursts"),
        ]
    min_spare = _default_min_spare_threads(mrw)
    max_spare = max(min_spare + tpc + 1, min(250, mrw // 2))
    start = max(1, min(servers, 3, max_spare // tpc))
    return [
        Setting("StartServers", start, f"processes forked at start{_ramp(start, servers)}"),
        Setting("MinSpareThreads", min_spare, "idle threads kept ready for bursts"),
        Setting("MaxSpareThreads", max_spare, "at least MinSpareThreads + ThreadsPerChild + 1, "
                "as httpd requires"),
    ]


def _default_min_spare_threads(mrw: int) -> int:
    return max(1, min(75, mrw // 4))


def _ramp(start: int, most: int) -> str:
    if most <= start:
        return ""
    return (f"; beyond it httpd adds processes 1, 2, 4 ... 32 a second: {most} run after "
            f"{ramp_seconds(start, most)} s of shortage")


def _async_factor(mrw: int, tpc: int, busy: float, crowd: float | None) -> Setting:
    if crowd:
        factor = factor_for_crowd(crowd, busy, mrw, tpc)
        if factor is not None and factor > 2:
            return Setting("AsyncRequestWorkerFactor", factor,
                           f"{crowd:.0f} idle keep-alive clients expected: each process accepts "
                           "ThreadsPerChild + idle threads x this many connections, "
                           f"{CROWD_MARGIN - 1:.0%} above the crowd and the busy ones")
    return Setting("AsyncRequestWorkerFactor", 2, "httpd's default: connections a process accepts per "
                   "idle thread" + (f"; holds the {crowd:.0f} idle keep-alive clients expected" if crowd else ""))


def _keepalive_settings(mpm: str, kat: float, inputs: SizingInputs, keepalive: bool) -> list[Setting]:
    """Keep-alive and Timeout values are the operator's: changed only where lint's rule of the
    same threshold (AT302, AT303, AT304) reports them, where an idle crowd needs a shorter
    KeepAliveTimeout, or on --tune-keepalive."""
    tune = bool(inputs.tune_keepalive.value)
    out: list[Setting] = []
    if inputs.keepalive.value == "Off" and tune:
        out.append(Setting("KeepAlive", "On", "--tune-keepalive: saves a TCP (and TLS) handshake per request"))
    if keepalive:
        now = inputs.keepalive_timeout.num
        value = int(kat) if float(kat).is_integer() else kat
        if kat != now:
            limit = float(option_default("AT302", "max_seconds"))
            why = (f"lint AT302: above {limit:g} s idle clients hold {mpm}'s workers" if now > limit and kat == limit
                   else "shorter, so idle keep-alive clients free their workers sooner")
            out.append(Setting("KeepAliveTimeout", value, why))
        elif tune:
            out.append(Setting("KeepAliveTimeout", value, "idle keep-alive clients hold a worker this long on "
                               "prefork/worker" if mpm != "event" else
                               "idle connections wait in event's listener, not in a worker"))
        requests = int(inputs.max_keepalive_requests.num)
        minimum = int(option_default("AT303", "min_requests"))
        if requests == 0 or requests < minimum:
            out.append(Setting("MaxKeepAliveRequests", 100, f"lint AT303: {requests} is "
                               + ("unlimited" if requests == 0 else f"under {minimum}")))
        elif tune:
            out.append(Setting("MaxKeepAliveRequests", 100 if mpm != "event" else 500,
                               "requests per connection before it is closed"))
    timeout = int(inputs.timeout.num)
    limit = int(option_default("AT304", "max_seconds"))
    if timeout > limit and (not inputs.reqtimeout_loaded.value or tune):
        why = ("lint AT304: without mod_reqtimeout a slow client holds a worker this long at every read"
               if not inputs.reqtimeout_loaded.value else
               "--tune-keepalive: bounds each read and write on a slow client")
        out.append(Setting("Timeout", limit, why))
    return out


def _php(inputs: SizingInputs) -> bool:
    return "php" in str(inputs.per_worker_mib.source)
