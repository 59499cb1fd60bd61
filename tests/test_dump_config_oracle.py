"""Differential test: the effective configuration we compute equals what real httpd reads.

For every fixture tree, `apache2 -t -D DUMP_CONFIG` (mod_info) prints the configuration after
includes, defines and conditionals, with file and line of every directive; our resolver must
print exactly the same. Only what httpd needs in order to run here is adapted in a temporary
copy: ServerRoot, and User/Group (as root httpd needs a real account).
"""

import os
import re
import shutil
from pathlib import Path

import pytest

from apachetune import httpd
from apachetune.config.envvars import read_envvars
from apachetune.config.resolver import ResolveOptions, resolve
from httpd_oracle import CORPUS, MODULES_DIR, ROOT, dump_config, needs_httpd, render_upstream

pytestmark = [needs_httpd, pytest.mark.httpd]

TREES = {
    "debian": "apache2.conf",
    "rhel": "conf/httpd.conf",
    "edge": "main.conf",
    "alpine": "httpd.conf",
    "suse": "httpd.conf",
    "gentoo": "httpd.conf",
    "official-image": "conf/httpd.conf",
    "source-build": "conf/httpd.conf",
}

# Trees whose files name each other by absolute path: where the distribution installs them.
INSTALLED_AT = {"alpine": "/etc/apache2", "suse": "/etc/apache2", "gentoo": "/etc/apache2", "official-image": "/usr/local/apache2",
                "source-build": "/opt/httpd-2.4"}

# The MPM a tree's httpd has compiled in (no LoadModule in the tree): Debian's apache2 must load it.
COMPILED_IN_MPM = {"suse": "prefork", "gentoo": "event", "source-build": "event"}

# What Debian's apache2 compiles in: a tree's LoadModule of these would be refused as built-in.
_DEBIAN_BUILTIN = ("log_config", "version", "unixd", "logio", "watchdog")


def copy_tree(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, symlinks=True)
    return dest


def _docroot(root: Path, path: str) -> str:
    """httpd -t refuses a DocumentRoot that is not a directory: one under `root` when absent here."""
    if os.path.isdir(path):
        return f'"{path}"'
    moved = root / "docroots" / path.lstrip("/")
    moved.mkdir(parents=True, exist_ok=True)
    return f'"{moved}"'


def adapt(main: Path, root: Path) -> None:
    """Make a tree run on this machine's apache2 as its own httpd would run it: its absolute
    paths moved under `root`, ServerRoot there, modules from this machine, an account that
    exists. Everything else is left as the distribution wrote it."""
    (root / "logs").mkdir(exist_ok=True)  # the default ErrorLog directory must exist
    name = root.name  # the copy is named after its tree
    installed = INSTALLED_AT.get(name)
    if not (root / "modules").exists() and not (root / "modules").is_symlink():
        (root / "modules").symlink_to(MODULES_DIR)
    for conf in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()
                       and (p.suffix == ".conf" or p == main)):
        text = conf.read_text()
        if installed:
            text = text.replace(installed + "/", f"{root}/").replace(f'"{installed}"', f'"{root}"')
        text = re.sub(r"/usr/lib(?:64)?/apache2-\w+/", f"{MODULES_DIR}/", text)  # SUSE's per-MPM dirs
        text = re.sub(r"(?mi)^(\s*)User \w[\w-]*$", r"\1User nobody", text)
        text = re.sub(r"(?mi)^(\s*)Group \w[\w-]*$", r"\1Group nogroup", text)
        text = re.sub(rf"(?m)^(\s*LoadModule ({'|'.join(_DEBIAN_BUILTIN)})_module )", r"#\1", text)
        text = re.sub(r'(?m)^(\s*DocumentRoot\s+)"?(/[^"\s]*)"?', lambda m: m.group(1) + _docroot(root, m.group(2)),
                      text)
        conf.write_text(text)
    text = main.read_text()
    text = re.sub(r"(?mi)^ServerRoot .*$", f'ServerRoot "{root}"', text)
    mpm = COMPILED_IN_MPM.get(name)
    if mpm:  # what the tree's own binary has linked in
        text = f"LoadModule mpm_{mpm}_module {MODULES_DIR}/mod_mpm_{mpm}.so\n" + text
    main.write_text(text)


def env_for(root: Path) -> dict[str, str]:
    envvars = root / "envvars"
    env = read_envvars(envvars) if envvars.exists() else {}
    env.update({"APACHE_RUN_USER": "nobody", "APACHE_RUN_GROUP": "nogroup"})
    return env


def assert_same(main: Path, root: Path, env: dict[str, str], defines: tuple[str, ...] = ()) -> None:
    expected = dump_config(main, root, env, defines)
    ours = resolve(main, ResolveOptions(server_root=str(root), env=env, use_env_file=False, defines=list(defines)))
    assert ours.dump_config() == expected


@pytest.mark.parametrize("name", sorted(TREES))
def test_fixture_tree_matches_httpd(name, tmp_path):
    root = copy_tree(ROOT / "fixtures" / "trees" / name, tmp_path / name)
    main = root / TREES[name]
    adapt(main, root)
    assert_same(main, root, env_for(root))


def test_gentoo_tree_as_its_init_script_starts_it_matches_httpd(tmp_path):
    """Gentoo's tree switches modules, mod_info's page, languages and the default vhost on with
    -D names from APACHE2_OPTS: read with the installed defaults (and SSL's, STATUS's and
    USERDIR's), it is what httpd reads with them."""
    root = copy_tree(ROOT / "fixtures" / "trees" / "gentoo", tmp_path / "gentoo")
    main = root / TREES["gentoo"]
    adapt(main, root)
    for defines in (("DEFAULT_VHOST", "INFO", "LANGUAGE"), ("DEFAULT_VHOST", "STATUS", "USERDIR", "SSL")):
        assert_same(main, root, env_for(root), defines)


def test_debian_apache_arguments_are_read_as_apache2ctl_passes_them(tmp_path):
    """apache2ctl starts `apache2 ${APACHE_ARGUMENTS}`, exported from envvars: its -D names switch
    <IfDefine> blocks, and the tree read with envvars is httpd's with those names."""
    root = copy_tree(ROOT / "fixtures" / "sample", tmp_path / "sample")
    with (root / "envvars").open("a") as f:
        f.write("export APACHE_ARGUMENTS='-D TUNED -DHARDENED -e info'\n")
    main = root / "apache2.conf"
    main.write_text(main.read_text() + "<IfDefine TUNED>\nKeepAliveTimeout 2\n</IfDefine>\n"
                    "<IfDefine !HARDENED>\nServerTokens Full\n</IfDefine>\n")
    env = read_envvars(root / "envvars")  # what apache2ctl exports; our reading takes envvars itself
    expected = dump_config(main, root, env, ("TUNED", "HARDENED"))
    ours = resolve(main, ResolveOptions(server_root=str(root), env=env))
    assert ours.init_defines and ours.init_defines.names == ("TUNED", "HARDENED")
    assert ours.init_defines.variable == "APACHE_ARGUMENTS" and ours.dump_config() == expected
    assert "KeepAliveTimeout 2" in expected and "ServerTokens Full" not in expected


def test_bundled_sample_matches_httpd(tmp_path):
    root = copy_tree(ROOT / "fixtures" / "sample", tmp_path / "sample")
    assert_same(root / "apache2.conf", root, env_for(root))


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
@pytest.mark.parametrize("with_mpm_conf", [True, False], ids=["upstream+httpd-mpm", "official-image"])
def test_upstream_default_config_matches_httpd(tmp_path, with_mpm_conf):
    main = render_upstream(tmp_path / "apache2", with_mpm_conf=with_mpm_conf)
    assert_same(main, tmp_path / "apache2", {})


@pytest.mark.skipif(not Path("/etc/apache2/apache2.conf").exists(), reason="no /etc/apache2")
def test_installed_debian_tree_matches_httpd(tmp_path):
    root = copy_tree(Path("/etc/apache2"), tmp_path / "etc-apache2")
    assert_same(root / "apache2.conf", root, env_for(root))


@needs_httpd
@pytest.mark.parametrize("defines", [
    "Define X one\nDefine X\n",  # a later Define without a value keeps the value
    "Define X one\nUndefine X\nDefine X\n",
    "Define X\nDefine X two\n",
    "Define X one\nDefine X two\n",
])
def test_define_sequences_match_httpd(tmp_path, defines):
    main = tmp_path / "httpd.conf"
    main.write_text(f"{httpd.load_module_line('mpm_event')}\nServerName x\nErrorLog {tmp_path}/e.log\n"
                    f"{defines}ServerAdmin ${{X}}@example.com\n<IfDefine X>\nServerTokens Prod\n</IfDefine>\n")
    assert_same(main, tmp_path, {})
