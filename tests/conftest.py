"""Shared test set-up."""

import fcntl
import os
import tempfile

import pytest


@pytest.fixture(autouse=True)
def _backups_in_tmp(tmp_path_factory, monkeypatch):
    """Every write's backups go to a per-test directory, never /var/backups or ~/.local/state."""
    monkeypatch.setenv("APACHETUNE_BACKUP_DIR", str(tmp_path_factory.mktemp("backups")))


@pytest.fixture(autouse=True)
def _no_result_replay(monkeypatch):
    """No test sees another's cached lint result (a test that patches apachetune would be replayed
    the unpatched answer); the cache tests turn it back on."""
    monkeypatch.setenv("APACHETUNE_NO_CACHE", "1")


@pytest.fixture(autouse=True)
def _mpmd_uncalibrated(monkeypatch):
    """mpmd runs with its built-in stand-ins in tests (a calibration measures httpd for half a
    minute per MPM); the calibration tests turn it back on with a cache of their own."""
    monkeypatch.setenv("APACHETUNE_CALIBRATION", "off")


@pytest.fixture(autouse=True)
def _scheduler_pinned(request, monkeypatch):
    """A simulation's local client shares the cores by processor sharing in tests that only
    simulate, whatever this machine's kernel.sched_autogroup_enabled (the run-queue model's tests
    ask for it); tests that measure a real server here (httpd's, or validate's and mpmd's) simulate
    this machine, whose servers run in sessions of their own."""
    measures = request.node.get_closest_marker("httpd") is not None or \
        request.node.module.__name__.startswith(("test_validate", "test_mpmd"))
    if not measures:
        monkeypatch.setattr("apachetune.simulate.run.autogroup_enabled", lambda: False)


# Tests that judge a server under load (validate's verdicts, mpmd's and the simulator's against
# a real run) and tests that take every CPU for tens of seconds (httpd's validate defaults: 8,000
# mod_lua requests a second wanted, 400 threads) must not run side by side: with the suite's
# two workers, one such test beside another made four load verdicts fail (48.7 of 80 req/s). The
# heavy ones take this lock alone, the judging ones share it; a test waits, never fails, for it.
_CPU_LOCK = os.path.join(tempfile.gettempdir(), f"apachetune-tests-{os.getuid()}.cpu.lock")
_JUDGES_LOAD = ("test_validate", "test_mpmd", "test_calibration", "test_simulate", "test_accept_queue")


@pytest.fixture(autouse=True)
def _cpu_heavy_alone(request):
    heavy = request.node.get_closest_marker("cpu_heavy") is not None
    if not heavy and not request.node.module.__name__.startswith(_JUDGES_LOAD):
        yield
        return
    with open(_CPU_LOCK, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX if heavy else fcntl.LOCK_SH)
        yield


# No test may depend on timing it does not control: hypothesis' default 200 ms deadline per
# example fails a correct example on a busy machine. Every property test runs without one.
from hypothesis import settings  # noqa: E402

settings.register_profile("apachetune", deadline=None)
settings.load_profile("apachetune")
