"""Expressions httpd refuses at start-up (AT510, in httpd's words): every place a directive hands
its argument to ap_expr_parse (config/ap_expr.py), with the words that directive wraps the
parser's message in. Boolean expressions: <If>/<ElseIf>, `Require expr`, SetEnvIfExpr,
FilterProvider, and the expr= clauses of Header, RequestHeader, CustomLog and RewriteCond
(module_readers.py judges those with `expression_error`). String expressions (text with %{VAR}
and $1 in it): ErrorDocument's message or path, SetHandler, AuthName, AuthType, the Require lines
of user, group, host and the other providers that take one, and the one-argument Alias and
Redirect of a <Location>.

With --from-dump nothing here is judged: a dump is of a configuration httpd already accepted,
and which modules answer for SSL_* variables is not in it.

Facts: server/core.c (ifsection, set_error_document, set_sethandler), modules/aaa/
mod_authz_core.c add_authz_provider and expr_parse_config, the *_parse_config of mod_authz_user,
_groupfile, _dbm, _host, _dbd and mod_authnz_ldap, modules/aaa/mod_authn_core.c,
modules/metadata/mod_setenvif.c add_setenvifexpr, modules/filters/mod_filter.c filter_provider
(httpd 2.4.x)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from apachetune.config.ap_expr import Lookups, expr_error
from apachetune.config.effective import ResolvedDirective, ResolvedSection
from apachetune.config.pcre import regex_surely_invalid
from apachetune.config.words import is_url, next_word
from apachetune.lint.checks.core_readers import refusal, status_supported
from apachetune.lint.checks.filters import unknown_provider
from apachetune.lint.context import LintContext
from apachetune.lint.finding import Finding
from apachetune.mpm.numbers import atoi

# The Require providers whose line is a string expression, by the module that registers them.
_STRING_PROVIDERS = {
    "user": "authz_user_module", "group": "authz_groupfile_module", "dbm-group": "authz_dbm_module",
    "host": "authz_host_module", "forward-dns": "authz_host_module", "dbd-group": "authz_dbd_module",
    "ldap-user": "authnz_ldap_module", "ldap-group": "authnz_ldap_module", "ldap-dn": "authnz_ldap_module",
    "ldap-attribute": "authnz_ldap_module", "ldap-filter": "authnz_ldap_module",
}


def lookups(ctx: LintContext) -> Lookups:
    """Who answers the parser's lookups in this configuration."""
    return ctx.memo("expr-lookups", lambda: Lookups(ssl=ctx.module_loaded("ssl_module"),
                                                    hcheck=ctx.module_loaded("proxy_hcheck_module"),
                                                    version=ctx.eff.httpd_version,
                                                    others=ctx.third_party_may_register("expression functions")))


def expression_error(ctx: LintContext, text: str, string_result: bool = False, restricted: bool = False) -> str | None:
    """ap_expr_parse's message for `text` in this configuration, or None (`restricted`:
    AP_EXPR_FLAG_RESTRICTED)."""
    found = lookups(ctx)
    return expr_error(text, string_result=string_result, regex_invalid=regex_surely_invalid,
                      lookups=replace(found, restricted=True) if restricted else found)


def refused(ctx: LintContext) -> Iterator[Finding]:
    if ctx.from_dump:
        return
    for check in (_conditions, _error_documents, _handlers, _auth_names, _requires, _setenvif_exprs,
                  _filter_providers):
        yield from check(ctx)


def _conditions(ctx: LintContext) -> Iterator[Finding]:
    """<If> and <ElseIf>: the first word of the section's argument is the condition."""
    for lname in ("if", "elseif"):
        for item in ctx.items_named(lname):
            if isinstance(item, ResolvedSection) and item.args and (err := expression_error(ctx, item.args[0])):
                yield refusal(ctx, f"Cannot parse condition clause: {err}", item)


def _error_documents(ctx: LintContext) -> Iterator[Finding]:
    """set_error_document: a message (text with a space, or not a path or URL) is parsed with a
    '"' in front; 'default' and a full URL for 401 are not parsed."""
    for item in ctx.items_named("errordocument"):
        if not isinstance(item, ResolvedDirective) or len(item.args) != 2 \
                or not status_supported(item.args[0], ctx.eff.httpd_version):
            continue
        code, msg = item.args
        remote = " " not in msg and not msg.startswith("/") and is_url(msg)
        if msg.lower() == "default" or (remote and atoi(code) == 401):
            continue
        message = " " in msg or not (msg.startswith("/") or remote)
        if err := expression_error(ctx, f'"{msg}' if message else msg, string_result=True):
            yield refusal(ctx, f"Cannot parse expression in ErrorDocument: {err}", item)


def _handlers(ctx: LintContext) -> Iterator[Finding]:
    for item in ctx.items_named("sethandler"):
        if isinstance(item, ResolvedDirective) and len(item.args) == 1 \
                and (err := expression_error(ctx, item.args[0], string_result=True)):
            yield refusal(ctx, f"Can't parse expression : {err}", item)


def _auth_names(ctx: LintContext) -> Iterator[Finding]:
    if not ctx.module_loaded("authn_core_module"):
        return
    for lname, name in (("authname", "AuthName"), ("authtype", "AuthType")):
        for item in ctx.items_named(lname):
            if isinstance(item, ResolvedDirective) and len(item.args) == 1 \
                    and (err := expression_error(ctx, item.args[0], string_result=True)):
                yield refusal(ctx, f"Cannot parse expression '{item.args[0]}' in {name}: {err}", item)


def require_line(text: str) -> tuple[bool, str, str]:
    """add_authz_provider's reading of Require's text: (negated, provider, the rest as written)."""
    provider, pos = next_word(text)
    negated = provider.lower() == "not"
    if negated:
        provider, pos = next_word(text, pos)
    return negated, provider, text[pos:]


def _requires(ctx: LintContext) -> Iterator[Finding]:
    """`Require expr` (its line without surrounding double quotes) and the providers whose line
    is a string expression; a provider no loaded module registers is authz_readers' finding."""
    if not ctx.module_loaded("authz_core_module"):
        return
    for item in ctx.items_named("require"):
        if not isinstance(item, ResolvedDirective):
            continue
        _, provider, line = require_line(item.args_text)
        if provider == "expr":
            if len(line) > 1 and line[0] == '"' and line[-1] == '"':
                line = line[1:-1]
            err = expression_error(ctx, line)
        elif provider in _STRING_PROVIDERS and ctx.module_loaded(_STRING_PROVIDERS[provider]):
            err = expression_error(ctx, line, string_result=True)
        else:
            continue
        if err:
            yield refusal(ctx, f"Cannot parse expression in require line: {err}", item)


def _setenvif_exprs(ctx: LintContext) -> Iterator[Finding]:
    if not ctx.module_loaded("setenvif_module"):
        return
    for item in ctx.items_named("setenvifexpr"):
        if isinstance(item, ResolvedDirective) and item.args and item.args[0] \
                and (err := expression_error(ctx, item.args[0])):
            yield refusal(ctx, f'Could not parse expression "{item.args[0]}": {err}', item)


def _filter_providers(ctx: LintContext) -> Iterator[Finding]:
    """FilterProvider NAME PROVIDER EXPR: the provider must be a registered output filter, then
    the expression (the third word) is parsed."""
    if not ctx.module_loaded("filter_module"):
        return
    for item in ctx.items_named("filterprovider"):
        if not isinstance(item, ResolvedDirective) or len(item.args) != 3:
            continue
        if message := unknown_provider(ctx, [item.args[1]]):
            yield refusal(ctx, message, item)
        elif err := expression_error(ctx, item.args[2]):
            yield refusal(ctx, f"Error parsing FilterProvider expression:{err}", item)
