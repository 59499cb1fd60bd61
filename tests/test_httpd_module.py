"""apachetune.httpd: finding httpd and reading what it says."""

from __future__ import annotations

import pytest

from apachetune import httpd
from httpd_oracle import needs_httpd


def test_ah_messages_with_and_without_the_log_prefix():
    stderr = ("[Mon Nov 23 06:07:09.659246 2026] [mpm_event:warn] [pid 1:tid 1] AH00513: WARNING: x\n"
              "AH00558: apache2: Could not reliably determine the server's fully qualified domain name\n"
              "apache2: Syntax error on line 3 of /x.conf: Invalid command 'Foo'\n")
    assert httpd.ah_messages(stderr) == [
        ("AH00513", "WARNING: x"),
        ("AH00558", "apache2: Could not reliably determine the server's fully qualified domain name")]


def test_mpm_codes_cover_the_start_up_checks_only():
    assert {"AH00513", "AH00515", "AH00180", "AH00316"} <= httpd.MPM_CODES
    assert "AH00558" not in httpd.MPM_CODES  # ServerName guess: not the MPM's business


@needs_httpd
def test_modules_dir_holds_the_mpms_and_config_test_reports(tmp_path):
    assert httpd.module_path("mpm_event").exists()
    good = tmp_path / "good.conf"
    good.write_text(f"{httpd.load_module_line('mpm_event')}\nServerName x\nMaxRequestWorkers 30\n"
                    f"ErrorLog {tmp_path}/e.log\n")
    run = httpd.config_test(good, tmp_path)
    assert run.ok and run.mpm_messages == [("AH00513", run.mpm_messages[0][1])]
    bad = tmp_path / "bad.conf"
    bad.write_text(f"{httpd.load_module_line('mpm_event')}\nKeepAliveTimout 5\n")
    run = httpd.config_test(bad, tmp_path)
    assert not run.ok and "Invalid command 'KeepAliveTimout'" in run.output


def test_run_without_httpd_says_so(monkeypatch):
    monkeypatch.setattr(httpd, "binary", lambda: None)
    with pytest.raises(FileNotFoundError, match="not installed"):
        httpd.run("-v")


def test_version_is_read_once_per_binary_and_again_when_it_changes(monkeypatch, tmp_path):
    """`-v` is asked once per binary (kept in the cache directory); an upgraded binary (another
    size or mtime) is asked again, so the default --httpd-version follows the upgrade."""
    fake = tmp_path / "httpd"
    calls = tmp_path / "calls"

    def install(version: str) -> None:
        fake.write_text(f"#!/bin/sh\necho x >> {calls}\necho 'Server version: Apache/{version} (Fake)'\n")
        fake.chmod(0o755)

    monkeypatch.setenv("APACHETUNE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(httpd, "binary", lambda: str(fake))
    install("2.4.6")
    for _ in range(2):
        httpd.version.cache_clear()
        assert httpd.version() == "2.4.6"
    assert calls.read_text().count("x") == 1
    install("2.4.62")  # the package was upgraded
    httpd.version.cache_clear()
    assert httpd.version() == "2.4.62"
    httpd.version.cache_clear()


@needs_httpd
def test_a_runtime_dir_apache2ctl_would_create_does_not_fail_the_check(tmp_path):
    """Debian's envvars names /run/apache2, which apache2ctl creates before starting httpd; on a
    machine where the service never ran it is missing and `apache2 -t` says "DefaultRuntimeDir
    must be a valid directory". That is no fault of the configuration: the check runs with a
    temporary directory in its place, creates nothing, and reports the real path."""
    missing = tmp_path / "run" / "apache2"
    conf = tmp_path / "httpd.conf"
    conf.write_text(f"{httpd.load_module_line('mpm_event')}\nServerName x\nErrorLog {tmp_path}/e.log\n"
                    "DefaultRuntimeDir ${APACHE_RUN_DIR}\n")
    env = {"APACHE_RUN_DIR": str(missing)}
    run = httpd.dump_config(conf, tmp_path, env=env)
    assert run.ok, run.output
    assert not missing.exists() and not missing.parent.exists()
    # what httpd says names the real directory, not the stand-in
    include = conf.read_text() + "Include ${APACHE_RUN_DIR}/extra.conf\n"
    conf.write_text(include)
    bad = httpd.config_test(conf, tmp_path, env=env)
    assert not bad.ok and f"{missing}/extra.conf" in bad.output and "apachetune-run-" not in bad.output
    # a directory that is there is used as it is, and a DefaultRuntimeDir of its own still fails
    conf.write_text(include.replace("Include ${APACHE_RUN_DIR}/extra.conf\n", "DefaultRuntimeDir /nonexistent/x\n"))
    missing.mkdir(parents=True)
    assert not httpd.config_test(conf, tmp_path, env=env).ok
    conf.write_text(include.replace("Include ${APACHE_RUN_DIR}/extra.conf\n", ""))
    assert httpd.config_test(conf, tmp_path, env=env).ok
