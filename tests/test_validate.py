"""validate / compare: fast versions (seconds each) on mpmd and, when installed, httpd."""

import json
import re
from dataclasses import replace
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.errors import UsageError
from apachetune.sizing.facts import HttpdFacts, WorkerSample
from apachetune.validate.load import closed_loop, open_loop
from apachetune.validate.mpmd_server import MpmdServer
from apachetune.validate.plans import child_peak_extra, memory_verdict
from apachetune.validate.results import ValidationSetup
from httpd_oracle import needs_httpd

FAST = ["--max-request-workers", "4", "--threads-per-child", "2", "--service-time-ms", "50", "--duration", "1",
        "--format", "json"]


def run(*args):
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, json.loads(result.output)


def verdicts(data):
    return {v["name"]: v for v in data["verdicts"]}


@pytest.mark.parametrize("mpm, pinned", [("worker", True), ("event", False)])
def test_validate_on_mpmd(mpm, pinned):
    code, data = run("validate", "--mpm", mpm, "--plan", "sweep", "--plan", "keepalive", *FAST)
    v = verdicts(data)
    sat = v["saturation throughput"]
    # 4 workers / what a lone request takes here: 50 ms slept and a little more (53.2 ms beside
    # two CPU hogs, 75.2 req/s), so the bound follows the measured time, not the 50 given
    lone = re.search(r"MaxRequestWorkers 4 / ([0-9.]+) ms, what a lone request takes here", sat["detail"])
    assert lone and 50 <= float(lone.group(1)) < 75, sat
    assert sat["predicted"] == pytest.approx(4000 / float(lone.group(1)), rel=0.02)
    assert sat["passed"], sat
    assert v["idle keep-alive clients pin workers"]["measured"].startswith("pinned" if pinned else "served")
    assert v["idle keep-alive clients pin workers"]["passed"]
    assert code == 0
    sweep = [p for p in data["points"] if p["plan"] == "sweep"]
    assert [p["x"] for p in sweep] == [2, 4, 6, 8]
    assert sweep[0]["throughput_rps"] < sweep[1]["throughput_rps"]  # below the knee it scales
    # The sampler's own status request needs a worker too, so it sees at most MRW - 1 others busy;
    # a look taken while the page had not answered (every worker busy) says None, not 0.
    answered = [s["busy"] for s in data["samples"] if s["busy"] is not None]
    assert answered and max(answered) >= 3
    if mpm == "worker":  # every worker held by a connection at the top steps: the looks count them
        assert max(s["connections"] or 0 for s in data["samples"]) == 4
    # Without application memory the peak is judged too, from the idle server's own figures.
    mem = v["peak memory at full concurrency"]
    assert mem["passed"] and mem["predicted"] > 0 and "measured idle" in mem["detail"], mem


@needs_httpd
@pytest.mark.httpd
@pytest.mark.parametrize("mpm, pinned", [("prefork", True), ("event", False)])
def test_validate_on_httpd(mpm, pinned):
    code, data = run("validate", "--mpm", mpm, "--target", "httpd", "--plan", "sweep", "--plan", "keepalive", *FAST)
    v = verdicts(data)
    assert v["saturation throughput"]["passed"], v["saturation throughput"]
    assert v["idle keep-alive clients pin workers"]["passed"], v["idle keep-alive clients pin workers"]


@pytest.mark.parametrize("target", ["mpmd", pytest.param("httpd", marks=needs_httpd)])
@pytest.mark.parametrize("mpm, crowd, pinned", [
    ("event", 100, False),  # 2 x 25 threads, factor 2: event holds 2 x (25 + 24 x 2) = 146 connections
    ("event", 200, True),  # a crowd beyond that fills it although every worker is idle
    ("worker", 30, False),  # fewer idle clients than MaxRequestWorkers leave a worker free
])
def test_keepalive_plan_judges_the_expected_crowd(target, mpm, crowd, pinned):
    code, data = run("validate", "--mpm", mpm, "--target", target, "--plan", "keepalive", "--format", "json",
                     "--max-request-workers", "50", "--threads-per-child", "25", "--keepalive-clients", str(crowd))
    v = verdicts(data)["idle keep-alive clients pin workers"]
    assert v["predicted"] == ("pinned" if pinned else "not pinned"), v
    assert v["passed"], v
    assert v["measured"].startswith("pinned" if pinned else "served"), v
    # The crowd is served up to what the section holds, the rest waits in the backlog: 146 here
    # once the listener is off (the idle count one short), up to 2 x (25 + 25 x 2) = 150 for
    # clients arriving one at a time (every worker idle at each accept). Each connection the
    # server closes (event does when all of a process's workers were busy) lets one more in.
    answered, closed = map(int, re.search(r"\((\d+) answered, (\d+) closed", v["detail"]).groups())
    assert 145 <= answered - closed <= 151 if pinned else answered == crowd, v
    assert code == 0


def test_compare_runs_all_three_mpms():
    result = CliRunner().invoke(cli, ["compare", "--plan", "keepalive", "--max-request-workers", "2",
                                      "--threads-per-child", "2", "--duration", "1", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data) == {"prefork", "worker", "event"}
    pins = {m: verdicts(d)["idle keep-alive clients pin workers"]["measured"] for m, d in data.items()}
    assert pins["prefork"] == "pinned" and pins["worker"] == "pinned" and pins["event"].startswith("served")


def test_report_directory(tmp_path):
    result = CliRunner().invoke(cli, ["validate", "--mpm", "event", "--plan", "keepalive", "--max-request-workers",
                                      "2", "--threads-per-child", "2", "--duration", "1", "--report",
                                      str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "r" / "report.json").read_text())["mpm"] == "event"
    assert "| idle keep-alive clients pin workers |" in (tmp_path / "r" / "report.md").read_text()


def test_load_generators_are_bounded_and_loopback_only():
    with pytest.raises(UsageError):
        closed_loop("10.0.0.1", 80, "/", 1, 0.1)
    with MpmdServer("event", {"StartServers": 1, "MaxRequestWorkers": 8, "ThreadsPerChild": 4}) as srv:
        r = open_loop("127.0.0.1", srv.port, "/index.html", 100, 1.0, seed=7)
        assert 60 <= r.scheduled <= 140  # Poisson arrivals at 100/s for 1 s
        assert r.ok == r.scheduled and not r.errors
        c = closed_loop("127.0.0.1", srv.port, "/index.html", 4, 0.5)
        assert c.ok > 50 and c.percentile(99) is not None


def test_before_after_judges_the_tuned_config(tmp_path):
    small = tmp_path / "current.conf"
    small.write_text("ThreadsPerChild 2\nMaxRequestWorkers 2\nServerLimit 1\n")
    big = tmp_path / "tuned.conf"
    big.write_text("ThreadsPerChild 4\nMaxRequestWorkers 8\nServerLimit 2\n")
    args = ["--service-time-ms", "50", "--duration", "1", "--format", "json"]
    code, data = run("validate", "--mpm", "event", "--config", str(small), "--after", str(big), *args)
    v = verdicts(data)
    assert code == 0 and v["tuned p99 no worse than current"]["passed"]
    assert v["throughput before/after"]["measured"] > 2 * v["throughput before/after"]["predicted"]
    # The other way round the "tuned" section is worse: the verdict fails and so does the exit code.
    code, data = run("validate", "--mpm", "event", "--config", str(big), "--after", str(small), *args)
    assert code == 1 and verdicts(data)["tuned p99 no worse than current"]["passed"] is False


@pytest.mark.skipif(__import__("shutil").which("wrk") is None, reason="wrk not installed")
def test_sweep_with_wrk():
    code, data = run("validate", "--mpm", "event", "--plan", "sweep", "--wrk", *FAST)
    assert {p.get("driver") for p in data["points"]} == {"wrk"}
    assert verdicts(data)["saturation throughput"]["passed"]


MEMORY = ["--plan", "sweep", "--max-request-workers", "8", "--threads-per-child", "4", "--service-time-ms", "50",
          "--duration", "0.5", "--app-kb", "4096", "--format", "json"]


@pytest.mark.parametrize("mpm", ["prefork", "worker"])
def test_peak_memory_matches_the_sizing_model_on_mpmd(mpm):
    # 8 workers each holding 4 MiB: the application memory (32 MiB) dwarfs mpmd's own (~1 MiB).
    code, data = run("validate", "--mpm", mpm, *MEMORY)
    mem = verdicts(data)["peak memory at full concurrency"]
    assert mem["passed"], mem
    assert 32 <= mem["predicted"] <= 40 and mem["measured"] >= 0.85 * 32, mem
    processes = "8 processes" if mpm == "prefork" else "2 processes"  # ceil(8 / ThreadsPerChild 4)
    assert processes in mem["detail"] and "busy under load" in mem["detail"], mem
    assert code == 0


def test_peak_memory_verdict_fails_on_a_wrong_per_worker_figure():
    # A sizing figure of 16 MiB a worker (application memory included) against the ~4 MiB a worker
    # really holds: 8 x 16 MiB predicted, ~33 measured.
    code, data = run("validate", "--mpm", "event", *MEMORY, "--per-worker-mb", "16")
    mem = verdicts(data)["peak memory at full concurrency"]
    assert mem["passed"] is False and mem["predicted"] >= 8 * 16 and "--per-worker-mb" in mem["detail"], mem
    assert code == 1


@needs_httpd
@pytest.mark.httpd
@pytest.mark.cpu_heavy  # its peak needs every worker mid-request at once: run alone (see below)
# prefork's child frees the block after each request, so a look at the whole server catches the
# children holding it only as often as chance has it (beside two CPU hogs, half: 35.6 MiB
# predicted, 70.3 peak); its busy figure is each child's own peak over the full step
# (child_peak_extra): 70.6-71.0 predicted in 7 runs, 63.4-70.8 measured, 4 of them beside two hogs.
# Beside two hogs and the rest of the suite: 70.2 predicted, 56.9 measured, now not judged
# (plans.memory_under_others).
@pytest.mark.parametrize("mpm", ["prefork", "event"])
def test_peak_memory_matches_the_sizing_model_on_httpd(mpm):
    # mod_lua allocates the 4 MiB in one block (a request holds about twice that while Lua
    # copies its buffer): the prediction measures what a busy worker holds at half load and
    # extrapolates it to every worker busy. The saturation verdict is not asserted: building 4 MiB in Lua
    # adds to each request's service time.
    code, data = run("validate", "--mpm", mpm, "--target", "httpd", *MEMORY)
    mem = verdicts(data)["peak memory at full concurrency"]
    if mem["passed"] is None:  # other processes took the CPUs and the peak came out short: said so
        assert mem["measured"] < mem["predicted"], mem
        assert any(n.startswith("peak memory not judged: other processes took") for n in data["notes"]), data
        return
    assert mem["passed"], mem
    assert mem["measured"] >= 8 * 4, mem  # every worker holds its block at the peak
    if mpm == "event":  # the bound for event; prefork's busy sample under a CPU hog
        # catches fewer workers holding their block (12% seen), within the verdict's 15% + 1 MiB
        assert abs(mem["measured"] - mem["predicted"]) <= 0.10 * mem["predicted"], mem
    assert "busy under load" in mem["detail"], mem


@needs_httpd
@pytest.mark.httpd
def test_a_worker_section_s_peak_memory_holds_on_httpd(tmp_path):
    """The proxy-like cell of docs/sizing.md: httpd worker 3 x 25, each request holding 512 KiB
    (Lua holds it twice) for 50 ms. With every worker busy the status page answers once a step,
    and the busy figure came from the half step alone, or from a stale answer beside the full
    step's memory: 80-85 MiB predicted against 95-101 measured, or 133-145. Counted by the
    connections that pin the workers, within 5% in 6 runs of 6."""
    conf = tmp_path / "mpm.conf"
    conf.write_text("StartServers 3\nServerLimit 3\nThreadsPerChild 25\nThreadLimit 25\n"
                    "MaxRequestWorkers 75\nMinSpareThreads 25\nMaxSpareThreads 75\n")
    code, data = run("validate", "--mpm", "worker", "--target", "httpd", "--config", str(conf), "--plan", "sweep",
                     "--app-kb", "512", "--service-time-ms", "50", "--format", "json")
    mem = verdicts(data)["peak memory at full concurrency"]
    assert mem["passed"], mem
    assert mem["measured"] >= 75 * 0.5, mem  # every worker held its block at the peak
    assert "busy under load" in mem["detail"], mem


def _facts(per_worker, per_process, parent=1.0):
    return HttpdFacts(1, None, (), parent, per_worker, per_process, 4)


def test_memory_verdict_formula():
    setup = ValidationSetup("mpmd", "worker", {"ThreadsPerChild": 4}, 10, 50, 1, app_kb=2048)
    # parent 1 + ceil(10 / 4) = 3 processes x 2 + 10 workers x (0.5 + 2) = 32 MiB.
    v = memory_verdict(setup, _facts(0.5, 2.0), 33.0)
    assert v.predicted == 32.0 and v.passed and "3 processes x 2.00" in v.detail
    assert memory_verdict(setup, _facts(0.5, 2.0), 40.0).passed is False  # 8 MiB > 15% + 1 MiB
    # prefork: one process a worker, whose PSS already is the per-worker figure.
    pre = ValidationSetup("mpmd", "prefork", {"ThreadsPerChild": 4}, 10, 50, 1, app_kb=2048)
    assert memory_verdict(pre, _facts(0.5, 2.0), 26.0).predicted == 26.0
    # --per-worker-mb replaces the measured figure; the rest stays measured. It is a worker
    # measured under load (apachetune size), application memory included: not added again.
    given = ValidationSetup("mpmd", "worker", {"ThreadsPerChild": 4}, 10, 50, 1, per_worker_mib=3.0, app_kb=2048)
    v = memory_verdict(given, _facts(0.5, 2.0), 33.0)
    assert v.predicted == 37.0 and v.passed and "--per-worker-mb" in v.detail  # 1 + 3 x 2 + 10 x 3
    assert "application memory included" in v.detail
    # Measured under load: the idle worker plus what a busy one held beyond it at half load.
    v = memory_verdict(setup, _facts(0.5, 2.0), 40.0, busy_extra=3.0)
    assert v.predicted == 42.0 and "busy under load" in v.detail  # 1 + 3 x 2 + 10 x (0.5 + 3)
    # An idle server that could not be measured: measured only, nothing to judge.
    v = memory_verdict(setup, "idle server not measured: no children", 12.0)
    assert v.passed is None and v.predicted is None and v.measured == 12.0


def test_httpd_events_pools_of_closed_connections_count_at_overload_only_where_they_exist():
    """httpd event keeps 3/4 of ThreadsPerChild pools a process for reuse; beside every worker's
    live connection they are there only when connections closed under load (event closing
    keep-alive connections at overload). mpmd has no such pools, worker closes none."""
    from apachetune.validate.plans import _recycled_at_overload

    event = ValidationSetup("httpd", "event", {"ThreadsPerChild": 25}, 400, 50, 1)
    assert _recycled_at_overload(event, None, 3794) == 16 * 18
    assert _recycled_at_overload(event, 10, 3794) == 10 * 18  # the processes the top steps ran
    assert _recycled_at_overload(event, None, 0) == 0  # no connection closed: the pools were taken
    unbounded = ValidationSetup("httpd", "event", {"ThreadsPerChild": 25, "MaxMemFree": 0}, 400, 50, 1)
    assert _recycled_at_overload(unbounded, None, 3794) == 0
    assert _recycled_at_overload(ValidationSetup("mpmd", "event", {"ThreadsPerChild": 25}, 400, 50, 1), None, 99) == 0
    assert _recycled_at_overload(ValidationSetup("httpd", "worker", {"ThreadsPerChild": 25}, 400, 50, 1), None, 99) == 0
    # in the verdict: counted with the connections held, at the measured cost of one more
    idle = _facts(0.15, 0.3)
    plain = memory_verdict(event, idle, 90.0, busy_extra=0.05)
    v = memory_verdict(event, idle, 90.0, busy_extra=0.05, held_connections=20, per_connection_mib=0.025,
                       recycled=288)
    assert v.predicted == pytest.approx(plain.predicted + 308 * 0.025, abs=0.1)
    assert "288 pools of closed connections" in v.detail and "20 connections held" in v.detail
    # MaxMemFree 16: each kept pool's allocator gives back all but 16 KiB
    small = ValidationSetup("httpd", "event", {"ThreadsPerChild": 25, "MaxMemFree": 16}, 400, 50, 1)
    s = memory_verdict(small, idle, 90.0, busy_extra=0.05, held_connections=20, per_connection_mib=0.025,
                       recycled=288)
    assert s.predicted == pytest.approx(plain.predicted + 20 * 0.025 + 288 * 16 / 1024, abs=0.1)
    assert "x 16.0 KiB (what MaxMemFree lets each keep)" in s.detail


def test_a_threaded_busy_figure_is_measured_against_every_child_at_the_most_loaded_ones_memory():
    """Two threaded children, one keeping four 8 MiB blocks (8.2 MiB a worker) and one two (4.1):
    size's high figure is 8.2. The other child takes its blocks back as soon as its workers serve,
    so a busy worker's extra is measured against the idle total with that child raised to 32.8 MiB
    of private memory, and adds to the high figure (the blocks are counted once)."""
    from apachetune.sizing.facts import WorkerSample
    from apachetune.validate.plans import busy_base_pss, busy_worker_mib

    children = (WorkerSample(2, 6, 34.0, 34.1, 32.8), WorkerSample(3, 6, 17.0, 17.7, 16.4))
    idle = HttpdFacts(1, "event", children, 1.4, 8.2, 1.3, 4)
    base = busy_base_pss(idle, 4)
    assert base == pytest.approx(1.4 + 34.1 + 17.7 + (32.8 - 16.4))
    # the half step, the second child's blocks back and 3 of its workers busy holding 0.1 MiB more
    assert busy_worker_mib([{"pss_mib": base + 0.3, "busy": 4}], base, 2) == pytest.approx(0.1)
    setup = ValidationSetup("httpd", "event", {"ThreadsPerChild": 4}, 8, 50, 1, app_kb=4096)
    # 1.4 + 2 x 1.3 + 8 x (8.2 + 0.1)
    assert memory_verdict(setup, idle, 69.9, busy_extra=0.1).predicted == pytest.approx(1.4 + 2.6 + 8 * 8.3)
    # a prefork look is taken as it is: a child is a worker, its PSS the figure
    pre = HttpdFacts(1, "prefork", children, 1.4, 34.1, 0.0, 1)
    assert busy_base_pss(pre, 1) == pytest.approx(1.4 + 34.1 + 17.7)


def test_a_prefork_busy_figure_adds_to_the_idle_looks_mean_worker_and_the_high_one_is_the_floor():
    """Prefork children of 34.1 and 17.7 MiB: the busy figure, taken against the look's total,
    adds to the look's mean child (25.9); never below the most loaded idle child."""
    from apachetune.sizing.facts import WorkerSample

    children = (WorkerSample(2, 1, 34.0, 34.1, 32.8), WorkerSample(3, 1, 17.0, 17.7, 16.4))
    idle = HttpdFacts(1, "prefork", children, 1.4, 34.1, 0.0, 1)
    setup = ValidationSetup("httpd", "prefork", {}, 2, 50, 1, app_kb=4096)
    assert memory_verdict(setup, idle, 70.0, busy_extra=2.0).predicted == pytest.approx(1.4 + 2 * 34.1)
    assert memory_verdict(setup, idle, 90.0, busy_extra=10.0).predicted == pytest.approx(1.4 + 2 * (25.9 + 10.0))


@pytest.mark.parametrize("mpm", ["prefork", "worker", "event"])
def test_keepalive_on_and_off_both_saturate_at_capacity(mpm):
    code, data = run("validate", "--mpm", mpm, "--plan", "keepalive-off", *FAST)
    v = verdicts(data)
    on, off = v["saturation with keep-alive on"], v["saturation with keep-alive off"]
    assert on["predicted"] == off["predicted"] == 80.0  # 4 workers / 50 ms
    for v in (on, off):
        # judged, and passed; or, beside a busy neighbour, a miss not judged and said so
        assert v["passed"] or (v["passed"] is None and any(v["name"] + " not judged" in n for n in data["notes"])), \
            (v, data["notes"])
    assert code == 0
    plans = {p["plan"] for p in data["points"]}
    assert plans == {"keep-alive on", "keep-alive off"}


def test_no_wrk_uses_the_asyncio_client():
    code, data = run("validate", "--mpm", "worker", "--plan", "sweep", "--no-wrk", *FAST)
    assert {p.get("driver") for p in data["points"]} == {"asyncio"}
    assert verdicts(data)["saturation throughput"]["passed"]


def test_busy_worker_memory_comes_from_samples_with_the_step_under_way():
    """A sample as the step begins (2 busy: PSS noise divided by 1) does not set the per-worker
    figure when samples with a loaded step exist; without them it is all there is."""
    from apachetune.validate.plans import busy_worker_mib

    idle = 10.0
    early = {"busy": 2, "pss_mib": 11.0}  # 1 MiB of noise over one busy worker
    loaded = [{"busy": 101, "pss_mib": 12.0}, {"busy": 99, "pss_mib": 11.96}]  # 0.02 MiB a worker
    assert busy_worker_mib([early, *loaded], idle, 100 // 4) == pytest.approx(0.02)
    assert busy_worker_mib([early], idle, 25) == pytest.approx(1.0)
    assert busy_worker_mib([], idle, 25) is None and busy_worker_mib(loaded, None, 25) is None


def test_one_sample_far_above_the_rest_does_not_set_the_busy_worker_figure():
    """The highest figure a second sample confirms: one spike among three or more loaded samples
    (a clean CI run: 0.14 MiB a worker where the others said 0.04-0.05) is not multiplied by
    every worker; with two samples the higher still counts."""
    from apachetune.validate.plans import busy_worker_mib

    idle = 10.0
    loaded = [{"busy": 101, "pss_mib": 14.0}, {"busy": 101, "pss_mib": 15.0}, {"busy": 101, "pss_mib": 24.0}]
    assert busy_worker_mib(loaded, idle, 25) == pytest.approx(0.05)
    assert busy_worker_mib(loaded[1:], idle, 25) == pytest.approx(0.14)


def test_busy_worker_memory_does_not_count_a_process_grown_since_the_idle_look():
    """A pool sized for the load is reaped while idle and grown again under load: the sample
    with one process more than the idle look is brought back to its count before dividing."""
    from apachetune.validate.plans import busy_worker_mib

    idle = 10.0  # the idle look: 1 child
    grown = {"busy": 26, "children": 2, "pss_mib": 10.0 + 4.5 + 25 * 0.02}  # a 4.5 MiB process more
    assert busy_worker_mib([grown], idle, 12, idle_children=1, process_mib=4.5) == pytest.approx(0.02)
    assert busy_worker_mib([grown], idle, 12) == pytest.approx(0.2)  # counted as workers: ten times
    reaped = {"busy": 26, "children": 0, "pss_mib": 10.0 - 4.5 + 25 * 0.02}
    assert busy_worker_mib([reaped], idle, 12, idle_children=1, process_mib=4.5) == pytest.approx(0.02)


def test_a_memory_miss_while_others_took_the_cpus_is_judged_only_when_the_load_was_the_planned_one():
    """Not judged (with a note) when others took the CPUs and the server ran fewer processes, or
    its peak came out short but above every worker idle; a peak above the prediction with every
    process run, or below the idle server, is judged."""
    from apachetune.validate.plans import OTHERS_CPU_LIMIT, memory_under_others
    from apachetune.validate.results import Verdict

    def miss(measured):
        return Verdict("peak memory at full concurrency", 70.2, measured, "MiB PSS", False, "")

    busy = OTHERS_CPU_LIMIT + 0.2
    short, note = memory_under_others(miss(56.9), None, busy, idle_floor=8.0)
    assert short.passed is None and "peak came out short" in note and "56.9 MiB measured, 70.2 predicted" in note
    fewer, note = memory_under_others(miss(90.0), 6, busy, idle_floor=8.0)
    assert fewer.passed is None and "at most 6 processes" in note
    assert memory_under_others(miss(90.0), None, busy, 8.0) == (miss(90.0), None)  # above: judged
    # below what idle workers hold (a wrong per-worker figure): judged, whatever the load
    assert memory_under_others(miss(32.8), None, busy, idle_floor=70.2) == (miss(32.8), None)
    assert memory_under_others(miss(56.9), None, busy) == (miss(56.9), None)  # no floor known
    assert memory_under_others(miss(56.9), None, OTHERS_CPU_LIMIT / 2, 8.0) == (miss(56.9), None)  # a quiet machine
    passed = replace(miss(69.0), passed=True)
    assert memory_under_others(passed, None, busy, 8.0) == (passed, None)


def test_httpd_event_connections_fall_back_to_the_lab_figure_when_not_measured(monkeypatch):
    """The held connections and kept pools stay in httpd event's prediction when one more
    connection cannot be measured (a crowd not all answered) or measures as noise: the lab's
    figure stands in and the detail says so; mpmd and httpd worker keep what was measured."""
    from apachetune.sizing import model
    from apachetune.validate import plans

    event = ValidationSetup("httpd", "event", {"ThreadsPerChild": 25}, 400, 50, 1)
    for measured, why in ((None, "not measured here"), (0.5 / 1024, "0.5 KiB measured here is noise"),
                          (14.7 / 1024, "14.7 KiB measured here is noise"),  # a clean CI run: the peak 16% low
                          (49.4 / 1024, "49.4 KiB measured here took more than the connections")):
        monkeypatch.setattr(plans, "connection_mib", lambda *a, m=measured: m)
        figure, source = plans.connection_cost(None, event, 10)
        assert figure == model.EVENT_CONNECTION_MIB and why in source
        v = memory_verdict(event, _facts(0.15, 0.3), 100.0, busy_extra=0.05, held_connections=100,
                           per_connection_mib=figure, recycled=288, connection_source=source)
        assert f"x 32.8 KiB (the lab's figure for httpd event: {why})" in v.detail
    monkeypatch.setattr(plans, "connection_mib", lambda *a: 25 / 1024)
    assert plans.connection_cost(None, event, 10) == (25 / 1024, "measured: one more idle keep-alive connection")
    monkeypatch.setattr(plans, "connection_mib", lambda *a: None)
    for other in (ValidationSetup("mpmd", "event", {"ThreadsPerChild": 25}, 400, 50, 1),
                  ValidationSetup("httpd", "worker", {"ThreadsPerChild": 25}, 400, 50, 1)):
        assert plans.connection_cost(None, other, 10) == (None, "")
    monkeypatch.setattr(plans, "connection_mib", lambda *a: 1 / 1024)  # mpmd's buffer may be small
    assert plans.connection_cost(None, ValidationSetup("mpmd", "event", {"ThreadsPerChild": 25}, 400, 50, 1),
                                 10)[0] == 1 / 1024


def test_a_worker_s_busy_figure_counts_the_workers_its_connections_pin():
    """httpd worker 3 x 25, 75 keep-alive clients at the full step: the status page answers once
    a step (every worker busy), so a look carries a stale answer (32 busy from the half step) or
    none, while its connections say 75 workers are pinned. Counted by the connections, the full
    step gives the figure (0.33 MiB), not a stale answer (1 MiB) nor the half step alone (0.18);
    a look taken as the clients connect (a connection short of the step's) is left out."""
    from apachetune.validate.plans import busy_worker_mib, pinned_workers

    base = 66.7
    half = [{"busy": 38, "connections": 37, "pss_mib": base + 37 * 0.18}]
    stale = {"busy": 32, "connections": 75, "pss_mib": base + 75 * 0.33}
    unanswered = {"busy": None, "connections": 75, "pss_mib": base + 75 * 0.33}
    connecting = {"busy": None, "connections": 74, "pss_mib": base + 75 * 0.33}
    assert busy_worker_mib(half + [stale], base, 18) == pytest.approx(75 * 0.33 / 31)
    assert busy_worker_mib(half + [unanswered], base, 18) == pytest.approx(0.18)
    full = pinned_workers([stale, unanswered, connecting], 75)
    assert len(full) == 2 and {s["serving"] for s in full} == {75}
    assert busy_worker_mib(pinned_workers(half, 75) + full, base, 18) == pytest.approx(0.33)
    # more connections than workers (a client between its close and its next connect): MaxRequestWorkers
    assert pinned_workers([{"busy": None, "connections": 80, "pss_mib": 1.0}], 75)[0]["serving"] == 75
    # no connection count (another user's processes): the status page's answers stand
    unread = [{"busy": 38, "connections": None, "pss_mib": base + 3.7}]
    assert pinned_workers(unread, 75) == unread and busy_worker_mib(unread, base, 18) == pytest.approx(0.1)


def test_saturation_is_predicted_from_what_a_request_takes_here():
    """An application slower than the stated service time (10 ms of CPU on top of a 40 ms
    sleep, mpmd's RequestCPU): the sweep predicts saturation from what a lone request takes on
    the server (~50 ms), not from the 40 ms it was told, so the verdict judges the pool. One
    worker: its requests never share the CPUs with each other (with 4, a loaded machine made
    each 10 ms of CPU take longer at full load than alone: 52 req/s against 80, in a clean CI run)."""
    from apachetune.validate.results import ValidationSetup
    from apachetune.validate.run import run_plans
    from apachetune.validate.section import load_directives

    directives = {**load_directives(None, "worker", 1, 1), "RequestCPU": 10000}
    report = run_plans(ValidationSetup("mpmd", "worker", directives, 1, 40, 1.0, use_wrk=False), ["sweep"])
    sat = next(v for v in report.verdicts if v.name == "saturation throughput")
    assert sat.predicted < 0.9 * 1 / 0.040, sat  # not the 25 req/s the stated 40 ms gives
    # judged, and passed; or, while other processes took most of the CPUs (two hogs beside the
    # suite: 13.5 measured against 16.8), a miss not judged and said so
    assert sat.passed or (sat.passed is None and any("saturation throughput not judged" in n for n in report.notes)), \
        (sat, report.notes)


def test_a_pool_short_of_its_processes_is_predicted_for_the_processes_it_ran():
    """httpd event beside a CPU hog did not regrow the processes it reaped while idle (13 of 16):
    the peak is predicted for every worker of those, and the detail says so. The status page's
    busy workers do not decide it: a worker that served keeps its memory."""
    from apachetune.validate.plans import processes_reached

    samples = [{"busy": 190, "children": 12, "pss_mib": 70.0}, {"busy": 243, "children": 13, "pss_mib": 80.0},
               {"pss_mib": 81.0}, {"children": 0}]  # a look without the children counts for nothing
    assert processes_reached(samples, 400, 25) == 13
    assert processes_reached([{"busy": 14, "children": 16}], 400, 25) is None  # all 16: full
    assert processes_reached([{"pss_mib": 81.0}], 400, 25) is None  # nothing says
    assert processes_reached([{"busy": 14, "children": 27}], 27, 1) is None  # prefork: a child a worker
    setup = ValidationSetup("httpd", "event", {"ThreadsPerChild": 25}, 400, 50, 1)
    facts = _facts(0.15, 0.3, parent=0.7)
    full = memory_verdict(setup, facts, 90.0, busy_extra=0.1)
    assert full.predicted == pytest.approx(0.7 + 16 * 0.3 + 400 * 0.25)
    short = memory_verdict(setup, facts, 90.0, busy_extra=0.1, processes_run=13)
    assert short.predicted == pytest.approx(0.7 + 13 * 0.3 + 325 * 0.25, abs=0.05)  # rounded
    assert "ran at most 13 processes, 325 of 400 workers" in short.detail
    pre = ValidationSetup("httpd", "prefork", {}, 150, 50, 1)
    v = memory_verdict(pre, _facts(2.0, 0.0, parent=1.0), 100.0, busy_extra=0.5, processes_run=80)
    assert v.predicted == pytest.approx(1.0 + 80 * 2.5) and "80 of 150 workers" in v.detail


def test_a_status_page_that_does_not_answer_is_no_busy_count():
    """Every prefork worker busy: the status request waits and times out. That look says nothing
    of the busy workers (it was read as 0); a look that answered counts."""
    import os
    import time

    from apachetune.validate.sampler import Sampler

    class Silent:
        port = 9  # nothing listens: no connection counted
        answers: dict = {}

        def status(self):
            return self.answers

        def pids(self):
            return [os.getpid()]

    target = Silent()
    with Sampler(target, interval=0.01, memory_interval=0.01) as sampler:  # type: ignore[arg-type]
        while not sampler.samples:
            time.sleep(0.01)
        target.answers = {"BusyWorkers": "24", "IdleWorkers": "1"}
        while sampler.samples[-1]["busy"] is None:
            time.sleep(0.01)
    first, last = sampler.samples[0], sampler.samples[-1]
    assert first["busy"] is None and first["idle"] is None and first["pss_mib"] > 0
    assert last["busy"] == 24 and last["idle"] == 1


def test_a_config_s_max_mem_free_runs_as_httpd_keeps_it(tmp_path):
    """MaxMemFree goes with the section (event's kept pools depend on it), in KiB as httpd keeps
    it; a value httpd refuses stops the run with httpd's words; mpmd reads it and starts."""
    from apachetune.validate.section import load_directives

    conf = tmp_path / "mpm.conf"
    for arg, kib in (("16", 16), ("4194304", 0), ("abc", 0)):
        conf.write_text(f"MaxMemFree {arg}\n")
        assert load_directives(str(conf), "event")["MaxMemFree"] == kib
    conf.write_text("MaxRequestWorkers 50\n")
    assert "MaxMemFree" not in load_directives(str(conf), "event")
    conf.write_text("MaxMemFree -1\n")
    with pytest.raises(UsageError, match="Invalid MaxMemFree value: -1") as refused:
        load_directives(str(conf), "event")
    assert str(refused.value).startswith(f"{conf}:1:1: ")
    conf.write_text("MaxRequestWorkers 50\nListenCoresBucketsRatio 0\n")
    with pytest.raises(UsageError, match=f"^{conf}:2:1: .*ListenCoresBucketsRatio must be > 0"):
        load_directives(str(conf), "event")
    with MpmdServer("event", {**load_directives(None, "event", 4, 2), "MaxMemFree": 16}) as server:
        assert server.proc.poll() is None


def test_a_prefork_child_s_busy_figure_is_its_own_peak_over_the_step():
    idle = HttpdFacts(1, "prefork", (WorkerSample(11, 1, 3.0, 1.0, 0.5), WorkerSample(12, 1, 3.0, 1.0, 0.7)),
                      1.0, 1.0, 1.0, 1)
    # child 11 held 8 MiB at its peak, 12 held 6; 13 (forked since) 8 beside the idle mean 0.6
    extra = child_peak_extra({11: 8.5, 12: 6.7, 13: 8.6}, idle)
    assert extra == pytest.approx((8.0 + 6.0 + 8.0) / 3)
    # a child that served nothing holds nothing more, never less
    assert child_peak_extra({11: 0.4, 12: 0.7}, idle) == 0.0
    assert child_peak_extra({}, idle) is None


def _meters(shares):
    """A stand-in for plans.OthersCpu: its windows report `shares` in turn."""
    shares = iter(shares)

    class Meter:
        def __init__(self, pids):
            self.share = next(shares)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            pass

    return Meter


def _plan_run(mpm, mrw, report=None):
    """A PlanRun on no server: the plan's clients and meters are stood in for."""
    from apachetune.validate import plans

    target = SimpleNamespace(host="127.0.0.1", port=1, pids=list)
    return plans.PlanRun(ValidationSetup("mpmd", mpm, {}, mrw, 50, 1), target, report, lambda s: None)


def test_a_lone_request_timed_while_others_took_the_cpus_is_timed_again_and_the_quietest_kept(monkeypatch):
    """The simulate and sweep plans' service time is a lone request's median. A window in which
    others took the CPUs is timed again, up to three in all, and the lowest median counts; a
    quiet window ends the search."""
    from apachetune.validate import plans
    from apachetune.validate.load import LoadResult

    def timing(windows):
        """lone_request_s over fake windows of (others' share, latencies in ms)"""
        timed = []

        def lone(host, port, path, clients, seconds, keepalive):
            timed.append(windows[len(timed)])
            return LoadResult(latencies=[ms / 1000 for ms in timed[-1][1]], elapsed=seconds)

        monkeypatch.setattr(plans, "OthersCpu", _meters(share for share, _ in windows))
        monkeypatch.setattr(plans, "closed_loop", lone)
        return round(plans.lone_request_s(_plan_run("worker", 10), keepalive=False) * 1000, 1), len(timed)

    assert timing([(0.05, [51, 52, 80])]) == (52.0, 1)  # quiet: one window, its median
    assert timing([(0.4, [70, 71, 72]), (0.05, [53, 54, 90])]) == (54.0, 2)
    assert timing([(0.4, [70, 71, 72]), (0.4, [60, 62, 65]), (0.4, [66, 67, 68])]) == (62.0, 3)
    assert timing([(0.4, []), (0.4, [])] + [(0.4, [])]) == (50.0, 3)  # nothing answered: the stated time
    assert timing([(0.05, [40, 41, 42])]) == (50.0, 1)  # never under the stated service time


def test_the_keepalive_off_plan_measures_a_missed_step_once_more(monkeypatch):
    """A 1 s step that misses saturation is measured again and the second step judged, with a
    note of the first; a pool that misses twice fails."""
    from apachetune.validate import plans
    from apachetune.validate.load import LoadResult
    from apachetune.validate.results import ValidationReport

    def judged(rates):
        steps = iter(rates)

        def step(host, port, path, clients, seconds, keepalive):
            return LoadResult(latencies=[0.05] * round(next(steps) * seconds), elapsed=seconds)

        monkeypatch.setattr(plans, "OthersCpu", _meters([0.0] * len(rates)))
        monkeypatch.setattr(plans, "closed_loop", step)
        run = _plan_run("prefork", 4)
        run.report = report = ValidationReport(run.setup)
        plans.keepalive_off(run)
        return [(v.measured, v.passed) for v in report.verdicts], report.notes, len(report.points)

    assert judged([77, 78]) == ([(77, True), (78, True)], [], 2)
    verdicts, notes, points = judged([53, 77, 78])
    assert verdicts == [(77, True), (78, True)] and points == 2
    assert notes == ["saturation with keep-alive on: measured again (the first step: 53.0 req/s, 80 predicted)"]
    assert judged([53, 50, 78])[0] == [(50, False), (78, True)]


def test_the_open_loop_s_overhead_is_timed_again_while_others_took_the_cpus(monkeypatch):
    """The overhead the openloop plan takes off every wait (and adds to every job of its M/M/c
    replay) is a quietest median too: a window beside a busy neighbour is timed again."""
    from apachetune.validate import plans
    from apachetune.validate.load import LoadResult

    windows = [[0.009, 0.010, 0.011], [0.0016, 0.0017, 0.0030]]
    timed = []

    def measure():
        timed.append(windows[len(timed)])
        return LoadResult(latencies=timed[-1], elapsed=1.0)

    monkeypatch.setattr(plans, "OthersCpu", _meters([0.5, 0.05]))
    assert plans.quietest_median(_plan_run("event", 4), measure)[0] == 0.0017 and len(timed) == 2


def _sweep_with_halved_steps(monkeypatch, halved_steps: int | None) -> tuple[list[int], int, dict, dict]:
    """validate's sweep on mpmd event with its steps at and beyond MaxRequestWorkers made to
    report half of what they served (the first `halved_steps` calls only, or all): (the steps'
    connections in order, the exit code, the report, its saturation verdict)."""
    from apachetune.validate import plans

    real = plans._sweep_step
    calls: list[int] = []

    def halved(run_, c):
        pt = real(run_, c)
        calls.append(c)
        if c >= run_.mrw and (halved_steps is None or len(calls) <= halved_steps):
            pt = {**pt, "throughput_rps": pt["throughput_rps"] / 2}
        return pt

    monkeypatch.setattr(plans, "_sweep_step", halved)
    code, data = run("validate", "--mpm", "event", "--plan", "sweep", *FAST)
    return calls, code, data, verdicts(data)["saturation throughput"]


def test_a_short_saturation_is_measured_once_more(monkeypatch):
    """One step is a sample: when the top steps fall short, the sweep runs MaxRequestWorkers
    connections once more and keeps the best, saying so. Here the first steps at and beyond
    MaxRequestWorkers are made to report half of what they served."""
    calls, code, data, sat = _sweep_with_halved_steps(monkeypatch, 4)  # the sweep's own steps, not the one more
    if calls == [2, 4, 6, 8]:  # a miss while other processes took the CPUs is not judged, nor measured again
        assert sat["passed"] is None and any("saturation throughput not judged" in n for n in data["notes"]), data
        return
    assert calls == [2, 4, 6, 8, 4]
    assert sat["passed"] is not False, sat  # judged and passed, or (beside CPU hogs) not judged and said so
    assert any(n.startswith("saturation measured once more at 4 connections") for n in data["notes"]), data["notes"]
    assert [p["x"] for p in data["points"] if p.get("again")] == [4]


def test_a_saturation_that_keeps_missing_is_measured_at_most_three_more_times(monkeypatch):
    """Steps at MaxRequestWorkers that keep falling short are measured again SATURATION_RETRIES
    times, no more, and the verdict then fails with every try in the notes (event's churn of
    closed keep-alive connections can spoil one 2 s step, not four). Here every step at and
    beyond MaxRequestWorkers reports half of what it served."""
    from apachetune.validate import plans

    calls, code, data, sat = _sweep_with_halved_steps(monkeypatch, None)
    if calls == [2, 4, 6, 8]:  # a miss while other processes took the CPUs is not judged, nor measured again
        assert sat["passed"] is None and any("saturation throughput not judged" in n for n in data["notes"]), data
        return
    assert calls[:4] == [2, 4, 6, 8] and set(calls[4:]) == {4}, calls
    if sat["passed"] is None:  # the others took the CPUs during a later try: said so
        assert any("saturation throughput not judged" in n for n in data["notes"]), data
        return
    assert len(calls) == 4 + plans.SATURATION_RETRIES and sat["passed"] is False and code != 0, (calls, sat)
    note = next(n for n in data["notes"] if n.startswith("saturation measured"))
    assert note.startswith(f"saturation measured {plans.SATURATION_RETRIES} more times at 4 connections"), note
    assert note.count(",") >= plans.SATURATION_RETRIES - 1, note
