"""What judging a tree's module linking costs a cold lint (AT501's third-party tables, AT510's
libraries and symbols), side by side in one run.

Where this machine's httpd runs the tree (it loads a module from that httpd's modules directory),
lint reads httpd's binary and the libraries it needs (the names a module's symbols bind to), each
module's file and its libraries, once a process. Each sample is a fresh interpreter (the reads are
cached for the life of a process), timed in CPU seconds after its imports, alternating:
  judged      resolve + lint as `apachetune lint` runs them
  not judged  the same with LD_PRELOAD in the tree's environment (what binds is then not known:
              httpd's binary and the libraries are not read; the module files still are)
and, in the judged process, a second resolve + lint of the same tree (the reads cached).

The tree: the host's /etc/apache2/apache2.conf (Debian's stock tree) when present, else the
generated tree of benchmarks/lint_bench.py with 10 vhosts. Writes the `## Lint: what reading the
modules costs` section of docs/benchmarks.md.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from parse_bench import write_section  # noqa: E402

from apachetune import httpd  # noqa: E402

REPEAT = int(os.environ.get("REPEAT", "9"))

DRIVER = r"""
import json, os, sys, time
from apachetune.config import elf
from apachetune.config.resolver import ResolveOptions, resolve
from apachetune.lint.engine import LintOptions, lint
from apachetune.lint.settings import Settings
env = dict(os.environ)
if sys.argv[2] == "off":
    env["LD_PRELOAD"] = ""
opts = ResolveOptions(use_env_file=sys.argv[1].startswith("/etc/"), env=env)
def once():
    t = time.process_time()
    result = lint(resolve(sys.argv[1], opts), LintOptions(opts, Settings()))
    return time.process_time() - t, len(result.findings)
first, findings = once()
second, _ = once()
reads = elf._read.cache_info().currsize
print(json.dumps({"first": first, "second": second, "findings": findings, "objects": reads}), flush=True)
os._exit(0)
"""


def sample(main: Path, mode: str) -> dict[str, float]:
    env = {**os.environ, "APACHETUNE_NO_CACHE": "1"}
    out = subprocess.run([sys.executable, "-c", DRIVER, str(main), mode], capture_output=True, text=True,
                         env=env, check=True).stdout
    return json.loads(out)


def main() -> int:
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(HERE.parent / "src" / "apachetune")],
                   stdout=subprocess.DEVNULL, check=False)
    with tempfile.TemporaryDirectory() as tmp:
        main_file = Path("/etc/apache2/apache2.conf")
        tree = "Debian's stock tree (/etc/apache2/apache2.conf)"
        if not main_file.is_file():
            from lint_bench import make_tree

            main_file = make_tree(Path(tmp) / "t", 10)[0]
            tree = "lint_bench.py's tree with 10 vhosts"
        judged: list[dict[str, float]] = []
        plain: list[dict[str, float]] = []
        for _ in range(REPEAT):
            judged.append(sample(main_file, "on"))
            plain.append(sample(main_file, "off"))

    def ms(runs: list[dict[str, float]], key: str) -> tuple[float, float, float]:
        values = [r[key] * 1000 for r in runs]
        return statistics.median(values), min(values), max(values)

    on, off, again = ms(judged, "first"), ms(plain, "first"), ms(judged, "second")
    rows = [f"| judged (as `apachetune lint`) | {on[0]:.1f} | {on[1]:.1f}–{on[2]:.1f} | {judged[0]['objects']} |",
            f"| not judged (LD_PRELOAD set) | {off[0]:.1f} | {off[1]:.1f}–{off[2]:.1f} | {plain[0]['objects']} |",
            f"| judged, second lint in the same process | {again[0]:.1f} | {again[1]:.1f}–{again[2]:.1f} | – |"]
    same = all(j["findings"] == p["findings"] for j, p in zip(judged, plain, strict=True))
    section = f"""## Lint: what reading the modules costs

`make bench` → `benchmarks/linking_bench.py`: a cold resolve + lint of {tree}, each sample a fresh
interpreter timed in CPU ms after its imports (no result cache), {REPEAT} of each alternating in one
run. Judged, lint reads httpd's binary and the libraries it and each module need, once a
process: the names a module's symbols bind to (AT510, "undefined symbol", a library not found).
Not judged is the same lint with LD_PRELOAD in the tree's environment; both read every module
file of the modules directory (LoadModule's identifier, and which module defines a symbol
another needs: judged on any tree) and third-party modules' directive tables (AT501).
Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, httpd
{httpd.version() or "not installed"}; shared and noisy, so quote the ratio.

| lint | CPU ms, median | range | ELF objects read |
|---|---|---|---|
{chr(10).join(rows)}

Judged / not judged: **{on[0] / off[0]:.2f}×** (the same findings both ways: {"yes" if same else "no"}).
"""
    print(section)
    write_section(HERE.parent / "docs" / "benchmarks.md", "## Lint: what reading the modules costs", section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
