"""Two speeds, one model (Ch. 19's two-phase figure; Ch. 30 Table 30.1), from a real run.

Prefill processes every prompt position in one pass and leaves one cached K/V entry per position;
each decode step consumes the token chosen before it, and only then does that token's K/V enter the
cache ("A token is not cached before being consumed"). Both facts are read off the model's own
cache here, not drawn from a script.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, replace

from core.decode.generate import SamplingConfig, decode_one_token, make_generator, prefill, select_token
from core.decode.kv_cache import KVCache
from core.model.model import GPT
from core.model.tokenizer import encode, token_text

# Ch. 19 "What changes between the two phases?", in the chapter's words.
PHASES = (
    {
        "Phase": "Prefill",
        "New work": "Process all prompt positions",
        "Dependency": "Known tokens allow parallel processing with a causal mask",
    },
    {
        "Phase": "Decode",
        "New work": "Process the newly appended token",
        "Dependency": "Wait for the previous choice; reuse cached keys and values",
    },
)


@dataclass(frozen=True)
class Pass:
    """One forward pass: what it consumed, the cache's positions after it, what it made selectable.

    ``consumed``: the token texts this pass processed (the whole prompt, or one chosen token);
    ``cached``: positions whose K/V are stored after the pass (``cache.pos``); ``chosen``: the token
    the pass's logits selected (output token ``index``); ``ms``: the pass's wall time (``run``: the median
    over its repeats)."""

    consumed: tuple[str, ...]
    cached: int
    chosen: str
    index: int
    ms: float

    @property
    def ms_per_position(self) -> float:
        """The pass's time over the positions it processed (ms): the figure's honest comparison, since a prefill
        of n positions and a decode step of one can take about as long on a small model."""
        return self.ms / len(self.consumed)


# The cache page's prompts: Ch. 19's figure draws five chips into a drum of five, then six, seven, eight (the
# page opens on it); Table 30.1 counts from eight prompt positions, Example 30.1's, whatever the figure shows
# (both in the shipped tokenizer's positions).
FIVE_POSITIONS_PROMPT = "The cat sat on the"  # Ch. 19's figure: five positions, the cache page's default
TABLE_30_1_PROMPT = "User: Hello, my name is Mira"
TABLE_30_1_STEPS = 2  # Table 30.1's rows: the prefill of eight, then decodes consuming tokens 1 and 2
PROMPT_PRESETS = {
    "Ch. 19's figure: five positions": FIVE_POSITIONS_PROMPT,
    "Table 30.1: eight positions": TABLE_30_1_PROMPT,
}
REPEATS = 5  # timed runs of the whole request, after one untimed warm-up; each pass's median is drawn


def run(
    model: GPT,
    tok,
    prompt: str,
    steps: int = 3,
    sampling: SamplingConfig | None = None,
    repeats: int = REPEATS,
    clock=time.perf_counter,
) -> list[Pass]:
    """Prefill ``prompt`` then decode ``steps`` tokens, recording each pass (greedy by default).

    The request runs ``repeats`` times after one untimed warm-up, each time from a fresh cache and the same seed
    (so the same tokens), and each pass's ``ms`` is the median over the repeats: one pass slowed by a busy machine
    does not reach the figure, and a prefill and the steps are timed in turn under the same load. ``clock`` returns
    seconds (``time.perf_counter``). Returns ``steps + 1`` passes: the prefill, then one per consumed token.
    Raises ``ValueError`` for an empty prompt or one whose positions plus ``steps`` pass the context window."""
    sampling = sampling or SamplingConfig()
    ids = encode(tok, prompt)
    if not prompt.strip():
        raise ValueError("the prompt is empty (or only spaces): type a few words first")
    if len(ids) + steps > model.cfg.block_size:
        raise ValueError(
            f"{len(ids)} prompt positions and {steps} steps exceed the context window of {model.cfg.block_size}"
        )
    times: list[list[float]] = [[] for _ in range(steps + 1)]
    for _ in range(repeats + 1):  # the first: a warm-up, dropped below
        gen, cache = make_generator(sampling.seed), KVCache(model.cfg, dtype=model.dtype)
        t0 = clock()
        out = prefill(model, ids, cache)
        times[0].append((clock() - t0) * 1000)
        chosen = select_token(out.logits, sampling, gen)
        passes = [Pass(tuple(token_text(tok, i) for i in ids), cache.pos, token_text(tok, chosen), 1, 0.0)]
        for k in range(2, steps + 2):
            t0 = clock()
            out = decode_one_token(model, chosen, cache)
            times[k - 1].append((clock() - t0) * 1000)
            consumed, chosen = token_text(tok, chosen), select_token(out.logits, sampling, gen)
            passes.append(Pass((consumed,), cache.pos, token_text(tok, chosen), k, 0.0))
    return [replace(p, ms=statistics.median(t[1:] or t)) for p, t in zip(passes, times, strict=True)]


def noisy_steps(passes: list[Pass]) -> tuple[int, ...]:
    """The decode steps (indices into ``passes``, the prefill first) measured as taking longer than the whole
    prefill before them: a decode step computes one position against the prefill's several, so such a time is
    the machine's noise (another process took the core), not decode's cost, and is not drawn as one."""
    return tuple(i for i, p in enumerate(passes[1:], 1) if p.ms > passes[0].ms)


def table_30_1(passes: list[Pass]) -> list[dict]:
    """Table 30.1's rows from a run: the computation just completed, the input positions whose
    K/V are stored, the newly selectable output (Ch. 30 §30.2)."""
    rows = []
    for p in passes:
        done = f"Prefill of {p.cached} prompt positions" if p.index == 1 else f"Decode consuming token {p.index - 1}"
        rows.append(
            {
                "Computation just completed": done,
                "Input positions whose K/V are stored": p.cached,
                "Newly selectable output": f"Token {p.index}",
            }
        )
    return rows


def from_session(sess, tok, steps: int = 3) -> list[Pass] | None:
    """The decode page's own request (``core.decode.session_types.DecodeSession``) as ``run`` would
    record it: its prefill and first ``steps`` decode passes, with the engine clock's ms of each. None
    before the first Step (the figure needs both phases). ``tok`` names the tokens."""
    n_prompt = len(sess.prompt_ids)
    n = min(len(sess.engine_ms), len(sess.outputs), len(sess.consumed) - n_prompt + 1, steps + 1)
    if n < 2:
        return None
    prompt = tuple(token_text(tok, i) for i in sess.prompt_ids)
    passes = [Pass(prompt, n_prompt, token_text(tok, sess.outputs[0]), 1, sess.engine_ms[0])]
    for k in range(1, n):
        consumed = (token_text(tok, sess.consumed[n_prompt + k - 1]),)
        passes.append(Pass(consumed, n_prompt + k, token_text(tok, sess.outputs[k]), k + 1, sess.engine_ms[k]))
    return passes
