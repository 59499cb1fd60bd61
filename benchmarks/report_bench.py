"""Report time against lint time as findings grow (issue 11: the text report was quadratic).

For 10k, 20k, 40k and 80k findings in one file, time the lint (resolve + rules) and each format's
rendering in the same process, and print render / lint. The target: every format under 2x the
time of finding them, at every size (linear, not quadratic).
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from apachetune import httpd
from apachetune.config.resolver import ResolveOptions  # noqa: E402
from apachetune.lint.engine import LintOptions, lint  # noqa: E402
from apachetune.lint.settings import Settings  # noqa: E402
from apachetune.report import FORMATS  # noqa: E402


def worst_ratio(sizes=(10_000, 20_000, 40_000, 80_000), echo: bool = False) -> float:
    """The worst render time / lint time over the formats and sizes (a table row per size)."""
    if echo:
        print("| findings | lint s | " + " | ".join(f"{f} s (x lint)" for f in ("text", "json", "sarif")) + " |")
        print("|---|---|---|---|---|")
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            conf = Path(tmp) / f"many-{n}.conf"
            conf.write_text(f"{httpd.load_module_line('mpm_event')}\n"
                            "ServerName x\n" + "<VirtualHost *:80>\nHostnameLookups On\n</VirtualHost>\n" * n)
            t0 = time.perf_counter()
            result = lint(str(conf), LintOptions(ResolveOptions(env={}), Settings(), only={"AT601"}))
            t_lint = time.perf_counter() - t0
            cells = []
            for fmt in ("text", "json", "sarif"):
                t0 = time.perf_counter()
                FORMATS[fmt](result)
                t = time.perf_counter() - t0
                worst = max(worst, t / t_lint)
                cells.append(f"{t:.2f} ({t / t_lint:.2f}x)")
            if echo:
                print(f"| {len(result.findings)} | {t_lint:.2f} | " + " | ".join(cells) + " |", flush=True)
    return worst


def main() -> int:
    worst = worst_ratio(echo=True)
    print(f"\nworst render/lint ratio {worst:.2f}: {'PASS' if worst < 2 else 'MISS'} (target < 2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
