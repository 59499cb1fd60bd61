"""mpmd's directive file: bad values are refused with the file and line, never overflowed or
split."""

from __future__ import annotations

import subprocess

import pytest

from apachetune.validate.mpmd_server import binary


def check(tmp_path, text: str) -> subprocess.CompletedProcess:
    conf = tmp_path / "mpmd.conf"
    conf.write_text(f"DocumentRoot {tmp_path}\n{text}")
    return subprocess.run([str(binary()), "-t", "-f", str(conf), "-m", "event"], capture_output=True,
                          text=True, timeout=30)


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "abc", "5parsecs"])
def test_bad_times_are_refused_with_the_line(tmp_path, value):
    r = check(tmp_path, f"Timeout {value}\n")
    assert r.returncode == 2 and "mpmd.conf:2: Timeout: invalid time" in r.stderr


@pytest.mark.parametrize("value", ["3000000", "1e10", "99999999999", "2.5", "500ms"])
def test_huge_times_are_accepted_without_overflow(tmp_path, value):
    # httpd accepts them; mpmd clamps to what poll() can wait instead of overflowing an int.
    r = check(tmp_path, f"Timeout {value}\nKeepAliveTimeout {value}\n")
    assert r.returncode == 0, r.stderr


def test_a_line_over_8191_bytes_is_refused_not_split(tmp_path):
    # The tail of a split line would have been read as a directive of its own.
    r = check(tmp_path, "#" + "a" * 8189 + "Timeout 5\n")
    assert r.returncode == 2 and "mpmd.conf:2: line too long" in r.stderr
    assert check(tmp_path, "#" + "a" * 8190 + "\nTimeout 5\n").returncode == 0  # 8191 bytes: fine


@pytest.mark.parametrize("value, ok", [
    ("header=20-40,MinRate=500 body=20,MinRate=500", True),
    ("header=0 body=0", True),
    ("handshake=5 header=10", True),
    ("header=abc", False),
    ("header=20-10,MinRate=500", False),
    ("header=20,MinRate=0", False),
    ("bogus=5", False),
])
def test_request_read_timeout_syntax(tmp_path, value, ok):
    r = check(tmp_path, f"RequestReadTimeout {value}\n")
    assert (r.returncode == 0) == ok, r.stderr
    if not ok:
        assert "mpmd.conf:2: RequestReadTimeout" in r.stderr


@pytest.mark.parametrize("value, ok", [
    ("http none", True),
    ("http data", True),
    ("https none", True),  # (read; only http's filter matters to mpmd)
    ("http", False),
    ("http none extra", False),
])
def test_accept_filter_syntax(tmp_path, value, ok):
    r = check(tmp_path, f"AcceptFilter {value}\n")
    assert (r.returncode == 0) == ok, r.stderr
    if not ok:
        assert "mpmd.conf:2: AcceptFilter: expected a protocol and a filter" in r.stderr
