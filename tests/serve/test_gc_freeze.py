"""heap.settle: after a run that imported modules, cyclic garbage is collected and what is alive is frozen
(gc.get_objects() no longer lists it: full collections skip it); with no new module, nothing happens."""

import gc
import sys
import types
import weakref

from serve import gc_freeze


class Node:
    """A container the cycle collector tracks, that a weakref can watch."""

    def __init__(self):
        self.me = self


def tracked(obj) -> bool:
    """Whether a collection would walk ``obj`` (frozen objects are not in gc.get_objects())."""
    return any(o is obj for o in gc.get_objects())


def test_settle_collects_garbage_freezes_the_living_and_waits_for_new_modules(monkeypatch):
    monkeypatch.setattr(gc_freeze, "_modules_frozen", 0)
    alive, garbage = Node(), Node()
    gone = weakref.ref(garbage)
    del garbage  # a reference cycle: only the cycle collector frees it
    try:
        assert gone() is not None and tracked(alive)
        assert gc_freeze.settle() is True
        assert gone() is None  # collected before the freeze, not frozen with the rest
        assert not tracked(alive) and gc.get_freeze_count() > 0
        later = Node()
        assert gc_freeze.settle() is False  # no module imported since: no collection, no freeze
        assert tracked(later)
        monkeypatch.setitem(sys.modules, "heap_test_new_page", types.ModuleType("heap_test_new_page"))
        assert gc_freeze.settle() is True  # a page's first visit imported something: freeze again
        assert not tracked(later)
    finally:
        gc.unfreeze()  # the test process's heap back as it was
    assert tracked(alive)


def test_the_app_freezes_after_its_first_run(monkeypatch):
    """app.py settles the heap after the page has run: a fresh process (as far as heap knows) is frozen
    after one run of the decode page, so a class's full collections skip the modules it imported."""
    from bench.fresh_app import new_app

    monkeypatch.setattr(gc_freeze, "_modules_frozen", 0)
    gc.unfreeze()
    try:
        new_app()
        assert gc.get_freeze_count() > 10_000  # torch, streamlit, plotly … : far more than a page's own objects
        assert gc_freeze._modules_frozen == len(sys.modules)
    finally:
        gc.unfreeze()
