"""The layouts users run, as the distributions install them: Alpine, SUSE, the official image and
a source build (Debian and RHEL are in test_dump_config_oracle.py too). Each tree is read as its
own httpd reads it: SUSE's MPM compiled into its binary, absolute paths under a copy of the
machine's / (--root), a static MPM named with --mpm."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.config import builtin_mpm
from apachetune.config.dump import read_dump
from apachetune.config.resolver import ResolveOptions, resolve
from apachetune.lint.dump import main_file_of
from httpd_oracle import ROOT, dump_config, needs_httpd
from test_dump_config_oracle import INSTALLED_AT, TREES, adapt, copy_tree, env_for

TREES_DIR = ROOT / "fixtures" / "trees"


def lint_json(*args: str) -> tuple[int, dict, str]:
    r = CliRunner().invoke(cli, ["lint", "--format", "json", *args])
    return r.exit_code, json.loads(r.stdout), r.stderr


def under_root(tmp_path: Path, name: str) -> Path:
    """The tree copied where its distribution installs it, below a stand-in for the machine's /."""
    sysroot = tmp_path / "rootfs"
    dest = sysroot / INSTALLED_AT[name].lstrip("/")
    dest.parent.mkdir(parents=True)
    shutil.copytree(TREES_DIR / name, dest, symlinks=True)
    return sysroot


def rules_at(report: dict) -> list[tuple[str, str, int]]:
    return sorted((f["rule"], Path(f["file"]).name, f["line"]) for f in report["findings"])


def test_suse_runs_the_mpm_its_module_directory_names(tmp_path):
    sysroot = under_root(tmp_path, "suse")
    code, report, stderr = lint_json("--root", str(sysroot))
    assert f"using {sysroot}/etc/apache2/httpd.conf" in stderr
    assert report["mpm"]["name"] == "prefork"
    assert "httpd-prefork" in report["mpm"]["compiled_in"]
    # <IfModule prefork.c> comes before loadmodule.conf and is read; the other MPMs' blocks are not.
    assert report["mpm"]["configured"]["MaxRequestWorkers"] == "150"
    unread = {f["line"] for f in report["findings"] if f["rule"] == "AT401"}
    assert unread == {33, 58}  # <IfModule worker.c>, <IfModule event.c> in server-tuning.conf
    assert not [f for f in report["findings"] if f["severity"] == "error"], report["findings"]
    assert code == 0


def test_suse_with_the_worker_binary(tmp_path):
    sysroot = under_root(tmp_path, "suse")
    loads = sysroot / "etc/apache2/sysconfig.d/loadmodule.conf"
    loads.write_text(loads.read_text().replace("apache2-prefork", "apache2-worker"))
    _, report, _ = lint_json("--root", str(sysroot))
    assert report["mpm"]["name"] == "worker"
    assert report["mpm"]["configured"]["ThreadLimit"] == "64"


def test_without_root_a_copied_suse_tree_reads_the_machines_own_files(tmp_path):
    # /etc/apache2/uid.conf is not on this machine: httpd -f on the copy would fail the same way.
    root = copy_tree(TREES_DIR / "suse", tmp_path / "suse")
    code, report, _ = lint_json(str(root / "httpd.conf"))
    assert code == 2 and report["findings"][0]["rule"] == "AT509"


def test_root_and_rewritten_paths_give_the_same_findings(tmp_path):
    sysroot = under_root(tmp_path, "suse")
    _, by_root, _ = lint_json("--root", str(sysroot))
    copy = copy_tree(TREES_DIR / "suse", tmp_path / "copy")
    for conf in copy.rglob("*.conf"):
        conf.write_text(conf.read_text().replace("/etc/apache2/", f"{copy}/"))
    _, rewritten, _ = lint_json(str(copy / "httpd.conf"))
    assert rules_at(by_root) == rules_at(rewritten)
    assert len(by_root["findings"]) >= 5


GENTOO_CONF_D = """# Options given to apache2 at start-up (Gentoo's /etc/conf.d/apache2)
APACHE2_OPTS="-D DEFAULT_VHOST -D INFO -D LANGUAGE"
#SERVERROOT="/usr/lib64/apache2"
"""


def gentoo_root(tmp_path: Path, conf_d: str | None = GENTOO_CONF_D) -> Path:
    sysroot = under_root(tmp_path, "gentoo")
    (sysroot / "usr/lib64/apache2").mkdir(parents=True)  # its ServerRoot
    if conf_d is not None:
        (sysroot / "etc/conf.d").mkdir()
        (sysroot / "etc/conf.d/apache2").write_text(conf_d)
    return sysroot


def test_gentoo_is_read_with_the_defines_its_init_script_gives(tmp_path):
    """Gentoo's OpenRC script starts apache2 with APACHE2_OPTS from /etc/conf.d/apache2: its
    -D names load mod_info, turn on the default vhost (and its Listen) and the languages."""
    sysroot = gentoo_root(tmp_path)
    code, report, _ = lint_json("--root", str(sysroot), "--mpm", "event")  # its MPM is linked in
    assert report["init_defines"] == {"names": ["DEFAULT_VHOST", "INFO", "LANGUAGE"],
                                      "file": f"{sysroot}/etc/conf.d/apache2", "variable": "APACHE2_OPTS"}
    assert not [f for f in report["findings"] if f["severity"] == "error"], report["findings"]
    assert ("AT705", "default_vhost.include", 5) in rules_at(report)  # the default vhost's files were read
    assert code == 0
    eff = resolve(sysroot / "etc/apache2/httpd.conf", ResolveOptions(sysroot=str(sysroot), mpm="event"))
    assert "info_module" in eff.modules and eff.get("Listen").args == ["80"]
    assert eff.get("LanguagePriority") is not None and "status_module" not in eff.modules
    text = CliRunner().invoke(cli, ["lint", "--root", str(sysroot), "--mpm", "event"]).stdout
    assert (f"Read with -D DEFAULT_VHOST -D INFO -D LANGUAGE, as APACHE2_OPTS in {sysroot}/etc/conf.d/apache2 "
            "gives them.") in text


def test_gentoo_without_its_settings_or_read_elsewhere_gets_no_defines(tmp_path):
    sysroot = gentoo_root(tmp_path / "none", conf_d=None)
    _, report, _ = lint_json("--root", str(sysroot), "--mpm", "event")
    assert "init_defines" not in report
    # Without DEFAULT_VHOST nothing says Listen: as httpd would, with no -D given.
    assert ("AT705", "default_vhost.include", 5) not in rules_at(report)
    eff = resolve(sysroot / "etc/apache2/httpd.conf", ResolveOptions(sysroot=str(sysroot), mpm="event"))
    assert "info_module" not in eff.modules and eff.get("Listen") is None
    # A copy of the tree beside a settings file is not the file the script starts: not read.
    sysroot = gentoo_root(tmp_path / "copy")
    copy = copy_tree(sysroot / "etc/apache2", sysroot / "etc/apache2-copy")
    eff = resolve(copy / "httpd.conf", ResolveOptions(sysroot=str(sysroot), mpm="event"))
    assert eff.init_defines is None and "info_module" not in eff.modules
    # A settings file that gives none: nothing to say.
    (sysroot / "etc/conf.d/apache2").write_text('APACHE2_OPTS=""\n')
    _, report, _ = lint_json("--root", str(sysroot), "--mpm", "event")
    assert "init_defines" not in report
    # Nor with the command's own reading of environment files turned off (simulate, validate).
    eff = resolve(sysroot / "etc/apache2/httpd.conf", ResolveOptions(sysroot=str(sysroot), mpm="event",
                                                                     use_env_file=False))
    assert eff.init_defines is None


def test_suse_server_flags_are_defines(tmp_path):
    """SUSE's start_apache2 gives -D for each word of APACHE_SERVER_FLAGS (a leading -D allowed)."""
    sysroot = under_root(tmp_path, "suse")
    (sysroot / "etc/sysconfig").mkdir()
    (sysroot / "etc/sysconfig/apache2").write_text('APACHE_MPM=""\nAPACHE_SERVER_FLAGS="SSL -DSTATUS -D"\n')
    _, report, _ = lint_json("--root", str(sysroot))
    assert report["init_defines"]["names"] == ["SSL", "STATUS"]
    assert report["init_defines"]["variable"] == "APACHE_SERVER_FLAGS"


def test_init_defines_parse_httpd_options():
    from apachetune.config.init_defines import _names

    assert _names("-D A -DB -e debug -E /tmp/x -D A", options=True) == ["A", "B"]
    assert _names('-D "C" -D', options=True) == ["C"]
    assert _names("-D 'unbalanced", options=True) == ["'unbalanced"]
    assert _names("SSL -DSTATUS -D", options=False) == ["SSL", "STATUS"]


def test_alpine_tree(tmp_path):
    sysroot = under_root(tmp_path, "alpine")
    (sysroot / "var/www").mkdir(parents=True)  # Alpine's ServerRoot
    code, report, stderr = lint_json("--root", str(sysroot))
    assert "the usual place on Alpine, SUSE and Gentoo" in stderr
    assert report["mpm"]["name"] == "prefork" and "compiled_in" not in report["mpm"]
    assert report["mpm"]["configured"]["MaxRequestWorkers"] == "250"  # conf.d/mpm.conf, read
    rules = {f["rule"] for f in report["findings"]}
    assert "AT402" not in rules  # Alpine moved ServerTokens out of default.conf: nothing overridden
    assert code == 0


def test_official_image_with_its_server_root_given(tmp_path):
    tree = TREES_DIR / "official-image"
    code, report, _ = lint_json("-d", str(tree), str(tree / "conf/httpd.conf"))
    assert report["mpm"]["name"] == "event" and "compiled_in" not in report["mpm"]
    assert code == 0
    sysroot = under_root(tmp_path, "official-image")
    code, by_root, _ = lint_json("--root", str(sysroot))
    assert rules_at(by_root) == rules_at(report) and code == 0


def test_source_build_with_its_mpm_compiled_in(tmp_path):
    tree = TREES_DIR / "source-build"
    main = str(tree / "conf/httpd.conf")
    code, report, _ = lint_json("-d", str(tree), main)
    ids = [f["rule"] for f in report["findings"]]
    assert code == 1 and "AT505" in ids and "--mpm" in next(f["message"] for f in report["findings"]
                                                             if f["rule"] == "AT505")
    code, report, _ = lint_json("-d", str(tree), "--mpm", "event", main)
    ids = [f["rule"] for f in report["findings"]]
    assert code == 0 and "AT505" not in ids and "AT502" not in ids
    assert "AT704" in ids  # a whole configuration: every check ran (not a lone snippet)
    assert report["mpm"]["configured"]["MaxRequestWorkers"] == "400"  # extra/httpd-mpm.conf's event block


def test_a_static_mpm_of_the_installed_httpd(monkeypatch, tmp_path):
    tree = TREES_DIR / "source-build"
    monkeypatch.setattr(builtin_mpm, "installed_static_mpm", lambda: "worker")
    eff = resolve(tree / "conf/httpd.conf", ResolveOptions(server_root=str(tree)))
    assert eff.mpm == "worker" and eff.mpms_loaded == ["worker"]
    assert "compiled into the installed" in eff.mpm_source
    monkeypatch.setattr(builtin_mpm, "installed_static_mpm", lambda: None)
    eff = resolve(tree / "conf/httpd.conf", ResolveOptions(server_root=str(tree)))
    assert eff.mpm is None and eff.mpm_source == ""


@needs_httpd
def test_debians_apache2_has_no_mpm_compiled_in():
    # Debian builds every MPM as a module: -l lists none, so nothing is assumed on this machine.
    assert builtin_mpm.installed_static_mpm() is None


@needs_httpd
@pytest.mark.httpd
@pytest.mark.parametrize("name", ["alpine", "suse", "gentoo", "official-image", "source-build"])
def test_httpd_accepts_what_lint_passes(tmp_path, name):
    """On this machine's apache2, each tree (adapted only to run here) passes `-t`, and lint of
    the same files finds no error."""
    root = copy_tree(TREES_DIR / name, tmp_path / name)
    main = root / TREES[name]
    adapt(main, root)
    env = env_for(root)
    assert dump_config(main, root, env)  # asserts apache2 -t passed
    envfile = tmp_path / "env.sh"
    envfile.write_text("".join(f"export {k}='{v}'\n" for k, v in env.items()))
    r = subprocess.run([sys.executable, "-m", "apachetune", "lint", "--format", "json", "-d", str(root),
                        "--env-file", str(envfile), str(main)], capture_output=True, text=True, timeout=120)
    errors = [f for f in json.loads(r.stdout)["findings"] if f["severity"] == "error"]
    assert not errors and r.returncode == 0, errors


def test_a_dump_is_placed_in_the_main_file_even_when_it_begins_with_an_include():
    # SUSE's httpd.conf begins with `Include uid.conf`: the dump shows uid.conf's lines first.
    dump = read_dump("# In file: /etc/apache2/uid.conf\n#   1:\nUser wwwrun\n"
                     "# In file: /etc/apache2/server-tuning.conf\n#  90:\nKeepAlive On\n"
                     "# In file: /etc/apache2/httpd.conf\n#  52:\nErrorLog /var/log/apache2/error_log\n")
    assert main_file_of(dump) == "/etc/apache2/httpd.conf"
    assert dump.mpm == "event" and "assumed" in dump.mpm_reason  # no MPM directive shown
    other = read_dump("# In file: /srv/site.conf\n#   1:\nServerName x\n")
    assert main_file_of(other) == "/srv/site.conf"
