"""Running plans against a target (`run_plans`), a current section against a tuned one
(`before_after`), and the side-by-side table of `apachetune compare`."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from apachetune.validate import calibration
from apachetune.validate.load import closed_loop
from apachetune.validate.plans import PLANS, PlanRun
from apachetune.validate.results import ValidationReport, ValidationSetup, Verdict, point
from apachetune.validate.targets import Target, make_target


def run_plans(setup: ValidationSetup, plans: Iterable[str], progress: Callable[[str], None] = lambda s: None
              ) -> ValidationReport:
    """Start the target once and run the asked plans on it, in PLANS' order."""
    asked = set(plans)
    unknown = asked - PLANS.keys()
    if unknown:
        raise ValueError(f"unknown plan(s) {sorted(unknown)}; known: {', '.join(PLANS)}")
    report = ValidationReport(setup)
    with start_target(setup, report, progress) as target:
        time.sleep(1.2)  # one maintenance cycle: let the pool form
        for name, plan in PLANS.items():
            if name in asked:
                plan(PlanRun(setup, target, report, progress))
    return report


def start_target(setup: ValidationSetup, report: ValidationReport, progress: Callable[[str], None]) -> Target:
    """The target of `setup`, to be entered. mpmd also gets the CPU stand-ins calibrated for this
    machine (measured now if they never were), and the report says which it ran with."""
    directives = setup.directives
    if setup.target == "mpmd":
        standins, note = calibration.for_mpm(setup.mpm, progress)
        directives = {**standins, **directives}
        if note not in report.notes:
            report.notes.append(note)
    return make_target(setup.target, setup.mpm, directives)


def compare_table(reports: dict[str, ValidationReport]) -> list[list[str]]:
    """Rows of a side-by-side table: one column per MPM."""
    rows = []
    names = []
    for rep in reports.values():
        for p in rep.points:
            key = (p["plan"], p["x"])
            if key not in names:
                names.append(key)
    for plan, x in names:
        row = [f"{plan} {x:g}"]
        for rep in reports.values():
            match = [p for p in rep.points if (p["plan"], p["x"]) == (plan, x)]
            row.append(f"{match[0]['throughput_rps']:.0f} rps, p99 {match[0]['latency_ms']['p99']} ms"
                       if match else "–")
        rows.append(row)
    for name in {v.name for rep in reports.values() for v in rep.verdicts}:
        row = [name]
        for rep in reports.values():
            v = [v for v in rep.verdicts if v.name == name]
            row.append(f"{v[0].measured} {v[0].unit} ({'pass' if v[0].passed else 'fail' if v[0].passed is False else '-'})"
                       if v else "–")
        rows.append(row)
    return rows


def before_after(before: ValidationSetup, after: ValidationSetup, progress: Callable[[str], None] = lambda s: None
                 ) -> ValidationReport:
    """The same workload on the current and the tuned section: the tuned one must be no worse on
    p99 latency (within 10%) and on errors. The load is as many closed-loop keep-alive clients
    as the larger MaxRequestWorkers: what the bigger section is sized for. (More would overload
    both, and event then closes keep-alive connections whose request finds every worker busy,
    as httpd does: errors on both sides that say nothing about the tuning.)"""
    report = ValidationReport(after)
    conc = max(1, max(before.max_request_workers, after.max_request_workers))
    path = after.app_path
    results = {}
    for label, setup in (("before", before), ("after", after)):
        progress(f"{label}: {conc} connections")
        with start_target(setup, report, progress) as target:
            time.sleep(1.2)
            r = closed_loop(target.host, target.port, path, conc, setup.duration)
        results[label] = r
        report.points.append({**point("before/after", conc, r), "config": label})
    b, a = results["before"], results["after"]
    bp99, ap99 = b.percentile(99) or 0.0, a.percentile(99) or 0.0
    report.verdicts.append(Verdict("tuned p99 no worse than current", round(bp99 * 1000, 1), round(ap99 * 1000, 1),
                                   "ms", ap99 <= bp99 * 1.10 + 0.002, f"{conc} connections on both"))
    berr, aerr = sum(b.errors.values()), sum(a.errors.values())
    report.verdicts.append(Verdict("tuned errors no more than current", berr, aerr, "errors", aerr <= berr))
    report.verdicts.append(Verdict("throughput before/after", round(b.throughput, 1), round(a.throughput, 1),
                                   "req/s", None))
    return report
