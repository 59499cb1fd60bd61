"""The MPM section a validation run starts its server with: a config file's section and the
command line's overrides, as httpd would run them (after its start-up adjustments)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from apachetune.errors import UsageError
from apachetune.mpm import simulate_startup
from apachetune.mpm.buckets import listen_buckets, ratio_error
from apachetune.mpm.numbers import atoi, max_mem_free, timeout_parameter

if TYPE_CHECKING:
    from apachetune.config.effective import EffectiveConfig
    from apachetune.config.resolver import ResolveOptions


def load_directives(config: str | None, mpm: str, max_request_workers: int | None = None,
                    threads_per_child: int | None = None, keepalive_timeout: int | None = None,
                    listen_backlog: bool = False, version: str | None = None, cores: int | None = None,
                    keep_server_limit: bool = False, startup_messages: list[str] | None = None,
                    context: ResolveOptions | None = None) -> dict:
    """The directives to run `mpm` with: `config`'s MPM section, keep-alive settings and
    MaxMemFree (as httpd keeps it, in KiB), then the
    overrides; refused (UsageError) when httpd would not start with them. ListenBacklog only
    with `listen_backlog` (a validation run keeps the server's default). `version`: the httpd
    2.4.x whose start-up checks apply (default 2.4.71). A ListenCoresBucketsRatio is kept too,
    and its listener buckets on `cores` online CPUs (default: this machine's) raise the spare
    bounds as httpd does at start-up. ServerLimit is what MaxRequestWorkers needs, unless
    `keep_server_limit` (the simulation's graceful restarts use the headroom above it).
    `startup_messages`: given a list, what httpd would print at start-up about these directives
    (its warnings, "AHnnnnn: text") is appended to it. `context`: how the tree is read (-d, -D,
    --root, --env-file, as lint reads it; default: from the file's directory, no envvars)."""
    given, extra, buckets = _from_file(config, mpm, version, cores, context) if config else ([], {}, 1)
    if max_request_workers:
        given.append(("MaxRequestWorkers", [str(max_request_workers)]))
    if threads_per_child and mpm != "prefork":
        given += [("ThreadsPerChild", [str(threads_per_child)]), ("ThreadLimit", [str(threads_per_child)])]
    if keepalive_timeout is not None:
        extra["KeepAliveTimeout"] = keepalive_timeout
    start = simulate_startup(mpm, given, version=version, listen_buckets=buckets)
    if start.fatal:
        raise UsageError(f"httpd would not start with this section: {start.fatal[0].text}")
    if startup_messages is not None:
        startup_messages.extend(line for m in start.messages if m.level == "warning" for line in m.printed())
    eff = dict(start.effective)
    if mpm != "prefork":
        needed = max(1, eff["MaxRequestWorkers"] // eff["ThreadsPerChild"])
        eff["ServerLimit"] = max(needed, eff["ServerLimit"]) if keep_server_limit else needed
    else:
        eff["ServerLimit"] = eff["MaxRequestWorkers"]
    if not listen_backlog:
        eff.pop("ListenBacklog", None)
    return {**eff, "KeepAlive": "On", "KeepAliveTimeout": 5, **extra}


def _keepalive(text: str) -> tuple[object, str | None]:
    # AP_INIT_FLAG: on or off in any case, nothing else
    if text.lower() not in ("on", "off"):
        return None, "KeepAlive must be On or Off"
    return text.capitalize(), None


def _keepalive_timeout(text: str) -> tuple[object, str | None]:
    # ap_timeout_parameter_parse, seconds by default: "15000ms" and "1h" are times too
    us = timeout_parameter(text, "s")
    if us is None:
        return None, "KeepAliveTimeout has wrong format"
    return (us // 1_000_000 if us % 1_000_000 == 0 else us / 1e6), None


# The keep-alive settings read as httpd's own readers read them (modules/http/http_core.c;
# Timeout is atoi seconds in server/core.c): the simulation and the servers get numbers, or the
# run is refused with httpd's message.
_KEEPALIVE_READERS: dict[str, Callable[[str], tuple[object, str | None]]] = {
    "KeepAlive": _keepalive,
    "KeepAliveTimeout": _keepalive_timeout,
    "MaxKeepAliveRequests": lambda text: (atoi(text), None),
    "Timeout": lambda text: (atoi(text), None),
}


# what httpd says of another number of words (AP_INIT_TAKE1's "takes one argument" and its help)
_ONE_ARGUMENT = {
    "KeepAlive": "KeepAlive must be On or Off",
    "KeepAliveTimeout": "KeepAliveTimeout takes one argument, Keep-Alive timeout duration (sec)",
    "MaxKeepAliveRequests": "MaxKeepAliveRequests takes one argument, Maximum number of Keep-Alive requests "
                            "per connection, or 0 for infinite",
    "Timeout": "Timeout takes one argument, Timeout duration (sec)",
}


def directive_line(name: str, value: object) -> str:
    """One line of a server's configuration. KeepAliveTimeout held in fractional seconds (500ms)
    is written in milliseconds: httpd reads "0.5" as zero seconds followed by a unit it does not
    know. Other numbers as they are (AsyncRequestWorkerFactor 1.5 is atof's)."""
    if name == "KeepAliveTimeout" and isinstance(value, float):
        value = int(value) if value.is_integer() else f"{round(value * 1000)}ms"
    return f"{name} {value}"


def run_options(context: ResolveOptions | None, mpm: str | None = None,
                version: str | None = None) -> ResolveOptions:
    """How a run reads its file: `context` (the command's -d, -D, --root, ...; default: from the
    file's directory, no envvars) with `mpm` loaded, as httpd `version`."""
    from apachetune.config.resolver import ResolveOptions

    return (context or ResolveOptions(use_env_file=False)).running(mpm, version)


def _from_file(config: str, mpm: str, version: str | None, cores: int | None,
               context: ResolveOptions | None = None) -> tuple[list[tuple[str, list[str]]], dict[str, object], int]:
    """`config`'s MPM directives as given, the other settings kept beside them, and its listener
    buckets on `cores` CPUs; refused (UsageError) where httpd would not start."""
    from apachetune.config.resolver import resolve

    opts = run_options(context, mpm, version)
    eff = resolve(config, opts)
    _unknown_commands(eff, opts)
    given = [(d.name, d.args) for d in eff.directives]
    extra: dict[str, object] = {}
    buckets = 1
    for name, read in _KEEPALIVE_READERS.items():
        d = eff.get(name)
        if d is not None:
            value, refused = read(d.args[0]) if len(d.args) == 1 else (None, _ONE_ARGUMENT[name])
            if refused:
                raise UsageError(f"{d.position}: httpd would not start with this section: {refused}")
            extra[name] = value
    d = eff.get("MaxMemFree")  # how much each allocator keeps: event's kept pools depend on it
    if d is not None and d.args:
        kib = max_mem_free(d.args[0])
        if kib is None:
            raise UsageError(f"{d.position}: httpd would not start with this section: "
                             f"Invalid MaxMemFree value: {d.args[0]}")
        extra["MaxMemFree"] = kib  # as httpd keeps it: 4194304 is 0, no limit
    d = eff.get("ListenCoresBucketsRatio")  # the simulation's accept queues, one a bucket
    if d is not None and d.args:
        refused = ratio_error(d.args[0])
        if refused:
            raise UsageError(f"{d.position}: httpd would not start with this section: {refused}")
        extra["ListenCoresBucketsRatio"] = atoi(d.args[0])
        buckets = listen_buckets(d.args[0], cores)
    return given, extra, buckets


def _unknown_commands(eff, opts) -> None:
    """Refuse (UsageError) a configuration with a line httpd does not know ("Invalid command":
    most often a typo such as MaxRequestWorker): httpd would not start, and the run would silently
    take the default the line meant to change. A file that loads no module is a fragment whose
    includer may load the module defining it: said, not refused."""
    from apachetune.console import warning
    from apachetune.lint.engine import refusal_message, unknown_commands

    found = unknown_commands(eff, opts)
    if found and eff.module_positions:
        raise UsageError(refusal_message(found))
    if found:
        warning(refusal_message(found, verdict="") + "; httpd refuses such a line unless a module loaded by the file "
                "including this one defines it; left out here")


READ_TIMEOUT_HEADER = 20.0  # mod_reqtimeout's header timeout when it is loaded and not set


def read_server(config: str | None, version: str | None = None,
                context: ResolveOptions | None = None) -> EffectiveConfig | None:
    """`config` as httpd `version` reads it with the MPM it loads (None without a file): what the
    server-wide settings below are read from, once a version."""
    if not config:
        return None
    from apachetune.config.resolver import resolve

    return resolve(config, run_options(context, version=version))


def maps_files(eff: EffectiveConfig | None) -> bool:
    """Whether httpd memory-maps the files it sends (EnableMMAP, On unless the server's level says
    Off): each static response then maps its file and unmaps it after, under its process's
    memory-map lock."""
    from apachetune.config.effective import server_flag

    return eff is None or server_flag(eff, "EnableMMAP", True)


def silent_connection_timeouts(eff: EffectiveConfig | None) -> tuple[float, float | None]:
    """What a connection that sends nothing meets, from the server's settings `eff` (None: httpd's
    defaults): (how long the kernel keeps it
    from accept(), how long a worker then waits for its request line; None: Timeout). Linux:
    any AcceptFilter for http but `none` (the default is `data`) sets TCP_DEFER_ACCEPT 30 (listen.c),
    which keeps it 31 s (simulate/server.py, DEFER_ACCEPT); mod_reqtimeout, when loaded, cuts the
    wait to its header timeout (RequestReadTimeout header=N, default 20; 0: off)."""
    from apachetune.simulate.server import DEFER_ACCEPT

    if eff is None:
        return DEFER_ACCEPT, None
    defer = DEFER_ACCEPT
    for d in eff.all("AcceptFilter"):
        if len(d.args) == 2 and d.args[0].lower() == "http":
            defer = 0.0 if d.args[1].lower() == "none" else DEFER_ACCEPT
    if "reqtimeout_module" not in eff.modules:
        return defer, None
    header = READ_TIMEOUT_HEADER
    for d in eff.all("RequestReadTimeout"):
        for arg in d.args:
            key, _, value = arg.partition("=")
            if key.lower() == "header":
                first = re.match(r"\s*(\d+)", value)
                if first:
                    header = float(first.group(1))
    return defer, (header or None)
