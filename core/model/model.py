"""One causal transformer, configured by fields, with attention written out so it can be drawn.

The shipped model is Llama-style: RMSNorm, rotary position embeddings (RoPE, the rotate-half
convention of Llama), grouped-query attention (``n_kv_head`` divides ``n_head``) and a SwiGLU
MLP. ``GPTConfig``'s switches turn the same class into Mistral (a sliding window), Qwen2 (q/k/v
biases, tied embeddings), Qwen3 (per-head q/k RMSNorm before RoPE) or GPT-2 (LayerNorm, learned
absolute positions, GELU, biases everywhere): see ``core.checkpoints.load``. Module names follow
Hugging Face's ``LlamaForCausalLM`` (minus its ``model.`` prefix) so the same weights load into
both, which the tests use as an independent reference; other families' tensors are renamed into
these on load. RoPE's tables and rotation are in ``core.model.rope``; the decode layout and fused
projections in ``core.model.layout``.

Dims: ``B`` batch, ``T`` new positions in this pass, ``S`` positions attended (cached + new),
``C`` = ``n_embd``, ``hd`` = ``head_dim``, ``g`` = ``n_kv_head``, ``r`` = ``n_head // n_kv_head``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from core.model.config import GPTConfig
from core.model.layout import fuse_projections, project
from core.model.rope import rope_tables, rotate, signed_sin


class RMSNorm(nn.Module):
    """x / sqrt(mean(x²) + eps) · weight (Zhang & Sennrich, 2019)."""

    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # torch's one op for x · rsqrt(mean(x²) + eps) · weight: the same values as those four
        # operations written out (equal to the last bit here), ~4 µs less per norm in a decode step.
        return F.rms_norm(x, self.weight.shape, self.weight, self.eps)


def make_norm(cfg: GPTConfig) -> nn.Module:
    """RMSNorm, or LayerNorm with a bias (GPT-2), over ``n_embd`` with ``norm_eps``."""
    return RMSNorm(cfg.n_embd, cfg.norm_eps) if cfg.norm == "rmsnorm" else nn.LayerNorm(cfg.n_embd, cfg.norm_eps)


def causal_mask(T: int, S: int, start: int = 0) -> torch.Tensor:
    """``(1, T, S)`` bool, True where query i (at slot ``start + i``) may read key slot j: j ≤ start + i."""
    q_slot = torch.arange(start, start + T).unsqueeze(1)  # (T, 1)
    return (torch.arange(S).unsqueeze(0) <= q_slot).unsqueeze(0)  # (1, T, S)


def window_mask(mask: torch.Tensor, window: int) -> torch.Tensor:
    """Keep, in each query's row of ``mask`` ``(B, T, S)``, only its last ``window`` readable
    slots: a sliding window (Mistral) where a query at position p reads keys p−W+1 … p. Every
    cache lays a row's readable keys out in position order without gaps, so "the last W
    readable" are the W most recent positions; older keys may stay cached but are masked."""
    readable_from_here = mask.flip(-1).cumsum(-1).flip(-1)  # (B, T, S): readable slots at or after j
    return mask & (readable_from_here <= window)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor, scale: float):
    """Attention written out: softmax(q·kᵀ·scale, masked) · v, grouped-query.

    q ``(B, n_head, T, hd)``; k, v ``(B, g, S, hd)`` with ``g`` dividing ``n_head`` (query head
    h reads KV head h // r, the grouping of Llama's ``repeat_kv``; g = n_head is plain MHA).
    The r query heads of a group are stacked along the query axis and multiplied by their shared
    K/V directly, so K and V are never copied r times. ``mask`` bool, broadcastable to
    ``(B, n_head, T, S)``, True where a query may read a key (see ``causal_mask``), or None when
    every query may read every key. Returns the output ``(B, n_head, T, hd)``, the
    probabilities ``(B, n_head, T, S)`` (exactly 0 where masked) and the raw scores
    ``(B, n_head, T, S)``.
    """
    B, n_head, T, hd = q.shape
    g, S = k.shape[1], k.shape[2]
    # Three-dimensional bmm on (B·g) groups rather than 4-D matmul: the same products, without
    # matmul's broadcasting logic (~8 µs per layer in a decode step). The reshapes of k and v are
    # views for every cache here (their batch and head strides nest).
    q = q.reshape(B * g, n_head // g * T, hd)  # (B·g, r·T, hd): row (h mod r)·T + t of group h // r
    k, v = k.reshape(B * g, S, hd), v.reshape(B * g, S, hd)  # (B·g, S, hd)
    scores = torch.bmm(q, k.transpose(1, 2)).view(B, n_head, T, S) * scale  # (B·g, r·T, S) → (B, n_head, T, S)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))  # (B, n_head, T, S)
    att = torch.softmax(scores, dim=-1)  # (B, n_head, T, S)
    y = torch.bmm(att.view(B * g, n_head // g * T, S), v)  # (B·g, r·T, hd)
    return y.view(B, n_head, T, hd), att, scores


class Attention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        c, hd = cfg.n_embd, cfg.head_dim
        self.q_proj = nn.Linear(c, cfg.n_head * hd, bias=cfg.qkv_bias)
        self.k_proj = nn.Linear(c, cfg.n_kv_head * hd, bias=cfg.qkv_bias)
        self.v_proj = nn.Linear(c, cfg.n_kv_head * hd, bias=cfg.qkv_bias)
        self.o_proj = nn.Linear(cfg.n_head * hd, c, bias=cfg.o_bias)
        # Qwen3: one RMSNorm of head_dim for every query head, one for every key head (Qwen3RMSNorm's q_norm, k_norm).
        self.q_norm = RMSNorm(hd, cfg.norm_eps) if cfg.qk_norm else None
        self.k_norm = RMSNorm(hd, cfg.norm_eps) if cfg.qk_norm else None
        self.fused_qkv = None  # core.model.layout.fuse_projections: one product for q, k and v

    def forward(self, x, rope, mask, cache, layer: int):
        """x ``(B, T, C)``; ``rope`` the pair cos, sin ``(B, 1, T, hd)`` at each position's absolute
        position (None for learned positions, already added to x); ``mask`` ``(B, 1, T, S)`` (True:
        may read). Returns the output ``(B, T, C)`` and the attention probabilities
        ``(B, n_head, T, S)`` (exactly 0 at masked cells). ``rope`` holds cos and ``signed_sin``
        (see ``rotate``); ``mask`` None: every key readable."""
        cfg = self.cfg
        B, T, _ = x.shape
        hd = cfg.head_dim
        # q and k side by side: their n_head + g heads are rotated by the same angles in one go
        # (four operations per layer instead of eight: ~1 ms of a SmolLM2-sized decode step).
        qk, v = project(x, (self.q_proj, self.k_proj, self.v_proj), self.fused_qkv, join=2)  # (B, T, ·)
        qk = qk.view(B, T, cfg.n_head + cfg.n_kv_head, hd)  # (B, T, n_head + g, hd)
        if self.q_norm is not None:  # Qwen3: each head's q and k normalized over hd, before RoPE
            q, k = qk.split((cfg.n_head, cfg.n_kv_head), dim=2)  # (B, T, n_head, hd), (B, T, g, hd)
            qk = torch.cat((self.q_norm(q), self.k_norm(k)), dim=2)  # (B, T, n_head + g, hd)
        qk = qk.transpose(1, 2)  # (B, n_head + g, T, hd)
        v = v.view(B, T, cfg.n_kv_head, hd).transpose(1, 2)  # (B, g, T, hd)
        if rope is not None:
            # Keys are rotated once, at their own position, before caching; new queries use theirs.
            qk = rotate(qk, *rope)
        q, k = qk.split((cfg.n_head, cfg.n_kv_head), dim=1)  # (B, n_head, T, hd), (B, g, T, hd)
        if cache is not None:
            k, v = cache.update(layer, k, v)  # (B, g, S, hd): cached + new
        y, att, _ = attend(q, k, v, mask, hd**-0.5)  # (B, n_head, T, hd), (B, n_head, T, S)
        y = y.transpose(1, 2).reshape(B, T, cfg.n_head * hd)  # (B, T, n_head·hd)
        return self.o_proj(y), att


class MLP(nn.Module):
    """SwiGLU: down(silu(gate(x)) · up(x)) (Shazeer, 2020), or GPT-2's down(gelu_tanh(up(x)))
    (its ``c_fc`` is ``up_proj`` here, its ``c_proj`` ``down_proj``)."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.swiglu = cfg.mlp == "swiglu"
        if self.swiglu:
            self.gate_proj = nn.Linear(cfg.n_embd, cfg.ffn_hidden, bias=cfg.mlp_bias)
        self.up_proj = nn.Linear(cfg.n_embd, cfg.ffn_hidden, bias=cfg.mlp_bias)
        self.down_proj = nn.Linear(cfg.ffn_hidden, cfg.n_embd, bias=cfg.mlp_bias)
        self.fused_gate_up = None  # core.model.layout.fuse_projections: one product for gate and up

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.swiglu:
            gate, up = project(x, (self.gate_proj, self.up_proj), self.fused_gate_up)  # (B, T, ffn_hidden)
            return self.down_proj(F.silu(gate) * up)  # (B, T, C)
        return self.down_proj(F.gelu(self.up_proj(x), approximate="tanh"))  # (B, T, C)


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.input_layernorm = make_norm(cfg)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = make_norm(cfg)
        self.mlp = MLP(cfg)

    def forward(self, x, rope, mask, cache, layer):
        a, att = self.self_attn(self.input_layernorm(x), rope, mask, cache, layer)
        x = x + a
        x = x + self.mlp(self.post_attention_layernorm(x))
        return x, att


class GPT(nn.Module):
    """The causal transformer. ``forward(ids, cache)`` processes new positions only.

    Without a cache it processes ``ids`` from position 0 (a full forward pass); with one it
    processes ``ids`` at positions ``cache.pos ..`` and appends their K/V to the cache.
    """

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        if cfg.positions == "learned":
            self.embed_positions = nn.Embedding(cfg.block_size, cfg.n_embd)  # GPT-2's wpe
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.norm = make_norm(cfg)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.tie_weights()
        self._init_rope(torch.float32)

    def tie_weights(self) -> None:
        """With ``tie_embeddings`` the output head is the token embedding: one tensor, counted once."""
        if self.cfg.tie_embeddings:
            self.lm_head.weight = self.embed_tokens.weight

    def _init_rope(self, dtype: torch.dtype) -> None:
        cos, sin = rope_tables(self.cfg, dtype) if self.cfg.positions == "rope" else (None, None)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

    def _apply(self, fn, recurse=True):
        # Rebuild RoPE tables from float64 after a dtype change so .double() stays exact; fuse
        # the projections again if they were (their parts got tensors of their own).
        fused = bool(self.layers) and self.layers[0].self_attn.fused_qkv is not None
        out = super()._apply(fn, recurse)
        self._init_rope(self.embed_tokens.weight.dtype)
        if fused:
            fuse_projections(self)
        return out

    @property
    def dtype(self) -> torch.dtype:
        return self.embed_tokens.weight.dtype

    def forward(self, ids: torch.Tensor, cache=None, input_pos: torch.Tensor | None = None, mask=None):
        """ids ``(B, T)`` int64 → logits ``(B, T, vocab_size)`` and a list of ``n_layer``
        attention tensors ``(B, n_head, T, S)``.

        Without a cache: a full forward pass over positions 0 .. T-1 (causal). With one, the
        cache says where the new positions go: ``cache.positions(T)`` gives their absolute
        positions ``(B, T)`` (for RoPE or the learned table), ``cache.mask(T)`` which cached and
        new slots each may read ``(B, T, S)``, and ``cache.update`` stores their K/V (``KVCache``
        for one request; batched, ragged and paged caches in ``core.serving.batch`` / ``core.serving.paged`` give
        per-row positions and masks the same way, so every path runs this one model).
        ``input_pos`` and ``mask`` override the cache's. A ``sliding_window`` narrows the mask
        (``window_mask``). Raises ``ValueError`` for an empty input, positions past the context
        window (the cache refuses before anything is written) or, with learned positions, an
        absolute position past the table.
        """
        B, T = ids.shape
        if T == 0:
            raise ValueError("no positions to process")
        if cache is None:
            if T > self.cfg.block_size:
                raise ValueError(f"{T} positions exceed the context window of {self.cfg.block_size}")
            pos = torch.arange(T).expand(B, T) if input_pos is None else input_pos  # (B, T)
            mask = causal_mask(T, T) if mask is None else mask  # (1 or B, T, S=T)
        else:
            cache.check_room(T)
            pos = cache.positions(T) if input_pos is None else input_pos
            mask = cache.mask(T) if mask is None else mask
        window = self.cfg.sliding_window
        if window is not None and mask.shape[-1] > window:
            mask = window_mask(mask, window)  # (B, T, S)
        # (B, 1, T, S): the same for every head; None when every key is readable (a decode step
        # without a window), which spares each layer a masked copy of its scores.
        mask = None if bool(mask.all()) else mask.unsqueeze(1)
        x = self.embed_tokens(ids)  # (B, T, C)
        if self.cfg.positions == "learned":
            if int(pos.max()) >= self.cfg.block_size:
                raise ValueError(f"learned positions stop at {self.cfg.block_size - 1}: no table row past it")
            x = x + self.embed_positions(pos)  # (B, T, C)
            rope = None
        else:
            rope = self._rope(pos)  # cos, signed sin (B, 1, T, hd)
        atts = []
        for layer, block in enumerate(self.layers):
            x, att = block(x, rope, mask, cache, layer)
            atts.append(att)
        if cache is not None:
            cache.advance(T)
        logits = self.lm_head(self.norm(x))  # (B, T, vocab_size)
        return logits, atts

    def _rope(self, pos: torch.Tensor):
        """cos and ``signed_sin`` ``(B, 1, T, hd)`` at absolute positions ``pos`` ``(B, T)``.
        Positions past the window (a sliding window keeps counting up) get their tables computed
        on the spot."""
        top = int(pos.max()) + 1
        if top <= self.cfg.block_size:
            cos, sin = self.rope_cos, self.rope_sin  # (block_size, hd)
        else:
            cos, sin = rope_tables(self.cfg, self.dtype, 0, top)
        return cos[pos].unsqueeze(1), signed_sin(sin[pos].unsqueeze(1))

    def n_params(self) -> int:
        """Parameters, each tensor counted once (a tied output head is the embedding)."""
        return sum(p.numel() for p in self.parameters())
