"""The MPM start-up model on its own: numbers, defaults, messages, silent adjustments."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apachetune.mpm import DEFAULTS, MPM_DIRECTIVES, is_fixed_point, simulate_startup
from apachetune.mpm.numbers import atoi, strtod_strict


@pytest.mark.parametrize("text, value", [
    ("12", 12), ("  12", 12), ("+7", 7), ("-3", -3), ("12abc", 12), ("four", 0), ("", 0),
    ("0x10", 0), ("99999999999", 1215752191), ("-99999999999999999999", 0),
    ("99999999999999999999", -1),
])
def test_atoi_reads_numbers_like_glibc(text, value):
    assert atoi(text) == value


def test_strtod_strict():
    assert strtod_strict("1.5") == 1.5 and strtod_strict("2") == 2.0
    assert strtod_strict("2x") is None and strtod_strict("") is None


def test_defaults_when_nothing_is_set():
    for mpm in ("prefork", "worker", "event"):
        r = simulate_startup(mpm, {})
        assert r.messages == [] and r.effective == {k: DEFAULTS[mpm][k] for k in MPM_DIRECTIVES[mpm]}


def test_threads_per_child_alone_keeps_the_built_in_400():
    r = simulate_startup("event", {"ThreadsPerChild": "30"})
    assert [m.code for m in r.messages] == ["AH00513"]
    assert r.messages[0].text == ("WARNING: MaxRequestWorkers of 400 is not an integer multiple of "
                                  "ThreadsPerChild of 30, decreasing to nearest multiple 390, for a "
                                  "maximum of 13 servers.")
    assert r.effective["MaxRequestWorkers"] == 390


def test_server_limit_caps_workers_after_rounding():
    r = simulate_startup("worker", [("ThreadsPerChild", ["30"]), ("MaxRequestWorkers", ["400"]),
                                    ("ServerLimit", ["10"])])
    assert [m.code for m in r.messages] == ["AH00316", "AH00318"]
    assert r.messages[1].text == ("WARNING: MaxRequestWorkers of 390 would require 13 servers and would "
                                  "exceed ServerLimit of 10, decreasing to 300. To increase, please see "
                                  "the ServerLimit directive.")
    assert r.effective["MaxRequestWorkers"] == 300


def test_legacy_names_and_last_one_wins():
    r = simulate_startup("prefork", [("MaxClients", ["50"]), ("MaxRequestWorkers", ["60"]),
                                     ("MaxRequestsPerChild", ["1000"])])
    assert r.configured == {"MaxRequestWorkers": "60", "MaxConnectionsPerChild": "1000"}
    assert r.effective["MaxRequestWorkers"] == 60 and r.effective["MaxConnectionsPerChild"] == 1000
    assert r.legacy_names == ["MaxClients", "MaxRequestsPerChild"]


def test_non_numbers_are_zero():
    r = simulate_startup("event", {"ServerLimit": "four"})
    assert r.messages[0].code == "AH00499"
    assert r.messages[0].text == "WARNING: ServerLimit of 0 not allowed, increasing to 1."


def test_silent_spare_thread_adjustment():
    # worker_run/event_run: MaxSpareThreads >= MinSpareThreads + (ThreadsPerChild + 1) * buckets.
    r = simulate_startup("event", {"MinSpareThreads": "75", "MaxSpareThreads": "80"})
    assert r.messages == []
    assert r.effective["MaxSpareThreads"] == 75 + 26
    (adj,) = [a for a in r.adjustments if a.directive == "MaxSpareThreads"]
    assert adj.silent and adj.code is None and adj.configured == 80


def test_silent_prefork_spare_and_start_adjustments():
    # prefork_run: MaxSpareServers >= MinSpareServers + 1; StartServers capped at MaxRequestWorkers.
    r = simulate_startup("prefork", {"MinSpareServers": "10", "MaxSpareServers": "5",
                                     "StartServers": "50", "MaxRequestWorkers": "20"})
    assert r.messages == []
    assert r.effective["MaxSpareServers"] == 11 and r.effective["StartServers"] == 20


def test_start_servers_capped_at_process_limit():
    r = simulate_startup("worker", {"StartServers": "40", "ServerLimit": "4", "MaxRequestWorkers": "100"})
    assert r.effective["StartServers"] == 4


def test_listen_buckets_raise_spare_threads():
    r = simulate_startup("event", {"ThreadsPerChild": "25"}, listen_buckets=2)
    assert r.effective["MinSpareThreads"] == 75 and r.effective["MaxSpareThreads"] == 250
    r = simulate_startup("event", {"MinSpareThreads": "10", "MaxSpareThreads": "20"}, listen_buckets=2)
    assert r.effective["MinSpareThreads"] == 27 and r.effective["MaxSpareThreads"] == 27 + 52


def test_fatal_values():
    r = simulate_startup("event", {"AsyncRequestWorkerFactor": "0"})
    assert [m.text for m in r.fatal] == ["AsyncRequestWorkerFactor argument must be a positive number"]
    r = simulate_startup("event", {"AsyncRequestWorkerFactor": "1.5x"})
    assert [m.text for m in r.fatal] == ["error parsing value"]
    r = simulate_startup("prefork", {"ListenBacklog": "0"})
    assert [m.text for m in r.fatal] == ["ListenBacklog must be > 0"]
    assert simulate_startup("event", {"AsyncRequestWorkerFactor": "0.5"}).effective["AsyncRequestWorkerFactor"] == 1.0


def test_json_contract():
    payload = simulate_startup("event", {"ThreadsPerChild": "30", "MaxRequestWorkers": "400"}).to_json()
    assert set(payload) == {"name", "configured", "effective", "startup_messages"}
    assert payload["startup_messages"][0]["code"] == "AH00513"
    assert set(payload["effective"]) == set(MPM_DIRECTIVES["event"])


def test_fixed_point():
    assert is_fixed_point("event", {"ServerLimit": 8, "ThreadsPerChild": 25, "MaxRequestWorkers": 200,
                                    "MinSpareThreads": 25, "MaxSpareThreads": 75, "StartServers": 2})
    assert not is_fixed_point("event", {"ThreadsPerChild": 30})
    assert not is_fixed_point("event", {"MinSpareThreads": 75, "MaxSpareThreads": 80})


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["prefork", "worker", "event"]),
       st.dictionaries(st.sampled_from(["ServerLimit", "ThreadLimit", "ThreadsPerChild", "MaxRequestWorkers",
                                        "StartServers", "MinSpareThreads", "MaxSpareThreads",
                                        "MinSpareServers", "MaxSpareServers"]),
                       st.integers(-5, 300000).map(str)))
def test_effective_values_are_a_fixed_point(mpm, values):
    """Whatever is configured, what httpd runs with is accepted unchanged on a second start."""
    effective = simulate_startup(mpm, values).effective
    assert is_fixed_point(mpm, {k: v for k, v in effective.items()})


def test_legacy_names_give_info_notes_in_reading_order():
    # set_max_workers (each MPM's own code) and ap_mpm_set_max_requests (AH00545) log them
    # as each line is read; -t prints them only with `-e info`.
    r = simulate_startup("worker", [("MaxRequestsPerChild", ["10"]), ("maxclients", ["50"]),
                                    ("MaxClients", ["75"])])
    assert [(m.code, m.level) for m in r.notices] == [("AH00545", "info"), ("AH00324", "info"),
                                                      ("AH00324", "info")]
    assert r.notices[1].text == "MaxClients is deprecated, use MaxRequestWorkers instead."
    assert r.notices[0].text == "MaxRequestsPerChild is deprecated, use MaxConnectionsPerChild instead."
    assert [m.code for m in r.messages] == []  # 75 is a multiple of 25; notes are not warnings
    assert {m.code for m in simulate_startup("prefork", {"MaxClients": "5"}).notices} == {"AH00188"}
    assert {m.code for m in simulate_startup("event", {"MaxClients": "50"}).notices} == {"AH00521"}


def test_reading_stops_at_the_first_error():
    r = simulate_startup("prefork", [("MaxClients", ["5"]), ("ListenBacklog", ["-1"]),
                                     ("MaxClients", ["6"]), ("ListenBacklog", ["0"])])
    assert [m.code for m in r.notices] == ["AH00188"]
    assert [m.text for m in r.fatal] == ["ListenBacklog must be > 0"]
    r = simulate_startup("event", [("MaxClients", ["5", "6"])])
    assert r.notices == [] and r.fatal[0].text.startswith("MaxClients takes one argument")


def test_second_pass_log_lines_use_the_next_code_and_short_text():
    r = simulate_startup("prefork", {"ServerLimit": "3", "MaxRequestWorkers": "5"})
    assert [(m.code, m.text) for m in r.messages] == [(
        "AH00180", "WARNING: MaxRequestWorkers of 5 exceeds ServerLimit value of 3 servers, decreasing "
                   "MaxRequestWorkers to 3. To increase, please see the ServerLimit directive.")]
    assert [(m.code, m.text) for m in r.error_log] == [
        ("AH00181", "MaxRequestWorkers of 5 exceeds ServerLimit value of 3, decreasing to match")]
    r = simulate_startup("worker", {"ThreadsPerChild": "7", "MaxRequestWorkers": "5"})
    assert [m.code for m in r.error_log] == ["AH00315"]
    assert r.error_log[0].text == "MaxRequestWorkers of 5 is less than ThreadsPerChild of 7, increasing to match"


def test_listen_buckets():
    from apachetune.mpm import listen_buckets
    from apachetune.mpm.buckets import ratio_error

    assert listen_buckets(None, 8) == 1 and listen_buckets(0, 8) == 1 and listen_buckets("0", 8) == 1
    assert listen_buckets(2, 8) == 4 and listen_buckets("3", 8) == 2 and listen_buckets(8, 8) == 1
    assert listen_buckets(16, 8) == 1 and listen_buckets(1, 8, reuseport=False) == 1
    assert ratio_error("0") == "ListenCoresBucketsRatio must be > 0" and ratio_error("2") is None


def test_fixed_point_depends_on_buckets():
    values = {"ThreadsPerChild": 25, "MinSpareThreads": 25, "MaxSpareThreads": 75, "StartServers": 2,
              "MaxRequestWorkers": 200, "ServerLimit": 8}
    assert is_fixed_point("event", values)
    # event_run: MinSpareThreads >= 25 * (2 - 1) + 2 = 27 with two buckets.
    assert not is_fixed_point("event", values, listen_buckets=2)


def test_prefork_buckets_raise_spare_servers_silently():
    # prefork_run: MinSpareServers >= B, MaxSpareServers >= MinSpareServers + B, StartServers >= B.
    r = simulate_startup("prefork", {"MinSpareServers": "1", "MaxSpareServers": "2", "StartServers": "1"},
                         listen_buckets=3)
    assert r.messages == []
    assert (r.effective["MinSpareServers"], r.effective["MaxSpareServers"], r.effective["StartServers"]) == (3, 6, 3)
    assert all(a.silent and a.code is None for a in r.adjustments)
    assert [a.directive for a in r.adjustments] == ["StartServers", "MinSpareServers", "MaxSpareServers"]


@pytest.mark.parametrize(("arg", "kib"), [
    ("2048", 2048), ("0", 0), ("abc", 0), ("-0", 0), (" +7", 7), ("12x", 12),
    ("4194304", 0), ("4194305", 1), ("5000000", 805696), ("9223372036854775807", 4194303),
    ("-1", None), ("9223372036854775808", None), ("-99999999999999999999", None)])
def test_max_mem_free_is_read_as_httpd_keeps_it(arg, kib):
    """core.c ap_mpm_set_max_mem_free: strtol (no digits: 0; junk after them dropped), refused
    when negative or out of a long's range, then KiB x 1024 in 32 bits (0 is no limit)."""
    from apachetune.mpm.numbers import max_mem_free

    assert max_mem_free(arg) == kib
