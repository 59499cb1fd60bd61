"""Facts + workload -> a full, consistent MPM section, each value with its reason.

The section is built to be a fixed point of httpd's start-up model (no message, no silent
change; checked with apachetune.mpm.is_fixed_point) and clean under our own lint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from apachetune.lint.metadata import option_default
from apachetune.mpm import is_fixed_point
from apachetune.mpm.directives import LIMITS
from apachetune.mpm.restart import restart_headroom
from apachetune.sizing import model


@dataclass(frozen=True)
class Figure:
    value: float | int | str | bool | None
    source: str  # "measured", "profile <name>", "given", "default", "config"

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "source": self.source}


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
    cpu_seconds: Figure = Figure(None, "unknown")  # CPU a request uses (at most its service time)
    task_limit: Figure = Figure(None, "unknown")  # workers the kernel's task limits leave room for
    saturated_at: Figure = Figure(None, "no error log read")  # a MaxRequestWorkers the log says was reached

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
            "predicted_capacity_rps": round(self.predicted_capacity_rps, 1),
            "predicted_mean_wait_ms": None if self.predicted_wait_ms is None
            else round(self.predicted_wait_ms, 2),
            "verdict": self.verdict, "memory_short_mib": round(self.memory_short_mib, 1),
            "cpu_bound_workers": self.cpu_bound, "task_bound_workers": self.task_bound,
            "bound_by": self.bound_by,
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


def recommend(inputs: SizingInputs, mpm: str | None = None, max_utilisation: float = 0.75) -> Recommendation:
    mpm = mpm or str(inputs.mpm.value)
    tpc = 1 if mpm == "prefork" else int(inputs.threads_per_child.value or 25)
    usable = model.usable_memory(float(inputs.available_mib.value), float(inputs.reserved_mib.value),
                                 float(inputs.headroom.value))
    bound = model.memory_bound_workers(usable, float(inputs.per_worker_mib.value),
                                       0.0 if mpm == "prefork" else float(inputs.per_process_mib.value), tpc)
    s = float(inputs.service_time.value)
    kat = float(inputs.keepalive_timeout.value)
    if mpm in ("prefork", "worker"):
        kat = min(kat, float(option_default("AT302", "max_seconds")))  # lint's AT302: longer pins workers
    load_workers = offered = None
    if inputs.rate.value:
        offered = model.offered_load(mpm, float(inputs.rate.value), s,
                                     float(inputs.requests_per_connection.value), float(inputs.gap.value), kat)
        load_workers = model.workers_for(offered, s, max_utilisation)
    limit = LIMITS[mpm]["ServerLimit"] * (1 if mpm == "prefork" else min(tpc, LIMITS[mpm]["ThreadLimit"]))
    cpu_bound = _cpu_bound(mpm, inputs, s, kat, max_utilisation)
    task_bound = int(inputs.task_limit.value) if inputs.task_limit.value else None
    # What the load needs, twice over (bursts, slow clients), but no more than the CPUs can keep
    # busy; without a load, what the CPUs can keep busy. At least two processes' worth of
    # threads (one child of prefork), so a section never shrinks ThreadsPerChild to fit.
    soft = [(b, why) for b, why in ((2 * load_workers if load_workers is not None else None, "load"),
                                     (cpu_bound, "CPU")) if b is not None]
    wanted, wanted_by = min(soft) if soft else (None, "")
    if inputs.saturated_at.value:
        # The server's own log says it ran out at this MaxRequestWorkers: the peak needs more.
        floor = math.ceil(EVIDENCE_MARGIN * int(inputs.saturated_at.value))
        if wanted is None or floor > wanted:
            wanted, wanted_by = floor, "error-log evidence"
    if wanted is not None:
        floor = 2 if mpm == "prefork" else 2 * tpc
        wanted = max(wanted, floor) if mpm == "prefork" else max(floor, math.ceil(wanted / tpc) * tpc)
    # Hard bounds: what fits in memory, what httpd compiles in, what the kernel lets run.
    hard = [(bound, "memory"), (limit, "httpd's compile-time limit"),
            (task_bound, "the kernel's task limits (pid_max, threads-max)")]
    mrw, bound_by = min((b, why) for b, why in hard if b is not None)
    if wanted is not None and wanted < mrw:
        mrw, bound_by = wanted, wanted_by
    mrw = max(1, mrw)
    short_mib = 0.0
    if load_workers is not None and load_workers > bound:
        cost = float(inputs.per_worker_mib.value) + (
            0.0 if mpm == "prefork" else float(inputs.per_process_mib.value) / tpc)
        short_mib = (load_workers - bound) * cost
    settings = _section(mpm, mrw, tpc, kat, inputs, bound_by)
    values = {x.directive: x.value for x in settings if x.directive in _MPM_KEYS}
    assert is_fixed_point(mpm, values), (mpm, values)
    real_mrw = int(next(x.value for x in settings if x.directive == "MaxRequestWorkers"))
    capacity = real_mrw / s if s > 0 else math.inf
    wait = None
    if offered is not None:
        w = model.mean_queue_wait(real_mrw, offered, s)
        wait = None if math.isinf(w) else w * 1000
    evidence = ""
    if inputs.saturated_at.value:
        evidence = (f"; the error log shows MaxRequestWorkers {inputs.saturated_at.value} reached "
                    f"({inputs.saturated_at.source})")
    if load_workers is None and inputs.saturated_at.value:
        verdict = (f"sized from the error log: the server ran out of workers at MaxRequestWorkers "
                   f"{inputs.saturated_at.value} ({inputs.saturated_at.source}), so at least "
                   f"{EVIDENCE_MARGIN - 1:.0%} more, within the machine's bounds")
    elif load_workers is None:
        verdict = (f"no peak load given (--rate, --access-log or --status-url): MaxRequestWorkers is "
                   f"sized to what the CPUs can keep busy, not to all of memory ({bound} workers would "
                   "fit): " + _cpu_assumption(inputs, cpu_bound))
    elif cpu_bound is not None and load_workers > cpu_bound:
        verdict = (f"the CPUs cannot carry the load: {load_workers} workers needed, {cpu_bound} keep "
                   f"{inputs.cpus.value} CPUs busy ({_cpu_assumption(inputs, cpu_bound)}); more workers "
                   "would only queue")
    elif load_workers <= bound:
        verdict = (f"memory carries the load: {load_workers} workers needed at "
                   f"{max_utilisation:.0%} utilisation, {bound} fit in memory")
    else:
        verdict = (f"memory cannot carry the load: {load_workers} workers needed, {bound} fit; "
                   f"short by {load_workers - bound} workers (~{short_mib:.0f} MiB)")
    if evidence and not verdict.startswith("sized from the error log"):
        verdict += evidence
    return Recommendation(mpm, settings, usable, bound, load_workers, offered, real_mrw, capacity, wait,
                          verdict, short_mib, cpu_bound=cpu_bound, task_bound=task_bound, bound_by=bound_by)


# When the error log says MaxRequestWorkers was reached, at least this much more is recommended.
EVIDENCE_MARGIN = 1.25


# Workers beyond what the CPUs keep busy only queue; twice that covers bursts and the part of a
# worker's time the model does not see (slow clients, blocking I/O).
CPU_BURST = 2


def _cpu_bound(mpm: str, inputs: SizingInputs, s: float, kat: float, utilisation: float) -> int | None:
    """Workers the CPUs can keep busy: each request holds a worker for its occupancy (the service
    time, and on prefork/worker the keep-alive waits) but uses a CPU only for its CPU time (at most
    the service time), so cpus x occupancy / CPU time at the target utilisation, times CPU_BURST."""
    cpus, cpu = inputs.cpus.value, inputs.cpu_seconds.value
    if not cpus or not cpu or s <= 0:
        return None
    held = model.offered_load(mpm, 1.0, s, float(inputs.requests_per_connection.value),
                              float(inputs.gap.value), kat)  # worker-seconds per request
    return max(1, math.ceil(CPU_BURST * float(cpus) * held / min(float(cpu), s) / utilisation))


def _cpu_assumption(inputs: SizingInputs, cpu_bound: int | None) -> str:
    if cpu_bound is None:
        return "the CPU count is unknown"
    s = float(inputs.service_time.value)
    cpu = min(float(inputs.cpu_seconds.value), s)
    return (f"{cpu_bound} workers for {inputs.cpus.value} CPUs ({inputs.cpus.source}), each request "
            f"using {cpu * 1000:g} ms of CPU of its {s * 1000:g} ms ({inputs.cpu_seconds.source})")


_MPM_KEYS = {"StartServers", "MinSpareServers", "MaxSpareServers", "MinSpareThreads", "MaxSpareThreads",
             "ServerLimit", "ThreadLimit", "ThreadsPerChild", "MaxRequestWorkers",
             "AsyncRequestWorkerFactor", "MaxConnectionsPerChild"}


def _section(mpm: str, mrw: int, tpc: int, kat: float, inputs: SizingInputs,
             bound_by: str = "memory") -> list[Setting]:
    src = f"{inputs.per_worker_mib.value} MiB a worker ({inputs.per_worker_mib.source})"
    out: list[Setting] = []
    if mpm == "prefork":
        min_spare = max(1, min(5, mrw // 10))
        max_spare = max(min_spare + 1, min(10, mrw // 5))
        start = max(1, min(5, mrw, max_spare))
        out += [
            Setting("StartServers", start, "children forked at start (within MaxSpareServers, "
                    "so none is killed as idle right away)"),
            Setting("MinSpareServers", min_spare, "idle children kept ready for bursts"),
            Setting("MaxSpareServers", max_spare, "idle children above this are stopped"),
            Setting("ServerLimit", mrw, "equal to MaxRequestWorkers: no scoreboard reserved unused"),
            Setting("MaxRequestWorkers", mrw, f"set by the {bound_by} bound; memory at {src}"),
            Setting("MaxConnectionsPerChild", 10000 if _php(inputs) else 0,
                    "recycle children now and then (leaks in application code)" if _php(inputs)
                    else "children are never recycled"),
        ]
    else:
        tpc = max(1, min(tpc, mrw))
        mrw = max(tpc, mrw - mrw % tpc)
        servers = mrw // tpc
        min_spare = max(1, min(75, mrw // 4))
        max_spare = max(min_spare + tpc + 1, min(250, mrw // 2))
        start = max(1, min(servers, 3, max_spare // tpc))
        headroom = min(restart_headroom(mpm, servers), LIMITS[mpm]["ServerLimit"] - servers)
        out += [
            Setting("StartServers", start, "processes forked at start"),
            Setting("ServerLimit", servers + headroom,
                    f"MaxRequestWorkers / ThreadsPerChild = {servers}, plus {headroom} for processes that "
                    "finish their requests during a graceful restart"),
            Setting("ThreadLimit", tpc, "equal to ThreadsPerChild: no scoreboard reserved unused"),
            Setting("ThreadsPerChild", tpc, "threads per process (httpd's default of 25 unless "
                    "MaxRequestWorkers is smaller)"),
            Setting("MinSpareThreads", min_spare, "idle threads kept ready for bursts"),
            Setting("MaxSpareThreads", max_spare, "at least MinSpareThreads + ThreadsPerChild + 1, "
                    "as httpd requires"),
            Setting("MaxRequestWorkers", mrw, f"set by the {bound_by} bound; memory at {src}; a multiple of "
                    "ThreadsPerChild"),
        ]
        if mpm == "event":
            out.append(Setting("AsyncRequestWorkerFactor", 2, "httpd's default: connections a "
                               "process accepts per idle thread"))
        out.append(Setting("MaxConnectionsPerChild", 0, "processes are never recycled"))
    out += [
        Setting("KeepAlive", "On", "saves a TCP (and TLS) handshake per request"),
        Setting("KeepAliveTimeout", int(kat) if float(kat).is_integer() else kat,
                "idle keep-alive clients hold a worker this long on prefork/worker"
                if mpm != "event" else "idle connections wait in event's listener, not in a worker"),
        Setting("MaxKeepAliveRequests", 100 if mpm != "event" else 500,
                "requests per connection before it is closed"),
        Setting("Timeout", option_default("AT304", "max_seconds"),
                "bounds each read and write on a slow client (lint's AT304 threshold)"),
    ]
    return out


def _php(inputs: SizingInputs) -> bool:
    return "php" in str(inputs.per_worker_mib.source)
