"""Rule pages (docs/rules/ID.md), generated from rules/*.yaml; `apachetune explain` prints the same."""

from __future__ import annotations

from apachetune.lint.fixtures import rule_fixtures
from apachetune.lint.metadata import RuleMeta

KIND_TITLES = {"bad": "Triggers the rule", "good": "Does not trigger it (a near miss)",
               "suppressed": "Suppressed by a comment"}


def fixture_examples(meta: RuleMeta) -> list[str]:
    """Each fixture with what lint reports on it (the pinned findings), for the rule page."""
    lines: list[str] = []
    for fx in rule_fixtures(meta.id):
        rel = f"fixtures/rules/{meta.id}/{fx.path.name}"
        lines += [f"{KIND_TITLES[fx.kind]}: `{rel}`", "", "```apache",
                  fx.path.read_text(encoding="utf-8", errors="replace").rstrip(), "```", ""]
        for f in fx.expected() or []:
            where = f"{f['file']}:" if "file" in f else ""
            lines.append(f"- reports `{where}{f['line']}:{f['column']}` {f['message']}")
        if fx.expected():
            lines.append("")
    return lines


def rule_page(meta: RuleMeta) -> str:
    lines = [f"# {meta.id}: {meta.title}", "",
             f"- name: `{meta.name}`", f"- default severity: {meta.severity}",
             f"- groups: {', '.join(meta.groups)}",
             f"- fixable: {'yes (the finding carries new values)' if meta.fixable else 'no'}"]
    if meta.httpd_codes:
        lines.append(f"- httpd messages: {', '.join(meta.httpd_codes)}")
    lines += ["", "## Why", "", meta.rationale, "", "## How to fix", "", meta.fix, ""]
    if meta.options:
        lines += ["## Options", "", "| option | default | meaning |", "|---|---|---|"]
        lines += [f"| `{o.name}` | {o.default} | {o.description} |" for o in meta.options.values()]
        example = next(iter(meta.options.values()))
        lines += ["", "Set in `.apachetune.yaml`:", "", "```yaml", "rules:",
                  f"  {meta.id}: {{options: {{{example.name}: {example.default}}}}}", "```", ""]
    if meta.examples:
        lines += ["## Example", ""]
        if "bad" in meta.examples:
            lines += ["Triggers the rule:", "", "```apache", meta.examples["bad"].rstrip(), "```", ""]
        if "good" in meta.examples:
            lines += ["Does not:", "", "```apache", meta.examples["good"].rstrip(), "```", ""]
    lines += ["## Fixtures", "", f"`fixtures/rules/{meta.id}/` holds configurations that trigger it "
              "(`bad*.conf`, each with its findings pinned in `bad*.expected.yaml`) and ones that do not "
              "(`good*.conf`, `suppressed*.conf`).", ""]
    lines += fixture_examples(meta)
    if meta.references:
        lines += ["## References", ""] + [f"- {r}" for r in meta.references] + [""]
    lines += [f"Silence it on one line with `# apachetune: disable={meta.id}` on the line above, or "
              f"for a file with `# apachetune: disable-file={meta.id}`.", ""]
    return "\n".join(lines)
