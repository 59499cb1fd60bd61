"""What mod_authz_core and mod_authz_host refuse in Require (AT510, in httpd's words): a
provider no loaded module registers, 'Require all' other than granted or denied, a negated
Require where it has no effect, and an address APR's subnet parser refuses.

Facts: modules/aaa/mod_authz_core.c add_authz_provider and all_parse_config;
modules/aaa/mod_authz_host.c ip_parse_config (httpd 2.4.x)."""

from __future__ import annotations

from collections.abc import Iterator

from apachetune.config.apr import ip_subnet_error
from apachetune.config.effective import ResolvedDirective
from apachetune.config.words import join_words, take_argv
from apachetune.lint.checks.core_readers import refusal
from apachetune.lint.context import LintContext
from apachetune.lint.finding import Finding, Fix

# The authorization providers each shipped module registers (ap_register_auth_provider in
# modules/aaa/*.c and modules/ssl/mod_ssl.c); names are compared case-sensitively.
AUTHZ_PROVIDERS = {
    "authz_core_module": ("env", "all", "method", "expr"),
    "authz_user_module": ("user", "valid-user"),
    "authz_groupfile_module": ("group", "file-group"),
    "authz_host_module": ("ip", "host", "forward-dns", "local"),
    "authz_owner_module": ("file-owner",),
    "authz_dbm_module": ("dbm-group", "dbm-file-group"),
    "authz_dbd_module": ("dbd-group", "dbd-login", "dbd-logout"),
    "ssl_module": ("ssl", "ssl-verify-client"),
}
# Directives that register a provider under a name the configuration gives (its first word,
# or the second for the FastCGI one).
_NAMED_PROVIDERS = {"authzprovideralias": 1, "luaauthzprovider": 0, "authnzfcgidefineprovider": 1}


def _providers(ctx: LintContext) -> set[str] | None:
    """The provider names this configuration registers, or None when a loaded module apachetune
    has no table for may register more."""
    if ctx.third_party_may_register("providers"):
        return None
    names = {n for module, provided in AUTHZ_PROVIDERS.items() if ctx.module_loaded(module) for n in provided}
    for lname, index in _NAMED_PROVIDERS.items():
        for item in ctx.items_named(lname):
            if len(item.args) > index and not (lname == "authnzfcgidefineprovider" and item.args[0].lower() == "authn"):
                names.add(item.args[index])
    return names


def refused(ctx: LintContext) -> Iterator[Finding]:
    """add_authz_provider: a provider registered by a loaded module, 'Require all' granted or
    denied, and no negated Require where it has no effect (the default or <RequireAny>)."""
    items = [i for i in ctx.items_named("require") if isinstance(i, ResolvedDirective)]
    if not items or not ctx.module_loaded("authz_core_module"):
        return  # without mod_authz_core, Require itself is unknown (AT502)
    known = _providers(ctx)
    methods = _methods(ctx)
    ldap = ctx.module_loaded("authnz_ldap_module")
    fcgi = _fcgi_authz_providers(ctx)
    for item in items:
        words = list(item.args)
        negated = bool(words) and words[0].lower() == "not"
        if negated:
            words = words[1:]
        provider = words[0] if words else ""
        if known is not None and provider not in known and not (ldap and provider.startswith("ldap-")):
            fix = None
            if provider.lower() in known:  # Require All granted: the names are case-sensitive
                fixed = [*item.args[:len(item.args) - len(words)], provider.lower(), *words[1:]]
                fix = Fix({"Require": join_words(fixed)}, "the provider's name in lower case")
            yield refusal(ctx, f"Unknown Authz provider: {provider}", item, fix)
            continue
        if provider == "all" and not (len(words) == 2 and words[1].lower() in ("granted", "denied")):
            yield refusal(ctx, "Argument for 'Require all' must be 'granted' or 'denied'", item)
            continue
        if provider == "method" and (bad := next((w for w in words[1:] if w not in methods), None)):
            yield refusal(ctx, f"Invalid Method '{bad}'", item)
            continue
        if provider == "ip" and (message := require_ip_error(words[1:])):
            yield refusal(ctx, message, item)
            continue
        if provider in fcgi and len(words) > 1:
            yield refusal(ctx, "mod_authnz_fcgi doesn't support restrictions on providers (i.e., multiple require "
                               "args)", item)
            continue
        if negated:
            logic = next((p.lname for p in reversed(item.parents)
                          if p.lname in ("requireall", "requireany", "requirenone")), "requireany")
            if logic != "requireall":
                shown = "<RequireNone>" if logic == "requirenone" else "<RequireAny>"
                yield refusal(ctx, f"negative {item.name} directive has no effect in {shown} directive", item)



# The methods httpd knows from the start (modules/http/http_protocol.c), by their exact names.
BUILTIN_METHODS = frozenset({
    "GET", "HEAD", "PUT", "POST", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "PROPFIND", "PROPPATCH", "MKCOL",
    "COPY", "MOVE", "LOCK", "UNLOCK", "VERSION-CONTROL", "CHECKOUT", "UNCHECKOUT", "CHECKIN", "UPDATE", "LABEL",
    "REPORT", "MKWORKSPACE", "MKACTIVITY", "BASELINE-CONTROL", "MERGE"})


def _fcgi_authz_providers(ctx: LintContext) -> set[str]:
    """The authz providers AuthnzFcgiDefineProvider registers (type authz or authnz), whose
    Require line takes no more words (fcgi_authz_parse); a shipped module's own name is left
    to that module."""
    if not ctx.module_loaded("authnz_fcgi_module"):
        return set()
    builtin = {n for names in AUTHZ_PROVIDERS.values() for n in names}
    return {item.args[1] for item in ctx.items_named("authnzfcgidefineprovider")
            if len(item.args) > 1 and item.args[0].lower() in ("authz", "authnz") and item.args[1] not in builtin}


def _methods(ctx: LintContext) -> frozenset[str]:
    """Built-in methods, and those the configuration registers: each method a <Limit> or
    <LimitExcept> names (ap_limit_section registers it) and RegisterHttpMethod's (wherever they
    are: httpd needs them before the Require, so this errs towards silence)."""
    named = {w for lname in ("limit", "limitexcept", "registerhttpmethod") for item in ctx.items_named(lname)
             for w in item.args}
    return BUILTIN_METHODS | named


def require_ip_error(words: list[str]) -> str | None:
    """mod_authz_host's ip_parse_config."""
    if not words or not words[0]:
        return "'require ip' requires an argument"
    for word in words:
        if not word:
            break
        ip, slash, mask = word.partition("/")
        err = ip_subnet_error(ip, mask if slash else None)
        if err == "":
            return f"ip address '{word}' appears to be invalid"
        if err:
            return f"ip address '{word}' appears to be invalid: {err}"
    return None


# The authentication providers each shipped module registers, and whether each can answer Digest
# (its get_realm_hash is set: mod_authn_anon's and mod_authnz_ldap's are NULL).
_AUTHN_PROVIDERS = {"authn_file_module": ("file", True), "authn_dbm_module": ("dbm", True),
                    "authn_dbd_module": ("dbd", True), "authn_socache_module": ("socache", True),
                    "authn_anon_module": ("anon", False), "authnz_ldap_module": ("ldap", False)}
_AUTHN_DIRECTIVES = {"authbasicprovider": ("auth_basic_module", "Basic"),
                     "authdigestprovider": ("auth_digest_module", "Digest"),
                     "authformprovider": ("auth_form_module", "Form")}


def _authn_providers(ctx: LintContext) -> dict[str, bool] | None:
    """Provider name -> answers Digest, or None when a loaded module apachetune has no table for
    may register more. <AuthnProviderAlias> names count wherever they are (httpd needs them
    first: this errs towards silence); an alias answers both, a FastCGI provider Basic only."""
    if ctx.third_party_may_register("providers"):
        return None
    names = {name: digest for module, (name, digest) in _AUTHN_PROVIDERS.items() if ctx.module_loaded(module)}
    for item in ctx.items_named("authnprovideralias"):
        if len(item.args) > 1:
            names[item.args[1]] = True
    for item in ctx.items_named("authnzfcgidefineprovider"):
        if len(item.args) > 1 and item.args[0] == "authn":
            names.setdefault(item.args[1], False)
    return names


def authn_refused(ctx: LintContext) -> Iterator[Finding]:
    """mod_auth_basic/_digest/_form add_authn_provider: each provider name (case-sensitive) a
    loaded module or the configuration registers, and one that answers the scheme; and
    mod_allowmethods' methods."""
    providers = None
    for lname, (module, scheme) in _AUTHN_DIRECTIVES.items():
        if not ctx.module_loaded(module):
            continue
        for item in ctx.items_named(lname):
            if not isinstance(item, ResolvedDirective):
                continue
            providers = providers if providers is not None else _authn_providers(ctx)
            if providers is None:
                return
            for name in item.args:
                if name not in providers:
                    yield refusal(ctx, f"Unknown Authn provider: {name}", item)
                    break
                if scheme == "Digest" and not providers[name]:
                    yield refusal(ctx, f"The '{name}' Authn provider doesn't support Digest Authentication", item)
                    break
    if ctx.module_loaded("allowmethods_module"):
        methods = _methods(ctx)
        for item in ctx.items_named("allowmethods"):
            words = take_argv(item.args) if isinstance(item, ResolvedDirective) else []
            if not isinstance(item, ResolvedDirective) or (len(words) == 1 and words[0].lower() == "reset"):
                continue
            if not words:
                yield refusal(ctx, "AllowMethods: No method or 'reset' keyword given", item)
            elif (bad := next((w for w in words if w not in methods), None)) is not None:
                yield refusal(ctx, f"AllowMethods: Invalid Method '{bad}'", item)
