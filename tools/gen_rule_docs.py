"""Write docs/rules/ID.md and docs/rules/index.md from rules/*.yaml (tests check they are in sync)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from apachetune.lint.docs import rule_page  # noqa: E402
from apachetune.lint.metadata import all_rules  # noqa: E402


def expected() -> dict[Path, str]:
    out = {}
    rules = all_rules()
    index = ["# apachetune rules", "", "Generated from `rules/*.yaml` by `tools/gen_rule_docs.py`.", "",
             "| id | severity | name | title |", "|---|---|---|---|"]
    for meta in rules.values():
        out[ROOT / "docs" / "rules" / f"{meta.id}.md"] = rule_page(meta)
        index.append(f"| [{meta.id}]({meta.id}.md) | {meta.severity} | `{meta.name}` | {meta.title} |")
    out[ROOT / "docs" / "rules" / "index.md"] = "\n".join(index) + "\n"
    return out


def main() -> int:
    for path, text in expected().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
