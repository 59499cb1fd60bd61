"""AT609-AT612: the configuration against the host it runs on (`lint --measure` / `--facts FILE`).

Without host facts these rules yield nothing: a CI machine linting a repository is not the server.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from apachetune.config.effective import server_flag
from apachetune.lint.checks.scopes import norm_dir, server_and_vhost
from apachetune.lint.context import LintContext
from apachetune.lint.finding import Finding, Fix
from apachetune.lint.host import NETWORK_FILESYSTEMS
from apachetune.mpm.numbers import atoi

DEFAULT_BACKLOG = 511
SPARE_DESCRIPTORS = 64  # listeners, logs, pipes, the scoreboard: what a child holds besides clients


def listen_backlog_clamped(ctx: LintContext) -> Iterator[Finding]:
    host = ctx.host
    if host is None or host.somaxconn is None:
        return
    d = ctx.eff.get("ListenBacklog")
    backlog = atoi(d.args[0]) if d is not None and d.args else DEFAULT_BACKLOG
    if backlog > host.somaxconn:
        said = f"ListenBacklog {backlog}" if d is not None else f"ListenBacklog (default {DEFAULT_BACKLOG})"
        yield ctx.finding(
            "AT609", f"{said} is above this host's net.core.somaxconn {host.somaxconn}: the kernel "
            f"clamps the accept queue to {host.somaxconn}, so a burst beyond it has its SYNs dropped "
            "(clients retry after 1 s, 3 s, 7 s). Raise net.core.somaxconn, or expect the smaller queue.",
            d if d is not None else ctx.anchor())


def memory_overcommitted(ctx: LintContext) -> Iterator[Finding]:
    host = ctx.host
    if host is None or ctx.startup is None or host.available_mib is None or host.per_worker_mib is None:
        return
    e = ctx.startup.effective
    workers = e["MaxRequestWorkers"]
    tpc = 1 if ctx.mpm == "prefork" else e.get("ThreadsPerChild", 25)
    processes = math.ceil(workers / tpc)
    per_process = 0.0 if ctx.mpm == "prefork" else float(host.per_process_mib or 0.0)
    need = workers * host.per_worker_mib + processes * per_process + float(host.parent_mib or 0.0)
    if need > host.available_mib:
        fits = int(max(0.0, host.available_mib - float(host.parent_mib or 0.0)) //
                   (host.per_worker_mib + per_process / tpc))
        fits = max(int(tpc), fits // int(tpc) * int(tpc)) if ctx.mpm != "prefork" else max(1, fits)
        yield ctx.finding(
            "AT610", f"MaxRequestWorkers {workers} x {host.per_worker_mib:.1f} MiB per worker"
            + (f" + {processes} processes x {per_process:.1f} MiB" if per_process else "")
            + f" = {need:.0f} MiB at full load, but {host.available_mib:.0f} MiB is available "
            f"({host.source}): the server swaps or is OOM-killed before it reaches MaxRequestWorkers. "
            f"About {fits} workers fit.", ctx.anchor("MaxRequestWorkers"), (),
            Fix({"MaxRequestWorkers": str(fits)}))


def event_descriptors(ctx: LintContext) -> Iterator[Finding]:
    host = ctx.host
    if host is None or host.nofile is None or ctx.mpm != "event" or ctx.startup is None:
        return
    e = ctx.startup.effective
    tpc = e.get("ThreadsPerChild", 25)
    d = ctx.winner("AsyncRequestWorkerFactor")
    factor = int(float(d.args[0])) if d is not None and d.args and _finite(d.args[0]) else 2
    per_process = tpc + tpc * factor  # 2.4.71: ThreadsPerChild + idle workers x floor(factor)
    if per_process + SPARE_DESCRIPTORS > host.nofile:
        yield ctx.finding(
            "AT611", f"Each event process accepts up to {per_process} connections (ThreadsPerChild {tpc} "
            f"+ {tpc} idle x AsyncRequestWorkerFactor {factor}), but httpd's open-file limit is "
            f"{host.nofile}: accept() fails with EMFILE (AH00052) before the connection limit is reached. "
            "Raise the limit (Debian: APACHE_ULIMIT_MAX_FILES in envvars) or lower the factor.",
            d if d is not None else ctx.anchor("ThreadsPerChild"))


def _finite(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def mmap_on_network_fs(ctx: LintContext) -> Iterator[Finding]:
    host = ctx.host
    if host is None or not host.mounts:
        return
    mmap_on = server_flag(ctx.eff, "EnableMMAP", True)  # httpd's defaults: mapping on, sendfile off
    sendfile_on = server_flag(ctx.eff, "EnableSendfile", False)
    if not (mmap_on or sendfile_on):
        return
    for root in server_and_vhost(ctx, "DocumentRoot"):
        if not root.args:
            continue
        kind = host.fstype(norm_dir(root.args[0]))
        if kind in NETWORK_FILESYSTEMS:
            on = [name for name, flag in (("EnableMMAP", mmap_on), ("EnableSendfile", sendfile_on)) if flag]
            yield ctx.finding(
                "AT612", f"DocumentRoot {root.args[0]} is on {kind}, a network file system, with "
                f"{' and '.join(on)} on: a file changed or truncated on the server while httpd maps or "
                "sends it is served corrupt, or crashes the child with SIGBUS.", root, (),
                Fix({name: "Off" for name in on}))


RULES = {"AT609": listen_backlog_clamped, "AT610": memory_overcommitted, "AT611": event_descriptors,
         "AT612": mmap_on_network_fs}
