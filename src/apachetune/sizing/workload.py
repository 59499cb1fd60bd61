"""The load, read from what the server already records: an access log, or mod_status.

- Access log: the busiest minute gives the peak rate (requests per second averaged over that
  minute, steadier than one second), the busiest second the burst the pool must be ready for; with %D (microseconds) or %T (seconds) in the LogFormat,
  the mean response time.
- mod_status `?auto`: Total Accesses read twice gives the rate; BusyWorkers averaged over the
  same period with Little's law (W = L / lambda) gives the mean time a worker spends per request.
"""

from __future__ import annotations

import math
import re
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from apachetune.errors import UsageError
from apachetune.inputs import iter_lines

NICKNAMES = {
    "common": '%h %l %u %t "%r" %>s %b',
    "combined": '%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"',
    "vhost_combined": '%v:%p %h %l %u %t "%r" %>s %O "%{Referer}i" "%{User-Agent}i"',
}
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\[[^\]]*\]|\S+')
_TIME = re.compile(r"\[(\d{2}/\w{3}/\d{4}:\d{2}:\d{2}:\d{2}) ([+-]\d{4})\]")


@dataclass(frozen=True)
class LoadSample:
    peak_rate: float | None  # requests per second
    service_time: float | None  # seconds
    requests: int
    source: str
    busiest_second: float | None = None  # requests in the busiest second (a burst's rate)
    cpu_per_request: float | None = None  # seconds of the server's CPU a request, measured with the rate
    cpu_note: str = ""  # how the CPU figure was obtained, or why there is none
    under_way: float | None = None  # requests being served on average while the CPU was measured


def _fields(fmt: str) -> list[str]:
    return [t.strip('"') for t in _TOKEN.findall(fmt)]


_DURATIONS = {"%D": 1e-6, "%{us}T": 1e-6, "%{ms}T": 1e-3, "%T": 1.0}  # to seconds


def _duration_field(log_format: str) -> tuple[int | None, float | None]:
    """(index of the response-time field among a line's tokens, its unit in seconds), or Nones."""
    fields = _fields(NICKNAMES.get(log_format, log_format))
    index = next((i for i, f in enumerate(fields) if f in _DURATIONS), None)
    return index, (_DURATIONS[fields[index]] if index is not None else None)


def _duration(line: str, index: int | None, scale: float | None) -> float | None:
    """A line's response time in seconds, or None (no such field, or not a number)."""
    if index is None or scale is None:
        return None
    tokens = _TOKEN.findall(line)
    if index >= len(tokens):
        return None
    try:
        value = float(tokens[index]) * scale
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None


MAX_REPLAYED = 1_000_000


@dataclass(frozen=True)
class LoggedRequests:
    """An access log's requests: when each was received (seconds after the first), how long
    httpd took on it (None when the LogFormat has no %D or %T), and what the log covers."""

    arrivals: tuple[float, ...]  # sorted, the first at 0
    durations: tuple[float | None, ...]
    skipped: int = 0  # lines read without a [dd/Mon/yyyy:hh:mm:ss zone] timestamp (not requests of this log's format)

    @property
    def span(self) -> float:
        """Seconds from the first request to the last."""
        return self.arrivals[-1]

    @property
    def timed(self) -> list[float]:
        return [d for d in self.durations if d is not None]


def logged_requests(path: str, log_format: str = "combined", seconds: float | None = None) -> LoggedRequests:
    """The requests of an access log for a replay, in the order httpd received them (%t is when
    a request was received; lines are written when it ends, so they are sorted here). `seconds`:
    only the log's first `seconds`. %t has whole seconds: the requests of one second are spread
    over it later, by the replay."""
    index, scale = _duration_field(log_format)
    stamps: list[tuple[float, float | None]] = []
    seen: dict[str, float] = {}  # one strptime a distinct second, not a line
    first: float | None = None
    skipped = 0
    for line in iter_lines(path, "--access-log"):
        m = _TIME.search(line)
        if not m:
            skipped += bool(line.strip())
            continue
        key = m.group(0)
        when = seen.get(key)
        if when is None:
            try:
                when = datetime.strptime(f"{m.group(1)} {m.group(2)}", "%d/%b/%Y:%H:%M:%S %z").timestamp()
            except ValueError:
                skipped += 1
                continue
            if len(seen) > 100_000:
                seen.clear()
            seen[key] = when
        first = when if first is None else min(first, when)
        if seconds is not None and when - first >= seconds + 60:
            break  # well past the window (a line is late by at most its response time)
        stamps.append((when, _duration(line, index, scale)))
        if len(stamps) > MAX_REPLAYED:
            raise UsageError(f"--access-log {path}: more than {MAX_REPLAYED:,} requests; replay a part of "
                             "it with --seconds")
    if not stamps:
        raise UsageError(f"--access-log {path}: no line with a [dd/Mon/yyyy:hh:mm:ss zone] timestamp")
    stamps.sort(key=lambda s: s[0])
    start = stamps[0][0]
    if seconds is not None:
        stamps = [s for s in stamps if s[0] - start < seconds]
    return LoggedRequests(tuple(s[0] - start for s in stamps), tuple(s[1] for s in stamps), skipped)


def from_access_log(path: str, log_format: str = "combined") -> LoadSample:
    time_index, scale = _duration_field(log_format)
    per_minute: Counter[str] = Counter()
    per_second: Counter[str] = Counter()
    total_seconds = 0.0
    timed = 0
    n = 0
    first = last = None
    for line in iter_lines(path, "--access-log"):
        m = _TIME.search(line)
        if not m:
            continue
        n += 1
        per_minute[m.group(1)[:-3]] += 1  # dd/Mon/yyyy:hh:mm
        per_second[m.group(1)] += 1
        if len(per_minute) == 1:
            try:
                stamp = datetime.strptime(m.group(1), "%d/%b/%Y:%H:%M:%S")
                first = stamp if first is None else min(first, stamp)
                last = stamp if last is None else max(last, stamp)
            except ValueError:
                pass
        value = _duration(line, time_index, scale)
        if value is not None:
            total_seconds += value
            timed += 1
    if n == 0:
        raise UsageError(f"--access-log {path}: no line with a [dd/Mon/yyyy:hh:mm:ss zone] timestamp")
    busiest = max(per_minute.values())
    # A log shorter than a minute: the rate over the time it covers.
    if len(per_minute) == 1 and first is not None and last is not None:
        span = max(1.0, (last - first).total_seconds() + 1)
        rate = n / span
    else:
        rate = busiest / 60.0
    service = total_seconds / timed if timed else None
    return LoadSample(rate, service, n, f"access log {path}", float(max(per_second.values())))


def _status(url: str) -> dict[str, float]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            text = r.read().decode(errors="replace")
    except OSError as e:
        raise UsageError(f"--status-url {url}: {e}") from None
    values = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        try:
            values[key.strip()] = float(value.strip())
        except ValueError:
            continue
    if "Total Accesses" not in values or "BusyWorkers" not in values:
        raise UsageError(f"--status-url {url}: not mod_status ?auto output with ExtendedStatus "
                         "(need Total Accesses and BusyWorkers)")
    return values


# Fewer requests than this in the sampled window say too little about the CPU a request uses.
MIN_REQUESTS_FOR_CPU = 50


def from_status(url: str, seconds: float = 10.0, interval: float = 1.0,
                cpu_clock: Callable[[], float | None] | None = None, server: str = "") -> LoadSample:
    """The rate and service time from mod_status read over `seconds`; with `cpu_clock` (the CPU
    seconds the server behind `url` has used, read on this machine), the CPU a request uses."""
    if "?auto" not in url:
        url += "?auto"
    first = _status(url)
    cpu_start = cpu_clock() if cpu_clock is not None else None
    start = time.monotonic()
    busy = []
    last = first
    while time.monotonic() - start < seconds:
        time.sleep(interval)
        last = _status(url)
        busy.append(last["BusyWorkers"])
    cpu_end = cpu_clock() if cpu_clock is not None else None
    elapsed = time.monotonic() - start
    # The status request itself is counted and is busy while it runs: take it out.
    requests = last["Total Accesses"] - first["Total Accesses"] - len(busy)
    rate = max(0.0, requests / elapsed)
    mean_busy = max(0.0, sum(busy) / len(busy) - 1) if busy else 0.0
    service = mean_busy / rate if rate > 0 else None
    cpu, note = _cpu_per_request(cpu_start, cpu_end, requests, elapsed, server, mean_busy)
    return LoadSample(rate, service, int(requests), f"mod_status {url}", cpu_per_request=cpu, cpu_note=note,
                      under_way=mean_busy if cpu is not None else None)


def _cpu_per_request(start: float | None, end: float | None, requests: float, elapsed: float,
                     server: str, under_way: float = 0.0) -> tuple[float | None, str]:
    """The server's CPU a request over the window, and how it was obtained. The requests under
    way are said with it: the CPU a request can grow with them (requests that each build a large
    object contend for memory bandwidth: a php-like app took 37 ms with 8 under way, 49 with 27)."""
    if start is None or end is None:
        return None, ""
    used = max(0.0, end - start)
    if requests < MIN_REQUESTS_FOR_CPU:
        return None, (f"not measured: {server} served {requests:.0f} requests in the {elapsed:.0f} s sampled "
                      f"(fewer than {MIN_REQUESTS_FOR_CPU}); sample while it serves its load")
    per = used / requests
    return per, (f"measured: {server} used {used:.2f} s of CPU for {requests:.0f} requests in {elapsed:.0f} s "
                 f"({per * 1000:.2f} ms a request, {under_way:.1f} under way on average)")
