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

    Run = tuple[str, SimResult, list[CurvePoint], Knee]  # (label, the simulation, its curve, its knee)


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


def write_simulation_plots(directory: str, runs: list[Run]) -> list[Path]:
    """Writes curve.png (each run's curve, and its knee where the runs' knees differ: each MPM
    or section has its own) and processes.png."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError("--plot needs matplotlib: pip install 'apachetune[plots]'") from None
    d = Path(directory)
    try:
        return _draw(plt, d, runs)
    except OSError as e:  # the disk filled, the directory went: said, never a traceback
        raise UsageError(f"--plot {directory}: cannot write {e.filename or 'the plots'}: {e.strerror or e}") from None


def _draw(plt, d: Path, runs: list[Run]) -> list[Path]:
    d.mkdir(parents=True, exist_ok=True)
    x_label = "concurrent clients" if runs[0][3].axis == "clients" else "new clients a second"
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 7))
    colours = []
    crossed = False  # some point's p99 leaves out clients still waiting
    for label, _, points, _ in runs:
        xs = [p.load for p in points]
        line, = top.plot(xs, [p.throughput for p in points], marker="o", label=label)
        colours.append(line.get_color())
        bottom.plot(xs, [p.p99_ms if p.p99_ms is not None else float("nan") for p in points], marker="o",
                    label=label)
        # a p99 that leaves out clients still waiting (behind others that hold every worker, or
        # an open loop's backlog) looks like a calm point: crossed, and how many waited
        for p in points:
            if p.unanswered and p.p99_ms is not None:
                crossed = True
                bottom.scatter([p.load], [p.p99_ms], marker="x", s=90, color=line.get_color(), zorder=3)
                bottom.annotate(f"{p.unanswered:,} waiting", (p.load, p.p99_ms), textcoords="offset points",
                                xytext=(4, 6), fontsize=7, color=line.get_color())
    knees: dict[tuple[float, float], tuple[str, str]] = {}  # each distinct knee: the first run's label, colour
    for (label, _, _, k), colour in zip(runs, colours, strict=True):
        knees.setdefault((k.at, k.capacity), (label, colour))
    for (at, capacity), (label, colour) in knees.items():
        colour = "grey" if len(knees) == 1 else colour
        for ax in (top, bottom):
            ax.axvline(at, linestyle="--", color=colour)
        top.axhline(capacity, linestyle=":", color=colour)
        name = "predicted knee" if len(knees) == 1 else f"{label.split(' (')[0]}'s knee"
        top.annotate(f"{name}: {at:,.1f}, {capacity:,.0f} req/s", (at, capacity),
                     textcoords="offset points", xytext=(5, -12), fontsize=8, color=colour)
    top.set_ylabel("requests/s")
    if crossed:
        handle = bottom.scatter([], [], marker="x", color="grey", label="clients still waiting at the end (not in the p99)")
        bottom.legend(handles=[handle], fontsize=8)
    bottom.set_ylabel("p99 latency (ms)")
    bottom.set_xlabel(x_label)
    top.legend()
    written = [d / "curve.png", d / "processes.png"]
    fig.savefig(written[0])
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(7, 4))
    for label, r, _, _ in runs:
        ax.step([s["t"] for s in r.timeline], [s["processes"] for s in r.timeline], where="post", label=label)
    start = max(r.load_start for _, r, _, _ in runs)
    if start:  # an idle crowd formed first, a client at a time
        ax.axvline(start, linestyle=":", color="grey", label="the load starts (the crowd formed)")
    ax.set_xlabel("simulated seconds")
    ax.set_ylabel("processes")
    ax.legend()
    fig.savefig(written[1])
    plt.close(fig)
    return written
