"""validate and compare clean up after themselves whatever stops them, talk only to the server
they started, and refuse a report directory they cannot write before they run."""

from __future__ import annotations

import http.server
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from apachetune.validate.processes import NotOurServer, wait_until_serving

ROOT = Path(__file__).resolve().parents[1]


def ours(tmp: Path) -> list[psutil.Process]:
    """Processes started for this run: their command line names its temporary directory."""
    found = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if any(str(tmp) in part for part in p.info["cmdline"] or []):
                found.append(p)
        except psutil.Error:
            continue
    return found


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_validate_stopped_by_a_signal_leaves_nothing_behind(tmp_path, sig):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.Popen([sys.executable, "-m", "apachetune", "validate", "--mpm", "worker",
                             "--max-request-workers", "8", "--threads-per-child", "4", "--plan", "sweep",
                             "--duration", "20", "--format", "json"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any("mpmd" in " ".join(p.info["cmdline"] or [])
                                                        for p in ours(tmp)):
            assert proc.poll() is None, proc.stderr.read().decode()
            time.sleep(0.2)
        assert ours(tmp), "the server never started"
        time.sleep(2.0)  # under load now (the sweep runs 20 s a step)
        proc.send_signal(sig)
        rc = proc.wait(90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert rc == 128 + sig, (rc, proc.stderr.read().decode()[-500:])
    time.sleep(0.5)
    left = [p for p in ours(tmp) if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert left == [], [p.info["cmdline"] for p in left]
    assert list(tmp.iterdir()) == []  # no temporary directory left


def test_a_server_without_our_token_is_not_taken_for_ours():
    class Plain(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Plain)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sleeper = subprocess.Popen(["sleep", "30"])  # stands for our server, still starting
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        with pytest.raises(NotOurServer, match="another server answered"):
            wait_until_serving(sleeper, url, 5, token="abc123")
        wait_until_serving(sleeper, url, 5)  # without a token, any answer would do
    finally:
        sleeper.kill()
        sleeper.wait()
        server.shutdown()


def test_mpmd_answers_with_its_run_token():
    from apachetune.validate.mpmd_server import MpmdServer

    with MpmdServer("event", {"StartServers": 1}) as srv:
        import urllib.request

        with urllib.request.urlopen(srv.url + "/index.html", timeout=5) as r:
            assert r.headers["X-Apachetune-Run"] == srv.token


def test_an_unwritable_report_directory_is_refused_before_the_run(tmp_path):
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "apachetune", "validate", "--mpm", "event", "--report",
                        "/proc/nope/report"], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 2
    assert "--report /proc/nope/report: cannot write there" in r.stderr
    assert "Traceback" not in r.stderr
    assert time.monotonic() - start < 30  # refused up front, not after minutes of load
