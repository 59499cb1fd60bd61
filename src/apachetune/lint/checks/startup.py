"""AT1xx: what httpd changes in the MPM configuration at start-up (messaged or silent)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from apachetune.lint.context import LintContext
from apachetune.lint.finding import Finding, Fix
from apachetune.mpm.numbers import atoi
from apachetune.mpm.result import Adjustment

# httpd message code -> rule id (one rule per check, across the three MPMs).
CODE_TO_RULE = {
    "AH00175": "AT101", "AH00300": "AT101", "AH00497": "AT101",
    "AH00177": "AT102", "AH00302": "AT102", "AH00499": "AT102",
    "AH00305": "AT103", "AH00502": "AT103",
    "AH00307": "AT104", "AH00504": "AT104",
    "AH00310": "AT105", "AH00507": "AT105",
    "AH00312": "AT106", "AH00509": "AT106",
    "AH00314": "AT107", "AH00511": "AT107",
    "AH00316": "AT108", "AH00513": "AT108",
    "AH00180": "AT109", "AH00318": "AT109", "AH00515": "AT109",
    "AH00182": "AT110",
    "AH00184": "AT111", "AH00320": "AT111", "AH00517": "AT111",
    "AH00186": "AT112", "AH00322": "AT112", "AH00519": "AT112",
}
# What else a message is about, for related locations.
RELATED = {
    "AT105": ("ThreadLimit",), "AT107": ("ThreadsPerChild",), "AT108": ("ThreadsPerChild",),
    "AT109": ("ServerLimit", "ThreadsPerChild"),
}
SILENT_RULE = {"MaxSpareThreads": "AT113", "MaxSpareServers": "AT113", "MinSpareThreads": "AT114",
               "MinSpareServers": "AT114", "StartServers": "AT115"}


def _messaged(rule: str) -> Callable[[LintContext], Iterator[Finding]]:
    def check(ctx: LintContext) -> Iterator[Finding]:
        startup = ctx.startup
        if startup is None:
            return
        for m in startup.messages:
            name = m.directive
            if CODE_TO_RULE.get(m.code) != rule or name is None:
                continue
            eff = startup.effective[name]
            configured = startup.configured.get(name)
            was = configured if configured is not None else f"{_default(ctx, name)} (the default)"
            related = [ctx.winner(n) for n in RELATED.get(rule, ())]
            fix_values = {name: str(eff)}
            if rule == "AT109":  # keep the capacity asked for: raise ServerLimit instead
                fix_values = {"ServerLimit": str(_servers_needed(ctx))}
            yield ctx.finding(
                rule,
                f"{m.code}: {m.text} httpd will run with {name} {eff}, not {was}.",
                ctx.anchor(name, *RELATED.get(rule, ())), related,
                Fix(fix_values, "state the value httpd uses" if rule != "AT109" else
                    "raise ServerLimit to what MaxRequestWorkers needs"))
    return check


def _default(ctx: LintContext, name: str) -> int | float:
    from apachetune.mpm.directives import DEFAULTS

    return DEFAULTS[ctx.mpm or "event"][name]  # a start-up message exists only with an MPM


def _servers_needed(ctx: LintContext) -> int:
    """ServerLimit that carries the MaxRequestWorkers asked for (after httpd's rounding)."""
    assert ctx.startup is not None  # called for one of its messages
    raw = ctx.startup.configured.get("MaxRequestWorkers")
    requested = atoi(raw) if raw is not None else int(_default(ctx, "MaxRequestWorkers"))
    if ctx.mpm == "prefork":
        return requested
    tpc = int(ctx.startup.effective["ThreadsPerChild"])
    return max(1, requested // tpc)


def _silent(rule: str) -> Callable[[LintContext], Iterator[Finding]]:
    def check(ctx: LintContext) -> Iterator[Finding]:
        if ctx.startup is None:
            return
        for adj in ctx.startup.adjustments:
            if not adj.silent or SILENT_RULE.get(adj.directive) != rule:
                continue
            why = {
                "AT113": "at least MinSpare + ThreadsPerChild + 1 per listener bucket"
                         if ctx.mpm != "prefork" else "at least MinSpareServers + 1 per listener bucket",
                "AT114": "at least what the listener buckets need",
                "AT115": "no more processes than MaxRequestWorkers allows are started",
            }[rule]
            if rule == "AT115" and _raised(ctx, adj):
                why = "at least one process a listener bucket"
            was = adj.configured if adj.configured is not None else "its default"
            yield ctx.finding(
                rule,
                f"httpd silently runs with {adj.directive} {adj.effective}, not {was} "
                f"({why}).",
                ctx.anchor(adj.directive), (),
                Fix({adj.directive: str(adj.effective)}, "state the value httpd uses"))
    return check


def _raised(ctx: LintContext, adj: Adjustment) -> bool:
    """StartServers raised (to one process a listener bucket), not capped at the process limit."""
    was = adj.configured if adj.configured is not None else _default(ctx, adj.directive)
    return adj.effective > was


def fatal(ctx: LintContext) -> Iterator[Finding]:
    if ctx.startup is None:
        return
    for m in ctx.startup.fatal:
        anchor = ctx.anchor(m.directive) if m.directive else ctx.anchor()
        yield ctx.finding("AT116", f"{m.code}: {m.text} (httpd will not start)", anchor)


RULES = {rule: _messaged(rule) for rule in sorted(set(CODE_TO_RULE.values()))}
RULES.update({"AT113": _silent("AT113"), "AT114": _silent("AT114"), "AT115": _silent("AT115"),
              "AT116": fatal})
