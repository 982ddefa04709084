"""Reading a checkpoint folder's files for ``core.checkpoints.load.load``, each refusal a ``ValueError``
that names the file and what is wrong: ``config.json`` (a supported architecture, no remote code),
the safetensors files (shards from ``model.safetensors.index.json``, never outside the folder;
pickle-only weights refused, never unpickled) and ``tokenizer.json`` with the end token.
"""

from __future__ import annotations

import json
from pathlib import Path

from safetensors import safe_open

from core.checkpoints.families import SUPPORTED
from core.cost.shapes import MAX_CONFIG_BYTES
from core.model.tokenizer import load_tokenizer
from core.text import quoted

PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
INDEX = "model.safetensors.index.json"
MIB = 2**20
TOKENIZER_BYTES_PER_TOKEN = 512  # real tokenizer.json files: 27–71 bytes per token (read_tokenizer)


def read_config(folder: Path) -> dict:
    """``config.json`` as a dict; refused when missing, not a JSON object, needing remote code, or
    of an architecture not in ``core.checkpoints.families.SUPPORTED``."""
    path = folder / "config.json"
    if not path.is_file():
        raise ValueError(f"no config.json in {folder.name}: not a Hugging Face checkpoint folder")
    if (size := path.stat().st_size) > MAX_CONFIG_BYTES:
        raise ValueError(
            f"config.json in {folder.name} is {size:,} bytes: a model's config is far smaller (limit 1 MB)"
        )
    try:
        hf = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"config.json in {folder.name} is not valid JSON ({e})") from None
    except ValueError:  # Python's own limit on integer digits, whose message named sys.set_int_max_str_digits()
        raise ValueError(f"config.json in {folder.name} holds a number over 4,300 digits long: not a model's") from None
    except RecursionError:
        raise ValueError(f"config.json in {folder.name} is nested too deeply to be a model's config") from None
    if not isinstance(hf, dict):
        raise ValueError(f"config.json in {folder.name} is not a JSON object")
    supported = ", ".join(SUPPORTED)
    if hf.get("auto_map") or hf.get("trust_remote_code"):
        raise ValueError(
            f"{folder.name} needs its own Python code (trust_remote_code / auto_map in config.json), which this "
            f"app never runs; supported architectures: {supported}"
        )
    archs = hf.get("architectures")
    if not (isinstance(archs, list) and archs and archs[0] in SUPPORTED):
        raise ValueError(f"architecture {quoted(archs, 100)} of {folder.name} is not supported; supported: {supported}")
    return hf


def weight_files(folder: Path) -> list[Path]:
    """The safetensors files to read: the shards the index lists, else every ``*.safetensors``."""
    index = folder / INDEX
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
            names = sorted(set(weight_map.values()))
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            raise ValueError(f"{INDEX} in {folder.name} is not a valid shard index") from None
        if not all(isinstance(n, str) and n for n in names):
            raise ValueError(f"{INDEX} in {folder.name} is not a valid shard index: a shard's name is not a file name")
        if any("/" in n or "\\" in n or n.startswith(".") for n in names):
            raise ValueError(f"{INDEX} in {folder.name} names files outside the folder")
        missing = [n for n in names if not (folder / n).is_file()]
        if missing:
            raise ValueError(f"{folder.name}: missing shard(s) {few(missing)} of {len(names)} listed in {INDEX}")
        return [folder / n for n in names]
    files = sorted(f for f in folder.glob("*.safetensors") if f.is_file())  # not a pipe, which would block
    if files:
        return files
    pickles = sorted(f.name for f in folder.iterdir() if f.suffix in PICKLE_SUFFIXES)
    if pickles:
        raise ValueError(
            f"{folder.name} has only pickle weights ({few(pickles)}): loading pickle can run arbitrary code, so "
            "it is refused; use a checkpoint with *.safetensors weights"
        )
    raise ValueError(f"no *.safetensors weights in {folder.name}")


def open_safetensors(f: Path):
    """``safetensors.safe_open`` (memory-mapped); a malformed file is a ``ValueError`` naming it."""
    try:
        return safe_open(str(f), framework="pt")
    except Exception as e:  # safetensors raises its own error type for every malformed file
        raise ValueError(f"{f.name} is not a readable safetensors file (truncated or corrupt?): {e}") from None


def read_tokenizer(folder: Path, hf: dict, vocab_size: int):
    """``tokenizer.json`` with ``eos_token_id`` set (``eos_token``); refused when unreadable or when it
    has more tokens than the model's ``vocab_size``."""
    # Refused by size before parsing: a 2-million-word tokenizer.json took 8 s and 556 MB to parse only to be
    # refused for its vocabulary. Real ones use 27–71 bytes per token (GPT-2 1.4 MB for 50,257 tokens,
    # Llama 3 9.1 MB for 128,256); this bound is several times that.
    size, bound = (folder / "tokenizer.json").stat().st_size, MIB + TOKENIZER_BYTES_PER_TOKEN * vocab_size
    if size > bound:
        raise ValueError(
            f"tokenizer.json in {folder.name} is {size / MIB:,.1f} MiB, more than a tokenizer of {vocab_size:,} "
            f"tokens needs (at most {bound / MIB:,.1f} MiB)"
        )
    try:
        tok = load_tokenizer(folder / "tokenizer.json")
    except Exception as e:  # tokenizers raises a plain Exception for a malformed file
        raise ValueError(f"tokenizer.json in {folder.name} is not a readable tokenizer: {e}") from None
    if tok.get_vocab_size(with_added_tokens=True) > vocab_size:
        raise ValueError(
            f"tokenizer.json in {folder.name} has {tok.get_vocab_size(with_added_tokens=True)} tokens but the "
            f"model only {vocab_size}"
        )
    tok.eos_token_id = eos_token(folder, hf, vocab_size)
    return tok


def eos_token(folder: Path, hf: dict, vocab_size: int) -> int | None:
    """The end token: config.json's ``eos_token_id``, else generation_config.json's (the first
    of a list); None if neither names one inside the vocabulary."""
    candidates = [hf.get("eos_token_id")]
    gen = folder / "generation_config.json"
    if gen.is_file():
        try:
            candidates.append(json.loads(gen.read_text(encoding="utf-8")).get("eos_token_id"))
        except (ValueError, AttributeError, RecursionError):
            pass  # an unreadable generation config only loses the end token, not the model
    for c in candidates:
        c = c[0] if isinstance(c, list) and c else c
        if isinstance(c, int) and not isinstance(c, bool) and 0 <= c < vocab_size:
            return c
    return None


def few(names: list[str], n: int = 4) -> str:
    """The first ``n`` names, and how many there are in all when more: for a message."""
    return ", ".join(names[:n]) + (f" … ({len(names)} in all)" if len(names) > n else "")
