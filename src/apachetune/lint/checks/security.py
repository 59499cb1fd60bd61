"""AT7xx: exposure an operator expects a linter to flag (the `security` group).

Each rule cites httpd's documentation and the matching recommendation of the CIS Apache HTTP
Server 2.4 Benchmark. Rules about a directive's *absence* (ServerTokens, TraceEnable, ServerName)
only run on a whole configuration, never on a lone snippet (`--mpm`).
"""

from __future__ import annotations

from collections.abc import Iterator

from apachetune.config.effective import ResolvedDirective, ResolvedSection
from apachetune.lint.checks.scopes import (
    child_directives,
    directives_named,
    directory_sections,
    norm_dir,
    option_words,
    server_and_vhost,
)
from apachetune.lint.context import LintContext
from apachetune.lint.finding import Finding, Fix, Location
from apachetune.mpm.numbers import keepalive_seconds

STATUS_HANDLERS = {"server-status": "status_module", "server-info": "info_module"}
SAFE_TOKENS = ("prod", "productonly")


def _main(ctx: LintContext) -> Location:
    return Location(ctx.eff.main_file, 1, 1)


def _limits_access(section: ResolvedSection) -> bool:
    """A Require (other than `all granted`) or an old-style Allow/Deny anywhere in the section."""
    stack: list[ResolvedDirective | ResolvedSection] = list(section.children)
    while stack:
        item = stack.pop()
        if isinstance(item, ResolvedSection):
            stack.extend(item.children)
            continue
        if item.lname == "require":
            words = [w.lower() for w in item.args]
            if words[:2] != ["all", "granted"]:
                return True
        elif item.lname in ("allow", "deny", "authtype"):
            return True
    return False


def status_pages_open(ctx: LintContext) -> Iterator[Finding]:
    for item in [*ctx.items_named("location"), *ctx.items_named("locationmatch")]:
        if not isinstance(item, ResolvedSection):
            continue
        for d in child_directives(item, "SetHandler"):
            handler = d.args[0].lower() if d.args else ""
            module = STATUS_HANDLERS.get(handler)
            if module and module in ctx.eff.modules and not _limits_access(item):
                yield ctx.finding(
                    "AT701", f"<{item.name} {item.args_text.rstrip('>')}> serves {handler} to anyone: "
                    "it shows client addresses, requested URLs and the server's load (info: the whole "
                    "configuration). Limit it, e.g. `Require local` or `Require ip 10.0.0.0/8`.", d)


def server_tokens(ctx: LintContext) -> Iterator[Finding]:
    if ctx.snippet:
        return
    d = ctx.eff.get("ServerTokens")
    value = d.args[0] if d is not None and d.args else "Full"
    if value.lower() not in SAFE_TOKENS:
        where: Location | ResolvedDirective = d if d is not None else _main(ctx)
        said = f"ServerTokens {value}" if d is not None else "ServerTokens is not set (httpd's default is Full)"
        yield ctx.finding(
            "AT702", f"{said}: every response's Server header names the httpd version"
            f"{' and the OS' if value.lower() in ('full', 'os') else ''}, which helps an attacker "
            "pick exploits.", where, (), Fix({"ServerTokens": "Prod"}))


def server_signature(ctx: LintContext) -> Iterator[Finding]:
    for d, _parents in directives_named(ctx, "ServerSignature"):
        if d.args and d.args[0].lower() in ("on", "email"):
            yield ctx.finding(
                "AT703", f"ServerSignature {d.args[0]}: error pages and listings end with the server's "
                "version and name.", d, (), Fix({"ServerSignature": "Off"}))


def trace_enable(ctx: LintContext) -> Iterator[Finding]:
    found = server_and_vhost(ctx, "TraceEnable")
    if not found and not ctx.snippet:
        yield ctx.finding(
            "AT704", "TraceEnable is not set: httpd answers TRACE by default, echoing the request "
            "(cookies and credentials included) back to the client.", _main(ctx), (),
            Fix({"TraceEnable": "Off"}))
    for d in found:
        if d.args and d.args[0].lower() in ("on", "extended"):
            yield ctx.finding(
                "AT704", f"TraceEnable {d.args[0]}: httpd echoes TRACE requests (cookies and credentials "
                "included) back to the client.", d, (), Fix({"TraceEnable": "Off"}))


def _ancestors(path: str) -> list[str]:
    """`path`, every directory above it, and "/"."""
    out = ["/", path]
    cut = path.rfind("/")
    while cut > 0:
        out.append(path[:cut])
        cut = path.rfind("/", 0, cut)
    return out


def _options_at(sections: list[ResolvedSection]) -> tuple[set[str], ResolvedDirective | None]:
    """Merge Options from the <Directory> sections above or at a path, given shortest path first
    (as httpd merges per-directory configuration). Returns the options in force and the directive
    that last turned Indexes on."""
    opts = {"followsymlinks"}  # httpd 2.4's default
    indexes_by: ResolvedDirective | None = None
    for section in sections:
        for d in child_directives(section, "Options"):
            words = option_words(d)
            if any(sign == "" for sign, _ in words):
                opts = set()
            for sign, name in words:
                names = {"indexes", "includes", "followsymlinks", "execcgi"} if name == "all" else {name}
                if sign == "-":
                    opts -= names
                else:
                    opts |= names
                    if "indexes" in names:
                        indexes_by = d
            if "indexes" not in opts:
                indexes_by = None
    return opts, indexes_by


def indexes_at_docroot(ctx: LintContext) -> Iterator[Finding]:
    if not any(sign != "-" and name in ("indexes", "all")
               for d in ctx.items_named("options") if isinstance(d, ResolvedDirective)
               for sign, name in option_words(d)):
        return  # nothing turns Indexes on (httpd 2.4's default is off): no root to look at
    # <Directory> sections by normalised path, in document order (what httpd merges, per path)
    by_path: dict[str, list[ResolvedSection]] = {}
    for section, path in directory_sections(ctx):
        by_path.setdefault(path, []).append(section)
    reported: set[int] = set()
    for root in ctx.items_named("documentroot"):
        parents = root.parents
        vhost = parents[0] if parents and parents[0].lname == "virtualhost" else None
        if not isinstance(root, ResolvedDirective) or not root.args \
                or not (not parents or (len(parents) == 1 and vhost is not None)):
            continue
        path = norm_dir(root.args[0])
        # Shortest path first (a root's ancestors all differ in depth), each path's sections in
        # document order; a <Directory> in another virtual host does not apply.
        applying = [section for p in sorted(set(_ancestors(path)), key=_depth) for section in by_path.get(p, ())
                    if _vhost_of(section) in (None, vhost)]
        opts, by = _options_at(applying)
        if "indexes" in opts and by is not None and id(by) not in reported:
            reported.add(id(by))
            yield ctx.finding(
                "AT705", f"Options Indexes applies to the document root {path}: a directory without "
                "an index file is listed to anyone (backups, dumps, editor files).", by, [root])


def _depth(path: str) -> int:
    return 0 if path == "/" else path.count("/") + 1


def _vhost_of(section: ResolvedSection) -> ResolvedSection | None:
    parents = section.parents
    return parents[0] if parents and parents[0].lname == "virtualhost" else None


def global_server_name(ctx: LintContext) -> Iterator[Finding]:
    if ctx.snippet or ctx.eff.get("ServerName") is not None:
        return
    yield ctx.finding(
        "AT706", "No global ServerName: httpd prints AH00558 (\"Could not reliably determine the "
        "server's fully qualified domain name\") at every start and builds self-referential URLs "
        "from a guessed name.", _main(ctx))


def keepalive_timeout_exposure(ctx: LintContext) -> Iterator[Finding]:
    limit = ctx.option("AT707", "max_seconds")  # idle connections an attacker can hold cheaply
    for d in server_and_vhost(ctx, "KeepAliveTimeout"):
        if not d.args:
            continue
        seconds = keepalive_seconds(d.args[0])
        if seconds > limit:
            yield ctx.finding(
                "AT707", f"KeepAliveTimeout {d.args[0]}: any client can hold a connection open for "
                f"{seconds:g} s without sending anything; a few hundred idle connections exhaust the "
                "server.", d, (), Fix({"KeepAliveTimeout": "5"}))


RULES = {"AT701": status_pages_open, "AT702": server_tokens, "AT703": server_signature,
         "AT704": trace_enable, "AT705": indexes_at_docroot, "AT706": global_server_name,
         "AT707": keepalive_timeout_exposure}
