"""The load generators' own CPU on this machine: what ab and wrk spend a request when they run
beside httpd on loopback, measured here (`apachetune mpmd calibrate`).

`simulate` charges a closed loop's client this CPU on the server's cores (its --client-cpu, by
default the generator it assumes on loopback). The figures are the client's, not httpd's, and
they move with the machine as httpd's do: the lab's 2-core Xeon measured ab at 21 µs a
keep-alive request (+43 a new connection) and wrk at 22 (+45); a 2-core EPYC served ab's close
loop at 20,800 req/s, which those figures cap at 1 / 64 µs = 15,600 from ab's one thread alone.
So calibrate measures them where it measures httpd: each generator against httpd event (the
calibration's section) at 10 and 100 clients, with keep-alive and with a connection a request,
its CPU read from the kernel's accounting of the reaped process (getrusage RUSAGE_CHILDREN:
exact for the whole process, not sampled ticks), over the requests it completed; the median of
the rounds, the mean over the two concurrencies. Kept beside httpd's calibration with the same
machine identity: another CPU, kernel or httpd measures again.
"""

from __future__ import annotations

import re
import shutil
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from apachetune.errors import UsageError
from apachetune.simulate.cpu import CLIENT_CPU
from apachetune.validate import calibration
from apachetune.validate.load import check_loopback, closed_loop, run_with_cpu
from apachetune.validate.targets import make_target

GENERATORS = ("ab", "wrk")
CLIENTS = (10, 100)
CACHE_NAME = "generator-cpu.json"
# What simulate charges without a measurement here: the lab machine's (simulate.cpu.CLIENT_CPU)
LAB_US = CLIENT_CPU
LAB_SOURCE = "a 2-core lab machine's figures, as `apachetune mpmd calibrate` has not measured this one's"


@dataclass(frozen=True)
class GeneratorCpu:
    """A load generator's CPU on this machine (µs of one core)."""

    name: str
    request_us: float  # a keep-alive request: reading its response, writing the next
    connection_us: float  # what a new connection adds: the connect and the close
    by_clients: dict[str, list[float]]  # {"10": [keep-alive µs, close µs], "100": [...]}, the medians
    rounds: int
    seconds: float
    measured_at: str
    background_busy: float  # the share of the CPUs busy with other work around the measurement

    def describe(self) -> str:
        return f"measured on this machine, {self.measured_at}"


def installed() -> list[str]:
    """The load generators on this machine's PATH."""
    return [g for g in GENERATORS if shutil.which(g)]


def _command(name: str, url: str, clients: int, keepalive: bool, seconds: float) -> list[str]:
    """The generator as an operator types it: ab one thread, wrk its own default of two."""
    whole = str(max(1, round(seconds)))
    if name == "ab":  # -t stops it at the time; -n only caps it far above what it reaches
        return ["ab", "-q", "-r", *(["-k"] if keepalive else []), "-c", str(clients), "-t", whole, "-n", "10000000",
                url]
    return ["wrk", f"-c{clients}", f"-d{whole}s", *([] if keepalive else ["-H", "Connection: close"]), url]


def requests_completed(name: str, out: str) -> int | None:
    """The requests the generator says it completed."""
    pattern = r"Complete requests:\s+(\d+)" if name == "ab" else r"(?m)^\s*(\d+) requests in "
    m = re.search(pattern, out)
    return int(m.group(1)) if m else None


def run_once(name: str, url: str, clients: int, keepalive: bool, seconds: float) -> float:
    """µs of the generator's CPU a request over one run against `url` (loopback)."""
    returncode, stdout, stderr, cpu = run_with_cpu(_command(name, url, clients, keepalive, seconds), seconds + 60)
    requests = requests_completed(name, stdout)
    if returncode != 0 or not requests:
        raise UsageError(f"{name} failed against {url}: {(stderr or stdout).strip()[:300]}")
    return cpu / requests * 1e6


def measure(name: str, seconds: float = 1.0, rounds: int = 3,
            progress: Callable[[str], None] = lambda s: None) -> GeneratorCpu:
    """Measure one generator against httpd event on loopback (a fresh server, its pool warmed)."""
    busy_before = calibration.background_busy()
    runs: dict[tuple[int, bool], list[float]] = {}
    with make_target("httpd", "event", {**calibration.SECTIONS["event"], **calibration.COMMON}) as target:
        check_loopback(target.host)
        url = f"http://{target.host}:{target.port}/index.html"
        closed_loop(target.host, target.port, "/index.html", max(CLIENTS), 0.3, True)  # the pool started
        for i in range(rounds):
            progress(f"measuring {name}'s CPU (round {i + 1}/{rounds})")
            for clients in CLIENTS:
                for keepalive in (True, False):
                    runs.setdefault((clients, keepalive), []).append(
                        run_once(name, url, clients, keepalive, seconds))
    by_clients = {str(c): [round(statistics.median(runs[c, ka]), 1) for ka in (True, False)] for c in CLIENTS}
    request = statistics.fmean(ka for ka, _ in by_clients.values())
    connection = statistics.fmean(max(0.0, close - ka) for ka, close in by_clients.values())
    return GeneratorCpu(name, round(request, 1), round(connection, 1), by_clients, rounds, seconds,
                        time.strftime("%Y-%m-%d"), round(max(busy_before, calibration.background_busy()), 2))


def stored() -> dict[str, GeneratorCpu]:
    """This machine's measured generators (none when measured elsewhere, or turned off:
    APACHETUNE_CALIBRATION=off)."""
    if calibration._turned_off():
        return {}
    try:
        kept = calibration.kept_entries(CACHE_NAME, "generators", calibration.machine())
        return {name: GeneratorCpu(**entry) for name, entry in kept.items()}
    except (ValueError, TypeError):
        return {}  # a damaged entry is measured again, never trusted


def store(measured: GeneratorCpu) -> None:
    """Keep `measured` beside this machine's other generators (another machine's are dropped)."""
    kept = {name: asdict(g) for name, g in stored().items()}
    kept[measured.name] = asdict(measured)
    calibration.keep_entries(CACHE_NAME, "generators", kept, calibration.machine())


def figures() -> dict[str, tuple[float, float, str]]:
    """Each generator's (µs a keep-alive request, µs a new connection adds, where they come
    from): this machine's when measured, else the lab's."""
    known = stored()
    out = {}
    for name, (request, connection) in LAB_US.items():
        g = known.get(name)
        out[name] = (g.request_us, g.connection_us, g.describe()) if g else (request, connection, LAB_SOURCE)
    return out
