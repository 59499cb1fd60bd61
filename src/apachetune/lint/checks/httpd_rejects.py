"""AT501-AT507: what `httpd -t` would reject (or silently misread), found without httpd.

Each message is httpd's own wording (server/config.c invoke_cmd, server/core.c
ap_check_cmd_context), so the finding reads like the error httpd would print.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cache

from apachetune.config.conditions import Version, at_least
from apachetune.config.directives import ARG_WORDS, DirectiveSpec, lookup, suggest
from apachetune.config.effective import ResolvedDirective, ResolvedSection
from apachetune.datafiles import load_yaml
from apachetune.lint.checks import core_readers
from apachetune.lint.context import LintContext
from apachetune.lint.finding import Finding, Fix, Location
from apachetune.mpm.directives import ALL_MPM_DIRECTIVES, MPM_DIRECTIVES, canonical
from apachetune.mpm.numbers import atoi, is_plain_number
from apachetune.paths import rules_dir

_DIR_SECTIONS = {"directory", "directorymatch", "location", "locationmatch", "files", "filesmatch",
                 "if", "elseif", "else", "proxy", "proxymatch", "limit", "limitexcept"}
# Directives whose handlers refuse anything but the main server (GLOBAL_ONLY) that the generated
# table (rules/registry/cmd_context.yaml) leaves out: the MPMs' (whatever MPM is loaded) and those
# whose check comes after something the generator does not follow (listen.c's, mod_ssl's two).
# TraceEnable has no such check (RSRC_CONF: a virtual host may set it), and DefaultRuntimeDir's
# runs while the file is read (EXEC_ON_READ), before any <VirtualHost> is a server: both pass in
# one. tests/test_cmd_context_oracle.py puts every other directive in a virtual host to keep this so.
_GLOBAL_ONLY = frozenset(n.lower() for names in MPM_DIRECTIVES.values() for n in names) | {
    "listen", "gracefulshutdowntimeout", "listencoresbucketsratio", "listentcpdeferaccept", "receivebuffersize",
    "sendbuffersize", "sslcryptodevice", "sslvhostsnipolicy"}


# ap_check_cmd_context's flags (include/http_config.h) and the sections each one refuses, in the
# order it looks for them (find_parent: the nearest enclosing section of that name).
_FLAG_BITS = {"NOT_IN_VIRTUALHOST": 0x01, "NOT_IN_LIMIT": 0x02, "NOT_IN_DIRECTORY": 0x04, "NOT_IN_LOCATION": 0x08,
              "NOT_IN_FILES": 0x10, "NOT_IN_HTACCESS": 0x20, "NOT_IN_PROXY": 0x40}
_DIR_LOC_FILE = 0x04 | 0x08 | 0x10
_DIR_CONTEXT = 0x02 | _DIR_LOC_FILE | 0x40
_FOUND_IN = ((0x04, ("directory", "directorymatch")), (0x08, ("location", "locationmatch")),
             (0x10, ("files", "filesmatch", "if", "elseif", "else")), (0x40, ("proxy", "proxymatch")))
# sections that set cmd->path (a per-directory context)
_PATH_SECTIONS = _DIR_SECTIONS - {"limit", "limitexcept"}


@cache
def _forbidden() -> dict[str, int]:
    """rules/registry/cmd_context.yaml (tools/gen_cmd_context.py): lower-case name -> flags."""
    (table,) = load_yaml([rules_dir() / "registry" / "cmd_context.yaml"], "cmd_context")
    out = {}
    for name, flags in table.items():
        value = 0
        for flag in flags:
            value |= _FLAG_BITS[flag]
        out[name.lower()] = value
    return out


def cmd_context_error(name: str, forbidden: int, parents: tuple[ResolvedSection, ...]) -> str | None:
    """ap_check_cmd_context's verdict on a line of `name` (as registered) inside `parents`."""
    gt = ">" if name.startswith("<") and not name.endswith(">") else ""
    lnames = [p.lname for p in parents]
    if forbidden & 0x01 and "virtualhost" in lnames:
        return f"{name}{gt} cannot occur within <VirtualHost> section"
    if forbidden & _DIR_CONTEXT and ("limit" in lnames or "limitexcept" in lnames):
        return f"{name}{gt} cannot occur within <Limit> or <LimitExcept> section"
    if forbidden & _DIR_LOC_FILE == _DIR_LOC_FILE and any(n in _PATH_SECTIONS for n in lnames):
        return f"{name}{gt} cannot occur within directory context"
    for bit, sections in _FOUND_IN:
        if forbidden & bit:
            for section in sections:
                found = next((p for p in reversed(parents) if p.lname == section), None)
                if found is not None:
                    return f"{name}{gt} cannot occur within <{found.name}> section"
    return None


def spec_of(ctx: LintContext, name: str) -> DirectiveSpec | None:
    """The directive `name` as httpd would find it: in the registry, or else (or when its own
    modules are not loaded) in a loaded third-party module's table."""
    spec = lookup(name)
    if spec is not None and (spec.modules[0] == "core_module" or any(ctx.module_loaded(m) for m in spec.modules)):
        return spec
    return ctx.third_party().lookup(name) or spec


def _name_of(item: ResolvedDirective | ResolvedSection) -> str:
    return "<" + item.name if isinstance(item, ResolvedSection) else item.name


def unknown_or_not_loaded(ctx: LintContext) -> Iterator[Finding]:
    # loaded modules httpd does not ship whose table was not read: they may define any name
    third_party = list(ctx.third_party().unread)
    verdicts: dict[str, tuple[str, str, str | None] | None] = {}  # one verdict per name, not per line
    for items in ctx.by_name().values():
        # Whether httpd knows a name does not depend on its case: a name known and loaded as
        # the group's first item spells it (directive or section) is known in every line.
        if all(_unknown_verdict(ctx, _name_of(first), first, third_party) is None
               for first in _first_of_each_kind(items)):
            continue
        for item in items:
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


def _first_of_each_kind(items: list[ResolvedDirective | ResolvedSection]) -> list[ResolvedDirective | ResolvedSection]:
    """The first directive and the first section among `items` (one name: "Foo" and "<Foo")."""
    directive = next((i for i in items if isinstance(i, ResolvedDirective)), None)
    section = next((i for i in items if isinstance(i, ResolvedSection)), None)
    return [i for i in (directive, section) if i is not None]


def _unknown_verdict(ctx: LintContext, name: str, item: ResolvedDirective | ResolvedSection,
                     third_party: list[str]) -> tuple[str, str, str | None] | None:
    """(rule, message, severity or None) for directive `name`, or None when httpd knows it."""
    if name.startswith("\ufeff") or canonical(item.name) is not None:
        return None  # the BOM (AT506) and MPM directives (AT403) have their own rules
    spec = spec_of(ctx, name)
    base = (f"Invalid command '{name}', perhaps misspelled or defined by a module not included "
            "in the server configuration")
    if spec is None:
        hint = suggest(name.lstrip("<"), also=ctx.third_party().specs.values())
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


def _kind(kind: str | None) -> str | None:
    """The kind httpd reads a directive with. AP_INIT_NO_ARGS declares RAW_ARGS in
    include/http_config.h (both definitions of the macro), so "takes no arguments" is never
    said: AuthnCacheEnable x and SSLRequireSSL x start 2.4.37, 2.4.52 and 2.4.71 alike."""
    return "RAW_ARGS" if kind == "NO_ARGS" else kind


def argument_count(ctx: LintContext) -> Iterator[Finding]:
    for lname, items in ctx.by_name().items():  # one spec a name
        if isinstance(items[0], ResolvedSection) and not any(isinstance(i, ResolvedDirective) for i in items):
            continue  # sections only: their arguments are core_readers.section_arguments' matter
        spec = spec_of(ctx, lname)
        kind = _kind(spec.kind) if spec is not None else None
        if spec is None or kind is None or kind not in _WRONG_COUNT \
                or not any(ctx.module_loaded(m) for m in spec.modules) \
                or (canonical(lname) is not None and ctx.startup is not None):
            continue  # unknown, not loaded, or an MPM directive (the start-up model: AT116)
        for item in items:
            if isinstance(item, ResolvedDirective) and (f := _count_finding(ctx, spec, kind, item)) is not None:
                yield f
    yield from core_readers.section_arguments(ctx)


def _count_finding(ctx: LintContext, spec: DirectiveSpec, kind: str, item: ResolvedDirective) -> Finding | None:
    words = item.args  # the arguments as httpd splits them (ap_getword_conf)
    n = len(words)
    if not _WRONG_COUNT[kind](n, words, n == 0 or words[0] == ""):
        return None
    if kind == "FLAG":
        text = f"{spec.name} must be On or Off"
    elif kind == "NO_ARGS":
        text = f"{spec.name} takes no arguments"
    else:
        text = f"{spec.name} {ARG_WORDS[kind]}" + (f", {spec.help}" if spec.help else "")
    return ctx.finding("AT503", text, item)


def context(ctx: LintContext) -> Iterator[Finding]:
    # parents -> _scope(parents): keyed by the tuple itself (shared by a section's lines, hashed
    # by identity of its few members), not by a new int per section; values interned (a few)
    scopes: dict[tuple[ResolvedSection, ...], tuple[str | None, bool, bool]] = {}
    distinct: dict[tuple[str | None, bool, bool], tuple[str | None, bool, bool]] = {}
    forbidden_table = _forbidden()
    for lname, items in ctx.by_name().items():  # a directive's allowed contexts: once a name
        global_only = lname in _GLOBAL_ONLY or canonical(lname) is not None
        said_as = {isinstance(item, ResolvedSection) for item in items}  # directive, section or both
        for is_section in (False, True):
            if is_section not in said_as:
                continue  # no line of this kind: nothing to judge (and no name to look up)
            spec = spec_of(ctx, "<" + lname if is_section else lname)
            if spec is None:
                continue
            allowed = spec.contexts
            top_bad = bool(allowed) and "server config" not in allowed
            dir_bad = bool(allowed) and "directory" not in allowed
            vhost_bad = bool(allowed) and "virtual host" not in allowed
            forbidden = forbidden_table.get(("<" if is_section else "") + lname, 0)
            # a handler runs only where its module is loaded (else the line is AT502's, or AT403's
            # for another MPM's directive); with no MPM loaded at all (a compiled-in one, a lone
            # MPM snippet) an MPM directive is taken as the running MPM's
            handled = any(ctx.module_loaded(m) for m in spec.modules) or (
                canonical(lname) is not None and not ctx.eff.mpms_loaded)
            if not (top_bad or dir_bad or vhost_bad or global_only or forbidden):
                continue  # allowed everywhere: no line of this name to look at
            for item in items:
                if isinstance(item, ResolvedSection) is not is_section:
                    continue
                parents = item.parents
                if not parents:
                    if top_bad:
                        yield ctx.finding("AT504", f"{spec.name} not allowed here", item)
                    continue
                scope = scopes.get(parents)
                if scope is None:
                    computed = _scope(parents)
                    scope = scopes[parents] = distinct.setdefault(computed, computed)
                in_dir, in_vhost, parent_is_vhost = scope
                if global_only and in_vhost and in_dir is None and handled:
                    gt = ">" if is_section else ""  # ap_check_cmd_context closes a section's name
                    yield ctx.finding("AT504", f"{spec.name}{gt} cannot occur within <VirtualHost> section", item)
                elif in_dir is not None and dir_bad:
                    yield ctx.finding("AT504", f"{spec.name} not allowed in <{in_dir}> context", item)
                elif in_dir is None and parent_is_vhost and vhost_bad:
                    yield ctx.finding("AT504", f"{spec.name} not allowed here", item)
                elif forbidden and handled and (refused := cmd_context_error(spec.name, forbidden, parents)):
                    yield ctx.finding("AT504", refused, item)  # the handler's own check


def _scope(parents: tuple[ResolvedSection, ...]) -> tuple[str | None, bool, bool]:
    """(the innermost per-directory section's name or None, inside a <VirtualHost>, directly
    inside one): all httpd's context check needs of a line's enclosing sections. A section's
    lines share one parents tuple, so this runs once a section."""
    in_dir = [p for p in parents if p.lname in _DIR_SECTIONS]
    return (in_dir[-1].name if in_dir else None, any(p.lname == "virtualhost" for p in parents),
            parents[-1].lname == "virtualhost")


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
    for lname in sorted(ALL_MPM_DIRECTIVES | _ATOI_DIRECTIVES):
        if canonical(lname) == "AsyncRequestWorkerFactor":
            continue
        for item in ctx.items_named(lname):
            if isinstance(item, ResolvedDirective) and item.args:
                yield from _number_finding(ctx, item)


def _number_finding(ctx: LintContext, item: ResolvedDirective) -> Iterator[Finding]:
    arg = item.args[0]
    if not is_plain_number(arg):
        yield ctx.finding(
            "AT507",
            f"{item.name} {arg!r} is not a number: httpd reads it as {atoi(arg)}.",
            item, (), Fix({item.name: str(atoi(arg))}) if atoi(arg) > 0 else None)


RULES = {"AT501": unknown_or_not_loaded, "AT502": unknown_or_not_loaded, "AT503": argument_count,
         "AT504": context, "AT505": mpm_count, "AT506": byte_order_mark, "AT507": not_a_number}
