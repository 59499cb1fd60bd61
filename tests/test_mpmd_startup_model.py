"""mpmd's start-up adjustments (conf.c:conf_finish) against apachetune's model of httpd's
(mpm/startup.py): the same section must run with the same values in both, so a validation run on
mpmd exercises the configuration httpd would run."""

from __future__ import annotations

import subprocess

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apachetune.mpm import simulate_startup
from apachetune.validate.mpmd_server import binary

THREADED = ("StartServers", "ServerLimit", "ThreadLimit", "ThreadsPerChild", "MaxRequestWorkers",
            "MinSpareThreads", "MaxSpareThreads")
PREFORK = ("StartServers", "ServerLimit", "MaxRequestWorkers", "MinSpareServers", "MaxSpareServers")

# Small values (where the clamps bite), the defaults' neighbourhood, and the compile-time limits.
value = st.one_of(st.integers(0, 70), st.integers(0, 1000), st.sampled_from([19999, 20000, 20001, 100001, 200001]))


def mpmd_values(tmp_path, mpm: str, section: dict[str, int]) -> dict[str, int]:
    conf = tmp_path / "mpmd.conf"
    conf.write_text(f"DocumentRoot {tmp_path}\n" + "".join(f"{k} {v}\n" for k, v in section.items()))
    proc = subprocess.run([str(binary()), "-t", "-f", str(conf), "-m", mpm], capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "Syntax OK"
    return {name: int(v) for name, v in (line.split() for line in lines[1:])}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mpm=st.sampled_from(["prefork", "worker", "event"]), data=st.data())
def test_mpmd_runs_what_httpd_would_run(tmp_path, mpm, data):
    names = PREFORK if mpm == "prefork" else THREADED
    section = data.draw(st.dictionaries(st.sampled_from(names), value))
    ours = mpmd_values(tmp_path, mpm, section)
    model = simulate_startup(mpm, {k: str(v) for k, v in section.items()}).effective
    assert ours == {k: model[k] for k in ours}, section


def test_the_defaults_agree(tmp_path):
    for mpm in ("prefork", "worker", "event"):
        ours = mpmd_values(tmp_path, mpm, {})
        assert ours == {k: simulate_startup(mpm, {}).effective[k] for k in ours}
