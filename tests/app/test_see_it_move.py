"""The "See it move" page: the animation from the real run, and the video for slides."""

from bench.fresh_app import new_app
from tests.helpers.app_util import charts
from ui import see_it_move as see_it_move_ui


def test_the_page_plays_the_four_moments_and_offers_a_video():
    """The chart carries one frame per moment's step (moment 4 ends at 1,024 positions' room); the
    video button then offers an MP4 download."""
    at = new_app("app_pages/see_it_move.py")
    spec = charts(at)[0]
    assert len(spec["frames"]) >= 20 and "1,024 positions" in spec["frames"][-1]["layout"]["title"]["text"]
    [button] = [b for b in at.button if b.label == "Make a video for slides"]
    button.click().run()
    assert not at.exception
    assert any("see-it-move.mp4" in d.proto.label for d in at.get("download_button"))


def test_an_empty_prompt_is_refused_in_words():
    at = new_app("app_pages/see_it_move.py")
    at.text_input(key=see_it_move_ui.SEE_PROMPT).set_value(" ").run()
    assert not at.exception and any("empty" in e.value for e in at.error)
