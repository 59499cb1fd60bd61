"""The C line splitter (config/fastlex.c) builds exactly the tree the Lark path builds, or hands
the file back; the build on first use; the pure-Python switch."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apachetune.config import native
from apachetune.config.lark_parser import parse_children
from apachetune.config.parser import SharedWords, _decode, parse_text
from apachetune.config.tree import Section
from apachetune.errors import ConfigSyntaxError
from test_parser import config as generated_config
from test_parser import real_files

HAVE_TOOLCHAIN = bool(shutil.which("cc")) and (Path(sysconfig.get_paths()["include"]) / "Python.h").exists()


def fast():
    module = native.fastlex()
    if module is None:
        pytest.skip("no C module here (no cc or no Python headers)")
    return module


def shape(nodes):
    """Every field of every node, parents named, recursively: two trees equal iff this is."""
    out = []
    for n in nodes:
        fields = {f.name: getattr(n, f.name) for f in dataclasses.fields(n)
                  if f.name not in ("parent", "children")}
        parent = n.parent
        fields["kind"] = type(n).__name__
        fields["parent"] = (parent.name, parent.start) if isinstance(parent, Section) else None
        out.append(fields)
        if isinstance(n, Section):
            out.append(shape(n.children))
    return out


def same_or_handed_back(text: str, name: str = "t.conf") -> bool:
    """The C module's answer is the Lark path's tree, or None; True when it answered."""
    ours = fast().parse(text, name)
    try:
        reference = parse_children(text, name)
    except ConfigSyntaxError:
        assert ours is None, "the C module accepted what httpd (and the Lark path) refuses"
        return False
    if ours is None:
        return False
    for node in reference:
        node.parent = None  # parse_children leaves the top level's parent for parse_text to set
    assert shape(ours) == shape(reference)
    # shared, not copied: the file name and the directive names (interned)
    assert all(n.file is name for n in ours)
    return True


@pytest.mark.skipif(not HAVE_TOOLCHAIN, reason="needs cc and Python's headers")
def test_the_c_module_is_built_and_used_where_it_can_be():
    assert native.fastlex() is not None
    cf = parse_text("ServerName a\n<IfModule x>\n  Listen 80\n</IfModule>\n")
    assert [type(n).__name__ for n in cf.children] == ["Directive", "Section"]


def test_real_configurations_give_the_same_tree():
    answered = 0
    for path in real_files():
        text = _decode(path.read_bytes())
        if text:
            answered += same_or_handed_back(text, str(path))
    assert answered > 0.8 * len(real_files())  # the C module does the common files itself


CASES = [
    "ServerName a\n",
    "ServerName a",  # no newline at the end
    "  Listen 127.0.0.1:80 \t\r\n",
    "# comment \\\ncontinued\nListen 80\n",
    "Header set X \"a \\\"b\\\" c\" 'd\\'e' f\\\\g\n",
    'LogFormat "%h \\"%r\\"" combined\n',
    "Alias /x \\\n   /y\nKeepAlive On\\\n",  # a continuation, and one at the end of the file
    "RewriteRule ^/(.*)\\.php$ /index.php [L]\n",
    "<Directory \"/var/www\">\n  Options -Indexes\n</directory>\n",
    "<IfModule mod_x.c>\n<VirtualHost *:80>\nServerName a\n</VirtualHost>\n</IfModule>\n",
    "<Location />\n</Location>\n<Location / >x\n</Location> x y\n",
    "<Foo>\n</Foo>\n<>\n</>\n",
    "\ufeffServerName b\n<Files \"\u00e9\u4e2d\">\nRequire all denied\n</Files>\n",
    "Listen\t\v\f80\n\n\r\n   \n",
    "Include \udcff.conf\n",
    "<If \"%{HTTP_HOST} == 'x'\">\nRequire all granted\n</If>\n",
    "Define X\nServerName ${X}\n",
    "\\\nServerName a\n",
    "x\\\r\ny\r\n",
]


@pytest.mark.parametrize("text", CASES)
def test_edge_cases_give_the_same_tree(text):
    assert same_or_handed_back(text)


HANDED_BACK = [
    "<IfModule x>\nListen 80\n",  # open at the end: the resolver decides (or it is an error)
    "<Directory /x>\n",
    "</Directory>\n",
    "<Directory /x>\n</Location>\n",
    "<Directory /x\n</Directory>\n",
    "\"Quoted\" directive\n",
    "Na\\me x\n",
    "<D\u00e9>\n</d\u00c9>\n",  # a tag name Python lower-cases (non-ASCII)
]


@pytest.mark.parametrize("text", HANDED_BACK)
def test_what_only_python_handles_is_handed_back(text):
    assert fast().parse(text, "t.conf") is None
    try:
        cf = parse_text(text, "t.conf")  # and the Lark path answers: a tree or httpd's error
    except ConfigSyntaxError as e:
        assert e.position.file == "t.conf"
    else:
        assert cf.to_bytes() == text.encode("utf-8", "surrogateescape")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(generated_config())
def test_generated_configurations_give_the_same_tree(text):
    same_or_handed_back(text)


@settings(max_examples=600, deadline=None)
@given(st.text(alphabet="<>/ \n\\\"'#aIfD\r\t\v\u00e9\udcff", max_size=120))
def test_character_soup_gives_the_same_tree_or_is_handed_back(text):
    if text:
        same_or_handed_back(text)


def test_pure_python_switch(monkeypatch):
    text = "ServerName a\n<Directory /x>\nOptions None\n</Directory>\n"
    with_c = shape(parse_text(text).children)
    monkeypatch.setenv("APACHETUNE_PURE_PYTHON", "1")
    native.fastlex.cache_clear()
    try:
        assert native.fastlex() is None
        assert shape(parse_text(text).children) == with_c
    finally:
        monkeypatch.delenv("APACHETUNE_PURE_PYTHON")
        native.fastlex.cache_clear()


@pytest.mark.skipif(not HAVE_TOOLCHAIN, reason="needs cc and Python's headers")
def test_build_on_first_use_then_reuse_and_a_failed_build_is_not_retried(tmp_path, monkeypatch):
    calls = tmp_path / "calls"
    cc = tmp_path / "cc"
    cc.write_text(f"#!/bin/sh\necho x >> {calls}\nexec {shutil.which('cc')} \"$@\"\n")
    cc.chmod(0o755)
    place = tmp_path / "place"
    monkeypatch.setattr(native, "_places", lambda: [place])
    monkeypatch.setenv("CC", str(cc))
    built = native._find_or_build()
    assert built is not None and built.parent == place
    assert native._find_or_build() == built  # found, not rebuilt
    assert calls.read_text().count("x") == 1
    module = native._load(built)
    assert hasattr(module, "parse")

    refusing = tmp_path / "refusing"
    refusing.write_text(f"#!/bin/sh\necho x >> {calls}\necho 'no, thanks' >&2\nexit 1\n")
    refusing.chmod(0o755)
    monkeypatch.setenv("CC", str(refusing))
    monkeypatch.setattr(native, "_places", lambda: [tmp_path / "other"])
    assert native._find_or_build() is None
    assert native._find_or_build() is None
    assert calls.read_text().count("x") == 2  # the failure was noted, not retried
    assert "no, thanks" in next((tmp_path / "other").glob("*.failed")).read_text()


def test_node_classes_it_does_not_know_are_refused():
    from apachetune.config.tree import Blank, Comment, Directive

    module = fast()
    fields = lambda cls: tuple(f.name for f in dataclasses.fields(cls))  # noqa: E731
    bad = ((Blank, fields(Blank)), (Comment, fields(Comment)), (Directive, fields(Directive)),
           (Section, fields(Section)[:-1]))
    try:
        with pytest.raises(ValueError, match="Section has"):
            module.configure(bad, lambda s: s)
    finally:
        native.fastlex.cache_clear()  # configure() again for the tests after this one
        assert native.fastlex() is not None


def test_lint_of_a_plain_tree_never_loads_lark(tmp_path):
    conf = tmp_path / "httpd.conf"
    conf.write_text("ServerRoot /tmp\nListen 127.0.0.1:8080\n<Directory />\nRequire all denied\n"
                    "</Directory>\n")
    code = ("import sys, apachetune.cli as c; sys.argv=['apachetune','lint',sys.argv[1]]\n"
            "try: c._run()\nexcept SystemExit: pass\nprint('lark' in sys.modules)")
    env = {**os.environ, "APACHETUNE_NO_CACHE": "1"}
    out = subprocess.run([sys.executable, "-c", code, str(conf)], capture_output=True, text=True, env=env)
    if native.fastlex() is None:
        pytest.skip("no C module here")
    assert out.stdout.strip().splitlines()[-1] == "False", out.stdout + out.stderr


SANITIZED_RUN = r"""
import dataclasses, random, sys
from pathlib import Path
from apachetune.config import native
from apachetune.config.lark_parser import parse_children
from apachetune.config.parser import _decode, _logical
from apachetune.config.tree import Blank, Comment, Directive, Section
from apachetune.errors import ConfigSyntaxError
module = native._load(Path(sys.argv[1]))
module.configure(tuple((c, tuple(f.name for f in dataclasses.fields(c)))
                       for c in (Blank, Comment, Directive, Section)), _logical)
answered = 0
for name in sys.argv[2:]:
    text = _decode(Path(name).read_bytes())
    answered += bool(text) and module.parse(text, name) is not None
alphabet = "<>/ \n\\\"'#aIfD\r\t\v\u00e9\udcff\u4e2d"
rng = random.Random(16)
for _ in range(20000):
    module.parse("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60))), "soup.conf")
print("answered", answered)
"""


@pytest.mark.skipif(not HAVE_TOOLCHAIN, reason="needs cc and Python's headers")
def test_clean_under_address_and_undefined_behaviour_sanitizers(tmp_path):
    """The C parser on every real file and 20,000 random texts, under ASan + UBSan: any
    out-of-bounds read, use after free or undefined behaviour aborts the run."""
    libs = []
    for lib in ("libasan.so", "libubsan.so"):
        found = subprocess.run(["cc", f"-print-file-name={lib}"], capture_output=True, text=True).stdout.strip()
        if not os.path.isabs(found):
            pytest.skip(f"this compiler has no {lib}")
        libs.append(found)
    so = tmp_path / "_fastlex-asan.so"
    include = sysconfig.get_paths()["include"]
    build = subprocess.run(["cc", "-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                            "-fno-omit-frame-pointer", "-shared", "-fPIC", "-std=c11", f"-I{include}",
                            "-o", str(so), str(native.SOURCE)], capture_output=True, text=True)
    if build.returncode != 0:
        pytest.skip(f"this compiler cannot build with sanitizers: {build.stderr[-300:]}")
    files = [str(p) for p in real_files()]
    env = {**os.environ, "LD_PRELOAD": ":".join(libs), "ASAN_OPTIONS": "detect_leaks=0",
           "UBSAN_OPTIONS": "halt_on_error=1"}
    run = subprocess.run([sys.executable, "-c", SANITIZED_RUN, str(so), *files], capture_output=True,
                         text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "ERROR: AddressSanitizer" not in run.stderr and "runtime error" not in run.stderr
    assert int(run.stdout.split()[-1]) > 0.8 * len(files)


def test_the_files_of_one_tree_share_their_words_and_argument_lists():
    fast()
    shared = SharedWords()
    vhost = '<Directory "/srv/a">\n    Options -Indexes\n    Require all granted\n</Directory>\n'
    one = parse_text(vhost, "a.conf", shared).children
    two = parse_text(vhost.replace("/srv/a", "/srv/b"), "b.conf", shared).children
    # the same line in two files: one list; the same word in two lists: one string
    assert one[0].children[0].args is two[0].children[0].args == ["-Indexes"]
    assert one[0].args == ["/srv/a"] and two[0].args == ["/srv/b"]
    alone = parse_text(vhost, "c.conf").children  # no table: equal, never the same objects
    assert alone[0].children[0].args == one[0].children[0].args
    assert alone[0].children[0].args is not one[0].children[0].args
    require = one[0].children[1].args
    assert parse_text("Require all denied\n", "d.conf", shared).children[0].args[0] is require[0]
