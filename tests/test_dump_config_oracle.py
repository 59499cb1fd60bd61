"""Differential test: the effective configuration we compute equals what real httpd reads.

For every fixture tree, `apache2 -t -D DUMP_CONFIG` (mod_info) prints the configuration after
includes, defines and conditionals, with file and line of every directive; our resolver must
print exactly the same. Only what httpd needs in order to run here is adapted in a temporary
copy: ServerRoot, and User/Group (as root httpd needs a real account).
"""

import re
import shutil
from pathlib import Path

import pytest

from apachetune import httpd
from apachetune.config.envvars import read_envvars
from apachetune.config.resolver import ResolveOptions, resolve
from httpd_oracle import CORPUS, ROOT, dump_config, needs_httpd, render_upstream

pytestmark = [needs_httpd, pytest.mark.httpd]

TREES = {
    "debian": "apache2.conf",
    "rhel": "conf/httpd.conf",
    "edge": "main.conf",
}


def copy_tree(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, symlinks=True)
    return dest


def adapt(main: Path, root: Path) -> None:
    (root / "logs").mkdir(exist_ok=True)  # the default ErrorLog directory must exist
    text = main.read_text()
    text = re.sub(r"(?mi)^ServerRoot .*$", f'ServerRoot "{root}"', text)
    text = re.sub(r"(?mi)^User \w+$", "User nobody", text)
    text = re.sub(r"(?mi)^Group \w+$", "Group nogroup", text)
    main.write_text(text)


def env_for(root: Path) -> dict[str, str]:
    envvars = root / "envvars"
    env = read_envvars(envvars) if envvars.exists() else {}
    env.update({"APACHE_RUN_USER": "nobody", "APACHE_RUN_GROUP": "nogroup"})
    return env


def assert_same(main: Path, root: Path, env: dict[str, str]) -> None:
    expected = dump_config(main, root, env)
    ours = resolve(main, ResolveOptions(server_root=str(root), env=env, use_env_file=False))
    assert ours.dump_config() == expected


@pytest.mark.parametrize("name", sorted(TREES))
def test_fixture_tree_matches_httpd(name, tmp_path):
    root = copy_tree(ROOT / "fixtures" / "trees" / name, tmp_path / name)
    main = root / TREES[name]
    adapt(main, root)
    assert_same(main, root, env_for(root))


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
