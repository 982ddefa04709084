"""Attention: Ch. 19's worked example — on's four scores and shares, through ``core.model.worked`` (the
model's own ``attend``).
"""

from __future__ import annotations

import math
import random

import numpy as np

from core.model import worked
from core.practice.exercise_types import Exercise, Mistake, Tolerance
from core.practice.exercises import part


def _p(x: float) -> str:
    """A factor in a written-out product: negative numbers in parentheses."""
    return f"{x:g}" if x >= 0 else f"({x:g})"


def scores(seed: int) -> Exercise:
    """Ch. 19 "on's four scores" and their shares, through ``core.model.model.attend``."""
    q, k, v = (np.array(worked.DEFAULTS[a], dtype=float) for a in "qkv")
    if seed:
        rng = random.Random(seed)
        q[-1] = rng.choice([(a, b) for a in range(3) for b in range(3) if (a, b) != (0, 0)])  # like [2, 1]
        k = np.array([[rng.randrange(-1, 3) for _ in range(2)] for _ in range(4)], dtype=float)
        v = np.array([[rng.randrange(0, 4) for _ in range(2)] for _ in range(4)], dtype=float)
    w = worked.worked_example(q, k, v)
    s, a = tuple(int(x) for x in w.scores[-1]), tuple(float(x) for x in w.shares[-1])
    three = worked.worked_example(np.vstack([q[:2], q[-1:]]), k[:3], v[:3])
    scaled = tuple(float(x) for x in worked.worked_example(q, k, v, scaled=True).shares[-1])
    own = "On attends to itself too: four keys, four scores."
    share_mistakes = [
        Mistake(tuple(float(x) for x in three.shares[-1]), "left out its own key", own),
        Mistake(scaled, "scaled by 1/√d", "That applies the usual 1/√d scaling; Ch. 19 omits it here."),
    ]
    if min(s) >= 0 and sum(s) > 0:
        share_mistakes.append(
            Mistake(
                tuple(x / sum(s) for x in s),
                "no exponent",
                "Those are scores / their sum: softmax exponentiates first.",
            )
        )
    parts = (
        part(
            "scores",
            "The four scores",
            "int_list",
            s,
            "",
            Tolerance(),
            [
                Mistake(
                    tuple(int(x) for x in v @ q[-1]), "values for keys", "Scored against the values; scores use keys."
                ),
                Mistake(s[:3], "left out its own key", own),
                Mistake(
                    tuple(x / math.sqrt(2) for x in s),
                    "scaled by 1/√d",
                    "Those are scaled by 1/√d; Ch. 19 omits the scaling here: the plain dot products.",
                ),
            ],
        ),
        part("shares", "Their shares (softmax)", "number_list", a, "", Tolerance(abs=0.005), share_mistakes),
    )
    names = worked.TOKENS
    dots = "; ".join(
        f"q_on · k_{t} = {_p(q[-1][0])} × {_p(kk[0])} + {_p(q[-1][1])} × {_p(kk[1])} = {sc}"
        for t, kk, sc in zip(names, k, s, strict=True)
    )
    keys = ", ".join(f"k_{t} = [{kk[0]:g}, {kk[1]:g}]" for t, kk in zip(names, k, strict=True))
    return Exercise(
        "ch19-scores",
        seed,
        "Ch. 19: on's four scores",
        "Ch. 19 “Two speeds, one model” (worked example)",
        f"“on” asks with **q_on = [{q[-1][0]:g}, {q[-1][1]:g}]**; the cache holds {keys}. Give on's four scores "
        "(no 1/√d scaling, as in Ch. 19) and its four attention shares.",
        parts,
        (
            "A score is a dot product: multiply matching slots and add.",
            "Shares = softmax(scores): e^score / Σ e^score.",
        ),
        f"{dots}. softmax({', '.join(str(x) for x in s)}) = **({', '.join(f'{x:.4f}' for x in a)})**; rounded to "
        f"two decimals these read {' + '.join(f'{x:.2f}' for x in a)} = {sum(round(x, 2) for x in a):.2f}.",
        {"q_on": tuple(q[-1]), "k": tuple(map(tuple, k)), "v": tuple(map(tuple, v))},
    )
