"""Plans (what load to apply) and verdicts (predicted vs measured, pass or fail).

- sweep: closed-loop concurrency 0.5x, 1x, 1.5x, 2x MaxRequestWorkers on /app/sleep?ms=S;
  throughput must saturate at MaxRequestWorkers / S within 15%.
- keepalive: MaxRequestWorkers idle keep-alive clients, then one new request: prefork and
  worker must stall (workers pinned), event must answer at once.
- keepalive-off: 1.5x MaxRequestWorkers clients with keep-alive on, then with a connection per
  request; both must saturate at MaxRequestWorkers / S within 15%.
- openloop: Poisson arrivals at 50% and 70% of capacity with exponential service times (mean
  S), i.e. an M/M/c queue; the mean wait for a worker must match the M/M/c queue replayed on the
  run's own arrivals and service times within 25% (plus 3 ms for connection set-up noise); the
  Erlang C long-run mean is reported beside it (a short run scatters widely around it).
- static: a SURGE-shaped document set (heavy-tailed sizes, Zipf popularity) under a closed
  loop of MaxRequestWorkers connections (measured, no verdict).
- memory: every request of the sweep holds K KiB of application memory (--app-kb); the peak
  PSS of the target's processes during the sweep must be within 15% (+ 1 MiB) of the sizing
  model's prediction from the idle server measured as `apachetune size` does (facts.measure_httpd):
  parent + processes x per process + MaxRequestWorkers x (per worker + K), per worker
  replaced by --per-worker-mb when given (model.peak_memory).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psutil

from apachetune.errors import UsageError
from apachetune.sizing import model
from apachetune.sizing.facts import HttpdFacts, measure_httpd
from apachetune.validate.load import (
    IdleClients,
    LoadResult,
    closed_loop,
    open_loop,
    time_one_request,
    wrk_available,
    wrk_closed_loop,
)
from apachetune.validate.targets import Target, make_target, memory_mib


@dataclass
class Verdict:
    name: str
    predicted: float | str | None
    measured: float | str | None
    unit: str
    passed: bool | None  # None: measured, nothing to judge
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ValidationSetup:
    target: str  # mpmd or httpd
    mpm: str
    directives: dict[str, Any]
    max_request_workers: int
    service_ms: float
    duration: float
    per_worker_mib: float | None = None  # the sizing model's figure; default: measured idle
    use_wrk: bool | None = None  # closed-loop sweep with wrk: None = when installed
    app_kb: int = 0  # application memory each /app/sleep request holds (KiB)

    @property
    def threads_per_child(self) -> int:
        return 1 if self.mpm == "prefork" else int(self.directives.get("ThreadsPerChild", 1))

    @property
    def app_path(self) -> str:
        return f"/app/sleep?ms={self.service_ms:g}&kb={self.app_kb}"


@dataclass
class ValidationReport:
    setup: ValidationSetup
    points: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    samples: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"target": self.setup.target, "mpm": self.setup.mpm, "directives": self.setup.directives,
                "service_ms": self.setup.service_ms, "points": self.points,
                "verdicts": [v.to_json() for v in self.verdicts], "samples": self.samples}

    @property
    def passed(self) -> bool:
        return all(v.passed is not False for v in self.verdicts)


class Sampler:
    """Polls the status page and the memory of the target's processes in the background.

    Memory is also read on its own, every `memory_interval` (reading /proc is cheap, the status
    page may wait for a free worker), into `peak_pss_mib`: a worker that frees its request's
    memory at the end of each request holds it only most of the time, so the peak needs many
    looks."""

    def __init__(self, target: Target, interval: float = 0.25, memory_interval: float = 0.05):
        self.target, self.interval, self.memory_interval = target, interval, memory_interval
        self.samples: list[dict[str, Any]] = []
        self.peak_pss_mib = 0.0
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, daemon=True),
                         threading.Thread(target=self._run_memory, daemon=True)]

    def _run(self):
        start = time.monotonic()
        while not self._stop.is_set():
            st = self.target.status()
            pss, uss = memory_mib(self.target.pids())
            self.peak_pss_mib = max(self.peak_pss_mib, pss)
            self.samples.append({"t": round(time.monotonic() - start, 2), "busy": int(st.get("BusyWorkers", 0) or 0),
                                 "idle": int(st.get("IdleWorkers", 0) or 0),
                                 "processes": int(st.get("Processes", 0) or 0) if "Processes" in st else None,
                                 "pss_mib": round(pss, 2), "uss_mib": round(uss, 2)})
            self._stop.wait(self.interval)

    def _run_memory(self):
        while not self._stop.wait(self.memory_interval):
            self.peak_pss_mib = max(self.peak_pss_mib, memory_mib(self.target.pids())[0])

    def __enter__(self):
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        for t in self._threads:
            t.join(5)
        return False


def _point(kind: str, x: float, r: LoadResult) -> dict[str, Any]:
    return {"plan": kind, "x": x, **r.to_json()}


def run_plans(setup: ValidationSetup, plans: list[str], progress: Callable[[str], None] = lambda s: None
              ) -> ValidationReport:
    report = ValidationReport(setup)
    mrw, s = setup.max_request_workers, setup.service_ms / 1000
    path = setup.app_path
    capacity = mrw / s
    with make_target(setup.target, setup.mpm, setup.directives) as target:
        time.sleep(1.2)  # one maintenance cycle: let the pool form
        if "sweep" in plans:
            idle = _idle_facts(target, setup)
            with Sampler(target) as sampler:
                best = 0.0
                for factor in (0.5, 1.0, 1.5, 2.0):
                    c = max(1, int(mrw * factor))
                    progress(f"sweep: {c} connections")
                    if setup.use_wrk is not False and wrk_available():
                        point = {"plan": "sweep", "x": c, **wrk_closed_loop(target.host, target.port, path, c,
                                                                            setup.duration)}
                    else:
                        point = {**_point("sweep", c, closed_loop(target.host, target.port, path, c, setup.duration)),
                                 "driver": "asyncio"}
                    report.points.append(point)
                    if factor >= 1.0:
                        best = max(best, point["throughput_rps"])
            report.samples += sampler.samples
            err = abs(best - capacity) / capacity
            report.verdicts.append(Verdict(
                "saturation throughput", round(capacity, 1), round(best, 1), "req/s", err <= 0.15,
                f"MaxRequestWorkers {mrw} / service time {setup.service_ms:g} ms; off by {err:.0%}"))
            peak = sampler.peak_pss_mib
            report.verdicts.append(memory_verdict(setup, idle, peak))
        if "static" in plans:
            from apachetune.validate.documents import (
                SurgeParams,
                request_paths,
                summary,
                write_documents,
            )

            docs = write_documents(target.docroot, SurgeParams())
            progress(f"static: {len(docs)} SURGE documents, {mrw} connections")
            r = closed_loop(target.host, target.port, "/", mrw, setup.duration, paths=request_paths(docs, 5000))
            report.points.append({**_point("static", mrw, r), "documents": summary(docs)})
            report.verdicts.append(Verdict("static SURGE workload", None, round(r.throughput, 1), "req/s", None,
                                           f"p99 {r.to_json()['latency_ms']['p99']} ms, errors {r.errors or 0}"))
        if "openloop" in plans:
            # The fixed cost of one request outside the queue (client, connection set-up, sleep
            # overshoot), measured unloaded, one at a time, and taken off every wait below.
            base = open_loop(target.host, target.port, "/app/sleep", 20.0, 1.0, exp_service_ms=None)
            overhead = sorted(base.latencies)[len(base.latencies) // 2] if base.latencies else 0.0
            for util in (0.5, 0.7):
                rate = capacity * util
                progress(f"open loop: {rate:.0f} req/s")
                r = open_loop(target.host, target.port, "/app/sleep", rate, max(setup.duration, 3.0),
                              exp_service_ms=setup.service_ms)
                report.points.append(_point("openloop", round(rate, 1), r))
                if not r.latencies:
                    continue
                mean_wait = max(0.0, sum(r.waits) / len(r.waits) - overhead)
                # The M/M/c queue replayed on this run's own arrivals and service times (a worker
                # is busy for the service time plus the per-request overhead): a few seconds of
                # Poisson arrivals scatter widely around Erlang C's long-run mean, which is shown.
                waits = model.sample_path_waits([(a, sv + overhead) for a, sv in r.jobs], mrw)
                predicted = sum(waits) / len(waits)
                long_run = model.mean_queue_wait(mrw, rate * s, s)
                ok = abs(mean_wait - predicted) <= 0.25 * predicted + 0.003
                report.verdicts.append(Verdict(
                    f"queueing delay at {util:.0%} utilisation", round(predicted * 1000, 2),
                    round(mean_wait * 1000, 2), "ms", ok,
                    f"M/M/c ({mrw} workers) on this run's {len(r.jobs)} arrivals and service times; Erlang C "
                    f"long-run mean {long_run * 1000:.2f} ms; measured: mean (latency - own service time) - "
                    f"{overhead * 1000:.1f} ms overhead"))
        if "keepalive-off" in plans:
            # The same closed loop (1.5x MaxRequestWorkers) with keep-alive on, then with a new
            # connection per request: while the service time dwarfs a loopback connect, both
            # must saturate at MaxRequestWorkers / service time.
            c = max(1, int(1.5 * mrw))
            for keepalive in (True, False):
                label = "on" if keepalive else "off"
                progress(f"keep-alive {label}: {c} connections")
                r = closed_loop(target.host, target.port, path, c, setup.duration, keepalive=keepalive)
                report.points.append({**_point(f"keep-alive {label}", c, r), "driver": "asyncio"})
                err = abs(r.throughput - capacity) / capacity
                report.verdicts.append(Verdict(
                    f"saturation with keep-alive {label}", round(capacity, 1), round(r.throughput, 1), "req/s",
                    err <= 0.15, f"{c} clients, {'one connection each' if keepalive else 'a connection a request'}; "
                                 f"off by {err:.0%}; errors {dict(r.errors) or 0}"))
        if "keepalive" in plans:
            progress(f"keep-alive: {mrw} idle clients")
            with IdleClients(target.host, target.port, mrw):
                elapsed = time_one_request(target.host, target.port, "/index.html", 1.5)
            pinned = elapsed is None
            expect = setup.mpm in ("prefork", "worker")
            report.verdicts.append(Verdict(
                "idle keep-alive clients pin workers", "pinned" if expect else "not pinned",
                "pinned" if pinned else f"served in {elapsed * 1000:.0f} ms", "", pinned == expect,
                f"{mrw} idle clients, then one new request"))
    return report


# The memory verdict's tolerance: 15% of the prediction, plus 1 MiB for what PSS cannot pin
# down on a server whose whole footprint is a few MiB (mpmd: under 2 MiB without --app-kb):
# the share of shared pages moves as processes come and go, the allocator keeps or returns a
# few hundred KiB, the per-worker figure is a high percentile (see docs/validate.md).
MEMORY_TOLERANCE, MEMORY_SLACK_MIB = 0.15, 1.0


def _idle_facts(target: Target, setup: ValidationSetup) -> HttpdFacts | str:
    """The idle server measured as `apachetune size` measures a live httpd, with the configured
    ThreadsPerChild (mpmd's children have one listener thread besides, httpd's two); a
    sentence instead when it cannot be measured.

    Like a live server's, its workers have served requests first (MaxRequestWorkers
    connections of /app/sleep without application memory, a few rounds each), so the figures
    include what serving a request leaves behind (buffers, the allocator's retained heap, a
    thread's touched stack), not only a freshly forked worker."""
    closed_loop(target.host, target.port, f"/app/sleep?ms={setup.service_ms:g}", setup.max_request_workers,
                min(2.0, max(0.3, 4 * setup.service_ms / 1000)))
    try:
        return measure_httpd(target.parent(), threads_per_child=setup.threads_per_child)
    except (psutil.Error, UsageError) as e:
        return f"idle server not measured: {e}"


def memory_verdict(setup: ValidationSetup, idle: HttpdFacts | str, peak: float) -> Verdict:
    """Peak PSS during the sweep against model.peak_memory: within 15% + 1 MiB."""
    name, unit = "peak memory at full concurrency", "MiB PSS"
    if isinstance(idle, str):
        return Verdict(name, None, round(peak, 1), unit, None, idle)
    mrw, tpc = setup.max_request_workers, setup.threads_per_child
    per_worker = setup.per_worker_mib if setup.per_worker_mib else idle.per_worker_mib
    source = "--per-worker-mb" if setup.per_worker_mib else "measured idle"
    per_process = 0.0 if tpc == 1 else idle.per_process_mib
    app = setup.app_kb / 1024
    predicted = model.peak_memory(mrw, per_worker, idle.parent_pss_mib, per_process, tpc, app)
    processes = mrw if tpc == 1 else math.ceil(mrw / tpc)
    off = peak - predicted
    ok = abs(off) <= MEMORY_TOLERANCE * predicted + MEMORY_SLACK_MIB
    pct = f"{abs(off) / predicted:.0%}" if predicted > 0 else "-"
    return Verdict(name, round(predicted, 1), round(peak, 1), unit, ok,
                   f"parent {idle.parent_pss_mib:.2f} + {processes} processes x {per_process:.2f} + "
                   f"{mrw} workers x ({per_worker:.2f} a worker ({source}) + {app:.2f} application) MiB; "
                   f"off by {off:+.1f} MiB ({pct})")


def compare_table(reports: dict[str, ValidationReport]) -> list[list[str]]:
    """Rows of a side-by-side table: one column per MPM."""
    rows = []
    names = []
    for rep in reports.values():
        for p in rep.points:
            key = (p["plan"], p["x"])
            if key not in names:
                names.append(key)
    for plan, x in names:
        row = [f"{plan} {x:g}"]
        for rep in reports.values():
            match = [p for p in rep.points if (p["plan"], p["x"]) == (plan, x)]
            row.append(f"{match[0]['throughput_rps']:.0f} rps, p99 {match[0]['latency_ms']['p99']} ms"
                       if match else "–")
        rows.append(row)
    for name in {v.name for rep in reports.values() for v in rep.verdicts}:
        row = [name]
        for rep in reports.values():
            v = [v for v in rep.verdicts if v.name == name]
            row.append(f"{v[0].measured} {v[0].unit} ({'pass' if v[0].passed else 'fail' if v[0].passed is False else '-'})"
                       if v else "–")
        rows.append(row)
    return rows


def before_after(before: ValidationSetup, after: ValidationSetup, progress: Callable[[str], None] = lambda s: None
                 ) -> ValidationReport:
    """The same workload on the current and the tuned section: the tuned one must be no worse on
    p99 latency (within 10%) and on errors. The load is as many closed-loop keep-alive clients
    as the larger MaxRequestWorkers: what the bigger section is sized for. (More would overload
    both, and event then closes keep-alive connections whose request finds every worker busy,
    as httpd does: errors on both sides that say nothing about the tuning.)"""
    report = ValidationReport(after)
    conc = max(1, max(before.max_request_workers, after.max_request_workers))
    path = after.app_path
    results = {}
    for label, setup in (("before", before), ("after", after)):
        progress(f"{label}: {conc} connections")
        with make_target(setup.target, setup.mpm, setup.directives) as target:
            time.sleep(1.2)
            r = closed_loop(target.host, target.port, path, conc, setup.duration)
        results[label] = r
        report.points.append({**_point("before/after", conc, r), "config": label})
    b, a = results["before"], results["after"]
    bp99, ap99 = b.percentile(99) or 0.0, a.percentile(99) or 0.0
    report.verdicts.append(Verdict("tuned p99 no worse than current", round(bp99 * 1000, 1), round(ap99 * 1000, 1),
                                   "ms", ap99 <= bp99 * 1.10 + 0.002, f"{conc} connections on both"))
    berr, aerr = sum(b.errors.values()), sum(a.errors.values())
    report.verdicts.append(Verdict("tuned errors no more than current", berr, aerr, "errors", aerr <= berr))
    report.verdicts.append(Verdict("throughput before/after", round(b.throughput, 1), round(a.throughput, 1),
                                   "req/s", None))
    return report
