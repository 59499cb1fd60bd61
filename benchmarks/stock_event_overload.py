"""More keep-alive clients than workers on Debian's stock event section: ab and wrk on httpd beside
`apachetune simulate` as an operator runs it (docs/simulate.md, "event's parked requests").

    python benchmarks/stock_event_overload.py [--clients 300] [--service-ms 100] [--requests 6000] [--seconds 8]

Each run starts a fresh httpd 2.4.71 with /etc/apache2/mods-available/mpm_event.conf (2 x 25
threads to start, 150 at most) and validate's /app/sleep application, then runs `ab -k -c N -n M`
or `wrk -t1 -c N -d S` against it; beside each, the CLI's simulation with an instant client
(`--turnaround 0`), with its default turnaround (a load generator's on loopback) alone
(`--client-first 0`), with its defaults (that turnaround, and the generator running first on a
worker's core after 13% of the responses, fading with the rate), and with a constant
`--client-first 0.13`. Keep the requests long enough (100 ms) that the CPUs do not bound the
run: at 10 ms mod_lua and the client fill both cores of a 2-core VM. Loopback only; ab's and
wrk's runs are bounded (--requests, --seconds). Needs apache2, ab and wrk.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from apachetune.validate.section import load_directives  # noqa: E402
from apachetune.validate.targets import make_target  # noqa: E402

CONF = "/etc/apache2/mods-available/mpm_event.conf"
AB = {"rps": r"Requests per second:\s+([\d.]+)", "failed": r"Failed requests:\s+(\d+)", "length": r"Length: (\d+)",
      "p95": r" 95%\s+(\d+)", "p99": r" 99%\s+(\d+)"}
WRK = {"rps": r"Requests/sec:\s+([\d.]+)", "read": r"read (\d+)", "p99": r"99%\s+([\d.]+\w+)"}
VARIANTS = (("instant client", ["--turnaround", "0"]), ("the default turnaround alone", ["--client-first", "0"]),
            ("the defaults (and client first, fading)", []), ("--client-first 0.13", ["--client-first", "0.13"]))


def measure(command: list[str]) -> str:
    section = load_directives(CONF, "event")
    with make_target("httpd", "event", dict(section)) as target:
        time.sleep(1.5)
        url = command.pop().format(port=target.port)
        return subprocess.run([*command, url], capture_output=True, text=True, timeout=300).stdout


def found(pattern: str, text: str) -> str:
    m = re.search(pattern, text)
    return m.group(1) if m else "?"


def simulated(args: list[str]) -> dict:
    out = subprocess.run([sys.executable, "-m", "apachetune", "simulate", CONF, "--mpm", "event", *args,
                          "--format", "json"], capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=300)
    parser.add_argument("--service-ms", type=int, default=100)
    parser.add_argument("--requests", type=int, default=6000)
    parser.add_argument("--seconds", type=int, default=8)
    a = parser.parse_args()
    path = f"http://127.0.0.1:{{port}}/app/sleep?ms={a.service_ms}"
    service = ["--clients", str(a.clients), "--service", f"{a.service_ms}ms"]

    ab = measure(["ab", "-q", "-k", "-c", str(a.clients), "-n", str(a.requests), path])
    print(f"ab -k -c {a.clients} -n {a.requests}, {a.service_ms} ms: req/s, failed (Length), p95, p99 ms")
    got = {k: found(p, ab) for k, p in AB.items()}
    print(f"  httpd: {got['rps']}, {got['failed']} ({got['length']}), {got['p95']}, {got['p99']}")
    for label, extra in VARIANTS:
        r = simulated([*service, "--requests", str(a.requests), *extra])
        lat = r["latency_ms"]
        print(f"  simulated, {label}: {r['ab']['requests_per_second']:.0f}, {r['ab']['failed_length']}, "
              f"{lat['p95']:.0f}, {lat['p99']:.0f}")

    wrk = measure(["wrk", "-t1", "-c", str(a.clients), "-d", f"{a.seconds}s", "--latency", path])
    print(f"wrk -t1 -c {a.clients} -d {a.seconds}s, {a.service_ms} ms: req/s, read errors, p99 as wrk prints it")
    got = {k: found(p, wrk) for k, p in WRK.items()}
    print(f"  httpd: {got['rps']}, {got['read'].replace('?', '0')}, {got['p99']}")
    for label, extra in VARIANTS:
        r = simulated([*service, "--seconds", str(a.seconds), *extra])
        print(f"  simulated, {label}: {r['throughput_rps']:.0f}, {r['errors'].get('reset', 0)}, "
              f"{r['latency_as_wrk_ms']['p99']:.0f} ms")


if __name__ == "__main__":
    main()
