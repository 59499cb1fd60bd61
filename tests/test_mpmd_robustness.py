"""mpmd cannot be held hostage: slow senders and slow readers are cut, a stop is bounded, a
graceful restart drops nothing, thread-creation failures are accounted.

Every test runs on loopback with bounded clients and durations. The bounds asserted are wide
(several times what the server needs) so that a loaded machine does not fail them; what they
tell apart is "cut after the configured seconds" from "held for the whole trickle".
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import threading
import time
from contextlib import contextmanager

import psutil
import pytest

from apachetune.validate.mpmd_server import MpmdServer, binary

POOLS = {
    "prefork": {"StartServers": 2, "MinSpareServers": 1, "MaxSpareServers": 2, "ServerLimit": 2,
                "MaxRequestWorkers": 2},
    "event": {"StartServers": 1, "ServerLimit": 1, "ThreadLimit": 2, "ThreadsPerChild": 2,
              "MaxRequestWorkers": 2, "MinSpareThreads": 1, "MaxSpareThreads": 2},
}


class Trickler(threading.Thread):
    """A client that sends `head`, then one byte of `tail` every `every` seconds, until the
    server cuts it, the tail is sent, or `stop` is set. Records when it was cut."""

    def __init__(self, port: int, head: bytes, tail: bytes, every: float = 0.5):
        super().__init__(daemon=True)
        self.port, self.head, self.tail, self.every = port, head, tail, every
        self.stop = threading.Event()
        self.cut_after: float | None = None

    def run(self):
        start = time.monotonic()
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=60) as s:
                s.sendall(self.head)
                for i in range(len(self.tail)):
                    if self.stop.wait(self.every):
                        return
                    s.sendall(self.tail[i:i + 1])
        except OSError:
            self.cut_after = time.monotonic() - start


def probe(port: int, within: float) -> float | None:
    """Seconds until a fresh GET is answered, or None if not within `within` seconds."""
    start = time.monotonic()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=within)
        conn.request("GET", "/index.html")
        ok = conn.getresponse().status == 200
        conn.close()
    except OSError:
        return None
    return time.monotonic() - start if ok else None


@contextmanager
def every_worker_held(port: int, head: bytes, tail: bytes, n: int):
    """n trickling clients on the workers for the duration of the block, stopped after it."""
    clients = [Trickler(port, head, tail) for _ in range(n)]
    for c in clients:
        c.start()
    time.sleep(1.0)  # they have reached the workers
    try:
        yield clients
    finally:
        for c in clients:
            c.stop.set()


@pytest.mark.parametrize("mpm", ["prefork", "event"])
def test_a_body_trickled_one_byte_at_a_time_is_cut(mpm):
    """1000 bytes announced, one sent every 0.5 s: every read is within Timeout (10 s), so only an
    overall body deadline (RequestReadTimeout body=2) frees the workers."""
    conf = {**POOLS[mpm], "Timeout": 10, "RequestReadTimeout": "header=2-4,MinRate=500 body=2,MinRate=500"}
    head = b"GET /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"
    with MpmdServer(mpm, conf) as srv, every_worker_held(srv.port, head, b"x" * 1000, 4):
        served = probe(srv.port, within=15)
    assert served is not None, "a request trickling its body held every worker"


@pytest.mark.parametrize("mpm", ["prefork", "event"])
def test_a_head_trickled_one_byte_at_a_time_is_cut(mpm):
    """The head gets header=2-4 seconds however steadily it trickles (Timeout is 30 s)."""
    conf = {**POOLS[mpm], "Timeout": 30, "RequestReadTimeout": "header=2-4,MinRate=500 body=2,MinRate=500"}
    head = b"GET /index.html HTTP/1.1\r\nHost: x\r\nX-Slow: "
    with MpmdServer(mpm, conf) as srv, every_worker_held(srv.port, head, b"y" * 1000, 4):
        served = probe(srv.port, within=15)
    assert served is not None, "a request trickling its head held every worker"


@pytest.mark.parametrize("mpm", ["prefork", "event"])
def test_a_client_that_never_reads_is_cut_after_timeout(mpm):
    """A 64 MiB response to clients that never read fills the socket buffers; Timeout (2 s)
    must apply to the send, or the workers wait forever."""
    with MpmdServer(mpm, {**POOLS[mpm], "Timeout": 2}) as srv:
        with open(srv.docroot / "big.bin", "wb") as f:
            f.truncate(64 * 1024 * 1024)
        readers = []
        for _ in range(3):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(("127.0.0.1", srv.port))
            s.sendall(b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n")
            readers.append(s)
        try:
            time.sleep(1.0)
            served = probe(srv.port, within=15)
        finally:
            for s in readers:
                s.close()
    assert served is not None, "clients that never read held every worker"


@pytest.mark.parametrize("mpm", ["prefork", "worker", "event"])
def test_sigterm_stops_within_a_bounded_grace(mpm):
    """A request that runs for 60 s must not keep the server up after SIGTERM: the children
    are killed after the grace period (3 s), and nothing is left behind."""
    conf = {**POOLS.get(mpm, POOLS["event"])}
    srv = MpmdServer(mpm, conf).__enter__()
    try:
        hold = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
        hold.sendall(b"GET /app/sleep?ms=60000 HTTP/1.1\r\nHost: x\r\n\r\n")
        time.sleep(1.0)
        parent = psutil.Process(srv.proc.pid)
        family = [parent, *parent.children(recursive=True)]
        start = time.monotonic()
        srv.proc.send_signal(signal.SIGTERM)
        srv.proc.wait(30)
        took = time.monotonic() - start
        hold.close()
    finally:
        srv.stop()
    assert took < 15, f"mpmd took {took:.1f} s to stop"
    for p in family:
        assert not p.is_running() or p.status() == psutil.STATUS_ZOMBIE


@pytest.mark.parametrize("mpm", ["prefork", "worker", "event"])
def test_graceful_restart_under_load_drops_nothing(mpm):
    """Eight keep-alive clients in a closed loop while the server restarts gracefully twelve
    times: every request gets its response (the old generation answers what it was sent and
    says Connection: close; the clients reconnect to the new one). On event a stopping child
    closes its idle keep-alive connections at once, as httpd's listener does when dying ("kill'em
    all"), so a request sent on one just then meets the close: as a browser does, the client sends
    it again on a new connection, and only a request lost twice, or on a fresh connection, counts."""
    # Eight threads a process: a single new process can serve all eight clients at once, so
    # event never meets "a keep-alive request and every worker busy", where it closes the
    # connection by design, as httpd's event does (test_mpmd.py tests that on its own).
    conf = {"StartServers": 2, "MinSpareServers": 2, "MaxSpareServers": 4, "ServerLimit": 16,
            "MaxRequestWorkers": 32, "ThreadsPerChild": 8, "ThreadLimit": 8, "MinSpareThreads": 8,
            "MaxSpareThreads": 32, "KeepAliveTimeout": 5}
    if mpm == "prefork":
        conf = {k: v for k, v in conf.items() if "Thread" not in k}
    with MpmdServer(mpm, conf) as srv:
        stop = threading.Event()
        errors: list[str] = []
        done = [0]

        def client():
            conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=20)
            reused = False  # the connection has carried a request already
            while not stop.is_set():
                for attempt in (1, 2):
                    try:
                        conn.request("GET", "/app/sleep?ms=5")
                        resp = conn.getresponse()
                        resp.read()
                        if resp.status != 200:
                            errors.append(f"status {resp.status}")
                        done[0] += 1
                        reused = not resp.will_close
                        if resp.will_close:
                            conn.close()
                        break
                    except (OSError, http.client.HTTPException) as e:
                        conn.close()
                        if not (mpm == "event" and reused and attempt == 1
                                and isinstance(e, http.client.RemoteDisconnected | ConnectionResetError)):
                            errors.append(repr(e))
                            break
                        reused = False  # sent again on a new connection

        threads = [threading.Thread(target=client, daemon=True) for _ in range(8)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        for _ in range(12):
            srv.reload(conf)
            time.sleep(0.4)
        time.sleep(0.5)
        stop.set()
        for t in threads:
            t.join(30)
        assert int(srv.status()["Generation"]) >= 1
    assert done[0] > 50, "the load did not run"
    assert errors == [], errors[:5]


def test_threads_that_cannot_be_created_are_not_counted_idle(tmp_path):
    """Under an address-space limit only some of 400 thread stacks fit: the child must count
    the threads it has, not the ones it asked for."""
    if os.geteuid() != 0 and not hasattr(os, "setrlimit"):
        pytest.skip("needs setrlimit")
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (1200 * 1024 * 1024, 1200 * 1024 * 1024))

    conf = {"StartServers": 1, "ServerLimit": 1, "ThreadLimit": 400, "ThreadsPerChild": 400,
            "MaxRequestWorkers": 400, "MinSpareThreads": 1, "MaxSpareThreads": 800}
    srv = MpmdServer("worker", conf)
    srv._write_conf()
    import subprocess

    proc = subprocess.Popen([str(binary()), "-f", str(srv.conf), "-m", "worker"], preexec_fn=limit,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    srv.proc = proc
    try:
        from apachetune.validate.processes import wait_until_serving

        wait_until_serving(proc, srv.url + "/server-status?auto", 15)
        time.sleep(1.5)
        status = srv.status()
        child = psutil.Process(proc.pid).children()[0]
        threads = child.num_threads() - 1  # the listener (main) thread
    finally:
        srv.stop()
    assert threads < 400, "the limit did not bite: the test proves nothing"
    assert int(status["IdleWorkers"]) + int(status["BusyWorkers"]) <= threads


@pytest.mark.parametrize("factor, most", [("1.9", 4), ("2", 6), ("0.5", 4)])
def test_event_connection_limit_is_httpd_2_4_71s(factor, most):
    """One process, two worker threads, keep-alive clients that stay connected: the process takes
    connections while they are fewer than ThreadsPerChild + idle workers x the *integer part* of
    AsyncRequestWorkerFactor (at least 1), as event.c's connections_above_limit in 2.4.71; the
    rest wait in the backlog. With both workers idle that is at most 2 + 2 x int(factor); how
    many below that depends on when the listener looks (a worker still busy counts one idle
    fewer), so the bound is what is asserted. (2.4.6-2.4.29 multiplied by the fraction: 1.9
    allowed up to 5.8, i.e. 6 connections.)"""
    conf = {"StartServers": 1, "ServerLimit": 1, "ThreadLimit": 2, "ThreadsPerChild": 2,
            "MaxRequestWorkers": 2, "MinSpareThreads": 1, "MaxSpareThreads": 4,
            "AsyncRequestWorkerFactor": factor, "KeepAliveTimeout": 30}
    # The bound holds while no connection arrives to find every worker busy: one that does makes
    # the listener close its idle keep-alive connections (httpd's too), and the later clients
    # then fit. On a loaded machine a worker that has just answered may not be idle yet when the
    # next client comes (CI served 5 at 1.9 once), so a run in which the server closed an answered
    # client's connection (its keep-alive lasts 30 s) proves nothing about the limit and is run
    # again.
    for _attempt in range(5):
        served, closed_busy = _connection_limit_run(conf)
        if closed_busy == 0:
            break
    assert closed_busy == 0, "every run met a busy worker: the limit was never tested alone"
    assert 2 <= served <= most


def _connection_limit_run(conf: dict) -> tuple[int, int]:
    """Eight keep-alive clients one after another, each holding its connection: how many were
    answered within a second, and how many of those the server has closed since."""
    with MpmdServer("event", conf) as srv:
        clients, served, answered = [], 0, []
        try:
            for _ in range(8):
                s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
                s.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n")
                clients.append(s)
                s.settimeout(1.0)
                try:
                    if s.recv(65536).startswith(b"HTTP/1.1 200"):
                        served += 1
                        answered.append(s)
                except OSError:
                    pass  # waiting in the backlog: the process is at its limit
            return served, sum(_closed_by_peer(s) for s in answered)
        finally:
            for s in clients:
                s.close()


def _closed_by_peer(s: socket.socket) -> bool:
    s.setblocking(False)
    try:
        return s.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False  # open, nothing to read
    except OSError:
        return True  # reset
