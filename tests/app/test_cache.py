"""The cache page (app_pages/cache.py): what a student reads, from the real model's runs."""

import json

from bench.fresh_app import new_app
from tests.helpers.app_util import charts, click
from ui import cache_demo
from ui.decode import keys as decode_keys


def _table(at, header: str) -> list[list[str]]:
    """The rows of the st.table whose first column is ``header``'s table (AppTest reads its proto)."""
    for t in at.table:
        df = t.value
        if header in df.columns:
            return df.astype(str).values.tolist()
    raise AssertionError(f"no table with a {header!r} column")


def test_the_page_shows_table_30_1_the_phases_and_the_two_speeds_figure():
    """Eight prompt positions: 8 → Token 1, 9 → Token 2, 10 → Token 3 as the chapter's table has them;
    the figure's first drum holds eight squares; the phases table is Ch. 19's; the caption under Table 30.1 points
    to Figure 30.1, drawn whole on the latency page (its caption is there, under it)."""
    at = new_app("app_pages/cache.py")
    rows = _table(at, "Input positions whose K/V are stored")
    assert [r[1:] for r in rows] == [["8", "Token 1"], ["9", "Token 2"], ["10", "Token 3"]]  # the chapter's three
    assert _table(at, "Dependency")[0][0] == "Prefill"
    click(at, "Table 30.1: eight positions")
    spec = charts(at)[0]
    assert len(spec["data"][0]["x"]) == 8
    assert any("Figure 30.1, drawn whole on *Latency on a timeline*" in c.value for c in at.caption)
    assert not any("Output selection precedes consumption" in c.value for c in at.caption)


def test_the_five_position_preset_draws_the_chapters_two_speeds():
    """The preset 'Ch. 19's figure: five positions': five chips into a drum of five, then one second drum showing
    six, seven, then eight, the caption 'Prefill is parallel; decoding is sequential.' under it; each time the
    median of five runs."""
    at = new_app("app_pages/cache.py")
    assert at.text_input(key=cache_demo.CACHE_PROMPT).value == "The cat sat on the"  # the page opens on it
    click(at, "Ch. 19's figure: five positions")
    assert at.text_input(key=cache_demo.CACHE_PROMPT).value == "The cat sat on the"
    spec = charts(at)[0]
    prefill, cached, arriving = spec["data"]
    assert len(prefill["x"]) == 5 and len(cached["x"]) == 5 and arriving["text"] == ["6", "7", "8"]
    notes = [a["text"] for a in spec["layout"]["annotations"]]
    assert "<b>Prefill is parallel; decoding is sequential.</b>" in notes
    assert any(c.value.startswith("Each time is the median of 5 runs") for c in at.caption)
    rows = _table(at, "Input positions whose K/V are stored")  # Table 30.1 stays Example 30.1's (issue 58)
    assert [r[1:] for r in rows] == [["8", "Token 1"], ["9", "Token 2"], ["10", "Token 3"]]
    click(at, "Table 30.1: eight positions")
    assert len(charts(at)[0]["data"][0]["x"]) == 8


def test_the_page_says_why_cached_keys_and_values_stay_valid():
    """Ch. 19 "What the cache stores": earlier tokens cannot attend to the appended token, so their states remain
    valid; old queries need not be saved. Ch. 30 §30.2: a server may retain or discard different amounts."""
    captions = " ".join(c.value for c in new_app("app_pages/cache.py").caption)
    assert "earlier tokens cannot attend to the appended token, so their states remain valid" in captions
    assert "old queries need not be saved for later attention" in captions
    assert "A particular server may retain or discard different amounts after stopping" in captions


def test_the_reuse_checks_say_only_the_unchanged_run_may_reuse():
    """Seven conditions in the table; only 'nothing' reuses the cache; the edit differs from position 5."""
    at = new_app("app_pages/cache.py")
    [frame] = [t.value for t in at.table if "reuse the reference cache?" in t.value.columns]
    verdicts = dict(zip(frame["changed"], frame["reuse the reference cache?"], strict=True))
    assert len(verdicts) == 7 and [c for c, v in verdicts.items() if v.startswith("yes")] == ["nothing"]
    assert frame.set_index("changed").loc["the prompt edited", "first position that differs"] in (5, "5")
    assert any(m.label == "Weights changed by the conversation" and m.value == "no" for m in at.metric)


def test_empty_and_marked_up_text_is_handled():
    """An empty prompt is refused in words (no traceback); typed markup in the transcript stays literal."""
    at = new_app("app_pages/cache.py")
    at.text_input(key=cache_demo.CACHE_PROMPT).set_value("").run()
    assert not at.exception and any("empty" in e.value for e in at.error)
    at.text_input(key=cache_demo.CACHE_PROMPT).set_value(cache_demo.DEFAULTS[cache_demo.CACHE_PROMPT]).run()
    at.text_area(key=cache_demo.CACHE_TRANSCRIPT).set_value("User: **bold** <b>x</b>\nAssistant:").run()
    assert not at.exception
    assert any(m.label == "Prefilled again to continue it" for m in at.metric)


def test_the_decode_page_draws_the_two_speeds_of_its_own_prompt():
    """Under the stage: the two-speeds figure of the decode page's prompt (its first drum: one square per
    prompt position of the shipped tokenizer), built only once its expander is opened (it cost a third of a
    class replica's time on every full run)."""
    from core.model.shipped import load_shipped_tokenizer
    from core.model.tokenizer import encode

    at = new_app("app_pages/decode.py")
    assert not [c for c in charts(at) if "prefill — the pause" in json.dumps(c, ensure_ascii=False)]
    at.session_state["decode.two_speeds_open"] = True
    at.run()
    n = len(encode(load_shipped_tokenizer(), at.session_state[decode_keys.DECODE_PROMPT]))
    [spec] = [c for c in charts(at) if "prefill — the pause" in json.dumps(c, ensure_ascii=False)]
    assert len(spec["data"][0]["x"]) == min(n, 48)
