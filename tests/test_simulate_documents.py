"""A static document set as the simulation's workload: each request asks one document by its
share and takes a fixed part plus a part a KiB (the fifth case study, docs/case-studies.md)."""

from __future__ import annotations

import json
import random

import pytest
from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.errors import UsageError
from apachetune.simulate.workload import ServiceTime, read_documents
from apachetune.validate.documents import SurgeParams, document_set, write_documents


def test_a_document_set_draws_each_document_by_its_share():
    base = ServiceTime.parse("100us")
    st = ServiceTime.documents(base, 1e-6, [(1024, 3.0), (10 * 1024, 1.0)], "two")
    assert st.mean == pytest.approx(0.75 * 101e-6 + 0.25 * 110e-6)
    rng = random.Random(3)
    draws = [st.sample(rng) for _ in range(20000)]
    assert sorted(set(draws)) == [pytest.approx(101e-6), pytest.approx(110e-6)]
    big = sum(1 for d in draws if d > 105e-6) / len(draws)
    assert big == pytest.approx(0.25, abs=0.02)
    assert sum(draws) / len(draws) == pytest.approx(st.mean, rel=0.01)


def test_the_surge_set_is_the_one_validate_writes(tmp_path):
    written = write_documents(tmp_path, SurgeParams())
    assert written == document_set()
    assert read_documents("surge") == [(size, share) for _, size, share in written]
    assert all((tmp_path / p[1:]).stat().st_size == size for p, size, _ in written)


def test_a_documents_file_is_read_and_its_errors_say_where(tmp_path):
    good = tmp_path / "docs.txt"
    good.write_text("# size share\n1024 2\n\n4096   # one share\n")
    assert read_documents(str(good)) == [(1024, 2.0), (4096, 1.0)]
    bad = tmp_path / "bad.txt"
    bad.write_text("1024 2\nbig 1\n")
    with pytest.raises(UsageError, match=r"bad.txt:2:1: expected a size in bytes"):
        read_documents(str(bad))
    (tmp_path / "empty.txt").write_text("# none\n")
    with pytest.raises(UsageError, match="no documents"):
        read_documents(str(tmp_path / "empty.txt"))
    with pytest.raises(UsageError, match="--documents .*missing.txt: No such file"):
        read_documents(str(tmp_path / "missing.txt"))
    with pytest.raises(UsageError, match="not a regular file"):
        read_documents("/dev/zero")  # read through inputs.py: regular files only, lines bounded


def test_simulate_serves_a_document_set_bound_by_the_cpus():
    """All on CPU: 64 clients on 2 cores reach 2 / (mean CPU a request), and the documents'
    heavy tail makes the p99 many times the mean (processor sharing)."""
    args = ["simulate", "--mpm", "worker", "--max-request-workers", "64", "--threads-per-child", "32",
            "--clients", "64", "--service", "60us", "--documents", "surge", "--per-kib", "0.5us",
            "--cpu-fraction", "1", "--httpd-cpu", "0", "--cores", "2", "--seconds", "3", "--warmup", "0.5",
            "--format", "json"]  # (--service is the whole CPU a request, httpd's own included)
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    mean_kib = sum(size * w for size, w in read_documents("surge")) / 1024
    mean_s = 60e-6 + 0.5e-6 * mean_kib
    assert doc["throughput_rps"] == pytest.approx(2 / mean_s, rel=0.05)
    assert doc["latency_ms"]["mean"] == pytest.approx(64 / doc["throughput_rps"] * 1000, rel=0.05)  # Little
    assert doc["latency_ms"]["p99"] > 2 * doc["latency_ms"]["mean"]
    assert "SURGE set" in doc["workload"]


@pytest.mark.parametrize("extra, message", [
    (["--per-kib", "1us"], "needs --documents"),
    (["--documents", "surge", "--service", "exp:50us"], "fixed part"),
    (["--documents", "surge", "--access-log", "x.log"], "one source"),
])
def test_document_options_that_do_not_fit_are_refused(extra, message, tmp_path):
    log = tmp_path / "x.log"
    log.write_text("")
    args = ["simulate", "--clients", "4", "--seconds", "1", *[str(log) if a == "x.log" else a for a in extra]]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code != 0 and message in res.output, res.output
    assert "Traceback" not in res.output
