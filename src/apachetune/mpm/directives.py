"""MPM directive names, defaults and compile-time limits of httpd 2.4 (facts from
server/mpm/*/{prefork,worker,event}.c and mpm_default.h, 2.4.x)."""

from __future__ import annotations

MPMS = ("prefork", "worker", "event")

# The directives each MPM reads, canonical spelling, in the order httpd's manual lists them.
MPM_DIRECTIVES: dict[str, tuple[str, ...]] = {
    "prefork": ("StartServers", "MinSpareServers", "MaxSpareServers", "ServerLimit",
                "MaxRequestWorkers", "MaxConnectionsPerChild", "ListenBacklog"),
    "worker": ("StartServers", "MinSpareThreads", "MaxSpareThreads", "ServerLimit", "ThreadLimit",
               "ThreadsPerChild", "MaxRequestWorkers", "MaxConnectionsPerChild", "ListenBacklog"),
    "event": ("StartServers", "MinSpareThreads", "MaxSpareThreads", "ServerLimit", "ThreadLimit",
              "ThreadsPerChild", "MaxRequestWorkers", "AsyncRequestWorkerFactor",
              "MaxConnectionsPerChild", "ListenBacklog"),
}

# pre_config defaults. MaxRequestWorkers' default is computed from the *default*
# ServerLimit x ThreadsPerChild (16 x 25 = 400), whatever is configured.
DEFAULTS: dict[str, dict[str, int | float]] = {
    "prefork": {"StartServers": 5, "MinSpareServers": 5, "MaxSpareServers": 10, "ServerLimit": 256,
                "MaxRequestWorkers": 256, "MaxConnectionsPerChild": 0, "ListenBacklog": 511},
    "worker": {"StartServers": 3, "MinSpareThreads": 75, "MaxSpareThreads": 250, "ServerLimit": 16,
               "ThreadLimit": 64, "ThreadsPerChild": 25, "MaxRequestWorkers": 400,
               "MaxConnectionsPerChild": 0, "ListenBacklog": 511},
    "event": {"StartServers": 3, "MinSpareThreads": 75, "MaxSpareThreads": 250, "ServerLimit": 16,
              "ThreadLimit": 64, "ThreadsPerChild": 25, "MaxRequestWorkers": 400,
              "AsyncRequestWorkerFactor": 2.0, "MaxConnectionsPerChild": 0, "ListenBacklog": 511},
}

# Compile-time maxima (MAX_SERVER_LIMIT / MAX_THREAD_LIMIT).
LIMITS: dict[str, dict[str, int]] = {
    "prefork": {"ServerLimit": 200000},
    "worker": {"ServerLimit": 20000, "ThreadLimit": 20000},
    "event": {"ServerLimit": 20000, "ThreadLimit": 100000},
}

# Names httpd still accepts for the same setting (each logs an INFO deprecation note).
LEGACY_NAMES = {"maxclients": "MaxRequestWorkers", "maxrequestsperchild": "MaxConnectionsPerChild"}
DEPRECATION_CODES = {
    ("prefork", "maxclients"): "AH00188", ("worker", "maxclients"): "AH00324",
    ("event", "maxclients"): "AH00521", ("*", "maxrequestsperchild"): "AH00545",
}

ALL_MPM_DIRECTIVES = frozenset(n.lower() for names in MPM_DIRECTIVES.values() for n in names) | frozenset(LEGACY_NAMES)


# lower-case name (legacy names too) -> canonical spelling: one dict lookup per directive linted.
_CANONICAL = {n.lower(): n for names in MPM_DIRECTIVES.values() for n in names} | LEGACY_NAMES


def canonical(name: str) -> str | None:
    """The canonical MPM directive for `name` (legacy names mapped), or None."""
    return _CANONICAL.get(name.lower())


def setting_key(name: str) -> str:
    """The setting a directive sets, lower case: MaxClients and MaxRequestWorkers are one."""
    return (canonical(name) or name).lower()
