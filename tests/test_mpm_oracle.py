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

pytestmark = [needs_httpd, pytest.mark.httpd]

EDGE = ["0", "1", "-1", "2", "3", "16", "25", "30", "64", "75", "250", "256", "400", "199999",
        "200000", "200001", "19999", "20000", "20001", "99999", "100000", "100001", "four", "  12",
        "12abc", "+5", "-0", "99999999999", ""]
VALUES = st.one_of(st.sampled_from(EDGE), st.integers(-10, 1000).map(str))
NAMES = {
    "prefork": ["StartServers", "MinSpareServers", "MaxSpareServers", "ServerLimit", "MaxRequestWorkers",
                "MaxClients", "MaxConnectionsPerChild", "MaxRequestsPerChild"],
    "worker": ["StartServers", "MinSpareThreads", "MaxSpareThreads", "ServerLimit", "ThreadLimit",
               "ThreadsPerChild", "MaxRequestWorkers", "MaxClients", "MaxConnectionsPerChild"],
}
NAMES["event"] = NAMES["worker"] + ["AsyncRequestWorkerFactor"]


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
        proc = run_httpd("-t", "-f", str(conf))
    ours = simulate_startup(mpm, [(n, [v]) for n, v in directives])
    if ours.fatal:
        assert proc.returncode != 0
        assert ours.fatal[0].text in proc.stderr
        return
    assert proc.returncode == 0, proc.stderr
    theirs = startup_messages(proc.stderr)
    assert [(m.code, m.text) for m in ours.messages] == theirs


settings_ = settings(max_examples=int(__import__("os").environ.get("MPM_ORACLE_EXAMPLES", "40")), deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@settings_
@given(section("prefork"))
@example([("ServerLimit", "200001")])
@example([("ServerLimit", "0"), ("MaxRequestWorkers", "0"), ("StartServers", "0"), ("MinSpareServers", "-1")])
@example([("MaxRequestWorkers", "300"), ("ServerLimit", "four")])
@example([("MaxClients", "500")])
def test_prefork_messages_match_httpd(directives):
    check_against_httpd("prefork", directives)


@settings_
@given(section("worker"))
@example([("ServerLimit", "20001"), ("ThreadLimit", "20001"), ("ThreadsPerChild", "20001")])
@example([("ServerLimit", "0"), ("ThreadLimit", "0"), ("ThreadsPerChild", "0"), ("StartServers", "0"),
          ("MinSpareThreads", "0")])
@example([("ThreadsPerChild", "30"), ("MaxRequestWorkers", "20")])
@example([("ThreadsPerChild", "30"), ("MaxRequestWorkers", "400"), ("ServerLimit", "10")])
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
def test_event_messages_match_httpd(directives):
    check_against_httpd("event", directives)
