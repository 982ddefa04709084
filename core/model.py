"""A Llama-style causal transformer with attention written out so its weights can be drawn.

RMSNorm, rotary position embeddings (RoPE, the rotate-half convention of Llama),
grouped-query attention (``n_kv_head`` divides ``n_head``) and a SwiGLU MLP. Module names
follow Hugging Face's ``LlamaForCausalLM`` (minus its ``model.`` prefix) so the same weights
load into both, which the tests use as an independent reference.

Dims: ``B`` batch, ``T`` new positions in this pass, ``S`` positions attended (cached + new),
``C`` = ``n_embd``, ``hd`` = ``head_dim``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from core.config import GPTConfig


class RMSNorm(nn.Module):
    """x / sqrt(mean(x²) + eps) · weight (Zhang & Sennrich, 2019)."""

    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(cfg: GPTConfig, dtype: torch.dtype, start: int = 0, length: int | None = None):
    """cos and sin tables, each ``(length, head_dim)`` (default: the ``block_size`` positions
    from 0), for RoPE (Su et al., 2021).

    Computed in float64 and cast, so the float64 model is exact and float32 matches Llama's.
    """
    hd = cfg.head_dim
    inv_freq = 1.0 / (cfg.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd))  # (hd/2,)
    t = torch.arange(start, start + (cfg.block_size if length is None else length), dtype=torch.float64)
    freqs = torch.outer(t, inv_freq)  # (block_size, hd/2)
    emb = torch.cat((freqs, freqs), dim=-1)  # (block_size, hd)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate ``x`` ``(B, heads, T, hd)`` by the angles of its absolute positions ``cos/sin (T, hd)``."""
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)  # rotate_half
    return x * cos + rotated * sin


def causal_mask(T: int, S: int, start: int = 0) -> torch.Tensor:
    """``(1, T, S)`` bool, True where query i (at slot ``start + i``) may read key slot j: j ≤ start + i."""
    q_slot = torch.arange(start, start + T).unsqueeze(1)  # (T, 1)
    return (torch.arange(S).unsqueeze(0) <= q_slot).unsqueeze(0)  # (1, T, S)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor, scale: float):
    """Attention written out: softmax(q·kᵀ·scale, masked) · v.

    q ``(B, heads, T, hd)``; k, v ``(B, heads, S, hd)``; ``mask`` bool, broadcastable to
    ``(B, heads, T, S)``, True where a query may read a key (the causal mask, a padding or
    sliding-window mask: see ``causal_mask``). Returns the output ``(B, heads, T, hd)``, the
    probabilities ``(B, heads, T, S)`` (exactly 0 where masked) and the raw scores ``(B, heads, T, S)``.
    """
    scores = q @ k.transpose(-2, -1) * scale  # (B, heads, T, S)
    att = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)  # (B, heads, T, S)
    return att @ v, att, scores


class Attention(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.cfg = cfg
        c, hd = cfg.n_embd, cfg.head_dim
        self.q_proj = nn.Linear(c, cfg.n_head * hd, bias=False)
        self.k_proj = nn.Linear(c, cfg.n_kv_head * hd, bias=False)
        self.v_proj = nn.Linear(c, cfg.n_kv_head * hd, bias=False)
        self.o_proj = nn.Linear(cfg.n_head * hd, c, bias=False)

    def forward(self, x, cos, sin, mask, cache, layer: int):
        """x ``(B, T, C)``; ``cos``/``sin`` ``(B, 1, T, hd)`` at each position's absolute position;
        ``mask`` ``(B, 1, T, S)`` (True: may read). Returns the output ``(B, T, C)`` and the attention
        probabilities ``(B, n_head, T, S)`` (exactly 0 at masked cells)."""
        cfg = self.cfg
        B, T, _ = x.shape
        hd, n_rep = cfg.head_dim, cfg.n_head // cfg.n_kv_head
        q = self.q_proj(x).view(B, T, cfg.n_head, hd).transpose(1, 2)  # (B, n_head, T, hd)
        k = self.k_proj(x).view(B, T, cfg.n_kv_head, hd).transpose(1, 2)  # (B, n_kv_head, T, hd)
        v = self.v_proj(x).view(B, T, cfg.n_kv_head, hd).transpose(1, 2)  # (B, n_kv_head, T, hd)
        # Keys are rotated once, at their own position, before caching; new queries use theirs.
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if cache is not None:
            k, v = cache.update(layer, k, v)  # (B, n_kv_head, S, hd): cached + new
        # GQA: query head h reads KV head h // n_rep (the grouping of Llama's repeat_kv).
        k = k.repeat_interleave(n_rep, dim=1)  # (B, n_head, S, hd)
        v = v.repeat_interleave(n_rep, dim=1)  # (B, n_head, S, hd)
        y, att, _ = attend(q, k, v, mask, hd**-0.5)  # (B, n_head, T, hd), (B, n_head, T, S)
        y = y.transpose(1, 2).reshape(B, T, cfg.n_head * hd)  # (B, T, C)
        return self.o_proj(y), att


class MLP(nn.Module):
    """SwiGLU: down(silu(gate(x)) · up(x)) (Shazeer, 2020)."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.gate_proj = nn.Linear(cfg.n_embd, cfg.ffn_hidden, bias=False)
        self.up_proj = nn.Linear(cfg.n_embd, cfg.ffn_hidden, bias=False)
        self.down_proj = nn.Linear(cfg.ffn_hidden, cfg.n_embd, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg.n_embd, cfg.norm_eps)
        self.self_attn = Attention(cfg)
        self.post_attention_layernorm = RMSNorm(cfg.n_embd, cfg.norm_eps)
        self.mlp = MLP(cfg)

    def forward(self, x, cos, sin, mask, cache, layer):
        a, att = self.self_attn(self.input_layernorm(x), cos, sin, mask, cache, layer)
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
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.norm = RMSNorm(cfg.n_embd, cfg.norm_eps)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        cos, sin = rope_tables(cfg, torch.float32)
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

    def _apply(self, fn, recurse=True):
        # Rebuild RoPE tables from float64 after a dtype change so .double() stays exact.
        out = super()._apply(fn, recurse)
        cos, sin = rope_tables(self.cfg, self.embed_tokens.weight.dtype)
        self.rope_cos, self.rope_sin = cos, sin
        return out

    @property
    def dtype(self) -> torch.dtype:
        return self.embed_tokens.weight.dtype

    def forward(self, ids: torch.Tensor, cache=None, input_pos: torch.Tensor | None = None, mask=None):
        """ids ``(B, T)`` int64 → logits ``(B, T, vocab_size)`` and a list of ``n_layer``
        attention tensors ``(B, n_head, T, S)``.

        Without a cache: a full forward pass over positions 0 .. T-1 (causal). With one, the
        cache says where the new positions go: ``cache.positions(T)`` gives their absolute
        positions ``(B, T)`` (for RoPE), ``cache.mask(T)`` which cached and new slots each may
        read ``(B, T, S)``, and ``cache.update`` stores their K/V (``KVCache`` for one request;
        batched, ragged and paged caches in ``core.batch`` / ``core.paged`` give per-row
        positions and masks the same way, so every path runs this one model). ``input_pos`` and
        ``mask`` override the cache's. Raises ``ValueError`` for an empty input or positions past
        the context window (the cache refuses before anything is written).
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
        cos, sin = self._rope(pos)  # (B, 1, T, hd) each
        mask = mask.unsqueeze(1)  # (B, 1, T, S): the same for every head
        x = self.embed_tokens(ids)  # (B, T, C)
        atts = []
        for layer, block in enumerate(self.layers):
            x, att = block(x, cos, sin, mask, cache, layer)
            atts.append(att)
        if cache is not None:
            cache.advance(T)
        logits = self.lm_head(self.norm(x))  # (B, T, vocab_size)
        return logits, atts

    def _rope(self, pos: torch.Tensor):
        """cos, sin ``(B, 1, T, hd)`` at absolute positions ``pos`` ``(B, T)``. Positions past the
        window (a sliding window keeps counting up) get their tables computed on the spot."""
        top = int(pos.max()) + 1
        if top <= self.cfg.block_size:
            cos, sin = self.rope_cos, self.rope_sin  # (block_size, hd)
        else:
            cos, sin = rope_tables(self.cfg, self.dtype, 0, top)
        return cos[pos].unsqueeze(1), sin[pos].unsqueeze(1)

    def n_params(self) -> int:
        return sum(p.numel() for p in self.parameters())
