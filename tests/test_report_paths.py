"""display_path: the resolver's absolute paths shown relative to the current directory when inside it."""

import os

from hypothesis import given
from hypothesis import strategies as st

from apachetune.report.paths import _relative

_PART = st.sampled_from(["etc", "apache2", "sites", "a.conf", "x", "..", ".", "", ".hidden", "é"])


def _reference(path: str, cwd: str) -> str:
    rel = os.path.relpath(path, cwd)
    return path if rel.startswith("..") else rel


@given(st.lists(_PART, min_size=1, max_size=6), st.lists(_PART, max_size=4))
def test_the_prefix_shortcut_agrees_with_relpath(path_parts, cwd_parts):
    path = "/" + "/".join(path_parts)
    cwd = "/" + "/".join(p for p in cwd_parts if p not in ("", ".", ".."))  # as getcwd() gives it
    if os.path.normpath(path) == cwd:
        return  # a file is never the current directory
    _relative.cache_clear()
    assert _relative(path, cwd) == _reference(path, cwd)


def test_inside_outside_and_root():
    _relative.cache_clear()
    assert _relative("/srv/conf/sites/a.conf", "/srv/conf") == "sites/a.conf"
    assert _relative("/srv/confx/a.conf", "/srv/conf") == "/srv/confx/a.conf"  # a sibling, not inside
    assert _relative("/etc/apache2/apache2.conf", "/") == "etc/apache2/apache2.conf"
    assert _relative("/srv/conf/../a.conf", "/srv") == "a.conf"  # not normal: relpath decides
