"""AT401-AT404: configuration that is never read, silently overridden, or misleading."""

from __future__ import annotations

from collections.abc import Iterator

from apachetune.config.conditions import split_negation
from apachetune.config.directives import lookup
from apachetune.config.effective import ResolvedDirective, ResolvedSection
from apachetune.config.tree import Directive, Section
from apachetune.lint.context import LintContext, location_of
from apachetune.lint.finding import Finding, Fix, Location
from apachetune.mpm.directives import ALL_MPM_DIRECTIVES, LEGACY_NAMES, MPM_DIRECTIVES, canonical
from apachetune.report.paths import display_path

_MPM_MODULE_NAMES = {
    "mpm_prefork_module": "prefork", "prefork.c": "prefork", "mpm_worker_module": "worker",
    "worker.c": "worker", "mpm_event_module": "event", "event.c": "event",
}
# TAKE1/FLAG directives that accumulate rather than override when repeated (each line adds an
# include, a module, a log, a certificate, ...). Multi-argument directives (Listen, Header,
# SetEnv, ...) are never compared at all: only TAKE1/FLAG ones can override each other.
_REPEATABLE = frozenset({
    "include", "includeoptional", "loadmodule", "loadfile", "define", "undefine",
    "namevirtualhost",  # no effect in 2.4, and never "overridden"
    "transferlog",  # each opens another access log
    "sslcertificatefile", "sslcertificatekeyfile",  # one pair per key type (RSA and ECDSA)
    "luapackagepath", "luapackagecpath", "undefmacro", "use",
})


def mpm_section_not_loaded(ctx: LintContext) -> Iterator[Finding]:
    for inactive in ctx.eff.inactive:
        node = inactive.node
        if node.lname != "ifmodule":
            continue
        negate, word = split_negation(node.raw_args)
        if negate or word not in _MPM_MODULE_NAMES:
            continue
        tuned = [d for d in _directives_in(node) if canonical(d.name) is not None]
        if not tuned:
            continue
        listed = ", ".join(f"{d.name} {' '.join(d.args)}" for d in tuned[:4])
        more = f" and {len(tuned) - 4} more" if len(tuned) > 4 else ""
        running = ctx.mpm or "no MPM"
        related = [location_of(d) for d in tuned[:4]]
        if _MPM_MODULE_NAMES[word] == ctx.mpm:
            # The block is for the MPM that runs, but httpd read it before that MPM's LoadModule.
            load = ctx.eff.module_positions.get(f"mpm_{ctx.mpm}_module")
            active = [d for d in ctx.mpm_items if d.name.lower() in {n.lower() for n in MPM_DIRECTIVES[ctx.mpm]}]
            dropped = "all MPM tuning is dropped: httpd runs with its defaults" if not active else \
                f"{len(tuned)} setting(s) are dropped"
            yield ctx.finding(
                "AT406",
                f"<IfModule {node.raw_args}> is never read: httpd evaluates <IfModule> while reading, and "
                f"this block comes before LoadModule mpm_{ctx.mpm}_module"
                + (f" ({display_path(load.file)}:{load.line})" if load else "") + f"; {dropped} ({listed}{more}).",
                node, [Location(load.file, load.line, load.column)] + related if load else related)
            continue
        yield ctx.finding(
            "AT401",
            f"<IfModule {node.raw_args}> is never read (the server runs {running}, not "
            f"{_MPM_MODULE_NAMES[word]}): {listed}{more} have no effect.",
            node, related)


def _directives_in(node: Section) -> Iterator[Directive]:
    for child in node.children:
        if isinstance(child, Directive):
            yield child
        elif isinstance(child, Section):
            yield from _directives_in(child)


def _override_key(lname: str) -> str | None:
    """The setting a directive overrides when repeated in one scope, or None when it does not."""
    spec = lookup(lname)
    if lname in _REPEATABLE or spec is None or spec.kind not in ("TAKE1", "FLAG"):
        return None
    return (canonical(lname) or lname).lower()


def duplicate_directive(ctx: LintContext) -> Iterator[Finding]:
    keys: dict[str, str | None] = {}  # lower-case name -> _override_key: once a name

    def scope(items: list[ResolvedDirective | ResolvedSection]) -> Iterator[Finding]:
        seen: dict[str, ResolvedDirective] = {}
        for item in items:
            if isinstance(item, ResolvedSection):
                yield from scope(item.children)
                continue
            lname = item.lname
            lkey = keys[lname] if lname in keys else keys.setdefault(lname, _override_key(lname))
            if lkey is None:
                continue
            if lkey in seen:
                first = seen[lkey]
                yield ctx.finding(
                    "AT402",
                    f"{first.name} {first.args_text} is overridden by {item.name} {item.args_text} at "
                    f"{display_path(item.node.file)}:{item.node.line}; the later setting wins.",
                    first, [item], Fix({}, "delete the earlier line", delete=True))
            seen[lkey] = item

    yield from scope(ctx.eff.tree)


def mpm_directive_of_other_mpm(ctx: LintContext) -> Iterator[Finding]:
    if ctx.mpm is None:
        return
    own = {n.lower() for n in MPM_DIRECTIVES[ctx.mpm]}
    for lname in sorted(ALL_MPM_DIRECTIVES):  # the few names that can be wrong, not every line
        canon = canonical(lname)
        if canon is None or canon.lower() in own:
            continue
        owners = [m for m, names in MPM_DIRECTIVES.items() if canon in names]
        for item in ctx.items_named(lname):
            if isinstance(item, ResolvedDirective):
                yield ctx.finding(
                    "AT403",
                    f"Invalid command '{item.name}', perhaps misspelled or defined by a module not included "
                    f"in the server configuration: {canon} belongs to {' and '.join(owners)}, this server "
                    f"runs {ctx.mpm}.", item)


def deprecated_name(ctx: LintContext) -> Iterator[Finding]:
    for lname, new in LEGACY_NAMES.items():
        for item in ctx.items_named(lname):
            if isinstance(item, ResolvedDirective):
                yield ctx.finding("AT404", f"{item.name} is a deprecated name; use {new}.", item, (),
                                  Fix({}, f"rename {item.name} to {new}", rename=new))


RULES = {"AT401": mpm_section_not_loaded, "AT406": mpm_section_not_loaded, "AT402": duplicate_directive,
         "AT403": mpm_directive_of_other_mpm, "AT404": deprecated_name}
