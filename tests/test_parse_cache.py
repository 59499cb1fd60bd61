"""The parse cache: a hit gives the same tree, a changed file is parsed again. It serves the
pure-Python parser; with the C parser a parse is faster than the cache, which then stays out."""

import pytest

from apachetune.config import cache, native
from apachetune.config.parser import parse_text
from apachetune.config.resolver import ResolveOptions, resolve


@pytest.fixture(autouse=True)
def pure_python(request, monkeypatch):
    if "with_c" in request.node.name:
        yield
        return
    monkeypatch.setenv("APACHETUNE_PURE_PYTHON", "1")
    native.fastlex.cache_clear()
    yield
    monkeypatch.delenv("APACHETUNE_PURE_PYTHON")
    native.fastlex.cache_clear()


def test_with_c_parser_the_cache_stays_out(tmp_path, monkeypatch):
    if native.fastlex() is None:
        pytest.skip("no C parser here")
    monkeypatch.setenv("APACHETUNE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("APACHETUNE_NO_CACHE", raising=False)
    data = b"Timeout 30\n"
    cache.store("x.conf", data, parse_text(data, "x.conf"))
    assert cache.load("x.conf", data) is None
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.json"))


def test_cache_round_trip_and_invalidation(tmp_path, monkeypatch):
    monkeypatch.setenv("APACHETUNE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("APACHETUNE_NO_CACHE", raising=False)
    conf = tmp_path / "a.conf"
    data = b"<IfModule x>\nListen 1\n</IfModule>\nTimeout 30\n"
    conf.write_bytes(data)
    path = str(conf)
    assert cache.load(path, data) is None
    cache.store(path, data, parse_text(data, path))
    hit = cache.load(path, data)
    assert hit is not None and hit.to_bytes() == data and hit.children[0].children[0].args == ["1"]
    assert hit.children[0].children[0].parent is hit.children[0]
    # Same size, different content: not a hit.
    assert cache.load(path, data.replace(b"30", b"31")) is None
    # Through the resolver: editing the file changes the result, whatever the timestamps.
    assert resolve(conf, ResolveOptions(env={})).get("Timeout").args == ["30"]
    conf.write_bytes(data.replace(b"30", b"31"))
    assert resolve(conf, ResolveOptions(env={})).get("Timeout").args == ["31"]


def test_cache_can_be_disabled(tmp_path, monkeypatch):
    monkeypatch.setenv("APACHETUNE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("APACHETUNE_NO_CACHE", "1")
    data = b"Timeout 30\n"
    cache.store("x.conf", data, parse_text(data, "x.conf"))
    assert cache.load("x.conf", data) is None


def _same_tree(a, b) -> bool:
    from apachetune.config.cache import _encode

    return [_encode(n) for n in a.children] == [_encode(n) for n in b.children]


def test_cached_tree_equals_a_fresh_parse_on_real_configs(tmp_path, monkeypatch):
    """Every field of every node survives the JSON round trip (the corpus and fixture trees)."""
    from pathlib import Path

    monkeypatch.setenv("APACHETUNE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("APACHETUNE_NO_CACHE", raising=False)
    root = Path(__file__).resolve().parents[1]
    files = [p for p in (root / "fixtures").rglob("*.conf") if p.is_file() and not p.is_symlink()]
    files += sorted((root.parent / "shared" / "corpus").glob("*.conf"))
    assert len(files) > 50
    for p in files:
        data = p.read_bytes()
        try:
            fresh = parse_text(data, str(p))
        except Exception:
            continue  # the broken fixtures do not parse: nothing to cache
        cache.store(str(p), data, fresh)
        hit = cache.load(str(p), data)
        assert hit is not None and _same_tree(hit, fresh) and hit.render() == data, p


def test_a_planted_pickle_or_foreign_entry_runs_nothing(tmp_path, monkeypatch):
    import os
    import pickle

    monkeypatch.setenv("APACHETUNE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("APACHETUNE_NO_CACHE", raising=False)
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    conf = tmp_path / "a.conf"
    data = b"Timeout 30\n"
    conf.write_bytes(data)
    d = cache._dir()
    # The old (pickle) layout and the new one, planted with what the keys would be.
    old = tmp_path / "cache" / "parsed"
    old.mkdir()
    (old / "anything.pickle").write_bytes(pickle.dumps(Evil()))
    (d / f"{cache._key(str(conf), data)}.json").write_bytes(pickle.dumps(Evil()))
    assert resolve(conf, ResolveOptions(env={})).get("Timeout").args == ["30"]
    assert not marker.exists()


def test_cache_dir_must_be_private(tmp_path, monkeypatch):
    import os

    monkeypatch.setenv("APACHETUNE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("APACHETUNE_NO_CACHE", raising=False)
    data = b"Timeout 30\n"
    d = cache._dir()
    assert d is not None and (os.stat(d).st_mode & 0o777) == 0o700
    os.chmod(d, 0o777)  # someone else could plant entries: not used at all
    assert cache._dir() is None
    cache.store("x.conf", data, parse_text(data, "x.conf"))
    assert cache.load("x.conf", data) is None
    os.chmod(d, 0o700)
    cache.store("x.conf", data, parse_text(data, "x.conf"))
    entry = next(d.iterdir())
    os.chmod(entry, 0o666)  # a world-writable entry is not trusted
    assert cache.load("x.conf", data) is None
