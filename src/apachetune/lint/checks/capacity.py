"""AT2xx and AT405: capacity settings that waste memory, cannot be reached, or churn."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from apachetune.lint.context import LintContext
from apachetune.lint.finding import Finding, Fix
from apachetune.mpm.directives import LIMITS
from apachetune.mpm.restart import restart_headroom
from apachetune.mpm.startup import simulate_startup

# One scoreboard worker record (worker_score) on x86-64, measured on httpd 2.4.71.
WORKER_SCORE_BYTES = 336
PROCESS_SCORE_BYTES = 48


def _kib(n: int) -> str:
    return f"{n / 1024:.0f} KiB" if n < 1024 * 1024 else f"{n / 1048576:.1f} MiB"


def _int_effective(ctx: LintContext) -> dict[str, int]:
    """The effective MPM values as integers (AsyncRequestWorkerFactor, a fraction, left out)."""
    assert ctx.startup is not None
    return {k: int(v) for k, v in ctx.startup.effective.items() if k != "AsyncRequestWorkerFactor"}


def _processes_needed(mpm: str, e: Mapping[str, int | float]) -> int:
    """The scoreboard slots MaxRequestWorkers needs: itself on prefork, else / ThreadsPerChild."""
    if mpm == "prefork":
        return int(e["MaxRequestWorkers"])
    return -(-int(e["MaxRequestWorkers"]) // int(e["ThreadsPerChild"]))


def server_limit_oversized(ctx: LintContext) -> Iterator[Finding]:
    at = ctx.winner("ServerLimit")
    if ctx.startup is None or ctx.mpm is None or at is None:
        return
    e = _int_effective(ctx)
    needed = _processes_needed(ctx.mpm, e)
    if ctx.mpm == "prefork":
        per_slot = WORKER_SCORE_BYTES + PROCESS_SCORE_BYTES
    else:
        per_slot = PROCESS_SCORE_BYTES + e["ThreadLimit"] * WORKER_SCORE_BYTES
    if e["ServerLimit"] > 2 * needed and e["ServerLimit"] - needed >= 4:
        waste = (e["ServerLimit"] - needed) * per_slot
        yield ctx.finding(
            "AT201",
            f"ServerLimit {e['ServerLimit']} reserves scoreboard slots for {e['ServerLimit']} processes; "
            f"MaxRequestWorkers {e['MaxRequestWorkers']} needs {needed}. About {_kib(waste)} of shared "
            "memory is reserved and never used.",
            at, [ctx.winner("MaxRequestWorkers")],
            Fix({"ServerLimit": str(needed + restart_headroom(ctx.mpm, needed))},
                "size ServerLimit to MaxRequestWorkers, with graceful-restart headroom"))


def no_restart_slots(ctx: LintContext) -> Iterator[Finding]:
    """event: a ServerLimit set to exactly the processes MaxRequestWorkers needs leaves no slot
    for the new generation of a graceful restart while the old one finishes (worker uses no
    slot beyond them whatever ServerLimit says: mpm/restart.py)."""
    at = ctx.winner("ServerLimit")
    if ctx.startup is None or ctx.mpm != "event" or at is None:
        return
    e = ctx.startup.effective
    needed = _processes_needed(ctx.mpm, e)
    spare = min(restart_headroom(ctx.mpm, needed), LIMITS[ctx.mpm]["ServerLimit"] - needed)
    if int(e["ServerLimit"]) <= needed and spare > 0:  # (at httpd's compile-time limit there is no room)
        yield ctx.finding(
            "AT205",
            f"ServerLimit {e['ServerLimit']} leaves no slot beyond the {needed} processes MaxRequestWorkers "
            f"{e['MaxRequestWorkers']} needs: after a graceful restart under load the new processes wait for "
            "the old ones to finish, then start one a second (measured on httpd 2.4.71: 2 s with no "
            f"request served). {spare} spare slot{'s let' if spare > 1 else ' lets'} the new ones start at once.",
            at, [ctx.winner("MaxRequestWorkers")],
            Fix({"ServerLimit": str(needed + spare)}, "keep spare slots for graceful restarts"))


def thread_limit_unused(ctx: LintContext) -> Iterator[Finding]:
    at = ctx.winner("ThreadLimit")
    if ctx.startup is None or ctx.mpm == "prefork" or at is None:
        return
    e = _int_effective(ctx)
    if e["ThreadLimit"] > e["ThreadsPerChild"]:
        waste = e["ServerLimit"] * (e["ThreadLimit"] - e["ThreadsPerChild"]) * WORKER_SCORE_BYTES
        yield ctx.finding(
            "AT202",
            f"ThreadLimit {e['ThreadLimit']} is above ThreadsPerChild {e['ThreadsPerChild']}: "
            f"{e['ServerLimit']} x {e['ThreadLimit'] - e['ThreadsPerChild']} scoreboard records "
            f"(about {_kib(waste)}) are reserved and never used.",
            at, [ctx.winner("ThreadsPerChild")],
            Fix({"ThreadLimit": str(e["ThreadsPerChild"])}, "match ThreadLimit to ThreadsPerChild"))


def spare_minimum_unreachable(ctx: LintContext) -> Iterator[Finding]:
    if ctx.startup is None:
        return
    e = ctx.startup.effective
    name = "MinSpareServers" if ctx.mpm == "prefork" else "MinSpareThreads"
    at = ctx.winner(name)
    if at is not None and e[name] > e["MaxRequestWorkers"]:
        yield ctx.finding(
            "AT203",
            f"{name} {e[name]} is more than MaxRequestWorkers {e['MaxRequestWorkers']}: httpd can never "
            "keep that many idle and keeps spawning up to the limit.",
            at, [ctx.winner("MaxRequestWorkers")],
            Fix({name: str(max(1, int(e["MaxRequestWorkers"]) // 4))}, "a quarter of MaxRequestWorkers"))


def start_servers_over_max_spare(ctx: LintContext) -> Iterator[Finding]:
    at = ctx.winner("StartServers")
    if ctx.startup is None or at is None:
        return
    e = ctx.startup.effective
    if ctx.mpm == "prefork":
        if e["StartServers"] > e["MaxSpareServers"]:
            yield ctx.finding(
                "AT204",
                f"StartServers {e['StartServers']} is above MaxSpareServers {e['MaxSpareServers']}: "
                f"{e['StartServers'] - e['MaxSpareServers']} of the children started are killed again "
                "as idle, one a second.",
                at, [ctx.winner("MaxSpareServers")],
                Fix({"StartServers": str(e["MaxSpareServers"])}))
    else:
        started = e["StartServers"] * e["ThreadsPerChild"]
        if started > e["MaxSpareThreads"] + e["ThreadsPerChild"]:
            keep = max(1, e["MaxSpareThreads"] // e["ThreadsPerChild"])
            yield ctx.finding(
                "AT204",
                f"StartServers {e['StartServers']} x ThreadsPerChild {e['ThreadsPerChild']} = {started} "
                f"idle threads at start, above MaxSpareThreads {e['MaxSpareThreads']}: the extra "
                "children are killed again, one a second.",
                at, [ctx.winner("MaxSpareThreads")],
                Fix({"StartServers": str(keep)}))


def event_accept_race(ctx: LintContext) -> Iterator[Finding]:
    """event with one or two threads a process in several processes: every listener polls the
    listen socket, and one that loses a new connection to another process keeps the worker it
    reserved for it, uncounted (event.c's have_idle_worker against ap_queue_info_num_idlers,
    every 2.4.x). With one thread that process stops accepting for good; with two, whenever its
    other thread is busy."""
    at = ctx.winner("ThreadsPerChild")
    if ctx.startup is None or ctx.mpm != "event" or at is None:
        return
    e = _int_effective(ctx)
    tpc = e["ThreadsPerChild"]
    processes = min(e["ServerLimit"], _processes_needed("event", e))
    if tpc > 2 or processes < 2:
        return
    if tpc == 1:
        what = ("a process that loses one keeps its only thread reserved and stops accepting for good "
                "(measured on httpd 2.4.71, 4 x 1 threads, 40 requests a second of 50 ms: two processes "
                "never served a request, a third stopped after 9, and requests waited 3.2 s on average)")
    else:
        what = ("a process that loses one keeps one of its two threads reserved, and stops accepting "
                "whenever the other is busy (measured on httpd 2.4.71, 2 x 2 threads, 50 ms requests at "
                "50% and 70% of capacity: a mean wait of 6.1 and 48 ms, against about 2 and 38 ms as one "
                "process of 4 threads, the M/M/c queue's)")
    yield ctx.finding(
        "AT206",
        f"ThreadsPerChild {tpc} on event, up to {processes} processes: each new connection wakes every "
        f"process's listener and one takes it; {what}. Fewer processes with more threads each avoid it.",
        at, [ctx.winner("MaxRequestWorkers")], _fewer_processes(ctx, e))


def _fewer_processes(ctx: LintContext, e: Mapping[str, int]) -> Fix:
    """The same workers in processes of up to 25 threads (httpd's default): ServerLimit with
    graceful-restart headroom and ThreadLimit when the file sets them, then whatever httpd
    would change at start-up around the new ThreadsPerChild (the spare threads, StartServers),
    stated, so that it runs the section as written."""
    assert ctx.startup is not None
    mrw = e["MaxRequestWorkers"]
    tpc = min(25, mrw)
    processes = -(-mrw // tpc)
    change = {"ThreadsPerChild": str(tpc), "MaxRequestWorkers": str(processes * tpc)}
    if ctx.winner("ServerLimit") is not None or e["ServerLimit"] < processes:
        change["ServerLimit"] = str(processes + restart_headroom("event", processes))
    if ctx.winner("ThreadLimit") is not None or e["ThreadLimit"] < tpc:
        change["ThreadLimit"] = str(tpc)
    for _ in range(4):
        stated = {**ctx.startup.configured, **change}
        result = simulate_startup("event", stated, listen_buckets=ctx.listen_buckets,
                                  version=ctx.eff.httpd_version)
        moved = {a.directive: str(a.effective) for a in result.adjustments}
        moved.update({m.directive: str(result.effective[m.directive]) for m in result.messages
                      if m.directive in result.effective and str(result.effective[m.directive]) != stated.get(m.directive)})
        if not moved:
            break
        change.update(moved)
    return Fix(change, f"{processes} process{'es' if processes > 1 else ''} of {tpc} threads")


def process_churn(ctx: LintContext) -> Iterator[Finding]:
    if ctx.startup is None:
        return
    d = ctx.winner("MaxConnectionsPerChild")
    value = ctx.startup.effective.get("MaxConnectionsPerChild", 0)
    if d is not None and 0 < value < ctx.option("AT405", "min_connections"):
        yield ctx.finding(
            "AT405",
            f"MaxConnectionsPerChild {value}: every process exits after {value} connections and a new "
            "one is forked, so busy servers fork constantly and lose warm caches.",
            d, (), Fix({"MaxConnectionsPerChild": "0"}, "never recycle (or use thousands)"))


RULES = {"AT201": server_limit_oversized, "AT202": thread_limit_unused,
         "AT203": spare_minimum_unreachable, "AT204": start_servers_over_max_spare,
         "AT205": no_restart_slots, "AT206": event_accept_race, "AT405": process_churn}
