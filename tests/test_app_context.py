"""App tests of the context-window page."""

from tests.app_util import charts, new_app


def _bytes_curve(at):
    return next(c for c in charts(at) if c["layout"]["title"]["text"].startswith("Cache bytes"))["data"][0]["y"]


def test_sliding_window_keeps_bytes_flat():
    """Default (sliding, window 64): the cache bytes end flat at 64 × 2,048 bytes."""
    at = new_app("lessons/context.py")
    y = _bytes_curve(at)
    assert y[-10:] == [64 * 2048] * 10 and max(y) == 64 * 2048


def test_stop_and_truncate_policies():
    """Stop ends at the window; truncating names how many prompt tokens were dropped; a small window refuses stop."""
    at = new_app("lessons/context.py")
    at.radio(key="ctx.policy").set_value("stop").run()
    assert any("stopped at the wall" in i.value.lower() for i in at.info)
    at.slider(key="ctx.window").set_value(32).run()
    assert any("window holds 32" in e.value for e in at.error) and not at.exception
    at.radio(key="ctx.policy").set_value("truncate the prompt").run()
    assert any("dropped the first" in i.value.lower() for i in at.info)
