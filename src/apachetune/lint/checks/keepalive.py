"""AT3xx: keep-alive and timeouts."""

from __future__ import annotations

from apachetune.config.conditions import module_loaded
from apachetune.lint.context import LintContext
from apachetune.lint.finding import Fix
from apachetune.mpm.numbers import atoi


def keepalive_seconds(arg: str) -> float:
    """KeepAliveTimeout's value in seconds (a trailing `ms` means milliseconds)."""
    return atoi(arg) / 1000 if arg.strip().lower().endswith("ms") else atoi(arg)


def _server_and_vhost(ctx: LintContext, name: str):
    """The directive as set in server context and in each <VirtualHost> (the ones in force)."""
    found = []
    last = ctx.eff.get(name)
    if last is not None:
        found.append(last)
    for item, parents in ctx.eff.walk():
        if parents and parents[-1].lname == "virtualhost" and getattr(item, "lname", "") == name.lower() \
                and not hasattr(item, "children"):
            found.append(item)
    return found


def keepalive_off(ctx: LintContext):
    for d in _server_and_vhost(ctx, "KeepAlive"):
        if d.args and d.args[0].lower() == "off":
            yield ctx.finding("AT301", "KeepAlive Off: every request opens a new TCP (and TLS) connection.",
                              d, (), Fix({"KeepAlive": "On"}))


def keepalive_pins_workers(ctx: LintContext):
    if ctx.mpm not in ("prefork", "worker") or ctx.startup is None:
        return
    ka = ctx.eff.get("KeepAlive")
    if ka is not None and ka.args and ka.args[0].lower() == "off":
        return
    workers = ctx.startup.effective["MaxRequestWorkers"]
    limit = ctx.option("AT302", "max_seconds")
    for d in _server_and_vhost(ctx, "KeepAliveTimeout"):
        seconds = keepalive_seconds(d.args[0]) if d.args else 0
        if seconds > limit:
            yield ctx.finding(
                "AT302",
                f"KeepAliveTimeout {d.args[0]} on {ctx.mpm}: each idle keep-alive client holds a "
                f"{'process' if ctx.mpm == 'prefork' else 'thread'} for up to {seconds:g} s after its "
                f"last response; {workers} idle clients (MaxRequestWorkers) stall all new requests.",
                d, (), Fix({"KeepAliveTimeout": f"{limit:g}"}))


def max_keepalive_requests(ctx: LintContext):
    minimum = ctx.option("AT303", "min_requests")
    for d in _server_and_vhost(ctx, "MaxKeepAliveRequests"):
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


def long_timeout_without_reqtimeout(ctx: LintContext):
    if module_loaded("reqtimeout_module", frozenset(ctx.eff.modules)):
        return
    limit = ctx.option("AT304", "max_seconds")
    for d in _server_and_vhost(ctx, "Timeout"):
        if d.args and atoi(d.args[0]) > limit:
            yield ctx.finding(
                "AT304",
                f"Timeout {d.args[0]} without mod_reqtimeout: a slow client can hold a worker for "
                f"{d.args[0]} s at every read (slowloris).", d, (), Fix({"Timeout": str(limit)}))


RULES = {"AT301": keepalive_off, "AT302": keepalive_pins_workers, "AT303": max_keepalive_requests,
         "AT304": long_timeout_without_reqtimeout}
