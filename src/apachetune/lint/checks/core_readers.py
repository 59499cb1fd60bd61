"""What core's own argument readers refuse (AT503 or AT510, in httpd's words): the words of
<Directory>, <Location>, <Files>, <VirtualHost>, <Limit>, <If> and <Else>; Options and
AllowOverride; Listen's and <VirtualHost>'s addresses (read as APR reads them, config/apr.py);
the keyword directives, LogLevel, ServerName, ErrorDocument, the request limits, FileETag,
ServerAlias, the range limits, HttpProtocolOptions; and, on this machine's files, DocumentRoot,
CoreDumpDirectory and User root.

Facts: server/core.c (dirsection, urlsection, filesection, ifsection, ap_add_if_conf,
ap_limit_section, virtualhost_section, set_options, set_override and the set_* of each
directive named), server/vhost.c get_addresses, server/listen.c ap_set_listener and
alloc_listener, server/log.c ap_parse_log_level, os/unix/unixd.c, server/mpm_common.c
(httpd 2.4.x)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from functools import cache

from apachetune import httpd
from apachetune.config import observed
from apachetune.config.apr import AddressError, filepath_merge, libc_ipv6, parse_addr_port
from apachetune.config.conditions import Version, at_least
from apachetune.config.effective import ResolvedDirective, ResolvedSection
from apachetune.config.words import WHITESPACE, join_words
from apachetune.lint.context import LintContext
from apachetune.lint.finding import Finding, Fix
from apachetune.mpm.numbers import atoi, strtol

# Sections whose reader refuses an empty argument (missing_container_arg), by the name httpd
# registered; <Proxy> is not among them (mod_proxy's test for it can never be true).
_NEEDS_ARGUMENT = {"directory": "Directory", "directorymatch": "DirectoryMatch", "location": "Location",
                   "locationmatch": "LocationMatch", "files": "Files", "filesmatch": "FilesMatch",
                   "virtualhost": "VirtualHost", "limit": "Limit", "limitexcept": "LimitExcept",
                   "if": "If", "elseif": "ElseIf"}
# Sections that take one path (two when the first is "~") and refuse more words once read.
_ONE_PATH = {"directory": True, "location": True, "files": True,
             "directorymatch": False, "locationmatch": False, "filesmatch": False}


def section_arguments(ctx: LintContext) -> Iterator[Finding]:
    """AT503: a section with no argument, more than one path, or <Else> with one."""
    for lname, name in _NEEDS_ARGUMENT.items():
        for item in ctx.items_named(lname):
            if not isinstance(item, ResolvedSection):
                continue
            if not item.args:
                yield ctx.finding("AT503", f"<{name}> directive requires additional arguments", item)
            elif lname in _ONE_PATH and len(item.args) > (2 if _ONE_PATH[lname] and item.args[0] == "~" else 1):
                yield ctx.finding("AT503", f"Multiple <{name}> arguments not (yet) supported.", item)
            elif lname in ("if", "elseif") and len(item.args) > 1 and at_least(Version.parse(ctx.eff.httpd_version),
                                                                              AFTER_2_4_63):
                # 2.4.62 reads the first word and ignores the rest; 2.4.71 refuses the rest
                # (after parsing the first): taken from 2.4.64, the first release after that source.
                yield ctx.finding("AT503", f"Multiple <{name}> arguments not supported.", item)
    for item in ctx.items_named("else"):
        if isinstance(item, ResolvedSection) and item.args:
            yield ctx.finding("AT503", "<Else> does not take an argument", item)


def refused(ctx: LintContext) -> Iterator[Finding]:
    """AT510: core's readers that refuse a value (see the module's docstring). With --from-dump
    which modules are loaded, and the server's files, are not known: those readers are skipped."""
    for check in _READERS if ctx.from_dump else (*_READERS, *_READERS_OF_THIS_MACHINE):
        yield from check(ctx)


def refusal(ctx: LintContext, message: str, item: ResolvedDirective | ResolvedSection,
             fix: Fix | None = None) -> Finding:
    return ctx.finding("AT510", startup_error(message), item, (), fix)


def startup_error(message: str) -> str:
    """A reader's message as `apache2 -t` prints it (AH00526's second line)."""
    return f"AH00526: {as_logged(message)} (httpd will not start)"


_LOGGED = {"\\": "\\\\", "\b": "\\b", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def as_logged(text: str) -> str:
    """ap_escape_errorlog_item: the error log doubles a backslash, writes \\n \\t ... for those
    controls and \\xhh for other bytes that are not printable ASCII (a double quote is kept)."""
    if all(" " <= c <= "~" and c != "\\" for c in text):
        return text
    out = []
    for byte in text.encode("utf-8", "surrogateescape"):
        c = chr(byte)
        out.append(c if " " <= c <= "~" and c != "\\" else _LOGGED.get(c, f"\\x{byte:02x}"))
    return "".join(out)



_OPTIONS = {"indexes", "includes", "includesnoexec", "followsymlinks", "symlinksifownermatch", "execcgi",
            "multiviews", "runscripts"}
_EITHER = "Either all Options must start with + or -, or no Option may."


def options_error(words: list[str]) -> str | None:
    """set_options' verdict on `words`: None, or httpd's message."""
    first, merge, all_none = True, False, False
    for word in words:
        if word[:1] in ("+", "-"):
            sign, word = word[0], word[1:]
            if not merge and not first and not all_none:
                return _EITHER
            merge = True
        else:
            sign = ""
            if not first and merge:
                return _EITHER
        lower = word.lower()
        if lower in ("none", "all"):
            shown = "None" if lower == "none" else "All"
            if not first:
                return f"'Options {shown}' must be the first {'Option' if shown == 'None' else 'option'} given."
            if sign:
                return f"You may not use 'Options +{shown}' or 'Options -{shown}'."
            all_none = True
        elif lower not in _OPTIONS:
            return f"Illegal option {word}"
        first = False
    return None


def _options(ctx: LintContext) -> Iterator[Finding]:
    for item in ctx.items_named("options"):
        if isinstance(item, ResolvedDirective) and (message := options_error(item.args)):
            fix = None
            if message == _EITHER and not any(w.lstrip("+-").lower() in ("none", "all") for w in item.args):
                signed = [w if w[:1] in ("+", "-") else "+" + w for w in item.args]
                fix = Fix({"Options": join_words(signed)}, "a + on every option without a sign")
            yield refusal(ctx, message, item, fix)


_OVERRIDES = {"limit", "options", "fileinfo", "authconfig", "indexes", "none", "all"}
_ALLOW_OPTIONS = _OPTIONS | {"none", "all"}
# Two changes seen in 2.4.71 (measured) and not in 2.4.62's source nor in the 2.4.x branch of
# October 2024 (2.4.63-dev): set_override returns set_allow_opts' verdict on "Options=...", and
# the status table has 103 Early Hints. The release between is not known here: taken as 2.4.64.
AFTER_2_4_63 = "2.4.64"
CHECKED_OPTIONS_LIST = AFTER_2_4_63


def override_error(words: list[str], version: str = "2.4.71") -> str | None:
    """set_override's verdict on `words` for httpd `version`: None, or httpd's message."""
    checks_list = at_least(Version.parse(version), CHECKED_OPTIONS_LIST)
    for word in words:
        key, eq, value = word.partition("=")
        if key.lower() == "nonfatal":
            if not eq:
                return f"=Override, =Unknown or =All expected after {key}"
        elif key.lower() not in _OVERRIDES:
            return f"Illegal override option {key}"
        elif key.lower() == "options" and eq and checks_list:
            bad = next((o for o in value.split(",") if o and o.lower() not in _ALLOW_OPTIONS), None)
            if bad is not None:
                return f"Illegal option {bad}"
    return None


def _overrides(ctx: LintContext) -> Iterator[Finding]:
    for item in ctx.items_named("allowoverride"):
        if isinstance(item, ResolvedDirective) and (message := override_error(item.args, ctx.eff.httpd_version)):
            yield refusal(ctx, message, item)


def _listen_addresses(ctx: LintContext) -> Iterator[Finding]:
    seen: set[tuple[str | None, str | None, int]] = set()
    for item in ctx.items_named("listen"):
        if not isinstance(item, ResolvedDirective) or not 1 <= len(item.args) <= 2 \
                or any(p.lname == "virtualhost" for p in item.parents):
            continue  # the arity is AT510's other reader; a vhost's Listen is AT504's
        try:
            host, scope, port = parse_addr_port(item.args[0])
        except AddressError:
            yield refusal(ctx, "Invalid address or port", item)
            continue
        if host == "*":
            host = None
        if not port:
            yield refusal(ctx, "Port must be specified", item)
            continue
        if host is not None and item.args[0].startswith("[") and not libc_ipv6(host):
            # APR's parser let it through; the C library's resolver does not (AH00077)
            yield refusal(ctx, "Listen setup failed", item)
            continue
        # httpd compares the address as written (not as resolved): "80" and "*:80" are the
        # same listener, "0.0.0.0:80" another (which fails only at bind, after -t).
        if (host, scope, port) in seen:
            yield refusal(ctx, "Cannot define multiple Listeners on the same IP:port", item,
                           Fix({}, "remove the second Listen for the address", delete=True))
        seen.add((host, scope, port))


def vhost_address_error(word: str) -> str | None:
    """get_addresses' verdict on one <VirtualHost> address (a name that does not resolve is
    only logged, AH00547, and not judged here)."""
    if not word:
        return None
    if word.endswith(":*"):
        word = word[:-2]  # a wildcard port, which APR's parser does not know
    try:
        host, _scope, _port = parse_addr_port(word)
    except AddressError:
        return "The address or port is invalid"
    return "Missing address for VirtualHost" if host is None else None


def _vhost_addresses(ctx: LintContext) -> Iterator[Finding]:
    for item in ctx.items_named("virtualhost"):
        if isinstance(item, ResolvedSection):
            for word in item.args:
                if message := vhost_address_error(word):
                    yield refusal(ctx, message, item)
                    break


def _else_without_if(ctx: LintContext) -> Iterator[Finding]:
    """ap_add_if_conf: <Else> and <ElseIf> follow an <If> or <ElseIf> of the same scope (the
    enclosing section's configuration; other lines between them do not matter)."""
    if not any(isinstance(i, ResolvedSection) for name in ("elseif", "else") for i in ctx.items_named(name)):
        return
    last: dict[int, str] = {}  # id(enclosing section), 0 for the server -> the last of If/ElseIf/Else
    for item in ctx.eff.in_order():
        if isinstance(item, ResolvedSection) and item.lname in ("if", "elseif", "else"):
            scope = id(item.parents[-1]) if item.parents else 0
            if item.lname != "if" and last.get(scope) not in ("if", "elseif"):
                yield refusal(ctx, "<Else> or <ElseIf> section without previous <If> or <ElseIf> "
                               "section in same scope", item)
            last[scope] = item.lname


def _limit_trace(ctx: LintContext) -> Iterator[Finding]:
    for item in ctx.items_named("limit"):
        if isinstance(item, ResolvedSection) and "TRACE" in item.args:
            yield refusal(ctx, "TRACE cannot be controlled by <Limit>, see TraceEnable", item)


_ON_OFF = "parameter must be 'on' or 'off'"
# Directives whose reader takes one of a few words (any case), and httpd's words otherwise.
KEYWORDS: dict[str, tuple[frozenset[str], str]] = {
    "hostnamelookups": (frozenset({"on", "off", "double"}), "parameter must be 'on', 'off', or 'double'"),
    "usecanonicalname": (frozenset({"on", "off", "dns"}), "parameter must be 'on', 'off', or 'dns'"),
    "usecanonicalphysicalport": (frozenset({"on", "off"}), _ON_OFF),
    "enablemmap": (frozenset({"on", "off"}), _ON_OFF),
    "enablesendfile": (frozenset({"on", "off"}), _ON_OFF),
    "serversignature": (frozenset({"on", "off", "email"}), "ServerSignature: use one of: off | on | email"),
    "servertokens": (frozenset({"os", "min", "minimal", "major", "minor", "prod", "productonly", "full"}),
                     "ServerTokens takes 1 argument: 'Prod(uctOnly)', 'Major', 'Minor', 'Min(imal)', "
                     "'OS', or 'Full'"),
    "traceenable": (frozenset({"on", "off", "extended"}), "TraceEnable must be one of 'on', 'off', or 'extended'"),
    "allowencodedslashes": (frozenset({"on", "off", "nodecode"}), "AllowEncodedSlashes must be On, Off, or NoDecode"),
    "acceptpathinfo": (frozenset({"on", "off", "default"}), "AcceptPathInfo must be set to on, off or default"),
    "protocolshonororder": (frozenset({"on", "off"}), "ProtocolsHonorOrder must be 'on' or 'off'"),
}


def _keywords(ctx: LintContext) -> Iterator[Finding]:
    for lname, (words, message) in KEYWORDS.items():
        for item in ctx.items_named(lname):
            if isinstance(item, ResolvedDirective) and len(item.args) == 1 and item.args[0].lower() not in words:
                yield refusal(ctx, message, item)


LOG_LEVELS = frozenset({"emerg", "alert", "crit", "error", "warn", "notice", "info", "debug",
                        *(f"trace{i}" for i in range(1, 9))})
_LEVEL_ERROR = ("Log level keyword must be one of emerg/alert/crit/error/warn/notice/info/debug/"
                "trace1/.../trace8")


def log_level_error(word: str, loaded: Callable[[str], bool]) -> str | None:
    """set_loglevel's verdict on one word ("level" or "module:level"); `loaded` is httpd's
    find_module (an identifier or a source file name)."""
    module, colon, level = word.rpartition(":")
    if not colon:
        return None if word.lower() in LOG_LEVELS else _LEVEL_ERROR
    if not level:
        return f"Module specifier '{module}' must be followed by a log level keyword"
    if level.lower() not in LOG_LEVELS:
        return f"{module}:{level}: {_LEVEL_ERROR}"
    if not (loaded(module) or loaded(module + "_module")):
        return f"Cannot find module {module}"
    return None


def _log_levels(ctx: LintContext) -> Iterator[Finding]:
    for item in ctx.items_named("loglevel"):
        if isinstance(item, ResolvedDirective):
            for word in item.args:
                if message := log_level_error(word, ctx.module_loaded):
                    yield refusal(ctx, message, item)
                    break


def fnmatch_test(pattern: str) -> bool:
    """apr_fnmatch_test: whether `pattern` has a wildcard (?, *, or a closed [...])."""
    nesting, i = 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c in "?*":
            return True
        if c == "\\":
            i += 1
            if i >= len(pattern):
                return False
        elif c == "[":
            nesting += 1
        elif c == "]" and nesting:
            return True
        i += 1
    return False


def server_name_error(arg: str) -> str | None:
    """server_hostname_port's verdict on ServerName's argument."""
    if fnmatch_test(arg):
        return f'Invalid ServerName "{arg}" use ServerAlias to set multiple server names.'
    part = arg.split("://", 1)[1] if "://" in arg else arg
    if ":" in part and not 0 < atoi(part.split(":", 1)[1]) < 65536:
        return f'The port number "{arg}" is outside the appropriate range (i.e., 1..65535).'
    return None


def _server_names(ctx: LintContext) -> Iterator[Finding]:
    for item in ctx.items_named("servername"):
        if isinstance(item, ResolvedDirective) and len(item.args) == 1 and (message := server_name_error(item.args[0])):
            yield refusal(ctx, message, item)


def _document_roots(ctx: LintContext) -> Iterator[Finding]:
    """set_document_root: the main server's DocumentRoot must be a directory (a virtual host's
    is only warned about, AH00112). Judged as path_to_check says."""
    for item in ctx.items_named("documentroot"):
        if not isinstance(item, ResolvedDirective) or len(item.args) != 1:
            continue
        checked = path_to_check(ctx, item.args[0])
        if checked is None or observed.isdir(checked[1]):
            continue
        path = checked[0]
        if any(p.lname == "virtualhost" for p in item.parents):
            f = ctx.finding("AT510", f"AH00112: Warning: DocumentRoot [{path}] does not exist (httpd starts; "
                            "this virtual host's files cannot be served)", item)
            f.severity = "warning"
            yield f
        else:
            yield refusal(ctx, f"DocumentRoot '{path}' is not a directory, or is not readable", item)


def _root_user(ctx: LintContext) -> Iterator[Finding]:
    """unixd_set_user: httpd (built without BIG_SECURITY_HOLE) refuses to serve as uid 0."""
    for item in ctx.items_named("user"):
        if isinstance(item, ResolvedDirective) and len(item.args) == 1 \
                and (item.args[0] == "root" or (item.args[0].startswith("#") and atoi(item.args[0][1:]) == 0)):
            yield refusal(ctx, f"User {item.args[0]}: httpd refuses to serve as root (\"Apache has not been "
                           "designed to serve pages while running as root\")", item)


def _unknown_users(ctx: LintContext) -> Iterator[Finding]:
    """ap_uname2id / ap_gname2id at start-up: a name (not "#uid") this machine's user database
    does not know ends httpd (AH00543, AH00544). Judged at server level (in a <VirtualHost>,
    User and Group are suEXEC's) for a tree that runs here, when the name still holds "${" (an
    undefined variable, no user on any machine) or the tree is the installed httpd's own (a copy
    may name the server's own users)."""
    if not tree_runs_here(ctx):
        return
    installed = tree_is_installed(ctx)
    import grp
    import pwd

    argv0 = os.path.basename(httpd.binary() or "httpd")
    for lname, lookup_name, code, kind in (("user", pwd.getpwnam, "AH00543", "user"),
                                           ("group", grp.getgrnam, "AH00544", "group")):
        for item in ctx.items_named(lname):
            if not isinstance(item, ResolvedDirective) or len(item.args) != 1 or item.args[0].startswith("#") \
                    or any(p.lname == "virtualhost" for p in item.parents) \
                    or not (installed or "${" in item.args[0]):
                continue
            try:
                lookup_name(item.args[0])
            except KeyError:
                yield ctx.finding("AT510", f"{code}: {argv0}: bad {kind} name {item.args[0]} (httpd will not start)",
                                  item)
            except (OSError, UnicodeEncodeError, ValueError):
                continue  # the user database could not answer: not judged


# modules/http/http_protocol.c status_lines: the codes ErrorDocument accepts (others are
# "Unsupported"; 500 always passes).
_STATUS_CODES = frozenset({
    100, 101, 102, 200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304, 305, 307,
    308, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 421,
    422, 423, 424, 426, 428, 429, 431, 451, 500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511})


def status_supported(text: str, version: str = "2.4.71") -> bool:
    code = atoi(text)
    return code in _STATUS_CODES or (code == 103 and at_least(Version.parse(version), AFTER_2_4_63))


def _error_documents(ctx: LintContext) -> Iterator[Finding]:
    for item in ctx.items_named("errordocument"):
        if isinstance(item, ResolvedDirective) and len(item.args) == 2 \
                and not status_supported(item.args[0], ctx.eff.httpd_version):
            yield refusal(ctx, f"Unsupported HTTP response code {item.args[0]}", item)


def buffer_size_error(name: str, size: int) -> str | None:
    """The buffer sizes' one rule (core's Send/ReceiveBufferSize, mod_proxy's and a worker's
    IOBufferSize/ReceiveBufferSize): 0 (the system's default) or at least 512 bytes."""
    return f"{name} must be >= 512 bytes, or 0 for system default." if size < 512 and size != 0 else None


def strtoff_error(name: str, text: str) -> str | None:
    """apr_strtoff (strtoll, base 10) as set_limit_req_body and mod_deflate's inflate limit read it."""
    read = strtol(text)
    if read.value is None:
        return f"{name} requires a non-negative integer."  # nothing read; *errp at the text
    if read.overflow:
        return f"{name} argument is not parsable." if name == "LimitRequestBody" else f"{name} is not parsable."
    if read.rest or read.value < 0:
        return f"{name} requires a non-negative integer."
    return None


def _request_limits(ctx: LintContext) -> Iterator[Finding]:
    for lname, name, tail in (("limitrequestline", "LimitRequestLine", ""),
                              ("limitrequestfieldsize", "LimitRequestFieldsize", ""),
                              ("limitrequestfields", "LimitRequestFields", " (0 = no limit)")):
        for item in ctx.items_named(lname):
            if isinstance(item, ResolvedDirective) and len(item.args) == 1 and atoi(item.args[0]) < 0:
                yield refusal(ctx, f'{name} "{item.args[0]}" must be a non-negative integer{tail}', item)
    for item in ctx.items_named("limitrequestbody"):
        if isinstance(item, ResolvedDirective) and len(item.args) == 1 \
                and (message := strtoff_error("LimitRequestBody", item.args[0])):
            yield refusal(ctx, message, item)


_ETAG_BITS = frozenset({"size", "lmtime", "mtime", "lastmodified", "inode", "digest"})


def etag_error(words: list[str]) -> str | None:
    """set_etag_bits' verdict."""
    for word in words:
        sign = word[:1] if word[:1] in ("+", "-") else ""
        token = word[len(sign):]
        if token.lower() in ("none", "all"):
            if sign:
                return f"FileETag keyword '{token}' cannot be used with '+' or '-'"
        elif token.lower() not in _ETAG_BITS:
            return f"Unknown keyword '{token}' for FileETag directive"
    return None


def _etags(ctx: LintContext) -> Iterator[Finding]:
    for item in ctx.items_named("fileetag"):
        if isinstance(item, ResolvedDirective) and (message := etag_error(item.args)):
            yield refusal(ctx, message, item)


def _server_aliases(ctx: LintContext) -> Iterator[Finding]:
    for item in ctx.items_named("serveralias"):
        if isinstance(item, ResolvedDirective) and not any(p.lname == "virtualhost" for p in item.parents):
            yield refusal(ctx, "ServerAlias only used in <VirtualHost>", item)


def _ranges(ctx: LintContext) -> Iterator[Finding]:
    """set_max_ranges and its two siblings: a keyword or a positive integer."""
    for lname, name in (("maxranges", "MaxRanges"), ("maxrangeoverlaps", "MaxRangeOverlaps"),
                        ("maxrangereversals", "MaxRangeReversals")):
        for item in ctx.items_named(lname):
            if isinstance(item, ResolvedDirective) and len(item.args) == 1 \
                    and item.args[0].lower() not in ("none", "default", "unlimited") and atoi(item.args[0]) <= 0:
                yield refusal(ctx, f"{name} requires 'none', 'default', 'unlimited' or a positive integer", item)
    for item in ctx.items_named("limitinternalrecursion"):
        if isinstance(item, ResolvedDirective) and 1 <= len(item.args) <= 2 and any(atoi(a) <= 0 for a in item.args):
            yield refusal(ctx, "The recursion limit must be greater than zero.", item)


_HTTP_OPTIONS = {"allow0.9": ("http09", "Allow0.9"), "require1.0": ("http09", "Require1.0"),
                 "strict": ("conformance", "Strict"), "unsafe": ("conformance", "Unsafe"),
                 "registeredmethods": ("methods", "RegisteredMethods"), "lenientmethods": ("methods", "LenientMethods")}
_HTTP_PAIRS = {"http09": "'Allow0.9' and 'Require1.0'", "conformance": "'Strict' and 'Unsafe'",
               "methods": "'RegisteredMethods' and 'LenientMethods'"}


def _http_protocol_options(ctx: LintContext) -> Iterator[Finding]:
    """set_http_protocol_options: its keywords, and no two of a pair in one server (the
    settings add up over the server's HttpProtocolOptions lines)."""
    seen: dict[tuple[int, str], str] = {}  # (id(virtual host) or 0, pair) -> the first keyword
    for item in ctx.items_named("httpprotocoloptions"):
        if not isinstance(item, ResolvedDirective):
            continue
        server = next((id(p) for p in item.parents if p.lname == "virtualhost"), 0)
        for word in item.args:
            known = _HTTP_OPTIONS.get(word.lower())
            if known is None:
                yield refusal(ctx, "HttpProtocolOptions accepts 'Unsafe' or 'Strict' (default), "
                               "'RegisteredMethods' or 'LenientMethods' (default), and 'Require1.0' or "
                               "'Allow0.9' (default)", item)
                break
            pair, shown = known
            first = seen.setdefault((server, pair), shown)
            if first != shown:
                yield refusal(ctx, f"HttpProtocolOptions {_HTTP_PAIRS[pair]} are mutually exclusive", item)
                break


def _core_dump_directory(ctx: LintContext) -> Iterator[Finding]:
    """ap_mpm_set_coredumpdir: an existing directory (judged as path_to_check says)."""
    for item in ctx.items_named("coredumpdirectory"):
        if not isinstance(item, ResolvedDirective) or len(item.args) != 1:
            continue
        checked = path_to_check(ctx, item.args[0])
        if checked is None:
            continue
        path, local = checked
        kind = observed.path_kind(local)
        if kind == "dir":
            continue
        state = "does not exist" if kind in ("missing", "dangling") else "is not a directory"
        yield refusal(ctx, f"CoreDumpDirectory {path} {state}", item)


_MUTEX_MECHANISMS = ("(Mutex mechanisms are: 'none', 'default', 'flock:/path/to/file', 'fcntl:/path/to/file', "
                     "'file:/path/to/file', 'pthread', 'sysvsem', 'posixsem', 'sem')")
_MECHANISMS = frozenset({"none", "no", "default", "yes", "fcntl", "file", "flock", "posixsem", "sem", "sysvsem",
                         "pthread"})  # ap_parse_mutex with Linux's APR (every mechanism compiled in)
# The mutex types each shipped module registers (ap_mutex_register in its pre_config), besides
# core's "default"; compared case-sensitively.
_MUTEX_TYPES = {
    "mpm_prefork_module": ("mpm-accept",), "mpm_worker_module": ("mpm-accept",),
    "auth_digest_module": ("authdigest-client", "authdigest-opaque"), "authn_socache_module": ("authn-socache",),
    "cache_socache_module": ("cache-socache",), "watchdog_module": ("watchdog-callback",),
    "ldap_module": ("ldap-cache",), "lua_module": ("lua-ivm-shm",), "rewrite_module": ("rewrite-map",),
    "proxy_module": ("proxy",), "proxy_balancer_module": ("proxy-balancer-shm",),
    "ssl_module": ("ssl-cache", "ssl-stapling", "ssl-stapling-refresh"), "tls_module": ("tls-session-cache",),
}


def mutex_error(ctx: LintContext, words: list[str]) -> str | None:
    """ap_set_mutex: a mechanism, its directory (an existing one; judged as path_to_check says),
    then mutex types the loaded modules registered (checked last first), none only where allowed
    (no stock type allows it)."""
    if not words or not words[0]:
        return f"Mutex requires at least a mechanism argument {_MUTEX_MECHANISMS}"
    mechdir = words[0]
    mech, _, where = mechdir.partition(":")
    if mech.lower() not in _MECHANISMS:
        return f"Invalid Mutex argument {mechdir} {_MUTEX_MECHANISMS}"
    literal = mech.lower() in ("posixsem", "sem")  # a semaphore's name, not ServerRoot-relative
    if where and not ctx.from_dump and (not literal or os.path.isabs(where)):
        checked = path_to_check(ctx, where)
        if checked is not None and observed.path_kind(checked[1]) != "dir":
            return f"Invalid Mutex directory in argument {mechdir}"
    none = mech.lower() in ("none", "no")
    types = [w for w in words[1:] if w.lower() != "omitpid"] or ["default"]
    known: set[str] | None = None  # None: which types exist is not known (a dump, a third-party module)
    if not ctx.from_dump and not ctx.third_party_may_register("mutex types"):
        known = {"default"}.union(*(names for module, names in _MUTEX_TYPES.items() if ctx.module_loaded(module)))
    for kind in reversed(types):
        if known is not None and kind not in known:
            return f"Mutex type {kind} is not valid"
        if none:
            return f"None is not allowed for mutex type {kind}"
    return None


def _errors(ctx: LintContext) -> Iterator[Finding]:
    """generate_error: Error stops httpd with its own text (quotes stripped when they match)."""
    for item in ctx.items_named("error"):
        if not isinstance(item, ResolvedDirective):
            continue
        text = item.args_text.strip(WHITESPACE)
        if not text:
            yield refusal(ctx, "The Error directive was used with no message.", item)
        elif text[0] in "\"'" and text[-1] == text[0]:
            yield refusal(ctx, text[1:-1], item)
        else:
            yield refusal(ctx, text, item)


def _mutexes(ctx: LintContext) -> Iterator[Finding]:
    for item in ctx.items_named("mutex"):
        if isinstance(item, ResolvedDirective) and (message := mutex_error(ctx, item.args)):
            yield refusal(ctx, message, item)


def tree_is_here(ctx: LintContext) -> bool:
    """Whether the configuration is installed on this machine (or under --root): its main file
    lies under its ServerRoot there. The file-system checks are made only then: a tree copied
    from another machine names that machine's directories, which may or may not exist here
    (Alpine's ServerRoot /var/www exists on any Debian with httpd)."""
    def compute() -> bool:
        if ctx.from_dump:
            return False  # the files are the live server's, and the dump is read from a temporary copy
        root = os.path.realpath(ctx.eff.local(ctx.eff.server_root))
        main = os.path.realpath(ctx.eff.main_file)
        return observed.isdir(root) and (main == root or main.startswith(root.rstrip(os.sep) + os.sep))
    return ctx.memo("tree_is_here", compute)


def tree_runs_here(ctx: LintContext) -> bool:
    """tree_is_here, and its modules are on this machine too (a LoadModule file of it exists):
    then what it names that this machine lacks (a module's directory, a user) is a mistake in
    it, not another machine's name. A Debian tree copied to a laptop without httpd is not
    judged so."""
    return ctx.memo("tree_runs_here", lambda: tree_is_here(ctx) and any(
        observed.isfile(path) for path in ctx.eff.modules.values()))


def tree_is_installed(ctx: LintContext) -> bool:
    """Whether the main file is the installed httpd's own (its -V SERVER_CONFIG_FILE): the tree
    this machine's httpd starts with, so whatever it names must exist here."""
    def compute() -> bool:
        if ctx.from_dump:
            return False
        installed = installed_main_file()
        return installed is not None and os.path.realpath(ctx.eff.main_file) == os.path.realpath(installed)
    return ctx.memo("tree_is_installed", compute)


@cache
def installed_main_file() -> str | None:
    from apachetune.config.locate import from_httpd_v

    return from_httpd_v()


def path_to_check(ctx: LintContext, arg: str) -> tuple[str, str] | None:
    """(the path as httpd names it, where it is on this machine) for a file-system check, or
    None when it is not judged: a tree not installed here, or an absolute path whose parent is
    absent here (another machine's directory: a copy whose certificates stayed on the server),
    unless this is the installed httpd's own tree (tree_is_installed: then "/usr/share/apache9/"
    is a typo httpd here stops at). A ServerRoot-relative path is the tree's own: judged."""
    if not tree_is_here(ctx):
        return None
    relative = not os.path.isabs(arg)
    path = filepath_merge(ctx.eff.server_root, arg)  # as httpd names it: "a//b/../c" is "a/c"
    local = ctx.eff.local(path)
    if not relative and not observed.isdir(os.path.dirname(local.rstrip("/")) or "/") and not tree_is_installed(ctx):
        return None  # another machine's directory, unless this is the installed httpd's own tree
    return path, local


def log_directory_missing(ctx: LintContext, fname: str) -> str | None:
    """The directory httpd checks before opening a log file (ap_make_dirstr_parent of the
    ServerRoot-relative name, with its trailing slash) when it is missing on this machine, else
    None. Not judged for a pipe or syslog, nor for a tree not installed here, nor where
    the directory's own parent is absent."""
    if not fname or fname[0] == "|" or fname == "syslog" or fname.startswith("syslog:"):
        return None
    checked = path_to_check(ctx, os.path.dirname(fname) or ".")
    if checked is None or observed.isdir(checked[1]):
        return None
    return os.path.normpath(checked[0]).rstrip("/") + "/"


def _error_log_directories(ctx: LintContext) -> Iterator[Finding]:
    """check_errorlog_dir: each server's ErrorLog (the last of its scope) in a directory that exists."""
    last: dict[int, ResolvedDirective] = {}
    for item in ctx.items_named("errorlog"):
        if isinstance(item, ResolvedDirective) and len(item.args) == 1 \
                and not any(p.lname in _DIRECTORY_SCOPES for p in item.parents):
            vhost = next((p for p in item.parents if p.lname == "virtualhost"), None)
            last[id(vhost) if vhost else 0] = item
    for item in last.values():
        directory = log_directory_missing(ctx, item.args[0])
        if directory is None:
            continue
        vhost = next((p for p in item.parents if p.lname == "virtualhost"), None)
        desc = (f"error log of vhost defined at {vhost.position.file}:{vhost.position.line}" if vhost
                else "main error log")
        yield ctx.finding("AT510", f"AH02291: Cannot access directory '{directory}' for {desc} "
                          "(httpd will not start)", item)


_DIRECTORY_SCOPES = {"directory", "directorymatch", "location", "locationmatch", "files", "filesmatch"}


_READERS = (_options, _overrides, _listen_addresses, _vhost_addresses, _else_without_if, _limit_trace,
            _keywords, _server_names, _root_user, _error_documents, _request_limits, _etags, _server_aliases,
            _ranges, _http_protocol_options, _mutexes, _errors)
_READERS_OF_THIS_MACHINE = (_log_levels, _document_roots, _core_dump_directory, _error_log_directories,
                            _unknown_users)
