"""The paged-cache page's requests, as token ids of the shipped tokenizer.

Three presets: one request (allocation on demand, block after block); eight students whose prompts
start with the same 40-token system prompt (prefix sharing); one long request among many short
ones (static vs continuous batching). Arrivals are in steps.
"""

from __future__ import annotations

from core.tokenizer import encode

SYSTEM_PROMPT = "System: You are a travel assistant. The limit is 750 yuan per day. Check each price.\n"  # 40 tokens
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
        from core.state import DEFAULT_PROMPT

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
    raise ValueError(f"unknown preset {name!r}; choose one of {PRESETS}")
