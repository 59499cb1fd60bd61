"""`apachetune validate`: run an MPM configuration under load and judge the model's predictions."""

from __future__ import annotations

import json

import click
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from apachetune.cli.options import MPM_CHOICE
from apachetune.cli.params import Finite
from apachetune.console import out
from apachetune.report.validation import print_validation
from apachetune.validate.plans import DEFAULT_PLANS, PLANS, REPLAY_SECONDS
from apachetune.validate.report import check_report_dir, write_report
from apachetune.validate.results import ValidationSetup
from apachetune.validate.run import run_plans
from apachetune.validate.section import load_directives
from apachetune.validate.targets import model_release


def common_options(func):
    for deco in reversed([
        click.option("--target", type=click.Choice(["mpmd", "httpd"]), default="mpmd", show_default=True),
        click.option("--config", type=click.Path(exists=True, dir_okay=False),
                     help="An MPM section (mpm.conf) to run; the options below override it."),
        click.option("--max-request-workers", type=Finite(1, 4096, integer=True)),
        click.option("--threads-per-child", type=Finite(1, 256, integer=True)),
        click.option("--keepalive-timeout", type=Finite(1, 300, integer=True)),
        click.option("--service-time-ms", type=Finite(1, 10000), default=50, show_default=True,
                     help="What /app/sleep takes per request (the emulated application)."),
        click.option("--app-kb", type=Finite(0, 1024 * 1024, integer=True), default=0, show_default=True,
                     help="Application memory each /app/sleep request holds (KiB, touched), part of the "
                          "peak-memory prediction."),
        click.option("--keepalive-clients", type=Finite(0, 4000, integer=True),
                     help="Idle keep-alive clients the keepalive plan opens (the crowd apachetune size "
                          "expects) [default: MaxRequestWorkers]."),
        click.option("--plan", "plans", multiple=True, type=click.Choice(list(PLANS)),
                     help=f"Plans to run (repeatable; default: {' and '.join(DEFAULT_PLANS)})."),
        click.option("--duration", type=Finite(0.5, 120), default=2, show_default=True,
                     help="Seconds per load step."),
        click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True),
        click.option("--wrk/--no-wrk", "use_wrk", default=None,
                     help="Drive the closed-loop sweep (and the simulate plan's closed loops past 1,000 "
                          "req/s) with wrk, or with the built-in asyncio client [default: wrk when installed]."),
    ]):
        func = deco(func)
    return func


def run_one(target, mpm, config, max_request_workers, threads_per_child, keepalive_timeout, service_time_ms,
            plans, duration, per_worker_mb=None, quiet=False, use_wrk=None, app_kb=0, keepalive_clients=None,
            access_log=None, log_format="combined"):
    directives = load_directives(config, mpm, max_request_workers, threads_per_child, keepalive_timeout,
                                 version=model_release(target))
    if "keepalive" in (plans or DEFAULT_PLANS) and int(directives.get("KeepAliveTimeout", 5)) < 5:
        directives["KeepAliveTimeout"] = 5  # the crowd outlasts opening it and the probe: a stall is seen
    setup = ValidationSetup(target, mpm, directives, int(directives["MaxRequestWorkers"]), service_time_ms,
                            duration, per_worker_mb, use_wrk, app_kb, keepalive_clients, access_log, log_format)
    columns = [SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn()]
    with Progress(*columns, console=out, transient=True, disable=quiet) as progress:
        task = progress.add_task(f"{target} {mpm}: starting", total=None)
        return run_plans(setup, plans or DEFAULT_PLANS,
                         lambda s: progress.update(task, description=f"{target} {mpm}: {s}"))


@click.command("validate")
@click.option("--mpm", type=MPM_CHOICE, required=True)
@common_options
@click.option("--per-worker-mb", type=Finite(0.001, 1024 * 1024),
              help="The sizing model's memory per worker (as from apachetune size, measured under load): "
                   "the whole worker, application memory included, so --app-kb is not added again.")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), help="Write report.json, report.md, plots.")
@click.option("--access-log", type=click.Path(dir_okay=False),
              help="The simulate plan also replays this access log's first 30 s (each request when %t says, "
                   "for the time %D or %T logged), for real and in the simulation.")
@click.option("--log-format", default="combined", show_default=True,
              help="The access log's LogFormat: a nickname or the format string.")
@click.option("--after", "after_config", type=click.Path(exists=True, dir_okay=False),
              help="A tuned section (e.g. from apachetune generate): run --config (the current one) and this "
                   "on the same workload and check the tuned one is no worse on p99 and errors.")
def command(mpm, target, config, max_request_workers, threads_per_child, keepalive_timeout, service_time_ms,
            app_kb, keepalive_clients, plans, duration, fmt, use_wrk, per_worker_mb, report_dir, access_log, log_format,
            after_config):
    """Run an MPM section under load on mpmd (or httpd) and compare with the predictions."""
    if report_dir:
        check_report_dir(report_dir)
    if access_log:
        from apachetune.errors import UsageError
        from apachetune.sizing.workload import logged_requests

        if "simulate" not in plans:
            raise UsageError("--access-log is replayed by the simulate plan: add --plan simulate")
        logged_requests(access_log, log_format, REPLAY_SECONDS)  # refused before any server starts
    if after_config:
        from apachetune.validate.run import before_after

        def setup_for(cfg):
            d = load_directives(cfg, mpm, None if cfg else max_request_workers, None if cfg else threads_per_child,
                                keepalive_timeout, version=model_release(target))
            return ValidationSetup(target, mpm, d, int(d["MaxRequestWorkers"]), service_time_ms, duration,
                                   app_kb=app_kb, keepalive_clients=keepalive_clients)

        report = before_after(setup_for(config), setup_for(after_config))
    else:
        report = run_one(target, mpm, config, max_request_workers, threads_per_child, keepalive_timeout,
                         service_time_ms, plans, duration, per_worker_mb, quiet=fmt == "json", use_wrk=use_wrk,
                         app_kb=app_kb, keepalive_clients=keepalive_clients, access_log=access_log,
                         log_format=log_format)
    if report_dir:
        write_report(report, report_dir)
    if fmt == "json":
        click.echo(json.dumps(report.to_json(), indent=2))
    else:
        print_validation(report, target, mpm)
    click.get_current_context().exit(0 if report.passed else 1)
