"""Ask transformers: the KV cache a model really allocates, read from its own cache object.

When the installed ``transformers`` (optional at run time) has a config class and a causal-LM class for a
config's ``model_type``, the model is built on PyTorch's ``meta`` device (shapes and dtypes only: no weights,
no memory) in bfloat16, run on one position and then on two, and every tensor its cache holds is added up, a
value in the build's bfloat16 at the config's own bytes per value (a float32 state stays 4 bytes):

    per position = bytes(2 positions) − bytes(1 position)      fixed = bytes(1 position) − per position

(a hybrid's recurrent state is the fixed part; a sliding layer grows like a full one until its window fills).
Remote-code models (``auto_map``) are never run: ``trust_remote_code`` stays off.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from itertools import compress

import torch

from core.cost.kv_hybrid import attention_layers, state_bytes
from core.cost.shapes import DTYPE_BYTES

MAX_REFERENCE_LAYERS = 256  # a model past this is not built (module construction grows with the layers)
MAX_FIELD = 10**7  # a config with a larger number is not built (vocabularies of real models are < 10⁶)


@dataclass(frozen=True)
class CacheReference:
    """transformers' own cache for one request: ``per_position`` bytes (all layers) and ``fixed`` bytes
    (state that does not grow with T), ``layers`` = bytes per position of each cache layer, the cache's class,
    and ``dtype_bytes`` (b the model was built in)."""

    per_position: int
    fixed: int
    layers: tuple[int, ...]
    cache_class: str
    dtype_bytes: int


def _tensors(obj, seen: set, depth: int = 0):
    """Every tensor reachable from ``obj`` through public attributes, lists, tuples and dicts, once each."""
    if depth > 6 or id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, list | tuple):
        for item in obj:
            yield from _tensors(item, seen, depth + 1)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _tensors(item, seen, depth + 1)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        for name, item in vars(obj).items():
            if not name.startswith("_"):
                yield from _tensors(item, seen, depth + 1)


def _bytes(obj, b: int) -> int:
    """Bytes of every tensor under ``obj``; a tensor in the dtype the model was built in (bfloat16) counts ``b``
    bytes a value, the config's own dtype (a state transformers keeps in float32 stays 4)."""
    return sum(t.numel() * (b if t.dtype == torch.bfloat16 else t.element_size()) for t in _tensors(obj, set()))


def _layer_bytes(cache, b: int) -> list[int]:
    layers = getattr(cache, "layers", None)
    return [_bytes(layer, b) for layer in layers] if isinstance(layers, list) else []


def why_not(cfg: dict) -> str | None:
    """Why transformers cannot be asked about this config dict (None: it can)."""
    try:
        import transformers
        from transformers import CONFIG_MAPPING, MODEL_FOR_CAUSAL_LM_MAPPING
    except ImportError:
        return "transformers is not installed"
    model_type = cfg.get("model_type")
    if "auto_map" in cfg:
        return "the model's code is its own (auto_map), and remote code is never run here"
    if not isinstance(model_type, str) or model_type not in CONFIG_MAPPING:
        return f"transformers {transformers.__version__} has no config class for this model_type"
    if CONFIG_MAPPING[model_type] not in MODEL_FOR_CAUSAL_LM_MAPPING:
        return f"transformers {transformers.__version__} has no causal-LM model for model_type {model_type}"
    layers = cfg.get("num_hidden_layers", cfg.get("text_config", {}).get("num_hidden_layers", 0))
    if not isinstance(layers, int) or layers > MAX_REFERENCE_LAYERS:
        return f"it has more than {MAX_REFERENCE_LAYERS} layers, past what is built here"
    if _largest(cfg) > MAX_FIELD:
        return f"a field is larger than {MAX_FIELD:,}, past what is built here"
    return None


def _largest(value, depth: int = 0) -> float:
    if depth > 8:
        return 0
    if isinstance(value, dict):
        return max((_largest(v, depth + 1) for v in value.values()), default=0)
    if isinstance(value, list):
        return max((_largest(v, depth + 1) for v in value), default=0)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0


@lru_cache(maxsize=32)
def _measure(cfg_json: str) -> CacheReference:
    from transformers import AutoConfig, AutoModelForCausalLM

    cfg = json.loads(cfg_json)
    dtype = cfg.get("torch_dtype", cfg.get("dtype")) or "float16"
    dtype = dtype if dtype in DTYPE_BYTES and hasattr(torch, dtype) else "float16"
    fields = {k: v for k, v in cfg.items() if k not in ("model_type", "torch_dtype", "dtype", "architectures")}
    config = AutoConfig.for_model(cfg["model_type"], **fields)
    b = DTYPE_BYTES[dtype]
    # Built in bfloat16 whatever the config says: PyTorch's meta kernels for grouped expert products take
    # bfloat16 only; its tensors are then counted at the config's b (``_bytes``).
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16).eval()
    held, per_layer = [], []
    with torch.no_grad():
        for n in (1, 2):
            out = model(input_ids=torch.zeros((1, n), dtype=torch.long, device="meta"), use_cache=True)
            cache = getattr(out, "past_key_values", None)
            if cache is None:
                raise ValueError("the model returned no cache")
            held.append(_bytes(cache, b))
            per_layer.append(_layer_bytes(cache, b))
    per_position = held[1] - held[0]
    layers = tuple(b - a for a, b in zip(per_layer[0], per_layer[1], strict=False))
    return CacheReference(per_position, held[0] - per_position, layers, type(cache).__name__, b)


def reference_cache(cfg: dict) -> CacheReference:
    """transformers' own cache for the (top-level) ``config.json`` dict ``cfg`` (module docstring). Raises
    ``ValueError`` with a sentence when it cannot be asked (``why_not``) or the model does not run on the meta
    device (its message, cut short)."""
    reason = why_not(cfg)
    if reason is not None:
        raise ValueError(reason)
    try:
        return _measure(json.dumps(cfg, sort_keys=True))
    except Exception as err:  # noqa: BLE001 - any model's code may raise anything; the page says it in a sentence
        raise ValueError(f"transformers could not build or run it on the meta device ({str(err)[:120]})") from None


@dataclass(frozen=True)
class Agreement:
    """Our count beside transformers': ``ours_per_position`` and ``ours_fixed`` bytes (one request, the
    config's own terms), ``agrees``, and ``layers`` = the cache layers whose bytes per position differ, as
    (layer, ours, transformers')."""

    ours_per_position: int
    ours_fixed: int
    agrees: bool
    layers: tuple[tuple[int, int, int], ...]


def compare(shape, reference: CacheReference) -> Agreement:
    """``shape`` (a ``core.cost.kv_shape.KVShape`` read from the same config) against ``reference``: bytes per
    position layer by layer (a layer that keeps a state instead of a cache counts 0) and the fixed state."""
    b = reference.dtype_bytes
    built = shape.layers(shape.n_layer, shape.n_kv_head, shape.head_dim, shape.window)
    attends = attention_layers(shape.hybrid, shape.n_layer) if shape.hybrid else (True,) * shape.n_layer
    ours_layers = [0] * shape.n_layer
    for i, layer in zip(compress(range(shape.n_layer), attends), built, strict=True):
        ours_layers[i] = (layer.k_values + layer.v_values) * b
    fixed = state_bytes(shape.state, shape.state_layers(shape.n_layer), 1, b)
    theirs = list(reference.layers) + [0] * (shape.n_layer - len(reference.layers))
    differ = tuple((i, o, t) for i, (o, t) in enumerate(zip(ours_layers, theirs, strict=False)) if o != t)
    per_position = sum(ours_layers)
    agrees = per_position == reference.per_position and fixed == reference.fixed
    return Agreement(per_position, fixed, agrees, differ)
