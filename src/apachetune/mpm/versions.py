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
  part: factor 1.5 on 2 x 25 threads held 126 idle keep-alive clients on 2.4.29, 100 on 2.4.71;
- 2.4.30-2.4.46 event's listener, woken by a new connection while over its connection limit,
  also closed every idle keep-alive connection of its process ("kill'em all", which every 2.4.x
  does when no worker is idle): there the limit made room by dropping the crowd, where 2.4.47
  and later (connections_above_limit(&busy): only with no idle worker) make the newcomer wait;
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
    integer_factor: bool  # event's connection limit uses the factor's integer part (2.4.30)
    limit_closes_keepalive: bool = False  # over the limit, event closes its idle keep-alive ones (2.4.30-2.4.46)
    deferred_close: bool = True  # event's listener leaves the closes it decides to a worker (2.4.28)


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
