"""Shared test set-up."""

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


# No test may depend on timing it does not control: hypothesis' default 200 ms deadline per
# example fails a correct example on a busy machine. Every property test runs without one.
from hypothesis import settings  # noqa: E402

settings.register_profile("apachetune", deadline=None)
settings.load_profile("apachetune")
