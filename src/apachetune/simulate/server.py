"""httpd's connections and workers (server/mpm/{prefork,worker,event}/*.c), as the simulation
needs them:

- the listen socket's accept queue, min(ListenBacklog, somaxconn) long: a SYN that finds it full
  is dropped and the client's kernel retries (clients.py);
- prefork and worker: a connection holds its process or thread from accept to close, keep-alive
  waits included (up to KeepAliveTimeout); a process accepts only with an idle worker;
- event: a worker holds a connection only while it serves a request; between requests the
  connection is parked in the listener until KeepAliveTimeout. A process accepts while it has an
  idle worker and its connections are below ThreadsPerChild + idle workers x
  floor(AsyncRequestWorkerFactor) (2.4.71's connections_above_limit; before 2.4.30 the whole
  factor, floor(idle workers x factor), and up to it: it stopped only above it), where a
  connection counts once a worker has started it (process_socket): the connections a listener
  accepts back to back at one instant do not count against each other, so a burst can take
  every worker; a process that has stopped listening counts one idle worker less until it
  listens again (no flip-flop; every 2.4.x, 2.4.6-2.4.29 in the re-enabling test); when new
  connections wait and none of its workers is idle, it closes its parked keep-alive connections
  so that the clients reconnect to another process (every 2.4.x: "kill'em all"; 2.4.30-2.4.46
  also when its idle workers are there but it is over its connection limit), and so does one
  that a newcomer wakes though another process accepts it (admit), and a request
  that arrives on a parked connection when no worker of its process is idle is not read: the
  connection is closed (the listener does not wait for a worker), and the client must send it
  again on a new connection (ab counts it a "Length" failure); from 2.4.28 the listener does
  not shut those connections itself but chains them for a worker of its process
  (defer_linger_chain): an idle one at once, else the next that finishes a request, so their
  clients see the closes in batches, as the workers free up; a listener that a newcomer wakes,
  able to accept it, but beaten to it by another process keeps the idle worker it reserved for
  it (have_idle_worker), and that worker is not counted idle (idlers) until it takes a
  connection: the model loses every such race (admit);
- MaxKeepAliveRequests ends a connection after that many requests (0: never);
- listener buckets (ListenCoresBucketsRatio: online cores / ratio of them): each bucket has its
  own listen socket (SO_REUSEPORT) with its own accept queue, ListenBacklog long, and the
  children of the slots s with s % buckets == b accept only from bucket b's; the kernel hashes
  each new connection (its source port) to one socket, so a connection can wait in one bucket
  while another bucket's children are idle (listen.c ap_duplicate_listeners, make_child).

Lingering close: after a response that ends its connection httpd shuts its side and reads
until the client's FIN, for at most SECONDS_TO_LINGER (2 s) of silence (ap_lingering_close):
prefork's and worker's worker waits that long before it accepts again, event's listener holds
the connection (not its worker). The client's FIN comes LINGER after the response (ab, wrk,
browsers: at once) plus the workload's `fin_after`, or, from a local load generator's thread
(clients.ClientThread), LINGER after that thread has read the response. Not modelled: the network. (CPU contention
is cpu.py's, when the workload has a CPU part.)"""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING

from apachetune.mpm.versions import rules_for
from apachetune.simulate.clock import Clock
from apachetune.simulate.cpu import CpuCosts, Processors
from apachetune.simulate.stats import Stats
from apachetune.simulate.workload import ServiceTime
from apachetune.sizing import model

if TYPE_CHECKING:
    from apachetune.simulate.clients import Client

# DEFERRED: event (2.4.28+) has closed it in its listener, and waits for a worker to shut it
BACKLOG, READING, SERVING, PARKED, CLOSED, DEFERRED = range(6)
# what a SYN meets (Server.connect)
CONNECTED, DROPPED, HALF_OPEN = "connected", "dropped", "half-open"


FIXED_SPREAD = 0.001  # sigma (lognormal) between requests of one set length: Server._untied
LINGER = 1e-4  # seconds from a response to the client's FIN, on loopback
# Linux, httpd's default AcceptFilter (http and https: "data"): listen.c sets TCP_DEFER_ACCEPT to
# 30 s, which the kernel rounds up to whole SYN-ACK retransmissions (1 + 2 + 4 + 8 + 16 s): a
# connection that sends nothing reaches accept() 31 s after its handshake (measured: 31.4 s for a
# plain socket, 31.56 s on httpd 2.4.71), one that sends its request at once, at once
DEFER_ACCEPT = 31.0
DEFAULT_TIMEOUT = 60.0  # httpd's Timeout when the configuration sets none
SECONDS_TO_LINGER = 2.0  # httpd's lingering close gives up on a silent client after this
MAX_SECS_TO_LINGER = 30.0  # event's lingering queue for the connections it closes itself (event.c)
# event's listener thread: how long after a worker goes idle a listener with its listen sockets
# disabled acts, and how far apart the connections it accepts back to back reach their workers
# (fitted on httpd 2.4.71, 2-core VM: docs/simulate.md, "event's listener"; 0, 0: instant)
LISTENER_WAKE = 150e-6
ACCEPT_SPACING = 100e-6
# client_first: the longest a client that ran first on its worker's core keeps it (its turnaround
# is tens of µs on loopback; one that sends nothing yields at once)
CLIENT_FIRST_LIMIT = 1e-3


class Conn:
    __slots__ = ("client", "process", "state", "served", "token", "sent_at", "parked_until", "bucket", "holds",
                 "timer", "closed_at", "pending")

    def __init__(self, client: Client, sent_at: float):
        self.client = client
        self.process: Process | None = None
        self.state = BACKLOG
        self.served = 0
        self.token = 0  # bumped at each change of state: a stale deadline sees another token
        self.sent_at = sent_at  # when the request now on it was sent (its first: with the SYN)
        self.parked_until = 0.0  # its keep-alive deadline while it waits for its next request
        self.bucket: int | None = None  # the listener bucket its 4-tuple hashes to (SYNs sent again keep it)
        self.holds = False  # event: its last worker is not idle until its next request is in (client_first)
        self.timer = False  # a keep-alive check is on the clock (_keepalive_expired)
        self.closed_at: float | None = None  # event: when its listener closed it, idle (it lingers)
        self.pending = 0  # DEFERRED: the client's request written into it meanwhile (its token; 0: none)


class Process:
    __slots__ = ("slot", "workers", "ready_at", "serving", "conns", "accepted", "quiescing", "listening",
                 "closing_parked", "gone", "burst", "burst_at", "kept", "bucket", "lingering", "asleep_until",
                 "reserved", "ended", "returning", "deferred")

    def __init__(self, slot: int, workers: int, ready_at: float, bucket: int = 0):
        self.slot = slot
        self.bucket = bucket  # the listener bucket it accepts from: slot % buckets
        self.workers = workers
        self.ready_at = ready_at  # forked; accepts from then
        self.serving = 0  # workers serving a request
        # its connections, in the order accepted (a dict: a set of objects hashed by address would
        # iterate in another order each run, and the same seed would not give the same run)
        self.conns: dict[Conn, None] = {}
        self.accepted = 0
        self.quiescing = False  # stopping gracefully: accepts nothing, exits when its connections end
        self.listening = True  # event: its listener polls the listen socket (not disabled)
        # event: its listener will drop the parked connections, and why: "busy" (it found no
        # idle worker) or "limit" (2.4.30-2.4.46, over its connection limit); "": it will not
        self.closing_parked = ""
        self.gone = False  # exited
        self.burst, self.burst_at = 0, -1.0  # event: connections accepted at burst_at, not yet counted
        self.kept = 0  # event: pools of closed connections kept for the next ones (memory only)
        self.lingering = 0  # event: closed connections whose pool the listener holds until the client's FIN
        self.asleep_until = 0.0  # event 2.4.30-2.4.46: its disabled listener's next wake-up after closing its crowd
        self.reserved = False  # event: its listener holds an idle worker for its next accept (it lost a race)
        self.ended = 0  # connections it has finished with (worker's MaxConnectionsPerChild counts these)
        self.returning = 0  # event: workers done with a request, not idle yet (worker_return, client_first)
        self.deferred: list[Conn] = []  # event 2.4.28+: connections its listener closed, for a worker to shut


class Server:
    def __init__(self, clock: Clock, mpm: str, section: dict[str, object], service: ServiceTime,
                 rng: random.Random, stats: Stats, backlog: int, version: str | None = None,
                 cpu: Processors | None = None, cpu_fraction: float = 0.0, buckets: int = 1,
                 fin_after: float = 0.0, costs: CpuCosts | None = None, accept_defer: float = DEFER_ACCEPT,
                 read_timeout: float | None = None, worker_return: float = 0.0, client_first: float = 0.0,
                 listener_wake: float = LISTENER_WAKE, accept_spacing: float = ACCEPT_SPACING,
                 client_first_fade: float = 0.0):
        self.clock, self.service, self.rng, self.stats = clock, service, rng, stats
        # a connection that sends nothing: how long the kernel keeps it from accept() (0 with
        # AcceptFilter http none or connect), then how long a worker waits for its request line
        # (mod_reqtimeout's header timeout when loaded, else Timeout), every MPM alike: event's
        # worker reads a new connection's first request itself
        self.accept_defer = accept_defer
        self.read_timeout = float(read_timeout if read_timeout is not None
                                  else section.get("Timeout", DEFAULT_TIMEOUT))  # type: ignore[arg-type]
        # from a response that ends its connection to the end of httpd's lingering close
        self.linger = min(LINGER + fin_after, SECONDS_TO_LINGER)
        self.fin_delay = LINGER + fin_after  # from the server's FIN to the client's
        self._fins: dict[Conn, Callable[[Conn], None]] = {}  # awaiting a client thread's FIN: what then
        self._fin_deadlines: deque[tuple[float, Conn]] = deque()  # when httpd gives up on each (oldest first)
        self._fin_timer = False  # _fins_due is scheduled
        self.cpu, self.cpu_fraction = cpu, cpu_fraction
        self.costs = costs or CpuCosts()
        self.event = mpm == "event"
        # event: a worker done with a request counts as idle again an exponential draw of this
        # mean later (0: at once). worker_thread first puts the connection back in the listener's
        # pollset (or hands it to lingering close), then calls ap_queue_info_set_idle: a request
        # that comes back on that connection sooner finds its worker busy and, every other
        # worker of the process busy too, is closed unread (see send). Mostly a few us, at times
        # a preempted thread's tens: docs/simulate.md, "event's parked requests". prefork's and
        # worker's workers read their connection's next request themselves.
        self.worker_return = worker_return if self.event else 0.0
        # event: the share of keep-alive responses whose next request is in before their worker
        # is idle again, whatever the turnaround: a client on the same machine, woken by the
        # response on the worker's core, runs first, and the worker puts the connection back in
        # the pollset only after the request has come (traced with perf on httpd 2.4.71:
        # benchmarks/event_race_trace.py). Clients on other machines: 0.
        self.client_first = client_first if self.event else 0.0
        # ... fading linearly to none as the keep-alive responses near `client_first_fade` a second
        # (0: no fading), read over 50 ms: a busy client is awake for its responses
        self.client_first_fade = client_first_fade
        self._share = self.client_first
        self._window_start, self._window_kept = 0.0, 0
        # event's listener is a thread, not an instant (0, 0: instant). A worker that
        # goes idle while the listener has its listen sockets disabled wakes it, and it acts
        # `listener_wake` later, on what it finds then: a parked request that came meanwhile has
        # taken the worker. Connections it accepts back to back reach their workers
        # `accept_spacing` apart (an accept, a hand-off and a thread's wake-up each). httpd
        # 2.4.71 on a 2-core VM, 3 x 25 threads under 400 wrk keep-alive clients: a worker's
        # next new connection began 60-105 / 123-145 / 227-265 us after its last request ended
        # (p10, p25, p50); the first requests of a new process 100-150 us apart; 150 and 100 us
        # fitted its closes and tail (docs/simulate.md, "event's listener").
        self.listener_wake = listener_wake if self.event else 0.0
        self.accept_spacing = accept_spacing if self.event else 0.0
        self.ties = random.Random(self.rng.getstate()[1][1])  # (Server._untied; reads, never draws from, rng)
        self.threads = 1 if mpm == "prefork" else int(section["ThreadsPerChild"])  # type: ignore[call-overload]
        # event keeps the pools of closed connections, up to 3/4 of ThreadsPerChild a process
        # (unbounded with MaxMemFree 0): memory the model counts beside the live connections
        max_mem_free = int(section.get("MaxMemFree", 2048))  # type: ignore[call-overload]
        self.kept_limit = model.recycled_pools(1, self.threads, max_mem_free) if self.event else 0
        self.kept_mib = model.kept_pool_mib(model.EVENT_CONNECTION_MIB, max_mem_free)  # (MaxMemFree caps it)
        # event's connection limit counts idle workers x the factor: its integer part from 2.4.30,
        # the whole factor (kept in 1/16ths, as the section already holds it) before
        factor = float(section.get("AsyncRequestWorkerFactor", 2))  # type: ignore[arg-type]
        rules = rules_for(version)
        self.factor = int(factor) if rules.integer_factor else factor
        # every 2.4.x counts one idle worker less while the listener is disabled (2.4.30's
        # connections_above_limit: "to avoid flip flop"; before, the re-enabling test's
        # "idlers - 1"), and before 2.4.30 it disabled only above the limit, not at it
        self.strict_limit = not rules.integer_factor
        self.limit_closes_keepalive = rules.limit_closes_keepalive
        self.deferred_close = self.event and rules.deferred_close
        # idle workers a parked connection's request needs to be read (2 before 2.4.30: fdqueue.c)
        self.idle_to_read = 2 if rules.two_idle_to_read else 1
        self.keepalive = str(section.get("KeepAlive", "On")).lower() == "on"
        self.keepalive_timeout = float(section.get("KeepAliveTimeout", 5))  # type: ignore[arg-type]
        self.max_keepalive = int(section.get("MaxKeepAliveRequests", 100))  # type: ignore[call-overload]
        self.max_conns_per_child = int(section.get("MaxConnectionsPerChild", 0))  # type: ignore[call-overload]
        self.processes: list[Process] = []
        self.open = 0  # connections accepted and not yet released, over every process (httpd's CPU grows with them)
        self.buckets = buckets
        self.queues: list[deque[Conn]] = [deque() for _ in range(buckets)]  # the kernel's accept queues
        self.backlog = backlog
        self._batch_at, self._batch_len = -1.0, {}  # a batch of retransmitted SYNs: its queues' lengths
        self.on_exit: Callable[[Process], None] = lambda p: None  # the parent frees the slot

    # What a client does.

    def connect(self, conn: Conn, batch: bool = False) -> str:
        """A SYN: CONNECTED (queued for accept) or DROPPED (the accept queue is full). `batch`:
        a retransmitted SYN, fired with every other one dropped at the same instant: the kernel
        checks each SYN of such a batch against the queue before any of their last ACKs is read
        (HALF_OPEN: it passed, but the queue was full when its ACK came; the client believes it
        is connected). With listener buckets the kernel picks a bucket's socket by hashing the
        connection: one at random (no random draw with one bucket, so a seed gives the runs it
        gave before); a half-open connection's later chances keep its bucket."""
        if conn.bucket is None:
            conn.bucket = self.rng.randrange(self.buckets) if self.buckets > 1 else 0
        bucket = conn.bucket
        queue = self.queues[bucket]
        if batch:
            if self._batch_at != self.clock.now:
                self._batch_at, self._batch_len = self.clock.now, {}
            if self._batch_len.setdefault(bucket, len(queue)) >= self.backlog:
                return DROPPED
            if len(queue) >= self.backlog:
                return HALF_OPEN
        elif len(queue) >= self.backlog:
            return DROPPED
        self.admit(conn, bucket)
        return CONNECTED

    def admit(self, conn: Conn, bucket: int) -> None:
        """An established connection joins its accept queue (room checked by the caller).

        On event the newcomer wakes every listener still listening on its bucket's socket (no
        accept mutex; each polls it): one accepts it, and each of the others that finds it has
        no idle worker or (2.4.30-2.4.46) is over its connection limit stops listening and
        closes its parked connections, though the newcomer went to another process (event.c,
        PT_ACCEPT: "kill'em all"). Measured on a 2.4.37 build, 2 x 25 threads, factor 1: a
        crowd of 200 clients formed one at a time, each hanging up at the server's FIN, had
        148-149 closed: each process closes its 50 as the next client arrives (150), where
        closing only while a newcomer waited for every process closed 100."""
        queue = self.queues[bucket]
        queue.append(conn)
        now = self.clock.now  # (_listening inlined: this runs for each process at each newcomer)
        woken = [p for p in self.processes if p.bucket == bucket and p.listening and not p.quiescing and not p.gone
                 and p.ready_at <= now and p.asleep_until <= now] if self.event else []
        racing = []
        if len(queue) == 1:  # else no process could accept the ones before it either
            ready = self._dispatch(bucket, None)  # (those able to accept before it took the newcomer)
            ready_ids = set(map(id, ready))
            racing = [p for p in woken if id(p) in ready_ids]
        for p in racing:
            if conn.process is not p and not queue:
                p.reserved = True  # lost the race: its accept found the queue empty, its worker stays reserved
        for p in woken:
            if conn.process is not p and self._drops_parked(p):
                self._drop_parked_next_pass(p, self._why_drop(p), woken=True)
        if self.event and queue:
            for p in self.processes:
                if p.bucket == bucket:
                    self._busy(p)

    def _listening(self, p: Process) -> bool:
        """event: `p`'s listener polls the listen socket now (it disables it only when a newcomer
        finds it unable to accept; asleep after closing its crowd, it does not poll)."""
        return (p.listening and not p.quiescing and not p.gone and p.ready_at <= self.clock.now
                and p.asleep_until <= self.clock.now)

    def waiting(self) -> int:
        """Connections in the accept queues."""
        return sum(len(q) for q in self.queues)

    def send(self, conn: Conn) -> bool:
        """The next request on an open connection: True when a worker has it, or (event 2.4.28+)
        when the connection waits to be shut (the client learns its loss then: _close_deferred);
        False when it is lost: the server had closed the connection, or event closes it unread
        now (no worker of its process was idle when it became readable)."""
        if conn.state == READING:
            self._serve(conn)
        elif conn.state == PARKED:
            p = conn.process
            assert p is not None
            busy = self.idle(p) < self.idle_to_read  # (its own worker, if it holds it, is not idle yet)
            self._let_go(conn)
            if busy:  # event.c: "If we don't get a worker immediately ... we close"
                self.stats.events["keep-alive request closed, workers busy"] += 1
                # and that pass found the workers busy: it drops the other parked ones too
                # (workers_were_busy: process_keepalive_queue(0) as the iteration ends)
                self._drop_parked_next_pass(p, "busy", woken=True)
                if self.deferred_close:
                    self._defer(conn, request=True)
                    self._hand_deferred(p)
                    return True
                self._close(conn)
                return False
            p.reserved = False  # (a reserved worker is the one it gets)
            self._serve(conn)
        elif conn.state == DEFERRED:  # unread: the worker that shuts it reads and drops it
            conn.pending = conn.client.waiting
        else:
            if conn.state == CLOSED:  # written into after the listener closed it: readable now
                self.lingering_readable(conn)
            return False
        return True

    def lingering_readable(self, conn: Conn) -> None:
        """event: the client of a connection the listener closed while it was idle (its keep-alive
        timeout, or for want of a worker) sends its FIN or a request into it now. The lingering
        socket is readable, and the listener needs a worker to finish it, without waiting for
        one (event.c: a CONN_STATE_LINGER_* connection goes the way of a readable keep-alive
        one); finding none idle, it closes its process's parked connections too
        (workers_were_busy). With clients that find the close only at their next request
        (a pause, a visitor's gap), the closes feed more closes while the workers are busy; wrk's
        and ab's, whose next request is on its way when the close comes, barely move (traced on
        httpd 2.4.71, 2 x 5 threads, 20 wrk clients: 11 such reads a second found no worker idle;
        simulated 3-5, the errors and closes the same with or without them)."""
        p = conn.process
        if conn.closed_at is None or p is None or p.gone or self.clock.now - conn.closed_at >= SECONDS_TO_LINGER:
            return
        conn.closed_at = None  # (once: then it is done)
        if self.idle(p) == 0:
            self.stats.events["lingering connections read with every worker busy"] += 1
            self._drop_parked_next_pass(p, "busy", woken=True)

    def client_close(self, conn: Conn) -> None:
        """The client hangs up (done, or tired of waiting)."""
        if conn.state in (SERVING, BACKLOG, DEFERRED):
            # deferred: the worker that shuts it reads the FIN (_close_deferred)
            # serving: its worker finds out when it writes the response; still in the accept
            # queue: httpd accepts it later and reads end of file at once
            conn.state = CLOSED
            return
        self._close(conn)

    # The server's side.

    def idle(self, p: Process) -> int:
        """Idle workers of `p`: on prefork and worker a connection holds one from accept to close;
        on event a worker on its way back (worker_return) is not idle yet."""
        return p.workers - (p.serving + p.returning if self.event else len(p.conns))

    def idlers(self, p: Process) -> int:
        """The idle workers event's listener counts (ap_queue_info_num_idlers): not the one it
        holds reserved after losing an accept race (see admit)."""
        return self.idle(p) - p.reserved

    def not_accepting(self, p: Process) -> bool:
        """No idle worker, or on event over its connection limit: the process has stopped
        listening (ps->not_accepting), and the parent does not count its idle workers, so it
        forks more processes."""
        if not self.event:
            return p.workers == len(p.conns)  # (idle() inlined: this runs for each process at each newcomer)
        idle = p.workers - p.serving - p.returning - p.reserved  # idlers()
        if idle <= 0:
            return True
        counted = len(p.conns) - (p.burst if p.burst_at == self.clock.now else 0)
        if not p.listening:
            idle -= 1
        limit = p.workers + int(idle * self.factor)
        return counted > limit if self.strict_limit and p.listening else counted >= limit

    def can_accept(self, p: Process) -> bool:
        now = self.clock.now
        if p.quiescing or p.ready_at > now or p.asleep_until > now:
            return False
        accepting = not self.not_accepting(p)
        if self.event:  # the listener disables or enables its listen sockets on what it finds
            p.listening = accepting
        return accepting

    def dispatch(self, only: Process | None = None, bucket: int | None = None) -> None:
        """Processes able to accept take connections from their bucket's accept queue, oldest
        first; the one with the most idle workers first (it wins the race for the listen
        socket). `only`: just that process, the one whose workers or connections changed (after
        any dispatch, either the queue is empty or no process can accept, so only it may now);
        `bucket`: just that bucket's queue, the one that changed."""
        if only is not None:
            self._dispatch(only.bucket, only)
        else:
            for b in range(self.buckets) if bucket is None else (bucket,):
                self._dispatch(b, None)

    def _dispatch(self, bucket: int, only: Process | None) -> list[Process]:
        """Returns the processes that could accept when it began (`only`: none looked at)."""
        queue = self.queues[bucket]
        first: list[Process] = []
        if only is not None:  # an exited process is quiescing: it accepts nothing
            while queue and self.can_accept(only):
                self._take(only, queue)
            return first
        if not queue:
            return first
        # Looked at once: taking connections changes only the process that takes them, so the
        # others that could not accept still cannot (one that can again dispatches itself).
        ready = first = [p for p in self.processes if p.bucket == bucket and self.can_accept(p)]
        while queue and ready:
            p = max(ready, key=self.idle)
            while queue and self.can_accept(p):
                self._take(p, queue)
            if queue:
                ready = [q for q in ready if q is not p and self.can_accept(q)]
        return first

    def _take(self, p: Process, queue: deque[Conn]) -> None:
        conn = queue.popleft()
        if conn.state != CLOSED:  # (else the client gave up while it waited)
            self._accept(p, conn)

    def _accept(self, p: Process, conn: Conn) -> None:
        conn.process = p
        p.reserved = False  # the worker it held (if any) takes this one
        p.conns[conn] = None
        self.open += 1
        p.kept = max(0, p.kept - 1)  # a kept pool serves it
        p.accepted += 1
        if p.burst_at != self.clock.now:
            p.burst, p.burst_at = 0, self.clock.now
        p.burst += 1
        self.stats.events["accepted"] += 1
        last = self._last_connection(p)
        if last:
            p.quiescing = True
            self.stats.recycled.append(p.accepted)
        self._serve(conn)
        if last and self.event:
            self.quiesce(p)  # its listener stops at once and, dying, closes its parked connections

    def _last_connection(self, p: Process) -> bool:
        """MaxConnectionsPerChild: the connection just accepted is `p`'s last. prefork counts the
        connections it has taken (child_main, before each accept), event those its listener has
        accepted (conns_this_child, at accept): exactly MaxConnectionsPerChild. worker's workers
        count a connection when they are done with it (requests_this_child, after
        process_socket), and its listener looks at the count only between two accepts: with its
        threads busy it accepts one more each time a worker frees, the last after the
        MaxConnectionsPerChild-th has ended, so a process serves up to MaxConnectionsPerChild +
        ThreadsPerChild (httpd 2.4.71, 5 threads, 30: 33-35; prefork and event: 20 and 30 exactly)."""
        limit = self.max_conns_per_child
        if not limit:
            return False
        if self.threads > 1 and not self.event:
            return p.ended >= limit
        return p.accepted >= limit

    def _serve(self, conn: Conn) -> None:
        p = conn.process
        assert p is not None
        conn.state = SERVING
        conn.token += 1
        p.serving += 1
        seconds = conn.client.service
        if conn.client.silent:  # its worker waits for a request line that never comes
            self.stats.events["silent connections accepted"] += 1
            self.clock.after(self.read_timeout, self._done, conn)
            if self.event:
                self._busy(p)
            return
        if seconds is None:
            seconds = self.service.sample(self.rng)
            if self.service.kind not in ("exp", "lognormal"):
                seconds = self._untied(seconds)
        if self.accept_spacing and conn.served == 0 and p.burst_at == self.clock.now:
            seconds += (p.burst - 1) * self.accept_spacing  # its place in the listener's run of accepts
        if self.cpu is None:
            self.clock.after(seconds, self._done, conn)
        else:  # its CPU part (and httpd's own) shared with every request on CPU, then the rest off CPU
            on_cpu = seconds * self.cpu_fraction
            cost = on_cpu + self.costs.of(conn.served == 0, self.open, client=conn.client.cpu_thread is None,
                                          workers=len(self.processes) * self.threads)
            self.cpu.run(cost, self.clock.after, seconds - on_cpu, self._done, conn)
        if self.event:
            self._busy(p)

    def _untied(self, seconds: float) -> float:
        """A request of a set length (fixed, a document's, the log's distribution) differs from the next by
        FIXED_SPREAD, as on a real server (validate's 50 ms sleep on httpd 2.4.71: p50 50.8 ms,
        p95 51.2). Exactly equal lengths finish in lock-step, and on event every worker of a
        process then frees at one instant: 20 wrk clients with keep-alive on 2 x 5 threads of
        fixed 51.2 ms requests were closed 208 times a second against httpd's 40 (35 with the
        spread). Its own generator, so the workload's draws stay as they were."""
        return seconds * math.exp(FIXED_SPREAD * self.ties.gauss(0.0, 1.0)) if seconds > 0 else seconds

    def _done(self, conn: Conn) -> None:
        p = conn.process
        assert p is not None
        self._finish(conn, p)
        if p.deferred:  # (event 2.4.28+) the worker then shuts what its listener closed
            self._close_deferred(p)

    def _finish(self, conn: Conn, p: Process) -> None:
        """A worker is done with `conn`'s request: the response, then the connection kept
        (prefork, worker: read on; event: parked) or ended."""
        p.serving -= 1
        if self.worker_return:
            p.returning += 1
            self.clock.after(self.rng.expovariate(1 / self.worker_return), self._returned, p)
        conn.served += 1
        if conn.state == CLOSED:  # the client left while it was served
            self._release(conn)
            return
        silent = conn.client.silent  # its read timed out: httpd closes it without a response
        if silent:
            self.stats.events["silent connections closed at the read timeout"] += 1
        keep = not silent and self.keepalive and conn.client.keepalive and not p.quiescing and (
            not self.max_keepalive or conn.served < self.max_keepalive)
        conn.state = (PARKED if self.event else READING) if keep else CLOSED
        conn.token += 1
        if keep and self.client_first and self.rng.random() < self._client_first_share():
            conn.holds = True
            p.returning += 1
            # a client that runs first and sends nothing (a pause, ab's last requests started)
            # yields the core within its turnaround, and the worker goes on to idle
            self.clock.after(CLIENT_FIRST_LIMIT, self._hold_over, conn, conn.served)
        if keep:
            conn.parked_until = self.clock.now + self.keepalive_timeout
            if not conn.timer:  # else the check on the clock is earlier, and moves on to this deadline
                conn.timer = True
                self.clock.at(conn.parked_until, self._keepalive_expired, conn)
        if silent:
            conn.client.closed(conn)
        else:
            conn.client.response(conn, keep)
        if not keep and not self.event:
            # Lingering close: prefork's and worker's worker waits for the client's FIN before it
            # accepts again, so a client that reconnects at once finds the accept queue as full
            # as it was (on real httpd it does: the slot goes to a client retrying its SYN).
            # event's listener lingers for its workers.
            self._await_fin(conn, self._release)
        elif not keep:
            self._linger(conn, after_response=True)
        elif self.event and not self.worker_return and not conn.holds:
            self._worker_idle(p)

    def _let_go(self, conn: Conn) -> None:
        """client_first: the worker that served `conn` is idle now that its next request is in
        (or the connection is gone)."""
        if conn.holds:
            conn.holds = False
            p = conn.process
            assert p is not None
            p.returning -= 1
            self.clock.after(0.0, self.dispatch, p)

    def _client_first_share(self) -> float:
        """client_first now: faded by the keep-alive responses a second of the last 50 ms."""
        if self.client_first_fade:
            now = self.clock.now
            self._window_kept += 1
            if now - self._window_start >= 0.05:
                rate = self._window_kept / (now - self._window_start)
                self._share = self.client_first * max(0.0, 1.0 - rate / self.client_first_fade)
                self._window_start, self._window_kept = now, 0
        return self._share

    def _hold_over(self, conn: Conn, served: int) -> None:
        if conn.served == served:  # (else that hold ended, and this is a later response's)
            self._let_go(conn)

    def _returned(self, p: Process) -> None:
        """event: a worker done with a request counts as idle again (ap_queue_info_set_idle)."""
        p.returning -= 1
        self._worker_idle(p)  # (an exited process accepts nothing)

    def _worker_idle(self, p: Process) -> None:
        """event: a worker of `p` is idle. A listener with its listen sockets disabled learns it
        `listener_wake` later (the worker wakes it: should_enable_listensocks) and looks then."""
        if self.listener_wake and not p.listening and self.queues[p.bucket]:
            self.clock.after(self.listener_wake, self.dispatch, p)
        else:
            self.dispatch(p)

    def _keepalive_expired(self, conn: Conn) -> None:
        """A connection's keep-alive check: one a connection on the clock, not one a request (as
        the client's give-up check): it closes the connection if it still waits for its next
        request at the deadline of its last response, else moves on to that deadline."""
        conn.timer = False
        if conn.state not in (READING, PARKED):
            return  # served, or closed: the next response arms it again
        if self.clock.now >= conn.parked_until:
            self.stats.events["keep-alive timeout"] += 1
            self._close(conn, tell_client=True)
        else:
            conn.timer = True
            self.clock.at(conn.parked_until, self._keepalive_expired, conn)

    def _busy(self, p: Process) -> None:
        """event: with no idle worker (2.4.30-2.4.46: or over its connection limit) and
        connections waiting to be accepted, the listener drops its parked keep-alive connections
        on its next pass (after what is already readable). Only a listener that polls its listen
        sockets sees the waiting connections: one that disabled them finds its workers busy only
        when a parked request finds none idle (send)."""
        if self.queues[p.bucket] and self._listening(p) and self._drops_parked(p):
            self._drop_parked_next_pass(p, self._why_drop(p))

    def _drop_parked_next_pass(self, p: Process, why: str, woken: bool = False) -> None:
        """event: `p`'s listener drops its parked connections on its next pass, for `why` ("busy"
        or "limit"); once: a pass already due does it. `woken`: as _close_parked takes it."""
        if not p.closing_parked:
            p.closing_parked = why
            self.clock.after(0.0, self._close_parked, p, woken)

    def _drops_parked(self, p: Process) -> bool:
        return (p.workers - p.serving - p.returning - p.reserved <= 0  # idlers(), inlined: a call per process a newcomer
                or (self.limit_closes_keepalive and not p.quiescing and self.not_accepting(p)))

    def _why_drop(self, p: Process) -> str:
        return "busy" if self.idlers(p) <= 0 else "limit"

    def _close_parked(self, p: Process, woken: bool = False) -> None:
        """`woken`: by a newcomer another process accepted (admit); else while one waits. A
        listener that found no idle worker closes them in that pass (event.c's workers_were_busy
        holds for the rest of the iteration), even if a worker has finished meanwhile: with
        requests of one fixed length, workers finish at the same instant as the pass, and a
        second look let processes fill with ab's idle connections and stop accepting until
        KeepAliveTimeout (a 30 s stall at the end of `ab -k -c 200 -n 5000` on 2 x 3 threads,
        where httpd 2.4.71 took 0.3 s)."""
        why, p.closing_parked = p.closing_parked, ""
        if not (woken or self.queues[p.bucket]):
            return
        drops = self._drops_parked(p)
        if not drops and why != "busy":
            return
        over_limit = drops and self.idlers(p) > 0  # 2.4.30-2.4.46 (else no worker is, or was, idle: every 2.4.x)
        parked = [c for c in p.conns if c.state == PARKED]
        if over_limit and parked:
            self._sleep_after_closing(p, parked)
        event = "keep-alive closed, " + ("over the connection limit" if over_limit else "workers busy")
        for conn in parked:
            self.stats.events[event] += 1
            if self.deferred_close:
                self._defer(conn)
            else:
                self._close(conn, tell_client=True)
        self._hand_deferred(p)

    def _defer(self, conn: Conn, request: bool = False) -> None:
        """event 2.4.28+: the listener closes `conn` by leaving it to a worker (shutdown_connection,
        defer_lingering_close): it counts as lingering at once (not toward the connection limit),
        but its client sees the close only when a worker of the process shuts it
        (_close_deferred). `request`: the client's next request is in it, unread."""
        p = conn.process
        assert p is not None
        self._let_go(conn)
        conn.state = DEFERRED
        conn.token += 1
        conn.pending = conn.client.waiting if request else 0
        p.deferred.append(conn)
        p.lingering += 1
        self._release(conn, pool_back=False)

    def _hand_deferred(self, p: Process) -> None:
        """As its pass ends, a listener with closes deferred hands them to an idle worker if it
        finds one (get_worker, non-blocking); else the next worker done with a request shuts them."""
        if p.deferred and self.idle(p) >= self.idle_to_read:
            self.clock.after(0.0, self._close_deferred, p)

    def _close_deferred(self, p: Process) -> None:
        """A worker of `p` shuts the connections its listener closed (worker_thread: after its
        request, before it is idle again): their clients see the close now, and a request one
        wrote into its connection meanwhile is lost (httpd reads and drops it)."""
        chain, p.deferred = p.deferred, []
        now = self.clock.now
        for conn in chain:
            if conn.state == DEFERRED:  # (else the client hung up meanwhile: it lingers all the same)
                conn.state = CLOSED
                conn.token += 1
                conn.closed_at = now
                client = conn.client
                if not conn.pending:
                    client.closed(conn)
                elif conn.pending == client.waiting:  # (else the client gave up on it meanwhile)
                    self.stats.events["requests lost in a connection waiting to be shut"] += 1
                    client.request_lost(conn)
            self.clock.after(self.linger, self._pool_back, conn)

    def _sleep_after_closing(self, p: Process, parked: list[Conn]) -> None:
        """2.4.30-2.4.46, over the limit: the listener has disabled itself and closed its crowd,
        whose connections now linger (not counted), but it listens again only after its poll
        returns: at the keep-alive deadline it had computed (the oldest closed one's; the
        lingering ones' expiry, 30 s, is later, so adding them does not wake it), or sooner when
        a closed client's FIN makes its lingering socket readable (that iteration ends by
        enabling the listeners). Measured on a 2.4.37 build (benchmarks/crowd_versions.py): with
        clients that keep their side open the listener stayed disabled 10 s with
        KeepAliveTimeout 10 and 30 s with 30; with clients that close at the server's FIN, 200
        answered within 1-3 ms (148-150 closed)."""
        now = self.clock.now
        wake = min(min(c.parked_until for c in parked), now + self.fin_delay, now + MAX_SECS_TO_LINGER)
        p.asleep_until, p.listening = wake, False
        self.clock.at(wake, self.dispatch, p)

    def _close(self, conn: Conn, tell_client: bool = False) -> None:
        self._let_go(conn)
        was = conn.state
        conn.state = CLOSED
        conn.token += 1
        if tell_client:
            conn.client.closed(conn)
        if was == SERVING:
            return  # the worker releases it when the response is written
        if self.event:
            self._linger(conn)
        else:
            self._release(conn)

    def _await_fin(self, conn: Conn, then: Callable[[Conn], None]) -> None:
        """After a response that ends `conn`: then(conn) once the client's FIN is read. A client
        with a thread of its own sends it when that thread has read the response (a busy load
        generator late, its connections holding prefork's and worker's workers meanwhile:
        client_fin); any other LINGER (+ fin_after) later. httpd gives up after
        SECONDS_TO_LINGER."""
        if conn.client.cpu_thread is None:
            self.clock.after(self.linger, then, conn)
            return
        self._fins[conn] = then
        # httpd's give-up, one timer for them all: every deadline is SECONDS_TO_LINGER after
        # its response, so they come due in the order they were set
        self._fin_deadlines.append((self.clock.now + SECONDS_TO_LINGER, conn))
        if not self._fin_timer:
            self._fin_timer = True
            self.clock.at(self._fin_deadlines[0][0], self._fins_due)

    def _fins_due(self) -> None:
        """httpd gives up on the FINs due now (those read since are skipped)."""
        due = self._fin_deadlines
        while due and (due[0][0] <= self.clock.now or due[0][1] not in self._fins):
            self._fin_read(due.popleft()[1])
        self._fin_timer = bool(due)
        if due:
            self.clock.at(due[0][0], self._fins_due)

    def client_fin(self, conn: Conn) -> None:
        """The client has read the response that ended `conn` and closes its side."""
        if conn in self._fins:
            self.clock.after(self.linger, self._fin_read, conn)

    def _fin_read(self, conn: Conn) -> None:
        then = self._fins.pop(conn, None)
        if then is not None:
            then(conn)

    def _linger(self, conn: Conn, after_response: bool = False) -> None:
        """event closes a connection in its listener (start_lingering_close_nonblocking): its
        worker is free and it no longer counts toward the connection limit (lingering_count),
        but its pool goes back to the process's list only once the client's FIN is read, so the
        client's next connection, accepted at once, takes another (measured on httpd 2.4.71, 16 x
        25 threads: 400 clients with Connection: close peaked 3.5-4.2 MiB above 400 keep-alive
        ones, 800 with close 10-12.5 MiB above)."""
        p = conn.process
        if p is None or conn not in p.conns:
            return
        p.lingering += 1
        if not after_response:
            conn.closed_at = self.clock.now
        self._release(conn, pool_back=False)
        if after_response:
            self._await_fin(conn, self._pool_back)
        else:
            self.clock.after(self.linger, self._pool_back, conn)

    def _pool_back(self, conn: Conn) -> None:
        p = conn.process
        assert p is not None
        p.lingering -= 1
        self._keep_pool(p)

    def _keep_pool(self, p: Process) -> None:
        """A closed connection's pool joins its process's list, while the list has room (none
        off event: the limit is 0 there)."""
        if self.kept_limit is None or p.kept < self.kept_limit:
            p.kept += 1

    def _release(self, conn: Conn, pool_back: bool = True) -> None:
        p = conn.process
        if p is None or conn not in p.conns:
            return
        p.conns.pop(conn, None)
        p.ended += 1
        self.open -= 1
        if pool_back:
            self._keep_pool(p)
        if p.quiescing and not p.conns and not p.serving:
            self._exit(p)
        else:  # (an exited process has no connections left to release)
            self.dispatch(p)  # a worker (prefork, worker) or a connection slot (event) is free

    def quiesce(self, p: Process) -> None:
        """Stop a process gracefully: it accepts nothing more, its idle keep-alive connections
        are closed, the others after their current request; it exits when none is left."""
        p.quiescing = True
        for conn in [c for c in p.conns if c.state in (READING, PARKED)]:
            self.stats.events["keep-alive closed, process stopping"] += 1
            self._close(conn, tell_client=True)
        if not p.conns and not p.serving and not p.gone:
            self._exit(p)

    def _exit(self, p: Process) -> None:
        if p.deferred:
            self._close_deferred(p)
        p.gone = True
        self.processes.remove(p)
        self.on_exit(p)
