"""Text alternatives: every figure's description and table carry its real numbers, worked out here
independently (the chapters' numbers, closed forms, or the model run without the page's code path)."""

import math

import numpy as np
import pytest

from core.cost import bill
from core.evaluate.quant_quality import QuantReport
from core.evaluate.speedups import BatchSpeed
from core.model.config import PRESETS
from core.quant import ruler
from core.serving.latency import CH30_TRACE, EXERCISE_1, RequestTrace
from core.serving.paged import PagedKVCache
from core.serving.paged_presets import compare_policies
from core.serving.scheduler import Request
from core.serving.speculative import TokenShare
from core.viz import stage
from core.viz.attention import describe_attention, fig_attention
from core.viz.batching import fig_batch_cache, fig_batch_speed
from core.viz.context import describe_cache_over_time
from core.viz.cost import fig_growth_shapes, fig_measured, fig_step_work
from core.viz.latency import describe_timeline
from core.viz.memory import fig_kv_variants, fig_memory_budget
from core.viz.paged import fig_block_pool, fig_block_tables, fig_policy_comparison
from core.viz.quant import fig_bits_per_weight, fig_block, fig_quant_sweep
from core.viz.ruler import fig_ruler
from core.viz.speculative import fig_three_distributions
from core.viz.table import figure_table
from core.viz.theme import description_of
from tests.conftest import make_model


def _worked_att():
    """Ch. 19's on: scores (1, 3, 1, 2) → shares e^s / Σ e^s; earlier rows: any causal rows."""
    e = [math.exp(s) for s in (1, 3, 1, 2)]
    on = [v / sum(e) for v in e]
    att = np.full((4, 4), np.nan)
    att[0, 0], att[1, :2], att[2, :3], att[3] = 1.0, [0.5, 0.5], [0.2, 0.3, 0.5], on
    return att, on


def test_attention_description_names_on_looking_at_cat():
    """The worked example: on (position 3) puts 0.61 (= e³/Σ) of its attention on cat; 1 new row, 3 cached."""
    att, on = _worked_att()
    assert round(on[1], 2) == 0.61
    fig = fig_attention(att, ["0: the", "1: cat", "2: sat", "3: on"], 1, "Each new token adds just one row")
    assert description_of(fig) == (
        "Each new token adds just one row: 4 positions; the newest row (3 ‘on’) puts 0.61 of its attention on "
        "position 1 ‘cat’; 1 new row, 3 earlier rows read from the KV cache."
    )


def test_attention_description_skips_evicted_keys_and_says_prefill():
    """A sliding window's band: the newest row's largest share among the keys it can see; after prefill,
    every row is new."""
    att = np.full((3, 3), np.nan)
    att[0, 0], att[1, :2], att[2, 1:] = 1.0, [0.9, 0.1], [0.3, 0.7]  # key 0 evicted for row 2
    text = describe_attention(att, ["0: a", "1: b", "2: c"], "Layer 1 · head 2", 3)
    assert text == (
        "Layer 1 · head 2: 3 positions; the newest row (2 ‘c’) puts 0.70 of its attention on position 2 ‘c’; "
        "every row computed in this pass."
    )


def test_timeline_description_carries_ttft_and_tpot():
    """Ch. 30's trace: TTFT 150 ms, TPOT (270 − 150)/3 = 40 ms; exercise 1: TTFT 100, TPOT 55; one token has no
    TPOT; a request with no tokens is an error."""
    traces = [CH30_TRACE, EXERCISE_1, RequestTrace("one token", 0, 20, (90,), 5), RequestTrace("failed", 0, 40, (), 6)]
    text = describe_timeline(traces)
    assert (
        "1. Ch. 30 example: arrives at 0 ms, prefill from 30 ms, first token at 150 ms (TTFT 150 ms), 4 tokens, "
        "the last at 270 ms (TPOT 40 ms)"
    ) in text
    assert "(TTFT 100 ms), 3 tokens, the last at 220 ms (TPOT 55 ms)" in text
    assert "3. one token: arrives at 0 ms, prefill from 20 ms, first token at 90 ms (TTFT 90 ms), 1 token" in text
    assert "no TPOT (one token)" in text and "4. failed: arrives at 0 ms, prefill from 40 ms, no tokens" in text


def test_cache_over_time_says_when_the_window_fills():
    """2,048 B per position (the shipped model): 51, 52, 64, 64 positions in a 64-position window."""
    per = 2 * 4 * 2 * 32 * 4  # 2 · L · H_kv · d · b for the shipped shape (n_layer 4, n_kv_head 2, head_dim 32)
    sizes = [per * n for n in (51, 52, 64, 64)]
    text = describe_cache_over_time(sizes, per * 64)
    assert text == (
        "KV cache after each of 4 forward passes: 104,448 bytes after prefill, 131,072 after the last pass, at most "
        "131,072; it reaches the full window (131,072 bytes) at pass 3."
    )


def test_growth_description_at_20000_tokens():
    """n = 20,000: 400,000,000 pairs, 200,010,000 kept (n(n+1)/2), 400× and 200× the n = 1,000 grid; cache 20×;
    the chapter's points × n_layer · n_head = 6."""
    text = description_of(fig_growth_shapes(bill.growth(20_000, 2, 3), "× 2 layers × 3 heads"))
    assert "400,000,000 query-key pairs before masking and 200,010,000 after it" in text
    assert "400× and 200× the n = 1,000 grid" in text and "20,000 entries, 20×" in text
    assert "1,000 tokens → 6,000,000 scores (× 2 layers × 3 heads); 10,000 tokens → 600,000,000 scores" in text


def test_step_work_description():
    """One step at n = 20,000: 20,000 scores cached, 20,000 · 20,001 / 2 = 200,010,000 by recompute."""
    text = description_of(fig_step_work(bill.step_work(20_000)))
    assert text.startswith("One decode step at n = 20,000: 20,000 scores with the KV cache, 200,010,000 by full")


def test_measured_description():
    """The medians at the longest and shortest context, and their ratio 8.8 / 2.2 = 4.0."""
    text = description_of(fig_measured([16, 256], [1.64, 2.2], [1.91, 8.8], "t"))
    assert text == (
        "At 256 positions a cached step took 2.20 ms, a full recompute 8.80 ms (4.0×); "
        "at 16 positions 1.64 and 1.91 ms."
    )


def test_memory_descriptions():
    """The parts add up (3.5 + 1.0 + 0.5 = 5.0 GB, 1.0 over a 4 GB budget); KV sharing names the current one."""
    text = description_of(fig_memory_budget({"weights": 3.5, "KV cache": 1.0, "overhead": 0.5}, 4.0))
    assert text == (
        "Needed: weights 3.50 GB + KV cache 1.00 GB + overhead 0.50 GB = 5.00 GB, against a budget of 4.00 GB: "
        "1.00 GB over the budget."
    )
    assert "0.50 GB spare" in description_of(fig_memory_budget({"weights": 3.5}, 4.0))
    # Llama-2-7B's shape at 4,096 positions, fp16: 2 · 32 · 4,096 · H_kv · 128 · 2 bytes.
    mha, gqa = 2 * 32 * 4096 * 32 * 128 * 2, 2 * 32 * 4096 * 8 * 128 * 2
    fig = fig_kv_variants(["MHA", "GQA"], [mha, gqa], [f"{mha / 2**30:g} GiB", f"{gqa / 2**30:g} GiB"], "GQA")
    assert (
        description_of(fig)
        == "KV cache of the same model by KV-head sharing: MHA: 2 GiB; GQA: 0.5 GiB (the current setting)."
    )


def test_ruler_description_table_30_2():
    """Ch. 30 Table 30.2 (scale 0.5): −1.2 → −2 → −1, −0.2 → 0 → 0, 0.7 → 1 → 0.5, 1.8 → 4 → 2 (ties to even
    nowhere needed); the largest error 0.2 ≤ s/2 = 0.25. With the outlier 8 at 4 bits: q = 16 clips to 7."""
    text = description_of(fig_ruler(ruler.ruler([-1.2, -0.2, 0.7, 1.8], 4, 0.5)))
    assert "-1.2 → q = -2 → -1, -0.2 → q = 0 → 0, 0.7 → q = 1 → 0.5, 1.8 → q = 4 → 2" in text
    assert "Inside the range the largest error is 0.2, within s/2 = 0.25" in text and "clipped" not in text
    text = description_of(fig_ruler(ruler.ruler([-1.2, -0.2, 0.7, 1.8, 8], 4, 0.5)))
    assert "8 → q = 7 → 3.5" in text and "clipped values (error not bounded by s/2): 8" in text


def test_bits_per_weight_description():
    """4 bits + a 16-bit scale per group: 4 + 16/4 = 8 bits per weight in groups of 4, 4 + 16/256 = 4.0625 in 256."""
    sizes = [4, 32, 256]
    text = description_of(fig_bits_per_weight(sizes, ruler.bits_per_weight_curves(sizes)))
    assert "4-bit + 16-bit scale: 8 bits per weight in groups of 4, 4.062 in groups of 256" in text
    assert "8-bit + 16-bit scale: 12 bits per weight in groups of 4, 8.062 in groups of 256" in text


def test_quant_sweep_description():
    """Each bit width's perplexity and greedy-change rate, after the float reference."""
    ref = QuantReport("float32", None, 100, 8.0, 0.0, 0.0, 1.0, 3.1416)
    rows = [QuantReport("4-bit", 4, 50, 8.0, 0.2, 0.0525, 1.1, 3.5)]
    assert description_of(fig_quant_sweep(rows, ref, "Weights")) == (
        "Weights: float32 perplexity 3.142; 4-bit: perplexity 3.500, greedy token changed at 5.2% of positions."
    )


def test_batching_descriptions():
    """Padded to the longest (51): request 2 holds 45 + 6 padding; 67 slots reserve 16 more; speeds as measured."""
    text = description_of(fig_batch_cache(["request 1", "request 2"], [51, 45], 67, "padded"))
    assert "request 1 51 used + 0 padding; request 2 45 used + 6 padding; each row reserves 16 more slots" in text
    text = description_of(fig_batch_cache(["request 1", "request 2"], [51, 45], 67, "ragged"))
    assert text == "Per-request caches, each as long as its request: request 1 51 positions; request 2 45 positions."
    speed = [BatchSpeed(16, 7.0, 2300.0, 400.0, 5.75, 5.1, 6.0)]
    assert "B = 16: 2,300 tokens/s batched, 400 one by one (5.8×)" in description_of(fig_batch_speed(speed))


def _paged():
    """Block size 4: A holds 6 tokens (#0 full, #1 half), B shares #0 and has #2 with 1 token."""
    cache = PagedKVCache(PRESETS["tiny"], 6, 4)
    cache.add("A", [1, 2, 3, 4, 5, 6])
    cache.add("B", [1, 2, 3, 4, 9])
    return cache, [Request("A", [1], 1, state="running"), Request("B", [1], 1, state="running")]


def test_paged_descriptions_list_blocks_and_tables():
    """#0 shared by A and B (4 of 4), #1 A's (6 − 4 = 2 of 4), #2 B's (5 − 4 = 1 of 4), 3 free."""
    cache, requests = _paged()
    assert description_of(fig_block_pool(cache, requests)) == (
        "Physical pool: 3 of 6 blocks in use: #0 shared by 2 (A, B), 4 of 4 positions; #1 A, 2 of 4 positions; "
        "#2 B, 1 of 4 positions; 3 free."
    )
    assert description_of(fig_block_tables(cache, requests)) == (
        "Block tables, logical block 0 first: A (running): #0, #1; B (running): #0, #2."
    )


def test_policy_description_counts_every_output_token():
    """Three requests of 3 new tokens each (no end token): 9 output tokens under either policy."""
    requests = [dict(prompt=[1, 2, 3], max_new_tokens=3, arrival=i) for i in range(3)]
    runs = compare_policies(make_model(), requests, 8, 4)
    text = description_of(fig_policy_comparison(runs))
    assert f"continuous: 9 output tokens in {runs['continuous'].steps} steps" in text
    assert f"static: 9 output tokens in {runs['static'].steps} steps" in text
    waits = sorted(r.wait for r in runs["static"].requests)
    assert "continuous: 9 output tokens in" in text and "no request waited before its prefill" in text  # not "0–0"
    assert f"each request waited {waits[0]:.0f}–{waits[-1]:.0f} steps" in text and waits[-1] > 0


def test_three_distributions_description():
    """Per token: target, draft, sampled shares."""
    fig = fig_three_distributions(["Paris", "Lyon"], [TokenShare(1, 0.6, 0.3, 0.59), TokenShare(2, 0.4, 0.7, 0.41)])
    assert description_of(fig) == (
        "Target p / draft q / speculative samples: 1. ‘Paris’ 0.600 / 0.300 / 0.590; 2. ‘Lyon’ 0.400 / 0.700 / 0.410."
    )


def test_figure_table_gives_the_drawn_numbers():
    """The table of a heatmap holds its shares (masked cells empty); a bar chart's its bars; the pool its blocks."""
    att, on = _worked_att()
    rows = figure_table(fig_attention(att, ["0: the", "1: cat", "2: sat", "3: on"], 1, "t"))
    newest = next(r for r in rows if r["position asking (query)"] == "3: on")
    assert [newest[k] for k in ("0: the", "1: cat", "2: sat", "3: on")] == [round(v, 4) for v in on]
    first = next(r for r in rows if r["position asking (query)"] == "0: the")
    assert first["1: cat"] is None and first["series"] == "read from the KV cache"
    rows = figure_table(fig_memory_budget({"weights": 3.5, "KV cache": 1.0}, 4.0))
    assert [r["memory (GB = 10⁹ bytes)"] for r in rows] == [3.5, 1.0]
    cache, requests = _paged()
    rows = figure_table(fig_block_pool(cache, requests))
    assert rows[1] == {"details": "block #1: A; 2 of 4 positions"} and len(rows) == 6


def test_table_shows_typed_text_literally():
    """Labels reach plotly escaped; the table shows them as typed."""
    att, _ = _worked_att()
    rows = figure_table(fig_attention(att, ["0: <b>", "1: &", "2: x", "3: y"], 1, "t"))
    assert rows[0]["position asking (query)"] == "0: <b>" and "1: &" in rows[-1]


@pytest.mark.parametrize("head", [0, None])
def test_stage_tables_match_a_full_forward_pass(head):
    """The decode stage's row table: the newest row's shares from one uncached forward pass of the shipped
    model (not the page's cached session), summing to 1; the description's focus is its largest share."""
    from core.decode.generate import full_forward
    from core.decode.settings import DEFAULT_PROMPT
    from core.model.shipped import load_model, load_shipped_tokenizer
    from core.model.tokenizer import encode, token_labels

    tok, model = load_shipped_tokenizer(), load_model("float64")
    ids = encode(tok, DEFAULT_PROMPT)
    att = full_forward(model, ids).att[3]  # layer 3: (n_head, T, T)
    row = (att.mean(axis=0) if head is None else att[head])[-1]
    labels = token_labels(tok, ids)
    table = stage.row_table(row, labels)
    assert table["key position"] == list(range(len(ids))) and sum(table["share of the newest row's attention"]) == (
        pytest.approx(1.0, abs=1e-3)
    )
    focus = int(np.argmax(row))
    assert f"puts {row[focus]:.2f} of its attention on position {focus} " in stage.describe("L", row, labels)
    bars = stage.bars_table([(5, " yuan", 0.6), (7, "yuan", 0.3)], 7)
    assert bars == {"rank": [1, 2], "token": ["␣yuan", "yuan"], "probability": [0.6, 0.3], "chosen": ["", "yes"]}


def test_block_description_names_scale_and_worst_error():
    """Q4_0 of [1.0, 0.3, 0×30] by hand (llama.cpp's rule): d = 1.0/−8 = −0.125; 0.3/−0.125 = −2.4
    rounds to −2, stored as 0.25 (error −0.05), the largest; 1.0 and the zeros are exact."""
    from core.gguf.blocks import block_view

    text = description_of(fig_block(block_view(np.r_[1.0, 0.3, np.zeros(30)], "Q4_0"), n_appended=30))
    assert "Q4_0 block 0: 32 values stored with scale d = -0.125." in text
    assert "Largest error at position 1: x = 0.3 stored as 0.25 (-0.05)." in text
    assert "The last 30 positions are zeros appended to fill the block." in text


def test_memory_budget_description_keeps_small_totals_readable():
    """The .gguf plan of a tiny model: weights 1,467,904 B + KV cache 262,144 B = 1,730,048 B = 1.73 MB
    (it read "= 0.00 GB"), against 4 GB: 3,998,269,952 B spare = 4.00 GB."""
    parts = {"weights": 1_467_904 / 1e9, "KV cache": 262_144 / 1e9}
    labels = {"weights": "1.47 MB", "KV cache": "262.14 kB"}
    text = description_of(fig_memory_budget(parts, 4.0, labels))
    assert text == "Needed: weights 1.47 MB + KV cache 262.14 kB = 1.73 MB, against a budget of 4.00 GB: 4.00 GB spare."
