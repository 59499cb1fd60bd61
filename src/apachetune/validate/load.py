"""Load generators: a small asyncio HTTP/1.1 client (no dependency), bounded in time and count.

- closed loop: N connections, each sends its next request when the previous answer arrives;
- open loop: requests start at Poisson arrival times whatever the server does, and latency is measured
  from each request's *scheduled* start, so a stalled server cannot hide its queue
  (no coordinated omission);
- idle keep-alive clients: connect, send one request, then hold the connection open.
Loopback only: any other address is refused.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from apachetune.errors import UsageError
from apachetune.simulate.stats import percentile

MAX_IN_FLIGHT = 2000


def check_loopback(host: str) -> None:
    try:
        ok = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        ok = False
    if not ok:
        raise UsageError(f"load is only sent to loopback addresses, not {host!r}")


@dataclass
class LoadResult:
    latencies: list[float] = field(default_factory=list)  # seconds, one per successful request
    # open loop: from the request's start on this side (its connect) to its answer, less its service
    # time: the client's own lateness (its timer, its event loop) left out
    waits: list[float] = field(default_factory=list)
    jobs: list[tuple[float, float]] = field(default_factory=list)  # open loop: (arrival s, service s) as drawn
    errors: dict[str, int] = field(default_factory=dict)  # refused, reset, timeout, 5xx, other
    elapsed: float = 0.0
    scheduled: int = 0

    @property
    def ok(self) -> int:
        return len(self.latencies)

    @property
    def throughput(self) -> float:
        return self.ok / self.elapsed if self.elapsed > 0 else 0.0

    def percentile(self, q: float) -> float | None:
        if not self.latencies:
            return None
        return percentile(sorted(self.latencies), q / 100)

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1

    def to_json(self) -> dict:
        return {"requests_ok": self.ok, "errors": dict(self.errors), "elapsed_s": round(self.elapsed, 3),
                "throughput_rps": round(self.throughput, 1),
                "latency_ms": {f"p{q}": None if self.percentile(q) is None else round(self.percentile(q) * 1000, 2)
                               for q in (50, 95, 99)}}


@dataclass
class SummaryResult(LoadResult):
    """A run another client measured (wrk): its counts and percentiles, not every latency."""

    requests: int = 0
    percentiles_ms: dict[int, float] = field(default_factory=dict)

    @property
    def ok(self) -> int:
        return self.requests

    def percentile(self, q: float) -> float | None:
        ms = self.percentiles_ms.get(int(q)) if self.requests else None
        return None if ms is None else ms / 1000


def _request(path: str, keepalive: bool) -> bytes:
    conn = "keep-alive" if keepalive else "close"
    return f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: {conn}\r\n\r\n".encode()


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bool]:
    """(status, whether the server keeps the connection open)."""
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    keep = True
    for line in head.split(b"\r\n"):
        lower = line.lower()
        if lower.startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
        elif lower.startswith(b"connection:") and b"close" in lower:
            keep = False
    if length:
        await reader.readexactly(length)
    return status, keep


def _classify(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "refused"
    if isinstance(exc, (ConnectionResetError, BrokenPipeError, asyncio.IncompleteReadError)):
        return "reset"
    if isinstance(exc, asyncio.TimeoutError | TimeoutError):
        return "timeout"
    return "other"


async def _closed(host, port, path, concurrency, duration, keepalive, timeout, result, paths=None, fin_after=0.0,
                  flights=None, stop=None):
    deadline = time.monotonic() + duration
    flights = [None] * concurrency if flights is None else flights
    counter = [0]
    held: list[asyncio.StreamWriter] = []  # fin_after: connections the server ended, kept open a while
    loop = asyncio.get_running_loop()

    def close_later(writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        loop.call_later(fin_after, writer.close)

    def next_path() -> str:
        if not paths:
            return path
        counter[0] += 1
        return paths[counter[0] % len(paths)]

    async def client(i: int):
        reader = writer = None
        while time.monotonic() < deadline and not (stop is not None and stop.is_set()):
            start = time.monotonic()
            try:
                if writer is None:
                    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
                writer.write(_request(next_path(), keepalive))
                flights[i] = time.monotonic()
                status, server_keeps = await asyncio.wait_for(_read_response(reader), timeout)
                flights[i] = None
                if status >= 500:
                    result.error("5xx")
                else:
                    result.latencies.append(time.monotonic() - start)
                if not keepalive or not server_keeps:  # e.g. after MaxKeepAliveRequests
                    if fin_after > 0:
                        close_later(writer)  # the next request goes on a new connection at once
                    else:
                        writer.close()
                    writer = None
            except Exception as e:  # noqa: BLE001 - every failure is counted by kind
                result.error(_classify(e))
                flights[i] = None
                if writer is not None:
                    writer.close()
                writer = None
        if writer is not None:
            writer.close()

    start = time.monotonic()
    await asyncio.gather(*(client(i) for i in range(concurrency)))
    result.elapsed = time.monotonic() - start
    for writer in held:
        writer.close()


def closed_loop(host: str, port: int, path: str, concurrency: int, duration: float,
                keepalive: bool = True, timeout: float = 10.0, paths: list[str] | None = None,
                fin_after: float = 0.0, flights: list[float | None] | None = None,
                stop: threading.Event | None = None) -> LoadResult:
    """`concurrency` connections for `duration` s; with `paths`, requests cycle through them.
    `fin_after`: a connection the server ends (keep-alive off, or refused) is closed on this
    side only that many seconds later, as a client that does not close (the next request goes
    on a new connection at once). `flights`: a list as long as `concurrency` where each client
    keeps the monotonic time its request in flight was sent (None between requests), for
    another thread to time something against the requests. `stop`: set by another thread, ends
    the run before `duration` (each client after its request in flight)."""
    check_loopback(host)
    result = LoadResult()
    asyncio.run(_closed(host, port, path, concurrency, duration, keepalive, timeout, result, paths, fin_after,
                        flights, stop))
    return result


def _poisson_jobs(rate: float, duration: float, seed: int, exp_service_ms: float | None) -> list[tuple[float, int]]:
    import random

    rng = random.Random(seed)
    # Poisson arrivals (exponential gaps), the M in M/M/c; fixed gaps would queue far less.
    offsets, t = [], 0.0
    while True:
        t += rng.expovariate(rate)
        if t >= duration:
            break
        offsets.append(t)
    # Exponential service times (the second M of M/M/c), drawn up front so that the run's own
    # sample path (arrivals, services) is known and can be replayed through the model.
    services = [max(1, round(rng.expovariate(1 / exp_service_ms))) if exp_service_ms else 0 for _ in offsets]
    return list(zip(offsets, services, strict=True))


async def _open(host, port, path, jobs, timeout, result, with_service):
    """Each job (offset s, service ms) on a new connection at its offset; `path?ms=` the service
    when `with_service`."""
    start = time.monotonic()
    offsets = [j[0] for j in jobs]
    services = [j[1] for j in jobs]
    n = len(offsets)
    result.scheduled = n
    result.jobs = [(offsets[i], services[i] / 1000) for i in range(n)]
    sem = asyncio.Semaphore(MAX_IN_FLIGHT)

    async def one(scheduled: float, service_ms: int):
        async with sem:
            # A request starts after its arrival by the client's own lateness: asyncio's timer
            # (epoll's whole milliseconds) and an idle CPU's wake-up, 1-5 ms on a quiet 2-core VM
            # (2026-11-29) where the request itself took 0.1-0.6 ms. The latency counts it (an
            # open loop's, from the arrival); the wait at the server does not.
            started = time.monotonic()
            writer = None
            try:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
                target = f"{path}?ms={service_ms}" if with_service else path
                writer.write(_request(target, False))
                status, _ = await asyncio.wait_for(_read_response(reader), timeout)
                if status >= 500:
                    result.error("5xx")
                else:
                    now = time.monotonic()
                    result.latencies.append(now - scheduled)
                    result.waits.append(now - started - service_ms / 1000)
            except Exception as e:  # noqa: BLE001
                result.error(_classify(e))
            finally:
                if writer is not None:
                    writer.close()

    tasks = []
    for i in range(n):
        scheduled = start + offsets[i]
        delay = scheduled - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(scheduled, services[i])))
    await asyncio.gather(*tasks)
    result.elapsed = time.monotonic() - start


def open_loop(host: str, port: int, path: str, rate: float, duration: float, timeout: float = 10.0,
              seed: int = 1, exp_service_ms: float | None = None) -> LoadResult:
    """Poisson arrivals at `rate` for `duration` s; with exp_service_ms, `path?ms=X` with X drawn
    from an exponential distribution of that mean (the endpoint sleeps X ms)."""
    check_loopback(host)
    result = LoadResult()
    jobs = _poisson_jobs(rate, duration, seed, exp_service_ms)
    asyncio.run(_open(host, port, path, jobs, timeout, result, bool(exp_service_ms)))
    return result


def replay(host: str, port: int, path: str, jobs: list[tuple[float, int]], timeout: float = 10.0) -> LoadResult:
    """An access log's requests: each (offset s, service ms) as `path?ms=X` on a new connection
    at its offset (the endpoint sleeps X ms)."""
    check_loopback(host)
    result = LoadResult()
    asyncio.run(_open(host, port, path, jobs, timeout, result, True))
    return result


class IdleClients:
    """n keep-alive connections, each after one request, held open until closed.

    The crowd forms as real ones do, a client at a time: each waits (at most `quiet` seconds)
    for its answer before the next connects. Once one is not answered the server holds no
    more, and the rest only connect and send (they wait in the listen backlog), so a crowd
    larger than the server holds does not block the caller; `answered` says how many were
    served. (All at once, the crowd would be a burst that busies every worker, and event closes
    its keep-alive connections when a process's workers were all busy.)"""

    def __init__(self, host: str, port: int, n: int, path: str = "/index.html", quiet: float = 0.5):
        import socket

        check_loopback(host)
        self.socks: list = []
        self.waiting: list = []  # sent, not answered yet: in the listen backlog while the server is full
        try:
            for _ in range(n):
                s = socket.create_connection((host, port), timeout=10)
                self.socks.append(s)
                s.sendall(_request(path, True))
                if self.waiting or not self._answer(s, quiet):
                    self.waiting.append(s)
            if self.waiting:  # served meanwhile (a connection closed): one look at all the rest
                self._answered_meanwhile(quiet)
        except BaseException:
            self.close()
            raise

    @property
    def answered(self) -> int:
        return len(self.socks) - len(self.waiting)

    def await_pool(self, most: int, deadline: float, pass_s: float = 1.2) -> None:
        """While fewer than `most` of the crowd are answered, waits for more until a maintenance
        pass (`pass_s`) answers none or the monotonic `deadline`: a pool reaped since the last
        load grows back as the crowd queues (httpd worker, 400 clients on the pool a sweep left:
        387 answered, and the new request served in 1,000 ms, by the process the next pass
        started, where the section pins it)."""
        while self.waiting and self.answered < most:
            wait = min(pass_s, deadline - time.monotonic())
            if wait <= 0 or not self._answered_meanwhile(wait):
                return

    @staticmethod
    def _answer(s, timeout: float) -> bool:
        """Whether the response head arrives within `timeout`."""
        s.settimeout(timeout)
        head = b""
        try:
            while b"\r\n\r\n" not in head:
                chunk = s.recv(4096)
                if not chunk:
                    return False
                head += chunk
            return True
        except OSError:  # a timeout included
            return False
        finally:
            s.settimeout(10)

    def _answered_meanwhile(self, wait: float) -> int:
        """Of the clients waiting, those whose response has begun within `wait` seconds, all
        watched at once (one at a time, a large crowd would outlast KeepAliveTimeout before the
        probe); they are no longer waiting."""
        import selectors

        with selectors.DefaultSelector() as sel:  # epoll: a crowd's descriptors pass FD_SETSIZE
            for s in self.waiting:
                sel.register(s, selectors.EVENT_READ)
            ready = [key.fileobj for key, _ in sel.select(wait)]
        served = [s for s in ready if self._answer(s, 0.05)]
        self.waiting = [s for s in self.waiting if s not in served]
        return len(served)

    def closed_by_server(self) -> int:
        """Connections of the crowd the server has closed (no longer idle clients: event closes
        its keep-alive connections when all of a process's workers were busy)."""
        import socket

        n = 0
        for s in self.socks:
            s.setblocking(False)
            try:
                n += s.recv(1, socket.MSG_PEEK) == b""
            except BlockingIOError:
                pass
            except OSError:
                n += 1
        return n

    def close(self) -> None:
        for s in self.socks:
            s.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def time_one_request(host: str, port: int, path: str, limit: float) -> float | None:
    """Seconds until a new connection's request is answered, or None if not within `limit`."""
    import socket

    check_loopback(host)
    start = time.monotonic()
    try:
        with socket.create_connection((host, port), timeout=limit) as s:
            s.sendall(_request(path, False))
            s.recv(4096)
        return time.monotonic() - start
    except OSError:
        return None


WRK_SCRIPT = """
done = function(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format('{"requests": %d, "duration_us": %d, "connect": %d, "read": %d, "write": %d, '
    .. '"timeout": %d, "status": %d, "p50_us": %d, "p95_us": %d, "p99_us": %d, "mean_us": %d}\\n',
    summary.requests, summary.duration, errors.connect, errors.read, errors.write, errors.timeout,
    errors.status, latency:percentile(50), latency:percentile(95), latency:percentile(99), math.floor(latency.mean)))
end
"""


def wrk_available() -> bool:
    import shutil

    return shutil.which("wrk") is not None


def wrk_paths_script(paths: Sequence[str]) -> str:
    """A wrk request() hook that asks `paths` in turn, round and round."""
    quoted = ",".join(json.dumps(p) for p in paths)
    return (f"local paths = {{{quoted}}}\nlocal at = 0\n"
            "request = function()\n  at = at % #paths + 1\n  return wrk.format(nil, paths[at])\nend\n")


def wrk_closed_loop(host: str, port: int, path: str, concurrency: int, duration: float,
                    keepalive: bool = True, wrapper: Sequence[str] = (), paths: Sequence[str] = ()) -> dict:
    """Closed-loop throughput with wrk (faster than the asyncio client); a JSON summary from a Lua
    done() hook: requests, duration, errors by kind, latency percentiles and mean. `wrapper` runs
    wrk under another command (e.g. `taskset -c 1`); `paths`, when given, are asked in turn
    instead of `path` (a document set)."""
    import subprocess
    import tempfile

    check_loopback(host)
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write((wrk_paths_script(paths) if paths else "") + WRK_SCRIPT)
        script.flush()
        cmd = ["wrk", "-t1", f"-c{max(1, concurrency)}", f"-d{max(1, round(duration))}s", "--timeout", "10s",
               "-s", script.name]
        if not keepalive:
            cmd += ["-H", "Connection: close"]
        proc = subprocess.Popen([*wrapper, *cmd, f"http://{host}:{port}{path}"], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            # Waited for in short slices: an interrupt (Ctrl-C, SIGTERM) lands between them, and
            # wrk is killed on the way out instead of running its whole duration.
            deadline = time.monotonic() + duration + 30
            while True:
                try:
                    stdout, stderr = proc.communicate(timeout=0.2)
                    break
                except subprocess.TimeoutExpired:
                    if time.monotonic() > deadline:
                        raise UsageError("wrk did not finish in time") from None
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    line = next((ln for ln in stdout.splitlines() if ln.startswith('{"requests"')), None)
    if line is None:
        raise UsageError(f"wrk failed: {stderr.strip() or stdout.strip()}")
    data = json.loads(line)
    seconds = data["duration_us"] / 1e6
    return {"requests_ok": data["requests"] - data["status"], "elapsed_s": round(seconds, 3),
            "throughput_rps": round(data["requests"] / seconds, 1) if seconds else 0.0,
            "errors": {k: data[k] for k in ("connect", "read", "write", "timeout", "status") if data[k]},
            "latency_ms": {"p50": data["p50_us"] / 1000, "p95": data["p95_us"] / 1000,
                           "p99": data["p99_us"] / 1000, "mean": round(data["mean_us"] / 1000, 3)},
            "driver": "wrk"}


# wrk's error counts under the names this client's are counted by: a connect that failed was
# refused; a read or write that failed found the connection ended by the server
WRK_ERROR_KINDS = {"connect": "refused", "read": "reset", "write": "reset", "timeout": "timeout", "status": "5xx"}


def run_with_cpu(argv: Sequence[str], timeout: float) -> tuple[int, str, str, float]:
    """Run a load generator to its end: its exit status, output, errors and the CPU seconds it
    spent, from the kernel's accounting of the reaped process (getrusage's children: exact for
    the whole process, where a running process's tick counts are sampled)."""
    import resource
    import subprocess

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise UsageError(f"{argv[0]} did not finish in {timeout:g} s") from None
    except OSError as e:
        raise UsageError(f"{argv[0]} could not run: {e.strerror or e}") from None
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return done.returncode, done.stdout, done.stderr, cpu


def wrk_load(host: str, port: int, path: str, concurrency: int, duration: float,
             keepalive: bool = True) -> LoadResult:
    """wrk_closed_loop as a LoadResult (percentiles and counts only), for the cases the
    asyncio client judges when it keeps up: what a pool of thousands of requests a second
    asks is more than one Python thread opens."""
    data = wrk_closed_loop(host, port, path, concurrency, duration, keepalive=keepalive)
    errors: dict[str, int] = {}
    for kind, n in data["errors"].items():
        errors[WRK_ERROR_KINDS[kind]] = errors.get(WRK_ERROR_KINDS[kind], 0) + n
    return SummaryResult(errors=errors, elapsed=data["elapsed_s"], requests=data["requests_ok"],
                         percentiles_ms={q: data["latency_ms"][f"p{q}"] for q in (50, 95, 99)})
