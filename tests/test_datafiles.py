"""The package's YAML data read through its JSON copy: the same data, and never a stale copy."""

import os
import subprocess
import sys

import yaml

from apachetune import datafiles
from apachetune.paths import rules_dir


def _yaml(path):
    return yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)


def test_every_shipped_file_reads_the_same_through_json(tmp_path, monkeypatch):
    monkeypatch.setenv("APACHETUNE_CACHE", str(tmp_path))
    paths = sorted(rules_dir().rglob("*.yaml"))
    assert len(paths) > 50
    first = datafiles.load_yaml(paths, "all")  # reads the YAML, writes the copy
    assert len(list((tmp_path / "data").glob("all-*.json"))) == 1
    again = datafiles.load_yaml(paths, "all")  # from the copy
    assert first == again == [_yaml(p) for p in paths]  # no type lost on the way (keys, numbers)


def test_a_changed_file_is_read_again_and_replaces_the_copy(tmp_path, monkeypatch):
    monkeypatch.setenv("APACHETUNE_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "a.yaml"
    src.write_text("threshold: 5\n")
    assert datafiles.load_yaml([src], "t") == [{"threshold": 5}]
    src.write_text("threshold: 17\n")
    os.utime(src, ns=(1, 10**18))  # a new stamp even where mtime is coarse
    assert datafiles.load_yaml([src], "t") == [{"threshold": 17}]
    assert len(list((tmp_path / "cache" / "data").glob("t-*.json"))) == 1


def test_a_torn_copy_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("APACHETUNE_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "a.yaml"
    src.write_text("- 1\n- two\n")
    datafiles.load_yaml([src], "t")
    (copy,) = (tmp_path / "cache" / "data").glob("t-*.json")
    copy.write_text('{"stamp": [], "documents": [[1, "tw')
    assert datafiles.load_yaml([src], "t") == [[1, "two"]]


def test_a_lint_with_the_copies_in_place_never_imports_pyyaml(tmp_path):
    conf = tmp_path / "httpd.conf"
    conf.write_text("ServerName localhost\nKeepAliveTimeout 5\n")
    env = {**os.environ, "APACHETUNE_CACHE": str(tmp_path / "cache"), "APACHETUNE_NO_CACHE": "1"}
    probe = ("import sys; from apachetune.cli import main; sys.argv = ['apachetune', 'lint', '--mpm', 'event', "
             f"{str(conf)!r}]\n"
             "try: main()\nexcept SystemExit: pass\n"
             "print('YAML' if 'yaml' in sys.modules else 'NO-YAML', file=sys.stderr)")
    # The lint CLI leaves through os._exit; the probe reports from an atexit-free path instead.
    probe = probe.replace("main()", "import os; os._exit = lambda c: None; main()")
    runs = [subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
            for _ in range(2)]
    last = [r.stderr.strip().splitlines()[-1] for r in runs]
    assert last == ["YAML", "NO-YAML"], [r.stderr for r in runs]  # the first run builds the copies
    assert "AT" in runs[1].stdout or "No findings" in runs[1].stdout, runs[1].stdout
