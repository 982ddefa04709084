"""The lesson pages: the one mapping from a lesson file's page names to the app's page scripts,
their navigation titles (as listed in ``app.py``) and the session-state keys of the settings a
stop may fix — and the JSON Schema of a lesson file, built from that mapping.

Tests hold the mapping to the app: scripts and titles equal ``app.py``'s ``st.Page`` list, and
every key and choice appears in the page script that reads it.
"""

from __future__ import annotations

from dataclasses import dataclass

from core import state
from core.cost import kv_shape
from core.decode import share
from core.decode.context import POLICIES
from core.model.config import PRESETS
from core.practice.catalogue import MAX_SEED, catalogue
from core.quant import ruler
from core.serving import latency, paged_presets


@dataclass(frozen=True)
class Setting:
    """A page setting a stop may fix: the session-state ``key`` the page reads and a JSON
    Schema fragment for its value."""

    key: str
    schema: dict


@dataclass(frozen=True)
class PageSpec:
    """A page of ``app.py``: its script, its navigation title, the settings a lesson may set."""

    script: str
    title: str
    settings: dict


# The temperature sliders move in tenths: a lesson's 0.123 was used while its slider showed "0.12".
# "steps" is this app's keyword (core.lesson.problems.STRICT_VALIDATOR checks it).
SLIDER_STEP = 0.1


def _int(lo, hi) -> dict:
    return {"type": "integer", "minimum": lo, "maximum": hi}


def _text(lo: int, hi: int) -> dict:
    """Text of ``lo`` … ``hi`` characters; when it may not be empty, not only spaces either (a title of
    "   " passed the length check and showed a blank bar: "Stop 1 of 1 · ")."""
    return {"type": "string", "minLength": lo, "maxLength": hi} | ({"pattern": r"\S"} if lo else {})


def _decode_settings() -> dict:
    """The decode page's settings are exactly its share-link parameters (``core.decode.share``), with the
    same ranges (for the shipped model) and choices, plus ``step``: decode steps replayed after the
    prefill. ``head`` is a query head or "mean over heads"; ``predict`` turns predict-first on."""
    limits = share.url_limits(PRESETS["shipped"])
    types = {
        str: _text(1, 5_000),
        int: {"type": "integer"},
        float: {"type": "number"},
    }
    out = {}
    for name, (key, parse) in share.URL_PARAMS.items():
        if key in share.URL_CHOICES:
            schema = {"enum": list(share.URL_CHOICES[key])}
        elif key == state.DECODE_HEAD:
            schema = {"anyOf": [_int(*limits[key]), {"const": state.MEAN_HEADS}]}
        elif key == state.DECODE_PREDICT:
            schema = {"type": "boolean"}
        else:
            schema = dict(types[parse])
            if key in limits:
                schema["minimum"], schema["maximum"] = limits[key]
            if parse is float:
                schema["steps"] = SLIDER_STEP  # the page's slider moves in tenths
        out[name] = Setting(key, schema)
    out["step"] = Setting(state.URL_STEP, _int(*limits[state.URL_STEP]))
    return out


# Lesson page name -> page. Scripts and titles must equal app.py's st.Page list (a test reads
# app.py); every key must be one the page script reads (a test reads the scripts).
PAGES: dict[str, PageSpec] = {
    "decode": PageSpec("app_pages/decode.py", "Prefill & decode", _decode_settings()),
    "worked": PageSpec(
        "app_pages/worked.py",
        "The worked example",
        {
            "scaled": Setting(state.WORKED_SCALED, {"type": "boolean"}),
            "ask_first": Setting(state.WORKED_ASK_FIRST, {"type": "boolean"}),
        },
    ),
    "context": PageSpec(
        "app_pages/context.py",
        "The context window",
        {
            "policy": Setting(state.CTX_POLICY, {"enum": list(POLICIES)}),
            "window": Setting(state.CTX_WINDOW, {**_int(16, 256), "multipleOf": 8}),
            "n_new": Setting(state.CTX_N_NEW, _int(10, 200)),
            "layer": Setting(state.CTX_LAYER, _int(0, 3)),
            "head": Setting(state.CTX_HEAD, {"anyOf": [_int(0, 3), {"const": "mean over heads"}]}),
        },
    ),
    "cache": PageSpec(
        "app_pages/cache.py",
        "What the cache holds",
        {"prompt": Setting(state.CACHE_PROMPT, _text(1, 500)), "text": Setting(state.CACHE_TEXT, _text(1, 500))},
    ),
    "see_it_move": PageSpec(
        "app_pages/see_it_move.py",
        "See it move",
        {"reduce_motion": Setting(state.SEE_REDUCE_MOTION, {"type": "boolean"})},
    ),
    "latency": PageSpec(
        "app_pages/latency.py",
        "Latency on a timeline",
        {
            "source": Setting(state.LAT_SOURCE, {"enum": list(latency.EDITABLE)}),
        },
    ),
    "batching": PageSpec(
        "app_pages/batching.py",
        "Batching",
        {
            "prompts": Setting(state.BATCH_PROMPTS, _text(1, 20_000)),
            "budgets": Setting(state.BATCH_BUDGETS, _text(1, 200)),
            "layout": Setting(state.BATCH_LAYOUT, {"enum": ["padded", "ragged"]}),
        },
    ),
    "speculative": PageSpec(
        "app_pages/speculative.py",
        "Speculative decoding",
        {
            "k": Setting(state.SPEC_K, _int(1, 8)),
            "temperature": Setting(
                state.SPEC_T, {"type": "number", "minimum": 0, "maximum": 1.5, "steps": SLIDER_STEP}
            ),
            "seed": Setting(state.SPEC_SEED, _int(0, 2**31 - 1)),
        },
    ),
    "paged": PageSpec(
        "app_pages/paged.py",
        "Paged KV cache",
        {
            "preset": Setting(state.PAGED_PRESET, {"enum": list(paged_presets.PRESETS)}),
            "policy": Setting(state.PAGED_POLICY, {"enum": ["continuous", "static"]}),
        },
    ),
    "cost": PageSpec(
        "app_pages/cost.py",
        "The bill per token",
        {
            "layers": Setting(state.COST_LAYERS, _int(1, 10_000)),
            "heads": Setting(state.COST_HEADS, _int(1, 10_000)),
            "n_max": Setting(state.COST_N_MAX, {"enum": [2_000, 5_000, 10_000, 20_000]}),
            "n_prompt": Setting(state.COST_N_PROMPT, _int(1, 10**12)),
            "m_new": Setting(state.COST_M_NEW, _int(1, 10**9)),
        },
    ),
    "memory": PageSpec(
        "app_pages/memory.py",
        "KV-cache memory",
        {
            "preset": Setting(state.MEMORY_PRESET, {"enum": [*kv_shape.PRESETS, "The shipped model"]}),
        },
    ),
    "weights": PageSpec("app_pages/weights.py", "Weights & model cards", {}),
    "speed": PageSpec("app_pages/speed.py", "Speed on this machine", {}),
    "quantize": PageSpec(
        "app_pages/quantize.py",
        "The quantization ruler",
        {
            "preset": Setting(state.QUANT_PRESET, {"enum": list(ruler.PRESETS)}),
        },
    ),
    "quant_model": PageSpec(
        "app_pages/quant_model.py",
        "Quantizing the model",
        {
            "diverge_bits": Setting(state.QM_DIVERGE_BITS, {"enum": [8, 6, 5, 4, 3, 2]}),
            "n_new": Setting(state.QM_N_NEW, _int(10, 80)),
            "group": Setting(state.QM_GROUP, {"enum": [8, 16, 32]}),
        },
    ),
    "practice": PageSpec(
        "app_pages/practice.py",
        "Practice",
        {
            "ex": Setting(state.PRACTICE_EX, {"enum": list(catalogue())}),
            "numbers": Setting(state.PRACTICE_SEED, _int(0, MAX_SEED)),
        },
    ),
    "summary": PageSpec("app_pages/summary.py", "What you now know", {}),
}


def lesson_schema() -> dict:
    """The JSON Schema (draft 2020-12) of a lesson file, built from ``PAGES``."""
    per_page = [
        {
            "if": {"properties": {"page": {"const": name}}, "required": ["page"]},
            "then": {
                "properties": {
                    "settings": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {k: s.schema for k, s in spec.settings.items()},
                    }
                }
            },
        }
        for name, spec in PAGES.items()
    ]
    stop = {
        "type": "object",
        "required": ["title", "page", "note", "question"],
        "additionalProperties": False,
        "properties": {
            "title": _text(1, 120),
            "page": {"enum": list(PAGES)},
            "settings": {"type": "object"},
            "note": _text(1, 2_000),
            "question": _text(1, 500),
            "handout": _text(1, 2_000),
            "minutes": {"type": "number", "exclusiveMinimum": 0, "maximum": 60},
        },
        "allOf": per_page,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "A guided lesson: ordered stops through the app's pages",
        "type": "object",
        "required": ["title", "stops"],
        "additionalProperties": False,
        "properties": {
            "title": _text(1, 120),
            "description": _text(0, 2_000),
            "minutes": {"type": "number", "exclusiveMinimum": 0, "maximum": 600},
            "stops": {"type": "array", "minItems": 1, "maxItems": 40, "items": stop},
        },
    }
