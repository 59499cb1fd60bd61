"""`apachetune simulate` with option combinations drawn at random: every run ends in a report
(exit 0, JSON that parses) or a one-line usage error (exit 2), never a traceback.

A session's hand-run fuzz of about 150 such runs (every workload kind, versions, --compare,
--curve, --graceful-at) found none; this keeps a small, seeded slice of it in the suite."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apachetune.cli import cli

SECTIONS = {
    "prefork": "StartServers 2\nMinSpareServers 1\nMaxSpareServers 4\nMaxRequestWorkers 8\n",
    "worker": "StartServers 1\nThreadsPerChild 4\nThreadLimit 4\nMinSpareThreads 1\nMaxSpareThreads 8\n"
              "MaxRequestWorkers 8\n",
    "event": "StartServers 1\nThreadsPerChild 4\nThreadLimit 4\nMinSpareThreads 1\nMaxSpareThreads 8\n"
             "MaxRequestWorkers 8\nAsyncRequestWorkerFactor 1\n",
}

OPTIONAL = {
    "--keepalive-timeout": st.sampled_from(["0", "1", "5"]),
    "--think": st.sampled_from(["0", "10ms", "1s", "exp:200ms", "lognormal:50ms:0.5", "exp:x"]),
    "--turnaround": st.sampled_from(["50us", "lognormal:122us:0.41"]),
    "--ramp-up": st.sampled_from(["0", "1s", "-1"]),
    "--worker-return": st.sampled_from(["0", "45us", "1ms"]),
    "--client-first": st.sampled_from(["0", "0.1", "1"]),
    "--fin-after": st.sampled_from(["0", "10ms", "3s"]),
    "--crowd": st.sampled_from(["1", "30"]),
    "--silent": st.sampled_from(["1", "5"]),
    "--service": st.sampled_from(["5ms", "exp:50ms", "lognormal:5ms:1.5", "2s", "0ms", "x"]),
    "--cpu-fraction": st.sampled_from(["0", "0.5", "1", "2"]),
    "--cores": st.sampled_from(["1", "2", "0"]),
    "--cpu-quota": st.sampled_from(["0.25", "1.5", "0"]),
    "--cpu-period-ms": st.sampled_from(["20", "100", "0"]),
    "--httpd-cpu": st.sampled_from(["0", "55us,60us", "machine", "fast"]),
    "--client-cpu": st.sampled_from(["0", "ab", "wrk", "21us,45us"]),
    "--client-threads": st.sampled_from(["1", "2", "0"]),
    "--timeout": st.sampled_from(["100ms", "5s"]),
    "--syn-schedule": st.sampled_from(["linux", "rfc1122", "1,2", "linux-6.5", "never"]),
    "--warmup": st.sampled_from(["0.2", "5"]),
    "--per-worker-mib": st.sampled_from(["10", "-1"]),
    "--httpd-version": st.sampled_from(["2.4.37", "2.4.62", "2.2.0"]),
    "--graceful-at": st.sampled_from(["0.3", "-1"]),
    "--requests": st.sampled_from(["1", "50", "5000"]),
    "--requests-per-connection": st.sampled_from(["1", "3"]),
    "--gap": st.sampled_from(["10ms", "1s"]),
}


@st.composite
def invocations(draw) -> list[str]:
    mpm = draw(st.sampled_from(sorted(SECTIONS)))
    args = ["simulate", "SECTION", "--mpm", mpm, "--seconds", draw(st.sampled_from(["1", "4"]))]
    loop = draw(st.sampled_from(["clients", "rate", "crowd", "none"]))
    if loop == "clients":
        args += ["--clients", draw(st.sampled_from(["1", "6", "40"]))]
    elif loop == "rate":
        args += ["--rate", draw(st.sampled_from(["0.5", "50", "500"]))]
    elif loop == "crowd":
        args += ["--crowd", "20"]
    args += [draw(st.sampled_from(["--keepalive", "--no-keepalive"]))]
    for option in draw(st.lists(st.sampled_from(sorted(OPTIONAL)), max_size=5, unique=True)):
        args += [option, draw(OPTIONAL[option])]
    if draw(st.booleans()):
        args += ["--compare"]
    if draw(st.booleans()):
        args += ["--drain"]
    if draw(st.booleans()):
        args += ["--naive-reuse"]
    return [*args, "--format", "json"]


# (the CLI raises the recursion limit for deep configurations and keeps it: hypothesis says so)
@pytest.mark.filterwarnings("ignore:The recursion limit will not be reset")
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(invocations())
def test_simulate_reports_or_refuses_whatever_the_options(tmp_path_factory, argv):
    conf = tmp_path_factory.mktemp("fuzz") / "mpm.conf"
    mpm = argv[argv.index("--mpm") + 1]
    conf.write_text(SECTIONS[mpm])
    argv = [str(conf) if a == "SECTION" else a for a in argv]
    result = CliRunner().invoke(cli, argv)
    assert result.exception is None or isinstance(result.exception, SystemExit), (argv, result.exc_info)
    assert "Traceback" not in result.output, (argv, result.output)
    assert result.exit_code in (0, 2), (argv, result.output)
    if result.exit_code == 0:
        report = json.loads(result.stdout)
        runs = report if isinstance(report, list) else [report]  # (--compare: one a MPM)
        assert runs and all("throughput_rps" in r and "errors" in r for r in runs), (argv, report)
    else:
        last = result.output.strip().splitlines()[-1]
        assert "rror" in last, (argv, result.output)  # click's "Error: ..." or ours "error: ..."
