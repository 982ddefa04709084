"""App tests of the paged KV cache page: presets, stepping, a request leaving, refusals."""

import pytest
from streamlit.testing.v1 import AppTest

from bench.fresh_app import APP, new_app
from core.decode.settings import DEFAULT_PROMPT
from core.model.shipped import load_shipped_tokenizer
from core.model.tokenizer import encode
from tests.helpers.app_util import charts, click

PAGE = "app_pages/paged.py"
STEP = "Step ▸ (one pass)"


def _metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def _pool_labels(at) -> list[str]:
    """Text of every block in the pool figure (its id and owner)."""
    spec = next(s for s in charts(at) if s["layout"]["title"]["text"].startswith("Physical pool"))
    return next(t["text"] for t in spec["data"] if t.get("mode") == "text")


def _table_rows(at) -> list[str]:
    spec = next(s for s in charts(at) if s["layout"]["title"]["text"].startswith("Block tables"))
    return spec["layout"]["yaxis"]["ticktext"]


def test_eight_students_share_two_blocks():
    """Eight steps in (one student per step): every student's table starts with the same two blocks,
    shown hatched ×8; sharing saves 7 × 2 = 14 blocks; the preallocated figure is 8 × 524,288 B."""
    at = new_app(PAGE)
    for _ in range(8):
        click(at, STEP)
    labels = _pool_labels(at)
    assert labels[:2] == ["#0 ×8", "#1 ×8"]
    metrics = _metrics(at)
    assert any(k.startswith("Sharing saves 14 of ") for k in metrics)
    assert metrics["Preallocated for the window"] == f"{8 * 524_288:,} B"
    assert "**Step 8**" in at.info[0].value and "Step 8: R8 joins the batch" in at.info[0].value  # one numbering


def test_one_request_allocates_on_demand():
    """One request (the decode page's 51-token prompt): after prefill 4 blocks of 16 positions =
    131,072 B paged against 51 × 2,048 = 104,448 B of payload (13 unused slots = 26,624 B) and
    524,288 B preallocated; a 5th block only at step 15 (65 positions); all freed when it leaves."""
    assert len(encode(load_shipped_tokenizer(), DEFAULT_PROMPT)) == 51
    at = new_app(PAGE)
    at.selectbox(key="paged.preset").set_value("one request").run()
    click(at, STEP)
    m = _metrics(at)
    assert (m["Paged: blocks in use"], m["Payload, unshared"], m["Preallocated for the window"]) == (
        "131,072 B",
        "104,448 B",
        "524,288 B",
    )
    assert [x.delta for x in at.metric][1:3] == ["26,624 B unused", "2,048 B × 51 positions"]
    for step in range(2, 16):
        click(at, STEP)
        assert sum(1 for x in _pool_labels(at) if x.endswith("R1")) == (5 if step == 15 else 4)
        if step == 2:  # a plain decode step says what it did (the first step's "Press Step ▸" hint stayed up)
            said = at.info[0].value
            assert (
                "**Step 2**" in said
                and "Step 2: R1 each added a token (1 in one pass, " in said
                and "Press" not in said
            )
    click(at, "Run to the end")
    assert "Every request has finished" in at.success[0].value
    assert all(not x.endswith("R1") for x in _pool_labels(at)) and _metrics(at)["Paged: blocks in use"] == "0 B"


def test_a_request_leaves_and_static_waits():
    """One long and many short: stepping until a short request finishes, its row reads 'finished' and
    it holds no block; the comparison says continuous waits 0 steps and static waits longer."""
    at = new_app(PAGE)
    at.selectbox(key="paged.preset").set_value("one long and many short").run()
    for _ in range(12):
        click(at, STEP)
        if any("finished after" in i.value for i in at.info):
            break
    assert "R2 · finished" in _table_rows(at)
    assert all(not x.endswith(" R2") for x in _pool_labels(at))
    caption = " ".join(c.value for c in at.caption)
    assert "**continuous**:" in caption and "mean wait 0.0 steps" in caption
    static_wait = float(caption.split("**static**:")[1].split("mean wait ")[1].split(" steps")[0])
    assert static_wait > 0


def test_a_small_pool_preempts_the_newest():
    """Eight students in a 10-block pool: a step runs out of blocks and the message names the newest
    running request, the blocks freed and that it will be recomputed."""
    at = new_app(PAGE)
    at.number_input(key="paged.n_blocks").set_value(10).run()
    seen = []
    for _ in range(8):
        click(at, STEP)
        seen += [i.value for i in at.info]
    assert any("Out of KV blocks" in s and "Preempted R" in s and "will be recomputed" in s for s in seen)


@pytest.mark.parametrize(
    "key,value,expect",
    [
        ("paged.block_size", 256, "this server allows 8,388,608 B per session"),
        (
            "paged.n_blocks",
            4,
            "R1 needs up to {blocks} blocks ({positions} positions) but the pool has only 4: it could never run",
        ),
    ],
)
def test_bad_sizes_get_a_message_and_keep_the_run(key, value, expect):
    """A pool too large for the server or too small for a request: a message, and the previous run stays
    on screen. (The block size's box holds 1 … the context window, as the pool's does: 0 and 300 are
    refused by the box itself; core.serving.paged's own messages for them are tested in test_paged.)"""
    if "{blocks}" in expect:  # the default preset's first request: its prompt plus the tokens it may add
        from core.model.shipped import load_shipped_tokenizer
        from core.serving.paged_presets import PRESETS, preset_requests
        from ui.paged import DEFAULTS, PAGED_BLOCK_SIZE, PAGED_PRESET

        first = preset_requests(DEFAULTS[PAGED_PRESET], load_shipped_tokenizer())[0]
        positions = len(first["prompt"]) + first["max_new_tokens"] - 1
        expect = expect.format(blocks=-(-positions // 16), positions=positions)
        assert DEFAULTS[PAGED_PRESET] in PRESETS and DEFAULTS[PAGED_BLOCK_SIZE] == 16
    at = new_app(PAGE)
    click(at, STEP)
    at.number_input(key=key).set_value(value).run()
    assert not at.exception
    assert any(expect in w.value for w in at.warning), [w.value for w in at.warning]
    assert "previous run stays on screen" in at.warning[0].value and "Step 1" in at.info[0].value


def test_the_block_size_box_is_bounded_by_the_context_window():
    """Unbounded, a 20-digit block size stayed in the box (past a float's exact integers the browser never
    sent it) while the warning named the last value sent, 0."""
    at = new_app(PAGE)
    box = at.number_input(key="paged.block_size")
    assert (box.min, box.max, box.value) == (1, 256, 16)


@pytest.mark.parametrize("present, label_px", [({}, 14), ({"present": "1"}, 18)])
def test_block_labels_grow_for_a_projector(present, label_px):
    """The pool's and the block tables' labels ("#10 R5", "#0 ×8") were 14 px on a projector whose text is
    24 px (a teacher's review): 18 px in presenter mode, the laptop's 14 otherwise."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(present)
    at.run()
    at.switch_page(PAGE).run()
    click(at, STEP)
    sizes = [t["textfont"]["size"] for c in charts(at)[:2] for t in c["data"] if t.get("mode") == "text"]
    assert sizes == [label_px, label_px]


@pytest.mark.parametrize("present", [{}, {"present": "1"}])
def test_paged_page_cites_kwon_section_4_1(present):
    """Ch. 30 §30.10's Kwon et al. 2023 (PagedAttention), Section 4.1, on the paged page, projector included."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params.update(present)
    at.run()
    at.switch_page(PAGE).run()
    work = "Kwon et al., *Efficient Memory Management for Large Language Model Serving with PagedAttention*, 2023"
    assert any(work in c.value and "Section 4.1 distinguishes logical KV content" in c.value for c in at.caption)
