"""AT3xx: keep-alive and timeouts."""

from __future__ import annotations

import math
from collections.abc import Iterator

from apachetune.lint.checks.scopes import server_and_vhost
from apachetune.lint.context import LintContext
from apachetune.lint.finding import Finding, Fix
from apachetune.mpm.connections import CROWD_MARGIN, factor_for_crowd, stall
from apachetune.mpm.numbers import atoi, keepalive_seconds


def keepalive_off(ctx: LintContext) -> Iterator[Finding]:
    for d in server_and_vhost(ctx, "KeepAlive"):
        if d.args and d.args[0].lower() == "off":
            yield ctx.finding("AT301", "KeepAlive Off: every request opens a new TCP (and TLS) connection.",
                              d, (), Fix({"KeepAlive": "On"}))


def keepalive_pins_workers(ctx: LintContext) -> Iterator[Finding]:
    if ctx.mpm not in ("prefork", "worker", "event") or ctx.startup is None:
        return
    ka = ctx.eff.get("KeepAlive")
    if ka is not None and ka.args and ka.args[0].lower() == "off":
        return
    yield from _crowd_stalls(ctx)
    if ctx.mpm == "event":
        return
    workers = ctx.startup.effective["MaxRequestWorkers"]
    limit = ctx.option("AT302", "max_seconds")
    for d in server_and_vhost(ctx, "KeepAliveTimeout"):
        seconds = keepalive_seconds(d.args[0]) if d.args else 0
        if seconds > limit:
            yield ctx.finding(
                "AT302",
                f"KeepAliveTimeout {d.args[0]} on {ctx.mpm}: each idle keep-alive client holds a "
                f"{'process' if ctx.mpm == 'prefork' else 'thread'} for up to {seconds:g} s after its "
                f"last response; {workers} idle clients (MaxRequestWorkers) stall all new requests.",
                d, (), Fix({"KeepAliveTimeout": f"{limit:g}"}))


def _crowd_stalls(ctx: LintContext) -> Iterator[Finding]:
    """The expected idle keep-alive crowd (option idle_clients, lint --keepalive-clients) against
    what the section accepts: MaxRequestWorkers on prefork/worker, event's connection limit
    (apachetune.mpm.connections, the same numbers generate sizes with)."""
    crowd = ctx.option("AT302", "idle_clients")
    startup, mpm = ctx.startup, ctx.mpm
    if startup is None or mpm is None:
        return
    why = stall(mpm, startup.effective, crowd, version=ctx.eff.httpd_version) if crowd else None
    if why is None:
        return
    if mpm == "event":
        factor = factor_for_crowd(crowd, 0.0, int(startup.effective["MaxRequestWorkers"]),
                                  int(startup.effective["ThreadsPerChild"]))
        at = ctx.winner("AsyncRequestWorkerFactor") or ctx.anchor("MaxRequestWorkers")
        yield ctx.finding("AT302", f"{why}.", at, (),
                          Fix({"AsyncRequestWorkerFactor": str(factor)}) if factor else None)
    else:
        eff = startup.effective
        tpc = int(eff.get("ThreadsPerChild", 1)) if mpm == "worker" else 1
        workers = math.ceil(CROWD_MARGIN * crowd / tpc) * tpc
        fix = {"MaxRequestWorkers": str(workers)}
        if workers // tpc > int(eff["ServerLimit"]):
            fix["ServerLimit"] = str(workers // tpc)
        yield ctx.finding("AT302", f"{why}: new requests stall until a KeepAliveTimeout runs out.",
                          ctx.winner("MaxRequestWorkers") or ctx.anchor("MaxRequestWorkers"), (), Fix(fix))


def max_keepalive_requests(ctx: LintContext) -> Iterator[Finding]:
    minimum = ctx.option("AT303", "min_requests")
    for d in server_and_vhost(ctx, "MaxKeepAliveRequests"):
        if not d.args:
            continue
        n = atoi(d.args[0])
        if n == 0:
            yield ctx.finding("AT303", "MaxKeepAliveRequests 0 allows unlimited requests on one "
                              "connection: one client can keep it (and on prefork/worker its worker) forever.",
                              d, (), Fix({"MaxKeepAliveRequests": "100"}))
        elif 0 < n < minimum:
            yield ctx.finding("AT303", f"MaxKeepAliveRequests {n} closes keep-alive connections after "
                              f"{n} requests: most of keep-alive's benefit is lost.",
                              d, (), Fix({"MaxKeepAliveRequests": "100"}))


def long_timeout_without_reqtimeout(ctx: LintContext) -> Iterator[Finding]:
    if ctx.module_loaded("reqtimeout_module"):
        return
    limit = ctx.option("AT304", "max_seconds")
    for d in server_and_vhost(ctx, "Timeout"):
        if d.args and atoi(d.args[0]) > limit:
            yield ctx.finding(
                "AT304",
                f"Timeout {d.args[0]} without mod_reqtimeout: a slow client can hold a worker for "
                f"{d.args[0]} s at every read (slowloris).", d, (), Fix({"Timeout": str(limit)}))


RULES = {"AT301": keepalive_off, "AT302": keepalive_pins_workers, "AT303": max_keepalive_requests,
         "AT304": long_timeout_without_reqtimeout}
