"""PNG plots of simulations (apachetune simulate --plot): throughput and p99 against the load with
the predicted knee marked, and processes over time. matplotlib is optional (the `plots` extra)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from apachetune.errors import UsageError

if TYPE_CHECKING:
    from apachetune.simulate.curve import CurvePoint, Knee
    from apachetune.simulate.run import SimResult


def require_matplotlib(plot_dir: str | None) -> None:
    """Refuse --plot (a `plot_dir` given) at once without matplotlib, before seconds of
    simulation are spent."""
    if not plot_dir:
        return
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UsageError("--plot needs matplotlib: pip install 'apachetune[plots]'") from None


def prepare_plot_dir(plot_dir: str | None) -> None:
    """Refuse --plot at once (before seconds of simulation are spent) without matplotlib or
    when its directory cannot be made or written; else make it."""
    require_matplotlib(plot_dir)
    if not plot_dir:
        return
    try:
        Path(plot_dir).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"--plot {plot_dir}: cannot make the directory: {e.strerror or e}") from None
    if not os.access(plot_dir, os.W_OK | os.X_OK):
        raise UsageError(f"--plot {plot_dir}: the directory is not writable")


def write_simulation_plots(directory: str, runs: list[tuple[str, SimResult, list[CurvePoint]]],
                           knee: Knee) -> list[Path]:
    """`runs`: (label, the simulation, its curve). Writes curve.png and processes.png."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError("--plot needs matplotlib: pip install 'apachetune[plots]'") from None
    d = Path(directory)
    try:
        return _draw(plt, d, runs, knee)
    except OSError as e:  # the disk filled, the directory went: said, never a traceback
        raise UsageError(f"--plot {directory}: cannot write {e.filename or 'the plots'}: {e.strerror or e}") from None


def _draw(plt, d: Path, runs: list[tuple[str, SimResult, list[CurvePoint]]], knee: Knee) -> list[Path]:
    d.mkdir(parents=True, exist_ok=True)
    x_label = "concurrent clients" if knee.axis == "clients" else "new clients a second"
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 7))
    for label, _, points in runs:
        xs = [p.load for p in points]
        top.plot(xs, [p.throughput for p in points], marker="o", label=label)
        bottom.plot(xs, [p.p99_ms if p.p99_ms is not None else float("nan") for p in points], marker="o",
                    label=label)
    for ax in (top, bottom):
        ax.axvline(knee.at, linestyle="--", color="grey")
    top.axhline(knee.capacity, linestyle=":", color="grey")
    top.annotate(f"predicted knee: {knee.at:,.0f}, {knee.capacity:,.0f} req/s", (knee.at, knee.capacity),
                 textcoords="offset points", xytext=(5, -12), fontsize=8)
    top.set_ylabel("requests/s")
    bottom.set_ylabel("p99 latency (ms)")
    bottom.set_xlabel(x_label)
    top.legend()
    written = [d / "curve.png", d / "processes.png"]
    fig.savefig(written[0])
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, r, _ in runs:
        ax.step([s["t"] for s in r.timeline], [s["processes"] for s in r.timeline], where="post", label=label)
    ax.set_xlabel("simulated seconds")
    ax.set_ylabel("processes")
    ax.legend()
    fig.savefig(written[1])
    plt.close(fig)
    return written
