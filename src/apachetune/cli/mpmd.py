"""`apachetune mpmd`: the bundled server's calibration on this machine."""

from __future__ import annotations

import json

import click

from apachetune.cli.params import Finite
from apachetune.errors import UsageError

MPMS = ("prefork", "worker", "event")


@click.group("mpmd")
def command() -> None:
    """The bundled server (mpmd): its calibration on this machine."""


@command.command("calibrate")
@click.option("--mpm", "mpms", multiple=True, type=click.Choice(MPMS),
              help="Calibrate this MPM (repeatable) [default: all three].")
@click.option("--seconds", type=Finite(1, 30), default=1, show_default=True, help="Length of each measured run.")
@click.option("--rounds", type=Finite(1, 15, integer=True), default=3, show_default=True,
              help="Runs of each server and load; the median is kept.")
@click.option("--load-generators/--no-load-generators", "generators", default=True, show_default=True,
              help="Also measure the CPU ab and wrk (those installed) spend a request here: what simulate "
                   "charges a load generator on loopback.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def calibrate(mpms: tuple[str, ...], seconds: float, rounds: int, generators: bool, fmt: str) -> int:
    """Measure httpd and mpmd side by side here and keep mpmd's CPU stand-ins for validate, and
    httpd's and the load generators' CPU a request for simulate."""
    from apachetune import httpd
    from apachetune.report.calibration import print_calibrations, print_generators
    from apachetune.validate import calibration, generator_cpu

    if httpd.binary() is None:
        raise UsageError("calibrating mpmd needs Apache httpd (apache2 or httpd) installed to measure against; "
                         "without it validate runs mpmd with its defaults and says so")
    results = []
    for mpm in mpms or MPMS:
        if fmt == "text":
            click.echo(f"calibrating {mpm}: {rounds} rounds of httpd, mpmd, a check and httpd unpinned (the "
                       f"simulation's figures), 4 loads of {seconds:g} s "
                       "each ...", err=True)
        results.append(calibration.measure(mpm, seconds=seconds, rounds=rounds))
        calibration.store(results[-1])
    measured = []
    for name in generator_cpu.installed() if generators else []:
        if fmt == "text":
            click.echo(f"measuring {name}'s CPU: {rounds} rounds against httpd event, 4 loads of "
                       f"{max(1, round(seconds))} s each ...", err=True)
        measured.append(generator_cpu.measure(name, seconds=seconds, rounds=rounds))
        generator_cpu.store(measured[-1])
    if fmt == "json":
        click.echo(json.dumps({"machine": calibration.machine(), "mpms": [vars(c) for c in results],
                               "generators": [vars(g) for g in measured]}, indent=2))
    else:
        print_calibrations(results, calibration.machine())
        print_generators(measured)
    return 0


@command.command("show")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def show(fmt: str) -> int:
    """Show the calibration kept for this machine (validate measures a missing one first)."""
    from apachetune.report.calibration import print_calibrations, print_generators
    from apachetune.validate import calibration, generator_cpu

    known = calibration.stored()
    generators = list(generator_cpu.stored().values())
    if fmt == "json":
        click.echo(json.dumps({"machine": calibration.machine(), "mpms": [vars(c) for c in known.values()],
                               "generators": [vars(g) for g in generators]}, indent=2))
        return 0
    if not known:
        click.echo("mpmd is not calibrated on this machine: run `apachetune mpmd calibrate` (validate does it "
                   "on first use when httpd is installed)")
    else:
        print_calibrations(list(known.values()), calibration.machine())
    print_generators(generators)
    return 0
