"""A validation run (apachetune validate) and a comparison (apachetune compare) rendered for a
terminal."""

from __future__ import annotations

from rich.table import Table

from apachetune.console import out
from apachetune.validate.results import ValidationReport
from apachetune.validate.run import compare_table


def print_validation(report: ValidationReport, target: str, mpm: str) -> None:
    """Each verdict, predicted against measured; the load points; how it was measured."""
    table = Table(title=f"{target} {mpm}: predicted vs measured")
    for col in ("verdict", "predicted", "measured", "unit", "result"):
        table.add_column(col)
    for v in report.verdicts:
        table.add_row(v.name, str(v.predicted), str(v.measured), v.unit,
                      "pass" if v.passed else "FAIL" if v.passed is False else "-")
    out.print(table)
    points = Table(title="load points")
    for col in ("plan", "x", "req/s", "p50 ms", "p99 ms", "errors"):
        points.add_column(col)
    for p in report.points:
        points.add_row(p["plan"], str(p["x"]), str(p["throughput_rps"]), str(p["latency_ms"]["p50"]),
                       str(p["latency_ms"]["p99"]), str(p["errors"] or ""))
    out.print(points)
    for note in report.notes:
        out.print(f"Note: {note}")

def print_comparison(reports: dict[str, ValidationReport], target: str, service_time_ms: float) -> None:
    """The three MPMs' reports side by side."""
    table = Table(title=f"{target}: prefork vs worker vs event (service time {service_time_ms:g} ms)")
    table.add_column("")
    for m in reports:
        table.add_column(m)
    for row in compare_table(reports):
        table.add_row(*row)
    out.print(table)
