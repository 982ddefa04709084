"""Predict, then reveal: one question before each decode step, answered from the real step.

Students who predict before a demonstration learn more than those who only watch (Crouch,
Fagen, Callan & Mazur, Am. J. Phys. 72, 2004). The step is computed first and held back
(``core.decode.session.preview_step``); the question's right answer comes from it. Kinds rotate with
the step number so a class following one link gets the same questions. Distractors are the
classic mistakes: the chosen token counted as cached before it is consumed (Ch. 30 Table 30.1),
no factor 2 for keys and values, every query head counted, a full recompute's score count.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from core.cost.counts import causal_pairs, kv_cache_bytes_for
from core.decode.generate import SamplingConfig
from core.decode.session_types import DecodeSession, PendingStep
from core.decode.session_view import pass_rows, top_tokens
from core.model.config import GPTConfig
from core.text import show_spaces

KINDS = ("token", "positions", "bytes", "scores", "attends")


@dataclass(frozen=True)
class Question:
    """One multiple-choice question: its kind, the text, up to five options (plain text), the
    index of the right one, the sentence shown at the reveal, and per option the mistake that
    leads to it ("" for the right one, or when none is named)."""

    kind: str
    text: str
    options: tuple[str, ...]
    answer: int
    explain: str
    misses: tuple[str, ...] = ()
    shares: tuple[float, ...] = ()  # the model's own share per option: probability (token), attention (attends)

    def miss(self, pick: int | None) -> str:
        """The mistake behind a wrong ``pick``, or "" (right, unanswered or unnamed)."""
        if pick is None or pick == self.answer or pick >= len(self.misses):
            return ""
        return self.misses[pick]


@dataclass
class Tally:
    """One session's running score: questions asked, answered, and answered right."""

    asked: int = 0
    answered: int = 0
    right: int = 0
    history: list[tuple[str, bool | None]] = field(default_factory=list)

    def record(self, question: Question, pick: int | None) -> bool | None:
        """Count one revealed question; ``pick`` None = not answered. Returns right/wrong/None."""
        ok = None if pick is None else pick == question.answer
        self.asked += 1
        self.answered += pick is not None
        self.right += bool(ok)
        self.history.append((question.kind, ok))
        return ok

    def summary(self) -> str:
        """The score as said to a class: "2 right of 3 answered, 1 not answered". A reveal nobody
        answered (a class answering aloud) is not a wrong answer: it is counted apart."""
        unanswered = self.asked - self.answered
        if not self.answered:
            return f"{unanswered} revealed, not answered" if unanswered else "none yet"
        if not unanswered:
            return f"{self.right} right of {self.answered}"  # short: it sits under a projector's stage
        return f"{self.right} right of {self.answered} answered, {unanswered} not answered"


def kind_for(step: int) -> str:
    """The question kind before decode step ``step`` (1, 2, …): the kinds in turn."""
    return KINDS[(step - 1) % len(KINDS)]


def _numeric(text: str, right: int, wrong: list[tuple[int, str]], unit: str, explain: str, kind: str) -> Question:
    """Options: ``right`` and the ``wrong`` values, each with the mistake that gives it (a value
    two mistakes give keeps the first), sorted, at most five."""
    why = {}
    for value, mistake in wrong:
        if value >= 0 and value != right:
            why.setdefault(value, mistake)
    values = sorted({right, *why})[:5]
    if right not in values:
        values = sorted([right, *values[:4]])
    misses = tuple(why.get(v, "") for v in values)
    return Question(kind, text, tuple(f"{v:,}{unit}" for v in values), values.index(right), explain, misses)


def _token_question(sess, pending, token_text) -> Question:
    # The five most likely by the plain softmax: the sampling rule's own order (temperature keeps
    # it, top-k only cuts the tail), and five options even when top-k is smaller than five.
    top = [tid for tid, _ in top_tokens(pending.result.logits, SamplingConfig(), 5)]
    probs = torch.softmax(pending.result.logits.double().flatten(), dim=0)  # the plain softmax: as ranked above
    if pending.chosen not in top:  # sampling can draw a token outside the top five
        top = [*top[:4], pending.chosen]
    # Alphabetical order, so the options' order does not give away the ranking.
    ids = sorted(top, key=lambda t: (token_text(t).strip().lower(), t))
    # The stage already shows the pending token as "◀ chosen" (the last step chose it; this one consumes
    # it): "next" read as that token, which is not among the options. Name it, and ask for the one after.
    return Question(
        "token",
        f"This step consumes {show_spaces(token_text(sess.pending))}. Which token will the model choose after it?",
        tuple(token_text(t) for t in ids),
        ids.index(pending.chosen),
        f"It chose {show_spaces(token_text(pending.chosen))}"  # its spaces as ␣, as the options show them
        + (" (greedy: the most likely token)." if sess.sampling.strategy == "greedy" else " (sampled)."),
        shares=tuple(float(probs[t]) for t in ids),
    )


def _attends_question(sess, pending, labels, layer, head, head_label) -> Question:
    row = pass_rows(pending.result.att, layer, head)[-1]  # (T + 1,): the new row
    top = sorted(int(i) for i in np.argsort(-row, kind="stable")[:5])
    best = int(np.argmax(row))
    return Question(
        "attends",
        f"Layer {layer}, {head_label}: which position will the new row attend to most?",
        tuple(labels[i] for i in top),
        top.index(best),
        f"The new row puts {row[best]:.2f} of its attention on {labels[best]}.",
        shares=tuple(float(row[i]) for i in top),
    )


def ask(kind, sess: DecodeSession, pending: PendingStep, cfg: GPTConfig, token_text, labels, layer, head, head_label):
    """The question of ``kind`` about the held-back step ``pending`` of ``sess``. ``token_text``
    maps a token id to its text; ``labels`` label positions 0 … T (the new one included);
    ``head`` None means the mean over heads. Raises ``ValueError`` for an unknown kind."""
    if kind not in KINDS:
        raise ValueError(f"unknown question kind {kind!r}; one of {KINDS}")
    T, b = sess.n_positions, sess.cache.dtype.itemsize
    if kind == "token":
        return _token_question(sess, pending, token_text)
    if kind == "attends":
        return _attends_question(sess, pending, labels, layer, head, head_label)
    if kind == "positions":
        return _numeric(
            f"The cache holds {T} positions. How many will it hold after this step?",
            T + 1,
            [
                (T, "the count before this step: it adds the pending token's keys and values"),
                (T + 2, "the token this step chooses counted too: it waits outside until the next pass"),
                (len(sess.prompt_ids), "the prompt alone: every token consumed since is cached too"),
                (2 * (T + 1), "keys and values counted apart: each position holds one of each"),
            ],
            "",
            "This step consumes the pending token, so its keys and values enter the cache: one more position. "
            "The token it chooses waits for the next pass (Ch. 30 Table 30.1).",
            kind,
        )
    if kind == "bytes":
        right = kv_cache_bytes_for(cfg, T + 1, b)
        per_position = kv_cache_bytes_for(cfg, 1, b)
        return _numeric(
            f"How many bytes will the KV cache hold after this step? ({b}-byte values)",
            right,
            [
                (right - per_position, "the cache before this step: it adds one position"),
                (right // 2, "keys only (or values only): the 2 counts both"),
                (
                    right * cfg.n_head // cfg.n_kv_head,
                    f"every query head: only the {cfg.n_kv_head} KV heads are cached",
                ),
                (right + per_position, "one position too many: the token this step chooses is not cached yet"),
            ],
            " B",
            f"M = 2·B·L·T·H_kv·d·b = 2 · 1 · {cfg.n_layer} · {T + 1} · {cfg.n_kv_head} · {cfg.head_dim} · {b} = "
            f"{right:,} bytes: keys and values (the 2), KV heads only (not every query head).",
            kind,
        )
    if kind == "scores":
        return _numeric(
            "How many query-key scores does this step compute, per layer and head?",
            T + 1,
            [
                (T, "the earlier keys only: the new query scores its own key too"),
                (causal_pairs(T + 1), "a full recompute: with the cache no earlier query is scored again"),
                (1, "its own key only: the new query reads every earlier key"),
                ((T + 1) ** 2, "every query against every key: no causal mask and no cache"),
            ],
            "",
            # The work counter then reads the same number for the cache's whole request: say why, as the
            # coincidence read as "the cache saves nothing" (each cached pass scored 1, 2, …, T + 1 keys).
            f"One new query against all {T + 1} keys (its own too): linear work. Recomputing this step would "
            f"score {causal_pairs(T + 1):,} pairs, the cache's total so far.",
            kind,
        )
    raise ValueError(f"unknown question kind {kind!r}; one of {KINDS}")
