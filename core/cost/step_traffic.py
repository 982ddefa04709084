"""FLOPs and bytes of one forward pass (a prefill or a decode step), for a roofline.

A pass of ``B`` rows, each with ``T`` new positions attending to ``S`` positions (cached + new):
a decode step is ``T = 1, S = n``; a prefill of n positions is ``T = S = n``. Counted:

- **FLOPs**: the matrix products the model runs, 2 per multiply-add, which is what torch's
  ``FlopCounterMode`` counts (tests/core/cost/test_step_traffic.py checks it on the real model):
  every linear weight once per new position (``2 · P_linear`` per token, the output head included)
  plus attention's two products ``q·kᵀ`` and ``att·v`` over all ``S`` slots (``2 · 2 · n_layer ·
  n_head · head_dim · S`` per token: the model scores the whole grid and masks). Norms, softmax,
  RoPE and the activation function are left out (a few percent at these sizes).
- **Bytes**: the least a pass must move between memory and the cores, each item once: every linear
  weight (read in full, however many rows: the decode floor is "weight bytes ÷ bandwidth"), the norm
  weights and biases, the embedding rows looked up, the cached K/V read, the new K/V written and the
  logits written (the model computes logits at every new position).

Intensity = FLOPs ÷ bytes (FLOP/byte); a pass's floor on a machine is max(bytes ÷ bandwidth,
FLOPs ÷ peak). Sources: Williams, Waterman & Patterson, "Roofline" (CACM 2009); LLM-Viewer
(Yuan et al., arXiv 2402.16363) models the same terms from a hardware table.
"""

from __future__ import annotations

from fractions import Fraction

from core.model.config import GPTConfig

# Weight formats timed by core.evaluate.format_speed: bytes per linear weight of a block's
# projections, with the per-row / per-block scales included, and the dtype everything else keeps
# (embedding, norms, output head, the KV cache and activations). Exact fractions.
#   int8: one byte per weight + one scale per output row in the kernel's activation dtype;
#   int4: half a byte + a scale and a zero point per group of 32 in bfloat16;
# the int kernels' bfloat16 activations are converted at each product; the rest stays float32.
#   Q8_0 / Q4_0: ggml's blocks of 32 (34 and 18 bytes: a 2-byte fp16 scale + the codes).
FORMATS = {
    "float32": {"weight": Fraction(4), "row": Fraction(0), "rest": 4},
    "bfloat16": {"weight": Fraction(2), "row": Fraction(0), "rest": 2},
    "int8 (bf16 activations)": {"weight": Fraction(1), "row": Fraction(2), "rest": 4},
    "int8 (f32 activations)": {"weight": Fraction(1), "row": Fraction(4), "rest": 4},
    "int4 (bf16 activations)": {"weight": Fraction(1, 2) + Fraction(2 * 2, 32), "row": Fraction(0), "rest": 4},
    "Q8_0 dequantize + matmul": {"weight": Fraction(34, 32), "row": Fraction(0), "rest": 4},
    "Q4_0 dequantize + matmul": {"weight": Fraction(18, 32), "row": Fraction(0), "rest": 4},
}


def _check(name: str, value: int, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be a whole number ≥ {low}, got {value!r}")
    return value


def projection_shapes(cfg: GPTConfig) -> list[tuple[int, int]]:
    """``(out, in)`` of one block's projections: q, k, v, o, then the MLP's (gate,) up, down."""
    c, hd = cfg.n_embd, cfg.head_dim
    attn = [(cfg.n_head * hd, c), (cfg.n_kv_head * hd, c), (cfg.n_kv_head * hd, c), (c, cfg.n_head * hd)]
    mlp = [(cfg.ffn_hidden, c)] * (2 if cfg.mlp == "swiglu" else 1) + [(c, cfg.ffn_hidden)]
    return attn + mlp


def linear_params(cfg: GPTConfig) -> dict:
    """Weights of the linear layers: ``"linear/projections"`` (every block's), ``"linear/head"``
    (the output head, C · V) and ``"total"``. Biases are not matrix weights (see ``other_params``)."""
    proj = cfg.n_layer * sum(o * i for o, i in projection_shapes(cfg))
    head = cfg.n_embd * cfg.vocab_size
    return {"linear/projections": proj, "linear/head": head, "total": proj + head}


def other_params(cfg: GPTConfig) -> dict:
    """Parameters outside the linear weights: norms (with LayerNorm's bias and Qwen3's per-head q/k
    norms), biases, the embedding (none of its own when tied to the head) and a learned position table."""
    c, hd = cfg.n_embd, cfg.head_dim
    per_norm = c * (2 if cfg.norm == "layernorm" else 1)
    norms = (2 * cfg.n_layer + 1) * per_norm + cfg.n_layer * 2 * cfg.head_dim * cfg.qk_norm  # Qwen3's q/k norms
    biases = 0
    if cfg.qkv_bias:
        biases += (cfg.n_head + 2 * cfg.n_kv_head) * hd
    if cfg.o_bias:
        biases += c
    if cfg.mlp_bias:
        biases += cfg.ffn_hidden * (2 if cfg.mlp == "swiglu" else 1) + c
    biases *= cfg.n_layer
    embedding = 0 if cfg.tie_embeddings else cfg.vocab_size * c
    positions = cfg.block_size * c if cfg.positions == "learned" else 0
    return {
        "other/norms": norms,
        "other/biases": biases,
        "other/embedding": embedding,
        "other/positions": positions,
        "total": norms + biases + embedding + positions,
    }


def step_flops(cfg: GPTConfig, batch: int, new: int, context: int) -> dict:
    """Matmul FLOPs of one pass: ``"linear/flops"`` = 2 · B · T · P_linear, ``"attention/flops"`` =
    2 · 2 · B · n_layer · n_head · head_dim · T · S, and ``"total"`` (ints). ``new`` = T new positions
    per row, ``context`` = S positions attended after the pass (≥ T). Raises ``ValueError`` otherwise."""
    _check("batch", batch), _check("new", new), _check("context", context)
    if context < new:
        raise ValueError(f"context ({context}) must count the new positions ({new})")
    linear = 2 * batch * new * linear_params(cfg)["total"]
    attention = 2 * 2 * batch * cfg.n_layer * cfg.n_head * cfg.head_dim * new * context
    return {"linear/flops": linear, "attention/flops": attention, "total": linear + attention}


def step_bytes(
    cfg: GPTConfig, batch: int, new: int, context: int, fmt: str = "float32", logits_bytes: int | None = None
) -> dict:
    """Bytes one pass must move, in weight format ``fmt`` (a key of ``FORMATS``; float32 is the
    model as loaded): ``"weights/projections"`` (every block's projections in ``fmt``, with their
    scales), ``"weights/head"`` and ``"weights/other"`` (norms, biases, the B · T embedding rows
    looked up; in the format's ``rest`` dtype), ``"kv_cache/read"`` (the S − T cached positions of
    every layer, K and V), ``"kv_cache/write"`` (the T new ones), ``"logits/write"`` (B · T ·
    vocab_size values; ``logits_bytes`` per value, default the rest dtype) and ``"total"`` (an int:
    the fractional scales of int4 round up to whole bytes)."""
    _check("batch", batch), _check("new", new), _check("context", context)
    if context < new:
        raise ValueError(f"context ({context}) must count the new positions ({new})")
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    f = FORMATS[fmt]
    rest = f["rest"]
    rows = cfg.n_layer * sum(o for o, _ in projection_shapes(cfg))
    lin = linear_params(cfg)
    other = other_params(cfg)
    proj = lin["linear/projections"] * f["weight"] + rows * f["row"]
    looked_up = batch * new * cfg.n_embd * (1 + (cfg.positions == "learned"))  # embedding (+ position) rows
    weights_other = (other["other/norms"] + other["other/biases"] + looked_up) * rest
    kv_row = 2 * cfg.n_layer * cfg.n_kv_head * cfg.head_dim * rest  # K and V, every layer, one position
    out = {
        "weights/projections": proj,
        "weights/head": lin["linear/head"] * rest,
        "weights/other": weights_other,
        "kv_cache/read": batch * (context - new) * kv_row,
        "kv_cache/write": batch * new * kv_row,
        "logits/write": batch * new * cfg.vocab_size * (rest if logits_bytes is None else logits_bytes),
    }
    total = sum(Fraction(v) for v in out.values())
    out["total"] = -(-total.numerator // total.denominator)
    return out


def weight_bytes(cfg: GPTConfig, fmt: str = "float32") -> int:
    """Bytes of every weight a decode step reads in ``fmt`` (projections, head, norms, biases; not the
    embedding table, of which a step reads one row): the decode step's floor ÷ bandwidth."""
    b = step_bytes(cfg, 1, 1, 1, fmt)
    looked_up = cfg.n_embd * (1 + (cfg.positions == "learned")) * FORMATS[fmt]["rest"]
    exact = Fraction(b["weights/projections"]) + b["weights/head"] + b["weights/other"] - looked_up
    return -(-exact.numerator // exact.denominator)


def intensity(cfg: GPTConfig, batch: int, new: int, context: int, fmt: str = "float32") -> float:
    """Arithmetic intensity of a pass in FLOP/byte."""
    return step_flops(cfg, batch, new, context)["total"] / step_bytes(cfg, batch, new, context, fmt)["total"]
