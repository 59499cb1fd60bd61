"""Rules whose claim httpd itself can confirm, checked against the real apache2."""

from __future__ import annotations

from pathlib import Path

from apachetune import httpd
from httpd_oracle import needs_httpd, run_httpd, startup_messages

ROOT = Path(__file__).resolve().parents[1]


@needs_httpd
def test_at706_matches_httpds_ah00558(tmp_path):
    """AT706 fires exactly when httpd prints AH00558 (no global ServerName)."""
    from apachetune.config.resolver import ResolveOptions
    from apachetune.lint.engine import LintOptions, lint
    from apachetune.lint.settings import Settings

    for name, server_name in (("bad", ""), ("good", "ServerName www.example.com:80\n")):
        conf = tmp_path / f"{name}.conf"
        conf.write_text(f"{httpd.load_module_line('mpm_event')}\n"
                        f"{server_name}Listen 127.0.0.1:8080\nUser nobody\n")
        proc = run_httpd("-t", "-f", str(conf), "-d", str(tmp_path))
        httpd_says = "AH00558" in [code for code, _ in startup_messages(proc.stderr)]
        ours = "AT706" in [f.rule for f in lint(str(conf), LintOptions(ResolveOptions(), Settings())).findings]
        assert ours == httpd_says == (name == "bad"), (name, proc.stderr)
