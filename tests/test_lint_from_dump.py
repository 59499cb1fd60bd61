"""`lint --from-dump`: the output of `httpd -t -D DUMP_CONFIG` linted with findings placed at the
files and lines httpd names, the same findings as linting the tree itself."""

import json
import re
import subprocess
import sys

import pytest

from apachetune.config.dump import read_dump
from httpd_oracle import ROOT, dump_config, needs_httpd
from test_dump_config_oracle import TREES


def lint_cli(*args, stdin: str | bytes | None = None):
    data = stdin.encode() if isinstance(stdin, str) else stdin
    proc = subprocess.run([sys.executable, "-m", "apachetune", "lint", *args], input=data,
                          capture_output=True, timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode(errors="replace"),
                                       proc.stderr.decode(errors="replace"))


def placed(report: str) -> list[tuple[str, str, int]]:
    return sorted((f["rule"], f["file"], f["line"]) for f in json.loads(report)["findings"])


# What a dump cannot show: sections httpd skipped (<IfModule> of an MPM not loaded) are not in it.
_TREE_ONLY = {"AT401"}


@needs_httpd
@pytest.mark.httpd
@pytest.mark.parametrize("tree", sorted(TREES))
def test_dump_gives_the_trees_findings_at_the_trees_lines(tmp_path, tree):
    from test_dump_config_oracle import adapt, copy_tree, env_for

    root = copy_tree(ROOT / "fixtures" / "trees" / tree, tmp_path / tree)
    main = root / TREES[tree]
    adapt(main, root)
    # A value httpd accepts but changes at start-up (AH00513 on event), wherever the tree sets it.
    for conf in sorted(root.rglob("*.conf")):
        text = conf.read_text()
        if re.search(r"(?m)^\s*MaxRequestWorkers\s+\d+", text):
            conf.write_text(re.sub(r"(?m)^(\s*MaxRequestWorkers\s+)\d+", r"\g<1>160", text))
    env = env_for(root)
    dump = dump_config(main, root, env)
    envfile = tmp_path / "env.sh"
    envfile.write_text("".join(f"export {k}='{v}'\n" for k, v in env.items()))
    whole = lint_cli(str(main), "-d", str(root), "--env-file", str(envfile), "--format", "json")
    from_dump = lint_cli("--from-dump", "-", "--format", "json", stdin=dump)
    ours = placed(from_dump.stdout)
    theirs = [f for f in placed(whole.stdout) if f[0] not in _TREE_ONLY]
    assert ours == theirs
    assert ours, "the tree must give the comparison something to compare"


def test_findings_point_at_the_file_and_line_the_dump_names(tmp_path):
    dump = ("# In file: /etc/httpd/conf/httpd.conf\n#  40:\nServerName www.example.com\n"
            "# In file: /etc/httpd/conf.modules.d/00-mpm.conf\n#  12:\nStartServers 2\n#  13:\n"
            "MinSpareServers 5\n#  14:\nMaxSpareServers 10\n#  15:\nServerLimit 100\n#  16:\n"
            "MaxRequestWorkers 250\n")
    assert read_dump(dump).mpm == "prefork"  # MinSpareServers is prefork's alone
    path = tmp_path / "dump.txt"
    path.write_text(dump + "Syntax OK\n")  # as `apachectl -t -D DUMP_CONFIG 2>&1` prints it
    result = lint_cli("--from-dump", str(path), "--format", "json")
    findings = json.loads(result.stdout)["findings"]
    ah00180 = [f for f in findings if "AH00180" in f["message"]]
    assert [(f["file"], f["line"]) for f in ah00180] == [("/etc/httpd/conf.modules.d/00-mpm.conf", 16)]
    assert not [f for f in findings if f["rule"] in ("AT501", "AT505")], findings  # no LoadModule in a dump
    assert "MPM: prefork" in result.stderr


def test_not_a_dump_is_said_and_a_file_with_it_refused(tmp_path):
    path = tmp_path / "plain.conf"
    path.write_text("ServerName a\nKeepAlive On\n")
    result = lint_cli("--from-dump", str(path))
    assert "no '# In file:'" in result.stderr and "Traceback" not in result.stderr
    both = lint_cli(str(path), "--from-dump", str(path))
    assert both.returncode == 2 and "--from-dump reads the dump instead of FILE" in both.stderr


def test_an_empty_section_mod_info_left_open_is_closed_where_the_indentation_ends():
    """mod_info prints `<Location /x>` with no `</Location>` when the section is empty; what
    follows at the same indentation is outside it and keeps its own file and line."""
    dump = read_dump("# In file: /a.conf\n#  1:\n<Location /x>\n#  3:\nKeepAlive On\n#  4:\n"
                     "<Directory /y>\n  #  5:\n  Options None\n</Directory>\n")
    lines = dump.text.splitlines()
    assert lines[3] == "</Location>"
    assert dump.origins[lines.index("KeepAlive On") + 1] == ("/a.conf", 3)
    assert dump.origins[lines.index("  Options None") + 1] == ("/a.conf", 5)


def test_bytes_that_are_not_utf8_are_read_not_a_traceback():
    """A dump piped from a server whose files hold Latin-1 text (or garbage): findings, no crash."""
    dump = b"# In file: /x.conf\n#  7:\nServerName caf\xe9\n#  8:\nKeepAliveTimout 5\n\xff\xfe\x00\n"
    result = lint_cli("--from-dump", "-", "--format", "json", stdin=dump)
    assert "Traceback" not in result.stderr
    findings = json.loads(result.stdout)["findings"]
    assert ("AT501", "/x.conf", 8) in [(f["rule"], f["file"], f["line"]) for f in findings]
