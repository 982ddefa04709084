"""Ch. 19 "See it move", as frames computed from a real run of the model.

The chapter's four moments, in order: (1) without a cache the counter climbs while attention redraws
every earlier link from scratch; (2) the violet shelf of stored keys and values stops that climb at
one new box per token; (3) the shelf runs into the wall of the context window; (4) a 32-bit number
shrinks to 8 bits, so four times as many positions fit in the same bytes. The two counters (scores
computed so far, without and with the cache) run through all four moments: from moment 3 on they
count every step to the wall, and moment 4 keeps them, since a narrower number changes no count.

Every number in a frame comes from the run (its positions and tokens) and from ``core.cost.counts``
(scores per layer and head, KV bytes); ``core.viz.see_it_move`` draws the frames and exports them.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.cost.counts import causal_pairs, decode_step_scores, kv_cache_bytes_for
from core.decode.generate import SamplingConfig, generate_cached
from core.model.model import GPT
from core.model.tokenizer import encode, token_text

MOMENTS = (
    "1 · Without a cache: every step redraws every earlier link",
    "2 · The shelf of stored keys and values: one new box per token",
    "3 · The shelf runs into the wall of the context window",
    "4 · 32 bits shrink to 8: four times as many positions fit",
)
FIRST_STEPS = 8  # decode steps replayed in moments 1 and 2
WALL_FRAMES = 8  # frames from the end of moment 2 to the full window
BITS = (32, 16, 8)  # moment 4: the stored number's width, frame by frame


@dataclass(frozen=True)
class Frame:
    """One frame of the animation.

    ``moment``: index into ``MOMENTS``; ``caption``: the frame's sentence, with its numbers;
    ``recompute_scores`` / ``cached_scores``: scores computed so far (per layer and head) without
    and with the cache (None: not shown, the cache's counter in moment 1); ``positions``: boxes on
    the shelf (cached positions);
    ``bits``: the width of each stored number; ``capacity``: positions that fit in the window's bytes
    at ``bits`` (the wall); ``kv_bytes``: the shelf's bytes at ``bits``."""

    moment: int
    caption: str
    recompute_scores: int | None
    cached_scores: int | None
    positions: int
    bits: int
    capacity: int
    kv_bytes: int


def frames(model: GPT, tok, prompt: str) -> list[Frame]:
    """The animation's frames for ``prompt`` on ``model``: the run decodes greedily to the context
    window (``block_size``), so the wall is the model's own. Raises ``ValueError`` for an empty
    prompt or one that leaves fewer than ``FIRST_STEPS`` positions in the window."""
    ids = encode(tok, prompt)
    window = model.cfg.block_size
    if not prompt.strip():
        raise ValueError("the prompt is empty (or only spaces): type a few words first")
    if len(ids) + FIRST_STEPS > window:
        raise ValueError(f"the prompt takes {len(ids)} of the {window} positions: leave room for {FIRST_STEPS} steps")
    run = generate_cached(model, ids, window - len(ids), SamplingConfig())
    tokens, n0 = run.tokens, len(ids)
    bytes_at = lambda n, bits: kv_cache_bytes_for(model.cfg, n, bits / 8)  # noqa: E731
    out, recompute, cached = [], causal_pairs(n0), causal_pairs(n0)  # the prompt's prefill, either way
    steps = min(FIRST_STEPS, len(tokens))
    for k in range(1, steps + 1):  # moment 1: full-prefix recompute at every step
        recompute += decode_step_scores(n0 + k, cached=False)
        out.append(
            Frame(0, f"Step {k} consumes {_q(tok, tokens[k - 1])}: recompute all {n0 + k} positions, "
                  f"{decode_step_scores(n0 + k, cached=False):,} scores this step", recompute, None, 0, 32, window,
                  0)
        )  # fmt: skip
    for k in range(1, steps + 1):  # moment 2: the same steps with the cache
        cached += decode_step_scores(n0 + k, cached=True)
        caption = f"Step {k}: one new box on the shelf, {n0 + k} scores this step (one row)"
        before = out[k - 1].recompute_scores
        out.append(Frame(1, caption, before, cached, n0 + k, 32, window, bytes_at(n0 + k, 32)))
    end, last = n0 + len(tokens), n0 + steps
    for n in _between(last, end, WALL_FRAMES):  # moment 3: to the wall, both counters still counting
        recompute += sum(decode_step_scores(m, cached=False) for m in range(last + 1, n + 1))
        cached += sum(decode_step_scores(m, cached=True) for m in range(last + 1, n + 1))
        last = n
        wall = "the wall: the context window is full" if n >= window else f"{window - n} positions left"
        caption = f"{n} of {window} positions cached: {wall}"
        out.append(Frame(2, caption, recompute, cached, n, 32, window, bytes_at(n, 32)))
    for bits in BITS:  # moment 4: the same bytes, narrower numbers; the same scores (a width changes no count)
        fit = window * 32 // bits
        out.append(
            Frame(3, f"{bits}-bit keys and values: {bytes_at(end, bits):,} B for {end} positions; the window's "
                  f"32-bit bytes now hold {fit:,} positions", recompute, cached, end, bits, fit, bytes_at(end, bits))
        )  # fmt: skip
    return out


def _between(start: int, end: int, count: int) -> list[int]:
    """``count`` positions from just after ``start`` to ``end`` (inclusive), evenly spaced."""
    return sorted({start + round((end - start) * (i + 1) / count) for i in range(count)})


def _q(tok, token_id: int) -> str:
    return "“" + token_text(tok, token_id).replace(" ", "␣") + "”"
