"""What changed in the MPMs' start-up between httpd 2.4.x releases (facts from each tag's
server/mpm/{prefork,worker,event}/*.c, checked against recorded builds in
fixtures/httpd-versions/: what `-t` printed, and the run step's values read from each build
running, tools/record_run_step.py):

- before 2.4.20 the long warnings were printed by several ap_log_error calls, one line each, and
  only the first line has an AH code, except in 2.4.19, which gave each line its own code;
- before 2.4.17 StartServers is refused only below 0 (`StartServers 0` passes), there are no
  listener buckets, and the run step only keeps the spare maximum one process above the minimum;
- 2.4.17-2.4.22: the spare-thread floors of worker/event's run step were whole processes per
  bucket; 2.4.23 set today's floors;
- before 2.4.30 event kept AsyncRequestWorkerFactor's 1/16ths floor at 1/16, not 1, and its
  connection limit used the whole factor (idle workers x factor in 1/16ths), not its integer
  part, and stopped accepting only above the limit (">"), where 2.4.30 stops at it: factor 1.5
  on 2 x 25 threads held 126 idle keep-alive clients on 2.4.29 (2 x (25 + 37 + 1)), 100 on
  2.4.71 (2 x (25 + 25)); every 2.4.x listens again one idle worker short of the limit;
- 2.4.30-2.4.46 event's listener, woken by a new connection while over its connection limit,
  also closed every idle keep-alive connection of its process ("kill'em all", which every 2.4.x
  does when no worker is idle): there the limit made room by dropping the crowd, where 2.4.47
  and later (connections_above_limit(&busy): only with no idle worker) make the newcomer wait;
- before 2.4.30 event's listener read a parked keep-alive connection's request only when two
  workers were idle, and closed it with one: its non-blocking get_worker
  (fdqueue.c's ap_queue_info_try_get_idler) backed out unless the count it decremented stayed
  above zero; 2.4.30 rewrote it as a compare-and-swap that takes the last idle worker too
  (2.4.27-2.4.28 builds closed 3-7 times as many keep-alive requests as 2.4.30, 2.4.62 and
  2.4.71 under the same overload);
- from 2.4.28 event's listener hands the keep-alive connections it closes to a worker
  (defer_linger_chain): the client sees the close only when a worker of the process is free,
  where 2.4.27 and before shut them in the listener at once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from apachetune.config.conditions import DEFAULT_VERSION, Version, at_least


@dataclass(frozen=True, slots=True)
class StartupRules:
    """The start-up behaviour of one httpd version, as the model needs it."""

    split_lines: bool  # < 2.4.20
    continuation_codes: bool  # 2.4.19 only
    start_servers_floor: int  # StartServers below this is raised to 1 (0 before 2.4.17)
    buckets: bool  # ListenCoresBucketsRatio and the run step's bucket floors (2.4.17)
    spare_floor: str  # worker/event run-step floors: "thread" (< 2.4.17), "process" (< 2.4.21),
    #                   "process-1" (< 2.4.23), "bucket" (2.4.23 and later)
    factor_floor_one: bool  # event's AsyncRequestWorkerFactor floored at 1 (2.4.30), else 1/16
    integer_factor: bool  # event's connection limit: the factor's integer part, reached (2.4.30); before, the whole factor, passed
    limit_closes_keepalive: bool = False  # over the limit, event closes its idle keep-alive ones (2.4.30-2.4.46)
    deferred_close: bool = True  # event's listener leaves the closes it decides to a worker (2.4.28)
    two_idle_to_read: bool = False  # event reads a parked connection's request only with 2 idle workers (< 2.4.30)


def rules_for(version: Version | str | None) -> StartupRules:
    return _rules_for(str(version) if version is not None else str(DEFAULT_VERSION))


@lru_cache(maxsize=64)
def _rules_for(text: str) -> StartupRules:
    """One StartupRules per version (asked once for every connection limit a sizing tries)."""
    version = Version.parse(text)
    return StartupRules(
        split_lines=not at_least(version, "2.4.20"),
        continuation_codes=(version.major, version.minor, version.patch) == (2, 4, 19),
        start_servers_floor=1 if at_least(version, "2.4.17") else 0,
        buckets=at_least(version, "2.4.17"),
        spare_floor=("bucket" if at_least(version, "2.4.23") else "process-1" if at_least(version, "2.4.21")
                     else "process" if at_least(version, "2.4.17") else "thread"),
        factor_floor_one=at_least(version, "2.4.30"),
        integer_factor=at_least(version, "2.4.30"),
        limit_closes_keepalive=at_least(version, "2.4.30") and not at_least(version, "2.4.47"),
        deferred_close=at_least(version, "2.4.28"),
        two_idle_to_read=not at_least(version, "2.4.30"),
    )


# How a one-line warning of 2.4.20+ was printed before: the pieces, as (regex on today's text,
# how to join its groups into lines). Each `\n` in the template starts a new printed line.
_SPLITS = [
    (r"(WARNING: \w+ of -?\d+ exceeds compile-time limit of)( \d+ (?:servers|threads), decreasing to \d+\.)",
     r"\1\n\2"),
    (r"(WARNING: ThreadsPerChild of -?\d+ exceeds ThreadLimit of)( \d+ threads, decreasing to \d+\.)"
     r" (To increase, please see the ThreadLimit directive\.)", r"\1\n\2\n \3"),
    (r"(WARNING: MaxRequestWorkers of -?\d+ is less than ThreadsPerChild of)( \d+, increasing to \d+\.)"
     r" (MaxRequestWorkers must be at least as large) (as the number of threads in a single server\.)",
     r"\1\n\2  \3\n \4"),
    (r"(WARNING: MaxRequestWorkers of -?\d+ is not an integer multiple of)( ThreadsPerChild of \d+, "
     r"decreasing to nearest multiple \d+,)( for a maximum of \d+ servers\.)", r"\1\n\2\n\3"),
    (r"(WARNING: MaxRequestWorkers of -?\d+ would require \d+ servers and) (would exceed ServerLimit of "
     r"\d+, decreasing to \d+\.) (To increase, please see the ServerLimit directive\.)", r"\1 \n \2\n \3"),
    (r"(WARNING: MaxRequestWorkers of -?\d+ exceeds ServerLimit value of)( \d+ servers, decreasing "
     r"MaxRequestWorkers to \d+\.) (To increase, please see the ServerLimit directive\.)", r"\1\n\2\n \3"),
    (r"(WARNING: Min\w+ of -?\d+ not allowed, increasing to 1)( to avoid almost certain server failure\.)"
     r" (Please read the documentation\.)", r"\1\n\2\n \3"),
]

# 2.4.19's codes for the continuation lines, by the first line's code (None: that line had none).
_CONTINUATION_CODES = {
    "AH00497": ("AH03105",), "AH00502": ("AH03106",), "AH00507": ("AH03107", "AH03108"),
    "AH00511": ("AH03109", "AH03110"), "AH00513": ("AH03111", "AH03112"),
    "AH00515": ("AH03113", "AH03114"), "AH00519": ("AH03115", "AH03116"),
    "AH00300": ("AH03143",), "AH00305": ("AH03144",), "AH00310": ("AH03145", "AH03146"),
    "AH00314": ("AH03147", "AH03148"), "AH00316": ("AH03149", "AH03150"),
    "AH00318": ("AH03151", None), "AH00322": ("AH03152", "AH03153"),
    "AH00175": ("AH03130",), "AH00180": ("AH03131", None), "AH00186": ("AH03132", "AH03133"),
}


# What each rule the simulation follows does, in the version where it is on / off (event only
# but for the listener buckets): simulate --versus says which of them differ between two releases.
_BEHAVIOUR = (
    ("buckets", False, "ListenCoresBucketsRatio gives each group of children a listen socket of its own",
     "one listen socket for every child (no ListenCoresBucketsRatio)"),
    ("integer_factor", True, "event's connection limit counts the integer part of AsyncRequestWorkerFactor and "
     "stops at the limit", "event's connection limit counts the whole AsyncRequestWorkerFactor and stops only "
     "above the limit"),
    ("limit_closes_keepalive", True, "over its connection limit, event closes the process's idle keep-alive "
     "connections", "over its connection limit, event makes new connections wait"),
    ("deferred_close", True, "event leaves the keep-alive connections it closes to a worker, which shuts them "
     "when it is free", "event shuts the keep-alive connections it closes at once"),
    ("two_idle_to_read", True, "event reads a parked keep-alive request only with two workers idle (with one it "
     "closes it)", "event reads a parked keep-alive request with one worker idle"),
)


def behaviour_changes(mpm: str, a: Version | str | None, b: Version | str | None) -> list[str]:
    """What the simulation follows that differs between releases `a` and `b` for `mpm`: one
    line each, "A: ...; B: ..."."""
    ra, rb = rules_for(a), rules_for(b)
    lines = []
    for field, event_only, on, off in _BEHAVIOUR:
        if (event_only and mpm != "event") or getattr(ra, field) == getattr(rb, field):
            continue
        lines.append(f"{a}: {on if getattr(ra, field) else off}; {b}: {on if getattr(rb, field) else off}")
    return lines


def printed_lines(code: str, text: str, rules: StartupRules) -> tuple[str, ...]:
    """The stderr lines of one start-up warning as this version prints it."""
    if not rules.split_lines:
        return (f"{code}: {text}",)
    for pattern, template in _SPLITS:
        m = re.fullmatch(pattern, text)
        if m:
            first, *rest = m.expand(template).split("\n")
            codes = _CONTINUATION_CODES.get(code, ()) if rules.continuation_codes else ()
            more = [f"{codes[i]}: {line}" if i < len(codes) and codes[i] else line
                    for i, line in enumerate(rest)]
            return (f"{code}: {first}", *more)
    return (f"{code}: {text}",)


def joined_text(lines: tuple[str, ...]) -> str:
    """The message as one line: the printed pieces without their codes, as httpd wrote them."""
    return "".join(re.sub(r"^AH\d{5}: ", "", line) for line in lines)
