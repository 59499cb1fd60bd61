"""mpmd's HTTP/1.1 on loopback: pipelining, strict parsing, bodies, timeouts, limits, the access
log, sendfile on and off, and graceful restart (SIGHUP)."""

import re
import socket
import time
import urllib.request

import psutil
import pytest

from apachetune.validate.mpmd_server import MpmdServer
from raw_http import exchange

MPMS = ["prefork", "worker", "event"]
SMALL = {"StartServers": 1, "MaxRequestWorkers": 4, "ThreadsPerChild": 2, "MinSpareThreads": 1,
         "MaxSpareThreads": 8}


def responses(data: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """Split a byte stream of HTTP/1.1 responses (each with Content-Length)."""
    out = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        assert sep, data[:200]
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        fields = {k.lower(): v for k, v in (ln.split(": ", 1) for ln in lines[1:])}
        n = int(fields["content-length"])
        out.append((status, fields, rest[:n]))
        data = rest[n:]
    return out


@pytest.mark.parametrize("mpm", MPMS)
def test_pipelined_requests_are_all_answered_in_order(mpm):
    with MpmdServer(mpm, SMALL) as srv:
        (srv.docroot / "b.txt").write_text("bee\n")
        reqs = (b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n"
                b"GET /b.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"  # a body, discarded
                b"HEAD /index.html HTTP/1.1\r\nHost: x\r\n\r\n"
                b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
                b"GET /b.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        got = exchange(srv.port, reqs)
        # HEAD has a Content-Length but no body: split by hand around it.
        first, second, third = got.split(b"HTTP/1.1 ")[1:4]
        assert first.startswith(b"200") and first.endswith(b"hello from mpmd\n")
        assert second.startswith(b"200") and second.endswith(b"bee\n")
        assert third.startswith(b"200") and b"Content-Length: 16" in third and third.endswith(b"\r\n\r\n")
        rest = responses(b"HTTP/1.1 " + b"HTTP/1.1 ".join(got.split(b"HTTP/1.1 ")[4:]))
        assert [r[0] for r in rest] == [404, 200]
        assert rest[1][2] == b"bee\n" and rest[1][1]["connection"] == "close"


@pytest.mark.parametrize("mpm", MPMS)
def test_pipelined_keepalive_connection_stays_usable(mpm):
    with MpmdServer(mpm, SMALL) as srv, socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
        for batch in (1, 3, 2):
            s.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n" * batch)
            data = b""
            while data.count(b"hello from mpmd\n") < batch:
                data += s.recv(65536)
            assert [r[0] for r in responses(data)] == [200] * batch


@pytest.mark.parametrize("mpm", ["prefork", "event"])
def test_strict_parsing_statuses(mpm):
    cases = {
        b"GET /index.html HTTP/1.1\nHost: x\n\n": 400,  # bare LF line ends (Strict, as httpd 2.4.71)
        b"\r\n\r\nGET /index.html HTTP/1.1\r\nHost: x\r\n\r\n": 200,  # blank lines before the request
        b"GET http://example.test/index.html HTTP/1.1\r\n\r\n": 400,  # 1.1 needs Host, absolute-form or not
        b"GET http://example.test/index.html HTTP/1.1\r\nHost: y\r\n\r\n": 200,
        b"GET / HTTP/2.0\r\nHost: x\r\n\r\n": 505,
        b"GET / HTTP/1\r\nHost: x\r\n\r\n": 400,
        b"GET /\r\n\r\n": 400,  # HTTP/0.9 refused
        b"GET  / HTTP/1.1\r\nHost: x\r\n\r\n": 400,  # two spaces
        b"G(T / HTTP/1.1\r\nHost: x\r\n\r\n": 400,  # not a token
        b"BREW / HTTP/1.1\r\nHost: x\r\n\r\n": 501,
        b"DELETE / HTTP/1.1\r\nHost: x\r\n\r\n": 405,
        b"GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n": 400,
        b"GET / HTTP/1.1\r\nHost : x\r\n\r\n": 400,  # space before the colon
        b"GET / HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  folded\r\n\r\n": 200,  # obs-fold, joined as httpd does
        b"GET / HTTP/1.1\r\nHost: x\r\n  folded\r\n\r\n": 400,  # a folded Host has a space in it
        b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n": 400,  # NUL in a field
        b"GET /in\x00dex.html HTTP/1.1\r\nHost: x\r\n\r\n": 400,  # NUL in the request line
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab": 400,
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: +5\r\n\r\n": 400,
        b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n": 400,
        b"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n": 501,
        b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n": 405,
    }
    with MpmdServer(mpm, {**SMALL, "Timeout": 3}) as srv:
        for request, expected in cases.items():
            start = time.monotonic()
            resp = exchange(srv.port, request)
            got = int(resp.split(b" ", 2)[1]) if resp.startswith(b"HTTP/1.1 ") else 0
            assert got == expected, (request, resp[:120])
            assert time.monotonic() - start < 2.5, ("answered at once, not after Timeout", request)
            if expected in (405, 501):
                assert b"Allow: GET, HEAD\r\n" in resp


@pytest.mark.parametrize("mpm", MPMS)
def test_chunked_body_is_answered_then_closed_never_read_as_a_request(mpm):
    with MpmdServer(mpm, SMALL) as srv:
        smuggled = (b"GET /index.html HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    b"2d\r\nGET /secret HTTP/1.1\r\nHost: x\r\n\r\n\r\n0\r\n\r\n")
        got = responses(exchange(srv.port, smuggled))
        assert [r[0] for r in got] == [200]
        assert got[0][1]["connection"] == "close"


@pytest.mark.parametrize("mpm", ["prefork", "worker", "event"])
def test_slow_head_gets_408_after_timeout_and_silent_client_is_closed(mpm):
    # (AcceptFilter http none: with httpd's default, Linux keeps a silent connection from accept() 31 s)
    with MpmdServer(mpm, {**SMALL, "Timeout": 1, "AcceptFilter": "http none"}) as srv:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            start = time.monotonic()
            s.sendall(b"GET /index.html HTTP/1.1\r\n")
            for _ in range(4):  # trickle: each byte within Timeout, the whole head not
                time.sleep(0.4)
                try:
                    s.sendall(b"X")
                except OSError:
                    break
            data = b""
            try:
                while c := s.recv(4096):
                    data += c
            except OSError:
                pass
            assert data.startswith(b"HTTP/1.1 408 ")
            assert time.monotonic() - start < 4
        # A connection that never sends a byte is closed after Timeout, without a response.
        with socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
            start = time.monotonic()
            assert s.recv(4096) == b""
            assert 0.5 < time.monotonic() - start < 4


def test_configured_limits_apply():
    conf = {**SMALL, "LimitRequestLine": 100, "LimitRequestFieldSize": 50, "LimitRequestFields": 4}  # urllib sends 4
    with MpmdServer("worker", conf) as srv:
        def status(req):
            return int(exchange(srv.port, req).split(b" ", 2)[1])
        assert status(b"GET /" + b"a" * 120 + b" HTTP/1.1\r\nHost: x\r\n\r\n") == 414
        assert status(b"GET / HTTP/1.1\r\nHost: x\r\nX-A: " + b"b" * 60 + b"\r\n\r\n") == 431
        assert status(b"GET / HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n") == 431
        assert status(b"GET /index.html HTTP/1.1\r\nHost: x\r\nA: 1\r\nB: 2\r\n\r\n") == 200


@pytest.mark.parametrize("sendfile", ["On", "Off"])
def test_files_of_every_size_arrive_intact(sendfile):
    sizes = {"empty.bin": 0, "small.bin": 700, "mid.bin": 300_000, "big.bin": 5 * 1024 * 1024 + 17}
    with MpmdServer("event", {**SMALL, "EnableSendfile": sendfile}) as srv:
        for name, size in sizes.items():
            data = bytes((i * 7 + size) % 251 for i in range(size))
            (srv.docroot / name).write_bytes(data)
            assert urllib.request.urlopen(f"{srv.url}/{name}", timeout=10).read() == data


@pytest.mark.parametrize("mpm", MPMS)
def test_access_log_has_one_common_format_line_per_request(mpm, tmp_path):
    log = tmp_path / "access.log"
    with MpmdServer(mpm, {**SMALL, "CustomLog": f"{log} common"}) as srv:
        exchange(srv.port, b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n"
                           b"Connection: close\r\n\r\n")
        exchange(srv.port, b'GET /"quoted" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
        time.sleep(0.2)
    lines = [ln for ln in log.read_text().splitlines() if "server-status" not in ln]
    pattern = re.compile(r'^127\.0\.0\.1 - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\] "([^"]*)" (\d{3}) (\d+)$')
    parsed = [pattern.match(ln).groups() for ln in lines]
    assert parsed == [("GET /index.html HTTP/1.1", "200", "16"), ("GET /nope HTTP/1.1", "404", "14"),
                      ("GET /?quoted? HTTP/1.1", "404", "14")]


@pytest.mark.parametrize("mpm", MPMS)
def test_sighup_restarts_gracefully_with_the_new_configuration(mpm, tmp_path):
    log1, log2 = tmp_path / "a.log", tmp_path / "b.log"
    conf = {**SMALL, "StartServers": 1, "MinSpareServers": 1, "MaxSpareServers": 2, "CustomLog": log1}
    with MpmdServer(mpm, conf) as srv, socket.create_connection(("127.0.0.1", srv.port), timeout=10) as s:
        # A request in flight across the restart is finished by the old generation.
        s.sendall(b"GET /app/sleep?ms=800 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        time.sleep(0.2)
        old = {p.pid for p in psutil.Process(srv.proc.pid).children()}
        # The new generation runs the new spare bounds.
        spares = {"MinSpareServers": 2, "MaxSpareServers": 3} if mpm == "prefork" else {"MinSpareThreads": 3}
        srv.reload({**conf, **spares, "CustomLog": log2})
        data = b""
        while c := s.recv(4096):
            data += c
        assert data.startswith(b"HTTP/1.1 200 ") and data.endswith(b"ok\n")
        want_idle = 1 if mpm == "prefork" else 3  # the status request itself keeps one worker busy
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            st = srv.status()
            kids = {p.pid for p in psutil.Process(srv.proc.pid).children()}
            if st["Generation"] == "1" and not kids & old and int(st["IdleWorkers"]) >= want_idle \
                    and int(st["Processes"]) >= 2:
                break
            time.sleep(0.2)
        assert st["Generation"] == "1" and not kids & old, (st, kids, old)
        assert int(st["IdleWorkers"]) >= want_idle and int(st["Processes"]) >= 2, st
        urllib.request.urlopen(srv.url + "/index.html", timeout=5).read()
    assert "GET /index.html" in log2.read_text()  # the log was reopened at the new path
    assert "GET /index.html" not in log1.read_text()


def test_sighup_with_a_bad_file_keeps_serving():
    with MpmdServer("worker", SMALL) as srv:
        srv.reload({**SMALL, "KeepAlive": "Maybe"})
        time.sleep(1.5)
        assert srv.proc.poll() is None
        assert srv.status()["Generation"] == "0"
        assert urllib.request.urlopen(srv.url + "/index.html", timeout=5).read() == b"hello from mpmd\n"


@pytest.mark.parametrize("mpm", MPMS)
def test_lingering_close_drains_instead_of_resetting(mpm):
    """After an early error (413 while the body is still coming) the server shuts its side and
    drains what the client still sends (httpd's lingering close): the client reads the response
    and then a clean end of stream, and can go on sending for a moment without a reset. A plain
    close() with unread bytes would reset the connection, which can destroy the response."""
    with MpmdServer(mpm, SMALL) as srv:
        with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\n" + b"z" * 65536)
            data = b""
            while c := s.recv(4096):  # ends with a clean EOF, not ConnectionResetError
                data += c
            assert data.startswith(b"HTTP/1.1 413 ")
            for _ in range(5):  # the server still drains: no reset, no broken pipe
                s.sendall(b"z" * 16384)
                time.sleep(0.05)


@pytest.mark.skipif(__import__("shutil").which("prlimit") is None, reason="needs prlimit (util-linux)")
def test_out_of_descriptors_backs_off_and_recovers():
    """event with 64 descriptors and 120 keep-alive clients (a high AsyncRequestWorkerFactor lets
    it take them all): accept fails with EMFILE while the listening socket stays readable. The
    listener must neither crash nor spin, and must serve again once clients leave."""
    from apachetune.validate.mpmd_server import binary

    conf = {"StartServers": 1, "ServerLimit": 1, "MaxRequestWorkers": 4, "ThreadsPerChild": 4, "ThreadLimit": 4,
            "MinSpareThreads": 1, "MaxSpareThreads": 8, "KeepAliveTimeout": 30, "AsyncRequestWorkerFactor": 100}
    from apachetune.validate.load import IdleClients

    with MpmdServer("event", conf, command=["prlimit", "--nofile=64:64", str(binary())]) as srv:
        # A client at a time, each answered and then idle in keep-alive (all at once, the burst
        # would busy every worker and event closes its idle connections, as httpd does); once
        # one is not answered, the rest only connect.
        crowd = IdleClients("127.0.0.1", srv.port, 120)
        clients = crowd.socks
        child = psutil.Process(srv.proc.pid).children()[0]
        deadline = time.monotonic() + 10
        while child.num_fds() < 62 and time.monotonic() < deadline:  # 64 minus a spare or two
            time.sleep(0.1)
        assert child.num_fds() >= 62  # it really ran out
        child.cpu_percent(None)
        time.sleep(1.0)
        assert child.cpu_percent(None) < 50  # backing off, not spinning
        for c in clients:
            c.close()
        deadline = time.monotonic() + 10
        while True:
            try:
                body = urllib.request.urlopen(srv.url + "/index.html", timeout=2).read()
                break
            except OSError:
                assert time.monotonic() < deadline, "did not recover"
                time.sleep(0.2)
        assert body == b"hello from mpmd\n" and srv.proc.poll() is None


def test_request_cpu_is_spent_per_request():
    """RequestCPU: each request costs that much of the serving thread's CPU time."""
    def cpu_for(request_cpu_us, n=60):
        with MpmdServer("prefork", {**SMALL, "RequestCPU": request_cpu_us}) as srv:
            child = psutil.Process(srv.proc.pid).children()[0]
            before = sum(child.cpu_times()[:2])
            with socket.create_connection(("127.0.0.1", srv.port), timeout=5) as s:
                for _ in range(n):  # one keep-alive connection: one child serves them all
                    s.sendall(b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n")
                    data = b""
                    while not data.endswith(b"hello from mpmd\n"):
                        data += s.recv(4096)
            return sum(child.cpu_times()[:2]) - before

    assert cpu_for(10_000) >= 60 * 0.010 * 0.9  # 10 ms a request, on the thread's own clock
    assert cpu_for(0) < 60 * 0.010 * 0.3


# Requests whose parsing httpd 2.4.71's default (HttpProtocolOptions Strict) decides: each is
# sent to mpmd and to a real httpd, which must give the same status.
PARSING_CASES = [
    b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /index.html HTTP/1.1\nHost: x\r\n\r\n",  # bare LF after the request line
    b"GET /index.html HTTP/1.1\r\nHost: x\r\n\n",  # bare LF ending the head
    b"GET /index.html HTTP/1.1\nHost: x\n\n",
    b"\nGET /index.html HTTP/1.1\r\nHost: x\r\n\r\n",  # a bare LF before the request line
    b"\r\nGET /index.html HTTP/1.1\r\nHost: x\r\n\r\n",  # an empty CRLF line before it
    b"GET /index.html HTTP/1.1\r\n\r\n",  # no Host
    b"GET /index.html HTTP/1.1\r\nHost:\r\n\r\n",  # empty Host
    b"GET /index.html HTTP/1.1\r\nHost: \r\n\r\n",
    b"GET /index.html HTTP/1.0\r\n\r\n",  # 1.0 may omit it
    b"GET /index.html HTTP/1.0\r\nHost: \r\n\r\n",
    b"GET /index.html HTTP/1.0\r\nHost: a b\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: a b\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: x/y\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: a_b\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: -x.\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: x..y\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: x:\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: x:abc\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: 1.2.3.4:8080\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: [::1]:80\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: [zz]\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: \xc3\xa9.x\r\n\r\n",
    b"GET http://x/index.html HTTP/1.1\r\n\r\n",  # absolute-form does not stand for Host
    b"GET http://x/index.html HTTP/1.1\r\nHost: y\r\n\r\n",
    b"GET http://x/index.html HTTP/1.0\r\n\r\n",
    b"GET http:///index.html HTTP/1.1\r\nHost: y\r\n\r\n",
    b"GET http://a b/index.html HTTP/1.1\r\nHost: y\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: x\r\nX: a\tb\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost : x\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n  folded\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: x\r\n  folded\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\n  folded\r\nHost: x\r\n\r\n",
]


def _status(resp: bytes) -> int:
    return int(resp.split(b" ", 2)[1]) if resp.startswith(b"HTTP/1.1 ") else 0


@pytest.mark.httpd
def test_request_parsing_answers_as_httpd_does(tmp_path):
    from httpd_oracle import APACHE2, RunningHttpd

    if APACHE2 is None:
        pytest.skip("httpd not installed")
    with RunningHttpd(tmp_path, "event") as httpd, MpmdServer("event", {**SMALL, "Timeout": 3}) as srv:
        theirs = [_status(exchange(httpd.port, r)) for r in PARSING_CASES]
        ours = [_status(exchange(srv.port, r)) for r in PARSING_CASES]
    assert 400 in theirs and 200 in theirs  # the cases are judged, not all refused or all served
    assert list(zip(PARSING_CASES, ours, strict=True)) == list(zip(PARSING_CASES, theirs, strict=True))
