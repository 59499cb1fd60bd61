"""Options shared by `size`, `generate` and `wizard`."""

from __future__ import annotations

import click

from apachetune.cli.params import PID, Finite, MemorySize
from apachetune.sizing.profiles import PROFILES


def sizing_options(func):
    decorators = [
        click.option("--facts", "facts_path", type=click.Path(exists=True, dir_okay=False),
                     help="Replay a measurement saved with --save-facts instead of reading this machine."),
        click.option("--save-facts", type=click.Path(dir_okay=False), help="Save the measurement as JSON."),
        click.option("--pid", type=PID, help="The httpd parent process (default: found by name)."),
        click.option("--pidfile", type=click.Path(dir_okay=False), help="Read the httpd parent's pid here."),
        click.option("--sample", "sample_seconds", type=Finite(1, 3600, integer=True), default=1, show_default=True,
                     help="Sample httpd's memory once a second for this many seconds; keep the 90th percentile."),
        click.option("--no-measure", is_flag=True, help="Do not read this machine at all (CI)."),
        click.option("--memory", "memory_mib", type=MemorySize(lo=1), help="Memory available to httpd and others: MiB, or 512M, 4G, 4GiB (default: MemAvailable)."),
        click.option("--reserve", "reserve_mib", type=MemorySize(lo=0), help="Memory to leave to other services: MiB, or 512M, 1G (default: what they use now)."),
        click.option("--headroom", type=Finite(0, 0.9), help="Fraction of memory kept free (default 0.10)."),
        click.option("--per-worker-mb", "per_worker_mib", type=Finite(0.01, 1024 * 1024), help="Memory of one worker, MiB (prefork: a child's PSS; threaded: one thread)."),
        click.option("--per-process-mb", "per_process_mib", type=Finite(0, 1024 * 1024), help="Threaded MPMs: a child's fixed base, MiB."),
        click.option("--profile", type=click.Choice(sorted(PROFILES)), help="Default figures for a workload (docs/sizing.md)."),
        click.option("--rate", type=Finite(0, 1e9), help="Expected peak requests per second."),
        click.option("--service-time-ms", type=Finite(0.01, 3.6e6), help="Mean time a worker spends on a request, ms."),
        click.option("--requests-per-connection", type=Finite(1, 1e6), help="Requests a client sends on one keep-alive connection."),
        click.option("--threads-per-child", type=Finite(1, 100000, integer=True), help="ThreadsPerChild for worker/event."),
        click.option("--cpus", type=Finite(0.01, 100000),
                     help="CPU cores of the server, or a container's CPU quota (docker --cpus 0.5) "
                          "(default: measured, or this machine's)."),
        click.option("--cpu-period-ms", type=Finite(1, 1000),
                     help="A CPU quota's CFS period, ms (cpu.max's second field; Kubernetes' "
                          "--cpu-cfs-quota-period): the simulated curves wait out its rest when throttled "
                          "[default: read with this machine's quota, else 100]."),
        click.option("--cpu-ms", type=Finite(0.001, 3.6e6),
                     help="CPU time one request uses, ms (default: measured with --status-url when that "
                          "server runs on this machine, else assumed from the profile). A peak rate asking "
                          "more CPU than the cores have is reported whatever memory allows."),
        click.option("--keepalive-clients", type=Finite(0, 1e7),
                     help="Idle keep-alive clients expected at the peak (default: estimated from the rate). "
                          "prefork/worker get workers for them; event gets the AsyncRequestWorkerFactor "
                          "whose connection limit holds them."),
        click.option("--burst", type=Finite(1, 1e7, integer=True),
                     help="Requests arriving together that the pool must already be running for "
                          "(default: the access log's busiest second)."),
        click.option("--tune-keepalive", is_flag=True,
                     help="Also re-tune KeepAlive, KeepAliveTimeout, MaxKeepAliveRequests and Timeout "
                          "where lint finds them safe (default: change them only where lint reports them)."),
        click.option("--access-log", type=click.Path(exists=True, dir_okay=False),
                     help="Read the peak rate (busiest minute) and, with %D/%T logged, the response time."),
        click.option("--log-format", default="combined", show_default=True,
                     help="The access log's LogFormat string or nickname (common, combined, vhost_combined)."),
        click.option("--error-log", type=click.Path(dir_okay=False),
                     help="Read the MPM's 'MaxRequestWorkers reached' messages (AH00161/AH00286/AH00484, "
                          "AH00287/AH10159, AH00288/AH03490, AH00162, AH00159) as evidence "
                          "[default: the configuration's ErrorLog, when readable]."),
        click.option("--php-ini", type=click.Path(exists=True, dir_okay=False),
                     help="mod_php's php.ini (memory_limit bounds a child) [default: the distribution's, "
                          "unless --no-measure]."),
        click.option("--php-fpm-conf", "php_fpm_confs", multiple=True, type=click.Path(exists=True),
                     help="A php-fpm pool file or pool directory (repeatable): pm.max_children is judged "
                          "against the workers httpd hands PHP requests to [default: the distribution's "
                          "pool.d, unless --no-measure]."),
        click.option("--status-url", help="Sample mod_status (?auto, ExtendedStatus On) for --sample seconds: "
                     "rate and, by Little's law, the time per request; when the server runs here, the CPU it used "
                     "meanwhile gives the CPU a request."),
    ]
    for deco in reversed(decorators):
        func = deco(func)
    return func
