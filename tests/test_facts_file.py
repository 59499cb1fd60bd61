"""Facts files are input a person may edit or bring from another machine: every value is checked,
and a wrong one is named by its key, its line and column and what was expected, for `size` and
`lint` alike (never a traceback from the arithmetic that would have used it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from apachetune.cli import cli
from apachetune.sizing.facts import HostFacts, HttpdFacts, WorkerSample

ROOT = Path(__file__).resolve().parents[1]
CONF = str(ROOT / "fixtures" / "sample" / "apache2.conf")
GOOD = {
    "total_mib": 24105.6, "available_mib": 23164.1, "cpus": 2, "services": {"MySQL": 310.5},
    "httpd": {"parent_pid": 100, "mpm": "prefork", "parent_pss_mib": 5.0, "per_worker_mib": 12.5,
              "per_process_mib": 0.0, "threads_per_child": 1, "idle": None,
              "children": [{"pid": 101, "threads": 1, "rss_mib": 20.0, "pss_mib": 12.5, "uss_mib": 9.0}]},
    "memory_source": "MemAvailable", "task_limit": 16334,
}


def _edit(path: str, value):
    doc = json.loads(json.dumps(GOOD))
    *parents, last = path.split(".")
    node = doc
    for p in parents:
        node = node[p] if not p.isdigit() else node[int(p)]
    if value is KeyError:
        del node[last]
    else:
        node[last] = value
    return doc


def _run(command: str, tmp_path: Path, text: str):
    facts = tmp_path / "facts.json"
    facts.write_text(text)
    args = {"size": ["size", CONF, "--facts", str(facts), "--rate", "50"], "lint": ["lint", CONF, "--facts", str(facts)],
            "simulate": ["simulate", "--mpm", "prefork", "--clients", "5", "--seconds", "1", "--facts", str(facts)]}[command]
    return CliRunner().invoke(cli, args), facts


def test_a_saved_facts_file_reads_back_as_it_was(tmp_path):
    path = tmp_path / "host.json"
    path.write_text(json.dumps(GOOD, indent=2))
    host = HostFacts.load(path)
    assert host.httpd == HttpdFacts(100, "prefork", (WorkerSample(101, 1, 20.0, 12.5, 9.0),), 5.0, 12.5, 0.0, 1)
    HostFacts(**{**host.__dict__}).save(tmp_path / "again.json")
    assert HostFacts.load(tmp_path / "again.json") == host


def test_keys_a_newer_apachetune_added_are_ignored(tmp_path):
    doc = _edit("httpd.children.0.numa_node", 1)
    doc["httpd"]["cgroup"] = "/system.slice/apache2.service"
    doc["swap_mib"] = 2048
    path = tmp_path / "host.json"
    path.write_text(json.dumps(doc))
    assert HostFacts.load(path).httpd.children[0].pss_mib == 12.5


def test_a_cpu_quota_is_kept_through_a_facts_file(tmp_path):
    from apachetune.sizing.facts import HostFacts

    facts = HostFacts(8000, 7000, 1, cpu_source="cgroup limit x: 0.5 CPUs", cpu_quota=0.5)
    facts.save(tmp_path / "f.json")
    back = HostFacts.load(tmp_path / "f.json")
    assert back == facts and back.cpu_time == 0.5
    doc = json.loads((tmp_path / "f.json").read_text())
    del doc["cpu_quota"]  # a file from before the field: whole cores
    (tmp_path / "f.json").write_text(json.dumps(doc))
    assert HostFacts.load(tmp_path / "f.json").cpu_time == 1.0
    # a quota's shape: the CPUs its threads run on and its period, for the simulated curves
    whole = HostFacts(8000, 7000, 1, cpu_quota=1.0, cpu_period=0.02, cpu_runs_on=2)
    whole.save(tmp_path / "g.json")
    back = HostFacts.load(tmp_path / "g.json")
    assert back == whole and back.cpu_time == 1 and str(back.cpu_time) == "1"


@pytest.mark.parametrize("command", ["size", "lint", "simulate"])
@pytest.mark.parametrize("path, value, expected", [
    ("available_mib", "lots", "a number of MiB"),
    ("available_mib", -1, "a number of MiB"),
    ("total_mib", 1e308, "a number of MiB"),
    ("cpus", 0, "a whole number of CPUs"),
    ("cpus", 2.5, "a whole number of CPUs"),
    ("cpus", True, "a whole number of CPUs"),
    ("task_limit", "many", "null or a whole number"),
    ("cpu_quota", 0, "null or CPUs' worth of time"),
    ("cpu_period", 2, "null or a CFS period in seconds, from 0.001 to 1"),
    ("cpu_runs_on", 0.5, "null or a whole number of CPUs"),
    ("cpu_quota", "half", "null or CPUs' worth of time"),
    ("services", [], "an object"),
    ("services.MySQL", "big", "a number of MiB"),
    ("httpd", [1], "an object"),
    ("httpd.per_worker_mib", "x", "a number of MiB"),
    ("httpd.per_process_mib", {}, "a number of MiB"),
    ("httpd.parent_pss_mib", [], "a number of MiB"),
    ("httpd.mpm", "threaded", '"prefork", "worker" or "event"'),
    ("httpd.children", {}, "a list of children"),
    ("httpd.children.0.pss_mib", None, "a number of MiB"),
])
def test_a_wrong_value_is_named_with_its_line_and_what_was_expected(tmp_path, command, path, value, expected):
    text = json.dumps(_edit(path, value), indent=2)
    r, facts = _run(command, tmp_path, text)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and expected in r.output, r.output
    key = path.split(".")[-1] if not path.split(".")[-1].isdigit() else path.split(".")[-2]
    shown = path.replace(".0.", "[0].")
    assert f'"{shown}"' in r.output, r.output
    line = next(i for i, t in enumerate(text.splitlines(), 1) if f'"{key}":' in t)
    assert f"{facts}:{line}:" in r.output, r.output


@pytest.mark.parametrize("path", ["total_mib", "available_mib", "cpus", "httpd.per_worker_mib",
                                  "httpd.children.0.uss_mib"])
def test_what_size_needs_must_be_there(tmp_path, path):
    r, facts = _run("size", tmp_path, json.dumps(_edit(path, KeyError), indent=2))
    assert r.exit_code == 2 and "is missing" in r.output and str(facts) in r.output, r.output


def test_lint_reads_a_facts_file_with_only_limits(tmp_path):
    r, _ = _run("lint", tmp_path, json.dumps({"limits": {"somaxconn": 4096, "nofile": 1024,
                                                          "mounts": [["/", "ext4"]]}}))
    assert r.exit_code in (0, 1) and "Traceback" not in r.output, r.output


@pytest.mark.parametrize("text, where, says", [
    ('{"total_mib": 1,\n "cpus": NaN}', ":2:10:", "NaN is not a number"),
    ('{"total_mib": 1,\n "cpus": 2,', ":2:", "Expecting property name"),
    ("[1, 2]", ":1:1:", "expected a JSON object"),
])
def test_json_that_is_no_facts_file_is_pointed_at(tmp_path, text, where, says):
    for command in ("size", "lint"):
        r, facts = _run(command, tmp_path, text)
        assert r.exit_code == 2 and f"{facts}{where}" in r.output and says in r.output, r.output


def test_simulate_takes_the_peak_memory_from_a_facts_file_of_the_mpm_it_measured(tmp_path):
    """`simulate --facts FILE`: the measured httpd's memory a worker (here a prefork child's 12.5
    MiB PSS) gives the peak; another MPM's, an idle sample's or none is refused, named."""
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(GOOD))
    argv = ["simulate", "--max-request-workers", "10", "--clients", "10", "--seconds", "3", "--facts", str(facts),
            "--format", "json"]
    r = CliRunner().invoke(cli, [*argv, "--mpm", "prefork"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["peak_memory_mib"] == pytest.approx(doc["peak_processes"] * 12.5, abs=0.1)
    given = json.loads(CliRunner().invoke(cli, [*argv, "--mpm", "prefork", "--per-worker-mib", "3"]).output)
    assert given["peak_memory_mib"] == pytest.approx(given["peak_processes"] * 3.0, abs=0.1)
    for doc_, says in ((GOOD, "ran prefork"), (_edit("httpd.idle", "started 5 s ago"), "was idle (started 5 s ago)"),
                       (_edit("httpd", None), "no httpd measured")):
        facts.write_text(json.dumps(doc_))
        mpm = "event" if says == "ran prefork" else "prefork"
        bad = CliRunner().invoke(cli, [*argv, "--mpm", mpm])
        assert bad.exit_code == 2 and says in bad.output and str(facts) in bad.output, bad.output
        assert "Traceback" not in bad.output
