"""prefork's start-up: prefork_check_config's checks in order, then prefork_run's silent
changes before the first fork (server/mpm/prefork/prefork.c)."""

from __future__ import annotations

from apachetune.mpm.directives import LIMITS
from apachetune.mpm.state import StartupState


def check_prefork(run: StartupState, buckets: int) -> None:
    v = run.v
    limit = LIMITS["prefork"]["ServerLimit"]
    if v["ServerLimit"] > limit:
        run.set("ServerLimit", limit, "AH00175",
                f"WARNING: ServerLimit of {v['ServerLimit']} exceeds compile-time limit of {limit} "
                f"servers, decreasing to {limit}.",
                f"ServerLimit of {v['ServerLimit']} exceeds compile-time limit of {limit}, decreasing to match")
    elif v["ServerLimit"] < 1:
        run.set("ServerLimit", 1, "AH00177",
                f"WARNING: ServerLimit of {v['ServerLimit']} not allowed, increasing to 1.",
                f"ServerLimit of {v['ServerLimit']} not allowed, increasing to 1")
    if v["MaxRequestWorkers"] > v["ServerLimit"]:
        run.set("MaxRequestWorkers", v["ServerLimit"], "AH00180",
                f"WARNING: MaxRequestWorkers of {v['MaxRequestWorkers']} exceeds ServerLimit value of "
                f"{v['ServerLimit']} servers, decreasing MaxRequestWorkers to {v['ServerLimit']}. "
                "To increase, please see the ServerLimit directive.",
                f"MaxRequestWorkers of {v['MaxRequestWorkers']} exceeds ServerLimit value of "
                f"{v['ServerLimit']}, decreasing to match")
    elif v["MaxRequestWorkers"] < 1:
        run.set("MaxRequestWorkers", 1, "AH00182",
                f"WARNING: MaxRequestWorkers of {v['MaxRequestWorkers']} not allowed, increasing to 1.",
                f"MaxRequestWorkers of {v['MaxRequestWorkers']} not allowed, increasing to 1")
    if v["StartServers"] < 1:
        run.set("StartServers", 1, "AH00184",
                f"WARNING: StartServers of {v['StartServers']} not allowed, increasing to 1.",
                f"StartServers of {v['StartServers']} not allowed, increasing to 1")
    if v["MinSpareServers"] < 1:
        run.set("MinSpareServers", 1, "AH00186",
                f"WARNING: MinSpareServers of {v['MinSpareServers']} not allowed, increasing to 1 to "
                "avoid almost certain server failure. Please read the documentation.",
                f"MinSpareServers of {v['MinSpareServers']} not allowed, increasing to 1")
    # prefork_run(): silent adjustments before the first fork.
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
