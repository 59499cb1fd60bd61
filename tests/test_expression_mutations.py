"""One character of one expression changed (deleted, doubled, replaced, or two swapped) in the
readers' good fixture for expressions: lint's AT510 is exactly where `apache2 -t` stops, in its
words. Seeded; APACHETUNE_MUTATION_SEEDS runs more (each seed: 6 changes, one httpd run each)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from apachetune.config.resolver import ResolveOptions
from apachetune.lint.engine import LintOptions, lint_file
from apachetune.lint.settings import Settings
from httpd_oracle import needs_httpd, run_httpd

GOOD = Path(__file__).resolve().parents[1] / "fixtures" / "rules" / "AT510" / "good-expressions.conf"
SEEDS = int(os.environ.get("APACHETUNE_MUTATION_SEEDS", "8"))
_CHARS = "%{}()'\"$/#:,.=!<>&|-_ aZ09"


def _mutants(seed: int, lines: list[str]) -> list[tuple[int, str]]:
    """Six (line index, changed line) pairs: a character inside the line's first quoted text."""
    rng = random.Random(seed)
    candidates = [i for i, line in enumerate(lines) if '"' in line and not line.lstrip().startswith("#")
                  and not line.startswith("LoadModule")]
    out = []
    for _ in range(6):
        i = rng.choice(candidates)
        line = lines[i]
        start, end = line.index('"') + 1, line.rindex('"')
        if end <= start:
            continue
        k = rng.randrange(start, end)
        kind = rng.choice(("delete", "double", "replace", "swap"))
        if kind == "delete":
            line = line[:k] + line[k + 1:]
        elif kind == "double":
            line = line[:k] + line[k] + line[k:]
        elif kind == "replace":
            line = line[:k] + rng.choice(_CHARS) + line[k + 1:]
        elif k + 1 < end:
            line = line[:k] + line[k + 1] + line[k] + line[k + 2:]
        out.append((i, line))
    return out


@needs_httpd
@pytest.mark.parametrize("seed", range(SEEDS))
def test_a_changed_expression_gets_httpds_verdict(tmp_path, seed):
    lines = GOOD.read_text().splitlines()
    for i, changed in _mutants(seed, lines):
        conf = tmp_path / "m.conf"
        conf.write_text("\n".join(["ErrorLog /dev/null", *lines[:i], changed, *lines[i + 1:]]) + "\n")
        proc = run_httpd("-t", "-d", str(tmp_path), "-f", str(conf))
        findings = lint_file(conf, LintOptions(ResolveOptions(env={}), Settings())).findings
        errors = [f.message for f in findings if f.severity == "error"]
        if proc.returncode == 0:
            assert errors == [], (changed, errors)
        else:
            said = proc.stderr.strip().splitlines()[-1]
            assert any(said in m for m in errors), (changed, said, errors)
