"""`apachetune compare`: one plan across prefork, worker and event, side by side."""

from __future__ import annotations

import json

import click

from apachetune.cli.validate import common_options, run_one
from apachetune.report.validation import print_comparison


@click.command("compare")
@common_options
def command(target, config, max_request_workers, threads_per_child, keepalive_timeout, service_time_ms, app_kb,
            keepalive_clients, plans, duration, fmt, use_wrk):
    """Run the same plan on prefork, worker and event and print them side by side."""
    reports = {mpm: run_one(target, mpm, config, max_request_workers, threads_per_child, keepalive_timeout,
                            service_time_ms, plans, duration, quiet=fmt == "json", use_wrk=use_wrk,
                            app_kb=app_kb, keepalive_clients=keepalive_clients)
               for mpm in ("prefork", "worker", "event")}
    if fmt == "json":
        click.echo(json.dumps({m: r.to_json() for m, r in reports.items()}, indent=2))
        return
    print_comparison(reports, target, service_time_ms)
