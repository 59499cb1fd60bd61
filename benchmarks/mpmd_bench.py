"""mpmd against real Apache httpd: same MPM, same directives, same file, same load generator.

For each MPM (prefork, worker, event), both servers run side by side in one run, pinned to
the first CPU this process may run on with wrk on the second, serving the same 45-byte file:
wrk with keep-alive at c=10 and c=300, and with `Connection: close` at c=10 and c=300; median
of REPEAT runs of DURATION seconds each.
Also the PSS per worker of each server when idle after the load. Writes the `## mpmd vs httpd`
section of docs/benchmarks.md.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from parse_bench import write_section  # noqa: E402

from apachetune import httpd  # noqa: E402
from apachetune.validate import calibration  # noqa: E402
from apachetune.validate.calibration import server_cpu_seconds  # noqa: E402
from apachetune.validate.load import wrk_closed_loop  # noqa: E402
from apachetune.validate.targets import make_target  # noqa: E402

DURATION = int(os.environ.get("DURATION", "3"))
REPEAT = int(os.environ.get("REPEAT", "3"))
# The calibration's pools (room for 300 clients), but started small and grown by the load, as a
# server is: the bench judges the whole server, the calibration only its CPU a request.
GROWN = {
    "prefork": {"StartServers": 64, "MinSpareServers": 32, "MaxSpareServers": 64},
    "worker": {"StartServers": 4, "MinSpareThreads": 75},
    "event": {"StartServers": 4, "MinSpareThreads": 75},
}
MPM_DIRECTIVES = {mpm: {**calibration.SECTIONS[mpm], **GROWN[mpm]} for mpm in GROWN}
COMMON = calibration.COMMON  # keep-alive settings: the same as the calibration's
SERVER_CPU, CLIENT_CPU = calibration.two_cpus() or (-1, -1)


def wrk(port: int, conns: int, close: bool) -> tuple[float, int]:
    """Requests/s and the number of requests of one wrk run, wrk pinned to the client's CPU."""
    r = wrk_closed_loop("127.0.0.1", port, "/index.html", conns, DURATION, keepalive=not close,
                        wrapper=["taskset", "-c", str(CLIENT_CPU)])
    return r["throughput_rps"], r["requests_ok"]


def core_busy() -> dict[int, tuple[int, int]]:
    """(busy, total) jiffies per CPU from /proc/stat."""
    out = {}
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("cpu") and line[3].isdigit():
            name, *vals = line.split()
            v = [int(x) for x in vals]
            idle = v[3] + v[4]
            out[int(name[3:])] = (sum(v) - idle, sum(v))
    return out


def measured_run(pid: int, port: int, conns: int, close: bool) -> tuple[float, float, float]:
    """Requests/s, the server's CPU microseconds per request, and how busy the load generator's
    core (CLIENT_CPU) was, of one wrk run. Above ~85% the client, not the server, was measured."""
    before, cores = server_cpu_seconds(pid), core_busy()
    rps, n = wrk(port, conns, close)
    after = core_busy()
    c = CLIENT_CPU
    busy, total = (after[c][i] - cores[c][i] for i in (0, 1)) if c in after and c in cores else (0, 1)
    return rps, (server_cpu_seconds(pid) - before) / max(1, n) * 1e6, 100 * busy / max(1, total)


def pss_per_worker(pid: int, threads: int) -> float:
    import psutil

    parent = psutil.Process(pid)
    kids = [c for c in parent.children(recursive=True) if c.name().startswith(("apache2", "httpd", "mpmd"))]
    total = sum(c.memory_full_info().pss for c in kids)
    workers = max(1, len(kids) * threads)
    return total / workers / 1024


def one_run(kind: str, mpm: str, directives: dict, conns: int, close: bool) -> tuple[float, float, float, float]:
    """Requests/s, CPU µs per request, client core busy % and PSS per worker (KiB) of one
    server for one wrk run. The servers are validate's targets: the same httpd configuration
    that validate --target httpd runs and that mpmd is calibrated against."""
    threads = 1 if mpm == "prefork" else directives["ThreadsPerChild"]
    with make_target(kind, mpm, directives, ["taskset", "-c", str(SERVER_CPU)]) as s:
        time.sleep(1)
        rps, us, client = measured_run(s.proc.pid, s.port, conns, close)
        return rps, us, client, pss_per_worker(s.proc.pid, threads)


def calibrate(mpms: list[str]) -> tuple[dict[str, dict[str, int]], list[str]]:
    """mpmd's CPU stand-ins, calibrated on this machine by the code validate uses (and kept for
    it): measured again here unless CALIBRATE=0, which takes the kept ones. Returns them per MPM
    and the docs' table rows."""
    standins, calibrated = {}, []
    for mpm in mpms:
        c = calibration.stored().get(mpm) if os.environ.get("CALIBRATE", "1") == "0" else None
        if c is None:
            c = calibration.measure(mpm, rounds=3, progress=lambda s: print(s, flush=True))
            calibration.store(c)
        standins[mpm] = c.directives()
        calibrated.append(f"| {mpm} | {c.httpd_keepalive_us:.1f} / {c.httpd_close_us:.1f} | "
                          f"{c.mpmd_keepalive_us:.1f} / {c.mpmd_close_us:.1f} | **{c.request_us}** | "
                          f"**{c.connection_us}** |")
        print(calibrated[-1], flush=True)
    return standins, calibrated


def cell_rows(cells: dict) -> tuple[list[str], int]:
    """The docs' table rows (medians, ranges, CPU, client load, PSS) and how many cells had a
    client core above 85%."""
    rows, flagged = [], 0
    for (mpm, name), runs in cells.items():
        med = {k: statistics.median(r[0] for r in v) for k, v in runs.items()}
        cpu = {k: statistics.median(r[1] for r in v) for k, v in runs.items()}
        spread = {k: f"{min(r[0] for r in v):,.0f}–{max(r[0] for r in v):,.0f}" for k, v in runs.items()}
        client = max(r[2] for v in runs.values() for r in v)
        flagged += client > 85
        pss = {k: v[-1][3] for k, v in runs.items()}
        rows.append(f"| {mpm} | {name} | {med['httpd']:,.0f} ({spread['httpd']}) | {med['mpmd']:,.0f} "
                    f"({spread['mpmd']}) | **{med['mpmd'] / med['httpd']:.2f}** | {cpu['httpd']:.0f} / "
                    f"{cpu['mpmd']:.0f} | {client:.0f}%{' ⚠' if client > 85 else ''} "
                    f"| {pss['httpd']:.0f} / {pss['mpmd']:.0f} |")
        print(rows[-1], flush=True)
    return rows, flagged


def main() -> int:
    if httpd.binary() is None or not shutil.which("wrk") or not shutil.which("taskset") or CLIENT_CPU < 0:
        print("needs apache2, wrk, taskset and two CPUs to run on", file=sys.stderr)
        return 1
    scenarios = [("keep-alive c=10", 10, False), ("keep-alive c=300", 300, False),
                 ("close c=10", 10, True), ("close c=300", 300, True)]
    mpms = os.environ.get("MPMS", "prefork,worker,event").split(",")  # a subset while iterating
    standins, calibrated = calibrate(mpms)
    # Rounds over the whole matrix, each pair of servers in alternating order, so that drift on
    # a shared machine spreads over every cell instead of landing on one MPM.
    cells = {(mpm, name): {"httpd": [], "mpmd": []} for mpm in mpms for name, *_ in scenarios}
    for i in range(REPEAT):
        for mpm in mpms:
            directives = {**MPM_DIRECTIVES[mpm], **COMMON}
            for name, c, close in scenarios:
                for kind in ("httpd", "mpmd") if i % 2 == 0 else ("mpmd", "httpd"):
                    given = directives if kind == "httpd" else {**standins[mpm], **directives}
                    cells[(mpm, name)][kind].append(one_run(kind, mpm, given, c, close))
        print(f"round {i + 1}/{REPEAT} done", flush=True)
    rows, flagged = cell_rows(cells)
    if len(mpms) < 3:
        return 0  # a partial run does not rewrite the docs

    def winner(a: str, b: str, name: str, kind: str) -> str:
        """The faster MPM by median; 'tie' when the two ranges of runs overlap (noise)."""
        ra = [r[0] for r in cells[(a, name)][kind]]
        rb = [r[0] for r in cells[(b, name)][kind]]
        if min(ra) > max(rb):
            return a
        if min(rb) > max(ra):
            return b
        return f"tie ({a if statistics.median(ra) >= statistics.median(rb) else b} by median)"

    winners, same, decisive, same_median = [], 0, 0, 0
    for name, *_ in scenarios:
        for a, b in (("prefork", "worker"), ("prefork", "event"), ("worker", "event")):
            hw, mw = winner(a, b, name, "httpd"), winner(a, b, name, "mpmd")
            h_med = hw.split("(")[-1].split()[0] if hw.startswith("tie") else hw
            m_med = mw.split("(")[-1].split()[0] if mw.startswith("tie") else mw
            same_median += h_med == m_med
            if not hw.startswith("tie"):
                decisive += 1
                same += h_med == m_med
            verdict = "same" if h_med == m_med else "httpd within noise" if hw.startswith("tie") else "DIFFERENT"
            winners.append(f"| {name} | {a} vs {b} | {hw} | {mw} | {verdict} |")
    section = f"""## mpmd vs httpd

`make bench` → `benchmarks/mpmd_bench.py`. The same MPM directives for both servers (prefork
MaxRequestWorkers 320; worker/event 16 x 25 = 400 threads; KeepAliveTimeout 5,
MaxKeepAliveRequests 0), a 17-byte file, wrk -t1 for {DURATION} s, server pinned to CPU 0
and wrk to CPU 1, median of {REPEAT} rounds over the whole matrix (min–max in brackets; the
two servers alternate which goes first). Both are validate's targets: httpd {httpd.version()} with
validate's modules (mpm, authz_core, status with ExtendedStatus On, lua, headers), mpmd with the
stand-ins calibrated on this machine just before (`apachetune mpmd calibrate`). CPU per
request: user + system time of the server's processes over the run / requests. Client core:
the highest busy share of CPU 1 (wrk's) over the runs of a cell; ⚠ above 85%, where wrk rather
than the server may have been measured ({flagged} cells). PSS per worker after the load (KiB).
The machine is shared and noisy: quote ratios.

Calibration (`validate/calibration.py`, the code validate runs on first use): CPU µs per request
of each server with keep-alive / with a connection per request, the mean over 10 and 300 clients
of the median of 3 runs of 1 s, mpmd without stand-ins; RequestCPU is the keep-alive difference,
ConnectionCPU what the close case adds beyond it, each less what mpmd still overshot when run
with them (the check):

| MPM | httpd µs/request keep-alive / close | mpmd (stand-ins 0) | RequestCPU µs | ConnectionCPU µs |
|---|---|---|---|---|
{chr(10).join(calibrated)}

mpmd below runs with those stand-ins. Without httpd on a machine, mpmd keeps its built-in
RequestCPU 18 µs (measured on a loaded run here) and validate's report says it is uncalibrated.

| MPM | load | httpd req/s | mpmd req/s | mpmd / httpd | CPU µs/request httpd / mpmd | client core | PSS/worker KiB httpd / mpmd |
|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}

Pairwise winners (does mpmd rank the MPMs the way httpd does?). A winner is decisive when
every one of its runs beat every run of the other; otherwise it is a tie and the median
decides the "by median" entry. By median, {same_median} of the {len(winners)} pairs have the same
winner on both servers; httpd's winner is decisive in {decisive} pair(s), and mpmd agrees in
{same} of those.

| load | pair | httpd's winner | mpmd's winner | |
|---|---|---|---|---|
{chr(10).join(winners)}
"""
    write_section(ROOT / "docs" / "benchmarks.md", "## mpmd vs httpd", section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
