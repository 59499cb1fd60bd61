"""ProxyPass's key=value parameters as mod_proxy reads them (AT510, in httpd's words): a worker's
(set_worker_param: timeout=, retry=, keepalive=, ping=, status= ...) or, for a balancer://
URL, the balancer's (set_balancer_param: lbmethod=, stickysessionsep=, failonstatus= ...).

Two of httpd's rules decide what is judged at all:
- the parameters are an apr_table: a key given twice (any case) is read once, with its last
  value, where it first appeared;
- a worker whose URL an earlier definition already covers is shared, and its parameters are
  ignored with a warning (AH01146): whenever an earlier ProxyPass, ProxyPassMatch, BalancerMember or
  <Proxy> names the same scheme://host:port, the parameters are not judged.

Facts: modules/proxy/mod_proxy.c add_pass, set_worker_param, set_balancer_param;
modules/proxy/mod_proxy_hcheck.c set_worker_hc_param; server/util.c ap_timeout_parameter_parse
(httpd 2.4.x; the keys by the release that added them)."""

from __future__ import annotations

from collections.abc import Callable

from apachetune.config.conditions import Version, at_least
from apachetune.config.effective import ResolvedDirective
from apachetune.lint.checks.core_readers import buffer_size_error
from apachetune.lint.context import LintContext
from apachetune.mpm.numbers import atof, atoi, atol, timeout_parameter

_FLAGS = frozenset({"nocanon", "interpolate", "noquery"})
_SINCE = {"upgrade": "2.4.26", "responsefieldsize": "2.4.34", "secret": "2.4.42", "addressttl": "2.4.59"}
_NAMES_ONLY = frozenset({"route", "redirect", "flusher", "upgrade", "secret"})  # strings (length limits not judged)
_STATUS_FLAGS = frozenset("OINGUDSEHRFC")  # proxy_wstat_tbl's flags, compared after toupper()
LBMETHODS = {"lbmethod_byrequests_module": "byrequests", "lbmethod_bytraffic_module": "bytraffic",
              "lbmethod_bybusyness_module": "bybusyness", "lbmethod_heartbeat_module": "heartbeat"}
_INT32_MAX_S = 2**31 - 1


def _on_off(name: str) -> Callable[[str], str | None]:
    return lambda val: None if val.lower() in ("on", "off") else f"{name} must be On|Off"


def _at_least(minimum: int, message: str) -> Callable[[str], str | None]:
    return lambda val: message if atoi(val) < minimum else None


def _timeout(unit: str, wrong: str, short: str) -> Callable[[str], str | None]:
    def check(val: str) -> str | None:
        us = timeout_parameter(val, unit)
        return wrong if us is None else (short if us < 1000 else None)
    return check


def _loadfactor(val: str) -> str | None:
    value = atof(val) * 100.0
    ok = value == value and abs(value) < 2**31 and 100 <= int(value) <= 10000  # (int) of a double
    return None if ok else "LoadFactor must be a number between 1..100"


def _buffer(name: str, read: Callable[[str], int] = atoi) -> Callable[[str], str | None]:
    return lambda val: buffer_size_error(name, read(val))


def _address_ttl(val: str) -> str | None:
    us = None if val == "-1" else timeout_parameter(val, "s")
    if val == "-1" or (us is not None and us <= _INT32_MAX_S * 10**6 and us % 10**6 == 0):
        return None
    return f"AddressTTL must be -1 or a number of seconds not exceeding ({_INT32_MAX_S})"


def _status(val: str) -> str | None:
    i = 0
    while i < len(val):  # a sign applies to the one character after it
        if val[i] in "+-":
            i += 1
        if i >= len(val) or not val[i].isascii() or val[i].upper() not in _STATUS_FLAGS:
            return "Unknown status parameter option"
        i += 1
    return None


def _flushwait(val: str) -> str | None:
    wait = atoi(val)
    return "flushwait must be <= 1000, or 0 for system default of 10 millseconds." if not 0 <= wait <= 1000 else None


_WORKER: dict[str, Callable[[str], str | None]] = {
    "loadfactor": _loadfactor,
    "retry": _at_least(0, "Retry must be a positive value"),
    "ttl": _at_least(1, "TTL must be at least one second"),
    "min": _at_least(0, "Min must be a positive number"),
    "max": _at_least(0, "Max must be a positive number"),
    "smax": _at_least(0, "Smax must be a positive number"),
    "acquire": _timeout("ms", "Acquire timeout has wrong format", "Acquire must be at least one millisecond"),
    "timeout": _at_least(1, "Timeout must be at least one second"),
    "iobuffersize": _buffer("IOBufferSize", atol),
    "receivebuffersize": _buffer("ReceiveBufferSize"),
    "keepalive": _on_off("KeepAlive"),
    "disablereuse": _on_off("DisableReuse"),
    "enablereuse": _on_off("EnableReuse"),
    "addressttl": _address_ttl,
    "status": _status,
    "flushpackets": lambda val: None if val.lower() in ("on", "off", "auto") else "flushpackets must be on|off|auto",
    "flushwait": _flushwait,
    "ping": _timeout("s", "Ping/Pong timeout has wrong format", "Ping/Pong timeout must be at least one millisecond"),
    "lbset": lambda val: None if 0 <= atoi(val) <= 99 else "lbset must be between 0 and 99",
    "connectiontimeout": _timeout("s", "Connectiontimeout has wrong format",
                                  "Connectiontimeout must be at least one millisecond."),
    "responsefieldsize": lambda val: ("ResponseFieldSize must be greater than 0 bytes, or 0 for system default."
                                      if atoi(val) < 0 else None),
}


def _hcinterval(val: str) -> str | None:
    us = timeout_parameter(val, "s")
    if us is None:
        return "Unparse-able hcinterval setting"
    return "Interval must be a positive value greater than 100ms" if us < 100_000 else None  # AP_WD_TM_SLICE


# mod_proxy_hcheck's keys whose values are judged (the method, template, expression and URI are not).
_HCHECK: dict[str, Callable[[str], str | None]] = {
    "hcinterval": _hcinterval,
    "hcpasses": _at_least(0, "Passes must be a positive value"),
    "hcfails": _at_least(0, "Fails must be a positive value"),
}


def _failonstatus(val: str) -> str | None:
    codes = val.replace(",", " ").split(" ")
    if all(100 <= atoi(code) < 600 for code in codes if code):
        return None
    return "failonstatus must be one or more HTTP response codes"


_BALANCER: dict[str, Callable[[str], str | None]] = {
    "stickysession": lambda val: None,
    "stickysessionsep": lambda val: (None if len(val.encode()) == 1 or val.lower() == "off"
                                     else "stickysessionsep must be a single character or Off"),
    "nofailover": _on_off("failover"),
    "timeout": _at_least(1, "timeout must be at least one second"),
    "maxattempts": _at_least(0, "maximum number of attempts must be a positive number"),
    "scolonpathdelim": _on_off("scolonpathdelim"),
    "failonstatus": _failonstatus,
    "failontimeout": _on_off("failontimeout"),
    "nonce": lambda val: None,
    "growth": lambda val: None if 1 <= atoi(val) <= 100 else "growth must be between 1 and 100",
    "forcerecovery": _on_off("forcerecovery"),
}


def table(words: list[str]) -> list[tuple[str, str]]:
    """The key=value words as apr_table_setn keeps them: a repeated key (any case) once, at its
    first place, with its last value."""
    kept: dict[str, tuple[str, str]] = {}
    for word in words:
        key, _, val = word.partition("=")
        kept[key.lower()] = (kept[key.lower()][0] if key.lower() in kept else key, val)
    return list(kept.values())


def worker_param_error(key: str, val: str, version: str = "2.4.71", hcheck: bool = False) -> str | None:
    lower = key.lower()
    since = _SINCE.get(lower)
    known = since is None or at_least(Version.parse(version), since)
    if known and lower in _WORKER:
        return _WORKER[lower](val)
    if known and lower in _NAMES_ONLY:
        return None
    if hcheck:  # set_worker_hc_param: its hc* keys, nothing else
        return hcheck_param_error(key, val)
    return "unknown Worker parameter"


def hcheck_param_error(key: str, val: str) -> str | None:
    """set_worker_hc_param (mod_proxy_hcheck) on one key=value (templates, methods, URIs and
    expressions by name are not judged)."""
    lower = key.lower()
    if lower in _HCHECK:
        return _HCHECK[lower](val)
    return None if lower in ("hctemplate", "hcmethod", "hcuri", "hcexpr") else "unknown Worker hcheck parameter"


def balancer_param_error(key: str, val: str, lbmethods: frozenset[str] | None) -> str | None:
    """`lbmethods`: the providers the loaded modules register (None: not known, not judged)."""
    lower = key.lower()
    if lower == "lbmethod":
        return None if lbmethods is None or val in lbmethods else "unknown lbmethod"
    check = _BALANCER.get(lower)
    return check(val) if check else "unknown Balancer parameter"


def authority(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    return (scheme + sep + rest.split("/", 1)[0]).lower()


DEFINES_WORKERS = frozenset({"proxypass", "proxypassmatch", "balancermember", "proxy", "proxymatch"})


def shared(ctx: LintContext, item: object, url: str, among: frozenset[str] = DEFINES_WORKERS) -> bool:
    """Whether an earlier worker definition (of the kinds `among`) names the same
    scheme://host:port (then httpd may share that worker and ignore these parameters)."""
    def in_order() -> list[tuple[int, str]]:
        return [(id(it), authority(w)) for it in ctx.eff.in_order() if it.lname in among
                for w in it.args if "://" in w]
    before = set()
    for ident, named in ctx.memo(f"proxy-worker-authorities {sorted(among)}", in_order):
        if ident == id(item):
            break
        before.add(named)
    return authority(url) in before


def params_error(ctx: LintContext, item: ResolvedDirective, location: bool) -> str | None:
    """add_pass's parameters, once the path and URL passed (module_readers.proxy_pass_error)."""
    rest = [w for w in item.args if w != "~"][0 if location else 1:]
    if not rest or rest[0] == "!":
        return None
    url, params = rest[0], [w for w in rest[1:] if "=" in w and w.lower() not in _FLAGS
                            and not w.lower().startswith("mapping=")]
    if url[:11].lower() == "balancer://":
        lbmethods = None
        if not ctx.third_party_may_register("providers"):
            lbmethods = frozenset(name for module, name in LBMETHODS.items() if ctx.module_loaded(module))
        for key, val in table(params):
            if err := balancer_param_error(key, val, lbmethods):
                return f"ProxyPass {err}"
        return None
    if not params or "$" in authority(url) or shared(ctx, item, url):
        return None
    hcheck = ctx.module_loaded("proxy_hcheck_module")
    for key, val in table(params):
        if err := worker_param_error(key, val, ctx.eff.httpd_version, hcheck):
            return f"ProxyPass {err}"
    return None
