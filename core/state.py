"""Session-state keys and their defaults, as plain data (one learner's view; never shared)."""

DEFAULT_PROMPT = (
    "User: Hello, my name is Mira. I am planning a trip to Lyon.\n"
    "Assistant: Hello Mira. The travel limit is 750 yuan per day.\n"
    "User: The hotel in Lyon costs 620 yuan. Is that allowed?\n"
    "Assistant:"
)

# Keys (prefixed by page so pages never collide).
DECODE_SESSION = "decode.session"  # core.session.DecodeSession | None
DECODE_PROMPT = "decode.prompt"  # the prompt text, kept across page changes
DECODE_PLAYING = "decode.playing"  # bool: Play is stepping on its own
DECODE_MESSAGE = "decode.message"  # (level, text) | None: the last refusal, shown once
DECODE_DTYPE = "decode.dtype"
DECODE_WEIGHT_BITS = "decode.weight_bits"  # None (float) or 8/4/3: weight-only quantization
DECODE_STRATEGY = "decode.strategy"
DECODE_TEMPERATURE = "decode.temperature"
DECODE_TOP_K = "decode.top_k"
DECODE_SEED = "decode.seed"
DECODE_PACE = "decode.pace_s"
DECODE_LAYER = "decode.layer"
DECODE_HEAD = "decode.head"

DEFAULTS = {
    DECODE_SESSION: None,
    DECODE_PROMPT: DEFAULT_PROMPT,
    DECODE_PLAYING: False,
    DECODE_MESSAGE: None,
    DECODE_DTYPE: "float32",
    DECODE_WEIGHT_BITS: None,
    DECODE_STRATEGY: "greedy",
    DECODE_TEMPERATURE: 0.8,
    DECODE_TOP_K: 20,
    DECODE_SEED: 0,
    DECODE_PACE: 0.5,
    # Looks back at the traveller's name when about to write it: on the default prompt, at decode
    # step 2 (choosing output token 3, " Mira") it puts 0.997 of the new row on the name's two
    # prompt positions (tests/test_shipped_model.py; `python -m bench.shipped_model` lists every head).
    DECODE_LAYER: 3,
    DECODE_HEAD: 0,
    "ui.present": False,
}

MAX_PROMPT_CHARS = 200_000  # far past the context window; the token count gives the message

# Lesson state carried in the URL so a teacher can share a link that opens exactly that view.
# Query parameter -> (session-state key, parser). Unknown or malformed values are ignored (and
# reported), never applied.
URL_PARAMS = {
    "prompt": (DECODE_PROMPT, str),
    "seed": (DECODE_SEED, int),
    "strategy": (DECODE_STRATEGY, str),
    "temperature": (DECODE_TEMPERATURE, float),
    "top_k": (DECODE_TOP_K, int),
    "dtype": (DECODE_DTYPE, str),
    "bits": (DECODE_WEIGHT_BITS, int),
    "layer": (DECODE_LAYER, int),
    "head": (DECODE_HEAD, int),
}
URL_LIMITS = {
    DECODE_SEED: (0, 2**31 - 1),
    DECODE_TEMPERATURE: (0.1, 2.0),
    DECODE_TOP_K: (0, 100),
    DECODE_LAYER: (0, 3),
    DECODE_HEAD: (0, 3),
    "step": (0, 255),
}
URL_CHOICES = {
    DECODE_STRATEGY: ("greedy", "sample"),
    DECODE_DTYPE: ("float32", "float64"),
    DECODE_WEIGHT_BITS: (8, 4, 3),
}
PRESENT = "ui.present"  # presenter mode: larger text and figures, fewer controls
URL_STEP = "url.step"  # decode steps to replay after an automatic prefill (from ?step=N)


def parse_url_state(params: dict) -> tuple[dict, list[str]]:
    """Session-state values from query parameters, and a note per ignored parameter.

    ``step`` (decode steps to replay) and ``present`` (presenter mode) are included too.
    Values outside their range or choices are ignored with a reason."""
    out, ignored = {}, []
    items = dict(URL_PARAMS, step=(URL_STEP, int), present=(PRESENT, int))
    for name, raw in params.items():
        if name not in items:
            continue
        key, parse = items[name]
        try:
            value = parse(raw)
        except (TypeError, ValueError):
            ignored.append(f"{name}={str(raw)[:30]!r} is not a valid {parse.__name__}")
            continue
        lo_hi = URL_LIMITS.get(key if name != "step" else "step")
        if lo_hi and not lo_hi[0] <= value <= lo_hi[1]:
            ignored.append(f"{name}={value} is outside {lo_hi[0]} … {lo_hi[1]}")
            continue
        if key in URL_CHOICES and value not in URL_CHOICES[key]:
            ignored.append(f"{name}={value!r} is not one of {URL_CHOICES[key]}")
            continue
        if key == DECODE_PROMPT and len(value) > MAX_PROMPT_CHARS:
            ignored.append("prompt is longer than the prompt box allows")
            continue
        out[key] = bool(value) if key == PRESENT else value
    return out, ignored


def url_params_for(state: dict, step: int | None) -> dict:
    """Query parameters that reopen this decode view (only values that differ from the defaults)."""
    out = {
        name: str(state[key])
        for name, (key, _) in URL_PARAMS.items()
        if key in state and state[key] is not None and state[key] != DEFAULTS.get(key)
    }
    if step is not None:
        out["step"] = str(step)
    if state.get(PRESENT):
        out["present"] = "1"
    return out
