"""PHP beside httpd: mod_php's memory_limit bounds a prefork child; php-fpm pools are judged
against the workers httpd hands PHP requests to (fixtures/trees/php-*, fixtures/php/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.sizing.php import php_size_mib, read_ini

ROOT = Path(__file__).resolve().parents[1]
MOD = ROOT / "fixtures" / "trees" / "php-mod" / "apache2.conf"
FPM = ROOT / "fixtures" / "trees" / "php-fpm" / "apache2.conf"
INI = ROOT / "fixtures" / "php" / "mod" / "php.ini"
POOLS = ROOT / "fixtures" / "php" / "fpm" / "pool.d"


def size(*args) -> dict:
    r = CliRunner().invoke(cli, ["size", *map(str, args), "--no-measure", "--format", "json"])
    assert r.exit_code == 0, r.output + r.stderr
    return json.loads(r.output)


@pytest.mark.parametrize("text, mib", [("128M", 128), ("1G", 1024), ("512K", 0.5), ("134217728", 128),
                                       ("-1", None), ("'64M'", 64)])
def test_php_sizes(text, mib):
    assert php_size_mib(text) == mib


def test_ini_sections_comments_and_keys():
    ini = read_ini(str(INI))
    assert ini["PHP"]["memory_limit"] == "256M" and ini["Session"]["session.save_handler"] == "files"
    assert "http" not in " ".join(ini["PHP"])  # ';' comment lines are not keys


def test_mod_php_memory_limit_bounds_the_worst_case():
    data = size(MOD, "--memory", "4096", "--rate", "50", "--service-time-ms", "200", "--php-ini", INI)
    php, rec = data["php"], data["recommendation"]
    assert php["mod_php"] == "php_module" and php["memory_limit_mib"] == 256 and php["php_ini"] == str(INI)
    per_worker = data["inputs"]["per_worker_mib"]["value"]
    mrw = rec["max_request_workers"]
    worst = mrw * (per_worker + 256)
    note = next(n for n in rec["notes"] if n.startswith("mod_php: memory_limit 256 MiB"))
    assert f"{mrw} children would need {worst:.0f} MiB" in note
    assert worst > rec["usable_mib"] and f"MaxRequestWorkers {int(rec['usable_mib'] // (per_worker + 256))}" in note


def test_mod_php_on_a_threaded_mpm_is_called_out():
    data = size(MOD, "--memory", "4096", "--rate", "50", "--target-mpm", "event", "--php-ini", INI)
    assert any("not thread-safe, event would crash it" in n for n in data["recommendation"]["notes"])


def test_memory_limit_unset_is_phps_default_and_minus_one_is_unbounded(tmp_path):
    plain = tmp_path / "php.ini"
    plain.write_text("[PHP]\nengine = On\n")
    assert size(MOD, "--memory", "4096", "--php-ini", plain)["php"]["memory_limit_mib"] == 128
    plain.write_text("[PHP]\nmemory_limit = -1\n")
    data = size(MOD, "--memory", "4096", "--php-ini", plain)
    assert data["php"]["memory_limit_mib"] is None
    assert any("memory_limit = -1" in n for n in data["recommendation"]["notes"])


def test_fpm_pools_reached_by_httpd_are_judged_both_ways():
    data = size(FPM, "--memory", "4096", "--rate", "200", "--service-time-ms", "100", "--php-fpm-conf", POOLS)
    php, rec = data["php"], data["recommendation"]
    assert {p["name"] for p in php["fpm_pools"]} == {"www", "api"}  # [other] listens where httpd never sends
    assert len(php["fcgi_handlers"]) == 2
    need, mrw = rec["load_workers"], rec["max_request_workers"]
    www = next(n for n in rec["notes"] if "pool [www]" in n)
    assert f"pm.max_children 5 < the {need} workers" in www and f"pm.max_children {need} sizes" in www
    api = next(n for n in rec["notes"] if "pool [api]" in n)
    assert f"pm.max_children 400 > MaxRequestWorkers {mrw}" in api and "pm = static" in api


def test_without_a_load_the_pool_is_judged_against_max_request_workers():
    data = size(FPM, "--memory", "4096", "--php-fpm-conf", POOLS / "www.conf")
    rec = data["recommendation"]
    assert rec["load_workers"] is None
    assert any(f"pm.max_children 5 < the {rec['max_request_workers']} workers httpd may hand" in n
               for n in rec["notes"])


def test_no_php_no_section():
    assert size(ROOT / "fixtures" / "sample" / "apache2.conf", "--memory", "2048")["php"] is None


def test_php_files_given_for_a_configuration_without_php_are_said_unread():
    out = size(ROOT / "fixtures" / "sample" / "apache2.conf", "--memory", "2048", "--php-ini", INI,
               "--php-fpm-conf", POOLS)
    assert out["php"] is None
    assert any(n.startswith(f"--php-ini {INI} and --php-fpm-conf not read: the configuration loads no PHP module")
               for n in out["recommendation"]["notes"]), out["recommendation"]["notes"]
    assert not any("not read" in n for n in size(MOD, "--memory", "2048", "--php-ini", INI)["recommendation"]["notes"])


def test_generate_says_it_too(tmp_path):
    r = CliRunner().invoke(cli, ["generate", str(FPM), "--no-measure", "--memory", "4096", "--rate", "200",
                                 "--service-time-ms", "100", "--php-fpm-conf", str(POOLS), "-o", str(tmp_path / "mpm.conf"), "--no-httpd-check"])
    assert "note: php-fpm pool [www]" in r.stderr


def test_a_bad_value_is_an_error_naming_the_file_and_line(tmp_path):
    bad = tmp_path / "php.ini"
    bad.write_text("[PHP]\nengine = On\nmemory_limit = lots\n")
    r = CliRunner().invoke(cli, ["size", str(MOD), "--no-measure", "--php-ini", str(bad)])
    assert r.exit_code == 2 and f"{bad}:3:1: memory_limit = lots: expected a size" in r.stderr
    assert "Traceback" not in r.output + r.stderr
    pool = tmp_path / "www.conf"
    pool.write_text("[www]\nlisten = /run/php/php8.2-fpm.sock\npm.max_children = ${MAX}\n")
    r = CliRunner().invoke(cli, ["size", str(FPM), "--no-measure", "--php-fpm-conf", str(pool)])
    assert r.exit_code == 2 and f"{pool}:3:1: [www] pm.max_children = ${{MAX}}: expected a whole number" in r.stderr
