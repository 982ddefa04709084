"""What a room's display and console read of its engine (``serve.engine_service``): plain data, no prompt text.

- ``steps``: the latest engine steps, each with its rows (who, a prefill chunk or a decode token, how many tokens),
  tokens used of the budget, compute ms;
- ``requests``: every recent request's timeline in ms since its Send (queued until ``admitted_ms``, prefill until
  its first token, then its tokens), its prefix-cache hits and preemptions;
- ``blocks``: KV blocks in use, free and cached; ``throughput``: tokens per second over the last ``WINDOW_S``;
  ``itl``: the inter-token gaps' p50 and p95 (ms) of the requests that ended in that window.

Imports no streamlit."""

from __future__ import annotations

import time
from dataclasses import asdict

WINDOW_S = 30.0
STEPS_SHOWN = 40
REQUESTS_SHOWN = 48


def percentile(values: list[float], q: float) -> float | None:
    """The nearest-rank percentile (q in 0 … 1) of ``values``; None for none."""
    if not values:
        return None
    xs = sorted(values)
    return xs[min(len(xs) - 1, max(0, round(q * len(xs) + 0.5) - 1))]


def room_state(service, room) -> dict:
    """The room's state now (see the module docstring). Called with the service's lock held."""
    engine, cache = room.engine, room.engine.cache
    now = time.perf_counter()
    streams = list(room.streams.values())[-REQUESTS_SHOWN:]
    t0 = min((s.arrival for s in streams if s.arrival is not None), default=now)
    recent = [s for s in streams if s.arrival is not None and now - s.arrival <= WINDOW_S + 60]
    token_times = [s.arrival + ms / 1000 for s in recent for ms in s.token_ms]
    gaps = [b - a for s in recent if s.done_at for a, b in zip(s.token_ms, s.token_ms[1:], strict=False)]
    in_window = [t for t in token_times if now - t <= WINDOW_S]
    span = min(WINDOW_S, now - min(in_window)) if in_window else 0.0
    return {
        "epoch": service.epoch,
        "model": service.model_label,
        "settings": asdict(engine.settings),
        "system_prompt_chars": len(room.system_prompt),
        "blocks": {
            "used": cache.n_used,
            "free": cache.n_free,
            "cached": cache.n_cached,
            "total": cache.n_blocks,
            "block_size": cache.block_size,
        },
        "steps": [
            {
                "step": h.step,
                "rows": [[_label(room, rid), kind, n] for rid, kind, n in h.rows],
                "tokens": h.tokens,
                "budget": h.budget,
                "ms": round(h.ms, 2),
            }
            for h in engine.history[-STEPS_SHOWN:]
        ],
        "requests": [
            {
                "label": s.label,
                "state": "done" if s.done_at else ("running" if s.rid in engine.running else "waiting"),
                "sent_ms": round(1000 * (s.arrival - t0), 1) if s.arrival is not None else None,
                "admitted_ms": s.admitted_ms,
                "token_ms": [round(ms, 1) for ms in s.token_ms],
                "prompt_tokens": s.events[0].get("prompt_tokens"),
                "hit_tokens": (s.numbers or {}).get("hit_tokens", _hits(engine, s.rid)),
                "preemptions": (s.numbers or {}).get("preemptions", 0),
            }
            for s in streams
        ],
        "running": len(engine.running),
        "waiting": len(engine.queue),
        "throughput": len(in_window) / span if span > 0 else 0.0,
        "itl": {"p50": percentile(gaps, 0.5), "p95": percentile(gaps, 0.95), "n": len(gaps)},
    }


def _label(room, rid: str) -> str:
    s = room.streams.get(rid)
    return s.label if s else "?"


def _hits(engine, rid: str) -> int:
    r = engine.requests.get(rid)
    return (r.hit_tokens or 0) if r is not None else 0
