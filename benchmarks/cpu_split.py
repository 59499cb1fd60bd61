"""Where a request's CPU goes under one load on loopback: httpd's (its processes' CPU clocks),
the load generator's (getrusage of the reaped process: exact for the whole process) and the
whole machine's (/proc/stat's busy time), each over the requests completed.

    python benchmarks/cpu_split.py MPM SECTION_FILE "ab -q -r -c 100 -n 30000" [--path /index.html]
    python benchmarks/cpu_split.py event sec.conf "wrk -t1 -c10 -d2s -H 'Connection: close'"

A fresh httpd (validate's target, the section as `simulate FILE` reads it), 1.5 s after its
start; the command gets the URL appended. Prints req/s and µs a request of each; what
`apachetune simulate` charges as httpd's (--httpd-cpu) and the client's (--client-cpu) is
checked against it (docs/benchmarks.md, "The assumed client's CPU"). Loopback only, bounded
by the command's own -n or -d. Needs apache2 and the load generator.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from apachetune.validate.calibration import server_cpu_seconds  # noqa: E402
from apachetune.validate.generator_cpu import requests_completed  # noqa: E402
from apachetune.validate.load import check_loopback, run_with_cpu  # noqa: E402
from apachetune.validate.section import load_directives  # noqa: E402
from apachetune.validate.targets import make_target  # noqa: E402

BUSY = ("user", "nice", "system", "irq", "softirq", "steal")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mpm", choices=["prefork", "worker", "event"])
    parser.add_argument("section")
    parser.add_argument("command", help="ab or wrk, without the URL")
    parser.add_argument("--path", default="/index.html", help="e.g. /app/sleep?ms=5 (validate's application)")
    args = parser.parse_args()
    with make_target("httpd", args.mpm, load_directives(args.section, args.mpm, keep_server_limit=True)) as t:
        check_loopback(t.host)
        time.sleep(1.5)
        argv = [*shlex.split(args.command), f"http://{t.host}:{t.port}{args.path}"]
        machine0, httpd0, wall = psutil.cpu_times(), server_cpu_seconds(t.proc.pid), time.monotonic()
        _, out, _, client = run_with_cpu(argv, 600)
        wall = time.monotonic() - wall
        httpd1, machine1 = server_cpu_seconds(t.proc.pid), psutil.cpu_times()
    n = requests_completed(Path(argv[0]).name, out)
    if not n:
        sys.exit(f"no request count in the command's output:\n{out}")
    busy = sum(getattr(machine1, k, 0.0) - getattr(machine0, k, 0.0) for k in BUSY)
    print(f"{args.mpm} {args.command}: {n / wall:,.0f} req/s; µs a request: httpd {(httpd1 - httpd0) / n * 1e6:.1f}, "
          f"client {client / n * 1e6:.1f}, machine {busy / n * 1e6:.1f} ({busy / wall:.2f} CPUs busy)")


if __name__ == "__main__":
    main()
