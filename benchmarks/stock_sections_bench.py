"""Debian's stock MPM sections under ab on loopback, against `apachetune simulate`.

    python benchmarks/stock_sections_bench.py [ROUNDS]

What an operator tries first: `ab -c 100` (a connection per request, then `-k`) against the
stock mpm_prefork/worker/event.conf on a small file, with ab on the server's machine. Each run
starts a fresh httpd 2.4.71 (the pool grows from StartServers as it would) and samples, besides
ab's summary, the children running (4 times a second) and server-status's BusyWorkers (about 20
times a second). Beside it, the simulation of the same run with `--httpd-cpu machine
--client-cpu ab` (this machine's calibration; ab's CPU in its one thread).

It keeps the question docs/simulate.md leaves open in view: with ab's CPU in its own thread the
simulation loses as few keep-alive requests as httpd does, but keeps event's pool at 2
processes and a few busy workers where httpd grows it to 5 with half its requests in workers.

Writes the `## Stock sections under ab, simulated` section of docs/benchmarks.md.
"""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from parse_bench import write_section  # noqa: E402

from apachetune import httpd  # noqa: E402
from apachetune.simulate import simulate  # noqa: E402
from apachetune.simulate.cpu import CLIENT_CPU, autogroup_enabled  # noqa: E402
from apachetune.simulate.workload import ServiceTime, Workload  # noqa: E402
from apachetune.validate import calibration  # noqa: E402
from apachetune.validate.section import load_directives  # noqa: E402
from apachetune.validate.targets import make_target  # noqa: E402

HEADING = "## Stock sections under ab, simulated"
CLIENTS = 100
REQUESTS = {False: 20000, True: 40000}  # a connection per request; keep-alive
# Debian's mods-available/mpm_*.conf
STOCK = {
    "prefork": {"StartServers": 5, "MinSpareServers": 5, "MaxSpareServers": 10, "MaxRequestWorkers": 150},
    "worker": {"StartServers": 2, "MinSpareThreads": 25, "MaxSpareThreads": 75, "ThreadsPerChild": 25,
               "MaxRequestWorkers": 150},
    "event": {"StartServers": 2, "MinSpareThreads": 25, "MaxSpareThreads": 75, "ThreadsPerChild": 25,
              "MaxRequestWorkers": 150},
}


def section(mpm: str) -> dict[str, object]:
    threads = 1 if mpm == "prefork" else 25
    s = load_directives(None, mpm, 150, threads, keep_server_limit=True)
    s.update(STOCK[mpm])
    return s


def measured(mpm: str, keepalive: bool) -> dict[str, object]:
    """One ab run on a fresh server: its summary, the children over time, BusyWorkers."""
    with make_target("httpd", mpm, section(mpm)) as t:
        time.sleep(1.0)
        children: list[int] = []
        busy: list[int] = []
        done = threading.Event()

        def count_children() -> None:
            while not done.is_set():
                children.append(len(t.pids()) - 1)  # (the parent)
                time.sleep(0.25)

        def sample_status() -> None:
            # (a thread of its own: on prefork under -k the status request waits for a free child,
            # and the children's count must not wait with it)
            while not done.is_set():
                try:
                    text = urllib.request.urlopen(f"http://{t.host}:{t.port}/server-status?auto", timeout=2).read()
                    m = re.search(rb"BusyWorkers: (\d+)", text)
                    if m:
                        busy.append(int(m.group(1)) - 1)  # (the status request's own worker)
                except OSError:
                    pass
                time.sleep(0.05)

        watchers = [threading.Thread(target=count_children), threading.Thread(target=sample_status)]
        for w in watchers:
            w.start()
        cmd = ["ab", "-r", *(["-k"] if keepalive else []), "-c", str(CLIENTS), "-n", str(REQUESTS[keepalive]),
               f"http://{t.host}:{t.port}/index.html"]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300).stdout
        done.set()
        for w in watchers:
            w.join()

    def number(pattern: str) -> float:
        m = re.search(pattern, out)
        return float(m.group(1)) if m else 0.0

    return {"rps": number(r"Requests per second:\s*([0-9.]+)"), "length": int(number(r"Length: (\d+)")),
            "taken": number(r"Time taken for tests:\s*([0-9.]+)"), "children": children,
            "busy": statistics.median(busy) if busy else 0,
            "p95": number(r"(?m)^\s*95%\s+(\d+)"), "p99": number(r"(?m)^\s*99%\s+(\d+)")}


def simulated(mpm: str, keepalive: bool, autogroup: bool | None = None) -> dict[str, object]:
    costs = calibration.machine_costs(mpm, *(x / 1e6 for x in CLIENT_CPU["ab"]), client_threads=1)
    w = Workload(ServiceTime.parse("1us"), clients=CLIENTS, keepalive=keepalive, requests=REQUESTS[keepalive],
                 turnaround=30e-6)
    r = simulate(mpm, section(mpm), w, 600, cores=2, costs=costs, autogroup=autogroup)
    assert r.ab is not None
    return {"rps": r.ab["requests_per_second"], "length": r.ab["failed_length"], "taken": r.ab["time_taken_s"],
            "children": [int(row["processes"]) for row in r.timeline],
            "busy": statistics.median(row["busy_workers"] for row in r.timeline[1:]) if len(r.timeline) > 1 else 0,
            "p95": r.latency_ms["p95"], "p99": r.latency_ms["p99"]}


def pool(children: list[int]) -> str:
    """The pool's steps: 2 -> 3 -> 5."""
    steps: list[int] = []
    for c in children:
        if c > 0 and (not steps or c != steps[-1]):
            steps.append(c)
    return " → ".join(map(str, steps))


def main() -> int:
    if httpd.binary() is None or shutil.which("ab") is None:
        print("needs httpd and ab", file=sys.stderr)
        return 1
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    rows = []
    for mpm in ("prefork", "worker", "event"):
        for keepalive in (False, True):
            real = [measured(mpm, keepalive) for _ in range(rounds)]
            sim = simulated(mpm, keepalive)  # as this machine's kernel shares the cores (autogroup: a run queue)
            shared = simulated(mpm, keepalive, autogroup=False)  # processor sharing, side by side
            load = f"-k -n {REQUESTS[True]}" if keepalive else f"-n {REQUESTS[False]}"
            rows.append(
                f"| {mpm} | {load} | " + " / ".join(f"{r['rps']:,.0f}" for r in real) + f" | {sim['rps']:,.0f} | "
                + f"{sim['rps'] / statistics.median(r['rps'] for r in real):.2f} | "
                + " / ".join(str(r["length"]) for r in real) + f" | {sim['length']} | "
                + " / ".join(pool(r["children"]) for r in real) + f" | {pool(sim['children'])} | "  # type: ignore[arg-type]
                + " / ".join(f"{r['busy']:g}" for r in real) + f" | {sim['busy']:g} | "
                + " / ".join(f"{r['p95']:.0f}, {r['p99']:.0f}" for r in real) + f" | {sim['p95']:.1f}, {sim['p99']:.1f} | "
                + f"{shared['length']}; {shared['busy']:g}; {shared['p95']:.1f}, {shared['p99']:.1f} |")
            print(rows[-1], flush=True)
    body = "\n".join([
        HEADING, "",
        f"`python benchmarks/stock_sections_bench.py`: httpd {httpd.version() or '?'} with Debian's stock "
        f"mpm_*.conf, `ab -r [-k] -c {CLIENTS}` on validate's small file, ab on the same machine, a fresh server "
        f"each run ({rounds} runs); simulated with `--httpd-cpu machine --client-cpu ab --turnaround 30us` "
        "(ab's CPU in its one thread). Children: the pool's steps during the run; busy workers: the median "
        "of server-status's BusyWorkers (about 20 samples a second; simulated: once a second).", "",
        "| MPM | ab | httpd req/s | simulated | sim / real | httpd Length | simulated | httpd children | simulated | "
        "httpd busy workers | simulated | httpd p95, p99 ms | simulated | processor sharing: Length; busy; p95, p99 |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|", *rows, "",
        "sim / real: the simulated req/s over the median of httpd's runs. p95, p99: ab's percentiles (whole "
        "ms) and the simulation's. The simulation shares the cores as this machine's kernel does (autogroup "
        f"{'on: httpd threads in a run queue, cpu.RunQueue' if autogroup_enabled() else 'off: processor sharing'}); "
        "the last column is processor sharing's, side by side.", "",
        "Processor sharing kept ab's thread waiting for its share beside httpd's and so the requests in ab: "
        "few busy workers, no growth of event's pool, few closes, every request as long as the next. Under "
        "autogroup ab's thread runs at once and httpd's queue, served in what is for the requests random "
        "order: the busy workers, closes and p99 of keep-alive runs move to httpd's; event without keep-alive "
        "keeps its connections in workers where httpd's listener, waiting for a core itself, leaves them in "
        "the accept queue (the listener's CPU is not modelled). httpd's own runs with a connection a request "
        "spread by 20-40% (the keep-alive ones within 1%): read those cells' sim / real against that spread. "
        "On worker and event with keep-alive the memory-map lock (EnableMMAP On) adds to the tail "
        "(docs/simulate.md, \"httpd's own CPU\").",
    ])
    write_section(ROOT / "docs" / "benchmarks.md", HEADING, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
