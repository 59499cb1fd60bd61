"""Spot checks an operator would make: an MPM section file, httpd under ab or wrk on validate's
/app/sleep application, and `apachetune simulate FILE` as typed (the section, the clients, the
requests or seconds, the service time; nothing else).

    python benchmarks/cli_spot_checks.py [CELL ...] [--also "--client-first 0"]
    python benchmarks/cli_spot_checks.py o1 o2 ... [--also "--first-pass 1"]
    python benchmarks/cli_spot_checks.py h1 h2 h3 --also "--first-pass 1 --client-first 0"

Each cell starts a fresh httpd 2.4.71 with the section, waits 1.5 s, runs `ab -r [-k] -c C -n N`
or `wrk -t1 -cC -dNs --latency` on loopback, then simulates the same with the CLI (ab's books
with --requests; wrk's latencies as wrk prints them, its 2 s timeout applied). `--also ARGS`
simulates each cell once more with those options added (to see what a default changed).
`--prefix PREFIX` runs a source build's httpd instead of the installed one (`make install` of a
tag with mod_lua: `HTTPD_LUA=1 tools/build_httpd.sh 2.4.27 /tmp/httpd-2.4.27`), and simulates
that version (`--httpd-version`, read from `PREFIX/bin/httpd -v`).
The o cells are open loops instead: validate's asyncio client, Poisson arrivals for 10 s each on a
new connection, /app/sleep for an exponential draw, every request waited for; simulated with
`--rate R --service exp:X --seconds 10 --drain`.
Prints a markdown row a cell (docs/benchmarks.md, "Spot checks: section files under ab and
wrk"). Loopback only, bounded (ab -n, wrk -d). Needs apache2, ab and wrk.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from apachetune import httpd  # noqa: E402
from apachetune.validate.load import open_loop  # noqa: E402
from apachetune.validate.section import load_directives  # noqa: E402
from apachetune.validate.targets import make_target  # noqa: E402

SPARE_10 = "StartServers 2\nMinSpareThreads 10\nMaxSpareThreads 30\nThreadsPerChild 10\n"
STOCK_THREADS = "StartServers 2\nMinSpareThreads 25\nMaxSpareThreads 75\nThreadsPerChild 25\nMaxRequestWorkers 150\n"
STOCK_PREFORK = "StartServers 5\nMinSpareServers 5\nMaxSpareServers 10\n"
# name: (MPM, section, client, clients, requests (ab) or seconds (wrk), service ms, keep-alive)
CELLS = {
    "p1": ("prefork", STOCK_PREFORK + "MaxRequestWorkers 30\n", "ab", 60, 3000, 100, False),
    "w2": ("worker", SPARE_10 + "MaxRequestWorkers 40\n", "ab", 40, 4000, 30, True),
    "e3": ("event", SPARE_10 + "MaxRequestWorkers 40\n", "ab", 80, 8000, 30, True),
    "e4": ("event", STOCK_THREADS, "wrk", 50, 6, 200, True),
    "p5": ("prefork", STOCK_PREFORK + "MaxRequestWorkers 150\n", "ab", 200, 4000, 20, False),
    "w6": ("worker", STOCK_THREADS + "MaxConnectionsPerChild 100\n", "ab", 100, 5000, 20, False),
    "p8": ("prefork", STOCK_PREFORK + "MaxRequestWorkers 20\n", "ab", 30, 2000, 50, True),
    "e9": ("event", SPARE_10 + "MaxRequestWorkers 20\nAsyncRequestWorkerFactor 1\n", "wrk", 100, 6, 50, True),
    "w10": ("worker", "StartServers 1\nServerLimit 3\nMinSpareThreads 50\nMaxSpareThreads 100\nThreadLimit 50\n"
            "ThreadsPerChild 50\nMaxRequestWorkers 150\n", "ab", 300, 6000, 50, False),
    "e11": ("event", "StartServers 3\nMinSpareThreads 75\nMaxSpareThreads 250\nThreadsPerChild 25\n"
            "MaxRequestWorkers 400\nServerLimit 16\n", "ab", 500, 10000, 100, False),
    "p12": ("prefork", "StartServers 10\nMinSpareServers 10\nMaxSpareServers 20\nMaxRequestWorkers 256\n"
            "KeepAliveTimeout 2\n", "wrk", 100, 6, 100, True),
    "w13": ("worker", "StartServers 3\nMinSpareThreads 75\nMaxSpareThreads 250\nThreadsPerChild 25\n"
            "MaxRequestWorkers 100\n", "wrk", 150, 6, 50, True),
    "e14": ("event", STOCK_THREADS, "ab", 200, 12000, 50, True),
    "e15": ("event", "StartServers 3\nMinSpareThreads 10\nMaxSpareThreads 30\nThreadsPerChild 10\n"
            "MaxRequestWorkers 30\n", "wrk", 60, 6, 20, True),
    "e16": ("event", STOCK_THREADS, "ab", 300, 8000, 10, True),
}
# event cells held out of the fit of the loopback client-first default (run by name; docs/simulate.md)
HELD_OUT = {
    "h1": ("event", STOCK_THREADS, "wrk", 400, 6, 50, True),
    "h2": ("event", "StartServers 3\nMinSpareThreads 20\nMaxSpareThreads 60\nThreadsPerChild 20\n"
           "MaxRequestWorkers 60\n", "ab", 100, 10000, 40, True),
    "h3": ("event", "StartServers 2\nMinSpareThreads 25\nMaxSpareThreads 75\nThreadsPerChild 25\n"
           "MaxRequestWorkers 50\n", "wrk", 80, 6, 30, True),
    # held out of every fit (2026-12-06; docs/benchmarks.md, "Held-out cells and static files")
    "n1": ("prefork", STOCK_PREFORK + "MaxRequestWorkers 100\n", "wrk", 50, 6, 20, True),
    "n2": ("worker", STOCK_THREADS, "wrk", 200, 6, 30, True),
    "n3": ("event", "StartServers 2\nMinSpareThreads 25\nMaxSpareThreads 75\nThreadsPerChild 25\n"
           "MaxRequestWorkers 400\nServerLimit 16\n", "ab", 300, 15000, 50, False),
    "n4": ("prefork", STOCK_PREFORK + "MaxRequestWorkers 50\n", "ab", 100, 5000, 20, True),
    "n5": ("worker", SPARE_10 + "MaxRequestWorkers 40\n", "ab", 60, 6000, 20, False),
    "n6": ("event", SPARE_10 + "MaxRequestWorkers 40\n", "ab", 40, 10000, 5, True),
    "n8": ("event", STOCK_THREADS, "wrk", 100, 6, 5, True),
    # held out of every fit (2026-12-06, later: docs/benchmarks.md, "More held-out cells")
    "n9": ("prefork", STOCK_PREFORK + "MaxRequestWorkers 150\n", "ab", 300, 20000, 10, False),
    "n10": ("worker", STOCK_THREADS, "wrk", 300, 6, 100, True),
    "n11": ("event", STOCK_THREADS + "MaxConnectionsPerChild 500\n", "ab", 200, 20000, 20, False),
    "n12": ("prefork", STOCK_PREFORK + "MaxRequestWorkers 10\n", "wrk", 40, 6, 10, True),
    "n13": ("event", "StartServers 2\nMinSpareThreads 5\nMaxSpareThreads 15\nThreadsPerChild 5\n"
            "MaxRequestWorkers 20\nAsyncRequestWorkerFactor 4\n", "ab", 100, 10000, 10, True),
    "n14": ("worker", "StartServers 1\nServerLimit 2\nMinSpareThreads 32\nMaxSpareThreads 128\nThreadLimit 64\n"
            "ThreadsPerChild 64\nMaxRequestWorkers 128\n", "ab", 64, 20000, 2, True),
    "n15": ("event", STOCK_THREADS, "wrk", 1000, 6, 100, True),
    "n16": ("prefork", STOCK_PREFORK + "MaxRequestWorkers 256\n", "ab", 500, 20000, 50, True),
    # event's processes of 8, 16 and 50 threads: held out of the fit of the loopback client-first
    # share's process-size exponent (docs/simulate.md, "event's parked requests")
    "v1": ("event", "StartServers 2\nMinSpareThreads 8\nMaxSpareThreads 24\nThreadsPerChild 8\n"
           "MaxRequestWorkers 32\n", "ab", 64, 8000, 20, True),
    "v2": ("event", "StartServers 2\nServerLimit 2\nThreadLimit 50\nThreadsPerChild 50\nMinSpareThreads 25\n"
           "MaxSpareThreads 100\nMaxRequestWorkers 100\n", "wrk", 150, 6, 30, True),
    "v3": ("event", "StartServers 4\nMinSpareThreads 16\nMaxSpareThreads 64\nThreadsPerChild 16\n"
           "MaxRequestWorkers 64\n", "ab", 120, 12000, 25, True),
}
# Static files: Debian's stock sections, a 17-byte /index.html (service 0 ms: `--service 1us`), wrk
# with its own default of two threads, as an operator types it
STATIC = {
    "s1": ("prefork", STOCK_PREFORK + "MaxRequestWorkers 150\n", "ab", 100, 30000, 0, False),
    "s2": ("prefork", STOCK_PREFORK + "MaxRequestWorkers 150\n", "ab", 50, 50000, 0, True),
    "s3": ("prefork", STOCK_PREFORK + "MaxRequestWorkers 150\n", "wrk", 50, 5, 0, True),
    "s4": ("worker", STOCK_THREADS, "ab", 100, 30000, 0, False),
    "s5": ("worker", STOCK_THREADS, "ab", 100, 50000, 0, True),
    "s6": ("worker", STOCK_THREADS, "wrk", 100, 5, 0, True),
    "s7": ("event", STOCK_THREADS, "ab", 100, 30000, 0, False),
    "s8": ("event", STOCK_THREADS, "ab", 100, 50000, 0, True),
    "s9": ("event", STOCK_THREADS, "wrk", 100, 5, 0, True),
}
# name: (MPM, section, arrivals a second, mean service ms): open loops on pools that grow
OPEN_CELLS = {
    "o1": ("prefork", STOCK_PREFORK + "MaxRequestWorkers 150\n", 400, 50),
    "o2": ("worker", STOCK_THREADS, 600, 100),
    "o3": ("event", SPARE_10 + "MaxRequestWorkers 40\n", 350, 100),
    "o4": ("prefork", STOCK_PREFORK + "MaxRequestWorkers 20\n", 180, 100),
    "o5": ("event", STOCK_THREADS, 700, 100),
}
OPEN_SECONDS = 10


def _percentile(out: str, q: int) -> float | None:
    m = re.search(rf"(?m)^\s*{q}%\s+(\d+)", out)
    return float(m.group(1)) if m else None


def _wrk_percentile(out: str, q: int) -> float:
    """wrk --latency's q% line (its own line: "  99%  12.34ms"), in ms."""
    return _wrk_ms(re.search(rf"(?m)^\s+{q}%\s+(\S+)", out).group(1))  # type: ignore[union-attr]


def _wrk_ms(text: str) -> float:
    m = re.match(r"([0-9.]+)(us|ms|s)", text)
    assert m, text
    return float(m.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]


@contextlib.contextmanager
def _httpd(mpm: str, conf: Path):
    """A fresh httpd with the section, 1.5 s after its start (its first maintenance pass then
    comes about half a second into the load)."""
    with make_target("httpd", mpm, load_directives(str(conf), mpm, keep_server_limit=True)) as t:
        time.sleep(1.5)
        yield t


VERSION: list[str] = []  # --httpd-version V for the simulations, with --prefix


def use_build(prefix: Path) -> None:
    """Run the source build at `prefix` (its bin/httpd, its modules) instead of the installed
    httpd, and simulate its version."""
    exe = prefix / "bin" / "httpd"
    if not exe.exists():
        sys.exit(f"{prefix} has no bin/httpd (a `make install` prefix: tools/build_httpd.sh)")
    try:
        done = subprocess.run([str(exe), "-v"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        sys.exit(f"{exe} -v could not run: {e}")
    found = re.search(r"Apache/(\d+\.\d+\.\d+)", done.stdout)
    if done.returncode != 0 or not found:
        sys.exit(f"{exe} -v printed no httpd version (exit {done.returncode}): {(done.stderr or done.stdout).strip()[:200]}")
    version = found.group(1)
    if not (prefix / "modules" / "mod_lua.so").exists():
        sys.exit(f"{prefix} has no mod_lua (build it with HTTPD_LUA=1 tools/build_httpd.sh)")
    httpd.binary = lambda: str(exe)
    httpd.module_path = lambda name: prefix / "modules" / f"mod_{name}.so"
    loads = httpd.load_module_line

    def load_module_line(name: str) -> str:  # a source build has User and Group in mod_unixd
        return loads(name) + ("\n" + loads("unixd") if name.startswith("mpm_") else "")

    httpd.load_module_line = load_module_line
    VERSION[:] = ["--httpd-version", version]


def _simulate(conf: Path, mpm: str, args: list[str]) -> dict:
    """`apachetune simulate CONF --mpm M ARGS --format json`, as typed."""
    cmd = [sys.executable, "-m", "apachetune", "simulate", str(conf), "--mpm", mpm, *args, *VERSION,
           "--format", "json"]
    return json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT).stdout)


def _path(ms: int) -> str:
    """validate's application sleeping `ms`, or its static file (0)."""
    return f"/app/sleep?ms={ms}" if ms else "/index.html"


def _wrk_threads(name: str) -> list[str]:
    """The spot cells run wrk -t1 (validate's client); the static ones wrk's own default (-t2)."""
    return [] if name in STATIC else ["-t1"]


def measured(mpm: str, conf: Path, client: str, clients: int, n: int, ms: int, keepalive: bool,
             threads: list[str]) -> dict:
    with _httpd(mpm, conf) as t:
        url = f"http://{t.host}:{t.port}{_path(ms)}"
        if client == "ab":
            out = subprocess.run(["ab", "-r", *(["-k"] if keepalive else []), "-c", str(clients), "-n", str(n), url],
                                 capture_output=True, text=True, timeout=300).stdout
            return {"rps": float(re.search(r"Requests per second:\s*([0-9.]+)", out).group(1)),  # type: ignore[union-attr]
                    "failed": int(re.search(r"Failed requests:\s*(\d+)", out).group(1)),  # type: ignore[union-attr]
                    "p50": _percentile(out, 50), "p99": _percentile(out, 99)}
        out = subprocess.run(["wrk", *threads, f"-c{clients}", f"-d{n}s", "--latency", url],
                             capture_output=True, text=True, timeout=300).stdout
        errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
        return {"rps": float(re.search(r"Requests/sec:\s*([0-9.]+)", out).group(1)),  # type: ignore[union-attr]
                "failed": f"{errors.group(2)} read, {errors.group(4)} timeout" if errors else "0",
                "p50": _wrk_percentile(out, 50), "p99": _wrk_percentile(out, 99)}


def simulated(mpm: str, conf: Path, client: str, clients: int, n: int, ms: int, keepalive: bool,
              extra: list[str]) -> dict:
    s = _simulate(conf, mpm, ["--clients", str(clients), "--service", f"{ms}ms" if ms else "1us",
                              *(["--requests", str(n)] if client == "ab" else ["--seconds", str(n)]),
                              *([] if keepalive else ["--no-keepalive"]), *extra])
    if client == "ab":  # ab's own table: its failures count too
        table = s["ab"]["percentiles_ms"]
        return {"rps": s["ab"]["requests_per_second"], "failed": s["ab"]["failed_length"],
                "p50": table["50"], "p99": table["99"]}
    wrk = s["latency_as_wrk_ms"]
    return {"rps": s["throughput_rps"], "failed": f"{s['errors'].get('reset', 0)} read, {s['wrk_timeouts']} timeout",
            "p50": wrk["p50"], "p99": wrk["p99"]}


def open_row(name: str, conf: Path, also: str) -> str:
    """An open-loop cell: httpd, then the CLI (and again with `also`): req/s; errors; p50 / p99."""
    mpm, text, rate, ms = OPEN_CELLS[name]
    conf.write_text(text)
    with _httpd(mpm, conf) as t:
        r = open_loop(t.host, t.port, "/app/sleep", rate, OPEN_SECONDS, timeout=30, seed=1, exp_service_ms=ms)
    real = {"rps": r.throughput, "failed": sum(r.errors.values()), "p50": 1000 * (r.percentile(50) or 0),
            "p99": 1000 * (r.percentile(99) or 0)}
    sims = []
    for extra in ([], *([also.split()] if also else [])):
        s = _simulate(conf, mpm, ["--rate", str(rate), "--service", f"exp:{ms}ms", "--seconds", str(OPEN_SECONDS),
                                  "--drain", *extra])
        sims.append({"rps": s["throughput_rps"], "failed": sum(s["errors"].values()),
                     "p50": s["latency_ms"]["p50"], "p99": s["latency_ms"]["p99"]})
    return (f"| {name} | {mpm} | {text.strip().replace(chr(10), ', ')} | Poisson {rate}/s, exp {ms} ms | {cell(real)} | "
            + " | ".join(cell(s) for s in sims) + " |")


def cell(figures: dict) -> str:
    return f"{figures['rps']:,.0f}; {figures['failed']}; {figures['p50']:,.0f} / {figures['p99']:,.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cells", nargs="*",
                        help=f"of {', '.join([*CELLS, *HELD_OUT, *STATIC, *OPEN_CELLS])} (default: {', '.join(CELLS)})")
    parser.add_argument("--also", default="", help="options added to a second simulation of each cell")
    parser.add_argument("--prefix", type=Path, help="a source build's prefix to run instead of the installed httpd")
    args = parser.parse_args()
    if args.prefix:
        use_build(args.prefix.resolve())
    closed = {**CELLS, **HELD_OUT, **STATIC}
    unknown = [c for c in args.cells if c not in closed and c not in OPEN_CELLS]
    if unknown:
        parser.error(f"no cell {', '.join(unknown)}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cells or CELLS:
            conf = Path(tmp) / f"{name}.conf"
            if name in OPEN_CELLS:
                print(open_row(name, conf, args.also), flush=True)
                continue
            mpm, text, client, clients, n, ms, keepalive = closed[name]
            conf.write_text(text + ("" if keepalive else "KeepAlive Off\n"))
            spec = (mpm, conf, client, clients, n, ms, keepalive)
            threads = _wrk_threads(name)
            real = measured(*spec, threads)
            sims = [simulated(*spec, []), *([simulated(*spec, args.also.split())] if args.also else [])]
            load = (f"`ab {'-k ' if keepalive else ''}-c {clients} -n {n}`" if client == "ab"
                    else f"`wrk {' '.join([*threads, ''])}-c{clients} -d{n}s`{'' if keepalive else ' (close)'}")
            what = f"{ms} ms" if ms else "static file"
            print(f"| {name} | {mpm} | {text.strip().replace(chr(10), ', ')} | {load}, {what} | {cell(real)} | "
                  + " | ".join(cell(s) for s in sims) + " |", flush=True)


if __name__ == "__main__":
    main()
