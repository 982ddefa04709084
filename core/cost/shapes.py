"""Model shapes for the cost calculators: Hugging Face ``config.json`` parsing (the KV structure beyond
M = 2·B·L·T·H_kv·d·b read by ``core.cost.kv_config``) and the "7B, Q4, 8K" model-card reading (Ch. 19).
``KVShape`` and the presets (the chapters' examples, published open models) live in ``core.cost.kv_shape``;
typed request lengths are read by ``core.cost.request_sizes``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from core.cost.config_fields import uncounted_fields
from core.cost.kv_config import read_structure
from core.cost.kv_shape import PRESETS, KVShape
from core.cost.request_sizes import MAX_POSITIONS
from core.gguf.names import WeightFormat, read_weight_format
from core.text import quoted

# One published shape per size class, for reading a card's parameter count (Llama-2-7B for
# "7B", as Ch. 19's example; Llama-3-70B for "70B").
CARD_SHAPES = (
    "GPT-2 small (MHA)",
    "Llama-3.2-1B (GQA)",
    "Llama-3.2-3B (GQA)",
    "Llama-2-7B (MHA)",
    "Llama-3-8B (GQA)",
    "Llama-2-13B (MHA)",
    "Llama-3-70B (GQA)",
)


def assumed_kv_shape(n_params: int) -> tuple[KVShape, str]:
    """The published shape (``CARD_SHAPES``) whose parameter count is nearest ``n_params`` (by
    ratio), and a sentence naming it; beyond 1.5× from every shape the sentence says so and asks
    for the architecture. A card gives no layer or KV-head counts: this is an assumption, stated."""
    if not n_params > 0:
        raise ValueError("the parameter count must be positive")
    name = min(CARD_SHAPES, key=lambda k: abs(math.log(n_params / PRESETS[k].n_params)))
    s = PRESETS[name]
    ratio = max(n_params, s.n_params) / min(n_params, s.n_params)
    terms = f"{s.n_layer} layers, {s.n_kv_head} KV heads, head_dim {s.head_dim}"
    if ratio > 1.5:
        note = (
            f"No published shape here is within 1.5× of {n_params / 1e9:.3g} B parameters; the nearest is {name} "
            f"({s.n_params / 1e9:.3g} B: {terms}). Choose the architecture or paste its config.json."
        )
    else:
        note = (
            f"KV cache assumed from {name} ({s.n_params / 1e9:.3g} B parameters: {terms}), the nearest published shape."
        )
    return s, note


DTYPE_BYTES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2, "float8_e4m3fn": 1, "int8": 1}

# Hugging Face field names, then the older aliases some model families use.
ALIASES = {
    "num_hidden_layers": ("num_hidden_layers", "n_layer", "num_layers"),
    "num_attention_heads": ("num_attention_heads", "n_head", "num_heads"),
    "hidden_size": ("hidden_size", "n_embd", "d_model"),
    "num_key_value_heads": ("num_key_value_heads", "num_kv_heads", "n_head_kv"),
}
MAX_CONFIG_BYTES = 1_000_000
MAX_TERM = 10**6  # layers, heads and head width beyond this are not a model this calculator can take


def _field(cfg: dict, name: str, required: bool):
    for alias in ALIASES[name]:
        if alias in cfg:
            value = cfg[alias]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f'"{alias}" must be a whole number ≥ 1, got {quoted(value)}')
            if value > MAX_TERM:
                raise ValueError(f'"{alias}" = {quoted(value)} is more than this calculator takes ({MAX_TERM:,})')
            return value
    if required:
        raise ValueError(f'missing field "{name}" (also accepted: {", ".join(ALIASES[name][1:])})')
    return None


def parse_hf_config(text: str | bytes, name: str = "uploaded config.json") -> KVShape:
    """Read the KV terms from a Hugging Face ``config.json``.

    Uses ``num_hidden_layers``, ``num_attention_heads``, ``num_key_value_heads`` (default: the
    number of attention heads; read from ``text_config`` when the language model's fields sit
    there, as in multimodal configs; ``multi_query: true`` means 1 unless Falcon's
    ``new_decoder_architecture`` is true; a list means one count per layer), the sliding windows, MLA's
    latent and any field not modelled (``core.cost.kv_config.read_structure``), ``head_dim`` (default
    ``hidden_size / num_attention_heads``) and ``torch_dtype`` or ``dtype`` (default float16,
    stated in the note). Raises ``ValueError`` naming the problem: not UTF-8 JSON, not an
    object, too large, a missing or non-integer field.
    """
    if isinstance(text, bytes):
        if len(text) > MAX_CONFIG_BYTES:
            raise ValueError(f"the file is {len(text):,} bytes; a config.json is far smaller (limit 1 MB)")
        try:
            text = text.decode("utf-8-sig")  # a byte-order mark is fine
        except UnicodeDecodeError:
            raise ValueError("the file is not UTF-8 text (a binary file?), so it cannot be a config.json") from None
    if not text.strip():
        raise ValueError("the config is empty")
    if len(text) > MAX_CONFIG_BYTES:
        raise ValueError(f"the text is {len(text):,} characters; a config.json is far smaller (limit 1 MB)")
    try:
        cfg = json.loads(text.lstrip("\ufeff"))
    except json.JSONDecodeError as err:
        raise ValueError(f"not valid JSON ({err.msg.lower()}; line {err.lineno}, column {err.colno})") from None
    except RecursionError:
        raise ValueError("not a config.json: the JSON is nested far too deeply") from None
    except ValueError as err:  # Python refuses integers of more than 4,300 digits (its own wording names sys)
        if "integer string conversion" not in str(err):
            raise
        raise ValueError("not a config.json: it has a number with more than 4,300 digits") from None
    if not isinstance(cfg, dict):
        raise ValueError('the JSON must be an object like {"num_hidden_layers": 32, ...}')
    nested = cfg.get("text_config")
    if isinstance(nested, dict) and not any(a in cfg for a in ALIASES["num_hidden_layers"]):
        # Multimodal models (LLaVA, Gemma 3, Llama 4, …) keep the language model's terms under
        # text_config; the KV cache is the language model's. Its dtype and model_type win over the top
        # level's (the top's model_type, "gemma3", still picks the family's default window pattern).
        top = {k: cfg[k] for k in ("torch_dtype", "dtype", "model_type") if k in cfg}
        cfg = {**top, **nested}
        name = f"{name} (text_config)"
    n_layer = _field(cfg, "num_hidden_layers", True)
    n_head = _field(cfg, "num_attention_heads", True)
    head_dim = cfg.get("head_dim", cfg.get("kv_channels"))  # ChatGLM's kv_channels: the head width
    hidden = _field(cfg, "hidden_size", head_dim is None)
    structure = read_structure(cfg, n_layer, n_head, MAX_TERM, hidden)
    layer_heads = structure.n_kv_head if isinstance(structure.n_kv_head, tuple) else None
    n_kv = max(layer_heads) if layer_heads else structure.n_kv_head
    if head_dim is None:
        if hidden % n_head:
            raise ValueError(f"hidden_size {hidden} is not divisible by num_attention_heads {n_head}")
        head_dim = hidden // n_head
    elif isinstance(head_dim, bool) or not isinstance(head_dim, int) or not 1 <= head_dim <= MAX_TERM:
        raise ValueError(f'"head_dim" must be a whole number from 1 to {MAX_TERM:,}, got {quoted(head_dim)}')
    for heads in set(layer_heads or (n_kv,)) - {0}:  # 0: a layer without a KV cache
        if structure.latent is None and n_head % heads:
            raise ValueError(f"num_attention_heads {n_head} is not a multiple of num_key_value_heads {heads}")
    dtype = cfg.get("torch_dtype", cfg.get("dtype"))
    note = ""
    if dtype is None:
        dtype, note = "float16", "no torch_dtype given: assumed float16 (2 bytes)"
    if not isinstance(dtype, str) or dtype not in DTYPE_BYTES:
        raise ValueError(f"unknown torch_dtype {quoted(dtype)}; known: {', '.join(DTYPE_BYTES)}")
    context = cfg.get("max_position_embeddings", cfg.get("n_positions", cfg.get("seq_length")))
    context = context if isinstance(context, int) and not isinstance(context, bool) and context > 0 else None
    unused = ""
    if context is not None and context > MAX_POSITIONS:  # would become T and be refused as if typed
        unused, context = f"; max_position_embeddings {context:,} is past {MAX_POSITIONS:,}: not used", None
    return KVShape(
        name,
        n_layer,
        n_head,
        n_kv,
        head_dim,
        hidden or n_head * head_dim,
        DTYPE_BYTES[dtype],
        context,
        "; ".join([note or f"torch_dtype {dtype}", *structure.notes]) + unused,
        window=structure.window,
        rule=structure.rule,
        latent=structure.latent,
        layer_heads=layer_heads,
        unmodelled=structure.unmodelled,
        hybrid=structure.hybrid,
        state=structure.state,
        layer_dims=structure.layer_dims,
        uncounted=uncounted_fields(cfg) + structure.per_layer_other,
    )


@dataclass(frozen=True)
class ModelCard:
    """A card like "7B, Q4_K_M, 8K": parameters, bits per weight (exact, or typical for a mix:
    see ``weight_format``), context window in tokens, and the KV shape assumed for it
    (``kv_shape``, with ``kv_note`` saying which and why)."""

    n_params: int
    bits_per_weight: float
    context_tokens: int
    weight_format: WeightFormat
    kv_shape: KVShape
    kv_note: str


_CARD = re.compile(
    r"^\s*(?P<p>\d+(?:\.\d+)?)\s*(?P<pu>[KMBT])[\s,]+(?P<f>[^,]+?)[\s,]+(?P<c>\d+(?:\.\d+)?)\s*(?P<cu>[KM]?)"
    r"(?:\s*tokens?)?\s*$",
    re.IGNORECASE,
)
_PARAM_UNITS = {"K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12}
CARD_EXAMPLE = "“7B, Q4_K_M, 8K” or “70B, FP16, 4096” (parameters, weight format, context)"


def parse_model_card(text: str) -> ModelCard:
    """Read "7B, Q4, 8K" (Ch. 19): 7·10⁹ parameters, the weight format (``read_weight_format``:
    F16, BF16, INT8, 4-bit, Q8_0, Q2_K … Q6_K, Q4_K_M …), 8K = 8,192 tokens (context sizes count
    in powers of two), and the KV shape assumed for that size (``assumed_kv_shape``).
    "7B, Q2_K, 8K" → 2.625 bits per weight; "6.74B, Q4_K_M, 4K" → 4.84, typical (a mix).
    Raises ``ValueError`` with an example of what it reads."""
    text = text or ""
    m = _CARD.match(text) if len(text) <= 100 else None
    if not m:
        raise ValueError(f"cannot read {quoted(text, 60)}: write it like {CARD_EXAMPLE}")
    n_params = round(float(m["p"]) * _PARAM_UNITS[m["pu"].upper()])
    if n_params < 1:
        raise ValueError(f"{m['p']}{m['pu']} parameters is less than one")
    try:
        fmt = read_weight_format(m["f"])
    except ValueError as err:
        raise ValueError(f"{err}; e.g. {CARD_EXAMPLE}") from None
    ctx = float(m["c"]) * {"": 1, "K": 1024, "M": 1024**2}[m["cu"].upper()]
    if ctx < 1 or not math.isfinite(ctx) or ctx != int(ctx):
        raise ValueError(f"the context window must be a whole number of tokens, got {m['c']}{m['cu']}")
    shape, note = assumed_kv_shape(n_params)
    return ModelCard(n_params, fmt.bits_per_weight, int(ctx), fmt, shape, note)
