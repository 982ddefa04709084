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
    DECODE_LAYER: 2,
    DECODE_HEAD: 3,  # looks back at the traveller's name when about to write it
}

MAX_PROMPT_CHARS = 200_000  # far past the context window; the token count gives the message
