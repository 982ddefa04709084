"""The decode page's request as typed settings: what a share link, a lesson stop and a class's plan carry, with
each setting's default, choices and range (for a model's shape: ``limits``). The page's widgets, its share link
(``core.decode.share``) and the lesson format (``core.lesson.pages``) take their names from here."""

from __future__ import annotations

from core.model.config import GPTConfig

DEFAULT_PROMPT = (
    "User: Hello, my name is Mira. I am planning a trip to Lyon.\n"
    "Assistant: Hello Mira. The travel limit is 750 yuan per day.\n"
    "User: The hotel in Lyon costs 620 yuan. Is that allowed?\n"
    "Assistant:"
)
MAX_PROMPT_CHARS = 200_000  # far past the context window; the token count gives the message
# The float choice of the weights radio. Not None: streamlit shows a radio whose value is None with no option
# selected, so a fresh page looked as if it had no weights chosen.
FLOAT_WEIGHTS = 0
MEAN_HEADS = "mean over heads"  # a head picker's choice besides the query heads

# Setting -> default. Looks back at the traveller's name when about to write it: on the default prompt, at decode
# step 2 (choosing output token 3, " Mira") layer 3, head 0 puts 0.997 of the new row on the name's two prompt
# positions (tests/core/model/test_shipped.py; `python -m bench.shipped_model` lists every head).
DEFAULTS = {
    "prompt": DEFAULT_PROMPT,
    "seed": 0,
    "strategy": "greedy",
    "temperature": 0.8,
    "top_k": 20,
    "dtype": "float32",
    "bits": FLOAT_WEIGHTS,
    "layer": 3,
    "head": 0,
    "predict": False,
}
CHOICES = {
    "strategy": ("greedy", "sample"),
    "dtype": ("float32", "float64"),
    "bits": (8, 4, 3, 2),  # weight-only quantization (a link's float weights: the parameter left out)
}


def limits(cfg: GPTConfig) -> dict[str, tuple]:
    """Allowed ranges of the numeric settings for a model: layers and heads it has, steps (decode steps replayed
    after the prefill) up to its context window."""
    return {
        "seed": (0, 2**31 - 1),
        "temperature": (0.1, 2.0),
        "top_k": (0, 100),
        "layer": (0, cfg.n_layer - 1),
        "head": (0, cfg.n_head - 1),
        "step": (0, cfg.block_size),
    }
