"""Model shapes for the cost calculators: the chapters' examples, published open models,
Hugging Face ``config.json`` parsing, and the "7B, Q4, 8K" model-card reading (Ch. 19).

Open-model shapes are copied from their published ``config.json`` files.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class KVShape:
    """The terms of M = 2·B·L·T·H_kv·d·b that belong to a model (B and T belong to the request).

    ``hidden_size`` is kept to show the common mistake of using it instead of H_kv·d;
    ``n_head`` (query heads) does not enter the formula. ``bytes_per_value`` b in bytes.
    """

    name: str
    n_layer: int
    n_head: int
    n_kv_head: int
    head_dim: int
    hidden_size: int
    bytes_per_value: float
    context_window: int | None = None
    note: str = ""

    @property
    def attention_kind(self) -> str:
        if self.n_kv_head == self.n_head:
            return "MHA"
        return "MQA" if self.n_kv_head == 1 else "GQA"


PRESETS: dict[str, KVShape] = {
    "Ch. 30 two-layer example": KVShape(
        "Ch. 30 Example 30.3", 2, 2, 2, 4, 8, 2, None, "8 positions → 512 bytes; 9 → 576; 10 → 640"
    ),
    "Ch. 30 24-layer example": KVShape(
        "Ch. 30 §30.4",
        24,
        8,
        8,
        128,
        1024,
        2,
        4096,
        "T = 4,096 → 384 MiB; two requests → 768 MiB; with 4 KV heads and 4 requests (exercise 3) → 768 MiB",
    ),
    "Ch. 19 width-12,288, 96-layer model": KVShape(
        "Ch. 19 cache bill", 96, 96, 96, 128, 12288, 2, 2048, "4,718,592 bytes per token; ≈ 9.66 GB at 2,048 tokens"
    ),
    "GPT-2 small (MHA)": KVShape("gpt2", 12, 12, 12, 64, 768, 4, 1024, "published config: float32"),
    "Llama-2-7B (MHA)": KVShape("meta-llama/Llama-2-7b-hf", 32, 32, 32, 128, 4096, 2, 4096, "float16"),
    "Llama-3-8B (GQA)": KVShape("meta-llama/Meta-Llama-3-8B", 32, 32, 8, 128, 4096, 2, 8192, "bfloat16"),
    "Mistral-7B-v0.1 (GQA)": KVShape("mistralai/Mistral-7B-v0.1", 32, 32, 8, 128, 4096, 2, 32768, "bfloat16"),
    "Falcon-7B (MQA)": KVShape("tiiuae/falcon-7b", 32, 71, 1, 64, 4544, 2, 2048, "bfloat16, multi_query"),
}

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


def _short(value, n: int = 40) -> str:
    """repr of a value, cut to ``n`` characters, for messages that quote user input."""
    text = repr(value)
    return text if len(text) <= n else text[: n - 1] + "…"


def _field(cfg: dict, name: str, required: bool):
    for alias in ALIASES[name]:
        if alias in cfg:
            value = cfg[alias]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"`{alias}` must be a whole number ≥ 1, got {_short(value)}")
            if value > MAX_TERM:
                raise ValueError(f"`{alias}` = {_short(value)} is more than this calculator takes ({MAX_TERM:,})")
            return value
    if required:
        raise ValueError(f"missing field `{name}` (also accepted: {', '.join(ALIASES[name][1:])})")
    return None


def parse_hf_config(text: str | bytes, name: str = "uploaded config.json") -> KVShape:
    """Read the KV terms from a Hugging Face ``config.json``.

    Uses ``num_hidden_layers``, ``num_attention_heads``, ``num_key_value_heads`` (default: the
    number of attention heads; read from ``text_config`` when the language model's fields sit
    there, as in multimodal configs; ``multi_query: true`` means 1), ``head_dim`` (default
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
    if not isinstance(cfg, dict):
        raise ValueError('the JSON must be an object like {"num_hidden_layers": 32, ...}')
    nested = cfg.get("text_config")
    if isinstance(nested, dict) and not any(a in cfg for a in ALIASES["num_hidden_layers"]):
        # Multimodal models (LLaVA, Gemma 3, Llama 4, …) keep the language model's terms under
        # text_config; the KV cache is the language model's. Its dtype wins over the top level's.
        top_dtype = {k: cfg[k] for k in ("torch_dtype", "dtype") if k in cfg}
        cfg = {**top_dtype, **nested}
        name = f"{name} (text_config)"
    n_layer = _field(cfg, "num_hidden_layers", True)
    n_head = _field(cfg, "num_attention_heads", True)
    n_kv = 1 if cfg.get("multi_query") is True else _field(cfg, "num_key_value_heads", False) or n_head
    head_dim = cfg.get("head_dim")
    hidden = _field(cfg, "hidden_size", head_dim is None)
    if head_dim is None:
        if hidden % n_head:
            raise ValueError(f"hidden_size {hidden} is not divisible by num_attention_heads {n_head}")
        head_dim = hidden // n_head
    elif isinstance(head_dim, bool) or not isinstance(head_dim, int) or not 1 <= head_dim <= MAX_TERM:
        raise ValueError(f"`head_dim` must be a whole number from 1 to {MAX_TERM:,}, got {_short(head_dim)}")
    if n_head % n_kv:
        raise ValueError(f"num_attention_heads {n_head} is not a multiple of num_key_value_heads {n_kv}")
    dtype = cfg.get("torch_dtype", cfg.get("dtype"))
    note = ""
    if dtype is None:
        dtype, note = "float16", "no torch_dtype given: assumed float16 (2 bytes)"
    if not isinstance(dtype, str) or dtype not in DTYPE_BYTES:
        raise ValueError(f"unknown torch_dtype {_short(dtype)}; known: {', '.join(DTYPE_BYTES)}")
    context = cfg.get("max_position_embeddings", cfg.get("n_positions"))
    context = context if isinstance(context, int) and not isinstance(context, bool) and context > 0 else None
    return KVShape(
        name,
        n_layer,
        n_head,
        n_kv,
        head_dim,
        hidden or n_head * head_dim,
        DTYPE_BYTES[dtype],
        context,
        note or f"torch_dtype {dtype}",
    )


@dataclass(frozen=True)
class ModelCard:
    """A card like "7B, Q4, 8K": parameters, bits per weight, context window in tokens."""

    n_params: int
    bits_per_weight: int
    context_tokens: int


_CARD = re.compile(
    r"^\s*(?P<p>\d+(?:\.\d+)?)\s*(?P<pu>[KMBT])\s*,?\s*Q(?P<q>\d+)(?:_\w+)?\s*,?\s*(?P<c>\d+(?:\.\d+)?)\s*(?P<cu>[KM]?)\s*$",
    re.IGNORECASE,
)
_PARAM_UNITS = {"K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12}


def parse_model_card(text: str) -> ModelCard:
    """Read "7B, Q4, 8K" (Ch. 19): 7·10⁹ parameters, 4-bit weights, 8K = 8,192 tokens
    (context sizes count in powers of two). Raises ``ValueError`` with the expected form."""
    m = _CARD.match(text or "")
    if not m:
        raise ValueError(f"cannot read {text!r}: write it like “7B, Q4, 8K” (parameters, bits, context)")
    n_params = round(float(m["p"]) * _PARAM_UNITS[m["pu"].upper()])
    bits = int(m["q"])
    if not 1 <= bits <= 32:
        raise ValueError(f"Q{bits}: bits per weight must be between 1 and 32")
    ctx = float(m["c"]) * {"": 1, "K": 1024, "M": 1024**2}[m["cu"].upper()]
    if ctx < 1 or not math.isfinite(ctx) or ctx != int(ctx):
        raise ValueError(f"the context window must be a whole number of tokens, got {m['c']}{m['cu']}")
    return ModelCard(n_params, bits, int(ctx))


MAX_REQUESTS = 10_000


def parse_lengths(text: str) -> list[int]:
    """Request lengths from text like "4096, 4096" or "8 10" (positions per request).

    Raises ``ValueError`` for an empty list, a non-integer, zero or negative length, or more
    than ``MAX_REQUESTS`` requests. Lengths may be huge: they stay exact Python integers.
    """
    parts = [p for p in re.split(r"[,\s;]+", text or "") if p]
    if not parts:
        raise ValueError("give at least one request length, e.g. 4096")
    if len(parts) > MAX_REQUESTS:
        raise ValueError(f"{len(parts):,} requests is more than this calculator takes ({MAX_REQUESTS:,})")
    out = []
    for p in parts:
        clean = p.replace("_", "")
        if not (clean.isascii() and clean.isdecimal()):
            raise ValueError(f"{_short(p, 20)} is not a whole number of positions")
        if len(clean) > 30:
            raise ValueError(f"{_short(p, 20)} has more digits than any context window (at most 30 here)")
        if int(clean) < 1:
            raise ValueError("every request needs at least 1 position")
        out.append(int(clean))
    return out


def parse_budgets(text: str, max_tokens: int) -> list[int]:
    """Token budgets from text like "12, 20, 6" (tokens each request may generate), for the
    batching page: the words are about tokens to generate, not cache positions.

    Raises ``ValueError`` for an empty list, a non-integer, a budget below 1 or above
    ``max_tokens`` (the context window)."""
    parts = [p for p in re.split(r"[,\s;]+", text or "") if p]
    if not parts:
        raise ValueError("give one token budget per prompt, e.g. 12, 20")
    out = []
    for i, p in enumerate(parts, 1):
        clean = p.replace("_", "")
        if not (clean.isascii() and clean.isdecimal()):
            raise ValueError(f"budget {i} ({_short(p, 20)}) is not a whole number of tokens")
        if int(clean) < 1:
            raise ValueError(f"budget {i} is {int(clean)}: every request must generate at least 1 token")
        if int(clean) > max_tokens:
            raise ValueError(
                f"budget {i} ({_short(p, 20)}) is more tokens than the context window holds ({max_tokens})"
            )
        out.append(int(clean))
    return out
