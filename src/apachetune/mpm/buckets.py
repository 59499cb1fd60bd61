"""How many listener buckets httpd 2.4 uses (server/listen.c, ap_duplicate_listeners).

Each bucket is a duplicated set of listening sockets (SO_REUSEPORT) served by its own
children; the MPMs' run functions scale StartServers and the spare bounds by the count.
"""

from __future__ import annotations

import os

from apachetune.mpm.numbers import atoi


def listen_buckets(ratio: int | str | None, online_cores: int | None = None, *,
                   reuseport: bool = True) -> int:
    """Buckets for `ListenCoresBucketsRatio ratio` on a machine with `online_cores`
    (default: this machine's sysconf(_SC_NPROCESSORS_ONLN)). No ratio (the default 0) or no
    SO_REUSEPORT: 1. Otherwise cores / ratio, integer division, when that is above 1."""
    value = atoi(ratio) if isinstance(ratio, str) else (ratio or 0)
    if value < 1 or not reuseport:
        return 1
    cores = online_cores if online_cores is not None else os.sysconf("SC_NPROCESSORS_ONLN")
    return max(1, cores // value)


def ratio_error(ratio: str) -> str | None:
    """ap_set_listencbratio's refusal (a syntax error at start-up), or None."""
    return "ListenCoresBucketsRatio must be > 0" if atoi(ratio) < 1 else None
