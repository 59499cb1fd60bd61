"""Pools sized for the load, checked on real httpd with an application and a client written here.

The application is a mod_lua handler that sleeps for the service time the client asks for; the
client is a thread per request on plain sockets. Neither is the project's own validate.

- Steady load: prefork as advised for 150 req/s x 50 ms must queue as an M/M/c queue with
  MaxRequestWorkers servers does (replayed on the run's own arrivals and service times), not
  like a pool that kills idle children and re-forks one a second (the control: the spare
  bounds advised before, MinSpareServers 1, MaxSpareServers 2).
- A burst: prefork as advised with --burst must serve the burst from its first seconds, where
  httpd's default pool (StartServers 5, spare 5-10) forks 1, 2, 4 ... children a second.

No timing is asserted against the clock alone: each run is compared with what its own arrivals
and service times imply, and with the control on the same machine in the same test.
"""

from __future__ import annotations

import heapq
import json
import random
import socket
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from pathlib import Path

import psutil
import pytest
from click.testing import CliRunner

from apachetune import httpd
from apachetune.cli import cli
from apachetune.validate.cpu_share import OthersCpu
from apachetune.validate.plans import OTHERS_CPU_LIMIT
from httpd_oracle import APACHE2, RunningHttpd

pytestmark = pytest.mark.skipif(APACHE2 is None or not httpd.module_path("lua").exists(),
                                reason="needs apache2 with mod_lua")

SLEEP = """function handle(r)
  local ms = tonumber(r:parseargs()["ms"]) or 0
  if ms > 0 then r.usleep(math.floor(ms * 1000)) end
  r.content_type = "text/plain"
  r:puts("slept\\n")
  return apache2.OK
end
"""


def advised(*args) -> dict:
    r = CliRunner().invoke(cli, ["size", "--no-measure", "--format", "json", "--target-mpm", "prefork",
                                 "--memory", "4096", "--per-worker-mb", "8", "--cpus", "2",
                                 "--requests-per-connection", "1", *args])
    assert r.exit_code == 0, r.output
    return {s["directive"]: s["value"] for s in json.loads(r.output)["recommendation"]["settings"]}


class SleepApp:
    """The directives that serve /app?ms=N from a Lua script readable by httpd's children."""

    def __enter__(self) -> str:
        self.dir = Path(tempfile.mkdtemp(prefix="apachetune-app-"))
        self.dir.chmod(0o755)
        script = self.dir / "sleep.lua"
        script.write_text(SLEEP)
        script.chmod(0o644)
        return (f"{httpd.load_module_line('lua')}\n"
                f"LuaMapHandler ^/app$ {script} handle\n")

    def __exit__(self, *exc):
        import shutil

        shutil.rmtree(self.dir, ignore_errors=True)
        return False


def _get(port: int, ms: float, timeout: float = 30.0) -> bool:
    """One request on its own connection; True when answered 200."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(f"GET /app?ms={ms:.2f} HTTP/1.0\r\nHost: localhost\r\n\r\n".encode())
        data = b""
        while chunk := s.recv(4096):
            data += chunk
    return data.startswith(b"HTTP/1.1 200") and data.endswith(b"slept\n")


def poisson_run(port: int, rate: float, mean_ms: float, seconds: float, seed: int) -> list[tuple]:
    """Requests at Poisson arrival times with exponential service times, each on a new
    connection from its own thread. Returns (sent s, latency s, service s, ok) per request,
    `sent` being when it really left (the arrivals httpd saw)."""
    rng = random.Random(seed)
    jobs, t = [], 0.0
    while True:
        t += rng.expovariate(rate)
        if t >= seconds:
            break
        jobs.append((t, min(rng.expovariate(1 / mean_ms), 20 * mean_ms)))
    start = time.monotonic() + 0.5
    results: list[tuple] = [None] * len(jobs)  # type: ignore[list-item]

    def one(i: int) -> None:
        at, ms = jobs[i]
        delay = start + at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        sent = time.monotonic()
        try:
            ok = _get(port, ms)
        except OSError:
            ok = False
        results[i] = (sent - start, time.monotonic() - sent, ms / 1000, ok)

    with ThreadPoolExecutor(max_workers=256) as pool:
        list(pool.map(one, range(len(jobs))))
    return results


def replay_waits(results: list[tuple], servers: int) -> list[float]:
    """Each request's wait in a first-come-first-served queue with `servers` servers, on the
    run's own arrivals and service times (the M/M/c queue this run drew)."""
    free = [0.0] * servers
    waits = []
    for sent, _, service, _ in sorted(results):
        earliest = heapq.heappop(free)
        begin = max(sent, earliest)
        waits.append(begin - sent)
        heapq.heappush(free, begin + service)
    return waits


def excess_wait(results: list[tuple], servers: int) -> tuple[float, float]:
    """(mean measured wait beyond the replayed queue's mean, the replayed mean), seconds.
    A request's measured wait is its latency less its own service time, less the fixed cost
    of a request (connect, Lua state), taken as the 10th percentile of those waits."""
    waits = [latency - service for _, latency, service, _ in results]
    overhead = sorted(waits)[len(waits) // 10]
    replayed = statistics.fmean(replay_waits(results, servers))
    return statistics.fmean(waits) - overhead - replayed, replayed


@contextmanager
def ahead_of_other_work(server_pid: int):
    """The server (its parent, so every child it forks, and the children it has) and this client
    (threads started from here inherit it) at nice -10 while the run lasts: a queue's waits are
    measured, not a CPU hog's time slices (CI runs the suite beside other work; two `yes` once
    added 13 ms a request to a 50 ms service). Root only; otherwise nothing changes."""
    me = psutil.Process()
    before = me.nice()
    try:
        server = psutil.Process(server_pid)
        for proc in (server, *server.children()):
            proc.nice(-10)
        me.nice(-10)
    except (psutil.AccessDenied, psutil.NoSuchProcess):
        pass
    try:
        yield
    finally:
        with suppress(psutil.Error):
            me.nice(before)


def section(values: dict, keepalive: bool = False) -> str:
    return "".join(f"{k} {v}\n" for k, v in values.items()) + f"KeepAlive {'On' if keepalive else 'Off'}\n"


def test_prefork_pool_advised_for_150_rps_queues_as_erlang_c_on_real_httpd(tmp_path):
    v = advised("--rate", "150", "--service-time-ms", "50")
    mrw = int(v["MaxRequestWorkers"])
    # The pool is running before the load and kept through it.
    assert int(v["MaxSpareServers"]) >= int(v["StartServers"]) >= 150 * 0.05
    control = {**v, "StartServers": 1, "MinSpareServers": 1, "MaxSpareServers": 2}
    measured, others = {}, {}
    for name, values in (("advised", v), ("control", control)):
        (tmp_path / name).mkdir()
        with SleepApp() as app, RunningHttpd(tmp_path / name, "prefork", section(values) + app) as h:
            assert _get(h.port, 1)
            time.sleep(1.5)  # the control's idle children are reaped down to MaxSpareServers
            with ahead_of_other_work(h.proc.pid), OthersCpu(lambda: _tree(h.proc.pid)) as meter:
                results = poisson_run(h.port, 150, 50, 12, seed=13)
        assert all(ok for *_, ok in results), name
        measured[name], others[name] = excess_wait(results, mrw), meter.share
    excess, replayed = measured["advised"]
    # The control (idle children killed and re-forked one a second) does not wait as the queue
    # does: the check below can fail (its excess 10+ ms; 921 ms beside two CPU hogs).
    assert measured["control"][0] > excess + 0.005, measured
    # The advised pool waits as the replayed queue does, within 8 ms a request or half again
    # (5.2 ms measured once with both cores busy elsewhere). Beside two CPU hogs, at nice -10,
    # once 15.1 ms against 10.7 allowed: a miss while others took the CPUs is not judged.
    if excess > max(0.008, 0.5 * replayed) and others["advised"] > OTHERS_CPU_LIMIT:
        pytest.skip(f"other processes took {others['advised']:.0%} of the CPUs: {excess * 1000:.1f} ms of excess "
                    f"wait is not judged")
    assert excess <= max(0.008, 0.5 * replayed), (measured, v)


def _tree(pid: int) -> list[int]:
    """A process and its descendants (httpd's parent and children)."""
    try:
        return [pid, *(c.pid for c in psutil.Process(pid).children(recursive=True))]
    except psutil.Error:
        return []


def burst_served(port: int, clients: int, ms: float, seconds: float) -> int:
    """`clients` keep-alive connections opened at once, each asking for /app?ms=N back to back
    for `seconds`; requests answered in that time."""
    stop = time.monotonic() + seconds
    served = [0] * clients
    go = threading.Barrier(clients)

    def client(i: int) -> None:
        request = f"GET /app?ms={ms:g} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode()
        go.wait()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=seconds + 5) as s:
                buf = b""
                while time.monotonic() < stop:
                    s.sendall(request)
                    while b"slept\n" not in buf:
                        chunk = s.recv(4096)
                        if not chunk:
                            return
                        buf += chunk
                    buf = buf.split(b"slept\n", 1)[1]
                    if time.monotonic() <= stop:
                        served[i] += 1
        except OSError:
            return

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 10)
    return sum(served)


def test_prefork_pool_advised_for_a_burst_serves_it_from_the_first_seconds_on_real_httpd(tmp_path):
    clients, ms, seconds = 60, 200, 2.0
    v = advised("--rate", "100", "--service-time-ms", str(ms), "--burst", str(clients))
    assert int(v["StartServers"]) >= clients and int(v["MaxRequestWorkers"]) >= clients, v
    control = {"MaxRequestWorkers": v["MaxRequestWorkers"], "ServerLimit": v["ServerLimit"]}  # httpd's pool
    served = {}
    for name, values in (("advised", v), ("control", control)):
        (tmp_path / name).mkdir()
        with SleepApp() as app, RunningHttpd(tmp_path / name, "prefork", section(values, True) + app) as h, \
                ahead_of_other_work(h.proc.pid):
            served[name] = burst_served(h.port, clients, ms, seconds)
    full = clients * seconds / (ms / 1000)  # every client served back to back from the start
    assert served["advised"] >= 0.6 * full, (served, full, v)
    assert served["control"] <= 0.5 * served["advised"], served
