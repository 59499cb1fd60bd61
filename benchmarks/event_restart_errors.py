"""Where wrk's read errors come from on httpd event's default section (16 x 25 threads, 400 wrk
keep-alive clients on validate's 50 ms application, 3 s), with and without a graceful restart
1.07 s in, as `validate --plan simulate`'s restart case runs it (docs/simulate.md, "Judged against
the server": errors).

    python benchmarks/event_restart_errors.py [--runs N]

For each run: wrk's errors by its own kinds (connect, read, write, timeout, status), the
server's FINs on the loopback a tenth of a second at a time (tcpdump), and the responses httpd
logged a tenth at a time by `%X` (`+` kept alive, `-` closed). Then the simulation of the same
load, without and with `--client-first` 0.1 and 0.13 (the load client on the server's
machine). Needs apache2, wrk and tcpdump (root). Loopback only, bounded.
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from apachetune.simulate import simulate  # noqa: E402
from apachetune.simulate.workload import ServiceTime, Workload  # noqa: E402
from apachetune.validate import load  # noqa: E402
from apachetune.validate.load import closed_loop, wrk_load  # noqa: E402
from apachetune.validate.section import load_directives  # noqa: E402
from apachetune.validate.targets import make_target  # noqa: E402

CLIENTS, SECONDS, SIGNAL_AT = 400, 3.0, 1.073
LOG_FORMAT = '"%{begin:usec}t %X"'


def section() -> dict[str, object]:
    d = load_directives(None, "event")
    d["StartServers"] = 16  # the pool full, as the plan grows it before its restart case
    return d


def by_tenth(times: list[float], t0: float) -> str:
    counts = collections.Counter(int((t - t0) * 10) for t in times)
    return " ".join(f"{counts[i]}" for i in range(int(SECONDS * 10) + 1))


def measure(restart: bool) -> None:
    log = Path(tempfile.mkdtemp(prefix="apachetune-restart-")) / "access.log"
    with make_target("httpd", "event", {**section(), "CustomLog": f"{log} {LOG_FORMAT}"}) as target:
        closed_loop(target.host, target.port, "/app/sleep?ms=500", CLIENTS, 2.0)  # grow the pool full
        time.sleep(0.3)
        log.write_text("")
        fins = Path(log.parent / "fins.txt")
        with fins.open("w") as out:
            dump = subprocess.Popen(["tcpdump", "-i", "lo", "-n", "-tt", "-l",
                                     f"tcp src port {target.port} and (tcp[tcpflags] & tcp-fin != 0)"],
                                    stdout=out, stderr=subprocess.DEVNULL)
            time.sleep(1.0)  # tcpdump listening
            t0 = time.time()
            if restart:
                threading.Timer(SIGNAL_AT, os.kill, (target.proc.pid, signal.SIGUSR1)).start()
            kinds = dict(load.WRK_ERROR_KINDS)
            load.WRK_ERROR_KINDS.update({k: k for k in kinds})  # wrk's own kinds, not the plan's
            try:
                r = wrk_load(target.host, target.port, "/app/sleep?ms=50&kb=0", CLIENTS, SECONDS)
            finally:
                load.WRK_ERROR_KINDS.update(kinds)
            time.sleep(0.5)
            dump.terminate()
            dump.wait()
        fin_times = [float(line.split()[0]) for line in fins.read_text().splitlines() if "Flags [" in line]
        logged = [line.split() for line in log.read_text().splitlines()]
        kept = [int(b) / 1e6 for b, x in logged if x == "+"]
        closed = [int(b) / 1e6 for b, x in logged if x == "-"]
    what = f"restart at {SIGNAL_AT:.2f} s" if restart else "no restart"
    print(f"httpd, {what}: {r.throughput:,.0f} req/s, "
          f"wrk errors {r.errors or 'none'}; server FINs {len(fin_times)}")
    print(f"  FINs a tenth:        {by_tenth(fin_times, t0)}")
    print(f"  kept-alive a tenth:  {by_tenth(kept, t0)}")
    print(f"  closed (-) a tenth:  {by_tenth(closed, t0)}")


def simulated(restart: bool) -> None:
    w = Workload(ServiceTime("fixed", 0.0511), clients=CLIENTS, timed_from_handshake=True)
    kw = {"graceful_at": (2 + SIGNAL_AT,), "restart_start_servers": 3, "drain": False} if restart else {}
    for share in (0.0, 0.1, 0.13):
        r = simulate("event", section(), w, 2 + SECONDS, warmup=2, seed=7, client_first=share, **kw)
        print(f"simulated, {'restart' if restart else 'no restart'}, --client-first {share:g}: "
              f"{r.throughput:,.0f} req/s, errors {r.errors or 'none'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    for restart in (False, True):
        for _ in range(args.runs):
            measure(restart)
            time.sleep(6)  # KeepAliveTimeout: the last run's connections gone
        simulated(restart)
    return 0


if __name__ == "__main__":
    sys.exit(main())
