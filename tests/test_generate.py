"""`apachetune generate`: new files and in-place edits, validated before anything is written."""

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from apachetune import httpd
from apachetune.cli import cli
from apachetune.config.resolver import ResolveOptions, resolve
from apachetune.lint.engine import LintOptions, lint
from apachetune.lint.metadata import all_rules
from apachetune.lint.settings import Settings
from apachetune.mpm import simulate_startup
from httpd_oracle import APACHE2, run_httpd

ROOT = Path(__file__).resolve().parents[1]
SIZING = ["--no-measure", "--memory", "2048", "--rate", "300", "--service-time-ms", "50"]


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_new_file_is_valid_and_never_overwritten(tmp_path):
    out = tmp_path / "mpm.conf"
    r = invoke("generate", "-o", out, *SIZING, "--target-mpm", "worker")
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "<IfModule mpm_worker_module>" in text and "# set by the " in text
    # What httpd would run is exactly what was written: no start-up message, no silent change.
    from apachetune.config.parser import parse_file

    values = [(d.name, d.args) for d in parse_file(out).directives()]
    start = simulate_startup("worker", values)
    assert start.messages == [] and all(a.directive not in dict(values) for a in start.adjustments)
    before = out.read_bytes()
    r = invoke("generate", "-o", out, *SIZING, "--target-mpm", "event")
    assert r.exit_code == 2 and "--force" in r.output and out.read_bytes() == before
    r = invoke("generate", "-o", out, *SIZING, "--target-mpm", "event", "--force")
    assert r.exit_code == 0, r.output
    (backup,) = Path(os.environ["APACHETUNE_BACKUP_DIR"]).glob(f"*/files{out}")
    assert backup.read_bytes() == before and not list(tmp_path.glob("*.bak*"))
    assert "mpm_event_module" in out.read_text()


def test_check_and_diff_write_nothing(tmp_path):
    out = tmp_path / "mpm.conf"
    assert invoke("generate", "-o", out, *SIZING, "--check").exit_code == 1
    assert not out.exists()
    r = invoke("generate", "-o", out, *SIZING, "--diff")
    assert r.exit_code == 0 and "+MaxRequestWorkers" in r.output.replace(" ", "") and not out.exists()
    invoke("generate", "-o", out, *SIZING)
    assert invoke("generate", "-o", out, *SIZING, "--check").exit_code == 0


def copy_sample(tmp_path) -> Path:
    dest = tmp_path / "sample"
    shutil.copytree(ROOT / "fixtures" / "sample", dest, symlinks=True)
    return dest


def test_in_place_edits_only_those_lines(tmp_path):
    root = copy_sample(tmp_path)
    main = root / "apache2.conf"
    mpm_conf = root / "mods-enabled" / "mpm_event.conf"
    before = mpm_conf.read_text()
    r = invoke("generate", main, "--in-place", *SIZING, *(["--no-httpd-check"] if APACHE2 is None else []))
    assert r.exit_code == 0, r.output
    after = mpm_conf.read_text()
    # The backup is outside the tree (httpd reads every file of an included directory).
    (backup,) = Path(os.environ["APACHETUNE_BACKUP_DIR"]).glob(f"*/files{mpm_conf.resolve()}")
    assert backup.read_text() == before and not [p for p in root.rglob("*") if ".bak" in p.name]
    # Comments and untouched lines are kept byte for byte.
    assert [ln for ln in before.splitlines() if ln.startswith("#")] == \
        [ln for ln in after.splitlines() if ln.startswith("#")]
    assert "ThreadsPerChild         30" in after
    # The result is what httpd runs without any start-up change, and our lint is happy.
    eff = resolve(main, ResolveOptions(env={}))
    start = simulate_startup("event", [(d.name, d.args) for d in eff.directives])
    assert start.messages == []
    findings = lint(str(main), LintOptions(ResolveOptions(env={}), Settings())).findings
    # The sample's own exposure findings (security group: Options Indexes) are not generate's business.
    findings = [f for f in findings if "security" not in all_rules()[f.rule].groups]
    assert not [f for f in findings if f.severity != "info" or f.rule.startswith("AT1")], findings
    # Running it again changes nothing.
    r = invoke("generate", main, "--in-place", *SIZING, "--check")
    assert r.exit_code == 0 and "nothing to change" in r.output


@pytest.mark.skipif(APACHE2 is None, reason="apache2 not installed")
@pytest.mark.httpd
def test_in_place_result_passes_httpd(tmp_path):
    root = copy_sample(tmp_path)
    r = invoke("generate", root / "apache2.conf", "--in-place", *SIZING)
    assert r.exit_code == 0 and "apache2 -t: passed" in r.output, r.output
    from apachetune.config.envvars import read_envvars

    proc = run_httpd("-t", "-d", str(root), "-f", str(root / "apache2.conf"), env=read_envvars(root / "envvars"))
    from httpd_oracle import startup_messages

    mpm_codes = [c for c, _ in startup_messages(proc.stderr) if c[2:5] in ("001", "003", "004", "005")]
    assert proc.returncode == 0 and mpm_codes == [], proc.stderr


@pytest.mark.skipif(APACHE2 is None, reason="apache2 not installed")
@pytest.mark.httpd
def test_httpd_checks_the_tree_with_the_defines_it_was_read_with(tmp_path):
    """`generate -D NAME` reads the tree with NAME defined, and apache2 -t checks it so too: a
    block only read without the define (httpd would refuse its line) is not in the way."""
    main = tmp_path / "httpd.conf"
    main.write_text(f"{httpd.load_module_line('mpm_event')}\nServerName localhost\nListen 127.0.0.1:1\n"
                    f"ErrorLog {tmp_path}/error.log\nPidFile {tmp_path}/httpd.pid\n"
                    "<IfDefine !PRODUCTION>\nNoSuchDirective on\n</IfDefine>\n"
                    "<IfModule mpm_event_module>\nStartServers 2\n</IfModule>\n")
    r = invoke("generate", main, "--in-place", "-D", "PRODUCTION", *SIZING)
    assert r.exit_code == 0 and "apache2 -t: passed" in r.output, r.output
    assert "MaxRequestWorkers" in main.read_text()
    run = httpd.config_test(main, tmp_path, defines=["PRODUCTION"])
    assert run.ok, run.stderr


def config_beside_server_root(tmp_path: Path) -> tuple[Path, Path]:
    """Alpine's and Gentoo's shape: the configuration in etc/apache2, naming its files by absolute
    path, ServerRoot elsewhere (its modules)."""
    from httpd_oracle import MODULES_DIR

    server_root, conf = tmp_path / "usr/lib/apache2", tmp_path / "etc/apache2"
    server_root.mkdir(parents=True)
    (server_root / "modules").symlink_to(MODULES_DIR)
    (conf / "conf.d").mkdir(parents=True)
    main = conf / "httpd.conf"
    main.write_text(f'ServerRoot "{server_root}"\nLoadModule mpm_event_module modules/mod_mpm_event.so\n'
                    f"ServerName localhost\nListen 127.0.0.1:1\nErrorLog {tmp_path}/error.log\n"
                    f"PidFile {tmp_path}/httpd.pid\nIncludeOptional {conf}/conf.d/*.conf\n")
    (conf / "conf.d" / "mpm.conf").write_text("<IfModule mpm_event_module>\nStartServers 2\n</IfModule>\n")
    return main, conf / "conf.d" / "mpm.conf"


@pytest.mark.skipif(APACHE2 is None, reason="apache2 not installed")
@pytest.mark.httpd
def test_httpd_checks_a_tree_whose_configuration_lies_beside_server_root(tmp_path):
    """The copy apache2 -t reads is of the configuration's directory, its absolute paths pointing
    into the copy: the new file is what httpd checks, and the originals are untouched until then."""
    from apachetune.generate.check import httpd_check

    main, mpm = config_beside_server_root(tmp_path)
    before = {p: p.read_bytes() for p in (main, mpm)}
    opts = ResolveOptions(use_env_file=False)
    bad = httpd_check(str(main), opts, {str(mpm): b"<IfModule mpm_event_module>\nNoSuchDirective 1\n</IfModule>\n"})
    assert bad.httpd == "failed" and "NoSuchDirective" in bad.problems[0], bad.problems
    good = httpd_check(str(main), opts, {str(mpm): b"<IfModule mpm_event_module>\nStartServers 3\n</IfModule>\n"})
    assert good.ok and good.httpd == "passed", good.problems
    assert {p: p.read_bytes() for p in before} == before
    r = invoke("generate", main, "--in-place", *SIZING)
    assert r.exit_code == 0 and "apache2 -t: passed" in r.output, r.output
    assert "MaxRequestWorkers" in mpm.read_text() and main.read_bytes() == before[main]


def test_in_place_refuses_a_tree_it_cannot_parse(tmp_path):
    root = copy_sample(tmp_path)
    site = root / "sites-enabled" / "000-default.conf"
    site.write_text(site.read_text().replace("</VirtualHost>", ""))
    before = (root / "mods-enabled" / "mpm_event.conf").read_bytes()
    r = invoke("generate", root / "apache2.conf", "--in-place", *SIZING)
    assert r.exit_code == 2 and "was not closed" in r.output and "Traceback" not in r.output
    assert (root / "mods-enabled" / "mpm_event.conf").read_bytes() == before


def test_in_place_adds_a_block_when_no_mpm_settings_exist(tmp_path):
    main = tmp_path / "httpd.conf"
    main.write_text(f"{httpd.load_module_line('mpm_prefork')}\n"
                    "ServerName localhost\n")
    r = invoke("generate", main, "--in-place", *SIZING, "--requests-per-connection", "1", "--no-httpd-check")
    assert r.exit_code == 0, r.output
    text = main.read_text()
    assert text.startswith("LoadModule mpm_prefork_module") and "<IfModule mpm_prefork_module>" in text
    eff = resolve(main, ResolveOptions(env={}))
    assert eff.get("MaxRequestWorkers") is not None


def test_usage_errors():
    assert invoke("generate", *SIZING).exit_code == 2
    assert invoke("generate", "--in-place", *SIZING).exit_code == 2
