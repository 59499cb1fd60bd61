"""generate's workflow: --diff/--check on FILE alone, --check says what it would change, and a
section memory cannot carry is refused unless --allow-short."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from apachetune.cli import cli

ROOT = Path(__file__).resolve().parents[1]


def run(*args):
    return CliRunner().invoke(cli, [*args])


def debian(tmp_path: Path) -> Path:
    root = tmp_path / "debian"
    shutil.copytree(ROOT / "fixtures" / "trees" / "debian", root, symlinks=True)
    return root


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_diff_and_check_on_file_alone_show_the_in_place_edit_and_write_nothing(tmp_path):
    root = debian(tmp_path)
    before = snapshot(root)
    common = [str(root / "apache2.conf"), "--server-root", str(root), "--no-measure", "--rate", "100"]
    diff = run("generate", *common, "--diff")
    assert diff.exit_code == 0, diff.output + diff.stderr
    assert "+MaxRequestWorkers" in diff.output and "mpm_event.conf" in diff.output
    check = run("generate", *common, "--check")
    assert check.exit_code == 1
    assert "change(s) needed" in check.stderr and "MaxRequestWorkers 150 ->" in check.stderr
    assert snapshot(root) == before


def test_neither_output_nor_in_place_nor_diff_is_a_usage_error(tmp_path):
    root = debian(tmp_path)
    r = run("generate", str(root / "apache2.conf"), "--server-root", str(root), "--no-measure")
    assert r.exit_code == 2 and "-o FILE" in r.stderr


def test_memory_short_is_refused_unless_allow_short(tmp_path):
    out = tmp_path / "mpm.conf"
    args = ["generate", "-o", str(out), "--no-measure", "--rate", "3000", "--service-time-ms", "100",
            "--memory", "600", "--per-worker-mb", "40", "--target-mpm", "prefork", "--no-httpd-check"]
    r = run(*args)
    assert r.exit_code == 1 and "refused: memory cannot carry the load" in r.stderr
    assert not out.exists()
    r = run(*args, "--allow-short")
    assert r.exit_code == 0, r.stderr
    assert "warning: memory cannot carry the load" in r.stderr and out.exists()


@pytest.mark.parametrize("command", ["size", "generate"])
@pytest.mark.parametrize("mpm", ["prefork", "worker", "event"])
def test_mpm_names_the_servers_mpm_without_a_file_too(command, mpm, tmp_path):
    """--mpm means the server's MPM in every command: with no configuration to read it from,
    the section is for that MPM (it was an event section whatever --mpm said)."""
    out = tmp_path / "mpm.conf"
    args = [command, "--mpm", mpm, "--no-measure", "--memory", "4096", "--rate", "50", "--per-worker-mb", "8"]
    args += ["-o", str(out), "--no-httpd-check"] if command == "generate" else ["--format", "json"]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    if command == "generate":
        assert f"<IfModule mpm_{mpm}_module>" in out.read_text()
        assert out.read_text().count("<IfModule mpm_") == 1
    else:
        rec = json.loads(r.output)["recommendation"]
        assert rec["mpm"] == mpm and f"given with --mpm ({mpm})" in rec["mpm_reasons"][0]
        assert (len(rec["mpm_reasons"]) > 1) == (mpm != "event")  # the alternative is named


MPM_LINES = ("StartServers", "MinSpareThreads", "MaxSpareThreads", "ThreadLimit", "ThreadsPerChild",
             "MaxRequestWorkers", "MaxConnectionsPerChild")


def _httpd_check_args():
    from apachetune import httpd

    return [] if httpd.binary() is not None and httpd.module_path("mpm_event").exists() else ["--no-httpd-check"]


def _findings(root: Path) -> set[tuple[str, str, int]]:
    r = run("lint", str(root / "apache2.conf"), "-d", str(root), "--format", "json")
    return {(f["rule"], f["file"], f["line"]) for f in json.loads(r.output)["findings"]}


def test_output_into_the_tree_that_already_sets_the_mpm_is_refused_naming_each_line(tmp_path):
    root = debian(tmp_path)
    before = snapshot(root)
    target = root / "conf-enabled" / "mpm-tuned.conf"
    r = run("generate", str(root / "apache2.conf"), "-d", str(root), "--no-measure", "--rate", "100",
            "-o", str(target), *_httpd_check_args())
    assert r.exit_code == 1 and not target.exists() and snapshot(root) == before
    mpm_conf = root / "mods-enabled" / "mpm_event.conf"
    lines = mpm_conf.read_text().splitlines()
    for name in MPM_LINES:
        number = next(i for i, line in enumerate(lines, 1) if line.strip().startswith(name))
        assert f"{mpm_conf}:{number}: {name}" in r.stderr
    assert "--in-place" in r.stderr and "nothing was written" in r.stderr


def test_output_into_the_tree_once_the_old_lines_are_gone_adds_no_finding(tmp_path):
    root = debian(tmp_path)
    mpm_conf = (root / "mods-enabled" / "mpm_event.conf").resolve()
    mpm_conf.write_text("".join(line for line in mpm_conf.read_text().splitlines(keepends=True)
                                if not line.strip().startswith(MPM_LINES)))
    before = _findings(root)
    target = root / "conf-enabled" / "mpm-tuned.conf"
    r = run("generate", str(root / "apache2.conf"), "-d", str(root), "--no-measure", "--rate", "100",
            "-o", str(target), *_httpd_check_args())
    assert r.exit_code == 0, r.output + r.stderr
    assert target.exists() and "does not include" not in r.stderr
    assert _findings(root) == before  # nothing overridden (AT402), nothing new
    parsed = run("parse", str(root / "apache2.conf"), "-d", str(root), "--json")
    found = [d for d in json.loads(parsed.output)["effective"] if d.get("directive") == "MaxRequestWorkers"]
    assert len(found) == 1  # read once, from the new file
    assert json.loads(parsed.output)["files"][found[0]["file"]]["file"] == str(target)


def test_output_outside_the_tree_says_how_to_include_it(tmp_path):
    root = debian(tmp_path)
    target = tmp_path / "mpm.conf"
    r = run("generate", str(root / "apache2.conf"), "-d", str(root), "--no-measure", "--rate", "100",
            "-o", str(target), "--no-httpd-check")
    assert r.exit_code == 0 and target.exists()
    assert f"Include {target}" in r.stderr and "remove the lines above" in r.stderr
    assert f"{(root / 'mods-enabled' / 'mpm_event.conf')}:" in r.stderr


def test_mpm_option_reads_the_same_block_in_parse_lint_and_size(tmp_path):
    """--mpm names the server's MPM in every command: a lone httpd-mpm.conf-style file's
    <IfModule mpm_event_module> block is read by parse, lint and size alike."""
    conf = tmp_path / "httpd-mpm.conf"
    conf.write_text("<IfModule mpm_prefork_module>\n    MaxRequestWorkers 250\n</IfModule>\n"
                    "<IfModule mpm_event_module>\n    ThreadsPerChild 30\n    MaxRequestWorkers 400\n</IfModule>\n")
    parsed = json.loads(run("parse", str(conf), "--mpm", "event", "--json").output)
    assert [(d["directive"], d["args"]) for d in parsed["effective"]] == [
        ("ThreadsPerChild", ["30"]), ("MaxRequestWorkers", ["400"])]
    lint = json.loads(run("lint", str(conf), "--mpm", "event", "--format", "json").output)
    assert any(f["rule"] == "AT108" for f in lint["findings"])  # 400 is not a multiple of 30
    sized = json.loads(run("size", str(conf), "--mpm", "event", "--no-measure", "--memory", "2048",
                           "--format", "json").output)
    assert sized["inputs"]["threads_per_child"] == {"value": 30, "source": "config"}


def test_output_for_another_mpm_says_it_is_not_read_until_switched(tmp_path):
    root = debian(tmp_path)
    r = run("generate", str(root / "apache2.conf"), "-d", str(root), "--no-measure", "--rate", "20",
            "--target-mpm", "prefork", "--allow-short", "-o", str(tmp_path / "prefork.conf"), "--no-httpd-check")
    assert r.exit_code == 0, r.output + r.stderr
    assert "runs event: this prefork section is read only once the server loads prefork" in r.stderr
    assert "--switch-mpm" in r.stderr


def test_generate_states_the_verdict_on_the_terminal(tmp_path):
    r = run("generate", "--no-measure", "--memory", "2048", "--rate", "100", "--mpm", "event",
            "-o", str(tmp_path / "mpm.conf"), "--no-httpd-check")
    assert r.exit_code == 0, r.output + r.stderr
    assert "event: memory carries the load" in r.stderr


@pytest.mark.parametrize("mpm", ["prefork", "worker", "event"])
def test_a_section_for_listener_buckets_states_what_httpd_raises_for_them(tmp_path, mpm):
    """With ListenCoresBucketsRatio 1 on 4 CPUs (4 buckets) httpd raises StartServers and the
    spares at start-up (one process, and spares, a bucket); the generated section states those
    values, so lint finds nothing httpd would change and the edit is written (it was refused
    with AT113-AT115: 'nothing was written')."""
    from apachetune.mpm import is_fixed_point

    conf = tmp_path / "httpd.conf"
    conf.write_text(f"LoadModule mpm_{mpm}_module /usr/lib/apache2/modules/mod_mpm_{mpm}.so\n"
                    "ServerName x\nListenCoresBucketsRatio 1\n")
    r = run("generate", str(conf), "--in-place", "--no-measure", "--rate", "100", "--service-time-ms", "50",
            "--per-worker-mb", "2", "--cpus", "4", *_httpd_check_args())
    assert r.exit_code == 0, r.output + r.stderr
    lint = run("lint", str(conf), "--cpus", "4", "--format", "json")
    assert not [f for f in json.loads(lint.output)["findings"] if f["rule"].startswith("AT1")]
    parsed = json.loads(run("parse", str(conf), "--json").output)["effective"]
    values = {d["directive"]: int(d["args"][0]) for d in parsed
              if d.get("directive") in ("StartServers", "MinSpareServers", "MaxSpareServers", "MinSpareThreads",
                                        "MaxSpareThreads", "ServerLimit", "ThreadLimit", "ThreadsPerChild",
                                        "MaxRequestWorkers")}
    assert values["StartServers"] >= 4 and is_fixed_point(mpm, values, listen_buckets=4)
