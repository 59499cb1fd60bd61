"""The fifth case study: "Apache 2.0 against 1.3 on a SURGE workload: +25% throughput, -23%
response time, from threads and the file cache". What does each of the two give?

Real httpd 2.4 stands in for both generations: 1.3 is a pool of processes that opens and reads
every file it serves (prefork, no file cache); 2.0 is threads (worker) with mod_file_cache
holding the documents open and mapped (`MMapFile`). The four combinations serve the same SURGE
document set (validate/documents.py: heavy-tailed sizes, Zipf popularity) to the same wrk closed
loop (CLIENTS connections, keep-alive, the request paths in the SURGE order), in alternating
rounds, side by side. For each: throughput, mean and p99 response time, and the CPU time a
request costs the server and the client.

Then the model's side (`apachetune simulate`): each configuration's CPU cost a request is split
into a fixed part and a part a KiB, calibrated on two single-document runs (a 1 KiB and a 1 MiB
document); the simulation serves the SURGE set with those costs on this machine's cores, so its
throughput and response times for the mix are predictions, not refits. What it attributes to
threads and to the file cache is the difference in those two costs.

Writes the `## SURGE: Apache 1.3 against 2.0` section of docs/benchmarks.md (docs/case-studies.md,
section 5, explains it). Loopback only, bounded: 12 wrk runs of DURATION seconds a round.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from parse_bench import write_section  # noqa: E402

from apachetune import httpd  # noqa: E402
from apachetune.validate.calibration import server_cpu_seconds  # noqa: E402
from apachetune.validate.cpu_share import busy_seconds  # noqa: E402
from apachetune.validate.documents import SurgeParams, request_paths, write_documents  # noqa: E402
from apachetune.validate.load import wrk_closed_loop  # noqa: E402
from apachetune.validate.targets import HttpdTarget  # noqa: E402

CLIENTS = int(os.environ.get("CLIENTS", "64"))
DURATION = int(os.environ.get("DURATION", "4"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
WORKERS = 64
# Pools fixed at WORKERS, so that the comparison is the request's cost, not a spawn ramp
POOLS = {
    "prefork": {"StartServers": WORKERS, "MinSpareServers": WORKERS, "MaxSpareServers": WORKERS,
                "ServerLimit": WORKERS, "MaxRequestWorkers": WORKERS},
    "worker": {"StartServers": 2, "ServerLimit": 2, "ThreadsPerChild": WORKERS // 2, "ThreadLimit": WORKERS // 2,
               "MinSpareThreads": WORKERS, "MaxSpareThreads": WORKERS, "MaxRequestWorkers": WORKERS},
}
COMMON = {"KeepAlive": "On", "MaxKeepAliveRequests": 0, "KeepAliveTimeout": 5, "MaxConnectionsPerChild": 0}
CONFIGS = [("1.3-like: prefork", "prefork", False), ("prefork + file cache", "prefork", True),
           ("worker", "worker", False), ("2.0-like: worker + file cache", "worker", True)]


def httpd_version() -> str:
    return httpd.version() or "2.4"


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def minor_faults(pids: list[int]) -> int:
    """Minor page faults of the server's processes so far (/proc/PID/stat's minflt): a page of a
    mapping touched for the first time by a process costs one, once per process."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[7])  # minflt: field 10 of stat, the 8th after the command's ")"
    return total


class Server:
    """One configuration's httpd with the document set written and, with the cache, mapped."""

    def __init__(self, mpm: str, cache: bool, extra: dict[str, int]):
        self.target = HttpdTarget(mpm, {**POOLS[mpm], **COMMON})
        self.docs = write_documents(self.target.docroot, SurgeParams())  # the same set each time (seeded)
        for name, size in extra.items():
            (self.target.docroot / name).write_bytes(b"y" * size)
        if cache:
            files = " ".join(str(self.target.docroot / p.lstrip("/")) for p, _, _ in self.docs)
            files += "".join(f" {self.target.docroot / name}" for name in extra)
            with open(self.target.tmp / "httpd.conf", "a") as conf:
                conf.write(f"{httpd.load_module_line('file_cache')}\nMMapFile {files}\n")

    def __enter__(self) -> Server:
        self.target.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.target.__exit__(*exc)

    def measure(self, paths: list[str]) -> dict:
        t = self.target
        wrk_closed_loop(t.host, t.port, paths[0], CLIENTS, 1, paths=paths)  # warm: pages, caches
        pids = t.pids()
        server0, client0, machine0, faults0 = (server_cpu_seconds(t.proc.pid), children_cpu(), busy_seconds(),
                                               minor_faults(pids))
        r = wrk_closed_loop(t.host, t.port, paths[0], CLIENTS, DURATION, paths=paths)
        server, client = server_cpu_seconds(t.proc.pid) - server0, children_cpu() - client0
        machine, faults = busy_seconds() - machine0, minor_faults(pids) - faults0
        if r["errors"] or not r["requests_ok"]:
            raise SystemExit(f"{t.name}: errors {r['errors']} in {r['requests_ok']} requests")
        n = r["requests_ok"]
        # the machine's busy CPU, not only the processes': the loopback's kernel work runs partly
        # outside any process's account (softirqs). wrk's own latency figures are given beside
        # the cycle a client sees (Little: clients / throughput)
        return {"rps": r["throughput_rps"], "mean_ms": r["latency_ms"]["mean"], "p99_ms": r["latency_ms"]["p99"],
                "cycle_ms": CLIENTS / r["throughput_rps"] * 1000, "cores": machine / r["elapsed_s"],
                "machine_us": machine / n * 1e6, "faults": faults / n,
                "server_us": server / n * 1e6, "client_us": client / n * 1e6}


def median_of(runs: list[dict]) -> dict:
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def simulate(cost_fixed_us: float, cost_kib_us: float, docs: list[tuple[str, int, float]]) -> dict:
    """apachetune simulate's prediction for the SURGE set at these costs (all on CPU)."""
    sizes = "".join(f"{size} {weight:.6g}\n" for _, size, weight in docs)
    sizes_file = Path(os.environ.get("TMPDIR", "/tmp")) / "surge-sizes.txt"
    sizes_file.write_text(sizes)
    cmd = [sys.executable, "-m", "apachetune", "simulate", "--mpm", "worker", "--max-request-workers", str(WORKERS),
           "--threads-per-child", str(WORKERS // 2), "--clients", str(CLIENTS), "--service", f"{cost_fixed_us}us",
           "--documents", str(sizes_file), "--per-kib", f"{cost_kib_us}us", "--cpu-fraction", "1",
           "--seconds", "20", "--warmup", "2", "--format", "json"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    doc = json.loads(out.stdout)
    return {"rps": doc["throughput_rps"], "mean_ms": doc["latency_ms"]["mean"], "p99_ms": doc["latency_ms"]["p99"]}


def main() -> None:
    small, large = 1024, 1024 * 1024
    extra = {"one-kib.bin": small, "one-mib.bin": large}
    results: dict[str, list[dict]] = {label: [] for label, _, _ in CONFIGS}
    calib: dict[str, dict[str, list[dict]]] = {label: {"small": [], "large": []} for label, _, _ in CONFIGS}
    docs: list[tuple[str, int, float]] | None = None
    for _ in range(ROUNDS):
        for label, mpm, cache in CONFIGS:
            with Server(mpm, cache, extra) as s:
                docs = s.docs
                paths = request_paths(docs, 5000)
                results[label].append(s.measure(paths))
                calib[label]["small"].append(s.measure(["/one-kib.bin"]))
                calib[label]["large"].append(s.measure(["/one-mib.bin"]))
    assert docs is not None
    mean_kib = sum(size * w for _, size, w in docs) / 1024
    lines = [f"SURGE set: {len(docs)} documents, {mean_kib:.1f} KiB a request on average; {CLIENTS} clients, "
             f"keep-alive, {ROUNDS} rounds of {DURATION} s, medians; httpd {httpd_version()}, {os.cpu_count()} CPUs. "
             "Run: `python benchmarks/surge_bench.py`.", ""]
    lines.append("| configuration | req/s | clients / req/s (ms) | wrk mean / p99 (ms) | CPUs busy | CPU a request "
          "(server + wrk; machine, µs) | page faults a request | calibrated: fixed + a KiB (µs) | simulated req/s | simulated mean / p99 (ms) |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    base = None
    for label, _, _ in CONFIGS:
        m = median_of(results[label])
        sm, lg = median_of(calib[label]["small"]), median_of(calib[label]["large"])
        cost_small, cost_large = sm["machine_us"], lg["machine_us"]
        per_kib = max(0.0, (cost_large - cost_small) / (large / 1024 - small / 1024))
        fixed = max(0.0, cost_small - per_kib * small / 1024)
        sim = simulate(fixed, per_kib, docs)
        base = base or m
        lines.append(f"| {label} | {m['rps']:,.0f} ({m['rps'] / base['rps'] - 1:+.0%}) | {m['cycle_ms']:.2f} "
              f"({m['cycle_ms'] / base['cycle_ms'] - 1:+.0%}) | {m['mean_ms']:.2f} / {m['p99_ms']:.1f} | "
              f"{m['cores']:.2f} | {m['server_us']:.0f} + {m['client_us']:.0f}; {m['machine_us']:.0f} | {m['faults']:.1f} | {fixed:.0f} + {per_kib:.3f} | "
              f"{sim['rps']:,.0f} ({sim['rps'] / m['rps'] - 1:+.0%}) | {sim['mean_ms']:.2f} / {sim['p99_ms']:.1f} |")
    section = "## SURGE: Apache 1.3 against 2.0\n\n" + "\n".join(lines)
    print(section)
    write_section(ROOT / "docs" / "benchmarks.md", "## SURGE: Apache 1.3 against 2.0", section)


if __name__ == "__main__":
    main()
