"""An accept queue that overflows, on real httpd with ab as the client, against the simulation.

prefork with 2 workers and ListenBacklog 1 (Linux queues 2), `ab -c 10` on a 370 ms request: the
clients without a place have their SYN dropped and sent again on their kernel's schedule, so
latencies come in steps. Since Linux 6.5 the first five retransmissions are 1 s apart (steps at
1, 2, 3, 4, 5 s), before that they doubled (1, 3, 7 s): the whole seconds the waits fall in
tell the two apart, and httpd's must fall where the simulation with this machine's schedule
puts them (how many in each moves from run to run: see the test). Measured (kernel 6.18, 300 requests): httpd 48% / 7% / 30% /
14% in 0-1 / 1-2 / 2-3 / 3-4 s, simulated 35 / 22 / 34 / 8; with the doubling schedule 35 / 51 /
0 / 13. Before the model's lingering close (a prefork worker accepts again only after the
client's FIN), a client that reconnected at once always won the freed place, and the six
others starved into connect timeouts; httpd gave none."""

from __future__ import annotations

import shutil
import signal
import subprocess
import time
from collections import Counter

import pytest

from apachetune.simulate import simulate
from apachetune.simulate.syn import SynSchedule, this_machine
from apachetune.simulate.workload import ServiceTime, Workload
from apachetune.validate.cpu_share import OthersCpu
from apachetune.validate.plans import OTHERS_CPU_LIMIT
from apachetune.validate.targets import make_target
from httpd_oracle import needs_httpd

AB_SECONDS = 60  # ab's 200 requests take about 37 s; one stuck on its retransmissions is left out
SECTION = {"StartServers": 2, "MinSpareServers": 2, "MaxSpareServers": 2, "ServerLimit": 2,
           "MaxRequestWorkers": 2, "KeepAlive": "Off", "ListenBacklog": 1, "MaxConnectionsPerChild": 0}


def shares(latencies: list[float]) -> list[float]:
    """The share of requests in each whole second, 0-1 ... 4-5 s, and at 5 s or more."""
    by = Counter(min(int(x), 5) for x in latencies)
    return [by[k] / len(latencies) for k in range(6)]


def distance(a: list[float], b: list[float]) -> float:
    return sum(abs(x - y) for x, y in zip(a, b, strict=True)) / 2


def outside(real: list[float], simulated: list[float]) -> float:
    """The share of real requests in whole seconds where the simulation has (almost) none."""
    return sum(r for r, s in zip(real, simulated, strict=True) if s < 0.005)


@needs_httpd
@pytest.mark.httpd
@pytest.mark.slow
@pytest.mark.cpu_heavy  # not heavy itself, but who wins a freed place is a race the CPUs decide: run alone
def test_syn_retry_steps_on_httpd_are_the_simulations(tmp_path):
    if shutil.which("ab") is None:
        pytest.skip("needs ab (apache2-utils)")
    with make_target("httpd", "prefork", SECTION) as t:
        time.sleep(1.5)
        tsv = tmp_path / "ab.tsv"
        # A connection whose handshake's last ACK met a full queue waits on its own data
        # retransmissions (0.2, 0.4, 0.8 ... s; one request took 39 s) or is reset when the server
        # gives up on it (seen in CI): ab must neither stop at its default 30 s wait (-s 120) nor
        # at a reset (-r); the simulation has neither, so a few such requests are allowed for.
        # The 200 take about 37 s. ab looks at its -t limit only when its poll returns, which a
        # stuck request can keep from happening for a minute more (a clean CI run spent 98 s here
        # with -t 55), so at AB_SECONDS it is interrupted: on SIGINT ab prints its results and
        # writes -g's file for the requests done, then exits 1, leaving such a request out.
        with OthersCpu(t.pids) as others:
            ab = subprocess.Popen(["ab", "-r", "-s", "120", "-c", "10", "-n", "200", "-g", str(tsv),
                                   f"http://{t.host}:{t.port}/app/sleep?ms=370"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                stdout, stderr = ab.communicate(timeout=AB_SECONDS)
            except subprocess.TimeoutExpired:
                ab.send_signal(signal.SIGINT)
                stdout, stderr = ab.communicate(timeout=30)
    assert ab.returncode == 0 or (ab.returncode == 1 and "Complete requests" in stdout), stderr
    if others.share > OTHERS_CPU_LIMIT:
        # Beside the suite's other worker (a clean CI run: 42 / 28 / 11 / 14% in 0-1 / 1-2 / 2-3 /
        # 3-4 s, between the two schedules' simulations) the race below is not this kernel's
        pytest.skip(f"other processes took {others.share:.0%} of the CPUs during the run")
    lines = tsv.read_text().splitlines()[1:]
    real = [int(line.split("\t")[4]) / 1000 for line in lines]
    assert len(real) >= 190, stdout
    starts = sorted(int(line.split("\t")[1]) for line in lines)  # the second each request started
    real_rps = len(real) / (starts[-1] - starts[0] + sum(real) / len(real))

    def simulated(schedule: SynSchedule):
        workload = Workload(ServiceTime.parse("lognormal:371ms:0.05"), clients=10, keepalive=False, syn=schedule)
        return simulate("prefork", SECTION, workload, 300, seed=3)

    dropped_once = sum(x > 0.9 for x in real) / len(real)
    if dropped_once < 0.3:
        # A race decides who gets the place a request frees: the client reconnecting at once, or
        # a client retrying its SYN. On a quiet machine the reconnecting client's SYN is handled
        # before the child is back in accept() (half the requests wait for a retry, as
        # simulated); with every core busy the child often wins the race (8.5% seen under a
        # CPU hog) and the steps are too few to compare.
        pytest.skip(f"only {dropped_once:.0%} of the requests waited for a SYN retry (a busy machine)")
    ours = simulated(this_machine())
    assert abs(real_rps - ours.throughput) <= 0.1 * ours.throughput  # 2 workers of 371 ms: 5.4 a second
    # Which whole seconds the waits fall in is the schedule's; how many fall in each is a race
    # (who gets a freed place: the client reconnecting at once or one retrying its SYN) that
    # moves from run to run: 48/7/30/14%, 42/28/11/14% and 27/42/15/14% in 0-1/1-2/2-3/3-4 s on
    # this machine, where the simulation gives 37/20/33/9. So the steps are judged: httpd's
    # waits land only where this machine's schedule puts them, and (on a kernel whose retries
    # are 1 s apart) in seconds the doubling schedule never reaches (2-3 s, 4-5 s).
    real_shares, ours_shares = shares(real), shares(ours.latencies)
    about = (real_shares, ours_shares, distance(real_shares, ours_shares))
    assert outside(real_shares, ours_shares) <= 0.05, about
    if this_machine().steps()[:2] != [1, 3]:  # retries 1 s apart: the doubling one is the other
        doubling = shares(simulated(SynSchedule.parse("linux")).latencies)
        assert outside(real_shares, doubling) > 0.05, (real_shares, doubling)
