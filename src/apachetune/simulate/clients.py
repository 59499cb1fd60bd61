"""The clients, as load generators and browsers behave:

- a new connection carries its first request; a SYN that finds the accept queue full is dropped
  and the client's kernel sends it again on its schedule (syn.py: this machine's by default;
  1, 3, 7 s steps in an overflowing server's latency with Linux before 6.5, 1, 2, 3, 4, 5, 7 s
  since), and gives up after the last retransmission's timeout;
- a request not answered within the workload's timeout is given up: an error, and the client
  starts again on a new connection;
- a connection the server closed is noticed at the next request, which then opens a new one;
- a request sent on a keep-alive connection reaches the server `turnaround` seconds after the
  client had the response (the client reading it, its next write, the loopback): a connection
  the server closes meanwhile, or that event closes unread because its workers are busy, loses
  that request (Client.lost: a browser sends it again on a new connection, a load generator
  counts an error, ab a "Length" failure); that time exactly, or a draw from a distribution
  (Workload.turnaround_draw);
- a load generator on the server's machine (CpuCosts' client figures) spends CPU on each
  response and request in its own threads, one response at a time (ClientThread): ab is one
  thread, wrk two by default. Past what they can take, responses wait in the client's sockets
  (ab -k -c 100 against Debian's event section, a small file: httpd closed 0.05-2% of the
  requests unread, the simulation 0.2%; with the client's CPU spent in the workers, 47%). httpd
  still keeps about half of them in its workers, waiting for a core while the client runs its
  time slice, and grows its pool: not modelled (docs/simulate.md, "The client's threads")."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable

from apachetune.simulate.clock import Clock
from apachetune.simulate.cpu import CpuCosts, Processors
from apachetune.simulate.server import CLOSED, CONNECTED, HALF_OPEN, Conn, Server
from apachetune.simulate.stats import Stats
from apachetune.simulate.syn import half_open_schedule
from apachetune.simulate.workload import Workload


class ClientThread:
    """One thread of a load generator that runs on the server's machine: it handles one response
    at a time (reads it, writes the next request), each taking the client's CPU on the cores it
    shares with httpd (Processors). A response that comes while it is busy waits its turn. A new
    connection's CPU (closing the last socket, socket(), connect(): on loopback the handshake
    runs in that call) is spent before its request goes out, as wrk's reconnect_socket and ab's
    start_connect spend it, not between its first response and its next request."""

    def __init__(self, cpu: Processors, costs: CpuCosts):
        self.cpu, self.costs = cpu, costs
        self.queue: deque[tuple[float, Callable[..., None], tuple[object, ...]]] = deque()
        self.busy = False

    def handle(self, fn: Callable[..., None], *args: object) -> float:
        """Call fn(*args) once this thread has spent the response's CPU on it; returns that CPU."""
        return self._queue(self.costs.client_request, fn, args)

    def connect(self, fn: Callable[..., None], *args: object) -> None:
        """Call fn(*args) once this thread has opened a new connection: next, before the responses
        waiting (ab and wrk reconnect in the handler that read the last response or the close)."""
        self._queue(self.costs.client_connection, fn, args, first=True)

    def _queue(self, work: float, fn: Callable[..., None], args: tuple[object, ...], first: bool = False) -> float:
        if first:
            self.queue.appendleft((work, fn, args))
        else:
            self.queue.append((work, fn, args))
        if not self.busy:
            self._next()
        return work

    def _next(self) -> None:
        if not self.queue:
            self.busy = False
            return
        self.busy = True
        work, fn, args = self.queue.popleft()
        self.cpu.run_first(work, self._ran, fn, args)

    def _ran(self, fn: Callable[..., None], args: tuple[object, ...]) -> None:
        fn(*args)
        # what that handler does at once (a reconnect: connect) runs before the next job
        self.cpu.clock.after(0.0, self._next)


class Client:
    crowd = False
    silent = False  # sends no request (SilentClient)
    service: float | None = None  # seconds its request takes on the server (None: a draw)
    gives_up = True  # gives up on a request after the workload's timeout

    def __init__(self, clock: Clock, server: Server, stats: Stats, workload: Workload):
        self.clock, self.server, self.stats, self.workload = clock, server, stats, workload
        self.keepalive = workload.keepalive
        self.conn: Conn | None = None
        self.waiting = 0  # token of the request awaiting its response (0: none)
        self.tokens = 0
        self.deadline = 0.0  # when the request awaiting its response is given up
        self.timer = False  # a give-up check is on the clock (one a client: see _arm_timeout)
        self.cpu_thread: ClientThread | None = None  # the load generator's thread it runs in (None: no CPU)
        self.reading = False  # a response waits for the client's thread
        # the server closed the connection unseen: why (the event its next request, lost, counts), or ""
        self.unseen_close = ""
        self.spent = 0.0  # the client's CPU on the last response: part of the turnaround
        self.closed_idle: Conn | None = None  # closed by the server while idle, our side still open

    def request(self) -> None:
        """Send the next request: on the open connection if there is one, else on a new one."""
        now = self.clock.now
        if self.closed_idle is not None:  # found closed now: our side closes (its FIN)
            self.server.lingering_readable(self.closed_idle)
            self.closed_idle = None
        self._arm_timeout()
        conn = self.conn
        if conn is not None and (conn.state != CLOSED or self.unseen_close):
            if self.unseen_close:  # the request is written into it, and lost
                self.stats.events[f"requests written into a connection closed {self.unseen_close}"] += 1
                self.unseen_close = ""
            conn.sent_at = now
            if self.workload.turnaround:
                self.clock.after(self._turnaround(), self._arrive, conn, self.waiting)
            else:
                self._arrive(conn, self.waiting)
            return
        self.conn = conn = Conn(self, now)
        self._open(conn)

    def _turnaround(self) -> float:
        """From the response to the request at the server; what the client's thread spent on
        the response (already past) is part of it."""
        w = self.workload
        turnaround = w.turnaround_draw.sample(self.server.rng) if w.turnaround_draw else w.turnaround
        return max(0.0, turnaround - self.spent)

    def _arrive(self, conn: Conn, token: int) -> None:
        """The request sent on the open `conn` reaches the server."""
        if token != self.waiting:
            return  # given up meanwhile
        if not self.server.send(conn):
            self.request_lost(conn)

    def request_lost(self, conn: Conn) -> None:
        """The server closed `conn` without reading the request on it."""
        if conn is self.conn:
            self.conn = None
        self.lost(conn)

    def lost(self, conn: Conn) -> None:
        """The request on `conn` was never read: the server had closed the connection, or
        closed it on the request. A browser sends it again on a new connection."""
        self.stats.events["requests sent again on a new connection"] += 1
        self.conn = new = Conn(self, conn.sent_at)
        self._open(new)

    def _open(self, conn: Conn) -> None:
        """Connect: the SYN goes out once the client's thread (if it has one) has opened the socket."""
        if self.cpu_thread is None:
            self._syn(conn, 0)
        else:
            self.cpu_thread.connect(self._syn, conn, 0)

    def _syn(self, conn: Conn, attempt: int) -> None:
        if conn.state == CLOSED:
            return  # given up meanwhile
        # a retransmitted SYN fires with every other one dropped at the same instant (a batch)
        met = self.server.connect(conn, batch=attempt > 0)
        if met in (CONNECTED, HALF_OPEN) and self.workload.timed_from_handshake:
            conn.sent_at = self.clock.now  # (half-open: the client's side is connected, and writes)
        if met == CONNECTED:
            return
        if met == HALF_OPEN:
            self.stats.events["handshakes left half-open (accept queue full at the last ACK)"] += 1
            self._half_open_chance(conn, -1)
            return
        self.stats.events["SYN dropped (accept queue full)"] += 1
        gaps = self.workload.syn_schedule().gaps
        if attempt < len(gaps) - 1:
            self.clock.after(gaps[attempt], self._syn, conn, attempt + 1)
        else:  # the last retransmission dropped too: the kernel gives up after one more timeout
            self.clock.after(gaps[-1], self._connect_expired, conn)

    def _half_open_chance(self, conn: Conn, chance: int) -> None:
        """A retransmission of a half-open connection reaches the server (chance -1: the ACK that
        found the queue full): in if the queue has room now, else wait for the next; after the
        last, the server has forgotten it and the client's next retransmission is reset."""
        if conn.state == CLOSED or conn is not self.conn:
            return  # given up meanwhile
        if chance >= 0 and self.server.connect(conn) == CONNECTED:
            self.stats.events["half-open connections let in later"] += 1
            return
        chances, reset = half_open_schedule()
        before = chances[chance] if chance >= 0 else 0.0
        if chance + 1 < len(chances):
            self.clock.after(chances[chance + 1] - before, self._half_open_chance, conn, chance + 1)
        else:
            self.clock.after(reset - before, self._half_open_reset, conn)

    def _half_open_reset(self, conn: Conn) -> None:
        if conn.state != CLOSED and conn is self.conn:
            self._give_up("reset")

    def _connect_expired(self, conn: Conn) -> None:
        if conn.state != CLOSED and conn is self.conn:
            self._give_up("connect timeout")

    def _arm_timeout(self) -> None:
        """A deadline for this request. One check a client stays on the clock, moved on to the
        deadline of the request then waiting when it comes (a deadline only ever moves later),
        rather than one a request that nearly every response makes stale: half the events of a
        run, and a heap as long as the timeout's worth of requests."""
        self.tokens += 1
        self.waiting = self.tokens
        if self.gives_up:
            self.deadline = self.clock.now + self.workload.timeout
            if not self.timer:
                self.timer = True
                self.clock.at(self.deadline, self._timed_out)

    def _timed_out(self) -> None:
        self.timer = False
        if not self.waiting:
            return
        if self.clock.now >= self.deadline:
            self._give_up("timeout")
        else:
            self.timer = True
            self.clock.at(self.deadline, self._timed_out)

    def _give_up(self, kind: str) -> None:
        self.stats.error(self.clock.now, kind)
        self.waiting = 0
        if self.conn is not None:
            self.server.client_close(self.conn)
            self.conn = None
        self.after_error()

    def response(self, conn: Conn, keep: bool) -> None:
        """The server wrote a response; `keep`: it keeps the connection open. The client reads
        it when its thread gets to it."""
        if self.cpu_thread is None:
            self._read(conn, keep)
        else:
            self.reading = True
            self.spent = self.cpu_thread.handle(self._read, conn, keep)

    def _read(self, conn: Conn, keep: bool) -> None:
        self.reading = False
        self.waiting = 0
        self.stats.response(self.clock.now, self.clock.now - conn.sent_at, self.crowd)
        if not keep:
            self.conn = None
            if self.cpu_thread is not None:  # read to the server's FIN: it closes its side now
                self.server.client_fin(conn)
        self.answered(keep)

    def closed(self, conn: Conn) -> None:
        """The server closed an idle connection of ours. A client that pauses (a visitor's gap,
        a closed loop's think time) closes its side when it next sends (`closed_idle`); one
        that asks again at once, at once."""
        if conn is self.conn and not self._noticed_later():
            self.conn = None
            if self.finds_closes_late():
                self.closed_idle = conn

    def finds_closes_late(self) -> bool:
        """Whether the client finds an idle connection closed only when it next sends."""
        return False

    def _noticed_later(self) -> bool:
        """A close that comes while the client's thread has not read the response yet: the
        client finds out when it writes its next request into the connection (and loses it)."""
        if self.reading:
            self.unseen_close = "before its response was read"
        return self.reading

    def answered(self, keep: bool) -> None:
        raise NotImplementedError

    def after_error(self) -> None:
        raise NotImplementedError


class LoopClient(Client):
    """wrk / siege: the next request `think` seconds after each response; a request lost on a
    closed keep-alive connection is an error (wrk counts a read error: "reset"). With `until`
    (a time), it sends nothing after it and closes its connection: the run drains."""

    until: float | None = None

    def answered(self, keep: bool) -> None:
        self._next()

    def lost(self, conn: Conn) -> None:
        self.waiting = 0
        self.stats.error(self.clock.now, "reset")
        self.after_error()

    def after_error(self) -> None:
        self._next()

    def finds_closes_late(self) -> bool:
        return self.workload.think > 0

    def closed(self, conn: Conn) -> None:
        """The server closed our idle connection: the client notices and opens a new one for its
        next request (browsers, curl, requests/urllib3, Go's net/http); a naive one
        (Workload.naive_reuse) writes its next request into it, and loses it. Measured with such
        a client on httpd 2.4.71 event, 2 x 5 threads, 30 keep-alive clients thinking 200 ms
        (exponential) between requests of 50 ms: 671 requests lost in 30 s, 600 parked
        connections closed (simulated 696-752 and 627-676)."""
        if conn is self.conn and self.workload.naive_reuse and not self.waiting and not self.reading:
            self.unseen_close = "while the client paused"
            return
        super().closed(conn)

    def _next(self) -> None:
        if self.until is None or self.clock.now < self.until:
            w = self.workload
            self.clock.after(w.think_draw.sample(self.server.rng) if w.think_draw else w.think, self.request)
        elif self.conn is not None:  # done: it closes its connection, as validate's client does
            self.server.client_close(self.conn)
            self.conn = None


class AbCount:
    """ab -n N's books (support/ab.c): a request is started when it is written (no more than N),
    done when its response is read or its connection ends without one; a connection that ends
    with nothing read after a response on it is a "Length" failure (ab resets the connection's
    keep-alive flag after each response, so close_connection takes it for a short response);
    ab stops when N are done. Each of the first N done has a time, from the connection's start
    (its connect, or the response before it on a keep-alive connection: ab writes the next
    request at once) to the response or the close, a failure's too: its percentile table sorts
    them all (`times`)."""

    def __init__(self, requests: int):
        self.requests = requests
        self.started = 0
        self.done = 0
        self.failed_length = 0
        self.finished_at: float | None = None
        self.times: list[float] = []

    def start(self) -> bool:
        if self.started >= self.requests:
            return False
        self.started += 1
        return True

    def finish(self, now: float, failed: bool, since: float) -> None:
        self.failed_length += failed  # ab counts the failure even past N (the run ends there anyway)
        if self.done < self.requests:
            self.times.append(now - since)
            self.done += 1
            if self.done == self.requests:
                self.finished_at = now

    @property
    def complete(self) -> bool:
        return self.done >= self.requests


class AbClient(LoopClient):
    """One of ab -c's connections: with -k it sends the next request as soon as it has read a
    response; a request lost on a closed keep-alive connection is done and a Length failure, and
    the next goes on a new connection (with -r: ab carries on). Once N requests are started, ab
    writes no more but keeps its connections open: on prefork and worker each holds a worker
    until KeepAliveTimeout, while connections with a request wait in the accept queue, and the
    server's close of such an idle connection is, for ab, one more request done and a Length
    failure (measured on httpd 2.4.71, worker 2 x 3 threads, ab -k -c 1000 -n 50000: 49,000
    requests in 5 s, then 12 every 5 s, 239 s in all). ab has no per-request timeout (-s is
    a silence of the whole run)."""

    gives_up = False

    def __init__(self, clock: Clock, server: Server, stats: Stats, workload: Workload, count: AbCount):
        super().__init__(clock, server, stats, workload)
        self.count = count
        self.since = 0.0  # ab's c->start: the connection's connect, or its last response read

    def request(self) -> None:
        self.since = self.clock.now
        if self.count.start():
            super().request()

    def closed(self, conn: Conn) -> None:
        if conn is not self.conn or self._noticed_later():
            return
        self.conn = None
        if not self.waiting:  # idle after a response: read nothing, so done and a Length failure
            self.count.finish(self.clock.now, failed=True, since=self.since)
            self.request()
        # else the request on its way finds the connection closed (lost)

    def answered(self, keep: bool) -> None:
        self.count.finish(self.clock.now, failed=False, since=self.since)
        self.since = self.clock.now  # (ab's end game: it writes no more, and this is the start it keeps)
        super().answered(keep)

    def lost(self, conn: Conn) -> None:
        self.waiting = 0
        self.after_error()

    def after_error(self) -> None:  # lost or never connected: done, nothing read
        self.count.finish(self.clock.now, failed=True, since=self.since)
        super().after_error()


class Visitor(Client):
    """An open-loop visitor: a few requests on one connection, then it leaves. `gone`, when
    set: told once it has left (its last answer, or it gave up)."""

    gone: Callable[[], None] | None = None

    def __init__(self, clock: Clock, server: Server, stats: Stats, workload: Workload):
        super().__init__(clock, server, stats, workload)
        self.left = workload.requests_per_connection if workload.keepalive else 1
        self.holding = False  # done, its connection left open for the server to close (a browser)

    def answered(self, keep: bool) -> None:
        self.left -= 1
        if self.left > 0:
            self.clock.after(self.workload.gap, self.request)
            return
        if self.conn is not None:
            if self.workload.holds_open:  # a browser keeps it until the server's KeepAliveTimeout
                self.holding = True
                return
            self.server.client_close(self.conn)  # done: it hangs up
            self.conn = None
        self._leave()

    def closed(self, conn: Conn) -> None:
        if self.holding and conn is self.conn:  # the server let it go: the visitor closes its side and leaves
            self.conn, self.holding = None, False
            self._leave()
            return
        super().closed(conn)

    def after_error(self) -> None:
        self._leave()  # a visitor who waited that long goes away

    def finds_closes_late(self) -> bool:
        return True

    def _leave(self) -> None:
        if self.gone is not None:
            told, self.gone = self.gone, None
            told()


class CrowdClient(Client):
    """An idle keep-alive client: one request, then it holds the connection; when the server
    closes it, it comes back at once (or, with the workload's `crowd_returns` off, goes away:
    validate's idle clients do)."""

    crowd = True

    def __init__(self, clock: Clock, server: Server, stats: Stats, workload: Workload):
        super().__init__(clock, server, stats, workload)
        self.keepalive = True
        self.service = workload.crowd_service  # None: a request of the workload's
        self.on_answer: Callable[[], None] | None = None  # told of the first answer (the crowd forming)

    def answered(self, keep: bool) -> None:
        if self.on_answer is not None:
            told, self.on_answer = self.on_answer, None
            told()
        if not keep and self.workload.crowd_returns:
            self.clock.after(0.0, self.request)

    def closed(self, conn: Conn) -> None:
        if conn is self.conn:
            self.conn = None
            if self.workload.crowd_returns:
                self.clock.after(0.0, self.request)

    def after_error(self) -> None:
        self.clock.after(0.0, self.request)


class SilentClient(Client):
    """A connection that never sends a request (a browser's unused preconnection, a slowloris
    client): it opens one, sends nothing, and opens another as soon as the server closes it. On
    Linux httpd's default AcceptFilter (http: data, TCP_DEFER_ACCEPT 30) leaves it in the kernel
    until the SYN-ACK retransmissions run out (Server.accept_defer); accepted, it holds a worker
    until the server's read timeout (Server.read_timeout)."""

    silent = True
    gives_up = False

    def request(self) -> None:
        self.conn = conn = Conn(self, self.clock.now)
        if self.server.accept_defer:
            self.clock.after(self.server.accept_defer, self._syn, conn, 0)
        else:  # at once, not after(0): queued ahead of the clients that start at the same instant
            self._syn(conn, 0)

    def closed(self, conn: Conn) -> None:
        if conn is self.conn:
            self.conn = None
            self.clock.after(0.0, self.request)

    def answered(self, keep: bool) -> None:  # (it asks nothing)
        pass

    def after_error(self) -> None:
        self.clock.after(0.0, self.request)


class CrowdFormation:
    """The idle crowd forms as validate's IdleClients forms it and as idle browsers arrive: one
    client at a time, each once the one before has its answer. A client not answered within
    QUIET s means the server holds no more: the rest connect at once and wait in the backlog."""

    QUIET = 0.5

    def __init__(self, clock: Clock, clients: list[CrowdClient]):
        self.clock, self.clients = clock, clients
        self.started = 0
        self.answered = 0
        self.stalled = False

    @property
    def done(self) -> bool:
        return self.answered == len(self.clients) or self.stalled

    def start(self) -> None:
        self.clock.at(0.0, self._next)

    def _next(self) -> None:
        if self.started == len(self.clients):
            return
        client = self.clients[self.started]
        self.started += 1
        client.on_answer = self._answered
        client.request()
        self.clock.after(self.QUIET, self._quiet, self.started)

    def _answered(self) -> None:
        self.answered += 1
        self._next()

    def _quiet(self, started: int) -> None:
        if self.started == started and self.answered < started:  # still waiting for that one
            self.stalled = True
            while self.started < len(self.clients):
                self.started += 1
                self.clients[self.started - 1].request()


class Arrivals:
    """Poisson arrivals of visitors at `workload.rate` a second; `present`: the visitors that
    have not left yet. With `until` (a time), none arrive from then on: the run drains."""

    until: float | None = None

    def __init__(self, clock: Clock, server: Server, stats: Stats, workload: Workload, rng: random.Random):
        self.clock, self.server, self.stats, self.workload, self.rng = clock, server, stats, workload, rng
        self.present: dict[Visitor, None] = {}

    def start(self) -> None:
        self.clock.after(self.rng.expovariate(self.workload.rate), self._arrive)

    def _arrive(self) -> None:
        if self.until is not None and self.clock.now >= self.until:
            return
        visitor = Visitor(self.clock, self.server, self.stats, self.workload)
        self.present[visitor] = None
        visitor.gone = lambda: self.present.pop(visitor)
        visitor.request()
        self.clock.after(self.rng.expovariate(self.workload.rate), self._arrive)


class ReplayVisitor(Visitor):
    """A request from an access log: received when the log says, taking the time it logged."""

    def __init__(self, replay: Replay, service: float | None):
        super().__init__(replay.clock, replay.server, replay.stats, replay.workload)
        self.replay, self.service, self.left = replay, service, 1

    def answered(self, keep: bool) -> None:
        super().answered(keep)
        self.replay.finished += 1

    def after_error(self) -> None:
        self.replay.finished += 1


class Replay:
    """An access log's requests, each sent at its offset after `start`. %t counts whole seconds:
    the requests logged in one second are spread over it at random (seeded), as they came."""

    def __init__(self, clock: Clock, server: Server, stats: Stats, workload: Workload, rng: random.Random):
        self.clock, self.server, self.stats, self.workload = clock, server, stats, workload
        spread = workload.replay_spread
        offsets = [(t + rng.random() if spread else t, d) for t, d in workload.replay]
        offsets.sort(key=lambda item: item[0])
        self.requests = offsets
        self.next = 0
        self.finished = 0

    def start(self, at: float) -> None:
        self.origin = at
        if self.requests:
            self.clock.at(at + self.requests[0][0], self._arrive)

    def done(self) -> bool:
        return self.finished >= len(self.requests)

    def _arrive(self) -> None:
        ReplayVisitor(self, self.requests[self.next][1]).request()
        self.next += 1
        if self.next < len(self.requests):
            self.clock.at(self.origin + self.requests[self.next][0], self._arrive)

