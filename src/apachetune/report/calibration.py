"""mpmd's calibration (apachetune mpmd calibrate / show) rendered for a terminal."""

from __future__ import annotations

from rich.table import Table

from apachetune.console import out
from apachetune.validate.calibration import BUSY_SHARE, Calibration
from apachetune.validate.generator_cpu import GeneratorCpu


def print_calibrations(calibrations: list[Calibration], machine: dict[str, str]) -> None:
    """Per MPM: the stand-ins mpmd runs with here, and the CPU per request they come from."""
    table = Table(title=f"mpmd calibration: {machine['cpu']} x {machine['cpus']}, kernel {machine['kernel']}, "
                        f"httpd {machine['httpd'] or '-'}")
    for col in ("MPM", "RequestCPU", "ConnectionCPU", "httpd µs/req", "mpmd alone", "httpd unpinned", "measured"):
        table.add_column(col)
    for c in calibrations:
        table.add_row(c.mpm, f"{c.request_us} µs", f"{c.connection_us} µs",
                      f"{c.httpd_keepalive_us:.1f} / {c.httpd_close_us:.1f}",
                      f"{c.mpmd_keepalive_us:.1f} / {c.mpmd_close_us:.1f}",
                      "-" if c.unpinned_keepalive_us is None or c.unpinned_close_us is None
                      else f"{c.unpinned_keepalive_us:.1f} / {c.unpinned_close_us:.1f}",
                      f"{c.measured_at}")
    out.print(table)
    out.print("µs/req: CPU per request with keep-alive / with a connection per request. validate runs mpmd "
              "with these stand-ins on this machine (docs/mpmd.md); simulate charges httpd's unpinned "
              "figures (docs/simulate.md), following the connections open between their ends:")
    for c in calibrations:
        if c.unpinned_by_clients:
            ends = sorted(c.unpinned_by_clients.items(), key=lambda e: int(e[0]))
            small = c.unpinned_small_pool
            pool = "" if not small else (f"; on a pool of {small['workers']:g} (where a new connection costs less): "
                                         f"{small['keepalive_us']:.1f} / {small['close_us']:.1f} at "
                                         f"{small['clients']:g} clients")
            out.print(f"  {c.mpm}: " + ", ".join(f"{ka:.1f} / {close:.1f} at {n} clients" for n, (ka, close) in ends)
                      + pool)
    for c in calibrations:
        if c.busy:
            out.print(f"warning: {c.mpm} was measured while {c.background_busy:.0%} of the CPUs were busy with "
                      "other work: its figures may be high. Run `apachetune mpmd calibrate` again on a quiet "
                      "machine (validate does, once it finds the machine quiet).")


def print_generators(generators: list[GeneratorCpu]) -> None:
    """The load generators' CPU a request here, as simulate charges a client on loopback."""
    if not generators:
        return
    out.print("Load generators on loopback (simulate's --client-cpu ab|wrk, and the client it assumes): "
              "µs of CPU a keep-alive request, + what a new connection adds:")
    for g in generators:
        ends = ", ".join(f"{ka:.1f} / {close:.1f} at {n} clients" for n, (ka, close) in g.by_clients.items())
        out.print(f"  {g.name}: {g.request_us:.1f} µs (+{g.connection_us:.1f}) (keep-alive / close: {ends}; "
                  f"{g.measured_at})")
        if g.background_busy >= BUSY_SHARE:
            out.print(f"  warning: measured while {g.background_busy:.0%} of the CPUs were busy with other work: "
                      "its figures may be high")
