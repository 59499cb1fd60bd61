"""worker's and event's start-up: the same checks in the same order with each MPM's own AH
codes and limits (worker_check_config / event_check_config), then worker_run / event_run's
silent changes before the first fork (server/mpm/worker/worker.c, server/mpm/event/event.c)."""

from __future__ import annotations

import math

from apachetune.mpm.directives import LIMITS
from apachetune.mpm.numbers import strtod_strict
from apachetune.mpm.state import SPARE_WARNING, StartupState

_WORKER_FACTOR_SCALE = 16  # event.c: AsyncRequestWorkerFactor is kept in 1/16ths


# AH codes of the threaded MPMs' start-up messages, in check order.
_THREADED_CODES = {
    "worker": ("AH00300", "AH00302", "AH00305", "AH00307", "AH00310", "AH00312", "AH00314",
               "AH00316", "AH00318", "AH00320", "AH00322"),
    "event": ("AH00497", "AH00499", "AH00502", "AH00504", "AH00507", "AH00509", "AH00511",
              "AH00513", "AH00515", "AH00517", "AH00519"),
}


def check_threaded(run: StartupState, buckets: int) -> None:
    """worker/event_check_config in httpd's order, then what worker/event_run adjust silently."""
    codes = _THREADED_CODES[run.mpm]
    _check_limits(run, *codes[:6])
    daemons = _check_max_workers(run, *codes[6:9])
    v = run.v
    c_ss, c_minspare = codes[9:]
    if v["StartServers"] < run.rules.start_servers_floor:
        run.raise_to_one("StartServers", c_ss)
    if v["MinSpareThreads"] < 1:
        run.raise_to_one("MinSpareThreads", c_minspare, SPARE_WARNING)
    _run_adjustments(run, daemons, buckets)


def _check_limits(run: StartupState, c_sl_max: str, c_sl_min: str, c_tl_max: str, c_tl_min: str,
                  c_tpc_max: str, c_tpc_min: str) -> None:
    """ServerLimit and ThreadLimit within the compiled limits, ThreadsPerChild within ThreadLimit."""
    v = run.v
    max_sl = LIMITS[run.mpm]["ServerLimit"]
    max_tl = LIMITS[run.mpm]["ThreadLimit"]
    if v["ServerLimit"] > max_sl:
        run.cap_at_compile_limit("ServerLimit", max_sl, "servers", c_sl_max)
    elif v["ServerLimit"] < 1:
        run.raise_to_one("ServerLimit", c_sl_min)
    if v["ThreadLimit"] > max_tl:
        run.cap_at_compile_limit("ThreadLimit", max_tl, "threads", c_tl_max)
    elif v["ThreadLimit"] < 1:
        run.raise_to_one("ThreadLimit", c_tl_min)
    if v["ThreadsPerChild"] > v["ThreadLimit"]:
        run.set("ThreadsPerChild", v["ThreadLimit"], c_tpc_max,
                f"WARNING: ThreadsPerChild of {v['ThreadsPerChild']} exceeds ThreadLimit of "
                f"{v['ThreadLimit']} threads, decreasing to {v['ThreadLimit']}. "
                "To increase, please see the ThreadLimit directive.",
                f"ThreadsPerChild of {v['ThreadsPerChild']} exceeds ThreadLimit of {v['ThreadLimit']}, "
                "decreasing to match")
    elif v["ThreadsPerChild"] < 1:
        run.raise_to_one("ThreadsPerChild", c_tpc_min)


def _check_max_workers(run: StartupState, c_mrw_tpc: str, c_mrw_mult: str, c_mrw_sl: str) -> int:
    """MaxRequestWorkers as a whole number of children within ServerLimit; returns the children."""
    v = run.v
    tpc = v["ThreadsPerChild"]
    if v["MaxRequestWorkers"] < tpc:
        run.set("MaxRequestWorkers", tpc, c_mrw_tpc,
                f"WARNING: MaxRequestWorkers of {v['MaxRequestWorkers']} is less than ThreadsPerChild "
                f"of {tpc}, increasing to {tpc}. MaxRequestWorkers must be at least as large as the "
                "number of threads in a single server.",
                f"MaxRequestWorkers of {v['MaxRequestWorkers']} is less than ThreadsPerChild of {tpc}, "
                "increasing to match")
    daemons = v["MaxRequestWorkers"] // tpc
    if v["MaxRequestWorkers"] % tpc:
        run.set("MaxRequestWorkers", daemons * tpc, c_mrw_mult,
                f"WARNING: MaxRequestWorkers of {v['MaxRequestWorkers']} is not an integer multiple of "
                f"ThreadsPerChild of {tpc}, decreasing to nearest multiple {daemons * tpc}, for a "
                f"maximum of {daemons} servers.",
                f"MaxRequestWorkers of {v['MaxRequestWorkers']} is not an integer multiple of "
                f"ThreadsPerChild of {tpc}, decreasing to nearest multiple {daemons * tpc}")
    if daemons > v["ServerLimit"]:
        # httpd leaves max_workers as it is but caps the process count: the scoreboard
        # fills at ServerLimit x ThreadsPerChild, so that is the real MaxRequestWorkers.
        sl = v["ServerLimit"]
        run.set("MaxRequestWorkers", sl * tpc, c_mrw_sl,
                f"WARNING: MaxRequestWorkers of {v['MaxRequestWorkers']} would require {daemons} servers "
                f"and would exceed ServerLimit of {sl}, decreasing to {sl * tpc}. "
                "To increase, please see the ServerLimit directive.",
                f"MaxRequestWorkers of {v['MaxRequestWorkers']} would require {daemons} servers and "
                f"exceed ServerLimit of {sl}, decreasing to {sl * tpc}")
        daemons = sl
    return int(daemons)


def _run_adjustments(run: StartupState, daemons: int, buckets: int) -> None:
    """worker_run() / event_run(): silent adjustments before the first fork."""
    v = run.v
    tpc = v["ThreadsPerChild"]
    floor = run.rules.spare_floor
    if floor == "thread":  # before 2.4.17: only "don't thrash", no buckets
        if v["MaxSpareThreads"] < v["MinSpareThreads"] + tpc:
            run.set("MaxSpareThreads", v["MinSpareThreads"] + tpc)
    else:
        if daemons < buckets:
            daemons = buckets
            run.set("MaxRequestWorkers", daemons * tpc)
        if v["StartServers"] < buckets:
            run.set("StartServers", buckets)
        min_floor = tpc * buckets if floor == "process" else tpc * (buckets - 1) + buckets
        if v["MinSpareThreads"] < min_floor:
            run.set("MinSpareThreads", min_floor)
        max_gap = (tpc + 1) * buckets if floor == "bucket" else tpc * buckets
        if v["MaxSpareThreads"] < v["MinSpareThreads"] + max_gap:
            run.set("MaxSpareThreads", v["MinSpareThreads"] + max_gap)
    if v["StartServers"] > daemons:  # only that many children are started
        run.set("StartServers", daemons)


def read_worker_factor(run: StartupState) -> None:
    """event.c set_worker_factor: kept in 1/16ths, at least 1 (1/16 before 2.4.30; refusals are in
    reading.py)."""
    raw = run.configured.get("AsyncRequestWorkerFactor")
    if raw is None:
        return
    value = strtod_strict(raw)
    if value is None:
        return  # refused while reading (reading.py): httpd stops before this step
    scaled = double_to_uint(value * _WORKER_FACTOR_SCALE)
    floor = _WORKER_FACTOR_SCALE if run.rules.factor_floor_one else 1  # 1/16 before 2.4.30
    run.v["AsyncRequestWorkerFactor"] = max(scaled, floor) / _WORKER_FACTOR_SCALE


def double_to_uint(x: float) -> int:
    """C's `unsigned int = double` as gcc compiles it on x86-64 (cvttsd2si into a 64-bit register,
    low 32 bits kept): inf, NaN and values beyond 2^63 give 0, so `AsyncRequestWorkerFactor inf`
    ends up as event.c's floor of 1, never an overflow here."""
    if not math.isfinite(x) or not -(2.0 ** 63) <= x < 2.0 ** 63:
        return 0
    return int(x) & 0xFFFFFFFF
