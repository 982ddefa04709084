"""The app's pages as data: the one mapping from a page's name (as lesson files, share links and a class's plan
spell it) to its script, its navigation title (as listed in ``ui.frame.SECTIONS``) and its settings — each a
JSON Schema fragment with its choices and range — and the JSON Schema of a lesson file, built from that mapping.

A page's settings are one typed value (``PageSpec.settings_type``: a frozen dataclass, a field per setting, None
where a stop or a link leaves the setting to the page's default). The ui package that owns the page maps each
setting to its session key (its ``SETTINGS``) and offers ``snapshot()`` and ``show(settings)``
(``ui.session``). Tests hold the mapping to the app: scripts and titles equal the navigation's.
"""

from __future__ import annotations

from dataclasses import dataclass, field, make_dataclass
from functools import cached_property

from core.cost import kv_shape
from core.decode import settings as decode
from core.decode.context import POLICIES
from core.decode.share import URL_PARAMS
from core.model.config import PRESETS
from core.practice.catalogue import MAX_SEED, catalogue
from core.quant import ruler
from core.quant.quantize import ROUNDING
from core.serving import latency, paged_presets


@dataclass(frozen=True)
class PageSpec:
    """A page of the app: its script, its navigation title, the settings a lesson stop, a share link or a class's
    plan may set ({setting: JSON Schema fragment})."""

    script: str
    title: str
    settings: dict = field(default_factory=dict)

    @cached_property
    def settings_type(self) -> type:
        """The page's settings as one frozen dataclass: a field per setting, None for "the page's default"."""
        name = "".join(w.capitalize() for w in self.script.rsplit("/", 1)[-1][:-3].split("_")) + "Settings"
        return make_dataclass(name, [(k, object, field(default=None)) for k in self.settings], frozen=True)

    def make(self, values: dict):
        """``values`` ({setting: value}) as the page's typed settings. Raises ``TypeError`` for a setting the page
        does not have."""
        return self.settings_type(**values)


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
    """The decode page's settings are exactly its share-link parameters (``core.decode.settings``), with the
    same ranges (for the shipped model) and choices, plus ``step``: decode steps replayed after the
    prefill. ``head`` is a query head or "mean over heads"; ``predict`` turns predict-first on."""
    limits = decode.limits(PRESETS["shipped"])
    types = {str: _text(1, 5_000), int: {"type": "integer"}, float: {"type": "number"}}
    out = {}
    for name, parse in URL_PARAMS.items():
        if name in decode.CHOICES:
            schema = {"enum": list(decode.CHOICES[name])}
        elif name == "head":
            schema = {"anyOf": [_int(*limits[name]), {"const": decode.MEAN_HEADS}]}
        elif name == "predict":
            schema = {"type": "boolean"}
        else:
            schema = dict(types[parse])
            if name in limits:
                schema["minimum"], schema["maximum"] = limits[name]
            if parse is float:
                schema["steps"] = SLIDER_STEP  # the page's slider moves in tenths
        out[name] = schema
    out["step"] = _int(*limits["step"])
    return out


# Page name -> page. Scripts and titles must equal the navigation's (a test reads ui.frame); every setting must be
# one its owner maps to a session key (tests/ui/test_followable.py).
PAGES: dict[str, PageSpec] = {
    "decode": PageSpec("app_pages/decode.py", "Prefill & decode", _decode_settings()),
    "worked": PageSpec(
        "app_pages/worked.py",
        "The worked example",
        {
            "scaled": {"type": "boolean"},
            "ask_first": {"type": "boolean"},
        },
    ),
    "context": PageSpec(
        "app_pages/context.py",
        "The context window",
        {
            "policy": {"enum": list(POLICIES)},
            "window": {**_int(16, 256), "multipleOf": 8},
            "n_new": _int(10, 200),
            "layer": _int(0, 3),
            "head": {"anyOf": [_int(0, 3), {"const": "mean over heads"}]},
        },
    ),
    "cache": PageSpec(
        "app_pages/cache.py",
        "What the cache holds",
        {"prompt": _text(1, 500), "text": _text(1, 500)},
    ),
    "see_it_move": PageSpec(
        "app_pages/see_it_move.py",
        "See it move",
        {"reduce_motion": {"type": "boolean"}},
    ),
    "latency": PageSpec(
        "app_pages/latency.py",
        "Latency on a timeline",
        {
            "source": {"enum": list(latency.EDITABLE)},
            "n_new": _int(2, 40),
        },
    ),
    "batching": PageSpec(
        "app_pages/batching.py",
        "Batching",
        {
            "prompts": _text(1, 20_000),
            "budgets": _text(1, 200),
            "layout": {"enum": ["padded", "ragged"]},
        },
    ),
    "speculative": PageSpec(
        "app_pages/speculative.py",
        "Speculative decoding",
        {
            "k": _int(1, 8),
            "temperature": {"type": "number", "minimum": 0, "maximum": 1.5, "steps": SLIDER_STEP},
            "seed": _int(0, 2**31 - 1),
        },
    ),
    "paged": PageSpec(
        "app_pages/paged.py",
        "Paged KV cache",
        {
            "preset": {"enum": list(paged_presets.PRESETS)},
            "policy": {"enum": ["continuous", "static"]},
            "block_size": _int(1, PRESETS["shipped"].block_size),
            "n_blocks": _int(1, 256),
        },
    ),
    "serve_class": PageSpec("app_pages/serve_class.py", "Serve the class", {}),
    "cost": PageSpec(
        "app_pages/cost.py",
        "The bill per token",
        {
            "layers": _int(1, 10_000),
            "heads": _int(1, 10_000),
            "n_max": {"enum": [2_000, 5_000, 10_000, 20_000]},
            "n_prompt": _int(1, 10**12),
            "m_new": _int(1, 10**9),
        },
    ),
    "memory": PageSpec(
        "app_pages/memory.py",
        "KV-cache memory",
        {
            "preset": {"enum": [*kv_shape.PRESETS, "The shipped model"]},
            "lengths": _text(1, 2_000),  # T: the request lengths, e.g. "8192" or "1024, 8192, 32768"
        },
    ),
    "weights": PageSpec("app_pages/weights.py", "Weights & model cards", {}),
    "speed": PageSpec("app_pages/speed.py", "Speed on this machine", {}),
    "quantize": PageSpec(
        "app_pages/quantize.py",
        "The quantization ruler",
        {
            # A preset sets the values, the scale and the format of one of the chapters' cases; the settings beside
            # it (a class's plan carries them all) then change what they name.
            "preset": {"enum": list(ruler.PRESETS)},
            "values": _text(1, 50_000),
            "bits": {"enum": [1, 2, 3, 4, 5, 6, 7, 8, 16]},
            "kind": {"enum": ["symmetric", "affine (zero point)"]},
            "rounding": {"enum": list(ROUNDING)},
            "clip": {"type": "boolean"},
            "scale_mode": {"enum": ["automatic", "set by hand"]},
            "scale": {"type": "number", "exclusiveMinimum": 0, "maximum": 1e6},
            "zero_point": {"type": "integer", "minimum": -(2**16), "maximum": 2**16},
        },
    ),
    "quant_model": PageSpec(
        "app_pages/quant_model.py",
        "Quantizing the model",
        {
            "diverge_bits": {"enum": [8, 6, 5, 4, 3, 2]},
            "n_new": _int(10, 80),
            "group": {"enum": [8, 16, 32]},
        },
    ),
    "practice": PageSpec(
        "app_pages/practice.py",
        "Practice",
        {
            "ex": {"enum": list(catalogue())},
            "numbers": _int(0, MAX_SEED),
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
                        "properties": dict(spec.settings),
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
