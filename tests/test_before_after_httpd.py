"""`size --curve`'s before and after, proven on real httpd: the sections it compares, under the
workload it sized for, run for real from a fresh start, must show what the simulation showed.

The workload is issue 13's burst: 300 new clients a second, a request each, exponential service
of 100 ms mean (30 busy workers on average). Before: httpd's prefork defaults, whose 5 children
grow by 1, 2, 4 ... a second while the burst waits in the accept queue; after: the recommended
pool, there from the start. The simulation says seconds against a few hundred milliseconds at
the p99; the measured p99 of each must fall in the spread of p99s that simulated runs as long as
the measured one give (validate's band, widened by 25% + 5 ms), and the mean within 25% + 50 ms of
the simulated one.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.simulate import simulate
from apachetune.simulate.workload import ServiceTime, Workload
from apachetune.validate.cpu_share import OthersCpu
from apachetune.validate.load import open_loop
from apachetune.validate.plans import OTHERS_CPU_LIMIT, p99_band, p99_within
from apachetune.validate.targets import HttpdTarget
from httpd_oracle import needs_httpd

RATE, SERVICE_MS, SECONDS = 300, 100, 8.0


def _httpd_value(v: object) -> object:
    """A section's number as httpd reads it (KeepAliveTimeout 5, not 5.0)."""
    return int(v) if isinstance(v, float) and v.is_integer() else v


@needs_httpd
@pytest.mark.httpd
@pytest.mark.slow
@pytest.mark.cpu_heavy  # not heavy itself, but its tails need the CPUs: run alone, after the rest
def test_size_before_and_after_hold_on_httpd():
    res = CliRunner().invoke(cli, [
        "size", "--no-measure", "--mpm", "prefork", "--target-mpm", "prefork", "--rate", str(RATE),
        "--service-time-ms", str(SERVICE_MS), "--requests-per-connection", "1", "--per-worker-mb", "10",
        "--memory", "4096", "--cpus", "2", "--cpu-ms", "0.3", "--curve", "--format", "json"])
    assert res.exit_code == 0, res.output
    simulated = json.loads(res.output)["simulated"]
    assert "300 new clients/s" in simulated["workload"]
    workload = Workload(ServiceTime("exp", SERVICE_MS / 1000), rate=RATE, keepalive=True)
    seen = {}
    for side in ("before", "after"):
        section = {k: _httpd_value(v) for k, v in simulated[side]["section"].items()}
        sim = simulate("prefork", section, workload, SECONDS, seed=1)
        band = p99_band("prefork", section, workload, SECONDS, 0.0)
        assert band is not None
        for attempt in (1, 2):
            with HttpdTarget("prefork", section) as target, OthersCpu(target.pids) as others:
                real = open_loop(target.host, target.port, "/app/sleep", RATE, SECONDS, exp_service_ms=SERVICE_MS)
            p99 = real.percentile(99) * 1000
            mean = sum(real.latencies) / len(real.latencies) * 1000
            seen[side] = (p99, band, mean, sim.latency_ms["mean"])
            assert not real.errors, (side, real.errors)
            # as validate judges a tail: one longer than simulated while other processes took the
            # CPUs says nothing of the model (beside two hogs and the suite's other worker the
            # default pool's children forked slower: 6.9 s against 4.5-4.8); a shorter one always
            # fails. A longer one on a quiet machine is measured once more from a fresh start: the
            # default pool's tail hangs on the accept queue's overflow while it grows, and once in
            # some forty CI runs on a shared VM it came out 6,960 ms (mean as simulated, others 3%)
            # where the next three runs gave 4,853-4,970; a wrong model misses both
            busy = others.share > OTHERS_CPU_LIMIT and p99 > band[1]
            if busy or p99_within(p99, band, 0.0) or p99 < band[0] or attempt == 2:
                break
        assert busy or p99_within(p99, band, 0.0), (side, seen[side], others.share)
        # 25% + 50 ms: this client's own cost a request (300 connections a second from Python) grows
        # on a busy machine (a hog run: 127 ms against 97 after, 511 ms at the p99); a wrong pool
        # is off by seconds
        assert abs(mean - sim.latency_ms["mean"]) <= 0.25 * sim.latency_ms["mean"] + 50, (side, seen[side])
    # what the curve showed: the burst waits seconds for the default pool, not for the advised one
    assert seen["before"][0] > 4 * seen["after"][0], seen
    print(seen)  # p99, the simulated band, mean, simulated mean (ms): docs/simulate.md quotes them
