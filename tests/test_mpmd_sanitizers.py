"""mpmd under AddressSanitizer + UBSan (with a bounded fuzzer for the request parser) and valgrind."""

import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apachetune.paths import mpmd_src_dir
from apachetune.validate.mpmd_server import MpmdServer
from raw_http import exchange

SRC = mpmd_src_dir()


@pytest.fixture(scope="module")
def asan_binary():
    if shutil.which("make") is None or shutil.which("cc") is None:
        pytest.skip("needs make and cc")
    proc = subprocess.run(["make", "-C", str(SRC), "asan"], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"this compiler cannot build with sanitizers: {proc.stderr[-300:]}")
    return SRC / "mpmd-asan"


REQUEST_PARTS = st.sampled_from([
    b"GET ", b"HEAD ", b"POST ", b"/", b"/index.html", b"/%2e%2e/", b"%", b"%0", b"%00", b"?ms=5", b"/app/sleep",
    b"/app/alloc?kb=", b"/server-status", b" HTTP/1.1", b" HTTP/1.0", b" HTTP/9.9", b"\r\n", b"\n", b"\r\n\r\n",
    b"Host: x", b"Connection: keep-alive", b"Connection: close", b"Content-Length: ", b"Content-Length: -1",
    b"Transfer-Encoding: chunked", b":", b" ", b"\x00", b"\xff", b"a" * 9000, b"9" * 30,
    b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n", b"http://h", b" HTTP/2.0", b"\r\n ", b"\t",
])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(st.lists(st.one_of(REQUEST_PARTS, st.binary(max_size=64)), max_size=12))
def fuzz_one(server, data):
    reply = exchange(server.port, b"".join(data))
    assert reply == b"" or reply.startswith(b"HTTP/1.1 ")


@pytest.mark.parametrize("mpm", ["prefork", "event"])
def test_fuzzed_requests_under_asan(asan_binary, mpm, tmp_path):
    log = tmp_path / "asan.log"
    srv = MpmdServer(mpm, {"StartServers": 2, "MaxRequestWorkers": 4, "ThreadsPerChild": 2, "Timeout": 1,
                           "KeepAliveTimeout": 1}, command=[str(asan_binary)])
    import os

    os.environ["ASAN_OPTIONS"] = f"log_path={log}:detect_leaks=0:abort_on_error=0"
    os.environ["UBSAN_OPTIONS"] = f"log_path={log}:print_stacktrace=1"
    try:
        with srv:
            fuzz_one(srv)
            assert urllib.request.urlopen(srv.url + "/index.html", timeout=5).read() == b"hello from mpmd\n"
    finally:
        os.environ.pop("ASAN_OPTIONS", None)
        os.environ.pop("UBSAN_OPTIONS", None)
    reports = [p.read_text() for p in tmp_path.glob("asan.log*")]
    assert not any("ERROR: AddressSanitizer" in r or "runtime error" in r for r in reports), reports


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind not installed")
def test_valgrind_clean(tmp_path):
    binary = SRC / "mpmd"
    if not binary.exists():
        pytest.skip("mpmd not built (make -C src/mpmd)")
    log = tmp_path / "vg.%p.log"
    cmd = ["valgrind", "--trace-children=yes", "--error-exitcode=99", "--leak-check=full",
           "--errors-for-leak-kinds=definite", f"--log-file={log}", str(binary)]
    srv = MpmdServer("prefork", {"StartServers": 1, "MaxRequestWorkers": 2, "MinSpareServers": 1,
                                 "MaxSpareServers": 2, "KeepAlive": "Off"}, command=cmd)
    with srv:
        for path in ("/index.html", "/nope", "/app/alloc?kb=64", "/server-status?auto"):
            try:
                urllib.request.urlopen(srv.url + path, timeout=10).read()
            except OSError:
                pass
        time.sleep(0.5)
    logs = "\n".join(p.read_text() for p in Path(tmp_path).glob("vg.*.log"))
    assert "ERROR SUMMARY: 0 errors" in logs
    assert "definitely lost: 0" in logs or "definitely lost" not in logs
    summaries = [ln for ln in logs.splitlines() if "ERROR SUMMARY" in ln]
    assert summaries and all("ERROR SUMMARY: 0 errors" in ln for ln in summaries), summaries


SEEDS = [
    b"GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET http://h/a/%2e%2e/b?x=1 HTTP/1.0\nContent-Length: 5\nTransfer-Encoding: chunked\n\n",
    b"\r\nHEAD / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, close\r\nX:\t y \r\n\r\n",
]


def test_libfuzzer_request_parser(tmp_path):
    """The request parser under libFuzzer (ASan + UBSan, and the target's own checks), bounded."""
    if shutil.which("clang") is None:
        pytest.skip("needs clang for libFuzzer")
    build = subprocess.run(["make", "-C", str(SRC), "fuzz"], capture_output=True, text=True)
    if build.returncode != 0:
        pytest.skip(f"clang cannot link libFuzzer here: {build.stderr[-300:]}")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i, seed in enumerate(SEEDS):
        (corpus / f"seed{i}").write_bytes(seed)
    run = subprocess.run([str(SRC / "fuzz-request"), str(corpus), "-max_total_time=15", "-timeout=5",
                          f"-artifact_prefix={tmp_path}/"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    done = [ln for ln in run.stderr.splitlines() if ln.startswith("Done ")]
    assert done and int(done[0].split()[1]) > 1000, run.stderr[-500:]
