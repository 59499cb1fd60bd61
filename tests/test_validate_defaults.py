"""`apachetune validate --mpm X` with nothing but its defaults passes on a healthy server: the
plans it runs by default (sweep and keepalive) hold their own predictions for every MPM on mpmd
and on a real httpd. (Each run takes 15-30 s: the warm-up grows the pool to MaxRequestWorkers.)"""

import json

import pytest
from click.testing import CliRunner

from apachetune.cli import cli


# On httpd the sweep's top steps need more CPU than a shared 2-core CI machine guarantees (8,000
# mod_lua requests a second beside wrk; 5,344 measured while the rest of the suite ran): the
# httpd runs are recorded in docs/validate.md, not asserted here.
@pytest.mark.parametrize("target, mpm", [("mpmd", "prefork"), ("mpmd", "worker"), ("mpmd", "event")])
def test_validate_defaults_pass(target, mpm):
    result = CliRunner().invoke(cli, ["validate", "--mpm", mpm, "--target", target, "--format", "json"])
    data = json.loads(result.output)
    failed = [v for v in data["verdicts"] if v["passed"] is False]
    assert not failed and result.exit_code == 0, (failed, data["notes"])
    names = {v["name"] for v in data["verdicts"]}
    assert {"saturation throughput", "peak memory at full concurrency",
            "idle keep-alive clients pin workers"} <= names
    assert any("warm-up" in n for n in data["notes"])
