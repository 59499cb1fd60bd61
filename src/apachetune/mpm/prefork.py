"""prefork's start-up: prefork_check_config's checks in order, then prefork_run's silent
changes before the first fork (server/mpm/prefork/prefork.c)."""

from __future__ import annotations

from apachetune.mpm.directives import LIMITS
from apachetune.mpm.state import SPARE_WARNING, StartupState


def check_prefork(run: StartupState, buckets: int) -> None:
    v = run.v
    limit = LIMITS["prefork"]["ServerLimit"]
    if v["ServerLimit"] > limit:
        run.cap_at_compile_limit("ServerLimit", limit, "servers", "AH00175")
    elif v["ServerLimit"] < 1:
        run.raise_to_one("ServerLimit", "AH00177")
    if v["MaxRequestWorkers"] > v["ServerLimit"]:
        run.set("MaxRequestWorkers", v["ServerLimit"], "AH00180",
                f"WARNING: MaxRequestWorkers of {v['MaxRequestWorkers']} exceeds ServerLimit value of "
                f"{v['ServerLimit']} servers, decreasing MaxRequestWorkers to {v['ServerLimit']}. "
                "To increase, please see the ServerLimit directive.",
                f"MaxRequestWorkers of {v['MaxRequestWorkers']} exceeds ServerLimit value of "
                f"{v['ServerLimit']}, decreasing to match")
    elif v["MaxRequestWorkers"] < 1:
        run.raise_to_one("MaxRequestWorkers", "AH00182")
    if v["StartServers"] < run.rules.start_servers_floor:
        run.raise_to_one("StartServers", "AH00184")
    if v["MinSpareServers"] < 1:
        run.raise_to_one("MinSpareServers", "AH00186", SPARE_WARNING)
    # prefork_run(): silent adjustments before the first fork.
    if not run.rules.buckets:  # before 2.4.17: only "don't thrash"
        if v["MaxSpareServers"] < v["MinSpareServers"] + 1:
            run.set("MaxSpareServers", v["MinSpareServers"] + 1)
    else:
        if v["MaxRequestWorkers"] < buckets:
            run.set("MaxRequestWorkers", buckets)
        if v["StartServers"] < buckets:
            run.set("StartServers", buckets)
        if v["MinSpareServers"] < buckets:
            run.set("MinSpareServers", buckets)
        if v["MaxSpareServers"] < v["MinSpareServers"] + buckets:
            run.set("MaxSpareServers", v["MinSpareServers"] + buckets)
    if v["StartServers"] > v["MaxRequestWorkers"]:  # only that many children are started
        run.set("StartServers", v["MaxRequestWorkers"])
