"""The one-value readers of the stock modules (AT510, in httpd's words): a number in a range
(atoi, as each reads it), a keyword from a list, and the directives httpd keeps only to refuse
(FancyIndexing, SSLLog, SSLLogLevel, Port). One table, one line a directive; judged only where
the module is loaded (otherwise the directive is AT502's) and the argument count is right
(otherwise AT503's).

Facts: modules/filters/mod_deflate.c and mod_brotli.c, modules/http2/h2_config.c,
modules/mappers/mod_rewrite.c (cmd_rewriteoptions, cmd_rewritebase) and mod_dir.c
(configure_redirect), modules/aaa/mod_access_compat.c (satisfy) and mod_authz_core.c
(authz_merge_sections), modules/proxy/mod_proxy.c (set_via_opt, set_bad_opt) and
mod_proxy_connect.c, mod_proxy_fcgi.c, modules/ssl/ssl_engine_config.c, modules/cache/mod_cache.c
and mod_cache_socache.c, modules/generators/mod_cgi(d).c, server/mpm_common.c, server/core.c
(set_regex_default_options), modules/ldap/util_ldap.c, modules/filters/mod_request.c and
mod_buffer.c, modules/dav/main/mod_dav.c, modules/aaa/mod_authn_socache.c, ap_set_deprecated's
users (httpd 2.4.x). Each message is checked against the installed httpd in
tests/test_reading_rules_oracle.py (READER_CASES)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

from apachetune.config import observed
from apachetune.config.apr import (
    AddressError,
    apr_inet_pton6,
    dbd_driver_dirs,
    ip_subnet_error,
    parse_addr_port,
)
from apachetune.config.conditions import Version, at_least
from apachetune.config.directives import lookup
from apachetune.config.effective import ResolvedDirective
from apachetune.config.pcre import regex_surely_invalid
from apachetune.config.words import WHITESPACE, split_words, take_argv
from apachetune.lint.checks.authnz_fcgi import check_authn_error, define_provider_error
from apachetune.lint.checks.core_readers import (
    AFTER_2_4_63,
    path_to_check,
    refusal,
    strtoff_error,
    tree_is_here,
)
from apachetune.lint.checks.errorlog_format import error_log_format
from apachetune.lint.checks.expressions import expression_error
from apachetune.lint.checks.module_readers import PATH_SECTIONS, SOCACHE_PROVIDERS
from apachetune.lint.checks.proxy_params import hcheck_param_error
from apachetune.lint.checks.xml_charsets import ERROR, NONE, parse_char_encoding
from apachetune.lint.context import LintContext
from apachetune.lint.finding import Finding
from apachetune.mpm.numbers import atoi, starts_with_float, strtol, timeout_parameter

Reader = Callable[[LintContext, ResolvedDirective], "str | None"]


def _between(low: int, high: int | None, message: str) -> Reader:
    """atoi(arg) within [low, high] (no upper bound when high is None)."""
    def read(ctx: LintContext, item: ResolvedDirective) -> str | None:
        value = atoi(item.args[0])
        return message if value < low or (high is not None and value > high) else None
    return read


def _one_of(words: tuple[str, ...], message: str) -> Reader:
    """A keyword compared without case."""
    lower = {w.lower() for w in words}
    return lambda ctx, item: None if item.args[0].lower() in lower else message


def _on_off_h2(ctx: LintContext, item: ResolvedDirective) -> str | None:
    return None if item.args[0].lower() in ("on", "off") else "value must be On or Off"


def _h2_padding(ctx: LintContext, item: ResolvedDirective) -> str | None:
    bits = atoi(item.args[0])
    return "number of bits must be >= 0" if bits < 0 else ("number of bits must be <= 8" if bits > 8 else None)


_REWRITE_OPTIONS = ("inherit", "inheritbefore", "inheritdown", "inheritdownbefore", "ignoreinherit", "allownoslash",
                    "allowanyuri", "mergebase", "ignorecontextinfo", "legacyprefixdocroot")


def _rewrite_options(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """cmd_rewriteoptions: each word an option (any case); MaxRedirects=N only warns;
    UnsafePrefixStat from 2.4.60."""
    known = set(_REWRITE_OPTIONS)
    if at_least(Version.parse(ctx.eff.httpd_version), "2.4.60"):
        known.add("unsafeprefixstat")
    for word in item.args:
        if word.lower() not in known and word[:13].lower() != "maxredirects=":
            return f"RewriteOptions: unknown option '{word}'"
    return None


def _rewrite_base(ctx: LintContext, item: ResolvedDirective) -> str | None:
    if not any(p.lname in PATH_SECTIONS for p in item.parents):
        return "RewriteBase: only valid in per-directory config files"
    if item.args[0] == "":
        return "RewriteBase: empty URL not allowed"
    return None if item.args[0].startswith("/") else "RewriteBase: argument is not a valid URL"


def _index_redirect(ctx: LintContext, item: ResolvedDirective) -> str | None:
    arg = item.args[0]
    if arg.lower() in ("on", "off", "permanent", "temp", "seeother"):
        return None
    if arg[:1].isascii() and arg[:1].isdigit():
        return None if 300 <= atoi(arg) <= 399 else "DirectoryIndexRedirect only accepts values between 300 and 399"
    return "DirectoryIndexRedirect ON|OFF|permanent|temp|seeother|3xx"


def _deprecated(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """ap_set_deprecated: the directive's help text is the refusal, whatever its argument."""
    spec = lookup(item.lname)
    return spec.help if spec is not None and spec.help else None


def _name(item: ResolvedDirective) -> str:
    """The directive's name as its module registered it (messages built from cmd->name)."""
    spec = lookup(item.lname)
    return spec.name if spec is not None else item.name


def _ssl_not_negative(message: str) -> Reader:
    """mod_ssl's atoi readers that refuse a negative number; {name} and {arg} filled in."""
    return lambda ctx, item: (message.format(name=_name(item), arg=item.args[0])
                              if atoi(item.args[0]) < 0 else None)


def _ssl_check_mask(first: tuple[str, ...], flag: str) -> Reader:
    """ssl_cmd_crlcheck_parse / ssl_cmd_ocspcheck_parse: a mode, then only the one flag (any case)."""
    def read(ctx: LintContext, item: ResolvedDirective) -> str | None:
        words = item.args or [""]
        bad = next((w for i, w in enumerate(words)
                    if w.lower() not in (first if i == 0 else (flag,))), None)
        return None if bad is None else f"{_name(item)}: Invalid argument '{bad}'"
    return read


def _cache_path(item: ResolvedDirective) -> tuple[bool, str | None]:
    """(judged, cmd->path) for mod_cache's readers: at server or virtual host level (no path), or
    directly in a <Location> (its path); elsewhere (a <Directory>, <Files>, <Limit>: refused by
    ap_check_cmd_context; <LocationMatch>, <If>: other paths) not judged."""
    sections = [p for p in item.parents if p.lname in PATH_SECTIONS or p.lname in ("limit", "limitexcept")]
    if not sections:
        return True, None
    if len(sections) == 1 and sections[0].lname == "location" and len(sections[0].args) == 1:
        return True, sections[0].args[0]
    return False, None


def _cache_enable(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """add_cache_enable: a provider (not a path), then a URL, or the <Location>'s path below which it is."""
    judged, path = _cache_path(item)
    if not judged or not 1 <= len(item.args) <= 2:
        return None
    kind, url = item.args[0], (item.args[1] if len(item.args) == 2 else path)
    if kind.startswith("/"):
        return f"provider ({kind}) starts with a '/'.  Are url and provider switched?"
    if url is None:
        return f"CacheEnable provider ({kind}) is missing an URL."
    if path is not None and not url.startswith(path):
        return "When in a Location, CacheEnable must specify a path or an URL below that location."
    return None


def _cache_disable(ctx: LintContext, item: ResolvedDirective) -> str | None:
    judged, path = _cache_path(item)
    if not judged:
        return None
    url = item.args[0]
    if path is not None:
        return None if url.lower() == "on" else "CacheDisable must be followed by the word 'on' when in a Location."
    return None if url.startswith("/") or ":" in url else "CacheDisable must specify a path or an URL."


def _script_timeout(ctx: LintContext, item: ResolvedDirective) -> str | None:
    if timeout_parameter(item.args[0], "s") is None:
        return f"{_name(item)} has wrong format"
    return None


def _stack_size(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """ap_mpm_set_thread_stacksize: strtol, not negative, no ERANGE."""
    read = strtol(item.args[0])
    return f"Invalid ThreadStackSize value: {item.args[0]}" if (read.value or 0) < 0 or read.overflow else None


def _allow_connect(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """set_allowed_ports (ITERATE): each word a port or a first-last range, in digits."""
    for word in item.args:
        if not (word[:1].isascii() and word[:1].isdigit()):
            return "AllowCONNECT: port numbers must be numeric"
        first = strtol(word)
        rest, where = first.rest, word
        if rest.startswith("-"):
            where = rest[1:]
            last = strtol(where)
            rest = where if last.value is None else last.rest
            if last.value is None:
                return f"Cannot parse '{where}' as port number"
        if rest:
            return f"Cannot parse '{where}' as port number"
    return None


def _ldap_timeout(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """util_ldap_set_op_timeout: strtol over the whole text, not negative."""
    read = strtol(item.args[0])
    if read.value is None or read.rest:
        return "Timeout not numerical"
    return "Timeout must be non-negative" if read.value < 0 else None


def _ldap_pool_ttl(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """util_ldap_set_conn_ttl: a negative value (any text after '-') is infinite; else a time."""
    arg = item.args[0]
    return None if arg.startswith("-") or timeout_parameter(arg, "s") is not None else \
        "LDAPConnectionPoolTTL has wrong format"


def _kept_body_size(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """set_kept_body_size: apr_strtoff over the whole text, not negative."""
    read = strtol(item.args[0])
    if read.overflow or read.rest or (read.value or 0) < 0 or (read.value is None and item.args[0]):
        return "KeptBodySize must be a valid size in bytes, or zero."
    return None


def _buffer_size(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """mod_buffer's set_buffer_size: apr_strtoff (what follows the digits ignored), above zero."""
    read = strtol(item.args[0])
    return "BufferSize must be a size in bytes, and greater than zero" if read.overflow or (read.value or 0) <= 0 \
        else None


# ap_regcomp_default_cflag_by_name also names EXTENDED, but AP_REG_EXTENDED is 0 ("unused"), so
# RegexDefaultOptions refuses it like an unknown name.
_REGEX_OPTIONS = frozenset({"icase", "dotall", "dollar_endonly"})


def _regex_default_options(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """set_regex_default_options: none, or each option with an optional + or -."""
    for word in item.args:
        name = word[1:] if word[:1] in "+-" else word
        if word.lower() != "none" and name.lower() not in _REGEX_OPTIONS:
            return f"RegexDefaultOptions: option '{name}' unknown"
    return None


def _dav(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """dav_cmd_dav: On means the "filesystem" provider (mod_dav_fs), Off none, anything else a
    provider's name (case-sensitive); not judged when a module apachetune has no table for is
    loaded (mod_dav_svn registers "svn")."""
    arg = item.args[0]
    if arg.lower() == "off" or ctx.third_party_may_register("providers"):
        return None
    provider = "filesystem" if arg.lower() == "on" else arg
    known = {"filesystem"} if ctx.module_loaded("dav_fs_module") else set()
    return None if provider in known else f"Unknown DAV provider: {provider}"


def _socache(prefix: str, whole: bool) -> Reader:
    """AuthnCacheSOCache / CacheSocache: "name[:args]" names an socache provider a loaded module
    registers (the provider's own reading of args is not judged); the message names the whole
    argument (mod_authn_socache) or the name (mod_cache_socache)."""
    def read(ctx: LintContext, item: ResolvedDirective) -> str | None:
        if ctx.third_party_may_register("providers"):
            return None
        arg = item.args[0]
        name = arg.partition(":")[0]
        known = {n for module, names in SOCACHE_PROVIDERS.items() if ctx.module_loaded(module) for n in names}
        if name in known:
            return None
        shown = arg if whole else name
        return (f"{prefix}Unknown socache provider '{shown}'. Maybe you need to load the appropriate socache module "
                f"(mod_socache_{shown}?)")
    return read


def _delimiter_at_or_after(text: str, pos: int, delim: str) -> int:
    """mod_substitute's scan: the delimiter at pos, or the next one; len(text) when none."""
    if pos < len(text) and text[pos] != delim:
        pos += 1
        while pos < len(text) and text[pos] != delim:
            pos += 1
    return pos


def _substitute(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """set_pattern: s<d>from<d>to<d>[infq], from not empty, a regex unless n."""
    line = item.args[0]
    if line[:1].lower() != "s":
        return "Bad Substitute format, must be an s/// pattern"
    if len(line) == 2:
        return None  # "s/": httpd's scan reads past the end of the text: not judged
    delim = line[1:2]
    end_from = _delimiter_at_or_after(line, 2, delim) if delim else len(line)
    pattern = line[2:end_from]
    if not delim or not pattern or end_from >= len(line):
        return "Bad Substitute format, must be a complete s/// pattern"
    end_to = _delimiter_at_or_after(line, end_from + 1, delim)
    flags = line[end_to + 1:] if end_to < len(line) else ""
    if any(f.lower() not in "infq" for f in flags):
        return "Bad Substitute flag, only s///[infq] are supported"
    if "n" not in flags.lower() and regex_surely_invalid(pattern):
        return "Substitute could not compile regex"
    return None


def _timeout(message: str) -> Reader:
    """A reader whose whole verdict is ap_timeout_parameter_parse's (seconds by default)."""
    return lambda ctx, item: message if timeout_parameter(item.args[0], "s") is None else None


# CookieExpires' units as strncasecmp reads them: this many first letters of the name.
_COOKIE_UNITS = (("years", 1), ("months", 2), ("weeks", 1), ("days", 1), ("hours", 1), ("minutes", 2), ("seconds", 1))


def _cookie_expires(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """set_cookie_exp: all digits, or "[plus] {<num> <type>}*" (a word starting with p is plus)."""
    arg = item.args[0]
    if arg[:1].isascii() and arg[:1].isdigit() and arg[-1:].isdigit():
        return None
    words = split_words(arg)
    if words and words[0][:1].lower() == "p":
        words = words[1:]
    while words and words[0]:
        if not (words[0][:1].isascii() and words[0][:1].isdigit()):
            return "bad expires code, numeric value expected."
        if len(words) < 2 or not words[1]:
            return "bad expires code, missing <type>"
        unit = words[1].lower()
        if not any(unit.startswith(name[:n]) for name, n in _COOKIE_UNITS):
            return "bad expires code, unrecognized type"
        words = words[2:]
    return None


def _cookie_domain(ctx: LintContext, item: ResolvedDirective) -> str | None:
    name = item.args[0]
    if not name:
        return "CookieDomain values may not be null"
    if not name.startswith("."):
        return "CookieDomain values must begin with a dot"
    return None if "." in name[1:] else "CookieDomain values must contain at least one embedded dot"


def _inflate_limit(ctx: LintContext, item: ResolvedDirective) -> str | None:
    return strtoff_error("DeflateInflateLimitRequestBody", item.args[0])


def _each_word(words: tuple[str, ...], message: str) -> Reader:
    """ITERATE over keywords compared without case; the first unknown one is named."""
    lower = {w.lower() for w in words}
    return lambda ctx, item: next((message + w for w in item.args if w.lower() not in lower), None)


def _strtoff_within(low: int, high: int, message: str) -> Reader:
    """apr_strtoff over the whole text (nothing may follow the digits), within [low, high];
    the message ends with the argument."""
    def read(ctx: LintContext, item: ResolvedDirective) -> str | None:
        got = strtol(item.args[0])
        if got.overflow or got.rest or not low <= (got.value or 0) <= high:
            return message + item.args[0]
        return None
    return read


def _dereference(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """mod_auth_ldap_set_deref: never/searching/finding/always as written; off and on in any case."""
    arg = item.args[0]
    if arg in ("never", "searching", "finding", "always") or arg.lower() in ("off", "on"):
        return None
    return "Unrecognized value for AuthLDAPDereferenceAliases directive"


def _float_first(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """set_cache_factor: sscanf("%lg") must read a number first (what follows is ignored)."""
    return None if starts_with_float(item.args[0]) else "CacheLastModifiedFactor value must be a float"


def _strtoff_at_least(low: int, message: str, high: int | None = None) -> Reader:
    """apr_strtoff without an end pointer (what follows the digits is ignored; only an overflow
    fails), then at least `low` (and at most `high`)."""
    def read(ctx: LintContext, item: ResolvedDirective) -> str | None:
        got = strtol(item.args[0])
        value = got.value or 0
        return message if got.overflow or value < low or (high is not None and value > high) else None
    return read


def _max_line_length(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """set_max_line_length: apr_strtoff, then nothing, b, k, m or g alone (any case)."""
    got = strtol(item.args[0])
    rest = got.rest if got.value is not None else item.args[0]
    if got.overflow or (got.value or 0) < 0 or (rest and rest.lower() not in ("b", "k", "m", "g")):
        return "SubstituteMaxLineLength must be a non-negative integer optionally suffixed with 'b', 'k', 'm' or 'g'."
    return None


def _vhost_alias(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """vhost_alias_set: an absolute path or none; each % is %p, %%, or [-]N[+][.[-]M[+]]."""
    arg = item.args[0]
    if not arg.startswith("/"):
        return None if arg.lower() == "none" else "format string must be an absolute path, or 'none'"
    i = 0
    while i < len(arg):
        i += 1
        if arg[i - 1] != "%":
            continue
        if arg[i:i + 1] in ("p", "%"):
            i += 1
            continue
        for _ in range(2):  # N, then M after a dot
            i += arg[i:i + 1] == "-"
            if not ("0" <= arg[i:i + 1] <= "9" and arg[i:i + 1]):
                return "syntax error in format string"
            i += 1
            i += arg[i:i + 1] == "+"
            if arg[i:i + 1] != ".":
                break
            i += 1
    return None


def _digits_only(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """dbd_param_int: every character a digit (an empty argument passes)."""
    return None if all("0" <= c <= "9" for c in item.args[0]) else "Argument must be numeric!"


def _watchdog_interval(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """wd_cmd_watchdog_int: a time (seconds by default), at least AP_WD_TM_SLICE (100 ms)."""
    us = timeout_parameter(item.args[0], "s")
    if us is None:
        return "Unparse-able WatchdogInterval setting"
    return "Invalid WatchdogInterval: minimal value 100ms" if us < 100_000 else None


def _newer(ctx: LintContext) -> bool:
    """Past 2.4.63: mod_auth_digest's readers as 2.4.71 has them (measured; the release that
    changed them is not at hand, taken as core_readers.AFTER_2_4_63)."""
    return at_least(Version.parse(ctx.eff.httpd_version), AFTER_2_4_63)


def _digest_qop(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """set_qop (ITERATE): 2.4.71 takes auth alone; 2.4.x before took none too and said auth-int
    is not implemented."""
    for word in item.args:
        low = word.lower()
        if _newer(ctx):
            if low != "auth":
                return "AuthDigestQop is deprecated: only 'auth' is supported"
        elif low == "auth-int":
            return "AuthDigestQop auth-int is not implemented"
        elif low not in ("auth", "none"):
            return f"Unrecognized qop: {word}"
    return None


def _digest_algorithm(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """set_algorithm: MD5 (any case); 2.4.71 names anything else unsupported."""
    alg = item.args[0]
    if alg.lower() == "md5":
        return None
    if _newer(ctx):
        return f"Unsupported algorithm in AuthDigestAlgorithm: {alg}"
    if alg.lower() == "md5-sess":
        return "AuthDigestAlgorithm: ERROR: algorithm `MD5-sess' is not implemented"
    return f"Invalid algorithm in AuthDigestAlgorithm: {alg}"


def _nonce_lifetime(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """set_nonce_lifetime: strtol, then the end of the text or white space."""
    got = strtol(item.args[0])
    rest = got.rest if got.value is not None else item.args[0]
    if rest and rest[0] not in " \t\n\v\f\r":
        return f"Invalid time in AuthDigestNonceLifetime: {item.args[0]}"
    return None


def _up_to_an_hour(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """mod_socache_memcache's and mod_socache_redis's times: ap_timeout_parameter_parse, 0 to 3600 s."""
    us = timeout_parameter(item.args[0], "s")
    if us is None:
        return f"{_name(item)} has wrong format"
    return f"{_name(item)} can only be 0 or up to one hour." if us > 3600 * 10**6 else None


_LUA_SCOPES = ("once", "request", "conn", "thread", "server")


def _lua_keyword(name: str, words: tuple[str, ...]) -> Reader:
    """register_lua_inherit / register_lua_codecache: a keyword in any case."""
    quoted = ", ".join(f"'{w}'" for w in words[:-1]) + f", and '{words[-1]}'"
    return lambda ctx, item: (None if item.args[0].lower() in words else
                              f"{name} type of '{item.args[0]}' not recognized, valid options are {quoted}")


# mod_md (modules/md/mod_md_config.c) compares with apr_strnatcasecmp: case and white space
# do not count. Its sections: the directives below are judged outside them, where the values
# are checked the same way whatever the directive's context rules.
_MD_SECTIONS = ("mdomainset", "mdomain")


def _md_word(text: str) -> str:
    return "".join(text.split()).lower()


def _md(words: tuple[str, ...], message: str, in_sections: bool = False) -> Reader:
    """A mod_md keyword; {arg} in the message is the argument. `in_sections`: judged inside
    <MDomainSet> too (MD_LOC_ALL, or a value read before the context is checked)."""
    def read(ctx: LintContext, item: ResolvedDirective) -> str | None:
        inside = any(p.lname in _MD_SECTIONS for p in item.parents)
        if (inside and not in_sections) or _md_word(item.args[0]) in words:
            return None
        return message.format(arg=item.args[0])
    return read


def md_duration_us(value: str, default_unit: str) -> int | None:
    """mod_md's md_duration_parse in microseconds: a number (strtoll) and a unit from its first
    letters (d, h, s, ms, mi, any case; none: `default_unit`); None where it fails."""
    got = strtol(value)
    if got.overflow or (got.value is None and got.rest):
        return None  # out of range, or nothing read
    n = got.value or 0
    unit = got.rest or default_unit
    first, second = unit[:1].lower(), unit[1:2].lower()
    scale = {"d": 86400 * 10**6, "h": 3600 * 10**6, "s": 10**6}.get(first)
    if scale is None and first == "m":
        scale = {"s": 1000, "i": 60 * 10**6}.get(second)
    return n * scale if scale is not None else None


def md_duration_ok(value: str, default_unit: str) -> bool:
    return md_duration_us(value, default_unit) is not None


def _md_duration(default_unit: str, at_least_a_second: str | None = None, positive: str | None = None,
                 not_negative: str | None = None) -> Reader:
    """A duration reader of mod_md (outside its sections); `at_least_a_second` / `positive` /
    `not_negative`: the message for one shorter than a second / not above 0 / below 0."""
    def read(ctx: LintContext, item: ResolvedDirective) -> str | None:
        if any(p.lname in _MD_SECTIONS for p in item.parents):
            return None
        us = md_duration_us(item.args[0], default_unit)
        if us is None:
            return "unrecognized duration format"
        if at_least_a_second and us < 10**6:
            return at_least_a_second
        if positive and us <= 0:
            return positive
        return not_negative if not_negative and us < 0 else None
    return read


def _md_timeslice(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """md_timeslice_parse: a duration (in days by default), or a percentage of the lifetime."""
    if any(p.lname in _MD_SECTIONS for p in item.parents):
        return None
    value = item.args[0]
    if md_duration_ok(value, "d"):
        return None
    got = strtol(value)
    if not got.overflow and got.rest[:1] == "%":
        return None if (got.value or 0) >= 0 else f"{_name(item)} percent must be less than 100"
    return f"{_name(item)} has unrecognized format"


def _md_store_locks(ctx: LintContext, item: ResolvedDirective) -> str | None:
    value = item.args[0]
    if value.lower() in ("on", "off") or md_duration_ok(value, "s"):
        return None
    return "neither 'on', 'off' or a duration specified"


def _md_port_map_error(value: str) -> str | None:
    """mod_md's set_port_map on one "80:8080" / "http:-" word."""
    if value.startswith("http:"):
        net, rest = 80, value[4:]
    elif value.startswith("https:"):
        net, rest = 443, value[5:]
    else:
        got = strtol(value)
        if got.overflow:
            return "unable to parse first port number"
        net, rest = got.value or 0, got.rest
    if rest[:1] != ":":
        return "no ':' after first port number"
    rest = rest[1:]
    if rest[:1] != "-":
        local = strtol(rest)
        if local.overflow:
            return "unable to parse second port number"
        if not 0 < (local.value or 0) <= 65535:
            return "invalid number for port map, must be in ]0,65535]"
    return None if net in (80, 443) else "mapped port number must be 80 or 443"


def _md_port_map(ctx: LintContext, item: ResolvedDirective) -> str | None:
    if any(p.lname in _MD_SECTIONS for p in item.parents) or not 1 <= len(item.args) <= 2:
        return None
    return next((err for word in item.args if (err := _md_port_map_error(word))), None)


def _md_http_proxy(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """md_util_abs_http_uri_check: a scheme, and it is http or https."""
    if any(p.lname in _MD_SECTIONS for p in item.parents):
        return None
    value = item.args[0]
    if ":" not in value:
        return "missing uri scheme"
    scheme = value.split(":", 1)[0]  # apr_uri_parse: scheme characters up to the first ':'
    if not scheme[:1].isascii() or not scheme[:1].isalpha() \
            or not all(c.isascii() and (c.isalnum() or c in "+-.") for c in scheme):
        return None  # (no scheme: parsed otherwise, not judged here)
    return None if scheme.lower() in ("http", "https") else "uri scheme must be http or https"


# md_core.c's KNOWN_CAs (httpd 2.4.71's mod_md), in its order, for the message
_MD_KNOWN_CAS = ("LetsEncrypt", "LetsEncrypt-Test", "Buypass", "Buypass-Test")


def _md_ca(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """md_get_ca_url_from_name for each word: a known CA name (without case), else an absolute
    URI. Judged for a plain word (no ':', so surely no URI: "missing uri scheme") when the mod_md
    loaded here is at hand and its file does not hold the word as a name of its own (a newer
    mod_md may know more CAs than 2.4.71's four; any short string of the file counts, so "x"
    passes: lenient, never a false refusal). An empty word is no name and no URI."""
    names = _md_module_strings(ctx)
    if names is None:
        return None
    for word in take_argv(item.args):
        if not all(c.isascii() and (c.isalnum() or c in "._-") for c in word):
            continue  # (a URI, or text apr_uri_parse may read otherwise: not judged)
        if word.lower() in names:
            continue
        return (f"The CA name '{word}' is not known and it is not a URL either (missing uri scheme). "
                f"Known CA names are: {' '.join(_MD_KNOWN_CAS)}.")
    return None


def _md_module_strings(ctx: LintContext) -> frozenset[str] | None:
    """The lower-cased NUL-terminated words of the mod_md file this tree loads, when the tree is
    installed here and the file holds 2.4.71's CA names; else None."""
    so = ctx.eff.modules.get("md_module")
    if not tree_is_here(ctx) or not so or so == "(built-in)":
        return None
    return _nul_words(ctx.eff.local(so))


@cache
def _nul_words(path: str) -> frozenset[str] | None:
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    words = frozenset(w.decode("ascii", "replace").lower() for w in data.split(b"\0") if 0 < len(w) < 64)
    return words if all(n.lower() in words for n in _MD_KNOWN_CAS) else None


def _md_members(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """md_config_sec_add_members outside a section: one word, auto or manual."""
    if any(p.lname in _MD_SECTIONS for p in item.parents) or not item.args:
        return None
    if len(item.args) > 1:
        return f"{_name(item)} is only valid inside a '<MDomainSet' context, not here"
    return None if _md_word(item.args[0]) in ("auto", "manual") else 'unknown value, use "auto|manual"'


def _md_inside_only(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """md_section_check: only inside <MDomainSet> (or <MDomain>)."""
    if any(p.lname in _MD_SECTIONS for p in item.parents):
        return None
    return f"{_name(item)} is only valid inside a '<MDomainSet' context, not here"


_MD_ON_OFF = "unknown '{arg}', supported parameter values are 'on' and 'off'"


def _xml2enc_default(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """set_default: libxml2's xmlParseCharEncoding on the name, or on what an xml2EncAlias
    (any, GLOBAL_ONLY, read by libxml2 before) makes of it."""
    name = item.args[0]
    for alias in ctx.items_named("xml2encalias"):
        if isinstance(alias, ResolvedDirective) and len(alias.args) == 2 and alias.args[1].upper() == name.upper():
            return None  # (the alias's charset is libxml2's to judge, when it is added)
    code = parse_char_encoding(name)
    if code == NONE:
        return "Default charset not found"
    return "Invalid or unsupported default charset" if code == ERROR else None


def _int_slot(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """ap_set_int_slot: strtol over the whole word; the message names the directive as written."""
    read = strtol(item.args[0])
    if item.args[0] == "" or read.value is None or read.rest:
        return f"Invalid value for directive {item.name}, expected integer"
    return None


def _chroot_dir(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """unixd_set_chroot_dir: ap_is_directory on the word as written (a relative one is the
    working directory's: not judged); judged as path_to_check says."""
    if not os.path.isabs(item.args[0]):
        return None
    checked = path_to_check(ctx, item.args[0])
    return "ChrootDir must be a valid directory" if checked and not observed.isdir(checked[1]) else None


def _dbd_driver(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """dbd_param(cmd_name): apr_dbd_get_driver loads apr_dbd_NAME-1.so, the name as written.
    Judged on a tree installed here (its httpd loads this machine's APR-util drivers) when the
    drivers' directory is found (config/apr.dbd_driver_dirs); a file that is there but lacks
    the driver's symbol is not looked into."""
    name = item.args[0]
    if not name or not tree_is_here(ctx) or not (dirs := dbd_driver_dirs(ctx.eff.local)):  # "": the count's refusal
        return None
    module = f"apr_dbd_{name}-1.so"
    if any(os.path.isfile(os.path.join(d, module)) for d in dirs):
        return None
    return f"Can't load driver file apr_dbd_{name}.so"


def _fcgi_define(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """AuthnzFcgiDefineProvider (authnz_fcgi.py); in a virtual host its GLOBAL_ONLY check refuses
    it first (a check AT504's table leaves out: a regex compiled before it could fail)."""
    if any(p.lname == "virtualhost" for p in item.parents):
        return "AuthnzFcgiDefineProvider cannot occur within <VirtualHost> section"
    return None if item.parents else define_provider_error(take_argv(item.args))


def _fcgi_check_authn(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """AuthnzFcgiCheckAuthnProvider (authnz_fcgi.py): UserExpr is parsed restricted (no file
    functions or tests) for a string."""
    return check_authn_error(take_argv(item.args),
                             lambda text: expression_error(ctx, text, string_result=True, restricted=True))


def _file_opened_at_start(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """A ServerRoot-relative file its handler opens while reading (ap_pcfg_openfile: a regular
    file, or /dev/null): mod_remoteip's proxy lists, mod_session_crypto's passphrase file. What
    is in it is not judged (names are resolved then)."""
    checked = path_to_check(ctx, item.args[0])
    if checked is None:
        return None
    path, local = checked
    name = _name(item)
    if not observed.exists(local):
        return f"{name}: Could not open file {path}: No such file or directory"
    if not observed.isfile(local) and path != "/dev/null":
        return f"{name}: Could not open file {path}: Bad file descriptor"
    return None


def _md_eab(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """md_config_set_eab with one word: "none" (any case), else a ServerRoot-relative JSON file
    that must be a regular file (md_file_exists); what it holds is not judged here."""
    if len(item.args) != 1 or item.args[0].lower() == "none" or not item.args[0]:
        return None
    checked = path_to_check(ctx, item.args[0])
    if checked is None or observed.isfile(checked[1]):
        return None
    return f"MDExternalAccountBinding: file not found: {checked[0]}"


def _heartbeat(label: str, where: str, resolve_failed: str) -> Callable[[ResolvedDirective], str | None]:
    """cmd_hb_address / cmd_hm_listen: apr_parse_addr_port, a host and a port, then an IPv4
    address for the host (a name is resolved at start-up: not judged)."""
    def read(item: ResolvedDirective) -> str | None:
        try:
            host, _, port = parse_addr_port(item.args[0])
        except AddressError:
            return f"{label}: Unable to parse {where}."
        if host is None:
            return f"{label}: No host provided in {where}"
        if port == 0:
            return f"{label}: No port provided in {where}"
        return f"{label}: {resolve_failed}" if apr_inet_pton6(host) else None
    return read


_HEARTBEATS = {"heartbeataddress": ("heartbeat_module", _heartbeat("HeartbeatAddress", "address",
                                                                   "apr_sockaddr_info_get failed.")),
               "heartbeatlisten": ("heartmonitor_module", _heartbeat(
                   "HeartbeatListen", "multicast address", "apr_sockaddr_info_get failed on multicast address"))}


def _requires_argument(message: str, reads: str) -> Reader:
    """A handler that refuses no argument ({name}: the registered name), as it looks: its first
    "word" empty, or TAKE_ARGV's "argv" empty (config/words.take_argv)."""
    def read(ctx: LintContext, item: ResolvedDirective) -> str | None:
        empty = not take_argv(item.args) if reads == "argv" else not item.args or item.args[0] == ""
        return message.format(name=_name(item)) if empty else None
    return read


def _proxy_protocol_exceptions(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """remoteip_disable_networks: at least one word, each an address or a subnet
    (apr_ipsubnet_create; the message names the address without its mask)."""
    words = take_argv(item.args)
    if not words:
        return f"{_name(item)} requires an argument"
    for word in words:
        addr, slash, mask = word.partition("/")
        err = ip_subnet_error(addr, mask if slash else None)
        if err is not None:
            return f"ip address '{addr}' appears to be invalid" + (f": {err}" if err else "")
    return None


def _allow_deny(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """mod_access_compat's allow_cmd (ITERATE2): "from", then each host, address, subnet,
    env=[!]VAR or all."""
    if len(item.args) < 2:
        return None  # the count is AT503's
    if item.args[0].lower() != "from":
        return "allow and deny must be followed by 'from'"
    for where in item.args[1:]:
        if where == "":
            break  # ITERATE2's loop ends at an empty word
        lower = where.lower()
        if lower.startswith("env=") or lower == "all":
            continue
        if "/" in where:
            ip, _, mask = where.partition("/")
            err = ip_subnet_error(ip, mask)
            if err is not None:
                return err or "An IP address was expected"
            continue
        err = ip_subnet_error(where, None)
        if err:  # (None: an address; "": not one, a host name)
            return err
        if err is None:
            continue
        if "#" in where:
            return "No comments are allowed here"
    return None


def _getword_white(text: str) -> tuple[str, str]:
    """ap_getword_white: up to the next whitespace, then past it."""
    end = next((i for i, c in enumerate(text) if c in WHITESPACE), len(text))
    return text[:end], text[end:].lstrip(WHITESPACE)


_EXT_FILTER_WORDS = ("mode=", "ftype=", "enableenv=", "disableenv=", "intype=", "outtype=")


def _ext_filter_params(args: str) -> str | None:
    """define_filter's scan of what follows the name (its own "nasty parsing": cmd="..." keeps
    its blanks)."""
    while args:
        args = args.lstrip(WHITESPACE)
        lower = args.lower()
        if lower.startswith("preservescontentlength"):
            token, args = _getword_white(args)
            if token.lower() != "preservescontentlength":
                return f"mangled argument `{token}'"
            continue
        key = next((k for k in _EXT_FILTER_WORDS if lower.startswith(k)), None)
        if key is not None:
            token, args = _getword_white(args[len(key):])
            if key == "mode=" and token.lower() not in ("output", "input"):
                return f"Invalid mode: `{token}'"
            continue
        if lower.startswith("cmd="):
            args = args[4:]
            if args.startswith('"'):
                i, escaping = 1, False
                while i < len(args) and (args[i] != '"' or escaping):
                    escaping = not escaping and args[i] == "\\"
                    i += 1
                if i >= len(args):
                    return "Expected cmd= delimiter"
                if not args[1:i].strip(WHITESPACE):
                    return "Invalid cmd= parameter"  # (apr_tokenize_to_argv: no word)
                args = args[i + 1:]
            else:
                _, args = _getword_white(args)
            continue
        return f"Unexpected parameter: `{args}'"
    return None


def _ext_filter_define(ctx: LintContext) -> Iterator[Finding]:
    """mod_ext_filter's define_filter on the raw line: a name not defined before in that
    server (any case), then its parameters."""
    defined: dict[int, set[str]] = {}
    for item in ctx.items_named("extfilterdefine"):
        if not isinstance(item, ResolvedDirective):
            continue
        name, rest = _getword_white(item.args_text.lstrip(WHITESPACE))
        vhost = next((p for p in item.parents if p.lname == "virtualhost"), None)
        names = defined.setdefault(id(vhost) if vhost else 0, set())
        if name.lower() in names:
            yield refusal(ctx, f"ExtFilter {name} is already defined", item)
            continue
        names.add(name.lower())
        if message := _ext_filter_params(rest):
            yield refusal(ctx, message, item)


def _form_string(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """mod_auth_form's check_string: not empty, no '=' or '&' (named as written)."""
    return _check_string(item, item.args[0])


def _string_expression(what: str) -> Reader:
    """A handler that parses its one argument as a string expression at once."""
    def read(ctx: LintContext, item: ResolvedDirective) -> str | None:
        err = expression_error(ctx, item.args[0], True)
        return f"Could not parse {what} expression '{item.args[0]}': {err}" if err else None
    return read


def _basic_fake(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """add_basic_fake (TAKE12): "off", or a user and a password expression ("password" when none)."""
    if not 1 <= len(item.args) <= 2 or item.args[0].lower() == "off":
        return None
    user = item.args[0]
    if err := expression_error(ctx, user, True):
        return f"Could not parse fake username expression '{user}': {err}"
    if len(item.args) == 2 and (err := expression_error(ctx, item.args[1], True)):
        return f"Could not parse fake password expression associated to user '{user}': {err}"
    return None


_LOG_HOOKS = ("log_transaction", "quick_handler", "handler", "translate_name", "map_to_storage", "fixups",
              "type_checker", "check_access", "check_access_ex", "check_authn", "check_authz", "insert_filter",
              "pre_translate_name", "all", "*")


def _log_message(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """mod_log_debug's cmd_log_message (TAKE123): a message expression, then hook= and expr=."""
    if not 1 <= len(item.args) <= 3:
        return None
    if err := expression_error(ctx, item.args[0], True):
        return f"Could not parse message expression '{item.args[0]}': {err}"
    for word in item.args[1:]:
        key = word[:5].lower()
        if key == "hook=":
            if word[5:].lower() not in _LOG_HOOKS:
                return f"Invalid hook name: {word[5:]}"
        elif key == "expr=":
            if err := expression_error(ctx, word[5:], False):
                return f"Could not parse expression '{word[5:]}': {err}"
        else:
            return f"Invalid argument {word}"
    return None


def _shmem_size(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """mod_auth_digest's set_shmem_size: strtol, blanks, then nothing, b, k or m; at least the
    client list's own size (88 bytes on a 64-bit build)."""
    got = strtol(item.args[0])
    rest = got.rest.lstrip(WHITESPACE)
    if rest[:1] not in ("", "b", "B", "k", "K", "m", "M"):
        return f"Invalid size in AuthDigestShmemSize: {item.args[0]}"
    size = (got.value or 0) * {"k": 1024, "m": 1048576}.get(rest[:1].lower(), 1)
    return f"size in AuthDigestShmemSize too small: {size} < 88" if size < 88 else None


def _cache_key_base_url(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """set_cache_key_base_url: apr_uri_parse, then a scheme, a host or a port; text with no ':'
    that does not start with '//' is a path alone (other forms are not judged here)."""
    arg = item.args[0]
    if ":" in arg or arg.startswith("//"):
        return None
    return f"URL '{arg}' must contain at least one of a scheme, a hostname or a port."


_MODEM_STANDARDS = ("v.21", "v.26bis", "v.32", "v.34", "v.92", "i-was-rich-and-got-a-leased-line")


def _dbd_cookie_name(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """mod_session_dbd: the first word of the raw text (quotes kept) has no '=', ';' or '&'."""
    first = _first_raw_token(item)
    if not first:
        return f"{_name(item)} requires at least one argument!"
    return f"{_name(item)} cannot contain '=', ';' or '&'." if any(c in first for c in "=;&") else None


def _first_raw_token(item: ResolvedDirective) -> str:
    """apr_strtok(args, " \t") on a RAW_ARGS line: its first token, quotes kept ("" when none)."""
    return next((w for w in item.args_text.replace("\t", " ").split(" ") if w), "")


def _check_string(item: ResolvedDirective, word: str) -> str | None:
    """check_string of mod_session_cookie and mod_auth_form: not empty, no '=' or '&'; the
    message names the directive as written."""
    return f"{item.name} cannot be empty, or contain '=' or '&'." if not word or "=" in word or "&" in word else None


def _cookie_name(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """mod_session_cookie's check_string on the first token of the raw text."""
    return _check_string(item, _first_raw_token(item))


def _hc_expr(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """set_hc_condition: a name of at most 15 characters, then an expression parsed at once, and
    nothing after it (a line with ap_getword_conf2's {...} quoting is not judged beyond its name)."""
    if not item.args or item.args[0] == "":
        return "Missing expression name for ProxyHCExpr"
    if len(item.args[0]) > 15:
        return "Expression name limited to 15 characters"
    if len(item.args) == 1 or item.args[1] == "":
        return "Missing expression for ProxyHCExpr"
    raw = item.args_text.strip(" \t").split(None, 1)
    if raw[0][:1] in ('"', "'") or len(raw) < 2 or raw[1].startswith("{"):
        return None  # ap_getword_conf2's {...} quoting: the words are not the ones split here
    expr = item.args[1]
    if err := expression_error(ctx, expr, False):
        return f'Could not parse expression "{expr}": {err}'
    return "error: extra parameter(s)" if len(item.args) > 2 and item.args[2] != "" else None


def _hc_template(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """set_hc_template: a name, then key=value health-check parameters, applied in order."""
    if not item.args or item.args[0] == "":
        return "Missing template name for ProxyHCTemplate"
    for word in item.args[1:]:
        if "=" not in word:
            return "Invalid ProxyHCTemplate parameter. Parameter must be in the form 'key=value'"
        key, _, val = word.partition("=")
        if err := hcheck_param_error(key, val):
            return f"ProxyHCTemplate: {err} {key}={val}; {item.args[0]}"
    return None


def _md_domain(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """md_config_set_names: the words but "auto" and "manual" (any case) are the domain names."""
    if any(p.lname in _MD_SECTIONS for p in item.parents):
        return None
    names = [w for w in take_argv(item.args) if w.lower() not in ("auto", "manual")]
    return None if names else "needs at least one domain name"


def _heartbeat_once(ctx: LintContext) -> Iterator[Finding]:
    """The main server's first HeartbeatAddress (HeartbeatListen) is read; a second one is
    refused before it is read (ctx->active). In a virtual host GLOBAL_ONLY refuses it first."""
    for lname, (module, read) in _HEARTBEATS.items():
        if not ctx.module_loaded(module):
            continue
        seen = False
        for item in ctx.items_named(lname):
            if not isinstance(item, ResolvedDirective) or len(item.args) != 1 or item.parents:
                continue
            message = f"{_name(item)}: May only be specified once." if seen else read(item)
            seen = True
            if message:
                yield refusal(ctx, message, item)
                break


# name -> (module, reader); the module "core" is always there, and a space separates modules any
# one of which registers the directive. Readers see exactly one argument unless the name is in
# _ANY_COUNT.
_READERS: dict[str, tuple[str, Reader]] = {
    "deflatewindowsize": ("deflate_module", _between(1, 15, "DeflateWindowSize must be between 1 and 15")),
    "deflatememlevel": ("deflate_module", _between(1, 9, "DeflateMemLevel must be between 1 and 9")),
    "deflatebuffersize": ("deflate_module", _between(1, None, "DeflateBufferSize should be positive")),
    "deflateinflateratiolimit": ("deflate_module", _between(1, None, "DeflateInflateRatioLimit must be positive")),
    "deflateinflateratioburst": ("deflate_module", _between(1, None, "DeflateInflateRatioBurst must be positive")),
    "deflateinflatelimitrequestbody": ("deflate_module", _inflate_limit),
    "deflatealteretag": ("deflate_module", _one_of(("NoChange", "AddSuffix", "Remove"),
                                                   "DeflateAlterETAG accepts only 'NoChange', 'AddSuffix', and 'Remove'")),
    "brotlicompressionquality": ("brotli_module", _between(0, 11, "BrotliCompressionQuality must be between 0 and 11")),
    "brotlicompressionwindow": ("brotli_module", _between(10, 24, "BrotliCompressionWindow must be between 10 and 24")),
    "brotlicompressionmaxinputblock": ("brotli_module", _between(
        16, 24, "BrotliCompressionMaxInputBlock must be between 16 and 24")),
    "brotlialteretag": ("brotli_module", _one_of(("AddSuffix", "NoChange", "Remove"),
                                                 "BrotliAlterETag accepts only 'AddSuffix', 'NoChange' and 'Remove'")),
    "h2maxsessionstreams": ("http2_module", _between(1, None, "value must be > 0")),
    "h2windowsize": ("http2_module", _between(1024, None, "value must be >= 1024")),
    "h2minworkers": ("http2_module", _between(1, None, "value must be > 0")),
    "h2maxworkers": ("http2_module", _between(1, None, "value must be > 0")),
    "h2streammaxmemsize": ("http2_module", _between(1024, None, "value must be >= 1024")),
    "h2maxdataframelen": ("http2_module", _between(0, None, "value must be 0 or larger")),
    "h2pushdiarysize": ("http2_module", _between(0, None, "value must be >= 0")),
    "h2padding": ("http2_module", _h2_padding),
    **{name: ("http2_module", _on_off_h2) for name in (
        "h2direct", "h2push", "h2moderntlsonly", "h2upgrade", "h2copyfiles", "h2earlyhints", "h2outputbuffering",
        "h2proxyrequests")},
    # H2WebSockets On is refused by builds without WebSocket support, in words of their own: not judged
    "h2websockets": ("http2_module", _on_off_h2),
    "rewriteoptions": ("rewrite_module", _rewrite_options),
    "rewritebase": ("rewrite_module", _rewrite_base),
    "directoryindexredirect": ("dir_module", _index_redirect),
    "satisfy": ("access_compat_module", _one_of(("all", "any"), "Satisfy either 'any' or 'all'.")),
    "authmerging": ("authz_core_module", _one_of(("Off", "And", "Or"), "AuthMerging must be one of: Off | And | Or")),
    "proxyvia": ("proxy_module", _one_of(("off", "on", "full", "block"), "ProxyVia must be one of: off | on | full | block")),
    "fancyindexing": ("autoindex_module", _deprecated),
    "ssllog": ("ssl_module", _deprecated),
    "sslloglevel": ("ssl_module", _deprecated),
    "port": ("core", _deprecated),
    "order": ("access_compat_module", _one_of(("allow,deny", "deny,allow", "mutual-failure"), "unknown order")),
    **{name: ("ssl_module", _ssl_not_negative("{name}: Invalid argument '{arg}'"))
       for name in ("sslverifydepth", "sslproxyverifydepth")},
    "sslsessioncachetimeout": ("ssl_module", _ssl_not_negative("{name}: Invalid argument")),
    "sslrenegbuffersize": ("ssl_module", _ssl_not_negative("Invalid size for {name}: {arg}")),
    **{name: ("ssl_module", _ssl_not_negative("{name}: invalid argument")) for name in (
        "sslocspresponsetimeskew", "sslocspresponsemaxage", "sslocsprespondertimeout", "sslstaplingresponsetimeskew",
        "sslstaplingresponsemaxage", "sslstaplingstandardcachetimeout", "sslstaplingerrorcachetimeout",
        "sslstaplingrespondertimeout")},
    **{name: ("ssl_module", _ssl_check_mask(("none", "leaf", "chain"), "no_crl_for_cert_ok"))
       for name in ("sslcarevocationcheck", "sslproxycarevocationcheck")},
    "sslocspenable": ("ssl_module", _ssl_check_mask(("off", "leaf", "on"), "no_ocsp_for_cert_ok")),
    "cacheenable": ("cache_module", _cache_enable),
    "cgiscripttimeout": ("cgi_module", _script_timeout),
    "cgidscripttimeout": ("cgid_module", _script_timeout),
    "threadstacksize": ("mpm_event_module mpm_worker_module", _stack_size),
    "proxybadheader": ("proxy_module", _one_of(("IsError", "Ignore", "StartBody"),
                                               "ProxyBadHeader must be one of: IsError | Ignore | StartBody")),
    "proxyfcgibackendtype": ("proxy_fcgi_module", _one_of(
        ("GENERIC", "FPM"), "ProxyFCGIBackendType requires one of the following arguments: 'GENERIC', 'FPM'")),
    "allowconnect": ("proxy_connect_module", _allow_connect),
    "ldaptrustedmode": ("ldap_module", _one_of(("NONE", "SSL", "TLS", "STARTTLS"),
                                               "Invalid LDAPTrustedMode setting: must be one of NONE, SSL, or TLS/STARTTLS")),
    "ldaptimeout": ("ldap_module", _ldap_timeout),
    "ldapconnectionpoolttl": ("ldap_module", _ldap_pool_ttl),
    "ldapretrydelay": ("ldap_module", _script_timeout),
    "keptbodysize": ("request_module", _kept_body_size),
    "buffersize": ("buffer_module", _buffer_size),
    "regexdefaultoptions": ("core", _regex_default_options),
    "dav": ("dav_module", _dav),
    "substitute": ("substitute_module", _substitute),
    "h2maxworkeridleseconds": ("http2_module", _timeout("Invalid idle limit value")),
    "h2streamtimeout": ("http2_module", _timeout("Invalid timeout value")),
    "cookieexpires": ("usertrack_module", _cookie_expires),
    "cookiedomain": ("usertrack_module", _cookie_domain),
    "cookiestyle": ("usertrack_module", lambda ctx, item: (
        None if item.args[0].lower() in ("netscape", "cookie", "rfc2109", "cookie2", "rfc2965")
        else f"Invalid CookieStyle keyword: '{item.args[0]}'")),
    "cookiesamesite": ("usertrack_module", _one_of(("Strict", "Lax", "None"),
                                                   "CookieSameSite accepts 'Strict', 'Lax', or 'None'")),
    "authncachesocache": ("authn_socache_module", _socache("AuthnCacheSOCache: ", whole=True)),
    "cachesocache": ("cache_socache_module", _socache("", whole=False)),
    "cachedisable": ("cache_module", _cache_disable),
    "errorlogformat": ("core", error_log_format),
    "memcacheconnttl": ("socache_memcache_module", _up_to_an_hour),
    "redisconnpoolttl": ("socache_redis_module", _up_to_an_hour),
    "redistimeout": ("socache_redis_module", _up_to_an_hour),
    "luainherit": ("lua_module", _lua_keyword("LuaInherit", ("none", "parent-first", "parent-last"))),
    "luacodecache": ("lua_module", _lua_keyword("LuaCodeCache", ("never", "stat", "forever"))),
    # register_lua_scope (TAKE123): the scope as written (strcmp), then numbers it reads with atoi
    "luascope": ("lua_module", lambda ctx, item: (
        None if not item.args or item.args[0] in _LUA_SCOPES else
        f"Invalid value for LuaScope, '{item.args[0]}', acceptable values are: "
        "'once', 'request', 'conn', 'thread', 'server'")),
    "proxyhctpsize": ("proxy_hcheck_module", _between(0, None, "Invalid ProxyHCTPsize parameter. Parameter must be >= 0")),
    "mdretryfailover": ("md_module", lambda ctx, item: (
        None if any(p.lname in _MD_SECTIONS for p in item.parents) or atoi(item.args[0]) > 0
        else "invalid argument, must be a number > 0")),
    "mdchallengedns01version": ("md_module", lambda ctx, item: (
        None if any(p.lname in _MD_SECTIONS for p in item.parents) or item.args[0] in ("1", "2")
        else "Only versions `1` and `2` are supported")),
    "authdigestqop": ("auth_digest_module", _digest_qop),
    "authdigestalgorithm": ("auth_digest_module", _digest_algorithm),
    "authdigestnoncelifetime": ("auth_digest_module", _nonce_lifetime),
    "authbasicusedigestalgorithm": ("auth_basic_module", lambda ctx, item: (
        None if item.args[0].lower() in ("off", "md5")
        else f"Invalid algorithm in AuthBasicUseDigestAlgorithm: {item.args[0]}")),
    "sslvhostsnipolicy": ("ssl_module", lambda ctx, item: (
        None if item.args[0].lower() in ("strict", "secure", "authonly", "insecure")
        else f"Invalid SSLVhostSNIPolicy argument '{item.args[0]}'")),
    "readbuffersize": ("core", _strtoff_within(0, 2**32 - 1, "parameter must be a number between 0 and "
                                                             "(4294967295U)): ")),
    "watchdoginterval": ("core", _watchdog_interval),  # mod_watchdog, compiled into Debian's httpd
    "substitutemaxlinelength": ("substitute_module", _max_line_length),
    **{name: ("vhost_alias_module", _vhost_alias) for name in (
        "virtualdocumentroot", "virtualdocumentrootip", "virtualscriptalias", "virtualscriptaliasip")},
    **{name: ("dbd_module", _digits_only) for name in ("dbdmin", "dbdkeep", "dbdmax", "dbdexptime")},
    "sessionexpiryupdateinterval": ("session_module", _between(
        0, None, "SessionExpiryUpdateInterval must be zero (disable) or a positive value")),
    "cachesocachemaxsize": ("cache_socache_module", _strtoff_at_least(
        1024, "CacheSocacheMaxSize argument must be a integer representing the max size of a cached entry (headers "
        "and body), at least 1024 and at most (4294967295U)", 2**32 - 1)),
    "cachesocachemaxtime": ("cache_socache_module", _strtoff_at_least(
        0, "CacheSocacheMaxTime argument must be the maximum amount of time in seconds to cache an entry.")),
    "cachesocachemintime": ("cache_socache_module", _strtoff_at_least(
        0, "CacheSocacheMinTime argument must be the minimum amount of time in seconds to cache an entry.")),
    "cachesocachereadsize": ("cache_socache_module", _strtoff_at_least(
        0, "CacheSocacheReadSize argument must be a non-negative integer representing the max amount of data to "
        "cache in go.")),
    "cachesocachereadtime": ("cache_socache_module", _strtoff_at_least(
        0, "CacheSocacheReadTime argument must be a non-negative integer representing the max amount of time taken "
        "to cache in go.")),
    "cacheminfilesize": ("cache_disk_module", _strtoff_at_least(
        0, "CacheMinFileSize argument must be a non-negative integer representing the min size of a file to cache "
        "in bytes.")),
    "cachemaxfilesize": ("cache_disk_module", _strtoff_at_least(
        0, "CacheMaxFileSize argument must be a non-negative integer representing the max size of a file to cache "
        "in bytes.")),
    "cachereadsize": ("cache_disk_module", _strtoff_at_least(
        0, "CacheReadSize argument must be a non-negative integer representing the max amount of data to cache "
        "in go.")),
    "cachereadtime": ("cache_disk_module", _strtoff_at_least(
        0, "CacheReadTime argument must be a non-negative integer representing the max amount of time taken to "
        "cache in go.")),
    "listentcpdeferaccept": ("core", _between(1, None, "ListenTCPDeferAccept must be > 0")),
    "flushmaxthreshold": ("core", _strtoff_within(0, 2**32 - 1, "parameter must be a number between 0 and "
                                                                "(4294967295U)): ")),
    "flushmaxpipelined": ("core", _strtoff_within(-1, 2**31 - 1, "parameter must be a number between -1 and "
                                                                 "(2147483647): ")),
    "h2maxheaderblocklen": ("http2_module", _between(0, None, "value must be 0 or larger")),
    "h2maxstreamerrors": ("http2_module", _between(0, None, "value must be 0 or larger")),
    "xbithack": ("include_module", _one_of(("off", "on", "full"), "XBitHack must be set to Off, On, or Full")),
    "proxydomain": ("proxy_module", lambda ctx, item: (
        None if item.args[0].startswith(".") else "ProxyDomain: domain name must start with a dot.")),
    "charsetoptions": ("charset_lite_module", _each_word(
        ("ImplicitAdd", "NoImplicitAdd", "TranslateAllMimeTypes", "NoTranslateAllMimeTypes"),
        "Invalid CharsetOptions option: ")),
    "extfilteroptions": ("ext_filter_module", _each_word(
        ("LogStderr", "NoLogStderr", "Onfail=remove", "Onfail=abort"), "Invalid ExtFilterOptions option: ")),
    "ldapreferrals": ("ldap_module", _one_of(("on", "off", "default"), "LDAPReferrals must be 'on', 'off', or 'default'")),
    "ldapreferralhoplimit": ("ldap_module", _between(
        1, None, "LDAPReferralHopLimit must be greater than zero (Use 'LDAPReferrals Off' to disable referral chasing)")),
    "ldapretries": ("ldap_module", _between(0, None, "LDAPRetries must be >= 0")),
    "authldapdereferencealiases": ("authnz_ldap_module", _dereference),
    "davmintimeout": ("dav_module", _between(0, None, "DAVMinTimeout requires a non-negative integer.")),
    "cachelockmaxage": ("cache_module", lambda ctx, item: (
        "CacheLockMaxAge value must be a non-zero positive integer" if (strtol(item.args[0]).value or 0) <= 0
        else None)),
    "cachelastmodifiedfactor": ("cache_module", _float_first),
    **{name: ("md_module", _md(("on", "off"), _MD_ON_OFF, in_sections=True)) for name in (
        "mdcertificatestatus", "mdmuststaple", "mdserverstatus", "mdstapleothers", "mdstapling")},
    **{name: ("md_module", _md(("on", "off"), _MD_ON_OFF)) for name in (
        "mdbaseserver", "mdprofilemandatory", "mdrenewviaari")},
    "mdrequirehttps": ("md_module", _md(("off", "temporary", "permanent"),
                                       "unknown '{arg}', supported parameter values are 'temporary' and 'permanent'",
                                       in_sections=True)),
    **{name: ("md_module", _md(("auto", "automatic", "always", "manual", "stick"), "unknown MDDriveMode {arg}",
                               in_sections=True))
       for name in ("mdrenewmode", "mddrivemode")},
    "mdmatchnames": ("md_module", _md(("all", "servernames"), "invalid argument, must be a 'all' or 'servernames'")),
    "mdcheckinterval": ("md_module", _md_duration("s", "check interval cannot be less than one second")),
    "mdretrydelay": ("md_module", _md_duration("s", positive="minimum delay must be greater than 0")),
    "mdinitialdelay": ("md_module", _md_duration("s", not_negative="initial delay must not be negative")),
    "mdactivationdelay": ("md_module", _md_duration("d")),
    **{name: ("md_module", _md_timeslice) for name in (
        "mdrenewwindow", "mdwarnwindow", "mdstaplingkeepresponse", "mdstaplingrenewwindow")},
    "mdstorelocks": ("md_module", _md_store_locks),
    "mdportmap": ("md_module", _md_port_map),
    "mdhttpproxy": ("md_module", _md_http_proxy),
    "mdmember": ("md_module", _md_members),
    "mdmembers": ("md_module", _md_members),
    "mdcertificatefile": ("md_module", _md_inside_only),
    "mdcertificatekeyfile": ("md_module", _md_inside_only),
    "xml2encdefault": ("xml2enc_module", _xml2enc_default),
    "proxyhtmlbufsize": ("proxy_html_module", _int_slot),
    "chrootdir": ("core", _chroot_dir),  # mod_unixd, compiled into httpd
    "dbdriver": ("dbd_module", _dbd_driver),
    "mdcertificateauthority": ("md_module", _md_ca),
    "mdexternalaccountbinding": ("md_module", _md_eab),
    "authnzfcgidefineprovider": ("authnz_fcgi_module", _fcgi_define),
    "authnzfcgicheckauthnprovider": ("authnz_fcgi_module", _fcgi_check_authn),
    "remoteiptrustedproxylist": ("remoteip_module", _file_opened_at_start),
    "remoteipinternalproxylist": ("remoteip_module", _file_opened_at_start),
    "userdir": ("userdir_module", _requires_argument("UserDir requires an argument.", "word")),
    "remoteipproxyprotocolexceptions": ("remoteip_module", _proxy_protocol_exceptions),
    **{name: ("auth_form_module", _form_string) for name in (
        "authformusername", "authformpassword", "authformlocation", "authformmethod", "authformmimetype",
        "authformbody")},
    "authformsize": ("auth_form_module", _strtoff_at_least(0, "AuthCookieFormSize must be a size in bytes, or zero.")),
    "authformloginrequiredlocation": ("auth_form_module", _string_expression("login required")),
    "authformloginsuccesslocation": ("auth_form_module", _string_expression("login success")),
    "authformlogoutlocation": ("auth_form_module", _string_expression("logout required")),
    "authbasicfake": ("auth_basic_module", _basic_fake),
    "logmessage": ("log_debug_module", _log_message),
    "allow": ("access_compat_module", _allow_deny),
    "deny": ("access_compat_module", _allow_deny),
    **{name: ("session_dbd_module", _dbd_cookie_name) for name in ("sessiondbdcookiename", "sessiondbdcookiename2")},
    "authdigestshmemsize": ("auth_digest_module", _shmem_size),
    "cachekeybaseurl": ("cache_module", _cache_key_base_url),
    "modemstandard": ("dialup_module", lambda ctx, item: (
        None if item.args[0].lower() in _MODEM_STANDARDS else "mod_dialup: Unknown Modem Standard specified.")),
    "sessioncryptopassphrasefile": ("session_crypto_module", _file_opened_at_start),
    "heartbeatmaxservers": ("heartmonitor_module", lambda ctx, item: (
        None if atoi(item.args[0]) == 0 or atoi(item.args[0]) >= 10 else
        "HeartbeatMaxServers: Should be 0 for file storage, or greater or equal than 10 for slotmem")),
    **{name: ("session_cookie_module", _cookie_name) for name in ("sessioncookiename", "sessioncookiename2")},
    "proxyhcexpr": ("proxy_hcheck_module", _hc_expr),
    "proxyhctemplate": ("proxy_hcheck_module", _hc_template),
    "mdomain": ("md_module", _md_domain),
    "mdprivatekeys": ("md_module", _requires_argument("needs to specify the private key type", "argv")),
}
# RAW_ARGS: every word, or none
_ANY_COUNT = {"rewriteoptions", "fancyindexing", "ssllog", "sslloglevel", "sslcarevocationcheck",
              "sslproxycarevocationcheck", "sslocspenable", "cacheenable", "allowconnect", "regexdefaultoptions",
              "errorlogformat", "charsetoptions", "extfilteroptions", "mdmember", "mdmembers", "authdigestqop", "luascope",
              "userdir", "remoteipproxyprotocolexceptions", "sessiondbdcookiename", "sessiondbdcookiename2",
              "sessioncookiename", "sessioncookiename2", "proxyhcexpr", "proxyhctemplate", "mdomain", "mdprivatekeys",
              "allow", "deny", "authbasicfake", "logmessage", "mdportmap", "authnzfcgidefineprovider", "mdcertificateauthority", "mdexternalaccountbinding",
              "authnzfcgicheckauthnprovider"}


# multiviews_match's flags; each word adds one, and some may not be combined
_MULTIMATCH = {"any": 1, "negotiatedonly": 2, "filters": 4, "handlers": 8}
_MULTIMATCH_CLASH = {"any": ("Any is incompatible with NegotiatedOnly, Filters and Handlers", ~1),
                     "negotiatedonly": ("NegotiatedOnly is incompatible with Any, Filters and Handlers", ~2),
                     "filters": ("Filters is incompatible with Any and NegotiatedOnly", 1 | 2),
                     "handlers": ("Handlers is incompatible with Any and NegotiatedOnly", 1 | 2)}


def _multiviews_match(ctx: LintContext) -> Iterator[Finding]:
    """multiviews_match (ITERATE): the flags so far are the section's, carried from one line to
    the next; not judged in a <Location> (ap_check_cmd_context refuses it there first)."""
    state: dict[int, int] = {}  # id(the enclosing section), 0 for a server -> flags so far
    for item in ctx.items_named("multiviewsmatch"):
        if not isinstance(item, ResolvedDirective) or any(p.lname in ("location", "locationmatch")
                                                           for p in item.parents):
            continue
        scope = id(item.parents[-1]) if item.parents else 0
        for word in item.args:
            flag = _MULTIMATCH.get(word.lower())
            if flag is None:
                yield refusal(ctx, f"Unrecognized option '{word}'", item)
                break
            message, clashes = _MULTIMATCH_CLASH[word.lower()]
            if state.get(scope, 0) & clashes:
                yield refusal(ctx, message, item)
                break
            state[scope] = state.get(scope, 0) | flag


def refused(ctx: LintContext) -> Iterator[Finding]:
    if ctx.module_loaded("mime_module"):
        yield from _multiviews_match(ctx)
    yield from _heartbeat_once(ctx)
    if ctx.module_loaded("ext_filter_module"):
        yield from _ext_filter_define(ctx)
    for lname, (module, reader) in _READERS.items():
        if module != "core" and not any(ctx.module_loaded(m) for m in module.split()):
            continue
        for item in ctx.items_named(lname):
            if not isinstance(item, ResolvedDirective) or (lname not in _ANY_COUNT and len(item.args) != 1):
                continue
            if message := reader(ctx, item):
                yield refusal(ctx, message, item)
