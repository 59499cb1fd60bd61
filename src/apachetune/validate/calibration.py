"""mpmd calibrated where it runs: what httpd spends per request and per connection that mpmd
does not, measured side by side on this machine.

mpmd's `RequestCPU` and `ConnectionCPU` burn CPU standing for httpd's hooks, filters and
per-directory merges (per request) and its connection pools, hooks and lingering close (per
connection). How much that is depends on the CPU, the kernel and the httpd build, so a value
measured on one machine does not carry to another (on the same two cores the difference was
18 µs a request on a loaded run and 6-10 µs on a quiet one). `measure` runs httpd and mpmd
(with both stand-ins at 0) in turn, each serving a small file to 10 and to 300 clients, with
keep-alive and with a connection per request, and takes the median difference in CPU time per
request: keep-alive gives RequestCPU, the rest of the close case ConnectionCPU (the mean over 10 and 300 clients). Then mpmd runs
with them, and what it still spends beyond httpd (spending them costs a little) is taken off. CPU time per
request, not throughput, is compared: it is what a CPU-bound server's throughput follows, and
a busy machine moves it far less than it moves throughput.

Results are kept per MPM in the cache directory with the identity of what they were measured
on (CPU model and count, kernel, httpd version, mpmd's sources): a change of any recalibrates.
Without httpd there is nothing to measure against: mpmd's built-in default is used and the
validation report says so.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import psutil

from apachetune import httpd
from apachetune.paths import private_cache_dir, read_private, write_private
from apachetune.sizing.machine import cpu_allowance
from apachetune.validate.load import closed_loop, wrk_available, wrk_closed_loop
from apachetune.validate.mpmd_server import source_digest
from apachetune.validate.targets import make_target

if TYPE_CHECKING:
    from apachetune.simulate.cpu import CpuCosts, PoolSpan, Span

# mpmd's built-in stand-ins (src/mpmd/conf.c): used where nothing was measured.
DEFAULT_REQUEST_US = 18
DEFAULT_CONNECTION_US = 0
CACHE_NAME = "mpmd-calibration.json"
ROUNDS = 3  # of each server; the medians are kept
# Loads measured: a few clients and many, each with keep-alive and with a connection per request.
# httpd's CPU per request grows with its concurrency (more processes and threads to switch
# between: prefork 52-58 µs a keep-alive request at 10 clients, 66-78 at 300; mpmd without
# stand-ins 33-38 and 40-53), so the stand-ins are the mean of both ends: one value cannot be
# right at every load, and the mean of the two differences is within a few µs of the value that
# balances the two ratios. The ends are those `make bench` judges mpmd at (10 and 300 clients):
# calibrated at 10 and 200, its 300-client keep-alive cells ran 1.07-1.19 and its 10-client ones
# 0.89-1.03 (2026-11-25).
CONCURRENCY = (10, 300)
LOADS = [(c, keepalive) for c in CONCURRENCY for keepalive in (True, False)]
# The pools both servers run with: started in full, so nothing is forked while CPU is counted.
SECTIONS = {
    "prefork": {"StartServers": 320, "MinSpareServers": 300, "MaxSpareServers": 320, "ServerLimit": 320,
                "MaxRequestWorkers": 320, "MaxConnectionsPerChild": 0},
    "worker": {"StartServers": 16, "ServerLimit": 16, "ThreadLimit": 25, "ThreadsPerChild": 25,
               "MaxRequestWorkers": 400, "MinSpareThreads": 25, "MaxSpareThreads": 400},
    "event": {"StartServers": 16, "ServerLimit": 16, "ThreadLimit": 25, "ThreadsPerChild": 25,
              "MaxRequestWorkers": 400, "MinSpareThreads": 25, "MaxSpareThreads": 400},
}
COMMON = {"KeepAlive": "On", "KeepAliveTimeout": 5, "MaxKeepAliveRequests": 0, "Timeout": 60}
# prefork's CPU a new connection grows with its pool: with one listener each child blocks in
# accept(), and the kernel wakes the one that has waited longest, so a connection a request
# rotates over every idle child and each runs on a cache its last turn left long ago. httpd
# 2.4.71 unpinned, 10 wrk clients, what a connection adds to a keep-alive request (medians of 3
# runs of 2 s, 2026-11-27): 24.6 µs on 12 children, 33.4 on 40, 45.3 on 120, 46.4 on 320; the
# keep-alive request itself 47-50 on all four. So prefork is measured on a small pool too, at the
# few clients' end. worker's and event's listeners hand connections to threads of a few
# processes, and on the lab's Xeon their stock pools and large ones were within 0.95-1.12
# (benchmarks/pool_cpu_bench.py); on a 2-core EPYC (2026-12-06) httpd event spent 79-89 µs a
# request with a connection each on its stock 2 x 25 threads and 95-139 on the full 16 x 25
# (wrk -t1 -c10, three runs each, benchmarks/cpu_split.py), so they are measured on Debian's
# stock pool as well.
SMALL_POOLS = {"prefork": {"StartServers": 12, "MinSpareServers": 1, "MaxSpareServers": 12, "ServerLimit": 320,
                           "MaxRequestWorkers": 320, "MaxConnectionsPerChild": 0},
               **{mpm: {**SECTIONS[mpm], "StartServers": 2} for mpm in ("worker", "event")}}


def pool_workers(section: dict) -> int:
    """The workers a calibration section starts with (children, or processes x threads)."""
    return int(section["StartServers"]) * int(section.get("ThreadsPerChild", 1))


# Other work on the machine while calibrating, as a share of its CPUs (steal included), above
# which the figures are suspect: event's keep-alive request read 87 µs measured beside a loaded
# test suite and 63 on the same machine quiet, the same day. Such a calibration is kept (it is
# better than another machine's) but says so, and validate measures it again once the machine is
# quiet.
BUSY_SHARE = 0.25
BUSY_WINDOW = 0.5  # seconds watched before and after measuring


@dataclass
class Calibration:
    """One MPM's stand-ins and the measurements they come from (µs of CPU per request)."""

    mpm: str
    request_us: int
    connection_us: int
    httpd_keepalive_us: float
    mpmd_keepalive_us: float
    httpd_close_us: float
    mpmd_close_us: float
    checked_keepalive_us: float  # mpmd with the first estimate, before its overshoot is taken off
    checked_close_us: float
    rounds: int
    seconds: float
    measured_at: str
    # httpd again with nothing pinned (as an operator runs it, and as a server whose clients are
    # elsewhere has every core): what the simulation of this machine charges a request. Pinned to
    # one core beside its client on the other, a new connection cost prefork 13-16 µs more than a
    # keep-alive request; unpinned, 60-75 µs (cross-CPU wake-ups). None: kept by an older version.
    unpinned_keepalive_us: float | None = None
    unpinned_close_us: float | None = None
    # the same by clients (the ends of CONCURRENCY): {"10": [keep-alive µs, close µs], "300": [...]}
    # (httpd's CPU grows with its connections). None: kept by an older version.
    unpinned_by_clients: dict[str, list[float]] | None = None
    # the share of the machine's CPUs busy with other work just before or just after measuring
    # (the higher), 0-1. None: kept by an older version.
    background_busy: float | None = None
    # prefork: httpd unpinned on a small pool (SMALL_POOLS) at the few clients' end:
    # {"workers": 12, "clients": 10, "keepalive_us": ..., "close_us": ...}. None: not an MPM
    # measured so, or kept by an older version.
    unpinned_small_pool: dict[str, float] | None = None

    @property
    def busy(self) -> bool:
        """Measured beside other work: its figures may be high."""
        return self.background_busy is not None and self.background_busy >= BUSY_SHARE

    def caveat(self) -> str:
        """What a report adds when the machine was busy while this was measured, else ''."""
        if not self.busy:
            return ""
        return (f"; measured while {self.background_busy:.0%} of the CPUs were busy with other work, so its "
                "figures may be high: run `apachetune mpmd calibrate` on a quiet machine")

    def directives(self) -> dict[str, int]:
        return {"RequestCPU": self.request_us, "ConnectionCPU": self.connection_us}

    def describe(self) -> str:
        return (f"mpmd calibrated on this machine ({self.measured_at}): RequestCPU {self.request_us} µs, "
                f"ConnectionCPU {self.connection_us} µs (httpd {self.httpd_keepalive_us:.1f} / "
                f"{self.httpd_close_us:.1f} µs of CPU per keep-alive / per-connection request, mpmd without "
                f"them {self.mpmd_keepalive_us:.1f} / {self.mpmd_close_us:.1f})" + self.caveat())


def background_busy(seconds: float = BUSY_WINDOW) -> float:
    """The share (0-1) of this machine's CPUs busy over `seconds` while this process waits: other
    work, and on a virtual machine the time the host gave to others (steal)."""
    before = psutil.cpu_times()
    time.sleep(seconds)
    after = psutil.cpu_times()

    def part(names: tuple[str, ...]) -> float:
        return sum(getattr(after, n, 0.0) - getattr(before, n, 0.0) for n in names)

    # (guest time is already in user on Linux: not counted twice)
    busy = part(("user", "nice", "system", "irq", "softirq", "steal"))
    idle = part(("idle", "iowait"))
    return max(0.0, min(1.0, busy / (busy + idle))) if busy + idle > 0 else 0.0


def machine() -> dict[str, str]:
    """What a calibration holds for: it is measured again when any of these changes."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    # the CPUs it may run on and a cgroup's quota: a container's share of a host is another
    # machine (httpd event under a quota of 0.5 spent 544 us a request at half load, about 100
    # on the whole 2-CPU machine)
    allowed = cpu_allowance()
    share = f"{allowed.runs_on}" + (f" under a quota of {allowed.quota:g}" if allowed.quota is not None else "")
    return {"cpu": model or platform.processor() or platform.machine(), "cpus": str(os.cpu_count() or 1),
            "allowed": share, "kernel": platform.release(), "httpd": httpd.version() or "", "mpmd": source_digest()}


def stored() -> dict[str, Calibration]:
    """This machine's calibrations by MPM (none when they were measured elsewhere)."""
    return _kept(machine())


def _kept(identity: dict[str, str]) -> dict[str, Calibration]:
    try:
        return {mpm: Calibration(**entry) for mpm, entry in kept_entries(CACHE_NAME, "mpms", identity).items()}
    except (ValueError, TypeError):
        return {}  # a damaged entry is measured again, never trusted


def store(calibration: Calibration) -> None:
    """Keep `calibration` beside this machine's others (those of another machine are dropped)."""
    identity = machine()
    mpms = {mpm: asdict(c) for mpm, c in _kept(identity).items()}
    mpms[calibration.mpm] = asdict(calibration)
    keep_entries(CACHE_NAME, "mpms", mpms, identity)


def kept_entries(name: str, key: str, identity: dict[str, str]) -> dict[str, dict]:
    """The entries under `key` of the calibration cache's file `name` when it was written for
    `identity` (this machine's), else none: another machine's, a damaged or a foreign file is
    measured again, never trusted (httpd's calibrations and the load generators' alike)."""
    directory = private_cache_dir("calibration")
    raw = read_private(directory, name, 1 << 20) if directory else None
    try:
        data = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    if not isinstance(data, dict) or data.get("machine") != identity:
        return {}
    entries = data.get(key, {})
    return entries if isinstance(entries, dict) else {}


def keep_entries(name: str, key: str, entries: dict[str, dict], identity: dict[str, str]) -> None:
    """Write `entries` under `key` to the calibration cache's file `name`, for `identity`."""
    directory = private_cache_dir("calibration")
    if directory is not None:
        write_private(directory, name, json.dumps({"machine": identity, key: entries}, indent=1).encode())


def two_cpus() -> tuple[int, int] | None:
    """The first two CPUs this process may run on (the server's, the client's), or None with
    fewer: a container's cpuset need not hold CPUs 0 and 1."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
    return (cpus[0], cpus[1]) if len(cpus) >= 2 else None


def _pinning() -> tuple[list[str], list[str]]:
    """Server and client each on a CPU of its own when taskset and two CPUs allow (as `make
    bench`), so that the two do not steal each other's cache and core."""
    pair = two_cpus()
    if pair is None or not shutil.which("taskset") or not wrk_available():
        return [], []
    return ["taskset", "-c", str(pair[0])], ["taskset", "-c", str(pair[1])]


def server_cpu_seconds(pid: int) -> float:
    """CPU time of a server: its processes (each one's CPU clock: the nanoseconds its threads
    ran, those that ended included, where Linux lets us read it), and the children it reaped.

    Not psutil's user + system alone: Linux counts those in 10 ms ticks by sampling, and summed
    over 200 prefork children for a few seconds of 20-50 µs requests the rounding was the size
    of the figure measured (mpmd's close cost once read as 1 µs under load)."""
    try:
        parent = psutil.Process(pid)
        procs = [parent, *parent.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
        except psutil.Error:
            continue
        on_cpu = process_cpu_clock(p.pid)
        total += (t.user + t.system) if on_cpu is None else on_cpu
        if p.pid == pid:  # processes that exited meanwhile: only the parent's tick counts have them
            total += t.children_user + t.children_system
    return total


def process_cpu_clock(pid: int) -> float | None:
    """Another process's CPU-time clock (Linux: clock id ((~pid) << 3) | CPUCLOCK_SCHED, what
    clock_getcpuclockid(3) returns), in seconds; None where it cannot be read."""
    try:
        return time.clock_gettime(((~pid) << 3) | 2)
    except (OSError, OverflowError, AttributeError):
        return None


def cpu_per_request(kind: str, mpm: str, directives: dict, seconds: float,
                    pins: tuple[list[str], list[str]],
                    loads: list[tuple[int, bool]] | None = None) -> dict[tuple[int, bool], float]:
    """Microseconds of the server's CPU per request under each of `loads` (LOADS), one
    closed-loop run each, on one fresh server."""
    server_pin, client_pin = pins
    out = {}
    with make_target(kind, mpm, directives, server_pin) as target:
        for conc, keepalive in loads or LOADS:
            # connections opened, first requests served, lazy set-up done: not counted
            closed_loop(target.host, target.port, "/index.html", conc, 0.3, keepalive)
            before = server_cpu_seconds(target.proc.pid)
            requests = _load(target, conc, keepalive, seconds, client_pin)
            out[conc, keepalive] = (server_cpu_seconds(target.proc.pid) - before) / max(1, requests) * 1e6
    return out


def _load(target, conc: int, keepalive: bool, seconds: float, client_pin: list[str]) -> int:
    if wrk_available():
        result = wrk_closed_loop(target.host, target.port, "/index.html", conc, seconds, keepalive,
                                 wrapper=client_pin)
        return int(result["requests_ok"])
    return closed_loop(target.host, target.port, "/index.html", conc, seconds, keepalive).ok


def measure(mpm: str, seconds: float = 1.0, rounds: int = ROUNDS,
            progress: Callable[[str], None] = lambda s: None) -> Calibration:
    """Measure httpd against mpmd (stand-ins at 0) for one MPM; the two alternate which goes
    first each round, so that drift on a shared machine spreads over both."""
    if httpd.binary() is None:
        raise FileNotFoundError("calibrating mpmd needs Apache httpd (apache2 or httpd) installed")
    pins = _pinning()
    base = {**SECTIONS[mpm], **COMMON}
    busy_before = background_busy()
    runs: dict[tuple[str, tuple[int, bool]], list[float]] = {}

    def run(kind: str, label: str, directives: dict, round_no: int, pinned=pins, loads=None) -> None:
        progress(f"calibrating mpmd {mpm}: {label} (round {round_no + 1}/{rounds})")
        for load, us in cpu_per_request(kind, mpm, directives, seconds, pinned, loads).items():
            runs.setdefault((label, load), []).append(us)

    def mean(label: str, keepalive: bool) -> float:
        """The median over rounds, averaged over the concurrencies."""
        return statistics.fmean(statistics.median(runs[label, (c, keepalive)]) for c in CONCURRENCY)

    for i in range(rounds):
        for kind in ("httpd", "mpmd") if i % 2 == 0 else ("mpmd", "httpd"):
            run(kind, kind, base if kind == "httpd" else {**base, "RequestCPU": 0, "ConnectionCPU": 0}, i)
    h_ka, h_close, m_ka, m_close = mean("httpd", True), mean("httpd", False), mean("mpmd", True), mean("mpmd", False)
    request = max(0.0, h_ka - m_ka)
    connection = max(0.0, (h_close - m_close) - request)
    # Checked: mpmd with these stand-ins spends a little more than they say (spending them reads
    # the thread's CPU clock, a system call, and overshoots by part of a slice: ~4 µs a request
    # measured here); what it spends beyond httpd is taken off.
    check = {**base, "RequestCPU": round(request), "ConnectionCPU": round(connection)}
    for i in range(rounds):
        run("mpmd", "check", check, i)
    c_ka, c_close = mean("check", True), mean("check", False)
    u_ka, u_close, label = h_ka, h_close, "httpd"
    if pins[0]:  # measured pinned: httpd once more as it runs for an operator
        for i in range(rounds):
            run("httpd", "unpinned", base, i, pinned=([], []))
        u_ka, u_close, label = mean("unpinned", True), mean("unpinned", False), "unpinned"
    by_clients = {str(c): [round(statistics.median(runs[label, (c, ka)]), 1) for ka in (True, False)]
                  for c in CONCURRENCY}
    few = CONCURRENCY[0]  # the same few clients on a small pool, as the simulation runs it
    for i in range(rounds):
        run("httpd", "small pool", {**SMALL_POOLS[mpm], **COMMON}, i, pinned=([], []),
            loads=[(few, True), (few, False)])
    small_pool = {"workers": pool_workers(SMALL_POOLS[mpm]), "clients": few,
                  **{key: round(statistics.median(runs["small pool", (few, ka)]), 1)
                     for key, ka in (("keepalive_us", True), ("close_us", False))}}
    over_request = c_ka - h_ka
    over_connection = (c_close - h_close) - over_request
    return Calibration(mpm, max(0, round(request - over_request)), max(0, round(connection - over_connection)),
                       round(h_ka, 1), round(m_ka, 1), round(h_close, 1), round(m_close, 1), round(c_ka, 1),
                       round(c_close, 1), rounds, seconds, time.strftime("%Y-%m-%d"), round(u_ka, 1),
                       round(u_close, 1), by_clients, round(max(busy_before, background_busy()), 2), small_pool)


def _turned_off() -> bool:
    """APACHETUNE_CALIBRATION=off: nothing kept is used and nothing is measured."""
    return os.environ.get("APACHETUNE_CALIBRATION", "").lower() == "off"


# httpd's own CPU a request (µs) with a connection kept alive, and what a request that opens a
# connection adds, at 10 and at 300 connections, where nothing was measured on this machine:
# validate's httpd 2.4.71 (its modules, a small file) on the lab's 2-core machine, wrk unpinned,
# the medians of 3 runs of 3 s (2026-11-26; server CPU = the processes' CPU clocks;
# docs/simulate.md "httpd's own CPU").
ASSUMED_HTTPD_US = {"prefork": ((10, 48.7, 49.2), (300, 64.5, 40.8)),
                    "worker": ((10, 49.6, 50.8), (300, 60.9, 37.8)),
                    "event": ((10, 57.7, 75.0), (300, 58.8, 84.2))}


def httpd_cpu(mpm: str) -> tuple[Span, str]:
    """httpd's own CPU (seconds) a keep-alive request and what a new connection adds, at a few
    and at many connections ((connections, request, connection) of each end, simulate's
    CpuCosts.span), for the simulation, and where they come from: this machine's calibration
    when one is kept (never measured here: a simulation must take seconds; one kept by an older
    version has its means only, the same at both ends), else the lab machine's figures (also with
    APACHETUNE_CALIBRATION=off)."""
    known = None if _turned_off() else stored().get(mpm)
    if known is None:
        lab = ASSUMED_HTTPD_US[mpm]
        return (_seconds(lab[0]), _seconds(lab[1])), \
            "assumed: a 2-core lab machine's; `apachetune mpmd calibrate` measures this one"
    source = f"measured on this machine ({known.measured_at}, apachetune mpmd calibrate){known.caveat()}"
    if known.unpinned_by_clients:
        ends = sorted((int(c), ka, max(0.0, close - ka)) for c, (ka, close) in known.unpinned_by_clients.items())
        return (_seconds(ends[0]), _seconds(ends[-1])), source
    keepalive, close = known.httpd_keepalive_us, known.httpd_close_us
    if known.unpinned_keepalive_us is not None and known.unpinned_close_us is not None:
        keepalive, close = known.unpinned_keepalive_us, known.unpinned_close_us
    flat = (keepalive, max(0.0, close - keepalive))
    return (_seconds((CONCURRENCY[0], *flat)), _seconds((CONCURRENCY[-1], *flat))), source


# What a connection adds (µs) on a small pool and on the full one (the calibration's SECTIONS), at
# 10 clients, where nothing was measured on this machine: the lab machine's, as SMALL_POOLS says
# (2026-11-27; prefork's only: worker's and event's pools did not move it there).
ASSUMED_POOL_US = {"prefork": ((SMALL_POOLS["prefork"]["StartServers"], 24.6), (SECTIONS["prefork"]["StartServers"], 46.4))}


def httpd_pool(mpm: str) -> PoolSpan | None:
    """What a new connection costs httpd on a small pool and on the full one ((workers,
    connection seconds) of each, simulate's CpuCosts.pool): this machine's calibration when it
    measured both; for prefork, one kept from before the small pool was measured has the lab's
    ratio of the two applied to its full pool's figure, and with nothing measured here the lab's
    figures. None: the pool does not move it (worker and event measured before their small pool
    was, or not here)."""
    lab = ASSUMED_POOL_US.get(mpm)
    full_workers = pool_workers(SECTIONS[mpm])
    known = None if _turned_off() else stored().get(mpm)
    full = (known.unpinned_by_clients or {}).get(str(CONCURRENCY[0])) if known else None
    if known is None or full is None:  # nothing measured here at the full pool's few clients: the lab's
        return None if lab is None else ((lab[0][0], lab[0][1] / 1e6), (lab[1][0], lab[1][1] / 1e6))
    full_connection = max(0.0, full[1] - full[0])
    small = known.unpinned_small_pool
    if small:
        return ((small["workers"], max(0.0, small["close_us"] - small["keepalive_us"]) / 1e6),
                (full_workers, full_connection / 1e6))
    if lab is None:
        return None
    (w0, lab_small), (_, lab_full) = lab
    return (w0, full_connection * lab_small / lab_full / 1e6), (full_workers, full_connection / 1e6)


# What EnableMMAP On (httpd's default, and the calibration's) adds to httpd's CPU for a request of a
# small static file: the file's mmap and munmap and the page fault between them. httpd 2.4.71 pinned
# to one core, 10 keep-alive clients, the 17-byte file, EnableMMAP On and Off alternating, 3 rounds
# of each MPM: prefork 11.6-15.0 µs, worker 12.1-17.7, event 5.9-18.2; the median 12.5 (2026-12-07,
# 2-core AMD EPYC VM; docs/benchmarks.md, "The static tail is mostly EnableMMAP").
MMAP_US = 12.5


def machine_costs(mpm: str, client_request: float = 0.0, client_connection: float = 0.0,
                  client_threads: int = 1, maps_files: bool = True) -> CpuCosts:
    """What `simulate --httpd-cpu machine` charges a request: httpd's CPU (httpd_cpu, growing
    with the connections open; on prefork httpd_pool, with the pool) and a local client's.
    `maps_files` False (EnableMMAP Off): less the mapping the figures were measured with."""
    from apachetune.simulate.cpu import CpuCosts

    span, source = httpd_cpu(mpm)
    if not maps_files:
        (n0, r0, c0), (n1, r1, c1) = span
        less = MMAP_US / 1e6
        span = (n0, max(0.0, r0 - less), c0), (n1, max(0.0, r1 - less), c1)
        source += f"; {MMAP_US:g} µs less a request: EnableMMAP Off (measured with each file mapped)"
    return CpuCosts.spanning(span, client_request, client_connection, source, client_threads, httpd_pool(mpm))


def _seconds(point: tuple[float, float, float]) -> tuple[float, float, float]:
    n, request_us, connection_us = point
    return n, request_us / 1e6, connection_us / 1e6


def for_mpm(mpm: str, progress: Callable[[str], None] = lambda s: None) -> tuple[dict[str, int], str]:
    """mpmd's stand-in directives for `mpm` on this machine and a note saying where they come
    from: the stored calibration (measured again when it was measured beside other work and the
    machine is quiet now); else measured now when httpd is installed (and stored); else mpmd's
    defaults, with a warning. APACHETUNE_CALIBRATION=off uses the defaults."""
    defaults = {"RequestCPU": DEFAULT_REQUEST_US, "ConnectionCPU": DEFAULT_CONNECTION_US}
    if _turned_off():
        return defaults, (f"mpmd not calibrated (APACHETUNE_CALIBRATION=off): its defaults RequestCPU "
                          f"{DEFAULT_REQUEST_US} µs, ConnectionCPU {DEFAULT_CONNECTION_US} µs")
    known = stored().get(mpm)
    if known is not None and not (known.busy and httpd.binary() is not None and background_busy() < BUSY_SHARE):
        return known.directives(), known.describe()
    if httpd.binary() is None:
        return defaults, (f"mpmd is not calibrated on this machine (no httpd to measure it against): it runs "
                          f"with its defaults, RequestCPU {DEFAULT_REQUEST_US} µs and ConnectionCPU "
                          f"{DEFAULT_CONNECTION_US} µs, measured elsewhere; its throughput here may differ "
                          "from httpd's by a third (docs/mpmd.md)")
    try:
        seconds = min(30.0, max(1.0, float(os.environ.get("APACHETUNE_CALIBRATION_SECONDS", "1"))))
    except ValueError:
        seconds = 1.0
    again = known is not None  # kept, but measured beside other work, and the machine is quiet now
    calibration = measure(mpm, seconds=seconds, rounds=ROUNDS, progress=progress)
    store(calibration)
    return calibration.directives(), calibration.describe() + (
        "; measured again now (the kept one was measured beside other work), kept for the next runs" if again
        else "; measured now, kept for the next runs")
