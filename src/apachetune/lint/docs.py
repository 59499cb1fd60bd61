"""Rule pages (docs/rules/ID.md), generated from rules/*.yaml; `apachetune explain` prints the same."""

from __future__ import annotations

from apachetune.lint.metadata import RuleMeta


def rule_page(meta: RuleMeta) -> str:
    lines = [f"# {meta.id}: {meta.title}", "",
             f"- name: `{meta.name}`", f"- default severity: {meta.severity}",
             f"- groups: {', '.join(meta.groups)}",
             f"- fixable: {'yes (the finding carries new values)' if meta.fixable else 'no'}"]
    if meta.httpd_codes:
        lines.append(f"- httpd messages: {', '.join(meta.httpd_codes)}")
    lines += ["", "## Why", "", meta.rationale, "", "## How to fix", "", meta.fix, ""]
    if meta.examples:
        lines += ["## Example", ""]
        if "bad" in meta.examples:
            lines += ["Triggers the rule:", "", "```apache", meta.examples["bad"].rstrip(), "```", ""]
        if "good" in meta.examples:
            lines += ["Does not:", "", "```apache", meta.examples["good"].rstrip(), "```", ""]
    lines += ["## Fixtures", "", f"`fixtures/rules/{meta.id}/` holds a configuration that triggers it "
              "(`bad*.conf`) and one that does not (`good*.conf`).", ""]
    if meta.references:
        lines += ["## References", ""] + [f"- {r}" for r in meta.references] + [""]
    lines += [f"Silence it on one line with `# apachetune: disable={meta.id}` on the line above, or "
              f"for a file with `# apachetune: disable-file={meta.id}`.", ""]
    return "\n".join(lines)
