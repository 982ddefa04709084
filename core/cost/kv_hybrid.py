"""Hybrid models: layers that keep a fixed-size recurrent state instead of a KV cache.

M = 2·B·L·T·H_kv·d·b (Ch. 30 §30.4) grows linearly with T on every layer that attends. A hybrid attends
on a few layers only; the others keep, per request, a state whose size does not depend on T:

- **Jamba** (``JambaConfig``): attention where i mod ``attn_layer_period`` = ``attn_layer_offset`` (Jamba-v0.1:
  layers 4, 12, 20, 28 of 32), Mamba elsewhere. A Mamba layer keeps a conv state of d_inner · d_conv values
  and an SSM state of d_inner · d_state values, d_inner = ``mamba_expand`` · ``hidden_size``.
- **Qwen3-Next** (``Qwen3NextConfig``): attention where (i + 1) mod ``full_attention_interval`` = 0 (or as its
  ``layer_types`` lists), Gated DeltaNet elsewhere: a conv state of (2·H_k·d_k + H_v·d_v) · kernel values and
  a recurrent state of H_v · d_k · d_v values (``linear_num_key_heads`` H_k, ``linear_key_head_dim`` d_k,
  ``linear_num_value_heads`` H_v, ``linear_value_head_dim`` d_v, ``linear_conv_kernel_dim``).

Bytes as transformers 5.x holds them (``LinearAttentionLayer``: measured on tiny models' cache tensors by
tests/core/cost/test_kv_hybrid.py): the conv state in the model's dtype, the recurrent state in float32.
A field a config leaves out takes the transformers class's default, and the notes say so. Other hybrids
(Bamba, Zamba, MiniMax, LFM2, …) get a sentence naming their field instead of a number.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from core.cost.kv_layers import layer_counts, layers_kv_bytes
from core.text import quoted

STATE_BYTES = 4  # the recurrent state's float32, whatever the model's dtype (transformers' cache tensors)
STATE_KINDS = {"linear_attention": "S", "mamba": "S"}  # layer_types naming a layer that keeps a state

# Fields that make a model hybrid, for the families whose state is not sized here: named, never priced.
OTHER_HYBRIDS = {
    "layers_block_type": "a hybrid of attention and state-space (Mamba) layers",
    "attn_layer_indices": "attention on only some layers, the others state-space layers",
    "attn_layer_period": "attention every few layers, the others state-space layers",
    "full_attention_interval": "full attention every few layers, the others linear-attention layers",
    "linear_attn_config": "linear-attention layers, which keep a fixed-size state instead of a cache",
    "hybrid_override_pattern": "a pattern of Mamba, attention and MLP layers",
    "block_types": "recurrent blocks beside local attention",
    "full_attn_idxs": "attention on listed layers, short convolutions on the others",
}
JAMBA = {"mamba_expand": 2, "mamba_d_conv": 4, "mamba_d_state": 16}  # JambaConfig's defaults
DELTANET = {  # Qwen3NextConfig's defaults
    "linear_conv_kernel_dim": 4,
    "linear_key_head_dim": 128,
    "linear_value_head_dim": 128,
    "linear_num_key_heads": 16,
    "linear_num_value_heads": 32,
}


@dataclass(frozen=True)
class RecurrentState:
    """What one state layer keeps per request, whatever T: ``conv_values`` (the short convolution's last
    inputs, held in the model's dtype) and ``state_values`` (the recurrent state, held in float32), with
    their terms in words ("d_inner · d_conv = 8,192 · 4")."""

    kind: str
    conv_values: int
    state_values: int
    conv_terms: str
    state_terms: str
    state_in_model_dtype: bool = False  # MiniMax's lightning state: held in the model's dtype, not float32

    def state_b(self, b) -> Fraction:
        """Bytes of one state value: the model's ``b``, or float32's 4."""
        return Fraction(b) if self.state_in_model_dtype else Fraction(STATE_BYTES)

    def layer_bytes(self, b) -> Fraction:
        """Bytes of one layer's state for one request, the conv state at ``b`` bytes a value."""
        return self.conv_values * Fraction(b) + self.state_values * self.state_b(b)


@dataclass(frozen=True)
class HybridRead:
    """What a config says about its layers without a KV cache: ``rule`` (``attention_layers``), ``state``
    (None: every layer attends), ``notes`` (defaults taken) and ``unmodelled`` (sentences)."""

    rule: str = ""
    state: RecurrentState | None = None
    notes: tuple[str, ...] = ()
    unmodelled: tuple[str, ...] = ()


@lru_cache(maxsize=16)
def attention_layers(rule: str, n_layer: int) -> tuple[bool, ...]:
    """Which of ``n_layer`` layers keep a KV cache: rule "" (every layer), "period P offset O" (Jamba:
    i mod P = O), "interval P" (Qwen3-Next: (i + 1) mod P = 0) or "kinds:" with one letter a layer (S: a
    state layer). Raises ``ValueError`` when "kinds:" lists another number of layers than ``n_layer``."""
    if not rule:
        return (True,) * n_layer
    if rule.startswith(("period ", "interval ")):
        words = rule.split()
        period = int(words[1])
        offset = int(words[3]) if words[0] == "period" else period - 1
        # One period, repeated (in C: a generator over 10⁶ typed layers took ~1 s a run).
        one = tuple(i == offset for i in range(period))
        return (one * (n_layer // period + 1))[:n_layer]
    if rule.startswith("kinds:"):
        kinds = rule[len("kinds:") :]
        if len(kinds) != n_layer:
            raise ValueError(
                f"the config names the kind of {len(kinds):,} layers (layer_types), not {n_layer:,}: "
                "give L as the config has it"
            )
        return tuple(k != "S" for k in kinds)
    raise ValueError(f"unknown hybrid rule {rule[:30]!r}")


def describe_hybrid(rule: str, n_layer: int, kind: str) -> str:
    """Which layers attend, in words: "attention on 4 of 32 layers (4, 12, 20, 28); the other 28 are Mamba
    layers" (the first layers listed, then "…")."""
    which = [i for i, a in enumerate(attention_layers(rule, n_layer)) if a]
    listed = ", ".join(f"{i:,}" for i in which[:6]) + (", …" if len(which) > 6 else "")
    at = f" ({listed})" if which else ""
    others = n_layer - len(which)
    return f"attention on {len(which):,} of {n_layer:,} layers{at}; the other {others:,} are {kind} layers"


def _term(cfg: dict, key: str, defaults: dict, limit: int, notes: list, source: str) -> int:
    if key not in cfg or cfg[key] is None:
        notes.append(f"{key} not given: {source}'s default {defaults[key]:,}")
        return defaults[key]
    value = cfg[key]
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
        raise ValueError(f'"{key}" must be a whole number from 1 to {limit:,}, got {quoted(value)}')
    return value


def mamba_state(cfg: dict, hidden: int | None, limit: int, notes: list) -> RecurrentState:
    """Jamba's Mamba layer: conv d_inner · d_conv, SSM d_inner · d_state, d_inner = mamba_expand · hidden_size."""
    if hidden is None:
        raise ValueError('"hidden_size" is needed for the Mamba layers\' state (d_inner = mamba_expand · hidden_size)')
    expand, conv, d_state = (_term(cfg, k, JAMBA, limit, notes, "JambaConfig") for k in JAMBA)
    d_inner = expand * hidden
    return RecurrentState(
        "Mamba",
        d_inner * conv,
        d_inner * d_state,
        f"d_inner · d_conv = {d_inner:,} · {conv:,}",
        f"d_inner · d_state = {d_inner:,} · {d_state:,}",
    )


def deltanet_state(cfg: dict, limit: int, notes: list) -> RecurrentState:
    """Qwen3-Next's Gated DeltaNet layer: conv (2·H_k·d_k + H_v·d_v) · kernel, recurrent H_v · d_k · d_v."""
    kernel, dk, dv, hk, hv = (_term(cfg, k, DELTANET, limit, notes, "Qwen3NextConfig") for k in DELTANET)
    return RecurrentState(
        "Gated DeltaNet",
        (2 * hk * dk + hv * dv) * kernel,
        hv * dk * dv,
        f"(2 · H_k · d_k + H_v · d_v) · kernel = (2 · {hk:,} · {dk:,} + {hv:,} · {dv:,}) · {kernel:,}",
        f"H_v · d_k · d_v = {hv:,} · {dk:,} · {dv:,}",
    )


def lightning_state(cfg: dict, limit: int) -> RecurrentState:
    """MiniMax's lightning (linear) attention layer: one H · d · d state, no convolution, held in the model's
    dtype (transformers' ``MiniMaxLightningAttention``: ``attn_weights_inter``)."""
    n_head = cfg.get("num_attention_heads")
    if isinstance(n_head, bool) or not isinstance(n_head, int) or not 1 <= n_head <= limit:
        raise ValueError(f'"num_attention_heads" must be a whole number from 1 to {limit:,}, got {quoted(n_head)}')
    d = cfg.get("head_dim")
    if d is None:
        hidden = cfg.get("hidden_size")
        if isinstance(hidden, bool) or not isinstance(hidden, int) or hidden % n_head:
            raise ValueError('"hidden_size" must be a whole multiple of "num_attention_heads" for the linear state')
        d = hidden // n_head
    return RecurrentState("lightning attention", 0, n_head * d * d, "none", f"H · d · d = {n_head:,} · {d:,} · {d:,}",
                          state_in_model_dtype=True)  # fmt: skip


def _whole(cfg: dict, key: str, default: int, least: int, notes: list, source: str) -> int:
    if key not in cfg:
        notes.append(f"{key} not given: {source}'s default {default}")
        return default
    value = cfg[key]
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= 10**6:
        raise ValueError(f'"{key}" must be a whole number from {least} to 1,000,000, got {quoted(value)}')
    return value


def read_hybrid(cfg: dict, kinds: str | None, hidden: int | None, limit: int) -> HybridRead:
    """The layers of ``cfg`` that keep a state instead of a KV cache. ``kinds``: its ``layer_types`` as one
    letter a layer (G global, L local, S state, ? other), or None when it lists none. Raises ``ValueError``
    naming a bad field."""
    model_type = str(cfg.get("model_type") or "")
    listed_states = kinds is not None and "S" in kinds
    if model_type == "jamba" or (not model_type and "attn_layer_period" in cfg):
        family = "jamba"
    elif model_type == "qwen3_next" or (not model_type and "full_attention_interval" in cfg):
        family = "qwen3_next"
    elif (model_type in ("minimax", "minimax_text_01") or "attn_type_list" in cfg) and listed_states:
        return HybridRead(f"kinds:{kinds}", lightning_state(cfg, limit), (
            f"lightning attention on {kinds.count('S'):,} layers: one H · d · d state each, in the model's dtype "
            "(transformers' MiniMax)",
        ))  # fmt: skip
    else:
        out = [f"{key}: {what}" for key, what in OTHER_HYBRIDS.items() if cfg.get(key) not in (None, False, 0, [], "")]
        if listed_states:
            named = ", ".join(sorted({t for t in cfg["layer_types"] if isinstance(t, str) and t in STATE_KINDS}))
            out.append(
                f"layer_types {named}: {kinds.count('S'):,} layers keep a fixed-size state instead of a KV cache, "
                f"sized here for Jamba and Qwen3-Next only (model_type {quoted(model_type or 'not given', 30)})"
            )
        return HybridRead(unmodelled=tuple(out))
    notes: list[str] = []
    if family == "jamba":
        state = mamba_state(cfg, hidden, limit, notes)
        if kinds is not None:
            rule = f"kinds:{kinds}"
        else:
            period = _whole(cfg, "attn_layer_period", 8, 1, notes, "JambaConfig")
            offset = _whole(cfg, "attn_layer_offset", 4, 0, notes, "JambaConfig")
            if offset >= period:  # JambaConfig refuses it too
                raise ValueError(f'"attn_layer_offset" {offset} must be smaller than "attn_layer_period" {period}')
            rule = f"period {period} offset {offset}"
    else:
        state = deltanet_state(cfg, limit, notes)
        if kinds is not None:
            rule = f"kinds:{kinds}"
        else:
            rule = f"interval {_whole(cfg, 'full_attention_interval', 4, 1, notes, 'Qwen3NextConfig')}"
    return HybridRead(rule, state, tuple(notes))


def state_bytes(state: RecurrentState | None, n_state_layers: int, batch: int, b) -> int:
    """Bytes of the state layers for ``batch`` requests (conv state at ``b`` bytes a value), whole."""
    if state is None:
        return 0
    total = batch * n_state_layers * state.layer_bytes(b)
    return -(-total.numerator // total.denominator)


def state_line(state: RecurrentState, n_state_layers: int, batch: int, b) -> str:
    """One Markdown line: "S = B · L_state · (conv · b + state · 4 B) = … = **N bytes**, at every T"."""
    b_text = f"{float(Fraction(b)):g}"
    total = state_bytes(state, n_state_layers, batch, b)
    s_b = f"{float(state.state_b(b)):g}"
    held = f"at the model's b = {b_text} B" if state.state_in_model_dtype else "in float32"
    return (
        f"S = B · L_state · (conv · b + state · {s_b} B) = {batch:,} · {n_state_layers:,} · "
        f"({state.conv_values:,} · {b_text} + {state.state_values:,} · {s_b}) = **{total:,} bytes**, "
        f"the same at every T (conv = {state.conv_terms} values at the model's b = {b_text} B; "
        f"state = {state.state_terms} values {held})"
    )


def _kv_curve(layers, b, cache_type: str | None):
    """T → one request's KV bytes over ``layers``, counting each kind of layer once (L may be 10⁶ typed layers,
    and the bisection below asks ~40 times)."""
    kinds = layer_counts(layers)

    def kv(t: int) -> int:
        total = Fraction(0)
        for layer, count in kinds.items():
            one = layers_kv_bytes((layer,), [t], b, cache_type)
            total += count * (one["kv_cache/keys_bytes"] + one["kv_cache/values_bytes"])
        return -(-total.numerator // total.denominator)

    return kv


def crossing(layers, state_per_request: int, b, cache_type: str | None = None, limit: int = 10**12) -> int | None:
    """The first T at which one request's KV cache (``layers``: the attention layers' ``LayerCache``s) holds at
    least its fixed state (``state_per_request`` bytes); None if none up to ``limit`` (the windows may stop
    the cache growing first). KV bytes grow with T, so a bisection finds it exactly."""
    kv = _kv_curve(layers, b, cache_type)
    if not state_per_request or kv(limit) < state_per_request:
        return None
    low, high = 0, limit  # kv(low) < state ≤ kv(high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if kv(mid) >= state_per_request else (mid, high)
    return high


def growth(layers, state_per_request: int, t_max: int, b, cache_type: str | None = None) -> dict:
    """One request's KV cache and fixed state from T = 0 to ``t_max``: ``"T"`` (the points where the KV line
    bends: 0, each window, the crossing, ``t_max``), ``"kv"`` and ``"state"`` (bytes at those points) and
    ``"crossing"`` (``crossing``, also past ``t_max``). KV bytes are piecewise linear in T, so the points draw
    it exactly."""
    cross = crossing(layers, state_per_request, b, cache_type)
    kv = _kv_curve(layers, b, cache_type)
    windows = {x.window for x in layer_counts(layers) if x.window is not None and x.window < t_max}
    points = sorted({0, t_max, *windows, *([cross] if cross is not None and cross < t_max else [])})
    return {"T": points, "kv": [kv(t) for t in points], "state": [state_per_request] * len(points), "crossing": cross}
