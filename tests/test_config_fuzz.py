"""A bounded mutational fuzz of the whole lint pipeline (parse, resolve, rules, every report
format) over real configurations: whatever the bytes, the answer is a report or a positioned
ApachetuneError, never another exception and never a hang.

The seeds are the shared corpus of real-world configs and the project's fixture trees; each
example applies a few mutations of the kinds that break configs in practice (a deleted or
duplicated line, a truncation, stray bytes, an unclosed or stray section, an include of
something odd, an extreme number). CI runs a fixed number of examples; `FUZZ_EXAMPLES=N`
runs more locally.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apachetune.config.resolver import ResolveOptions
from apachetune.errors import ApachetuneError
from apachetune.lint.engine import LintOptions, lint_file
from apachetune.lint.settings import Settings
from apachetune.report import github, json_report, sarif, text

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
SEEDS = sorted([*CORPUS.glob("*.conf"), *(ROOT / "fixtures" / "sample").glob("*.conf"),
                *(ROOT / "fixtures" / "broken").glob("*.conf")])
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "150"))

INSERTS = ["<IfModule mpm_event_module>\n", "</IfModule>\n", "<VirtualHost *:80>\n", "</Directory>\n",
           "Include /proc/self/*\n", "IncludeOptional /nonexistent/*.conf\n", "Include /dev/zero\n",
           "Define X\n", "${UNDEFINED}\n", "MaxRequestWorkers 99999999999999999999\n",
           "ThreadsPerChild -1\n", "AsyncRequestWorkerFactor nan\n", "KeepAliveTimeout 1e308\n",
           "\\\n", "\"unterminated\n", "\x00\n", "\ufeff", "<Macro M $x>\nServerName $x\n</Macro>\nUse M a\n",
           "ServerLimit 0x10\n", "LoadModule mpm_prefork_module modules/mod_mpm_prefork.so\n"]


@st.composite
def mutated(draw):
    seed = draw(st.sampled_from(SEEDS))
    data = seed.read_bytes()
    lines = data.splitlines(keepends=True) or [b""]
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["delete", "duplicate", "truncate", "bytes", "insert", "number"]))
        i = draw(st.integers(0, max(0, len(lines) - 1)))
        if kind == "delete" and len(lines) > 1:
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        elif kind == "truncate":
            lines = lines[: i + 1]
            lines[-1] = lines[-1][: draw(st.integers(0, len(lines[-1])))]
        elif kind == "bytes":
            pos = draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:pos] + draw(st.binary(min_size=1, max_size=8)) + lines[i][pos:]
        elif kind == "insert":
            lines.insert(i, draw(st.sampled_from(INSERTS)).encode("utf-8", "surrogatepass"))
        elif kind == "number":
            number = draw(st.sampled_from([b"0", b"-1", b"2147483648", b"1e400", b"nan", b"\xd9\xa1\xd9\xa5"]))
            lines[i] = re.sub(rb"\d+", number, lines[i], count=1)
    return seed.name, b"".join(lines)


@pytest.mark.skipif(not SEEDS, reason="no seeds")
@settings(max_examples=EXAMPLES, deadline=None, derandomize="FUZZ_EXAMPLES" not in os.environ,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=mutated())
def test_mutated_real_configs_give_a_report_or_a_positioned_error(tmp_path, case):
    name, data = case
    conf = tmp_path / "apache2.conf"
    conf.write_bytes(data)
    try:
        result = lint_file(conf, LintOptions(ResolveOptions(env={}, server_root=str(tmp_path)), Settings()))
    except ApachetuneError as e:
        assert str(e), name
        return
    for render in (text.render, json_report.render, github.render, sarif.render):
        assert isinstance(render(result), str)
