"""The simulator judged against the servers (issue 17): `validate --plan simulate` for each MPM and
two sections (a pool at the knee: 10 workers, 50 ms; a slow backend: 20 workers, 250 ms), on mpmd
and on the installed httpd. Each run judges a cold burst's spawn ramp and three or four
workloads (closed loop; beside idle keep-alive clients; open loop at 70% of capacity; a graceful
restart under keep-alive clients), each for throughput, p99 and errors, so one run of this script fills a grid
of 28-30 configuration x workload cells per target (a cold burst only where the ramp fits in 6 s). Writes the
`## Simulation against the servers` section of docs/benchmarks.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from parse_bench import write_section  # noqa: E402

from apachetune import httpd  # noqa: E402

SECTIONS = [("knee: 10 workers, 50 ms", ["--max-request-workers", "10", "--threads-per-child", "5",
                                         "--service-time-ms", "50"]),
            ("slow backend: 20 workers, 250 ms", ["--max-request-workers", "20", "--threads-per-child", "10",
                                                  "--service-time-ms", "250"])]


def run(target: str, mpm: str, args: list[str]) -> dict:
    proc = subprocess.run([sys.executable, "-m", "apachetune", "validate", "--plan", "simulate", "--target", target,
                           "--mpm", mpm, *args, "--format", "json"], capture_output=True, text=True,
                          env={**os.environ, "APACHETUNE_CALIBRATION": "off"}, timeout=600)
    return json.loads(proc.stdout)


def main() -> int:
    targets = ["mpmd"] + (["httpd"] if httpd.binary() else [])
    rows = ["| target | MPM | section | workload | req/s sim / real | p99 ms sim / real | errors % sim / real | verdict |",
            "|---|---|---|---|---|---|---|---|"]
    cells = passed = 0
    for target in targets:
        for mpm in ("prefork", "worker", "event"):
            for label, args in SECTIONS:
                data = run(target, mpm, args)
                by_case: dict[str, dict[str, dict]] = {}
                for v in data["verdicts"]:
                    what, _, case = v["name"].removeprefix("simulated ").partition(": ")
                    by_case.setdefault(case, {})[what] = v
                for case, v in by_case.items():
                    ok = all(x["passed"] for x in v.values())
                    cells += 1
                    passed += ok
                    if "spawn ramp" in v:  # the cold burst: the pool's process counts, exactly
                        ramp = v["spawn ramp"]
                        cell = f"cold burst, spawn ramp | – | processes {ramp['predicted']} / {ramp['measured']} | –"
                    else:
                        cell = (f"{case} | {v['throughput']['predicted']} / {v['throughput']['measured']} | "
                                f"{v['p99']['predicted']} / {v['p99']['measured']} | "
                                f"{v['errors']['predicted']} / {v['errors']['measured']}")
                    rows.append(f"| {target} | {mpm} | {label} | {cell} | {'pass' if ok else 'FAIL'} |")
                    print(rows[-1], flush=True)
    from apachetune.validate.calibration import machine

    where = machine()
    text = (f"## Simulation against the servers\n\n`make bench` → `benchmarks/simulate_grid_bench.py` "
            f"({time.strftime('%Y-%m-%d')}, {where['cpus']} CPUs, {where['cpu']}, httpd {where['httpd'] or 'none'}): "
            f"`validate --plan simulate` on {', '.join(targets)}, {cells} cells, {passed} passed (throughput "
            f"within 10%, p99 within 25% + 5 ms, errors of each kind within 2 points of the outcomes left to "
            f"chance).\n\n" + "\n".join(rows) + "\n")
    write_section(ROOT / "docs" / "benchmarks.md", "## Simulation against the servers", text)
    return 0 if passed == cells else 1


if __name__ == "__main__":
    sys.exit(main())
