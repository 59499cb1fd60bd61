"""Differential test: our predicted start-up messages equal real httpd's (apache2 -t), in order.

Hypothesis generates MPM sections with edge values (0, 1, negatives, non-numbers, leading
blanks, trailing junk, compile-time limits +-1, huge values, legacy names, repeats); each one is
written to a small config and checked with `apache2 -t`.
"""

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from apachetune.mpm import simulate_startup
from httpd_oracle import MODULES_DIR, needs_httpd, run_httpd, startup_messages
from mpm_cases import EDGE, NAMES

pytestmark = [needs_httpd, pytest.mark.httpd]

VALUES = st.one_of(st.sampled_from(EDGE), st.integers(-10, 1000).map(str))


def section(mpm):
    return st.lists(st.tuples(st.sampled_from(NAMES[mpm]), VALUES), max_size=7)


def check_against_httpd(mpm, directives):
    body = "\n".join(f'{name} "{value}"' for name, value in directives)
    with tempfile.TemporaryDirectory() as tmp:
        conf = Path(tmp) / "httpd.conf"
        conf.write_text(
            "ServerName localhost\nUser nobody\nGroup nogroup\n"
            f"ErrorLog {tmp}/error.log\nPidFile {tmp}/httpd.pid\nListen 127.0.0.1:1\n"
            f"LoadModule mpm_{mpm}_module {MODULES_DIR}/mod_mpm_{mpm}.so\n{body}\n")
        # -e info: the start-up log level, so the INFO deprecation notes are printed too
        # (LogLevel in the file does not apply to messages logged while it is being read).
        proc = run_httpd("-t", "-e", "info", "-f", str(conf))
    ours = simulate_startup(mpm, [(n, [v]) for n, v in directives])
    theirs = startup_messages(proc.stderr)
    if ours.fatal:
        assert proc.returncode != 0
        # The notes of the lines read before the bad one, then the syntax error and its reason.
        assert theirs[:-1] == [(m.code, m.text) for m in ours.notices]
        assert theirs[-1][0] == "AH00526"
        lines = proc.stderr.splitlines()
        assert lines[lines.index(next(x for x in lines if "AH00526" in x)) + 1] == ours.fatal[0].text
        return
    assert proc.returncode == 0, proc.stderr
    assert [(m.code, m.text) for m in ours.notices + ours.messages] == theirs


settings_ = settings(max_examples=int(__import__("os").environ.get("MPM_ORACLE_EXAMPLES", "40")), deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@settings_
@given(section("prefork"))
@example([("ServerLimit", "200001")])
@example([("ServerLimit", "0"), ("MaxRequestWorkers", "0"), ("StartServers", "0"), ("MinSpareServers", "-1")])
@example([("MaxRequestWorkers", "300"), ("ServerLimit", "four")])
@example([("MaxClients", "500")])
@example([("MaxRequestsPerChild", "10"), ("MaxClients", "5"), ("ListenBacklog", "0"), ("MaxClients", "6")])
def test_prefork_messages_match_httpd(directives):
    check_against_httpd("prefork", directives)


@settings_
@given(section("worker"))
@example([("ServerLimit", "20001"), ("ThreadLimit", "20001"), ("ThreadsPerChild", "20001")])
@example([("ServerLimit", "0"), ("ThreadLimit", "0"), ("ThreadsPerChild", "0"), ("StartServers", "0"),
          ("MinSpareThreads", "0")])
@example([("ThreadsPerChild", "30"), ("MaxRequestWorkers", "20")])
@example([("ThreadsPerChild", "30"), ("MaxRequestWorkers", "400"), ("ServerLimit", "10")])
@example([("MaxClients", "20"), ("maxclients", "300"), ("MaxRequestsPerChild", "0")])
@example([("ServerLimit", "2147483648"), ("ThreadLimit", "-2147483649")])
@example([("MaxRequestWorkers", "  12"), ("ThreadsPerChild", "+5"), ("StartServers", "-0")])
def test_worker_messages_match_httpd(directives):
    check_against_httpd("worker", directives)


@settings_
@given(section("event"))
@example([("ServerLimit", "20001"), ("ThreadLimit", "100001"), ("ThreadsPerChild", "100001")])
@example([("ThreadLimit", "100000"), ("ThreadsPerChild", "99999")])
@example([("ThreadsPerChild", "30")])
@example([("ThreadsPerChild", "64"), ("ThreadLimit", "32"), ("MaxRequestWorkers", "12abc")])
@example([("AsyncRequestWorkerFactor", "0")])
@example([("AsyncRequestWorkerFactor", "1.5x")])
@example([("MaxClients", "60"), ("AsyncRequestWorkerFactor", "")])
@example([("AsyncRequestWorkerFactor", "0.5"), ("MinSpareThreads", "0"), ("ServerLimit", "20000"),
          ("ThreadLimit", "99999"), ("ThreadsPerChild", "100000")])
def test_event_messages_match_httpd(directives):
    check_against_httpd("event", directives)


STATUS = (f"LoadModule status_module {MODULES_DIR}/mod_status.so\n"
          "<Location /server-status>\n  SetHandler server-status\n</Location>\n")


@pytest.mark.parametrize("mpm, directives", [
    ("prefork", {"ServerLimit": "100"}),  # AH00180: the default 256 falls to 100
    ("prefork", {"MaxRequestWorkers": "7", "StartServers": "2"}),
    ("worker", {"ThreadsPerChild": "30", "MaxRequestWorkers": "400", "ServerLimit": "10"}),  # AH00318
    ("event", {"ThreadsPerChild": "30"}),  # AH00513: the built-in 400 rounds down to 390
    ("event", {"ThreadsPerChild": "64", "ThreadLimit": "32", "MaxRequestWorkers": "12abc"}),
])
def test_effective_worker_slots_match_a_running_httpd(tmp_path, mpm, directives):
    """mod_status shows one scoreboard slot for each worker httpd may run: the MPM's process
    limit (AP_MPMQ_MAX_DAEMONS) x ThreadsPerChild (AP_MPMQ_MAX_THREADS). That is the
    effective MaxRequestWorkers we predict, including after AH00318/AH00515, where httpd keeps
    max_workers but caps the process count."""
    from httpd_oracle import RunningHttpd

    section = "".join(f"{name} {value}\n" for name, value in directives.items())
    with RunningHttpd(tmp_path, mpm, section + STATUS) as httpd:
        status = httpd.get("/server-status?auto").decode()
    fields = dict(line.split(": ", 1) for line in status.splitlines() if ": " in line)
    assert fields["ServerMPM"] == mpm
    ours = simulate_startup(mpm, directives)
    assert len(fields["Scoreboard"]) == ours.effective["MaxRequestWorkers"]


@pytest.mark.parametrize("mpm, directives", [
    ("prefork", {"ServerLimit": "0", "MaxRequestWorkers": "-2", "StartServers": "0", "MinSpareServers": "-1"}),
    ("prefork", {"ServerLimit": "3", "MaxRequestWorkers": "5"}),
    ("worker", {"ThreadLimit": "0", "StartServers": "-1", "MinSpareThreads": "0"}),
    ("worker", {"ThreadsPerChild": "0", "MaxRequestWorkers": "0"}),
    ("event", {"ThreadsPerChild": "30", "ServerLimit": "0", "StartServers": "0", "MinSpareThreads": "-3"}),
    ("event", {"ThreadsPerChild": "64", "ThreadLimit": "32", "MaxRequestWorkers": "12abc"}),
])
def test_second_pass_messages_match_a_real_start(tmp_path, mpm, directives):
    """A real start checks the config a second time and logs each adjustment again, with the
    next AH code and a shorter text, to the ErrorLog before 'resuming normal operations'."""
    from httpd_oracle import RunningHttpd

    section = "".join(f"{name} {value}\n" for name, value in directives.items())
    with RunningHttpd(tmp_path, mpm, section):
        pass
    logged = startup_messages((tmp_path / "error.log").read_text())
    codes = [code for code, _ in logged]
    before_ready = logged[:codes.index("AH00489" if mpm == "event" else
                                       {"worker": "AH00292", "prefork": "AH00163"}[mpm])]
    ours = simulate_startup(mpm, directives)
    assert ours.error_log, "the example must exercise at least one check"
    assert [(m.code, m.text) for m in ours.error_log] == before_ready


@pytest.mark.parametrize("ratio", [None, "1"])
def test_start_servers_follow_listen_buckets_in_a_running_httpd(tmp_path, ratio):
    """event_run raises StartServers to the bucket count and MinSpareThreads/MaxSpareThreads so
    that no child is spawned or killed at once: with StartServers 1 exactly max(1, buckets)
    processes run (mod_status's Processes, read before the first maintenance cycle)."""
    from apachetune.mpm import listen_buckets
    from httpd_oracle import RunningHttpd

    buckets = listen_buckets(ratio)
    directives = {"StartServers": "1", "MinSpareThreads": "1", "MaxSpareThreads": "1000"}
    section = "".join(f"{name} {value}\n" for name, value in directives.items())
    section += f"ListenCoresBucketsRatio {ratio}\n" if ratio else ""
    with RunningHttpd(tmp_path, "event", section + STATUS) as httpd:
        status = httpd.get("/server-status?auto").decode()
    fields = dict(line.split(": ", 1) for line in status.splitlines() if ": " in line)
    ours = simulate_startup("event", directives, listen_buckets=buckets)
    assert int(fields["Processes"]) == ours.effective["StartServers"] == buckets
