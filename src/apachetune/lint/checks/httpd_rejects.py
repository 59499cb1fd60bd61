"""AT501-AT507: what `httpd -t` would reject (or silently misread), found without httpd.

Each message is httpd's own wording (server/config.c invoke_cmd, server/core.c
ap_check_cmd_context), so the finding reads like the error httpd would print.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from apachetune.config.conditions import Version, at_least
from apachetune.config.directives import ARG_WORDS, DirectiveSpec, lookup, shipped_modules, suggest
from apachetune.config.effective import ResolvedDirective, ResolvedSection
from apachetune.lint.context import LintContext, Scoped
from apachetune.lint.finding import Finding, Fix, Location
from apachetune.mpm.directives import MPM_DIRECTIVES, canonical
from apachetune.mpm.numbers import atoi, is_plain_number

_DIR_SECTIONS = {"directory", "directorymatch", "location", "locationmatch", "files", "filesmatch",
                 "if", "elseif", "else", "proxy", "proxymatch", "limit", "limitexcept"}
# Directives whose handlers refuse anything but the main server (GLOBAL_ONLY).
_GLOBAL_ONLY = frozenset(n.lower() for names in MPM_DIRECTIVES.values() for n in names) | {
    "maxclients", "maxrequestsperchild", "listen", "mutex", "pidfile", "scoreboardfile",
    "coredumpdirectory", "gracefulshutdowntimeout", "maxmemfree", "threadstacksize", "user", "group",
    "servertokens", "traceenable", "defaultruntimedir"}


def _third_party_loaded(ctx: LintContext) -> list[str]:
    """Loaded modules httpd does not ship: they may define directives we have no table for."""
    return sorted(m for m in ctx.eff.modules if m not in shipped_modules() and not m.endswith(".c"))


def _items(ctx: LintContext) -> Iterator[Scoped]:
    yield from ctx.walk()


def _name_of(item: ResolvedDirective | ResolvedSection) -> str:
    return "<" + item.name if isinstance(item, ResolvedSection) else item.name


def unknown_or_not_loaded(ctx: LintContext) -> Iterator[Finding]:
    third_party = _third_party_loaded(ctx)
    verdicts: dict[str, tuple[str, str, str | None] | None] = {}  # one verdict per name, not per line
    for item, _parents in _items(ctx):
        name = _name_of(item)
        if name not in verdicts:
            verdicts[name] = _unknown_verdict(ctx, name, item, third_party)
        verdict = verdicts[name]
        if verdict is not None:
            rule, message, severity = verdict
            f = ctx.finding(rule, message, item)
            if severity:
                f.severity = severity
            yield f


def _unknown_verdict(ctx: LintContext, name: str, item: ResolvedDirective | ResolvedSection,
                     third_party: list[str]) -> tuple[str, str, str | None] | None:
    """(rule, message, severity or None) for directive `name`, or None when httpd knows it."""
    if name.startswith("\ufeff") or canonical(item.name) is not None:
        return None  # the BOM (AT506) and MPM directives (AT403) have their own rules
    spec = lookup(name)
    base = (f"Invalid command '{name}', perhaps misspelled or defined by a module not included "
            "in the server configuration")
    if spec is None:
        hint = suggest(name.lstrip("<"))
        extra = f"; did you mean {' or '.join(hint)}?" if hint else ""
        if third_party:
            # A loaded module we have no table for may define it: still reported, as a
            # warning naming the possible owners, never silently dropped.
            return ("AT501", base + extra + f" (unless {' or '.join(third_party)}, which apachetune has "
                    "no table for, defines it)", "warning")
        return "AT501", base + extra, None
    if spec.since and not at_least(Version.parse(ctx.eff.httpd_version), spec.since):
        # httpd's own words: a version before the directive's does not know it at all.
        return ("AT501", f"{base} ({spec.name} came with httpd {spec.since}; this is "
                f"httpd {ctx.eff.httpd_version})", None)
    if not any(ctx.module_loaded(m) for m in spec.modules):
        mods = " or ".join(spec.modules)
        return "AT502", f"{base} ({spec.name} is defined by {mods}, which is not loaded)", None
    return None


# Whether a directive of each kind (its cmd_how) has the wrong number of words: httpd's checks in
# invoke_cmd, given the word count, the words, and whether the first word is missing or empty.
_WRONG_COUNT: dict[str, Callable[[int, list[str], bool], bool]] = {
    "NO_ARGS": lambda n, words, empty_first: n != 0,
    "TAKE1": lambda n, words, empty_first: empty_first or n != 1,
    "TAKE2": lambda n, words, empty_first: n != 2 or "" in words,
    "TAKE12": lambda n, words, empty_first: empty_first or n > 2,
    "TAKE3": lambda n, words, empty_first: n != 3 or "" in words,
    "TAKE23": lambda n, words, empty_first: n < 2 or n > 3 or "" in words[:2],
    "TAKE123": lambda n, words, empty_first: empty_first or n > 3,
    "TAKE13": lambda n, words, empty_first: empty_first or n == 2 or n > 3,
    "ITERATE": lambda n, words, empty_first: empty_first,
    "ITERATE2": lambda n, words, empty_first: n < 2 or empty_first,
    "FLAG": lambda n, words, empty_first: empty_first or words[0].lower() not in ("on", "off"),
}


def argument_count(ctx: LintContext) -> Iterator[Finding]:
    checked: dict[str, DirectiveSpec | None] = {}  # lower-case name -> its spec, or None when not checked here
    for item, _parents in _items(ctx):
        if isinstance(item, ResolvedSection):
            continue
        lname = item.name.lower()
        if lname not in checked:
            spec = lookup(item.name)
            if spec is None or spec.kind not in _WRONG_COUNT \
                    or not any(ctx.module_loaded(m) for m in spec.modules) \
                    or (canonical(item.name) is not None and ctx.startup is not None):
                spec = None  # unknown, not loaded, or an MPM directive (the start-up model: AT116)
            checked[lname] = spec
        spec = checked[lname]
        if spec is None or spec.kind is None:
            continue
        words = item.args  # the arguments as httpd splits them (ap_getword_conf)
        n = len(words)
        if not _WRONG_COUNT[spec.kind](n, words, n == 0 or words[0] == ""):
            continue
        if spec.kind == "FLAG":
            text = f"{spec.name} must be On or Off"
        elif spec.kind == "NO_ARGS":
            text = f"{spec.name} takes no arguments"
        else:
            text = f"{spec.name} {ARG_WORDS[spec.kind]}" + (f", {spec.help}" if spec.help else "")
        yield ctx.finding("AT503", text, item)


def context(ctx: LintContext) -> Iterator[Finding]:
    specs: dict[str, DirectiveSpec | None] = {}
    for item, parents in _items(ctx):
        name = _name_of(item)
        if name not in specs:
            specs[name] = lookup(name)
        spec = specs[name]
        if spec is None or not parents:
            if spec is not None and not parents and spec.contexts and "server config" not in spec.contexts:
                yield ctx.finding("AT504", f"{spec.name} not allowed here", item)
            continue
        parent = parents[-1]
        in_dir = [p for p in parents if p.lname in _DIR_SECTIONS]
        if item.lname in _GLOBAL_ONLY or (canonical(item.name) is not None):
            if any(p.lname == "virtualhost" for p in parents) and not in_dir:
                yield ctx.finding("AT504", f"{spec.name} cannot occur within <VirtualHost> section", item)
                continue
        if in_dir and spec.contexts and "directory" not in spec.contexts:
            yield ctx.finding("AT504", f"{spec.name} not allowed in <{in_dir[-1].name}> context", item)
        elif not in_dir and parent.lname == "virtualhost" and spec.contexts and \
                "virtual host" not in spec.contexts:
            yield ctx.finding("AT504", f"{spec.name} not allowed here", item)


def mpm_count(ctx: LintContext) -> Iterator[Finding]:
    if ctx.snippet:
        return
    loaded = ctx.eff.mpms_loaded
    if not loaded and ctx.eff.mpm is None:  # (an MPM given with --mpm is compiled in)
        yield ctx.finding("AT505", "No MPM loaded. Load exactly one of mod_mpm_event, mod_mpm_worker, "
                          "mod_mpm_prefork (or, if this httpd has its MPM compiled in, as `httpd -l` "
                          "shows, name it with --mpm).", Location(ctx.eff.main_file, 1, 1))
    elif len(loaded) > 1:
        positions = [ctx.eff.module_positions.get(f"mpm_{m}_module") for m in loaded]
        at = positions[1] or Location(ctx.eff.main_file, 1, 1)
        yield ctx.finding("AT505", f"More than one MPM loaded. ({', '.join(loaded)})",
                          Location(at.file, at.line, at.column),
                          [Location(p.file, p.line, p.column) for p in positions if p])


def byte_order_mark(ctx: LintContext) -> Iterator[Finding]:
    for path, cf in ctx.eff.files.items():
        if cf.text.startswith("\ufeff"):
            first = cf.text[1:].split("\n", 1)[0].strip().split(" ", 1)[0]
            yield ctx.finding(
                "AT506",
                f"The file starts with a UTF-8 byte-order mark, which httpd does not strip: it reads "
                f"the first line as Invalid command '\\xef\\xbb\\xbf{first}'.",
                Location(path, 1, 1), (), Fix({}, "remove the byte-order mark", strip_bom=True))


_ATOI_DIRECTIVES = {"maxkeepaliverequests"}


def not_a_number(ctx: LintContext) -> Iterator[Finding]:
    for item, _parents in _items(ctx):
        if isinstance(item, ResolvedSection):
            continue
        canon = canonical(item.name)
        if canon is None and item.lname not in _ATOI_DIRECTIVES:
            continue
        if canon == "AsyncRequestWorkerFactor" or not item.args:
            continue
        arg = item.args[0]
        if not is_plain_number(arg):
            yield ctx.finding(
                "AT507",
                f"{item.name} {arg!r} is not a number: httpd reads it as {atoi(arg)}.",
                item, (), Fix({item.name: str(atoi(arg))}) if atoi(arg) > 0 else None)


RULES = {"AT501": unknown_or_not_loaded, "AT502": unknown_or_not_loaded, "AT503": argument_count,
         "AT504": context, "AT505": mpm_count, "AT506": byte_order_mark, "AT507": not_a_number}
