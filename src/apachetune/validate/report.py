"""Writing a validation report: report.json, report.md, and PNG plots when matplotlib is present."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from apachetune.errors import UsageError
from apachetune.validate.results import ValidationReport


def check_report_dir(directory: str | Path) -> None:
    """Before a run: the report directory can be created and written (a run takes minutes; its
    report must not be lost to a typo found at the end). UsageError otherwise."""
    d = Path(directory)
    try:
        d.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=d, prefix=".apachetune-check-"):
            pass
    except OSError as e:
        raise UsageError(f"--report {directory}: cannot write there ({e.strerror or e})") from None


def write_report(report: ValidationReport, directory: str | Path) -> list[Path]:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    written = [d / "report.json", d / "report.md"]
    (d / "report.json").write_text(json.dumps(report.to_json(), indent=2))
    lines = [f"# Validation: {report.setup.target} {report.setup.mpm}", "",
             f"Service time {report.setup.service_ms:g} ms, MaxRequestWorkers {report.setup.max_request_workers}.",
             "", "| verdict | predicted | measured | unit | result |", "|---|---|---|---|---|"]
    for v in report.verdicts:
        result = "pass" if v.passed else "fail" if v.passed is False else "measured"
        lines.append(f"| {v.name} | {v.predicted} | {v.measured} | {v.unit} | {result} |")
    lines += ["", "| plan | x | req/s | p50 ms | p95 ms | p99 ms | errors |", "|---|---|---|---|---|---|---|"]
    for p in report.points:
        lat = p["latency_ms"]
        lines.append(f"| {p['plan']} | {p['x']} | {p['throughput_rps']} | {lat['p50']} | {lat['p95']} | "
                     f"{lat['p99']} | {p['errors'] or ''} |")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        sweep = [p for p in report.points if p["plan"] == "sweep"]
        if sweep:
            fig, ax = plt.subplots()
            ax.plot([p["x"] for p in sweep], [p["throughput_rps"] for p in sweep], marker="o")
            ax.set_xlabel("concurrent connections")
            ax.set_ylabel("requests/s")
            fig.savefig(d / "throughput.png")
            written.append(d / "throughput.png")
            plt.close(fig)
        if report.samples:
            fig, ax = plt.subplots()
            seen = [s for s in report.samples if s.get("busy") is not None]
            ax.plot([s["busy"] for s in seen], [s["pss_mib"] for s in seen], ".")
            ax.set_xlabel("busy workers")
            ax.set_ylabel("PSS MiB")
            fig.savefig(d / "memory.png")
            written.append(d / "memory.png")
            plt.close(fig)
    except ImportError:
        lines += ["", "(PNG plots need the optional `plots` extra: pip install 'apachetune[plots]')"]
    (d / "report.md").write_text("\n".join(lines) + "\n")
    return written
