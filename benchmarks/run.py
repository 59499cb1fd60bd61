"""`make bench`: run every benchmarks/*_bench.py in turn (each writes its section of docs/benchmarks.md).

Benchmarks are never tests: they measure, print a table and record ratios measured
side by side in one run. Pass names to run a subset: `python benchmarks/run.py parse`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    scripts = sorted(HERE.glob("*_bench.py"))
    if argv:
        scripts = [s for s in scripts if s.stem.removesuffix("_bench") in argv]
    failed = []
    for script in scripts:
        print(f"== {script.name}", flush=True)
        if subprocess.run([sys.executable, str(script)], cwd=HERE.parent).returncode != 0:
            failed.append(script.name)
    if failed:
        print("failed: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
