"""Each directive of rules/registry/cmd_context.yaml (its handler's ap_check_cmd_context, read from
httpd's source by tools/gen_cmd_context.py) inside each section its flags forbid, with every
shipped module loaded: lint says what `apache2 -t` says ("X cannot occur within <Y> section",
"... within directory context", "... within <Limit> or <LimitExcept> section"), and says
nothing of the kind where httpd refuses the line for another reason first."""

from __future__ import annotations

import pytest
import yaml

from apachetune import httpd
from apachetune.config.directives import lookup
from apachetune.config.resolver import ResolveOptions
from apachetune.lint.engine import LintOptions, lint_file
from apachetune.lint.settings import Settings
from apachetune.paths import rules_dir
from httpd_oracle import needs_httpd, run_httpd

TABLE = yaml.safe_load((rules_dir() / "registry" / "cmd_context.yaml").read_text())
# (the flag whose section it is, the lines before the directive, the lines after it)
PLACES = [("NOT_IN_VIRTUALHOST", "<VirtualHost *:80>", "</VirtualHost>"),
          ("NOT_IN_DIRECTORY", "<Directory /srv>", "</Directory>"),
          ("NOT_IN_DIRECTORY", "<DirectoryMatch ^/srv>", "</DirectoryMatch>"),
          ("NOT_IN_LOCATION", "<Location /x>", "</Location>"),
          ("NOT_IN_FILES", "<Files x>", "</Files>"),
          ("NOT_IN_FILES", '<If "true">', "</If>"),
          ("NOT_IN_PROXY", "<Proxy http://x/>", "</Proxy>"),
          ("NOT_IN_LIMIT", "<Location /x>\n<Limit GET>", "</Limit>\n</Location>")]
ARGS = {"FLAG": "On", "NO_ARGS": "", "TAKE2": "x y", "TAKE3": "x y z", "TAKE23": "x y", "ITERATE2": "x y"}


def _modules() -> str:
    """Every shipped module but the other MPMs (and mod_cgi beside mod_cgid)."""
    lines = []
    for so in sorted(httpd.modules_dir().glob("mod_*.so")):
        name = so.stem[4:]
        if name not in ("mpm_prefork", "mpm_worker", "cgi"):
            lines.append(f"LoadModule {name}_module {so}")
    return "\n".join(lines)


def _line(name: str) -> str | None:
    spec = lookup(name)
    if spec is None:
        return None
    if name.startswith("<"):
        return f"{name} /x>\n</{name[1:]}>"
    return f"{name} {ARGS.get(spec.kind or '', 'x')}".rstrip()


@needs_httpd
@pytest.mark.parametrize("name", sorted((n for n in TABLE if set(TABLE[n]) - {"NOT_IN_HTACCESS"}), key=str.lower))
def test_lint_and_httpd_agree_on_where_a_handler_refuses_its_directive(tmp_path, name):
    line = _line(name)
    if line is None:
        pytest.skip(f"{name}: not in this httpd's registry")
    places = [(before, after) for flag, before, after in PLACES if flag in TABLE[name]]
    assert places, name
    for before, after in places:
        conf = tmp_path / "httpd.conf"
        conf.write_text(f"{_modules()}\nServerName x\nErrorLog {tmp_path / 'e.log'}\n{before}\n{line}\n{after}\n")
        proc = run_httpd("-t", "-f", str(conf), "-d", str(tmp_path))
        said = proc.stderr.strip().splitlines()[-1].split(f"{conf}:", 1)[-1].strip() if proc.returncode else ""
        findings = lint_file(conf, LintOptions(ResolveOptions(env={}), Settings())).findings
        ours = [f.message for f in findings if "cannot occur within" in f.message]
        where = (name, before)
        if "cannot occur within" in said:
            assert any(said in m for m in ours), (where, said, ours)
        else:
            assert ours == [], (where, said, ours)


def test_an_mpm_directive_in_a_virtual_host_without_its_module(tmp_path):
    """With no MPM loaded (a compiled-in one, a lone snippet) an MPM directive in a virtual host
    is still GLOBAL_ONLY's; another MPM's directive is AT403's only (httpd: "Invalid command")."""
    none = tmp_path / "none.conf"
    none.write_text("<VirtualHost *:80>\nMaxRequestWorkers 10\n</VirtualHost>\n")
    other = tmp_path / "other.conf"
    other.write_text(f"{httpd.load_module_line('mpm_event')}\n<VirtualHost *:80>\nMaxSpareServers 10\n"
                     "MaxRequestWorkers 5\n</VirtualHost>\n")

    def said(conf):
        return [(f.rule, f.message.split(":")[0]) for f in lint_file(conf, LintOptions(ResolveOptions(env={}),
                                                                                     Settings())).findings
                if f.rule in ("AT403", "AT504")]

    assert said(none) == [("AT504", "MaxRequestWorkers cannot occur within <VirtualHost> section")]
    assert said(other) == [("AT403", "Invalid command 'MaxSpareServers', perhaps misspelled or defined by a module "
                                     "not included in the server configuration"),
                           ("AT504", "MaxRequestWorkers cannot occur within <VirtualHost> section")]


def _vhost_names() -> list[str]:
    """Directives the registry lets the server config and a virtual host hold, but no directory
    (GLOBAL_ONLY only means something for those), whose handler's own check is not in the
    generated table: the hand-kept ones (MPM directives, Listen...) and every other, which must
    then pass in a virtual host (TraceEnable was once refused by lint, not by httpd)."""
    from apachetune.config.directives import registry

    return sorted({s.name for s in registry().values() if "virtual host" in s.contexts and "directory" not in s.contexts
                   and s.name not in TABLE and not s.is_section}, key=str.lower)


@needs_httpd
def test_lint_and_httpd_agree_on_every_other_directive_in_a_virtual_host(tmp_path):
    """One configuration a directive, in a <VirtualHost>, every shipped module loaded: lint's
    "cannot occur within <VirtualHost> section" exactly where httpd's -t says it."""
    modules, disagree = _modules(), []
    for name in _vhost_names():
        line = _line(name)
        if line is None:
            continue
        conf = tmp_path / "httpd.conf"
        conf.write_text(f"{modules}\nServerName x\nErrorLog {tmp_path / 'e.log'}\n<VirtualHost *:80>\n{line}\n"
                        "</VirtualHost>\n")
        proc = run_httpd("-t", "-f", str(conf), "-d", str(tmp_path))
        lines = proc.stderr.strip().splitlines()  # (none: httpd died of a signal reading the line)
        said = lines[-1].split(f"{conf}:", 1)[-1].strip() if proc.returncode and lines else ""
        findings = lint_file(conf, LintOptions(ResolveOptions(env={}), Settings())).findings
        ours = [f.message for f in findings if "cannot occur within" in f.message]
        theirs = [said] if "cannot occur within" in said else []
        if not (any(said in m for m in ours) if theirs else ours == []):
            disagree.append((name, said, ours))
    assert not disagree, disagree
