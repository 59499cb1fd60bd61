"""What httpd 2.4 does with the MPM directives when it starts.

`simulate_startup` replays, in httpd's own order, every check of the MPM's
`*_check_config` hook (each one that prints an AH message gives the same
message with the same numbers) and then the silent adjustments the MPM's run
function makes before it forks (spare bounds and StartServers against the
listener buckets and the process limit). Facts: server/mpm/prefork/prefork.c
(prefork_check_config, prefork_run), server/mpm/worker/worker.c
(worker_check_config, worker_run), server/mpm/event/event.c
(event_check_config, event_run), server/mpm_common.c, server/listen.c (2.4.x).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from apachetune.mpm.directives import (
    DEFAULTS,
    DEPRECATION_CODES,
    LEGACY_NAMES,
    LIMITS,
    MPM_DIRECTIVES,
    MPMS,
    canonical,
)
from apachetune.mpm.numbers import atoi, strtod_strict

_WORKER_FACTOR_SCALE = 16  # event.c: AsyncRequestWorkerFactor is kept in 1/16ths


@dataclass(frozen=True, slots=True)
class StartupMessage:
    code: str
    level: str  # "warning" (printed by -t), "info" (only with -e info) or "error" (httpd stops)
    text: str  # exactly what httpd prints after "AHnnnnn: "
    directive: str | None = None  # the directive it is about

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "text": self.text}


@dataclass(frozen=True, slots=True)
class Adjustment:
    directive: str
    configured: int | float | None  # None: not set, the default was adjusted
    effective: int | float
    code: str | None  # the AH message, or None for a silent change
    silent: bool


@dataclass
class StartupResult:
    mpm: str
    configured: dict[str, str]
    effective: dict[str, int | float]
    messages: list[StartupMessage] = field(default_factory=list)
    adjustments: list[Adjustment] = field(default_factory=list)
    fatal: list[StartupMessage] = field(default_factory=list)
    legacy_names: list[str] = field(default_factory=list)
    # INFO deprecation notes, one per legacy-named line read, in reading order. httpd logs them
    # while reading the config (before any check), so `-t` shows them only with `-e info`.
    notices: list[StartupMessage] = field(default_factory=list)
    # A real start reads the config twice; the second check_config logs the same checks with
    # the next AH code and shorter texts to the ErrorLog (seen with -D FOREGROUND; a daemonized
    # start loses them, its stderr is gone by then).
    error_log: list[StartupMessage] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.mpm,
            "configured": dict(self.configured),
            "effective": dict(self.effective),
            "startup_messages": [m.to_json() for m in self.messages],
        }


def _values(mpm: str, directives: Iterable[tuple[str, list[str]]] | Mapping[str, str]
            ) -> tuple[dict[str, str], list[str], list[StartupMessage], list[StartupMessage]]:
    """Canonical name -> the argument httpd reads (the last one set wins), legacy names seen,
    the first error httpd stops at while reading them (each occurrence is checked as it is
    read, so an invalid value is fatal even when a later line sets a valid one), and the INFO
    deprecation notes httpd logs before it stops."""
    items = directives.items() if isinstance(directives, Mapping) else directives
    configured: dict[str, str] = {}
    legacy: list[str] = []
    errors: list[StartupMessage] = []
    notices: list[StartupMessage] = []
    for name, args in items:
        canon = canonical(name)
        if canon is None:
            continue
        words = [args] if isinstance(args, str) else list(args)
        if len(words) != 1 or words[0] == "":
            error = _takes_one(name, mpm)  # config.c refuses it before the handler runs
        else:
            error = _read_error(mpm, canon, words[0])
        if name.lower() in LEGACY_NAMES:
            legacy.append(name)
            notice = _deprecation_notice(mpm, name)
            if notice and not errors and error is None:
                notices.append(notice)
        if error and not errors:
            errors.append(StartupMessage("AH00526", "error", error, canon))
        if not error:
            configured[canon] = words[0]
    return configured, legacy, errors, notices


def _deprecation_notice(mpm: str, name: str) -> StartupMessage | None:
    """The INFO note the handler logs for a legacy name: prefork.c set_max_clients (AH00188),
    worker.c / event.c set_max_workers (AH00324 / AH00521), mpm_common.c
    ap_mpm_set_max_requests (AH00545)."""
    lname = name.lower()
    code = DEPRECATION_CODES.get((mpm, lname)) or DEPRECATION_CODES.get(("*", lname))
    if code is None:
        return None
    new = LEGACY_NAMES[lname]
    # The handler compares with strcasecmp but prints the canonical spelling.
    old = "MaxClients" if lname == "maxclients" else "MaxRequestsPerChild"
    return StartupMessage(code, "info", f"{old} is deprecated, use {new} instead.", new)


def _read_error(mpm: str, canon: str, value: str) -> str | None:
    """The handlers that refuse a value outright (event.c set_worker_factor, listen.c)."""
    if canon == "AsyncRequestWorkerFactor" and mpm == "event":
        number = strtod_strict(value)
        if number is None:
            return "error parsing value"
        if not number > 0:
            return "AsyncRequestWorkerFactor argument must be a positive number"
    if canon == "ListenBacklog" and atoi(value) < 1:
        return "ListenBacklog must be > 0"
    return None


def _takes_one(name: str, mpm: str) -> str:
    """httpd's wording for a TAKE1 directive given no argument or several (config.c invoke_cmd)."""
    from apachetune.config.directives import lookup

    spec = lookup(name)
    spelled = spec.name if spec else name
    text = spec.help_for(f"mpm_{mpm}_module") if spec else ""
    return f"{spelled} takes one argument" + (f", {text}" if text else "")


class _Run:
    def __init__(self, mpm: str, configured: dict[str, str]):
        self.mpm = mpm
        self.configured = configured
        self.v: dict[str, int | float] = dict(DEFAULTS[mpm])
        for name in MPM_DIRECTIVES[mpm]:
            if name in configured and name != "AsyncRequestWorkerFactor":
                self.v[name] = atoi(configured[name])
        self.read = dict(self.v)  # what httpd read, before any check
        self.messages: list[StartupMessage] = []
        self.fatal: list[StartupMessage] = []
        self.adjustments: list[Adjustment] = []
        self.error_log: list[StartupMessage] = []

    def set(self, name: str, value: int | float, code: str | None = None, text: str | None = None,
            log: str | None = None) -> None:
        """Apply one check: `text` is the start-up message (-t, first pass), `log` the
        second pass's ErrorLog line, whose code is always the next one."""
        before = self.v[name]
        if code is not None and text is not None:
            self.messages.append(StartupMessage(code, "warning", text, name))
        if code is not None and log is not None:
            self.error_log.append(StartupMessage(f"AH{int(code[2:]) + 1:05d}", "warning", log, name))
        if before != value:
            self.adjustments.append(Adjustment(
                name, before if name in self.configured else None, value, code, code is None))
        self.v[name] = value


def _prefork(run: _Run, buckets: int) -> None:
    v = run.v
    limit = LIMITS["prefork"]["ServerLimit"]
    if v["ServerLimit"] > limit:
        run.set("ServerLimit", limit, "AH00175",
                f"WARNING: ServerLimit of {v['ServerLimit']} exceeds compile-time limit of {limit} "
                f"servers, decreasing to {limit}.",
                f"ServerLimit of {v['ServerLimit']} exceeds compile-time limit of {limit}, decreasing to match")
    elif v["ServerLimit"] < 1:
        run.set("ServerLimit", 1, "AH00177",
                f"WARNING: ServerLimit of {v['ServerLimit']} not allowed, increasing to 1.",
                f"ServerLimit of {v['ServerLimit']} not allowed, increasing to 1")
    if v["MaxRequestWorkers"] > v["ServerLimit"]:
        run.set("MaxRequestWorkers", v["ServerLimit"], "AH00180",
                f"WARNING: MaxRequestWorkers of {v['MaxRequestWorkers']} exceeds ServerLimit value of "
                f"{v['ServerLimit']} servers, decreasing MaxRequestWorkers to {v['ServerLimit']}. "
                "To increase, please see the ServerLimit directive.",
                f"MaxRequestWorkers of {v['MaxRequestWorkers']} exceeds ServerLimit value of "
                f"{v['ServerLimit']}, decreasing to match")
    elif v["MaxRequestWorkers"] < 1:
        run.set("MaxRequestWorkers", 1, "AH00182",
                f"WARNING: MaxRequestWorkers of {v['MaxRequestWorkers']} not allowed, increasing to 1.",
                f"MaxRequestWorkers of {v['MaxRequestWorkers']} not allowed, increasing to 1")
    if v["StartServers"] < 1:
        run.set("StartServers", 1, "AH00184",
                f"WARNING: StartServers of {v['StartServers']} not allowed, increasing to 1.",
                f"StartServers of {v['StartServers']} not allowed, increasing to 1")
    if v["MinSpareServers"] < 1:
        run.set("MinSpareServers", 1, "AH00186",
                f"WARNING: MinSpareServers of {v['MinSpareServers']} not allowed, increasing to 1 to "
                "avoid almost certain server failure. Please read the documentation.",
                f"MinSpareServers of {v['MinSpareServers']} not allowed, increasing to 1")
    # prefork_run(): silent adjustments before the first fork.
    if v["MaxRequestWorkers"] < buckets:
        run.set("MaxRequestWorkers", buckets)
    if v["StartServers"] < buckets:
        run.set("StartServers", buckets)
    if v["MinSpareServers"] < buckets:
        run.set("MinSpareServers", buckets)
    if v["MaxSpareServers"] < v["MinSpareServers"] + buckets:
        run.set("MaxSpareServers", v["MinSpareServers"] + buckets)
    if v["StartServers"] > v["MaxRequestWorkers"]:  # only that many children are started
        run.set("StartServers", v["MaxRequestWorkers"])


# AH codes of the threaded MPMs' start-up messages, in check order.
_THREADED_CODES = {
    "worker": ("AH00300", "AH00302", "AH00305", "AH00307", "AH00310", "AH00312", "AH00314",
               "AH00316", "AH00318", "AH00320", "AH00322"),
    "event": ("AH00497", "AH00499", "AH00502", "AH00504", "AH00507", "AH00509", "AH00511",
              "AH00513", "AH00515", "AH00517", "AH00519"),
}


def _threaded(run: _Run, buckets: int) -> None:
    v = run.v
    (c_sl_max, c_sl_min, c_tl_max, c_tl_min, c_tpc_max, c_tpc_min, c_mrw_tpc, c_mrw_mult,
     c_mrw_sl, c_ss, c_minspare) = _THREADED_CODES[run.mpm]
    max_sl = LIMITS[run.mpm]["ServerLimit"]
    max_tl = LIMITS[run.mpm]["ThreadLimit"]
    if v["ServerLimit"] > max_sl:
        run.set("ServerLimit", max_sl, c_sl_max,
                f"WARNING: ServerLimit of {v['ServerLimit']} exceeds compile-time limit of {max_sl} "
                f"servers, decreasing to {max_sl}.",
                f"ServerLimit of {v['ServerLimit']} exceeds compile-time limit of {max_sl}, decreasing to match")
    elif v["ServerLimit"] < 1:
        run.set("ServerLimit", 1, c_sl_min,
                f"WARNING: ServerLimit of {v['ServerLimit']} not allowed, increasing to 1.",
                f"ServerLimit of {v['ServerLimit']} not allowed, increasing to 1")
    if v["ThreadLimit"] > max_tl:
        run.set("ThreadLimit", max_tl, c_tl_max,
                f"WARNING: ThreadLimit of {v['ThreadLimit']} exceeds compile-time limit of {max_tl} "
                f"threads, decreasing to {max_tl}.",
                f"ThreadLimit of {v['ThreadLimit']} exceeds compile-time limit of {max_tl}, decreasing to match")
    elif v["ThreadLimit"] < 1:
        run.set("ThreadLimit", 1, c_tl_min,
                f"WARNING: ThreadLimit of {v['ThreadLimit']} not allowed, increasing to 1.",
                f"ThreadLimit of {v['ThreadLimit']} not allowed, increasing to 1")
    if v["ThreadsPerChild"] > v["ThreadLimit"]:
        run.set("ThreadsPerChild", v["ThreadLimit"], c_tpc_max,
                f"WARNING: ThreadsPerChild of {v['ThreadsPerChild']} exceeds ThreadLimit of "
                f"{v['ThreadLimit']} threads, decreasing to {v['ThreadLimit']}. "
                "To increase, please see the ThreadLimit directive.",
                f"ThreadsPerChild of {v['ThreadsPerChild']} exceeds ThreadLimit of {v['ThreadLimit']}, "
                "decreasing to match")
    elif v["ThreadsPerChild"] < 1:
        run.set("ThreadsPerChild", 1, c_tpc_min,
                f"WARNING: ThreadsPerChild of {v['ThreadsPerChild']} not allowed, increasing to 1.",
                f"ThreadsPerChild of {v['ThreadsPerChild']} not allowed, increasing to 1")
    tpc = v["ThreadsPerChild"]
    if v["MaxRequestWorkers"] < tpc:
        run.set("MaxRequestWorkers", tpc, c_mrw_tpc,
                f"WARNING: MaxRequestWorkers of {v['MaxRequestWorkers']} is less than ThreadsPerChild "
                f"of {tpc}, increasing to {tpc}. MaxRequestWorkers must be at least as large as the "
                "number of threads in a single server.",
                f"MaxRequestWorkers of {v['MaxRequestWorkers']} is less than ThreadsPerChild of {tpc}, "
                "increasing to match")
    daemons = v["MaxRequestWorkers"] // tpc
    if v["MaxRequestWorkers"] % tpc:
        run.set("MaxRequestWorkers", daemons * tpc, c_mrw_mult,
                f"WARNING: MaxRequestWorkers of {v['MaxRequestWorkers']} is not an integer multiple of "
                f"ThreadsPerChild of {tpc}, decreasing to nearest multiple {daemons * tpc}, for a "
                f"maximum of {daemons} servers.",
                f"MaxRequestWorkers of {v['MaxRequestWorkers']} is not an integer multiple of "
                f"ThreadsPerChild of {tpc}, decreasing to nearest multiple {daemons * tpc}")
    if daemons > v["ServerLimit"]:
        # httpd leaves max_workers as it is but caps the process count: the scoreboard
        # fills at ServerLimit x ThreadsPerChild, so that is the real MaxRequestWorkers.
        sl = v["ServerLimit"]
        run.set("MaxRequestWorkers", sl * tpc, c_mrw_sl,
                f"WARNING: MaxRequestWorkers of {v['MaxRequestWorkers']} would require {daemons} servers "
                f"and would exceed ServerLimit of {sl}, decreasing to {sl * tpc}. "
                "To increase, please see the ServerLimit directive.",
                f"MaxRequestWorkers of {v['MaxRequestWorkers']} would require {daemons} servers and "
                f"exceed ServerLimit of {sl}, decreasing to {sl * tpc}")
        daemons = sl
    if v["StartServers"] < 1:
        run.set("StartServers", 1, c_ss,
                f"WARNING: StartServers of {v['StartServers']} not allowed, increasing to 1.",
                f"StartServers of {v['StartServers']} not allowed, increasing to 1")
    if v["MinSpareThreads"] < 1:
        run.set("MinSpareThreads", 1, c_minspare,
                f"WARNING: MinSpareThreads of {v['MinSpareThreads']} not allowed, increasing to 1 to "
                "avoid almost certain server failure. Please read the documentation.",
                f"MinSpareThreads of {v['MinSpareThreads']} not allowed, increasing to 1")
    # worker_run() / event_run(): silent adjustments before the first fork.
    if daemons < buckets:
        daemons = buckets
        run.set("MaxRequestWorkers", daemons * tpc)
    if v["StartServers"] < buckets:
        run.set("StartServers", buckets)
    if v["MinSpareThreads"] < tpc * (buckets - 1) + buckets:
        run.set("MinSpareThreads", tpc * (buckets - 1) + buckets)
    if v["MaxSpareThreads"] < v["MinSpareThreads"] + (tpc + 1) * buckets:
        run.set("MaxSpareThreads", v["MinSpareThreads"] + (tpc + 1) * buckets)
    if v["StartServers"] > daemons:  # only that many children are started
        run.set("StartServers", daemons)


def _event_factor(run: _Run) -> None:
    raw = run.configured.get("AsyncRequestWorkerFactor")
    if raw is None:
        return
    scaled = int(strtod_strict(raw) * _WORKER_FACTOR_SCALE)
    run.v["AsyncRequestWorkerFactor"] = max(scaled, _WORKER_FACTOR_SCALE) / _WORKER_FACTOR_SCALE


def simulate_startup(mpm: str, directives: Iterable[tuple[str, list[str]]] | Mapping[str, str], *,
                     listen_buckets: int = 1) -> StartupResult:
    """Replay httpd's start-up handling of the MPM directives; see the module docstring."""
    if mpm not in MPMS:
        raise ValueError(f"unknown MPM {mpm!r}; expected one of {', '.join(MPMS)}")
    configured, legacy, arg_errors, notices = _values(mpm, directives)
    run = _Run(mpm, configured)
    run.fatal.extend(arg_errors)
    if mpm == "event":
        _event_factor(run)
    if mpm == "prefork":
        _prefork(run, listen_buckets)
    else:
        _threaded(run, listen_buckets)
    effective = {name: run.v[name] for name in MPM_DIRECTIVES[mpm]}
    return StartupResult(mpm, configured, effective, run.messages, run.adjustments, run.fatal, legacy,
                         notices, run.error_log)


def is_fixed_point(mpm: str, values: Mapping[str, int | float], *, listen_buckets: int = 1) -> bool:
    """True when httpd would run `values` exactly as given: no message, no silent change."""
    result = simulate_startup(mpm, {k: str(v) for k, v in values.items()}, listen_buckets=listen_buckets)
    return not result.messages and not result.fatal and all(
        result.effective[k] == v for k, v in values.items() if k in result.effective)
