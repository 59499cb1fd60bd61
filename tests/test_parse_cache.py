"""The parse cache: a hit gives the same tree, a changed file is parsed again."""

from apachetune.config import cache
from apachetune.config.parser import parse_text
from apachetune.config.resolver import ResolveOptions, resolve


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
