"""App tests of the batching page."""

from bench.fresh_app import new_app
from tests.helpers.app_util import click
from ui import batching as batching_ui
from ui import present as present_keys


def test_prefill_step_and_finish():
    """Prefill, step until the 6-token request finishes and leaves; bytes: ragged holds exactly the payload."""
    at = new_app("app_pages/batching.py")
    click(at, "Prefill the batch")
    for _ in range(6):
        click(at, "Step ▸ (one pass)")
    table = at.dataframe[0].value
    assert list(table["status"]).count("finished, left the batch") == 1
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Wasted on padding"] != "0 B (ragged)"
    at.radio(key="batch.layout").set_value("ragged").run()
    click(at, "Prefill the batch")
    click(at, "Run to the end")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Bytes the layout holds"] == metrics["Bytes holding positions (2·L·H_kv·d·b·Σ lengths)"]
    assert set(at.dataframe[0].value["status"]) == {"finished, left the batch"}


def test_bad_batches_get_messages():
    """Mismatched budgets, a zero budget and no prompts get a clear message, no traceback."""
    at = new_app("app_pages/batching.py")
    for prompts, budgets, expect in [
        ("a\nb", "3", "2 prompts but 1"),
        ("a", "0", "at least 1"),
        ("   ", "3", "between 1 and 16"),
    ]:
        at.text_area(key="batch.prompts").set_value(prompts)
        at.text_input(key="batch.budgets").set_value(budgets)
        at.run()
        click(at, "Prefill the batch")
        assert any(expect in w.value for w in at.warning), (expect, [w.value for w in at.warning])


def _default_batch():
    from core.model.shipped import load_model, load_shipped_tokenizer
    from core.model.tokenizer import encode

    cfg, tok = load_model().cfg, load_shipped_tokenizer()
    lengths = [len(encode(tok, p)) for p in batching_ui.BATCH_PROMPTS_DEFAULT.splitlines()]
    budgets = [int(b) for b in batching_ui.DEFAULTS["batch.budgets"].split(",")]
    per_pos = 2 * cfg.n_layer * cfg.n_kv_head * cfg.head_dim * 4  # keys and values, float32
    return lengths, budgets, per_pos


def test_padding_right_after_prefill_is_padding_to_the_longest_prompt():
    """Right after Prefill (padded): wasted = Σ(longest prompt − each prompt) positions; the slots kept for tokens
    still to come (up to the longest prompt + budget − 1) are reported apart, and all three add up to what is held."""
    lengths, budgets, per_pos = _default_batch()
    at = new_app("app_pages/batching.py")
    click(at, "Prefill the batch")
    metrics = {m.label: m.value for m in at.metric}
    padding = sum(max(lengths) - n for n in lengths) * per_pos
    s_max = max(n + b - 1 for n, b in zip(lengths, budgets, strict=True))
    reserved = len(lengths) * (s_max - max(lengths)) * per_pos
    assert metrics["Wasted on padding"] == f"{padding:,} B"
    assert metrics["Reserved for tokens still to come"] == f"{reserved:,} B"
    assert metrics["Bytes the layout holds"] == f"{len(lengths) * s_max * per_pos:,} B"


def test_a_newline_token_shows_in_the_generated_cell():
    """A request whose first generated token is a newline shows ⏎, not an empty cell."""
    from core.model.shipped import load_model, load_shipped_tokenizer
    from core.model.tokenizer import encode
    from core.serving.batch import Batch

    tok = load_shipped_tokenizer()
    batch = Batch(load_model(), [encode(tok, "The cat")], [3], "padded")
    batch.prefill()
    [newline] = encode(tok, "\n")
    batch.requests[0].tokens[:] = [newline]
    at = new_app("app_pages/batching.py")
    at.session_state["batch.obj"] = batch
    at.run()
    assert list(at.dataframe[0].value["generated"]) == ["⏎"]


def test_a_layout_change_is_flagged_at_once():
    """Prefill padded, then choose per-request caches: the page says at once that the batch shown is still padded."""
    at = new_app("app_pages/batching.py")
    click(at, "Prefill the batch")
    at.radio(key="batch.layout").set_value("ragged").run()
    assert any("padding to the longest" in w.value and "Prefill the batch" in w.value for w in at.warning)


def test_budget_messages_speak_of_tokens():
    """A budget of 0 or a word is refused in tokens, never in the memory page's "positions"."""
    at = new_app("app_pages/batching.py")
    for budgets, expect in (("12, 20, 0, 16", "at least 1 token"), ("12, x, 6, 16", "not a whole number of tokens")):
        at.text_input(key="batch.budgets").set_value(budgets).run()
        click(at, "Prefill the batch")
        [w] = at.warning
        assert expect in w.value and "position" not in w.value


def test_the_generated_text_gets_the_tables_room():
    """With equal column shares the generated text was cut mid-word at 1280 px ("mat. The dog sat on the
    mat. The c"), and in presenter mode after a few words: it gets streamlit's large width (520 px
    in presenter mode, where the grid is zoomed and sized to its content) and the status enough."""
    import json

    for present, widths in ((False, ("large", "medium")), (True, (520, 200))):
        at = new_app("app_pages/batching.py")
        at.session_state[present_keys.PRESENT] = present
        click(at, "Prefill the batch")
        config = json.loads(at.dataframe[0].proto.columns)
        assert (config["generated"]["width"], config["status"]["width"]) == widths


def test_a_refused_prefill_says_the_batch_below_is_the_earlier_one():
    """A refused Prefill (a helper's 5,000-digit budget) left the earlier batch on screen with nothing to
    say it was not these prompts: the message says so, and the earlier batch is kept."""
    from core.text import markdown_literal

    at = new_app("app_pages/batching.py")
    click(at, "Prefill the batch")
    before = list(at.dataframe[0].value["prompt tokens"])
    at.text_input(key="batch.budgets").set_value("9" * 5000).run()
    click(at, "Prefill the batch")
    [warning] = [w.value for w in at.warning]
    assert "more tokens than the context window holds" in warning
    assert warning.endswith(markdown_literal("nothing ran: the batch below is the one prefilled before."))
    assert list(at.dataframe[0].value["prompt tokens"]) == before


def test_the_charts_text_is_projector_size_in_presenter_mode():
    """Issue 37 item 11: on the projector the batching charts' ticks, axis titles, legend and the speed-up labels
    were 20 px (ui.chart's layout font) beside the page's 24 px text: in presenter mode they are 24 px; on a laptop
    the charts keep the template's sizes."""
    from core.evaluate.speedups import BatchSpeed
    from tests.helpers.app_util import charts

    rows = [BatchSpeed(b, 1.0, 100.0 * b, 100.0, float(b), float(b), float(b)) for b in (1, 2, 4)]
    for present in (True, False):
        at = new_app("app_pages/batching.py")
        at.session_state[present_keys.PRESENT] = present
        at.session_state[batching_ui.BATCH_SPEED] = rows
        click(at, "Prefill the batch")
        figs = charts(at)
        assert len(figs) == 3  # the cache rows, the heatmap, the measured speed
        for fig in figs:
            sizes = [fig["layout"][axis].get("tickfont", {}).get("size") for axis in ("xaxis", "yaxis")]
            sizes += [fig["layout"]["xaxis"].get("title", {}).get("font", {}).get("size")]
            sizes += [fig["layout"].get("legend", {}).get("font", {}).get("size")] if len(fig["data"]) > 1 else []
            sizes += [
                t.get("textfont", {}).get("size")
                for t in fig["data"]
                if t.get("type") in ("bar", "scatter") and "text" in t
            ]
            assert all(s == 24 for s in sizes) if present else not any(s == 24 for s in sizes), (present, sizes)
