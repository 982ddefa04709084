"""The paged-cache page's requests (token ids of the shipped tokenizer) and the engines that serve them.

Three presets: one request (allocation on demand, block after block); eight students whose prompts
start with the same 40-token system prompt (prefix sharing); one long request among many short
ones (static vs continuous batching). Arrivals are in steps.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.decode.settings import DEFAULT_PROMPT
from core.model.model import GPT
from core.model.tokenizer import encode
from core.serving.scheduler import POLICIES, Engine, Request, StepReport
from core.text import quoted

SYSTEM_PROMPT = (
    "System: You are a helpful travel assistant. The limit is 750 yuan per day. Check each price.\n"  # 40 tokens
)
STUDENTS = [("Mira", "Lyon"), ("Ravi", "Oslo"), ("Ana", "Rome"), ("Li", "Paris"), ("Sam", "Nice"), ("Eva", "Prague")]
STUDENTS += [("Tom", "Vienna"), ("Noor", "Lisbon")]
SHORT = ["The cat sat on the", "Ana asked: Which country is Lyon in?", "The dog", "Paris is in"]
SHORT += ["User: The hotel in Rome costs 620 yuan.", "The cat"]
PRESETS = ("one request", "eight students, one system prompt", "one long and many short")


def preset_requests(name: str, tok) -> list[dict]:
    """Requests of a preset as ``dict(prompt, max_new_tokens, arrival, role)`` (arrival in steps).
    The system prompt and each question are tokenized apart and joined, as a chat template does,
    so every student's ids start with the same 40. Raises ``ValueError`` for an unknown preset."""
    if name == PRESETS[0]:
        return [dict(prompt=encode(tok, DEFAULT_PROMPT), max_new_tokens=40, arrival=0, role="the decode page's prompt")]
    if name == PRESETS[1]:
        system = encode(tok, SYSTEM_PROMPT)
        ask = "User: Hello, my name is {}. I am planning a trip to {}.\nAssistant:"
        return [
            dict(
                prompt=system + encode(tok, ask.format(who, city)),
                max_new_tokens=12,
                arrival=i,
                role=f"student {who}",
            )
            for i, (who, city) in enumerate(STUDENTS)
        ]
    if name == PRESETS[2]:
        long = encode(tok, "User: Hello, my name is Ravi. I am planning a trip to Oslo.\nAssistant:")
        out = [dict(prompt=long, max_new_tokens=96, arrival=0, role="long")]
        return out + [
            dict(prompt=encode(tok, text), max_new_tokens=8, arrival=2 * i, role=f"short {i + 1}")
            for i, text in enumerate(SHORT)
        ]
    raise ValueError(f"unknown preset {quoted(name)}; choose one of {PRESETS}")


def build_engine(
    model: GPT, requests: list[dict], n_blocks: int, block_size: int, policy: str, max_pool_bytes=None, **kw
) -> Engine:
    """An engine with ``requests`` (dicts as from ``core.serving.paged_presets.preset_requests``) submitted.
    Raises ``ValueError`` (bad sizes, a request that cannot run, a pool over ``max_pool_bytes`` —
    checked before allocating)."""
    cfg = model.cfg
    if max_pool_bytes and all(isinstance(x, int) and x > 0 for x in (n_blocks, block_size)):
        pool = n_blocks * block_size * 2 * cfg.n_layer * cfg.n_kv_head * cfg.head_dim * model.dtype.itemsize
        if pool > max_pool_bytes and block_size <= cfg.block_size:
            raise ValueError(
                f"a pool of {n_blocks} blocks × {block_size} positions is {pool:,} B; "
                f"this server allows {max_pool_bytes:,} B per session"
            )
    engine = Engine(model, n_blocks, block_size, policy, **kw)
    for spec in requests:
        engine.submit(**spec)
    return engine


@dataclass(frozen=True)
class PolicyRun:
    """One policy's run to the end, without its pool: the steps, the requests' timelines, ``summary``."""

    policy: str
    steps: int
    history: list[StepReport]
    requests: list[Request]
    summary: dict


def compare_policies(model: GPT, requests: list[dict], n_blocks: int, block_size: int, **kw) -> dict[str, PolicyRun]:
    """The same requests served to the end under each policy: {policy: PolicyRun}."""
    runs = {}
    for policy in POLICIES:
        engine = build_engine(model, requests, n_blocks, block_size, policy, **kw)
        engine.run()
        runs[policy] = PolicyRun(policy, engine.steps, engine.history, engine.requests, engine.summary())
    return runs


def request_rows(requests: list[Request], decode) -> list[dict]:
    """The paged page's "Requests and text" table: one row per request (``decode``: token ids → text)."""
    return [
        {
            "request": r.name,
            "role": r.role,
            "arrives at step": int(r.arrival),
            "status": r.state,
            "prompt tokens": len(r.prompt),
            "shared positions": r.shared,
            "generated": decode(r.outputs),
        }
        for r in requests
    ]
