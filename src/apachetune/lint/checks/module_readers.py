"""What the readers of the common modules refuse (AT510, in httpd's words): mod_alias's Alias and
Redirect, mod_filter's AddOutputFilterByType, mod_setenvif's missing words, mod_reqtimeout's
RequestReadTimeout, mod_deflate's level, mod_negotiation's ForceLanguagePriority, mod_rewrite's
argument line and flags, mod_headers' Header, mod_proxy's ProxyPass (its parameters' values:
proxy_params.py) and ProxyPassReverse,
mod_ssl's protocols, verify levels, session cache and certificate paths, mod_expires' codes,
mod_log_config's CustomLog condition and mod_autoindex's IndexOptions. Judged only where the
module is loaded (otherwise the directive is AT502's). Regular expressions only where PCRE and
Python's re surely agree (config/pcre.py); ap_expr expressions as httpd's parser reads them
(config/ap_expr.py, through expressions.py).

Facts: the named functions of modules/mappers/mod_alias.c, mod_rewrite.c, mod_negotiation.c;
modules/filters/mod_filter.c, mod_reqtimeout.c, mod_deflate.c; modules/metadata/mod_setenvif.c,
mod_headers.c, mod_expires.c; modules/proxy/mod_proxy.c and proxy_util.c; modules/ssl/
ssl_engine_config.c; modules/loggers/mod_log_config.c; modules/generators/mod_autoindex.c
(httpd 2.4.x)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from apachetune.config import observed
from apachetune.config.conditions import Version, at_least
from apachetune.config.effective import ResolvedDirective
from apachetune.config.pcre import regex_surely_invalid
from apachetune.config.words import WHITESPACE, is_url, join_words, next_word, split_words
from apachetune.lint.checks import filters, proxy_params
from apachetune.lint.checks.core_readers import (
    AFTER_2_4_63,
    buffer_size_error,
    log_directory_missing,
    path_to_check,
    startup_error,
    status_supported,
)
from apachetune.lint.checks.expressions import expression_error
from apachetune.lint.context import LintContext
from apachetune.lint.finding import Finding, Fix
from apachetune.mpm.numbers import atoi, atol, strtol

# Sections inside which a directive reads with cmd->path set (per-directory context).
PATH_SECTIONS = {"directory", "directorymatch", "location", "locationmatch", "files", "filesmatch",
                  "if", "elseif", "else", "proxy", "proxymatch"}


def refused(ctx: LintContext) -> Iterator[Finding]:
    if ctx.module_loaded("cache_disk_module"):
        yield from _cache_dirs(ctx)
    if not ctx.from_dump and ctx.module_loaded("log_config_module"):  # a dump is another machine's
        yield from _custom_log_directories(ctx)
    if ctx.module_loaded("proxy_module") and at_least(Version.parse(ctx.eff.httpd_version), "2.4.48"):
        yield from _error_overrides(ctx)
    readers = _READERS if ctx.from_dump else (*_READERS, *_SSL_FILES)
    for lname, module, reader in readers:
        if not ctx.module_loaded(module):
            continue
        for item in ctx.items_named(lname):
            if isinstance(item, ResolvedDirective) and (message := reader(ctx, item)):
                yield ctx.finding("AT510", startup_error(message), item, (),
                                  _fix(item, message))


def _fix(item: ResolvedDirective, message: str) -> Fix | None:
    """The one unambiguous repair: Header's condition written where mod_headers reads it
    (`Header set X v always` -> `Header always set X v`)."""
    if item.lname == "header" and message in ("Unknown parameter: always", "Unknown parameter: onsuccess"):
        words = [item.args[-1], *item.args[:-1]]
        return Fix({item.name: join_words(words)}, f"'{item.args[-1]}' before the action, where mod_headers reads it")
    return None


def _in_path(item: ResolvedDirective) -> bool:
    return any(p.lname in PATH_SECTIONS for p in item.parents)


# An expression's judge: (text, string result?) -> httpd's message or None.
Judge = Callable[[str, bool], "str | None"]


def _judge(ctx: LintContext) -> Judge:
    return lambda text, string_result: expression_error(ctx, text, string_result)


def _alias(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """add_alias with one argument: an expression for the enclosing <Location>'s path."""
    if len(item.args) != 1:
        return None
    if not _in_path(item):
        return "Alias must have two arguments when used globally"
    if any(p.lname in _NOT_ALIAS_SECTIONS for p in item.parents):
        return None  # ap_check_cmd_context's refusal, not modelled here
    err = expression_error(ctx, item.args[0], True)
    return f"Cannot parse alias expression '{item.args[0]}': {err}" if err else None


_NOT_ALIAS_SECTIONS = {"directory", "directorymatch", "files", "filesmatch"}


def redirect_error(args: list[str], in_path: bool, judge: Judge | None = None, status: int = 302,
                   use_regex: bool = False) -> str | None:
    """add_redirect_internal's verdict on `Redirect [status] URL-path [URL]` (in a section's
    path, one URL is an expression, judged by `judge` when given). `status`: the directive's
    own (RedirectPermanent's 301); `use_regex`: RedirectMatch."""
    arg1 = args[0]
    arg2 = args[1] if len(args) > 1 else None
    arg3 = args[2] if len(args) > 2 else None
    grok = 1
    keyword = arg1.lower()
    if keyword in ("permanent", "temp", "seeother"):
        status = {"permanent": 301, "temp": 302, "seeother": 303}[keyword]
    elif keyword == "gone":
        status, grok = 410, -1
    elif arg1[:1].isascii() and arg1[:1].isdigit():
        status = atoi(arg1)
        if not 300 <= status < 400:
            grok = -1
    else:
        grok = 0
    if arg3 is not None and grok == 0:
        return "Redirect: invalid first argument (of three)"
    if in_path and ((grok > 0 and arg2 is not None and arg3 is None) or (grok == 0 and arg2 is None)):
        expression = arg2 if grok else arg1  # for the enclosing section's path
        err = judge(expression, True) if judge and expression is not None else None
        return f"Cannot parse redirect expression '{expression}': {err}" if err else None
    if in_path and grok < 0 and arg2 is None:
        return None  # a bare status for the enclosing section's path
    fake, url = arg2, arg3
    if arg3 is None and grok == 0:
        fake, url = arg1, arg2
    if use_regex and fake is not None and regex_surely_invalid(fake):
        return "Regular expression could not be compiled."
    if 300 <= status < 400:
        if url is None:
            return "URL to redirect to is missing"
        if not use_regex and not is_url(url) and not url.startswith("/"):
            return "Redirect to non-URL"
    elif url is not None:
        return "Redirect URL not valid for this status"
    return None


def _redirect(ctx: LintContext, item: ResolvedDirective) -> str | None:
    return redirect_error(item.args, _in_path(item), _judge(ctx)) if 1 <= len(item.args) <= 3 else None


# RedirectMatch (TAKE23) and add_redirect2's RedirectTemp / RedirectPermanent (TAKE2): the same
# reader, with their own status and the regex
_REDIRECT_KINDS = {"redirectmatch": (302, True, (2, 3)), "redirecttemp": (302, False, (2, 2)),
                   "redirectpermanent": (301, False, (2, 2))}


def _redirect_kind(ctx: LintContext, item: ResolvedDirective) -> str | None:
    status, use_regex, (low, high) = _REDIRECT_KINDS[item.lname]
    if not low <= len(item.args) <= high:
        return None
    return redirect_error(item.args, _in_path(item), _judge(ctx), status, use_regex)


def _alias_match(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """add_alias_regex: the regular expression compiled at start-up."""
    if len(item.args) == 2 and regex_surely_invalid(item.args[0]):
        return "Regular expression could not be compiled."
    return None


def _filter_by_type(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """filter_bytype: two words at least, then each provider of "A;B" (apr_strtok: empty ones skipped)."""
    if len(item.args) < 2:
        return "AddOutputFilterByType requires at least two arguments"
    return None if ctx.from_dump else filters.unknown_provider(ctx, [n for n in item.args[0].split(";") if n])


def _setenvif(ctx: LintContext, item: ResolvedDirective) -> str | None:
    words = list(item.args)
    name = _SETENVIF_NAMES[item.lname]  # as the module registered it, whatever the file's case
    if item.lname == "setenvifexpr":
        return f"Missing expression for {name}" if not words or not words[0] else None
    if item.lname.startswith("setenvif"):
        if not words or not words[0]:
            return f"Missing header-field name for {name}"
        words = words[1:]
    if not words or not words[0]:
        return f"Missing regular expression for {name}"
    if regex_surely_invalid(words[0]):
        return f"{name} regex could not be compiled."
    if not any(words[1:]):
        return f"Missing envariable expression for {name}"
    return None


_SETENVIF_NAMES = {"setenvif": "SetEnvIf", "setenvifnocase": "SetEnvIfNoCase", "browsermatch": "BrowserMatch",
                   "browsermatchnocase": "BrowserMatchNoCase", "setenvifexpr": "SetEnvIfExpr"}
def _parse_int(text: str) -> tuple[str | None, int]:
    """mod_reqtimeout's parse_int: strtol, the whole text, not negative."""
    read = strtol(text)
    if read.value is None:
        return f"Value '{text}' not numerical", 0
    if read.rest:
        return f"Cannot parse '{read.rest}'", 0
    value = atoi(text)
    return ("Value must be non-negative", 0) if value < 0 else (None, value)


def reqtimeout_error(args: list[str], version: str = "2.4.71") -> str | None:
    stages = ("header", "body", "handshake") if at_least(Version.parse(version), "2.4.39") else ("header", "body")
    for word in args:
        key, eq, val = word.partition("=")
        if not eq:
            return "Invalid RequestReadTimeout parameter. Parameter must be in the form 'key=value'"
        err = _reqtimeout_param(key, val, stages)
        if err:
            return f"RequestReadTimeout: {key}={val}: {err}"
    return None


def _reqtimeout_param(key: str, val: str, stages: tuple[str, ...]) -> str | None:
    if key.lower() not in stages:
        return "Unknown RequestReadTimeout parameter"
    at = val.lower().find(",minrate=")
    if at < 0:
        if "-" in val:
            return "Must set MinRate option if using timeout range"
        return _parse_int(val)[0]
    err, rate = _parse_int(val[at + len(",minrate="):])
    if err:
        return err
    if rate == 0:
        return "Minimum data rate must be larger than 0"
    initial, dash, maximum = val[:at].partition("-")
    top = 0
    if dash:
        err, top = _parse_int(maximum)
        if err:
            return err
    err, first = _parse_int(initial)
    if err:
        return err
    if top and first >= top:
        return "Maximum timeout must be larger than initial timeout"
    return None


def _reqtimeout(ctx: LintContext, item: ResolvedDirective) -> str | None:
    return reqtimeout_error(item.args, ctx.eff.httpd_version)


def _deflate_level(ctx: LintContext, item: ResolvedDirective) -> str | None:
    if len(item.args) == 1 and not 1 <= atoi(item.args[0]) <= 9:
        return "Compression Level must be between 1 and 9"
    return None


def _force_priority(ctx: LintContext, item: ResolvedDirective) -> str | None:
    seen: set[str] = set()
    for word in item.args:
        lower = word.lower()
        if lower == "none":
            if seen - {"none"}:
                return "Cannot combine ForceLanguagePriority options with None"
        elif lower in ("prefer", "fallback"):
            if "none" in seen:
                return f"Cannot combine ForceLanguagePriority options None and {lower.capitalize()}"
        else:
            return f"Invalid ForceLanguagePriority option {word}"
        seen.add(lower)
    return None


# mod_rewrite's flags: the first letter, then what may follow it (any case), by version.
_RULE_FLAGS: dict[str, tuple[tuple[str, str], ...]] = {
    "b": (("", ""), ("ackrefescaping", ""), ("ne", "2.4.57"), ("np", ""), ("ackrefernoplus", ""),
          ("ctls", "2.4.57")),
    "c": (("", ""), ("hain", ""), ("o", ""), ("ookie", "")),
    "e": (("", ""), ("nv", ""), ("nd", "")),
    "f": (("", ""), ("orbidden", "")), "g": (("", ""), ("one", "")), "h": (("", ""), ("andler", "")),
    "l": (("", ""), ("ast", "")),
    "n": (("e", ""), ("oescape", ""), ("", ""), ("ext", ""), ("s", ""), ("osubreq", ""), ("c", ""), ("ocase", "")),
    "p": (("", ""), ("roxy", ""), ("t", ""), ("assthrough", "")),
    "q": (("sa", ""), ("sappend", ""), ("sd", ""), ("sdiscard", ""), ("sl", ""), ("slast", "")),
    "r": (("", ""), ("edirect", "")), "s": (("", ""), ("kip", "")), "t": (("", ""), ("ype", "")),
    "u": (("nsafeprefixstat", "2.4.60"), ("nsafeallow3f", "2.4.60"), ("nc", "2.4.62")),
}
_COND_FLAGS = frozenset({"nocase", "nc", "ornext", "or", "novary", "nv"})


def _flag_items(field: str) -> list[tuple[str, str]] | str:
    """cmd_parseflagfield: [key[=value],...] split as mod_rewrite splits it."""
    if not (field.startswith("[") and field.endswith("]")) or len(field) < 2:
        return "bad flag delimiters"
    items = []
    for part in field[1:-1].split(","):  # an empty part ("[L,]", "[]") is the flag ''
        key, _, value = part.strip(WHITESPACE).partition("=")
        items.append((key, value))
    return items


def rewrite_rule_flag_error(key: str, value: str, version: str = "2.4.71") -> str | None:
    """cmd_rewriterule_setflag's verdict on one flag."""
    first, rest = key[:1].lower(), key[1:].lower()
    if first == "d":
        return None  # mod_rewrite takes any D... flag (its 'd' case has no error branch)
    known = [tail for tail, since in _RULE_FLAGS.get(first, ()) if not since or at_least(Version.parse(version), since)]
    if rest not in known:
        return f"unknown flag '{key}'"
    if first == "b" and rest == "ne" and not value:
        return "flag 'BNE' wants a list of characters (i.e. [BNE=...])"
    if first == "r" and value[:1].isascii() and value[:1].isdigit():
        code = atoi(value)
        if code != 500 and not status_supported(value, version):
            return f"invalid HTTP response code '{value}' for flag 'R'"
    return None


def _rewrite(ctx: LintContext, item: ResolvedDirective) -> str | None:
    name = "RewriteRule" if item.lname == "rewriterule" else "RewriteCond"
    if len(item.args) < 2:
        return f"{name}: bad argument line '{' '.join(item.args)}'"
    if len(item.args) < 3:
        return _rewrite_regex(ctx, item)
    items = _flag_items(item.args[2])
    if isinstance(items, str):
        return f"{name}: {items}"
    for key, value in items:
        if name == "RewriteCond":
            err = None if key.lower() in _COND_FLAGS else f"unknown flag '{key}'"
        else:
            err = rewrite_rule_flag_error(key, value, ctx.eff.httpd_version)
        if err:
            return f"{name}: {err}"
    return _rewrite_regex(ctx, item)


_HEADER_ACTIONS = frozenset({"set", "setifempty", "add", "append", "merge", "unset", "echo", "edit", "edit*", "note"})
_HEADER_TAGS = frozenset("Dtesl ib".replace(" ", ""))


def header_error(name: str, words: list[str], judge: Judge | None = None) -> str | None:
    """mod_headers' header_cmd and header_inout_cmd on Header / RequestHeader (regular
    expressions are not judged; expr= clauses by `judge` when given)."""
    rest = list(words)
    action = rest.pop(0) if rest else ""
    if name == "Header" and action.lower() in ("always", "onsuccess"):
        action = rest.pop(0) if rest else ""
    header, rest = (rest[0] if rest else ""), rest[1:]
    if len(rest) > 3:
        return f"{name} has too many arguments"
    value, subs, envclause = _padded(rest)
    act = action.lower()
    if act not in _HEADER_ACTIONS:
        return ("first argument must be 'add', 'set', 'setifempty', 'append', 'merge', 'unset', 'echo', "
                "'note', 'edit', or 'edit*'.")
    if act in ("edit", "edit*"):
        if subs is None:
            return "Header edit requires a match and a substitution"
        if value is not None and regex_surely_invalid(value):
            return "Header edit regex could not be compiled"
    elif envclause is not None:
        return "Too many arguments to directive"
    else:
        envclause = subs
    if act in ("unset", "echo"):
        if value is not None and envclause is not None:
            return "header unset takes two arguments" if act == "unset" else "Header echo takes two arguments"
        if act == "echo" and name != "Header":
            return "Header echo only valid on Header directives"
        if act == "echo" and regex_surely_invalid(header):
            return "Header echo regex could not be compiled"
        return _condition_error(value if value is not None else envclause, judge)
    if value is None:
        return "Header requires three arguments"
    return _condition_error(envclause, judge) or _format_error(subs if act in ("edit", "edit*") else value, judge)


def _padded(words: list[str]) -> tuple[str | None, str | None, str | None]:
    padded: list[str | None] = [*words, None, None, None]
    return padded[0], padded[1], padded[2]


def _condition_error(envclause: str | None, judge: Judge | None) -> str | None:
    if envclause is None:
        return None
    lower = envclause.lower()
    if lower.startswith("env="):
        if envclause[4:] in ("", "!"):
            return "error: missing environment variable name. envclause should be in the form env=envar "
        return None
    if lower.startswith("expr="):
        err = judge(envclause[5:], False) if judge else None
        return f"Can't parse envclause/expression: {err}" if err else None
    if lower == "early":
        return None
    return f"Unknown parameter: {envclause}"


def _format_error(text: str | None, judge: Judge | None) -> str | None:
    """parse_format_string: expr= (case-sensitive) is a string expression; otherwise %% and a
    final % are literal, %X and %{...}X need a known tag."""
    if text is None:
        return None
    if text.startswith("expr="):
        err = judge(text[5:], True) if judge else None
        return f"Can't parse value expression : {err}" if err else None
    i = 0
    while True:
        i = text.find("%", i)
        if i < 0 or i + 1 >= len(text) or text[i + 1] == "%":
            if i < 0 or i + 1 >= len(text):
                return None
            i += 2
            continue
        j = i + 1
        if text[j] == "{":
            close = text.find("}", j)
            j = len(text) if close < 0 else close + 1
        tag = text[j] if j < len(text) else ""
        if tag not in _HEADER_TAGS:
            return f"Unrecognized header format %{tag}"
        i = j + 1


def _header(ctx: LintContext, item: ResolvedDirective) -> str | None:
    return header_error("Header" if item.lname == "header" else "RequestHeader", item.args, _judge(ctx))


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


def _match_worker_url(url: str) -> str:
    """A regex worker's URL as ap_proxy_define_worker_ex parses it: the $n references of its
    :port part (from the first one to the path) cut out, the rest kept."""
    scheme_end = url.find("://")
    if scheme_end < 0:
        return url
    pos = scheme_end + 3
    while pos < len(url) and url[pos] not in ":/":
        pos += 1
    if pos >= len(url) or url[pos] != ":":
        return url
    pos += 1
    while pos < len(url) and url[pos] != "/" and not (url[pos] == "$" and url[pos + 1:pos + 2].isdigit()):
        pos += 1
    if pos < len(url) and url[pos] == "$":
        path = url.find("/", pos)
        return url[:pos] + (url[path:] if path >= 0 else "")
    return url


def worker_url_error(url: str, regex: bool = False) -> str | None:
    """ap_proxy_define_worker_ex's verdict on a worker URL: a scheme and a host
    ("unix:/path|scheme://..." needs no host); a regex worker's port may hold $n references."""
    shown = url
    if regex:
        url = _match_worker_url(url)
    socket_path = False
    target = url
    if url[:5].lower() == "unix:" and "|" in url[5:]:
        socket_path, target = True, url[url.index("|", 5) + 1:]
    m = _SCHEME.match(target)
    if not m:
        return f"URL must be absolute!: {url}"
    rest = target[m.end():]
    host = ""
    if rest.startswith("//"):
        hostinfo = re.split(r"[/?#]", rest[2:], maxsplit=1)[0].rpartition("@")[2]
        if hostinfo.startswith("["):
            host, _, port = hostinfo[1:].partition("]")
            port = port[1:] if port.startswith(":") else port
        else:
            host, _, port = hostinfo.partition(":")
        if port and not (port.isascii() and port.isdigit()):
            return f"Unable to parse URL: {shown}"
    return None if host or socket_path else f"URL must be absolute!: {shown}"


def proxy_pass_error(name: str, words: list[str], location: bool) -> str | None:
    """add_pass: the path (unless in a <Location>), the URL, flags and key=value parameters
    (their values: proxy_params.py)."""
    fake: str | None = "(location)" if location else None
    real: str | None = None
    regex = name == "ProxyPassMatch"
    for word in words:
        if fake is None:
            if word == "~":
                if name == "ProxyPassMatch":
                    return "ProxyPassMatch invalid syntax ('~' usage)."
                regex = True
                continue
            fake = word
        elif real is None:
            real = word
        elif word.lower() in ("nocanon", "interpolate", "noquery"):
            continue
        elif "=" not in word:
            if location and real.startswith("/"):
                return "ProxyPass|ProxyPassMatch can not have a path when defined in a location."
            return "Invalid ProxyPass|ProxyPassMatch parameter. Parameter must be in the form 'key=value'."
        elif word.lower().startswith("mapping=") and word[8:].lower() not in ("encoded", "servlet"):
            return "unknown mapping"
    if real is None:
        return "ProxyPass|ProxyPassMatch needs a path when not defined in a location"
    if real[:5].lower() == "unix:" and real.endswith("|") and "|" in real[5:] and real.index("|", 5) == len(real) - 1:
        return 'ProxyPass|ProxyPassMatch uses an invalid "unix:" URL'
    if real == "!" or real[:11].lower() == "balancer://":
        return None  # no worker; a balancer's parameters
    err = worker_url_error(real, regex)
    return f"ProxyPass {err}" if err else None


def _proxy_pass(ctx: LintContext, item: ResolvedDirective) -> str | None:
    location = any(p.lname in ("location", "locationmatch") for p in item.parents)
    name = "ProxyPassMatch" if item.lname == "proxypassmatch" else "ProxyPass"
    return proxy_pass_error(name, item.args, location) or proxy_params.params_error(ctx, item, location)


def _proxy_pass_reverse(ctx: LintContext, item: ResolvedDirective) -> str | None:
    if not 1 <= len(item.args) <= 3:
        return None  # the count is AT503's
    second = item.args[1] if len(item.args) > 1 else None
    # cmd->path: a <Location>'s or a <Proxy>'s (in <Directory>, <Files> or <If> refused before)
    if any(p.lname in ("location", "locationmatch", "proxy", "proxymatch") for p in item.parents):
        if second is not None and second.lower() != "interpolate":
            return "ProxyPassReverse can not have a path when defined in a location"
    elif second is None or second.lower() == "interpolate":
        return "ProxyPassReverse needs a path when not defined in a location"
    return None


def _de_socketfy_fails(url: str) -> bool:
    """ap_proxy_de_socketfy returns NULL: "unix:...|" followed by no scheme."""
    return url[:5].lower() == "unix:" and "|" in url[5:] and ":" not in url[url.index("|", 5) + 1:]


def _balancer_member(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """add_member: the balancer (the section's path, else the first plain word) and the member's
    URL, then the worker's URL and its key=value parameters (unless an earlier member may share
    the worker: proxy_params.shared)."""
    section = next((p for p in reversed(item.parents) if p.lname in PATH_SECTIONS), None)
    path = section.args[0].rstrip(">") if section is not None and section.args else None
    name = None
    params = []
    for word in item.args:
        if "=" in word:
            params.append(word)
        elif path is None:
            path = word
        elif name is None:
            name = word
        elif section is not None:
            return "BalancerMember can not have a balancer name when defined in a location"
        else:
            return "Invalid BalancerMember parameter. Parameter must be in the form 'key=value'"
    if path is None:
        return "BalancerMember must define balancer name when outside <Proxy > section"
    if name is None:
        return "BalancerMember must define remote proxy server"
    if _de_socketfy_fails(name):
        return 'BalancerMember uses an invalid "unix:" URL'
    path = path.lower()
    colon = path.find(":")
    if colon < 0 or path[colon + 1:colon + 3] != "//" or len(path) == colon + 3:
        return f"BalancerMember Bad syntax for a balancer name ({path})"
    err = worker_url_error(name)
    if err:
        return f"BalancerMember {err}"
    # a worker is shared only within its balancer (ap_proxy_get_worker(balancer, ...))
    if "$" in name or proxy_params.shared(ctx, item, name, frozenset({"balancermember"})):
        return None
    hcheck = ctx.module_loaded("proxy_hcheck_module")
    for key, val in proxy_params.table(params):
        if err := proxy_params.worker_param_error(key, val, ctx.eff.httpd_version, hcheck):
            return f"BalancerMember {err}"
    return None


def _proxy_set(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """set_proxy_param: the worker or balancer (the enclosing <Proxy>'s, else the first word: one
    no directive anywhere names is not found), then each key=value applied in order."""
    parent = item.parents[-1] if item.parents else None
    in_proxy = parent is not None and parent.lname in ("proxy", "proxymatch")
    if in_proxy:
        assert parent is not None
        name, rest = (parent.args[0].split(">")[0] if parent.args else ""), item.args
    else:
        name, rest = (item.args[0], item.args[1:]) if item.args else ("", [])
    balancer = name[:9].lower() == "balancer:"
    if not balancer and _de_socketfy_fails(name):
        return 'ProxySet uses an invalid "unix:" URL'
    # (a name without "://" names no worker: httpd's lookups parse scheme://host first)
    if not in_proxy and name[:5].lower() != "unix:" and ("://" not in name or not _named_anywhere(ctx, name)):
        return f"ProxySet can not find '{name}' {'Balancer' if balancer else 'Worker'}."
    lbmethods = None
    if not ctx.third_party_may_register("providers"):
        lbmethods = frozenset(n for module, n in proxy_params.LBMETHODS.items() if ctx.module_loaded(module))
    hcheck = ctx.module_loaded("proxy_hcheck_module")
    for word in rest:
        if "=" not in word:
            return "Invalid ProxySet parameter. Parameter must be in the form 'key=value'"
        key, _, val = word.partition("=")
        err = (proxy_params.balancer_param_error(key, val, lbmethods) if balancer
               else proxy_params.worker_param_error(key, val, ctx.eff.httpd_version, hcheck))
        if err:
            return f"ProxySet: {err} {key}={val}; {name}"
    return None


def _named_anywhere(ctx: LintContext, name: str) -> bool:
    """Whether any worker-defining line or <Proxy> names name's host (a lenient stand-in for
    httpd's lookup among the workers of that server defined so far: any server, any order,
    any port)."""
    wanted = _host(name)
    for it in ctx.eff.in_order():
        if it.lname in proxy_params.DEFINES_WORKERS and any(
                "://" in w and _host(w.split(">")[0]) == wanted for w in it.args):
            return True
    return False


def _host(url: str) -> str:
    hostinfo = url.partition("://")[2].split("/", 1)[0].rpartition("@")[2].lower()
    return hostinfo[1:].partition("]")[0] if hostinfo.startswith("[") else hostinfo.partition(":")[0]


_PROTOCOLS = frozenset({"sslv3", "tlsv1", "tlsv1.1", "tlsv1.2", "tlsv1.3", "all"})


def ssl_protocol_error(name: str, words: list[str]) -> str | None:
    """ssl_cmd_protocol_parse (OpenSSL built without SSLv3, as every current distribution's)."""
    for word in words:
        sign = word[:1] if word[:1] in ("+", "-") else ""
        proto = word[len(sign):].lower()
        if proto == "sslv2":
            if sign != "-":
                return "SSLProtocol: SSLv2 is no longer supported"
        elif proto == "sslv3":
            if sign != "-":
                return "SSLv3 not supported by this version of OpenSSL"
        elif proto not in _PROTOCOLS:
            return f"{name}: Illegal protocol '{word[len(sign):]}'"
    return None


def _ssl_protocol(ctx: LintContext, item: ResolvedDirective) -> str | None:
    return ssl_protocol_error("SSLProtocol" if item.lname == "sslprotocol" else "SSLProxyProtocol", item.args)


def _ssl_verify(ctx: LintContext, item: ResolvedDirective) -> str | None:
    if len(item.args) == 1 and item.args[0].lower() not in ("none", "off", "optional", "require", "on",
                                                              "optional_no_ca"):
        name = "SSLVerifyClient" if item.lname == "sslverifyclient" else "SSLProxyVerify"
        return f"{name}: Invalid argument '{item.args[0]}'"
    return None


# The providers each socache module registers (shmcb is also the "default" one); httpd lists
# the known names in its hash table's order, which changes from run to run.
SOCACHE_PROVIDERS = {"socache_shmcb_module": ("shmcb", "default"), "socache_dbm_module": ("dbm",),
                     "socache_memcache_module": ("memcache",), "socache_redis_module": ("redis",),
                     "socache_dc_module": ("dc",)}


def shmcb_error(arg: str) -> str | None:
    """socache_shmcb_create on "path(size)"."""
    if not arg:
        return None
    open_at = arg.rfind("(")
    if open_at >= 0:
        if not arg.endswith(")"):
            return "Invalid argument: no closing parenthesis or cache size missing after pathname with parenthesis"
        size = arg[open_at + 1:-1]
        m = re.fullmatch(r"[ \t\n\v\f\r]*[+-]?[0-9]+", size)
        if not m:
            return "Invalid argument: cache size not numerical"
        if int(size) < 8192:
            return "Invalid argument: size has to be >= 8192 bytes"
        return None
    if arg.endswith(")"):
        return "Invalid argument: no opening parenthesis"
    return None


def _session_cache(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """ssl_cmd_SSLSessionCache: the cache's provider must be a loaded socache module."""
    if len(item.args) == 1 and item.args[0].lower() in ("none", "nonenotnull"):
        return None
    return _socache_error(ctx, item, "SSLSessionCache", "session cache", ".")


def _stapling_cache(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """ssl_cmd_SSLStaplingCache: as SSLSessionCache, without its "none"."""
    return _socache_error(ctx, item, "SSLStaplingCache", "stapling cache", "")


def _socache_error(ctx: LintContext, item: ResolvedDirective, name: str, kind: str, stop: str) -> str | None:
    """The provider before the first ':' (ap_lookup_provider, case-sensitive) among the loaded
    socache modules', then shmcb's reading of what follows."""
    if len(item.args) != 1 or ctx.from_dump:
        return None  # (a dump shows no LoadModule: the socache modules define no directive to see)
    if any(m not in SOCACHE_PROVIDERS and m.startswith("socache_") for m in ctx.eff.modules):
        return None  # a socache module apachetune has no table for
    provider, _, rest = item.args[0].partition(":")
    loaded = [n for module, names in SOCACHE_PROVIDERS.items() if ctx.module_loaded(module) for n in names]
    if provider in loaded:
        err = shmcb_error(rest) if provider in ("shmcb", "default") else None
        return f"{name}: {err}" if err else None
    return (f"{name}: '{provider}' {kind} not supported (known names: {','.join(loaded)}){stop} "
            f"Maybe you need to load the appropriate socache module (mod_socache_{provider}?){stop}")


_EXPIRES_TYPES = (("years", 1), ("months", 2), ("weeks", 1), ("days", 1), ("hours", 1), ("minutes", 2),
                  ("seconds", 1))


def _starts(word: str, key: str, n: int) -> bool:
    """strncasecmp(word, key, n) == 0 (a shorter word meets key's next letter with its NUL)."""
    return len(word) >= n and word[:n].lower() == key[:n]


def expires_code_error(code: str) -> str | None:
    """mod_expires' check_code: "A<seconds>", "M<seconds>", or <base> [plus] {<num> <type>}*."""
    if code[:1] in ("A", "M"):
        return None
    words = split_words(code) or [""]
    base, rest = words[0], words[1:]
    if not (_starts(base, "now", 1) or _starts(base, "access", 1) or _starts(base, "modification", 1)):
        return f"bad expires code, unrecognised <base> '{base}'"
    if rest and _starts(rest[0], "plus", 1):
        rest = rest[1:]
    while rest:
        num, rest = rest[0], rest[1:]
        if not (num[:1].isascii() and num[:1].isdigit()):
            return f"bad expires code, numeric value expected <num> '{num}'"
        if not rest:
            return "bad expires code, missing <type>"
        unit, rest = rest[0], rest[1:]
        if not any(_starts(unit, key, n) for key, n in _EXPIRES_TYPES):
            return f"bad expires code, unrecognised <type>'{unit}'"
    return None


def _expires(ctx: LintContext, item: ResolvedDirective) -> str | None:
    if item.lname == "expiresdefault" and len(item.args) == 1:
        err = expires_code_error(item.args[0])
        return f"'ExpiresDefault {item.args[0]}': {err}" if err else None
    if item.lname == "expiresbytype" and len(item.args) == 2:
        mime, code = item.args
        if "/" not in mime:
            return "Invalid mimetype: should contain a slash"
        err = expires_code_error(code)
        return f"'ExpiresByType {mime} {code}': {err}" if err else None
    return None


# The log format handlers each module registers (log_pfn_register).
_LOG_HANDLERS = {"log_config_module": ("A", "B", "C", "D", "H", "L", "P", "R", "T", "U", "V", "X", "^ti", "^to", "a",
                                       "b", "e", "f", "h", "i", "k", "l", "m", "n", "o", "p", "q", "r", "s", "t", "u",
                                       "v"),
                 "logio_module": ("I", "O", "S", "^FB"), "ssl_module": ("c", "x")}


def log_format_error(fmt: str, handlers: frozenset[str]) -> str | None:
    """mod_log_config's parse_log_item over a format string."""
    i = 0
    while True:
        i = fmt.find("%", i)
        if i < 0:
            return None
        i += 1
        if i < len(fmt) and fmt[i] == "%":
            i += 1
            continue
        while True:
            if i >= len(fmt):
                return "Ran off end of LogFormat parsing args to some directive"
            c = fmt[i]
            if c in "!<>," or c.isascii() and c.isdigit():
                i += 1
            elif c == "{":
                close = fmt.find("}", i)
                i = len(fmt) if close < 0 else close + 1
            elif c == "^" and len(fmt) >= i + 3 and fmt[i:i + 3] in handlers:
                i += 3
                break
            elif c in handlers:
                i += 1
                break
            else:
                return f"Unrecognized LogFormat directive %{c}"


def _log_handlers(ctx: LintContext) -> frozenset[str] | None:
    """The handlers of the loaded modules, or None when a module apachetune has no table for is
    loaded (it may register more)."""
    if ctx.from_dump or ctx.third_party_may_register("log handlers"):
        return None  # a dump shows no LoadModule: mod_logio's and mod_ssl's handlers may be there
    return frozenset(h for module, names in _LOG_HANDLERS.items() if ctx.module_loaded(module) for h in names)


def _log_format(ctx: LintContext, item: ResolvedDirective) -> str | None:
    handlers = _log_handlers(ctx)
    if handlers is None or not 1 <= len(item.args) <= (2 if item.lname == "logformat" else 3):
        return None
    fmt = item.args[0] if item.lname == "logformat" else (item.args[1] if len(item.args) > 1 else "")
    if item.lname == "customlog" and "%" not in fmt:
        return None  # a nickname
    return log_format_error(fmt, handlers)


def _custom_log(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """add_custom_log's condition clause: env=[!]VAR or expr=EXPR (its error is the parser's own)."""
    if len(item.args) > 1 and (err := _log_format(ctx, item)):
        return err
    if len(item.args) != 3:
        return None
    clause = item.args[2]
    if clause[:4].lower() == "env=":
        return "missing environment variable name" if clause[4:] in ("", "!") else None
    if clause[:5].lower() == "expr=":
        return "missing condition" if clause[5:] == "" else expression_error(ctx, clause[5:])
    return "error in condition clause"


_INDEX_FLAGS = frozenset(k.lower() for k in (
    "FancyIndexing", "FoldersFirst", "HTMLTable", "IconsAreLinks", "IgnoreCase", "IgnoreClient", "ScanHTMLTitles",
    "SuppressColumnSorting", "SuppressDescription", "SuppressHTMLPreamble", "SuppressIcon", "SuppressLastModified",
    "SuppressSize", "SuppressRules", "TrackModified", "VersionSort", "XHTML", "ShowForbidden", "AddAltClass",
    "UseOldDateFormat", "IconWidth", "IconHeight"))


def index_options_error(words: list[str]) -> str | None:
    """mod_autoindex's add_opts on one IndexOptions line."""
    none_first = False
    for word in words:
        sign = word[:1] if word[:1] in ("+", "-") else ""
        w = word[len(sign):]
        key, eq, value = w.partition("=")
        lower = key.lower()
        if lower == "none" and not eq:
            if sign:
                return "Cannot combine '+' or '-' with 'None' keyword"
            none_first = True
            continue
        if not eq and lower in _INDEX_FLAGS:
            if none_first and not sign and lower not in ("iconwidth", "iconheight", "useolddateformat"):
                return "Cannot combine other IndexOptions keywords with 'None'"
            continue
        if not eq and lower in ("namewidth", "descriptionwidth"):
            if sign != "-":
                name = "NameWidth" if lower == "namewidth" else "DescriptionWidth"
                return f"{name} with no value may only appear as '-{name}'"
            continue
        if eq and lower in ("iconwidth", "iconheight", "namewidth", "descriptionwidth"):
            name = {"iconwidth": "IconWidth", "iconheight": "IconHeight", "namewidth": "NameWidth",
                    "descriptionwidth": "DescriptionWidth"}[lower]
            if sign == "-":
                return f"Cannot combine '-' with {name}=n"
            least = {"namewidth": 5, "descriptionwidth": 12}.get(lower)
            width = atoi(value)
            if least and value[:1] != "*" and width and width < least:
                return f"{name} value must be greater than {least}"
            continue
        if eq and lower in ("type", "charset"):
            continue
        return "Invalid directory indexing option"
    return None


def _index_options(ctx: LintContext, item: ResolvedDirective) -> str | None:
    return index_options_error(item.args)


def _custom_log_directories(ctx: LintContext) -> Iterator[Finding]:
    """mod_log_config opens each CustomLog/TransferLog file at start-up (AH02297)."""
    for lname in ("customlog", "transferlog"):
        for item in ctx.items_named(lname):
            if isinstance(item, ResolvedDirective) and item.args \
                    and (directory := log_directory_missing(ctx, item.args[0])) is not None:
                where = f"{item.position.file}:{item.position.line}"
                yield ctx.finding("AT510", f"AH02297: Cannot access directory '{directory}' for log file "
                                  f"'{item.args[0]}' defined at {where} (httpd will not start)", item)


def _icon(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """add_icon: an "(ALT,/icon)" first word needs its closing parenthesis."""
    if item.args and item.args[0].startswith("(") and ")" not in item.args[0]:
        return "missing closing paren"
    return None


# CVE-2025-49812: 2.4.64 removed the TLS upgrade; "SSLEngine optional" is still read (with a
# notice, AH10510) and the message for anything else names On and Off only (2.4.71, measured).
NO_SSL_UPGRADE = "2.4.64"


def _ssl_engine(ctx: LintContext, item: ResolvedDirective) -> str | None:
    if len(item.args) != 1:
        return None
    if at_least(Version.parse(ctx.eff.httpd_version), NO_SSL_UPGRADE):
        return None if item.args[0].lower() in ("on", "off", "optional") else "Argument must be On or Off"
    return None if item.args[0].lower() in ("on", "off", "optional") else "Argument must be On, Off, or Optional"


_SSL_OPTIONS = frozenset({"stdenvvars", "exportcertdata", "fakebasicauth", "strictrequire", "optrenegotiate",
                          "legacydnstringformat"})


def _ssl_options(ctx: LintContext, item: ResolvedDirective) -> str | None:
    for word in item.args:
        name = word[1:] if word[:1] in ("+", "-") else word
        if name.lower() not in _SSL_OPTIONS:
            return f"SSLOptions: Illegal option '{name}'"
    return None


def _pass_phrase_dialog(ctx: LintContext, item: ResolvedDirective) -> str | None:
    if len(item.args) != 1:
        return None
    arg = item.args[0]
    if len(arg) > 5 and arg.startswith("exec:"):
        checked = path_to_check(ctx, arg[5:])
        if checked is not None and not observed.exists(checked[1]):
            return f"SSLPassPhraseDialog: file '{checked[0]}' does not exist"
        return None
    if arg.lower() == "builtin" or (len(arg) > 1 and arg[0] == "|"):
        return None
    return "SSLPassPhraseDialog: Invalid argument"


def _random_seed(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """ssl_cmd_SSLRandomSeed: the context, the source (its path judged as path_to_check says), and
    a byte count only for a file or a program."""
    if not 2 <= len(item.args) <= 3:
        return None
    context, source = item.args[0], item.args[1]
    if context.lower() not in ("startup", "connect"):
        return f"SSLRandomSeed: invalid context: `{context}'"
    if len(source) > 4 and source.startswith("egd:"):
        return (f"Invalid SSLRandomSeed entropy source `{source}': This version of OpenSSL does not support the "
                "Entropy Gathering Daemon (EGD).")
    builtin = source.lower() == "builtin"
    if not builtin:
        file_path = source[5:] if len(source) > 5 and source[:5] in ("file:", "exec:") else source
        checked = path_to_check(ctx, file_path)
        if checked is not None and not observed.exists(checked[1]):
            return f"SSLRandomSeed: source path '{checked[0]}' does not exist"
    if len(item.args) == 3:
        if builtin:
            return "SSLRandomSeed: byte specification not allowed for builtin seed source"
        if atoi(item.args[2]) < 0:
            return "SSLRandomSeed: invalid number of bytes specified"
    return None


def _proxy_status(ctx: LintContext, item: ResolvedDirective) -> str | None:
    if len(item.args) == 1 and item.args[0].lower() not in ("off", "on", "full"):
        return "ProxyStatus must be one of: off | on | full"
    return None


def _rewrite_regex(ctx: LintContext, item: ResolvedDirective) -> str | None:
    if len(item.args) < 2:
        return None
    if item.lname == "rewriterule":
        pattern = item.args[0].removeprefix("!")
        return f"RewriteRule: cannot compile regular expression '{pattern}'" if regex_surely_invalid(pattern) else None
    pattern = item.args[1].removeprefix("!")
    if item.args[0].lower() == "expr":
        err = expression_error(ctx, pattern)
        # 2.4.62's source joins the two with ": "; 2.4.71 prints `expression%s "%s" %s` (the
        # first %s empty in every case tried): taken from 2.4.64, the first release after the source here.
        joint = " " if at_least(Version.parse(ctx.eff.httpd_version), AFTER_2_4_63) else ": "
        return f'RewriteCond: cannot compile expression "{pattern}"{joint}{err}' if err else None
    if pattern[:1] in ("-", "<", ">", "="):
        return None  # a file test, a comparison or an expression, not a regex
    return f"RewriteCond: cannot compile regular expression '{pattern}'" if regex_surely_invalid(pattern) else None


def _cache_dirs(ctx: LintContext) -> Iterator[Finding]:
    """mod_cache_disk's CacheDirLevels and CacheDirLength: at least 1, and their product at most 20
    with the other's value in force on that line (each starts at 2) in the same server."""
    values: dict[int, dict[str, int]] = {}
    items = [i for lname in ("cachedirlevels", "cachedirlength") for i in ctx.items_named(lname)
             if isinstance(i, ResolvedDirective) and len(i.args) == 1]
    for item in _in_document_order(ctx, items):
        vhost = next((p for p in item.parents if p.lname == "virtualhost"), None)
        server = values.setdefault(id(vhost) if vhost else 0, {"cachedirlevels": 2, "cachedirlength": 2})
        name = "CacheDirLevels" if item.lname == "cachedirlevels" else "CacheDirLength"
        other = server["cachedirlength" if item.lname == "cachedirlevels" else "cachedirlevels"]
        value = atoi(item.args[0])
        if value < 1:
            message = f"{name} value must be an integer greater than 0"
        elif value * other > 20:
            message = "CacheDirLevels*CacheDirLength value must not be higher than 20"
        else:
            server[item.lname] = value
            continue
        yield ctx.finding("AT510", startup_error(message), item)


def _in_document_order(ctx: LintContext, items: list[ResolvedDirective]) -> list[ResolvedDirective]:
    wanted = {id(i) for i in items}
    if len(items) < 2:
        return items
    return [i for i in ctx.eff.in_order() if isinstance(i, ResolvedDirective) and id(i) in wanted]


def _ssl_require(ctx: LintContext, item: ResolvedDirective) -> str | None:
    """ssl_cmd_SSLRequire (RAW_ARGS): the raw text, quotes and all, parsed as a condition (the
    old syntax's `and`, `eq`, file() are the parser's own; AP_EXPR_FLAG_SSL_EXPR_COMPAT only
    changes how it is evaluated)."""
    err = expression_error(ctx, item.args_text)
    return f"SSLRequire: {err}" if err else None


# mod_proxy_html's old_expr: an old-style condition (var, var=val, !var) rewritten to ap_expr
_OLD_CONDITION = re.compile(r"^(!)?([A-Za-z0-9_]+)((=)(.+))?$", re.DOTALL)


def _proxy_html_url_map(ctx: LintContext, item: ResolvedDirective) -> str | None:
    r"""set_urlmap (RAW_ARGS): from, to and flags by ap_getword_conf, a condition after non-empty
    flags; nothing is refused but the condition, which old_expr rewrites first
    (s/^(!)?(\w+)((=)(.+))?$/reqenv('$2')$1$4'$5'/, then '!' moved to the front of a negation
    without '=', dropping the last character) and ap_expr parses as a condition. The rewrite
    breaks the forms it was meant for but var=val: `ProxyHTMLURLMap a b i var` is refused by
    httpd 2.4 with "syntax error, unexpected T_STR_BEGIN". The pattern is not compiled here
    (httpd does not check it)."""
    text = item.args_text
    pos = next_word(text, next_word(text)[1])[1]
    flags, pos = next_word(text, pos)
    cond = next_word(text, pos)[0] if flags else ""
    if not cond:
        return None
    if m := _OLD_CONDITION.match(cond):
        new = f"reqenv('{m[2]}'){m[1] or ''}{m[4] or ''}'{m[5] or ''}'"
        if cond[0] == "!" and "=" not in cond:
            new = "!" + new[:-1]
        cond = new
    return expression_error(ctx, cond)


_READERS = (
    ("alias", "alias_module", _alias),
    ("scriptalias", "alias_module", _alias),
    ("aliasmatch", "alias_module", _alias_match),
    ("scriptaliasmatch", "alias_module", _alias_match),
    ("redirect", "alias_module", _redirect),
    *((name, "alias_module", _redirect_kind) for name in _REDIRECT_KINDS),
    ("addoutputfilterbytype", "filter_module", _filter_by_type),
    *((name, "setenvif_module", _setenvif) for name in _SETENVIF_NAMES),
    ("requestreadtimeout", "reqtimeout_module", _reqtimeout),
    ("deflatecompressionlevel", "deflate_module", _deflate_level),
    ("forcelanguagepriority", "negotiation_module", _force_priority),
    ("rewriterule", "rewrite_module", _rewrite),
    ("rewritecond", "rewrite_module", _rewrite),
    ("header", "headers_module", _header),
    ("requestheader", "headers_module", _header),
    ("proxypass", "proxy_module", _proxy_pass),
    ("proxypassmatch", "proxy_module", _proxy_pass),
    ("proxypassreverse", "proxy_module", _proxy_pass_reverse),
    ("sslprotocol", "ssl_module", _ssl_protocol),
    ("sslproxyprotocol", "ssl_module", _ssl_protocol),
    ("sslverifyclient", "ssl_module", _ssl_verify),
    ("sslproxyverify", "ssl_module", _ssl_verify),
    ("sslsessioncache", "ssl_module", _session_cache),
    ("sslstaplingcache", "ssl_module", _stapling_cache),
    ("balancermember", "proxy_module", _balancer_member),
    ("proxyset", "proxy_module", _proxy_set),
    ("expiresdefault", "expires_module", _expires),
    ("expiresbytype", "expires_module", _expires),
    ("customlog", "log_config_module", _custom_log),
    ("logformat", "log_config_module", _log_format),
    ("indexoptions", "autoindex_module", _index_options),
    *((name, "autoindex_module", _icon) for name in ("addicon", "addiconbytype", "addiconbyencoding")),
    ("sslengine", "ssl_module", _ssl_engine),
    ("ssloptions", "ssl_module", _ssl_options),
    ("sslpassphrasedialog", "ssl_module", _pass_phrase_dialog),
    ("sslrandomseed", "ssl_module", _random_seed),
    ("proxystatus", "proxy_module", _proxy_status),
    ("proxyreceivebuffersize", "proxy_module", lambda ctx, item: _at_least_512("ProxyReceiveBufferSize", item, atoi)),
    ("proxyiobuffersize", "proxy_module", lambda ctx, item: _at_least_512("ProxyIOBufferSize", item, atol)),
    ("proxytimeout", "proxy_module", lambda ctx, item: (
        "Proxy Timeout must be at least 1 second." if len(item.args) == 1 and atoi(item.args[0]) < 1 else None)),
    ("proxyhtmlurlmap", "proxy_html_module", _proxy_html_url_map),
    ("sslrequire", "ssl_module", _ssl_require),
    ("balancergrowth", "proxy_module", lambda ctx, item: (
        "BalancerGrowth must be between 0 and 1000" if len(item.args) == 1 and not 0 <= atoi(item.args[0]) <= 1000
        else None)),
)


def _at_least_512(name: str, item: ResolvedDirective, read: Callable[[str], int]) -> str | None:
    """mod_proxy's set_recv_buffer_size (atoi) / set_io_buffer_size (atol): 0 or at least 512
    bytes; the C widths differ from 2^31 on (4294967297 is 1 to atoi)."""
    if len(item.args) != 1:
        return None
    return buffer_size_error(name, read(item.args[0]))


def _error_overrides(ctx: LintContext) -> Iterator[Finding]:
    """set_proxy_error_override (2.4.48+, ITERATE): On or Off first, then status codes 400-599
    after an On; the state is the section's, carried from one ProxyErrorOverride line to the next."""
    state: dict[int, bool | None] = {}  # id(the enclosing section), 0 for a server -> On/Off so far
    for item in ctx.items_named("proxyerroroverride"):
        if not isinstance(item, ResolvedDirective):
            continue
        scope = id(item.parents[-1]) if item.parents else 0
        for word in item.args:
            message = None
            if word.lower() in ("on", "off"):
                state[scope] = word.lower() == "on"
            elif state.get(scope) is None:
                message = "ProxyErrorOverride first parameter must be one of: off | on"
            elif not word[:1].isdigit() or not word[:1].isascii():
                message = "ProxyErrorOverride: status codes to intercept must be numeric"
            elif not state[scope]:
                message = "ProxyErrorOverride: status codes must follow a value of 'on'"
            elif not 400 <= (strtol(word).value or 0) < 600:
                message = ("ProxyErrorOverride: status codes to intercept must be valid HTTP Status Codes "
                           ">=400 && <600")
            if message:
                yield ctx.finding("AT510", startup_error(message), item)
                break


def _ssl_path(kind: str) -> Callable[[LintContext, ResolvedDirective], str | None]:
    """ssl_cmd_check_file / ssl_cmd_check_dir: a non-empty regular file (a directory) at the
    ServerRoot-relative path; a pkcs11: URI is not a file. Judged as path_to_check says."""
    def reader(ctx: LintContext, item: ResolvedDirective) -> str | None:
        if len(item.args) != 1 or item.args[0].startswith("pkcs11:"):
            return None
        checked = path_to_check(ctx, item.args[0])
        if checked is None:
            return None
        path, local = checked
        name = _SSL_NAMES[item.lname]
        if kind == "dir":
            return None if observed.isdir(local) else f"{name}: directory '{path}' does not exist"
        return None if observed.nonempty_file(local) else f"{name}: file '{path}' does not exist or is empty"
    return reader


_SSL_NAMES = {n.lower(): n for n in (
    "SSLCertificateFile", "SSLCertificateKeyFile", "SSLCertificateChainFile", "SSLSessionTicketKeyFile",
    "SSLCACertificateFile", "SSLCADNRequestFile", "SSLCARevocationFile", "SSLProxyCACertificateFile",
    "SSLProxyCARevocationFile", "SSLProxyMachineCertificateFile", "SSLCACertificatePath",
    "SSLCADNRequestPath", "SSLCARevocationPath", "SSLProxyCACertificatePath", "SSLProxyCARevocationPath",
    "SSLProxyMachineCertificatePath")}
_SSL_FILES = tuple((lname, "ssl_module", _ssl_path("dir" if lname.endswith("path") else "file"))
                   for lname in _SSL_NAMES)
