"""The start-up model of each httpd 2.4.x against that version's recorded output.

fixtures/httpd-versions/<version>.json holds what a build of that tag printed for `-t -e info`
on a fixed set of MPM sections (tools/build_httpd.sh + tools/record_httpd_version.py); no
httpd is needed to run these tests."""

import json
import re
from pathlib import Path

import pytest

from apachetune.mpm import simulate_startup
from apachetune.mpm.buckets import listen_buckets

RECORDINGS = sorted((Path(__file__).resolve().parents[1] / "fixtures" / "httpd-versions").glob("*.json"),
                    key=lambda p: [int(x) for x in p.stem.split(".")])
_LOG_PREFIX = re.compile(r"^\[[^\]]*\] ")


def load(path):
    return json.loads(path.read_text())


def expected_and_ours(version, case):
    ours = simulate_startup(case["mpm"], [(n, [v]) for n, v in case["directives"]], version=version)
    theirs = [_LOG_PREFIX.sub("", line) for line in case["stderr"] if line != "Syntax OK"]
    return ours, theirs


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
def test_startup_messages_equal_the_recorded_version(path):
    record = load(path)
    mismatches = []
    for case in record["startup"]:
        ours, theirs = expected_and_ours(record["version"], case)
        notices = [f"{m.code}: {m.text}" for m in ours.notices]
        if case["returncode"] != 0:
            got = notices + ["AH00526", ours.fatal[0].text] if ours.fatal else notices
            want = [line.split(":")[0] if line.startswith("AH00526: Syntax error") else line for line in theirs]
        else:
            got = notices + [line for m in ours.messages for line in m.printed()]
            want = theirs
        if got != want:
            mismatches.append((case["mpm"], case["directives"], want, got))
    assert not mismatches, "\n\n".join(f"{m} {d}\n httpd: {w}\n ours:  {g}" for m, d, w, g in mismatches[:5])


def test_recordings_cover_the_versions_distributions_ship():
    """RHEL 7 (2.4.6), Ubuntu 18.04/20.04/22.04/24.04 (2.4.29/41/52/58), RHEL 8 (2.4.37),
    Debian 12 and RHEL 9 (2.4.62), and each wording era of mpm/versions.py (2.4.19, 2.4.20)."""
    versions = {p.stem for p in RECORDINGS}
    assert {"2.4.6", "2.4.19", "2.4.20", "2.4.29", "2.4.37", "2.4.41", "2.4.52", "2.4.58", "2.4.62"} <= versions


def test_the_recordings_differ_where_the_model_says_versions_differ():
    """Not the same output recorded twice: 2.4.6 splits the long warnings, 2.4.62 does not."""
    old, new = (load(p) for p in RECORDINGS if p.stem in ("2.4.6", "2.4.62"))
    split = [c for c in old["startup"] if any(line.startswith(" ") for line in c["stderr"])]
    assert split and not any(line.startswith(" ") for c in new["startup"] for line in c["stderr"])


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
def test_registry_knows_which_directives_each_version_has(path):
    """`-L` of the recorded build (every module it built loaded): no directive it lists is one we
    call newer than that version, and every directive of a built module we accept is listed."""
    from apachetune.config.conditions import Version, at_least, source_file_for
    from apachetune.config.directives import registry

    record = load(path)
    version = Version.parse(record["version"])
    listed = {name.lower() for name in record["directives"]}
    built = set(record["directives"].values())
    refused_but_listed = [spec.name for key, spec in registry().items()
                          if key in listed and spec.since and not at_least(version, spec.since)]
    assert not refused_but_listed
    accepted_but_missing = sorted(
        spec.name for key, spec in registry().items()
        if key not in listed and (spec.since is None or at_least(version, spec.since))
        and any(source_file_for(m) in built for m in spec.modules))
    assert not accepted_but_missing


def test_lint_refuses_a_directive_newer_than_the_version(tmp_path):
    """<IfFile> came with 2.4.34 (2.4.29's -L does not list it): linted as 2.4.29 it is httpd's
    'Invalid command', as 2.4.62 it is fine."""
    from apachetune import httpd
    from apachetune.config.resolver import ResolveOptions
    from apachetune.lint.engine import LintOptions, lint_file
    from apachetune.lint.settings import Settings

    load_mpm = httpd.load_module_line("mpm_event")
    conf = tmp_path / "httpd.conf"
    conf.write_text(f"ServerName localhost\n{load_mpm}\n<IfFile /nonexistent>\n  ServerAdmin a@b\n</IfFile>\n"
                    "ListenCoresBucketsRatio 2\n")
    for version, expected in (("2.4.29", ["<IfFile"]), ("2.4.16", ["<IfFile", "ListenCoresBucketsRatio"]),
                              ("2.4.62", [])):
        result = lint_file(conf, LintOptions(ResolveOptions(httpd_version=version, env={}),
                                                Settings()))
        at501 = [f.message.split("'")[1] for f in result.findings if f.rule == "AT501"]
        assert at501 == expected, (version, [f.message for f in result.findings])


RUN_STEP = [p for p in RECORDINGS if "run_step" in load(p)]


def _model_run_step(version, case, cpus):
    """What the model says the run step leaves, in the recording's terms."""
    ratio = next((v for n, v in case["directives"] if n == "ListenCoresBucketsRatio"), None)
    directives = [(n, [v]) for n, v in case["directives"] if n != "ListenCoresBucketsRatio"]
    result = simulate_startup(case["mpm"], directives, version=version,
                              listen_buckets=listen_buckets(ratio, cpus))
    eff = result.effective
    logged = [f"{m.code}: {m.text}" for m in result.error_log]
    return logged, _terms(case["mpm"], eff)


def _terms(mpm, eff):
    if mpm == "prefork":
        return {"StartServers": eff["StartServers"], "MinSpareServers": eff["MinSpareServers"],
                "MaxSpareServers": eff["MaxSpareServers"], "ProcessLimit": eff["MaxRequestWorkers"],
                "ServerLimit": eff["ServerLimit"]}
    tpc = eff["ThreadsPerChild"]
    return {"StartServers": eff["StartServers"], "MinSpareThreads": eff["MinSpareThreads"],
            "MaxSpareThreads": eff["MaxSpareThreads"], "ProcessLimit": eff["MaxRequestWorkers"] // tpc,
            "ThreadsPerChild": tpc}


def _recorded_run_step(values):
    """The MPM's variables read from the running parent, in the model's terms: httpd keeps a
    StartServers above the process limit in its variable but starts only ProcessLimit children;
    worker/event keep max_workers as configured while the process limit caps the threads."""
    out = dict(values)
    out["StartServers"] = min(values["StartServers"], values["ProcessLimit"])
    out.pop("MaxRequestWorkers", None)
    return out


@pytest.mark.parametrize("path", RUN_STEP, ids=lambda p: p.stem)
def test_run_step_equals_the_recorded_version(path):
    """The run step's silent changes (prefork_run/worker_run/event_run: StartServers, the spare
    bounds and the process limit raised to each version's floors per listener bucket) against
    the values a real build of that version held once its children were forked
    (tools/record_run_step.py reads them with gdb); and, for sections that warn, the lines a
    graceful restart (the second configuration pass) wrote to the ErrorLog."""
    record = load(path)
    cpus = record["run_step"]["online_cpus"]
    mismatches = []
    for case in record["run_step"]["cases"]:
        logged, ours = _model_run_step(record["version"], case, cpus)
        theirs = _recorded_run_step(case["values"])
        if ours != theirs:
            mismatches.append((case["mpm"], case["directives"], theirs, ours))
        if "error_log" in case and logged != case["error_log"]:  # the second pass's ErrorLog lines
            mismatches.append((case["mpm"], case["directives"], case["error_log"], logged))
    assert not mismatches, "\n".join(f"{m} {d}\n httpd: {t}\n ours:  {o}" for m, d, t, o in mismatches)
    assert len(record["run_step"]["cases"]) >= 16
    assert sum("error_log" in c for c in record["run_step"]["cases"]) >= 8


def test_run_step_recordings_tell_the_floor_eras_apart():
    """2.4.6 (no buckets, MaxSpareThreads >= MinSpareThreads + ThreadsPerChild), 2.4.18 (whole
    processes per bucket), 2.4.29 (today's floors): MinSpareThreads 1 / MaxSpareThreads 1 on
    worker gives a different MaxSpareThreads in each."""
    def max_spare(version):
        record = next(load(p) for p in RUN_STEP if p.stem == version)
        case = next(c for c in record["run_step"]["cases"] if c["mpm"] == "worker"
                    and c["directives"] == [["MinSpareThreads", "1"], ["MaxSpareThreads", "1"]])
        return case["values"]["MaxSpareThreads"]
    assert [max_spare(v) for v in ("2.4.6", "2.4.18", "2.4.29")] == [26, 50, 27]


@pytest.mark.parametrize("argv", [
    ["lint", "{conf}", "--httpd-version", "{v}"],
    ["size", "{conf}", "--no-measure", "--httpd-version", "{v}"],
    ["simulate", "--mpm", "event", "--clients", "2", "--seconds", "1", "--httpd-version", "{v}"],
    ["simulate", "--mpm", "event", "--clients", "2", "--seconds", "1", "--versus", "{v}"],
])
def test_versions_other_than_2_4_are_refused_not_judged_as_2_4(argv):
    """2.2 read MaxClients and had no AsyncRequestWorkerFactor: a tree checked "as 2.2.34" with
    2.4's model would be judged wrongly, so the version is refused; every 2.4.x is modelled."""
    from click.testing import CliRunner

    from apachetune.cli import cli

    conf = str(Path(__file__).resolve().parents[1] / "fixtures" / "sample" / "apache2.conf")
    for v, refused in (("2.2.34", True), ("3.0.0", True), ("2.4.6", False), ("2.4.80", False)):
        r = CliRunner().invoke(cli, [a.format(conf=conf, v=v) for a in argv])
        if refused:
            assert r.exit_code == 2 and f"{v}: apachetune models httpd 2.4" in r.output, r.output
        else:
            assert r.exit_code in (0, 1) and "Traceback" not in r.output, r.output
