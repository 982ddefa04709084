"""Share links: lesson state carried in the URL so a teacher can share a link that opens exactly
the request on the teacher's screen (``?seed=3&step=5&present=1``): the prompt, sampling,
precision and weights it was prefilled with and the steps taken, not whatever the controls say
now. Limits come from the loaded model's config."""

from __future__ import annotations

from core.decode.settings import CHOICES, DEFAULTS, MAX_PROMPT_CHARS, MEAN_HEADS, limits
from core.model.config import GPTConfig
from core.typed_numbers import quote  # a code span: the link's text is shown literally


def _head(raw: str):
    """A query head index, or the mean over heads (``head=mean``)."""
    return MEAN_HEADS if raw == "mean" else int(raw)


_head.__name__ = "head (a number, or mean)"


def _flag(raw: str) -> bool:
    if raw not in ("0", "1"):
        raise ValueError(raw)
    return raw == "1"


_flag.__name__ = "flag (0 or 1)"

# Query parameter (a setting of ``core.decode.settings``) -> its parser. Unknown or malformed values are ignored
# (and reported), never applied.
URL_PARAMS = {
    "prompt": str,
    "seed": int,
    "strategy": str,
    "temperature": float,
    "top_k": int,
    "dtype": str,
    "bits": int,
    "layer": int,
    "head": _head,
    "predict": _flag,
}


def parse_url_state(params: dict, cfg: GPTConfig) -> tuple[dict, list[str]]:
    """{setting: value} from query parameters (the settings of ``core.decode.settings``), and a note per ignored
    parameter.

    ``step`` (decode steps to replay) and ``present`` (presenter mode) are included too.
    Values outside their range (for ``cfg``'s model) or choices are ignored with a reason."""
    out, ignored = {}, []
    items = dict(URL_PARAMS, step=int, present=_flag)
    ranges = limits(cfg)
    for name, raw in params.items():
        if name not in items:
            continue
        key, parse = name, items[name]
        try:
            value = parse(raw)
        except (TypeError, ValueError):
            ignored.append(f"{name}={quote(raw, 30)} is not a valid {parse.__name__}")
            continue
        lo_hi = ranges.get(key)
        if lo_hi and value != MEAN_HEADS and not lo_hi[0] <= value <= lo_hi[1]:
            ignored.append(f"{name}={value} is outside {lo_hi[0]} … {lo_hi[1]}")
            continue
        if key in CHOICES and value not in CHOICES[key]:
            ignored.append(f"{name}={quote(value, 30)} is not one of {CHOICES[key]}")
            continue
        if key == "prompt" and len(value) > MAX_PROMPT_CHARS:
            ignored.append("prompt is longer than the prompt box allows")
            continue
        out[key] = value
    return out, ignored


def link_for(sess, layer: int, head, predict: bool = False, present: bool = False, model: str | None = None) -> dict:
    """Query parameters that reopen the request ``sess`` (a ``core.decode.session.DecodeSession``) as shown:
    its model (``model``: the picker's name of a checkpoint; None for the shipped model), prompt
    text, sampling, precision and weights from its Prefill, the steps taken, the layer and head on
    screen (``MEAN_HEADS`` → ``head=mean``). Presenter mode and predict mode only when asked for
    (students get the laptop view by default). Values equal to the defaults are left out."""
    s = sess.sampling
    values = {
        "prompt": sess.prompt_text,
        "strategy": s.strategy,
        "temperature": s.temperature,
        "top_k": s.top_k,
        "seed": s.seed,
        "dtype": sess.model_key.dtype,
        "bits": sess.model_key.weight_bits,
        "layer": layer,
        "head": head,
    }
    if s.strategy == "greedy":  # temperature and top-k play no part in a greedy request
        values.pop("temperature"), values.pop("top_k")
    out = {
        name: ("mean" if value == MEAN_HEADS else str(value))
        for name, value in values.items()
        if value is not None and value != DEFAULTS.get(name)
    }
    if model is not None:  # a name the server lists, never a path (ui.models.choose_from_link)
        out = {"model": model, **out}
    out["step"] = str(sess.n_steps)
    if predict:
        out["predict"] = "1"
    if present:
        out["present"] = "1"
    return out
