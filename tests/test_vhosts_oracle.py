"""Differential test: `apachetune vhosts` prints what `apache2 -t -D DUMP_VHOSTS` prints (the
VirtualHost part of `httpd -S`), on the fixture trees and on generated virtual-host layouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apachetune import httpd
from apachetune.cli import cli
from apachetune.config.resolver import ResolveOptions, resolve
from apachetune.config.vhosts import build
from httpd_oracle import ROOT, needs_httpd, run_httpd
from test_dump_config_oracle import TREES, adapt, copy_tree, env_for

pytestmark = [needs_httpd, pytest.mark.httpd]


def httpd_vhosts(main: Path, root: Path, env: dict[str, str] | None = None) -> str:
    proc = run_httpd("-t", "-D", "DUMP_VHOSTS", "-d", str(root), "-f", str(main), env=env)
    assert "VirtualHost configuration:" in proc.stdout, proc.stderr
    return proc.stdout.replace("Syntax OK\n", "")


def ours(main: Path, root: Path, env: dict[str, str] | None = None) -> str:
    eff = resolve(main, ResolveOptions(server_root=str(root), env=env or {}, use_env_file=False))
    return build(eff).dump()


@pytest.mark.parametrize("name", sorted(TREES))
def test_fixture_trees(name, tmp_path):
    root = copy_tree(ROOT / "fixtures" / "trees" / name, tmp_path / name)
    main = root / TREES[name]
    adapt(main, root)
    env = env_for(root)
    assert ours(main, root, env) == httpd_vhosts(main, root, env)


@pytest.mark.skipif(not Path("/etc/apache2/apache2.conf").exists(), reason="no /etc/apache2")
def test_installed_debian_tree(tmp_path):
    root = copy_tree(Path("/etc/apache2"), tmp_path / "etc-apache2")
    env = env_for(root)
    assert ours(root / "apache2.conf", root, env) == httpd_vhosts(root / "apache2.conf", root, env)


ADDRESSES = ["*", "*:80", "*:443", "*:*", "_default_:80", "127.0.0.1", "127.0.0.1:80", "127.0.0.1:*",
             "10.0.0.1:80", "10.0.0.1:443", "10.0.0.2:80", "192.168.1.1:8080", "[::1]:80"]
NAMES = ["a.example", "b.example", "www.a.example", "*.a.example", "c?.example"]

vhost = st.fixed_dictionaries({
    "addrs": st.lists(st.sampled_from(ADDRESSES), min_size=1, max_size=3),
    "name": st.one_of(st.none(), st.sampled_from(NAMES[:3]), st.sampled_from(["x.example:8080"])),
    "aliases": st.lists(st.sampled_from(NAMES), max_size=3),
})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(main_name=st.sampled_from(["", "ServerName main.example\n", "ServerName main.example:8080\n"]),
       hosts=st.lists(vhost, min_size=1, max_size=6))
def test_generated_layouts(tmp_path, main_name, hosts):
    conf = tmp_path / "vh.conf"
    text = [f"{httpd.load_module_line('mpm_event')}",
            main_name.rstrip("\n"), "Listen 127.0.0.1:8080", "User nobody", f"ErrorLog {tmp_path}/error.log"]
    for h in hosts:
        text.append(f"<VirtualHost {' '.join(h['addrs'])}>")
        if h["name"]:
            text.append(f"    ServerName {h['name']}")
        if h["aliases"]:
            text.append(f"    ServerAlias {' '.join(h['aliases'])}")
        text.append("</VirtualHost>")
    conf.write_text("\n".join(text) + "\n")
    assert ours(conf, tmp_path) == httpd_vhosts(conf, tmp_path)


def test_json_has_findings_per_vhost(tmp_path):
    conf = tmp_path / "site.conf"
    conf.write_text(f"{httpd.load_module_line('mpm_event')}\n"
                    "ServerName main.example\nListen 127.0.0.1:8080\n"
                    "<VirtualHost *:80>\n    ServerName a.example\n    HostnameLookups On\n</VirtualHost>\n"
                    "<VirtualHost *:80>\n    ServerName b.example\n</VirtualHost>\n")
    result = CliRunner().invoke(cli, ["vhosts", str(conf), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    (chain,) = data["addresses"]
    assert chain["address"] == "*:80" and chain["name_based"] and chain["default_server"]["name"] == "a.example"
    by_name = {v["name"]: v for v in data["virtual_hosts"]}
    assert [f["rule"] for f in by_name["a.example"]["findings"]] == ["AT601"]
    assert by_name["a.example"]["findings"][0]["line"] == 6
    assert by_name["b.example"]["findings"] == []
