"""Weight formats (core/evaluate/format_speed.py): each format's logits near float32's, bytes per step
counted from the packed model's own tensors, ggml's blocks decoded as core.gguf decodes them. No timing
assertions: the numbers are the machine's."""

import copy

import numpy as np
import pytest
import torch

from core.cost.step_traffic import FORMATS, step_bytes
from core.decode.kv_cache import KVCache
from core.evaluate.format_speed.kernels import BlockLinear, Int4Linear
from core.evaluate.format_speed.measure import FormatRow, build, measure_formats, rest_dtype, step_products
from core.evaluate.format_speed.report import explain
from core.gguf.blocks import dequantize_blocks, quantize_blocks
from core.model.config import PRESETS, GPTConfig
from core.model.layout import fuse_projections
from core.model.model import GPT

# Tiny, but every projection's input a multiple of 32 (int4 groups, ggml blocks).
CFG = GPTConfig(vocab_size=96, block_size=32, n_layer=2, n_head=4, n_kv_head=2, n_embd=64, ffn_hidden=96)
# Max |Δlogit| against float32 for one decode step, as a fraction of float32's largest |logit| (1.8
# here): each format's own rounding, bf16 activations included. Seen: bf16 0.5%, int8 0.09–0.4%,
# int4 1.9%, Q8_0 0.12%, Q4_0 1.7%; the bounds leave about 2–3× room. A broken packing (a zeroed or
# transposed weight) moves the logits by tens of percent.
TOLERANCE = {
    "float32": 1e-6,
    "bfloat16": 0.015,
    "int8 (bf16 activations)": 0.015,
    "int8 (f32 activations)": 0.004,
    "int4 (bf16 activations)": 0.05,
    "Q8_0 dequantize + matmul": 0.004,
    "Q4_0 dequantize + matmul": 0.05,
}


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    m = GPT(CFG).eval()
    for p in m.parameters():
        p.requires_grad_(False)
    return m


def _step(model, dtype, context=12):
    ids = torch.arange(context).remainder(CFG.vocab_size).view(1, context)
    cache = KVCache(CFG, dtype=dtype)
    with torch.inference_mode():
        model(ids[:, :-1], cache)
        return model(ids[:, -1:], cache)[0].float()


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_each_format_decodes_close_to_float32(model, fmt):
    """Every format's decode step (its own prefill and kernel) lands within its tolerance of float32's logits."""
    ref = _step(model, torch.float32)
    got = _step(build(model, fmt), rest_dtype(fmt))
    assert float((got - ref).abs().max()) <= TOLERANCE[fmt] * float(ref.abs().max()), fmt


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_bytes_per_step_from_the_packed_tensors(model, fmt):
    """step_bytes(fmt) = the packed model's own tensors: projection buffers, head, norms, one embedding row,
    the KV slices read and written, and the logits (B=1 decode at 12 positions)."""
    m = build(model, fmt)
    rest = FORMATS[fmt]["rest"]
    packed = sum(b.nbytes for name, b in m.named_buffers() if ".self_attn." in name or ".mlp." in name)
    linears = sum(
        p.nbytes for name, p in m.named_parameters() if name.endswith("proj.weight") and name.startswith("layers.")
    )
    norms = sum(p.nbytes for name, p in m.named_parameters() if "norm" in name)
    head = m.lm_head.weight.nbytes
    kv_row = sum(c[:, :, :1].nbytes for c in KVCache(CFG, dtype=rest_dtype(fmt)).k_cache) * 2
    expected = packed + linears + norms + head + CFG.n_embd * rest + 11 * kv_row + kv_row + CFG.vocab_size * rest
    assert step_bytes(CFG, 1, 1, 12, fmt)["total"] == expected


def test_float_formats_keep_linear_modules_and_packed_ones_replace_them(model):
    """bfloat16 is the model cast; int8 keeps int8 weights with one scale per row; no fused product survives."""
    assert build(model, "bfloat16").layers[0].self_attn.q_proj.weight.dtype == torch.bfloat16
    q = build(model, "int8 (bf16 activations)").layers[0].self_attn.q_proj
    assert q.q.dtype == torch.int8 and q.scale.shape == (CFG.n_embd,)
    assert all(b.self_attn.fused_qkv is None for b in build(model, "int4 (bf16 activations)").layers)


@pytest.mark.parametrize("fmt", ["Q8_0", "Q4_0"])
def test_block_weights_are_ggmls_blocks(model, fmt):
    """The dequantize path's weight equals core.gguf's decoding of the same blocks, bit for bit."""
    lin = model.layers[0].mlp.down_proj
    w = lin.weight.detach().float().contiguous().numpy()
    expected = dequantize_blocks(quantize_blocks(w, fmt), fmt, w.shape)
    got = BlockLinear(lin, fmt).weight().numpy()
    np.testing.assert_array_equal(got, expected)


def test_int4_packing_round_trips(model):
    """The int4 kernel's product equals x times the dequantized groups (the packing is read as written)."""
    lin = model.layers[1].mlp.up_proj
    m = Int4Linear(lin, torch.bfloat16)
    x = torch.randn(3, CFG.n_embd).bfloat16()
    torch.testing.assert_close(m(x).float(), x.float() @ m.weight().T, atol=0.05, rtol=0.02)


def test_a_width_not_divisible_by_32_is_refused():
    """A projection whose input width is off the 32 grid (n_embd 48) raises ValueError naming it."""
    cfg = GPTConfig(vocab_size=64, block_size=16, n_layer=1, n_head=2, n_kv_head=1, n_embd=48, ffn_hidden=64)
    with pytest.raises(ValueError, match="not a multiple of 32"):
        build(GPT(cfg), "Q8_0 dequantize + matmul")
    assert PRESETS["shipped"].ffn_hidden % 32 == 0


def test_the_sentence_comes_from_the_numbers():
    """The explanation names the fastest format, its time and where it goes (products vs the rest), and
    lists a slower low-byte format with its reason; a format within the noise of float32 is not listed."""
    rows = [
        FormatRow("float32", 4_000_000, 1.0, 9, 0.0, 0.5, 3_600_000),
        FormatRow("int8 (bf16 activations)", 1_100_000, 0.4, 9, 0.1, 0.3, 900_000),
        FormatRow("Q4_0 dequantize + matmul", 1_200_000, 3.0, 9, 0.3, 2.5, 500_000),
        FormatRow("Q8_0 dequantize + matmul", 1_500_000, 1.1, 9, 0.3, 0.9, 900_000),
    ]
    text = explain(rows, 10.0, 1)
    assert text.startswith("Fastest here for the whole decode step: int8 (bf16 activations) at 0.40 ms")
    assert "2.50× the speed of float32" in text and "the rest of the step 0.10 ms" in text
    assert "3.0 GB/s of weights against the memory's 10.0" in text  # 0.9 MB in 0.3 ms: arithmetic-bound
    assert "Q4_0 dequantize + matmul 3.00 ms" in text and "float32 copy of its weights" in text
    assert "Q8_0" not in text and "1 torch thread" in text
    rows[1] = FormatRow("int8 (bf16 activations)", 1_100_000, 0.95, 9, 0.1, 0.3, 900_000)
    assert "within the 15% run-to-run noise: a tie" in explain(rows, 10.0, 1)
    rows[1] = FormatRow("int8 (bf16 activations)", 1_100_000, 2.0, 9, 0.1, 1.0, 900_000)
    assert explain(rows, 10.0, 2).startswith("Fastest here for the whole decode step: float32")


def test_measured_rows_carry_the_products(model):
    """A (tiny-budget) measurement gives every format a step time, the products' time within it, the
    projections' bytes from step_traffic, and the bandwidth timed beside them."""
    rows = measure_formats(model, 12, 0.0, formats=("float32", "int8 (bf16 activations)"))
    assert [r.fmt for r in rows] == ["float32", "int8 (bf16 activations)"]
    for r in rows:
        assert r.ms > 0 and r.products_ms > 0 and r.repeats >= 3 and r.spread >= 0
        # The floor's bandwidth was timed in the same rounds, and the ratio uses it rather than another's.
        assert r.bandwidth_gbs > 0 and r.floor_ratio(1e-9) == pytest.approx(r.ms / (r.bytes / r.bandwidth_gbs / 1e6))
        assert r.products_bytes == int(step_bytes(CFG, 1, 1, 12, r.fmt)["weights/projections"])


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_a_fused_models_formats_run_fused_and_equal_the_parts(model, fmt):
    """A loaded checkpoint runs q/k/v and gate/up as one product each (core.model.layout); its copy in
    every format does too — the float ones their fused weight again, the packed ones one packed module
    per group, quantized row by row and group by group as the parts are — with the same logits as the
    parts one by one, and the products timed alone are the step's four per block."""
    fused = copy.deepcopy(model)
    fuse_projections(fused)
    m = build(fused, fmt)
    for block in m.layers:
        assert block.self_attn.fused_qkv is not None and block.mlp.fused_gate_up is not None
        packed = fmt not in ("float32", "bfloat16")
        assert (block.self_attn.fused_qkv.module is not None) == packed
    assert len(step_products(m)) == 4 * CFG.n_layer
    parts = build(model, fmt)  # the unfused model's copy: every part on its own
    assert all(b.self_attn.fused_qkv is None for b in parts.layers)
    got, ref = _step(m, rest_dtype(fmt)), _step(parts, rest_dtype(fmt))
    # float32 formats: the same sums in another order; bfloat16 ones: their rounding of such sums.
    limit = 1e-5 if rest_dtype(fmt) == torch.float32 and "bf16" not in fmt else 0.01
    assert float((got - ref).abs().max()) <= limit * float(ref.abs().max()), fmt
