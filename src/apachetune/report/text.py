"""Human output: findings grouped by file, each with the offending line shown."""

from __future__ import annotations

from apachetune.lint.finding import LintResult
from apachetune.report.paths import display_path


def render(result: LintResult) -> str:
    out: list[str] = []
    by_file: dict[str, list] = {}
    for f in result.findings:
        by_file.setdefault(f.location.file, []).append(f)
    for path, findings in by_file.items():
        out.append(display_path(path))
        cf = result.files.get(path)
        for f in findings:
            out.append(f"  {f.location.line}:{f.location.column}  {f.severity:<7}  {f.rule}  {f.message}")
            if cf is not None:
                line = cf.line_text(f.location.line)
                if line.strip():
                    out.append(f"      | {line}")
            for r in f.related:
                out.append(f"      see {display_path(r.file)}:{r.line}:{r.column}")
        out.append("")
    version = f"httpd {result.httpd_version}" if result.httpd_version else "httpd"
    if result.mpm and result.mpm.get("startup_messages"):
        out.append(f"httpd ({result.mpm['name']} MPM) will print at start-up:")
        for m in result.mpm["startup_messages"]:
            out.append(f"  {m['code']}: {m['text']}")
        out.append("")
    s = result.summary()
    total = sum(s.values())
    out.append(f"{total} finding(s): {s['error']} error(s), {s['warning']} warning(s), {s['info']} info"
               if total else "No findings.")
    if result.mpm and result.mpm.get("compiled_in"):
        out.append(f"MPM {result.mpm['name']}: {result.mpm['compiled_in']}.")
    if result.init_defines:
        out.append(f"Read with {result.init_defines.describe()}.")
    if result.httpd_version:
        why = f" ({result.httpd_version_source})" if result.httpd_version_source else ""
        out.append(f"Checked as {version}{why}.")
    return "\n".join(out) + "\n"
