"""What the clients do, and how long a request takes on the server."""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

from apachetune.errors import UsageError
from apachetune.simulate.stats import percentile
from apachetune.simulate.syn import SynSchedule, this_machine

_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(ms|s|us|µs)?\s*$")
_UNITS = {None: 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6}


MAX_DOCUMENTS = 1_000_000  # a document set's lines, at most


def read_documents(source: str) -> list[tuple[int, float]]:
    """A document set: `surge` (validate's SURGE set: heavy-tailed sizes, Zipf popularity) or
    a file, one document a line, its size in bytes and optionally its share of the requests
    (default 1), `#` starting a comment."""
    if source == "surge":
        from apachetune.validate.documents import document_set

        return [(size, share) for _, size, share in document_set()]
    from apachetune.inputs import iter_lines

    docs: list[tuple[int, float]] = []
    for n, line in enumerate(iter_lines(source, "--documents"), 1):  # a regular file, lines bounded
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(docs) >= MAX_DOCUMENTS:
            raise UsageError(f"{source}:{n}:1: more than {MAX_DOCUMENTS:,} documents; not the file expected here")
        try:
            size = int(fields[0])
            share = float(fields[1]) if len(fields) > 1 else 1.0
            if size < 0 or share < 0 or len(fields) > 2 or not math.isfinite(share):
                raise ValueError
        except ValueError:
            raise UsageError(f"{source}:{n}:1: expected a size in bytes and an optional share, got {line.strip()!r}") from None
        docs.append((size, share))
    if not docs:
        raise UsageError(f"--documents {source}: no documents in it")
    return docs


def parse_draw(text: str, what: str = "--turnaround") -> tuple[float, ServiceTime | None]:
    """'30us' -> (30e-6, None): each one exactly that; 'exp:160us' or 'lognormal:125us:0.4' ->
    (its mean, the distribution): each a draw from it (a turnaround, or a think time)."""
    if ":" not in text:
        return parse_seconds(text, what), None
    draw = ServiceTime.parse(text, what)
    return draw.mean, draw


def parse_seconds(text: str, what: str) -> float:
    """'50ms', '0.05s', '0.05' -> seconds."""
    m = _DURATION.match(text)
    if not m:
        raise UsageError(f"{what}: {text!r} is not a duration (e.g. 50ms, 0.2s)")
    return float(m.group(1)) * _UNITS[m.group(2)]


@dataclass(frozen=True)
class ServiceTime:
    """The time a worker spends on one request: fixed, exponential or lognormal around `mean`
    (`sigma` is the lognormal's shape: 0.5 mild, 1 heavy-tailed, 2 very)."""

    kind: str
    mean: float
    sigma: float = 1.0
    samples: tuple[float, ...] = ()  # "empirical": response times read from an access log; "documents": each's time
    cumulative: tuple[float, ...] = ()  # "documents": the running sum of their request shares (cum_weights)
    about: str = ""  # "documents": what they are, for the label

    @classmethod
    def documents(cls, base: ServiceTime, per_kib: float, docs: list[tuple[int, float]], about: str) -> ServiceTime:
        """A static document set: each request asks a document with its share of the requests
        (`docs`: size in bytes, share) and takes `base`'s mean plus `per_kib` seconds a KiB of
        it (the copy to the client: a heavy-tailed set makes heavy-tailed service times)."""
        if not docs:
            raise UsageError("no documents to serve")
        total = sum(w for _, w in docs)
        if total <= 0:
            raise UsageError("the documents' request shares add up to nothing")
        times, running, acc = [], [], 0.0
        for size, w in docs:
            times.append(base.mean + per_kib * size / 1024)
            acc += w / total
            running.append(acc)
        mean = sum(t * w / total for t, (_, w) in zip(times, docs, strict=True))
        return cls("documents", max(1e-9, mean), samples=tuple(times), cumulative=tuple(running), about=about)

    KINDS = ("fixed", "exp", "lognormal")

    @classmethod
    def empirical(cls, samples: list[float]) -> ServiceTime:
        """Draws from `samples` (an access log's %D), each as likely as it was logged."""
        if not samples:
            raise UsageError("no response times to draw from")
        return cls("empirical", max(1e-6, sum(samples) / len(samples)), samples=tuple(samples))

    @classmethod
    def parse(cls, text: str, what: str = "--service") -> ServiceTime:
        """'50ms' (fixed), 'exp:50ms', 'lognormal:50ms' or 'lognormal:50ms:1.5'."""
        parts = text.split(":")
        kind = parts[0] if len(parts) > 1 else "fixed"
        if kind not in cls.KINDS or len(parts) > (3 if kind == "lognormal" else 2):
            raise UsageError(f"{what}: {text!r}: expected 50ms, exp:50ms or lognormal:50ms[:sigma]")
        mean = parse_seconds(parts[-1] if kind != "lognormal" or len(parts) == 2 else parts[1], what)
        sigma = 1.0
        if kind == "lognormal" and len(parts) == 3:
            try:
                sigma = float(parts[2])
            except ValueError:
                raise UsageError(f"{what}: sigma {parts[2]!r} is not a number") from None
            if not 0 < sigma <= 4:
                raise UsageError(f"{what}: sigma {parts[2]} must be above 0 and at most 4")
        if mean <= 0:
            raise UsageError(f"{what}: {text!r}: a request takes some time (above 0)")
        return cls(kind, mean, sigma)

    def sample(self, rng: random.Random) -> float:
        if self.kind == "fixed":
            return self.mean
        if self.kind == "empirical":
            return rng.choice(self.samples)
        if self.kind == "documents":
            return rng.choices(self.samples, cum_weights=self.cumulative)[0]
        if self.kind == "exp":
            return rng.expovariate(1.0 / self.mean)
        mu = math.log(self.mean) - self.sigma ** 2 / 2  # so that the mean is `mean`
        return rng.lognormvariate(mu, self.sigma)

    def label(self) -> str:
        ms = f"{self.mean * 1000:g} ms"
        if self.kind == "documents":
            return f"{self.about}, mean {self.mean * 1e6:.4g} us a request"
        if self.kind == "empirical":
            ordered = sorted(self.samples)
            p99 = percentile(ordered, 0.99)
            return (f"as logged ({len(ordered):,} response times, mean {self.mean * 1000:.3g} ms, "
                    f"p99 {p99 * 1000:.3g} ms)")
        return {"fixed": ms, "exp": f"exponential, mean {ms}"}.get(
            self.kind, f"lognormal, mean {ms}, sigma {self.sigma:g}")


# Load generators' turnarounds on loopback, timed on the wire (2-core Intel Xeon VM, httpd 2.4.71,
# 2026-11-29: docs/simulate.md): `simulate`'s defaults for a keep-alive closed loop, ab's with
# --requests, else wrk's. No real client is instant, and on event with more keep-alive clients
# than workers the turnaround decides how many requests are closed (ab -k -c 300 on Debian's
# stock section, 100 ms requests: 894-1,063 failed, 149 simulated with 0, 774 with ab's).
AB_TURNAROUND = ServiceTime("lognormal", 64e-6, 0.95)
WRK_TURNAROUND = ServiceTime("lognormal", 72e-6, 0.52)
# ... and such a generator on event's cores runs first on a worker's core after some of its
# responses (Server.client_first): the share fitted to ab and wrk on loopback on the same VM
# (2026-12-06, docs/simulate.md, "event's parked requests"), fading to none as the keep-alive
# responses near this rate a second, where the generator no longer sleeps between them (perf:
# wrk preempted the worker after 36-44% of its responses at 200-1,000 a second, 19% at 1,900; ab
# after 0.5% at 14,000).
LOOPBACK_CLIENT_FIRST = 0.13
LOOPBACK_CLIENT_FIRST_FADE = 12000.0
# ... on processes of 25 threads and more; on smaller ones the share grows as (25 / threads)^0.35:
# fitted to nine spot cells of 10-25 threads a process (closes within 18% of httpd's, where a
# constant share left those of 10 threads 13-19% short), then checked on three of 5, 8 and 16
# measured after it (34%, 24% and 8% short before, within 3% after). A process of 50 threads
# closed more than the constant share gives, not fewer, so the share is not lowered past 25
# (docs/simulate.md).
LOOPBACK_CLIENT_FIRST_THREADS = 25
LOOPBACK_CLIENT_FIRST_EXPONENT = 0.35


def loopback_client_first(threads_per_child: int) -> float:
    """The assumed loopback generator's client-first share on event processes of that many threads."""
    threads = min(LOOPBACK_CLIENT_FIRST_THREADS, max(1, int(threads_per_child)))
    return LOOPBACK_CLIENT_FIRST * (LOOPBACK_CLIENT_FIRST_THREADS / threads) ** LOOPBACK_CLIENT_FIRST_EXPONENT


def _told(name: str, seconds: float, draw: ServiceTime | None, scale: float, unit: str) -> str:
    """', think 200 ms', ', think exp, mean 200 ms', or '' when there is none."""
    if draw is not None:
        return f", {name} {draw.kind}, mean {draw.mean * scale:g} {unit}" + (
            f", sigma {draw.sigma:g}" if draw.kind == "lognormal" else "")
    return f", {name} {seconds * scale:g} {unit}" if seconds else ""


@dataclass(frozen=True)
class Workload:
    """`clients`: a closed loop (ab, wrk, siege): each client sends its next request `think`
    seconds after the last response, on the same connection with keep-alive. `rate`: an open
    loop: new visitors a second (Poisson), each making `requests_per_connection` requests
    `gap` seconds apart on one connection, then closing it (`holds_open`: leaving it open until
    the server closes it, as browsers do). `replay`: an access log's requests
    at the offsets (seconds) they were received, each on a new connection, with the time httpd
    logged for it when there is one (else a draw from `service`). `crowd`: idle keep-alive clients,
    there before the load (they connect a client at a time, each once the one before has its
    answer; the run's seconds count from when the load starts): each sends one request, then
    holds its connection until the server closes it, and comes back at once. `silent`: connections
    that never send a request (a browser's unused preconnection, a slowloris client): each opens
    a connection, sends nothing, and opens another as soon as the server closes it. A client gives up on a request after `timeout` seconds. `cpu_fraction`: the
    share of each request's service time spent on CPU, shared with every other request on the
    machine's cores (cpu.py); 0: the CPUs are never the bottleneck. `turnaround`: how long after a
    response the client's next request on that connection reaches the server (ab and wrk write it
    at once, but it still takes the client's read, its write and the loopback: tens of µs; a
    connection closed meanwhile loses it); `turnaround_draw`: each a draw from that distribution
    (measured on the wire, load generators' turnarounds are lognormal: docs/simulate.md). `requests`: the closed loop stops after that many, as
    `ab -n` counts them (a lost request is done and a failure). `think_draw`: each think time a
    draw from that distribution (people and most load tools pause at random: a fixed pause
    keeps the clients in step, docs/simulate.md, "Think time"). `naive_reuse`: the client does not
    check a keep-alive connection before it writes its next request into it: one the server
    closed while the client paused (KeepAliveTimeout, event closing its parked connections)
    loses that request, an error (a raw-socket or asyncio client, JMeter without its stale
    check; wrk counts a read error at the close instead); else it opens a new connection.
    `ramp_up`: the closed loop's clients start evenly over these seconds, client i at
    i x ramp_up / clients (JMeter's ramp-up period, Locust's spawn rate, k6's and Gatling's
    ramps); 0: all at once, as ab and wrk start theirs. With a fixed think time the start
    decides whether event's parked-connection closes die out or feed themselves (docs/simulate.md,
    "Think time")."""

    service: ServiceTime
    clients: int = 0
    rate: float = 0.0
    keepalive: bool = True
    think: float = 0.0
    think_draw: ServiceTime | None = None  # each think time a draw from it (sets `think` to its mean)
    # a closed loop's client writes its next request into a keep-alive connection the server
    # closed while it paused, unchecked, and loses it (False: it notices, and opens a new one)
    naive_reuse: bool = False
    ramp_up: float = 0.0  # a closed loop's clients start evenly over these seconds (0: all at once)
    requests_per_connection: int = 1
    gap: float = 0.0
    # an open loop's visitor leaves its connection open after its last answer until the server
    # closes it (KeepAliveTimeout), as browsers do; False: it hangs up at once
    holds_open: bool = False
    crowd: int = 0
    crowd_returns: bool = True  # a crowd client whose connection the server closes comes back at once
    crowd_service: float | None = None  # seconds a crowd client's request takes (None: `service`'s)
    timeout: float = 30.0
    cpu_fraction: float = 0.0
    replay: tuple[tuple[float, float | None], ...] = ()  # (offset s, logged service s or None)
    replay_source: str = ""
    replay_spread: bool = True  # spread the requests of a logged second over it (False: offsets exact)
    syn: SynSchedule | None = None  # the clients' kernel resending a dropped SYN (None: this machine's)
    turnaround: float = 0.0  # seconds from a response to the next request on its connection reaching the server
    turnaround_draw: ServiceTime | None = None  # each turnaround a draw from it (sets `turnaround` to its mean; None: exactly it)
    requests: int = 0  # closed loop: stop after this many requests, counted as ab -n counts them (0: no limit)
    fin_after: float = 0.0  # seconds a client keeps its side of a connection the server ended open (0: closes at once)
    silent: int = 0  # connections that never send a request, each opened again when the server closes it
    # a new connection's request timed from its handshake, as wrk times it (from writing the
    # request, once connected), not from its first SYN: a dropped SYN's retransmission is not in it
    timed_from_handshake: bool = False

    def __post_init__(self) -> None:
        if self.turnaround_draw is not None:  # the draws' mean is the turnaround the rest reads
            object.__setattr__(self, "turnaround", self.turnaround_draw.mean)
        if self.think_draw is not None:
            object.__setattr__(self, "think", self.think_draw.mean)
        if min(self.clients, self.rate, self.crowd, self.think, self.gap, self.turnaround, self.requests,
               self.fin_after, self.silent, self.ramp_up) < 0:
            raise UsageError("clients, rate, crowd, silent, think, gap, turnaround, requests, fin-after and ramp-up "
                             "cannot be negative")
        if self.ramp_up and not self.clients:
            raise UsageError("--ramp-up starts a closed loop's clients one after another: it needs --clients")
        if self.holds_open and not self.rate:
            raise UsageError("--hold-open is an open loop's visitors' (browsers'): it needs --rate")
        if self.requests and not self.clients:
            raise UsageError("--requests counts a closed loop's requests (ab -n): it needs --clients")
        if self.requests and self.requests < self.clients:
            raise UsageError(f"--requests {self.requests} is fewer than --clients {self.clients} (ab refuses that too)")
        if not self.clients and not self.rate and not self.replay and not self.crowd and not self.silent:
            raise UsageError("a workload needs --clients N (closed loop), --rate R (open loop), "
                             "--access-log LOG (a replay), --crowd N (idle keep-alive clients alone) "
                             "or --silent N (connections that send nothing)")
        if self.requests_per_connection < 1:
            raise UsageError("--requests-per-connection must be at least 1")
        if self.timeout <= 0:
            raise UsageError("--timeout must be above 0")
        if not 0 <= self.cpu_fraction <= 1:
            raise UsageError("--cpu-fraction must be between 0 and 1")

    def syn_schedule(self) -> SynSchedule:
        """When the clients' kernel sends a dropped SYN again: `syn`, else this machine's."""
        return self.syn or this_machine()

    def replay_horizon(self) -> float:
        """Simulated seconds a replay can need: its last request (spread over its second), then a
        client that gives up on it, after its SYN retransmissions and its timeout."""
        return self.replay[-1][0] + 1 + sum(self.syn_schedule().gaps) + self.timeout

    def label(self) -> str:
        ka = "keep-alive" if self.keepalive else "a connection per request"
        parts = []
        if self.clients:
            think = _told("think", self.think, self.think_draw, 1000, "ms")
            ab = f"ab -n {self.requests:,}: " if self.requests else ""
            turn = _told("turnaround", self.turnaround, self.turnaround_draw, 1e6, "us")
            naive = ", writing into closed connections" if self.naive_reuse and self.keepalive else ""
            ramp = f", started over {self.ramp_up:g} s" if self.ramp_up else ""
            parts.append(f"{ab}{self.clients} clients in a closed loop ({ka}{think}{turn}{naive}{ramp})")
        if self.rate:
            per = f", {self.requests_per_connection} requests a connection" if self.keepalive else ""
            if self.keepalive and self.holds_open:
                per += ", left open after the last until the server closes it"
            parts.append(f"{self.rate:g} new clients/s, Poisson{per}")
        if self.replay:
            timed = sum(1 for _, d in self.replay if d is not None)
            span = self.replay[-1][0]
            parts.append(f"replay of {len(self.replay):,} requests over {span:,.1f} s from {self.replay_source}, "
                         f"a connection each" + (f", {timed:,} with their logged times" if timed else ""))
        if self.crowd:
            parts.append(f"{self.crowd} idle keep-alive clients")
        if self.silent:
            parts.append(f"{self.silent} silent connections (no request; opened again when closed)")
        if self.fin_after:
            parts.append(f"each keeping its side of a connection the server ends open {self.fin_after * 1000:g} ms")
        cpu = f", {self.cpu_fraction:.0%} of it on CPU" if self.cpu_fraction else ""
        service = f"service {self.service.label()}{cpu}"
        if self.replay:
            untimed = sum(1 for _, d in self.replay if d is None)
            if not untimed:
                service = f"service as logged{cpu}"
            elif untimed < len(self.replay):
                service = f"service as logged, {self.service.label()} for the {untimed:,} without a time{cpu}"
            else:  # a combined log: when the requests came, not how long they took
                service = f"service {self.service.label()} (--service: the log has no %D or %T){cpu}"
        return "; ".join(parts) + f"; {service}"
