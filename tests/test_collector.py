"""collector.paused: the collector waits while a tree is built, then the tree is old, not young
(no young collection rescans it), and it is still freed like any other garbage."""

from __future__ import annotations

import gc
import weakref

from apachetune import collector


class _Node:
    def __init__(self, parent: _Node | None = None) -> None:
        self.parent = parent  # a cycle with the parent's children, as a parsed tree has
        self.children: list[_Node] = []
        if parent is not None:
            parent.children.append(self)


def test_a_tree_built_while_paused_is_old_and_still_collectable():
    assert gc.isenabled()
    with collector.paused():
        assert not gc.isenabled()
        root = _Node()
        for _ in range(2000):
            _Node(root)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    assert gc.get_count()[0] < 100  # nothing young left for the next collection to scan
    assert any(o is root for o in gc.get_objects(generation=2))
    gone = weakref.ref(root)
    del root
    gc.collect()
    assert gone() is None  # a cycle: only the collector frees it, and it did


def test_paused_leaves_a_disabled_collector_disabled():
    gc.disable()
    try:
        with collector.paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
