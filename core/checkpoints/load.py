"""Load a real pretrained checkpoint from a local folder into the project's one ``GPT``.

A checkpoint folder holds ``config.json``, ``*.safetensors`` weights (one file, or shards listed
in ``model.safetensors.index.json``) and ``tokenizer.json`` — what ``hf download`` or the
Hugging Face cache puts on disk. Weights are read memory-mapped with ``safetensors.safe_open``,
one tensor at a time, into a model built on the ``meta`` device (no random init, no second
copy); the tokenizer with ``tokenizers``. Nothing is downloaded and pickle is never unpickled.

Every refusal is a ``ValueError`` whose message says what is wrong, and is raised before any
weight is read where it can be: not a folder, pickle-only weights, no ``config.json``, remote
code, an unknown architecture, no ``tokenizer.json``, a missing shard, an unreadable (truncated
or corrupt) safetensors file, missing or unexpected tensors, a shape that disagrees with the
config, weights over the memory budget, and non-finite weights.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from unittest.mock import patch

import torch

from core.checkpoints.app_options import DEFAULT_MAX_GIB
from core.checkpoints.families import config_from_hf, tensor_sources
from core.checkpoints.files import few, open_safetensors, read_config, read_tokenizer, weight_files
from core.cost.counts import params
from core.model.layout import decode_layout, fuse_projections, fused_buffers
from core.model.model import GPT

GIB = 2**30
DEFAULT_MAX_CONTEXT = 2048
DTYPES = (torch.float32, torch.float64)
FLOAT_CODES = {"F32": "float32", "F16": "float16", "BF16": "bfloat16", "F64": "float64"}


@dataclass(frozen=True)
class CheckpointCard:
    """What was loaded. ``n_params`` counts each tensor once (a tied output head is the
    embedding; a learned position table cut to ``block_size`` counts the rows kept);
    ``weight_bytes`` is their size as loaded (``dtype``), ``file_bytes`` the safetensors files
    on disk (``stored_dtype``, e.g. "bfloat16"). ``context_window`` is the checkpoint's own;
    ``block_size`` the positions this model object accepts (the window capped by ``load``'s
    ``max_context``). ``load_ms`` wall time of ``load``; ``rss_bytes`` this process's resident
    memory right after it (bytes; 0 where the OS does not say)."""

    architecture: str
    name: str
    path: str
    n_params: int
    weight_bytes: int
    file_bytes: int
    stored_dtype: str
    dtype: str
    n_layer: int
    n_head: int
    n_kv_head: int
    head_dim: int
    d_model: int
    ffn_hidden: int
    context_window: int
    block_size: int
    vocab_size: int
    eos_token_id: int | None
    load_ms: float
    rss_bytes: int


def load(
    path,
    dtype: torch.dtype = torch.float32,
    max_gib: float = DEFAULT_MAX_GIB,
    max_context: int | None = DEFAULT_MAX_CONTEXT,
    progress: Callable[[float], None] | None = None,
):
    """Load the checkpoint in folder ``path`` → ``(model, tokenizer, card)``.

    ``model`` is a ``GPT`` in eval mode with gradients off (share it read-only): ``forward(ids,
    cache)`` as for the shipped model, ``ids`` ``(B, T)`` → logits ``(B, T, vocab_size)``.
    ``tokenizer`` is a ``tokenizers.Tokenizer`` that ``core.model.tokenizer``'s helpers accept; its
    ``eos_token_id`` attribute holds the checkpoint's end token (``end_token_id`` reads it).
    ``dtype`` float32 or float64. Weights over ``max_gib`` GiB at ``dtype`` are refused before
    reading; ``max_context`` caps ``block_size`` (None: the checkpoint's whole window).
    ``progress(fraction)`` is called as weights are read (0 … 1, by size; ends at 1).
    Raises ``ValueError`` with a message for every refusal listed in the module docstring.
    """
    t0 = time.perf_counter()
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
    folder = Path(path)
    if not folder.is_dir():
        raise ValueError(f"{path} is not a folder: give the checkpoint's folder (config.json, weights, tokenizer.json)")
    files = weight_files(folder)
    hf = read_config(folder)
    arch = hf["architectures"][0]
    cfg, context = config_from_hf(hf, max_context)
    if cfg.tie_embeddings and _stores_own_head(files):
        # transformers 5.x keeps a stored lm_head.weight even when the config says tie_word_embeddings
        # (it ties only a head the file does not hold, or one equal to the embedding): so does this loader.
        cfg = replace(cfg, tie_embeddings=False)
    if not (folder / "tokenizer.json").is_file():
        raise ValueError(f"no tokenizer.json in {folder.name}: the model cannot turn text into tokens without it")
    # The budget from the config alone, before the model is built: a config.json claiming 10⁶ layers
    # took minutes and gigabytes to build even on the meta device.
    n_params = params(cfg)["total"]
    need = n_params * dtype.itemsize
    if need > max_gib * GIB:
        raise ValueError(
            f"{folder.name}: {n_params:,} parameters take {need / GIB:.2f} GiB as {_dtype_name(dtype)}, over the "
            f"budget of {max_gib:g} GiB (raise it with --max-model-gib if the machine has the memory)"
        )
    tok = read_tokenizer(folder, hf, cfg.vocab_size)
    with torch.device("meta"), patch.object(torch.nn.Embedding, "reset_parameters", _no_init):
        model = GPT(cfg)  # shapes only: nothing allocated, no random init
    expected = {n: tuple(p.shape) for n, p in model.named_parameters()}  # a tied head appears once
    matrices = {f"{m}.weight" for m, mod in model.named_modules() if isinstance(mod, torch.nn.Linear)}
    if cfg.tie_embeddings:
        matrices.add("embed_tokens.weight")  # it is the output head too
    fused = fused_buffers(model, dtype)  # q/k/v, gate/up read straight into one tensor each
    state, stored_dtypes = _read_weights(folder.name, files, arch, cfg, expected, (matrices, fused), dtype, progress)
    if cfg.tie_embeddings:
        state["lm_head.weight"] = state["embed_tokens.weight"]
    model.load_state_dict(state, assign=True)
    model.tie_weights()  # assign made the head its own Parameter; make it the embedding again
    model = model.to(dtype).eval()  # also builds the RoPE tables (they were on meta)
    for p in model.parameters():
        p.requires_grad_(False)  # shared across sessions: read-only
    fuse_projections(model)  # q/k/v and gate/up as one product each (core.model.layout): a faster step

    card = CheckpointCard(
        architecture=arch,
        name=checkpoint_name(folder),
        path=str(folder),
        n_params=n_params,
        weight_bytes=need,
        file_bytes=sum(f.stat().st_size for f in files),
        stored_dtype=_stored_dtype(stored_dtypes),
        dtype=_dtype_name(dtype),
        n_layer=cfg.n_layer,
        n_head=cfg.n_head,
        n_kv_head=cfg.n_kv_head,
        head_dim=cfg.head_dim,
        d_model=cfg.n_embd,
        ffn_hidden=cfg.ffn_hidden,
        context_window=context,
        block_size=cfg.block_size,
        vocab_size=cfg.vocab_size,
        eos_token_id=tok.eos_token_id,
        load_ms=(time.perf_counter() - t0) * 1000,
        rss_bytes=rss_bytes(),
    )
    return model, tok, card


def _stores_own_head(files) -> bool:
    """Whether a weights file holds its own output head (``lm_head.weight``; headers only)."""
    with ExitStack() as stack:
        return any("lm_head.weight" in stack.enter_context(open_safetensors(f)).keys() for f in files)


def _read_weights(name: str, files, arch: str, cfg, expected: dict, layouts, dtype, progress):
    """Every parameter as ``dtype`` (``layouts``: the matrices to store in ``decode_layout`` and
    the ``fused_buffers`` views to copy fused parts into), after checking the plan against the
    headers; also the stored dtype codes. Files are closed on return."""
    matrices, fused = layouts
    with ExitStack() as stack:
        handles = {f: stack.enter_context(open_safetensors(f)) for f in files}
        stored = {k: (f, h.get_slice(k)) for f, h in handles.items() for k in h.keys()}  # headers only
        twice = sorted({k for f, h in handles.items() for k in h.keys() if stored[k][0] != f})
        if twice:  # two files holding one tensor: whichever was read last won, silently
            raise ValueError(f"{name}: tensors stored in more than one weights file: {few(twice)}")
        plan = _plan(name, arch, cfg, expected, stored)
        state, done, total = {}, 0, sum(_numel(expected[n]) for n in plan)
        for param, src in plan.items():
            t = src.read(handles[stored[src.key][0]]).to(dtype)
            # A sum is finite when every value is (NaN and inf propagate); only a non-finite sum
            # (or one that overflowed) needs the exact check, which is ~15× slower than sum().
            if not (torch.isfinite(t.sum()) or torch.isfinite(t).all()):
                raise ValueError(f"{name}: {src.key} holds NaN or infinite values (a corrupt file?)")
            if param in fused:
                state[param] = fused[param].copy_(t)
            else:
                state[param] = decode_layout(t) if param in matrices else t
            done += t.numel()
            if progress is not None:
                progress(done / total)
        return state, {sl.get_dtype() for _, sl in stored.values()}


def _no_init(self) -> None:
    """An embedding's random init on the meta device costs seconds the first time (it imports
    torch's Python reference kernels) and is thrown away: the weights are assigned right after.
    Patched in only while the meta model is built."""


def _plan(name: str, arch: str, cfg, expected: dict, stored: dict) -> dict:
    """Where each parameter comes from, checked against the stored headers before any read:
    every tensor present, none left over, float storage, and every shape the config's."""
    plan, unused = tensor_sources(arch, cfg, list(expected), set(stored))
    missing = sorted(s.key for s in plan.values() if s.key not in stored)
    if missing:
        raise ValueError(f"{name}: tensors missing from the weights: {few(missing)}")
    if unused:
        raise ValueError(f"{name}: tensors this {arch} does not have: {few(sorted(unused))}")
    for param, src in plan.items():
        sl = stored[src.key][1]
        if sl.get_dtype() not in FLOAT_CODES:
            raise ValueError(f"{name}: {src.key} is stored as {sl.get_dtype()} (quantized?): only float weights load")
        got = src.shape(tuple(sl.get_shape()))
        if got != expected[param]:
            raise ValueError(
                f"{name}: shape mismatch for {src.key}: the weights give {list(got)}, "
                f"config.json implies {list(expected[param])}"
            )
    return plan


def checkpoint_name(folder: Path) -> str:
    """ "org/name" for a Hugging Face cache snapshot (``models--org--name/snapshots/<rev>``), else
    the folder's name."""
    parts = folder.resolve().parts
    if len(parts) >= 3 and parts[-2] == "snapshots" and parts[-3].startswith("models--"):
        return parts[-3][len("models--") :].replace("--", "/")
    return folder.name


def rss_bytes() -> int:
    """This process's resident set size in bytes (Linux ``/proc``; 0 elsewhere)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024  # reported in kB
    except OSError:
        pass
    return 0


def _numel(shape) -> int:
    out = 1
    for s in shape:
        out *= s
    return out


def _dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _stored_dtype(codes: set[str]) -> str:
    return "+".join(sorted(FLOAT_CODES.get(c, c) for c in codes))
