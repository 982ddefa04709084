"""What a learner finishing takes away: Ch. 19's "What you now know" and Ch. 30 §30.7's summary, in the
chapters' own words, each point with the pages of the app that show it (``core.lesson.pages.PAGES``
names). The "What you now know" page draws them with a link per page; the shipped lesson ends there.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Point:
    """One point of a summary: its ``text`` (the chapter's sentence) and the ``pages`` that show it
    (lesson page names, keys of ``core.lesson.pages.PAGES``), the one that shows it best first."""

    text: str
    pages: tuple[str, ...]


@dataclass(frozen=True)
class Summary:
    """A chapter's closing summary: its ``title``, where it stands (``source``) and its ``points`` in order."""

    title: str
    source: str
    points: tuple[Point, ...]


SUMMARIES = (
    Summary(
        "Ch. 19 · What you now know",
        "Ch. 19 “Inference, Efficiently”, its closing list",
        (
            Point("Prefill processes the prompt; decoding extends it one token at a time.", ("decode",)),
            Point("The KV cache reuses earlier keys and values at every layer.", ("cache", "worked")),
            Point(
                "Prompt attention grows quadratically; one cached query grows linearly with context.",
                ("cost", "see_it_move"),
            ),
            Point(
                "Quantization reduces precision and storage, with measurable output error.",
                ("quantize", "quant_model"),
            ),
            Point("Weights, cache, activations, and metadata all consume memory.", ("memory", "weights")),
        ),
    ),
    Summary(
        "Ch. 30 · §30.7 Summary",
        "Ch. 30 “Model Inference: Prefill, Decode, KV Cache, and Quantization”, §30.7",
        (
            Point(
                "Prefill processes known prompt positions and supplies the first next-token logits; decode consumes "
                "chosen tokens sequentially.",
                ("decode",),
            ),
            Point(
                "KV caching reuses layer-specific keys and values under matching computation conditions.",
                ("cache", "decode"),
            ),
            Point("TTFT and TPOT need explicit timestamps and denominators.", ("latency",)),
            Point(
                "Quantization trades representation size for bounded rounding error only within its unclipped "
                "range, and task quality must still be measured.",
                ("quantize", "quant_model"),
            ),
        ),
    ),
)


# Ch. 19's opening "You'll need" (what a learner brings from earlier chapters) and its closing "Where we're
# headed", in the chapter's words: the decode page (where a learner starts) and the summary page show them.
YOU_LL_NEED = (
    "the loop: sample a token, append it, run the machine again",
    "queries, keys, values; one row of scores per asker; the causal mask",
    "the full stack — layers, heads, d_model, and where the parameters live",
    "sampling variation, long-run frequencies, and when errors can average out",
)
WHERE_HEADED = (
    "We have a limited workspace for context. Next we build a way to fetch the few passages that belong there: "
    "retrieval and vector search."
)
