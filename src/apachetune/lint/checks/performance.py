"""AT6xx: what httpd's own "Apache Performance Tuning" page warns about, and MPM coupling.

https://httpd.apache.org/docs/2.4/misc/perf-tuning.html: DNS lookups, .htaccess lookups, symlink
checks and content negotiation cost system calls on every request; debug logging costs writes;
mod_php needs a process per request and is not thread-safe.
"""

from __future__ import annotations

from collections.abc import Iterator

from apachetune.config.effective import ResolvedDirective
from apachetune.lint.checks.scopes import (
    child_directives,
    covering,
    directives_named,
    directory_sections,
    document_roots,
    norm_dir,
    option_words,
)
from apachetune.lint.context import LintContext
from apachetune.lint.finding import Finding, Fix, Location
from apachetune.mpm.numbers import atoi, is_plain_number, max_mem_free

PHP_MODULES = ("php_module", "php5_module", "php7_module", "php8_module")
DEBUG_LEVELS = {"debug"} | {f"trace{n}" for n in range(1, 9)}


def hostname_lookups(ctx: LintContext) -> Iterator[Finding]:
    formats_with_h = [d for d, _ in directives_named(ctx, "LogFormat") if d.args and "%h" in d.args[0]]
    for d, _parents in directives_named(ctx, "HostnameLookups"):
        if d.args and d.args[0].lower() in ("on", "double"):
            extra = " and every %h in the access log becomes a reverse DNS lookup" if formats_with_h else ""
            yield ctx.finding(
                "AT601", f"HostnameLookups {d.args[0]}: a DNS lookup per request (two with Double) "
                f"before the response{extra}. Resolve names offline with logresolve.",
                d, formats_with_h[:1], Fix({"HostnameLookups": "Off"}))


def allow_override_on_trees(ctx: LintContext) -> Iterator[Finding]:
    above_roots = covering(document_roots(ctx), strictly_above=True)
    for section, path in directory_sections(ctx):
        if path not in above_roots:
            continue
        for name in ("AllowOverride", "AllowOverrideList"):
            for d in child_directives(section, name):
                if d.args and d.args[0].lower() != "none":
                    where = "every directory of every requested path" if path == "/" else \
                        f"every directory from {path} down, above the document root"
                    yield ctx.finding(
                        "AT602", f"{d.name} {' '.join(d.args)} on <Directory {section.args[0]}>: httpd "
                        f"looks for an .htaccess file in {where}, on every request.", d)


def symlink_checks(ctx: LintContext) -> Iterator[Finding]:
    trees = ctx.memo("document_trees", lambda: covering(document_roots(ctx), strictly_above=False))
    for section, path in directory_sections(ctx):
        if path not in trees:
            continue
        for d in child_directives(section, "Options"):
            words = option_words(d)
            names = {n for _, n in words}
            if "symlinksifownermatch" in names and ("-", "symlinksifownermatch") not in words:
                yield ctx.finding(
                    "AT603", f"Options {' '.join(d.args)} on <Directory {section.args[0]}>: "
                    "SymLinksIfOwnerMatch makes httpd lstat() every component of every path.", d)
            elif words and all(sign == "" for sign, _ in words) \
                    and not names & {"followsymlinks", "all"}:
                yield ctx.finding(
                    "AT603", f"Options {' '.join(d.args)} on <Directory {section.args[0]}> turns "
                    "FollowSymLinks off: httpd lstat()s every component of every path to refuse links.", d)


def multiviews(ctx: LintContext) -> Iterator[Finding]:
    trees = ctx.memo("document_trees", lambda: covering(document_roots(ctx), strictly_above=False))
    for d, parents in directives_named(ctx, "Options"):
        words = option_words(d)
        if ("", "multiviews") not in words and ("+", "multiviews") not in words:
            continue
        broad = not parents or all(p.lname == "virtualhost" for p in parents)
        if not broad and parents[-1].lname == "directory" and parents[-1].args:
            broad = norm_dir(parents[-1].args[0]) in trees
        if broad:
            yield ctx.finding(
                "AT604", "Options MultiViews over a whole document tree: every request for a missing "
                "file reads its directory to negotiate a variant.", d)


def extended_status_unused(ctx: LintContext) -> Iterator[Finding]:
    handlers = [d for d, _ in directives_named(ctx, "SetHandler") if d.args and d.args[0].lower() == "server-status"]
    if handlers:
        return
    for d, _parents in directives_named(ctx, "ExtendedStatus"):
        if d.args and d.args[0].lower() == "on":
            yield ctx.finding(
                "AT605", "ExtendedStatus On with no server-status handler: httpd times and records every "
                "request for a status page nobody serves.", d, (), Fix({"ExtendedStatus": "Off"}))


def debug_logging(ctx: LintContext) -> Iterator[Finding]:
    for d, parents in directives_named(ctx, "LogLevel"):
        if parents and any(p.lname != "virtualhost" for p in parents):
            continue  # a per-directory LogLevel is a deliberate, narrow choice
        levels = [w.rsplit(":", 1)[-1].lower() for w in d.args]
        noisy = [w for w, lvl in zip(d.args, levels, strict=True) if lvl in DEBUG_LEVELS]
        if noisy:
            yield ctx.finding(
                "AT606", f"LogLevel {' '.join(d.args)}: {', '.join(noisy)} writes several error-log "
                "lines per request; use it while debugging only.", d)


def _php_loaded(ctx: LintContext) -> str | None:
    for mod in PHP_MODULES:
        if mod in ctx.eff.modules:
            return mod
    return None


def _load_position(ctx: LintContext, mod: str) -> Location:
    pos = ctx.eff.module_positions.get(mod)
    if pos is None:
        return ctx.anchor()
    return Location(pos.file, pos.line, pos.column)


def php_with_threads(ctx: LintContext) -> Iterator[Finding]:
    mod = _php_loaded(ctx)
    if mod and ctx.mpm in ("worker", "event"):
        yield ctx.finding(
            "AT607", f"{mod} (mod_php) is loaded with the {ctx.mpm} MPM: PHP's extensions are not "
            "thread-safe; use prefork, or PHP-FPM behind mod_proxy_fcgi with this MPM.",
            _load_position(ctx, mod))


def php_never_recycled(ctx: LintContext) -> Iterator[Finding]:
    mod = _php_loaded(ctx)
    if not mod or ctx.mpm != "prefork":
        return
    d: ResolvedDirective | None = ctx.winner("MaxConnectionsPerChild")
    if d is None or (d.args and atoi(d.args[0]) == 0):
        at = d if d is not None else _load_position(ctx, mod)
        yield ctx.finding(
            "AT608", "MaxConnectionsPerChild is 0 (never recycle) with mod_php: memory a PHP script "
            "leaks stays in its child for the child's whole life and adds up across children.",
            at, (), Fix({"MaxConnectionsPerChild": "1000"}))


def buffered_logs(ctx: LintContext) -> Iterator[Finding]:
    for d, _parents in directives_named(ctx, "BufferedLogs"):
        if d.args and d.args[0].lower() == "on":
            yield ctx.finding(
                "AT613", "BufferedLogs On: each child keeps access-log lines in memory and writes them in "
                "batches (experimental, per mod_log_config's docs): a crashed or killed child loses them, "
                "and lines from different children interleave out of order.", d, (),
                Fix({"BufferedLogs": "Off"}))


def max_mem_free_unlimited(ctx: LintContext) -> Iterator[Finding]:
    d = ctx.winner("MaxMemFree")
    if d is None or len(d.args) != 1:
        return
    arg = d.args[0]
    kib = max_mem_free(arg)
    if kib is None:
        return  # httpd refuses it: AT510
    if kib == 0:
        if not is_plain_number(arg):
            how = f"MaxMemFree {arg!r} has no digits, so httpd reads 0, which means no limit"
        elif int(arg) != 0:
            how = (f"MaxMemFree {arg.strip()} KiB is a multiple of 4 GiB, and httpd counts the bytes in "
                   "32 bits: 0, which means no limit")
        else:
            how = "MaxMemFree 0 means no limit"
        event = (", and event keeps the pool of every connection it closed" if ctx.mpm == "event" else "")
        yield ctx.finding(
            "AT614", f"{how}: each worker's allocator keeps all the memory its largest request freed{event}, "
            "so every child stays at the size of its busiest moment.", d, (), Fix({"MaxMemFree": "2048"}))
    elif is_plain_number(arg) and kib != int(arg.strip()):
        yield ctx.finding(
            "AT614", f"MaxMemFree {arg.strip()} KiB is beyond 4 GiB, and httpd counts the bytes in 32 bits: "
            f"it keeps {kib} KiB.", d, (), Fix({"MaxMemFree": str(kib)}))


RULES = {"AT601": hostname_lookups, "AT602": allow_override_on_trees, "AT603": symlink_checks,
         "AT604": multiviews, "AT605": extended_status_unused, "AT606": debug_logging,
         "AT607": php_with_threads, "AT608": php_never_recycled, "AT613": buffered_logs,
         "AT614": max_mem_free_unlimited}
