"""Real checkpoint folders (tiny, random, written here by transformers) loaded into our one GPT.

The independent reference is transformers' own model class on the same folder. No network:
every checkpoint and tokenizer is made in a temporary folder.
"""

import copy
import json
import re
import shutil
from pathlib import Path

import pytest
import torch
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

from core.checkpoints.app_options import AppArgs, parse_app_args, script_args
from core.checkpoints.load import load
from core.checkpoints.sources import find_checkpoints, hub_dir
from core.cost.counts import params
from core.decode.generate import decode_one_token, prefill
from core.decode.kv_cache import KVCache
from core.model.rope import rope_inv_freq
from core.model.tokenizer import encode, end_token_id, token_labels, token_text

transformers = pytest.importorskip("transformers")

TEXT = ["the cat sat on the mat.", "the dog sat on the log.", "a traveller from Paris paid 750 yuan."] * 20
VOCAB = 384
SMALL = dict(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4)
LLAMA3 = {"rope_type": "llama3", "rope_theta": 10000.0, "factor": 4.0, "low_freq_factor": 1.0,
          "high_freq_factor": 4.0, "original_max_position_embeddings": 8}  # fmt: skip
ARCHS = {
    "llama": lambda: transformers.LlamaConfig(**SMALL, num_key_value_heads=2, max_position_embeddings=64),
    "llama3": lambda: transformers.LlamaConfig(  # an explicit head_dim: n_head · head_dim = 64 ≠ d_model 32
        **SMALL,
        num_key_value_heads=2,
        max_position_embeddings=64,
        rope_parameters=LLAMA3,
        tie_word_embeddings=True,
        head_dim=16,
    ),
    "mistral": lambda: transformers.MistralConfig(
        **SMALL, num_key_value_heads=1, max_position_embeddings=64, sliding_window=4
    ),
    "qwen2": lambda: transformers.Qwen2Config(
        **SMALL, num_key_value_heads=2, max_position_embeddings=64, tie_word_embeddings=True
    ),
    # Qwen3: per-head q/k RMSNorm before RoPE; head_dim 16 apart from hidden / heads = 8 (Qwen3-0.6B: 128 vs 64)
    "qwen3": lambda: transformers.Qwen3Config(
        **SMALL, num_key_value_heads=2, max_position_embeddings=64, head_dim=16, tie_word_embeddings=True
    ),
    "gpt2": lambda: transformers.GPT2Config(vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=4),
}
EOS = 2


def byte_level_tokenizer() -> Tokenizer:
    """GPT-2 / Llama-3 style: byte-level BPE."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<|endoftext|>", "<|pad|>", "<|eot|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )  # fmt: skip
    tok.train_from_iterator(TEXT, trainer=trainer)
    return tok


def metaspace_tokenizer(decoder: str = "sequence") -> Tokenizer:
    """SentencePiece style (Llama-2, TinyLlama): "▁word" pieces, <0xNN> byte fallback, BOS added."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    if decoder == "sequence":  # what transformers' converter writes for Llama-2
        tok.decoder = decoders.Sequence(
            [decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(), decoders.Strip(" ", 1, 0)]
        )
    else:
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
    bytes_ = [f"<0x{i:02X}>" for i in range(256)]
    trainer = trainers.BpeTrainer(vocab_size=330, special_tokens=["<unk>", "<s>", "</s>", *bytes_], show_progress=False)
    tok.train_from_iterator(TEXT, trainer=trainer)
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    return tok


@torch.no_grad()
def write_checkpoint(folder, arch: str, seed: int = 0, tokenizer=None, **save_kwargs):
    """A random checkpoint of ``arch`` in ``folder``: weights scaled so logits differ clearly."""
    torch.manual_seed(seed)
    cfg = ARCHS[arch]()
    cfg.eos_token_id, cfg.bos_token_id = EOS, 1
    model = transformers.AutoModelForCausalLM.from_config(cfg)
    for name, p in model.named_parameters():
        if p.dim() >= 2:
            p.normal_(0, 0.3)
        elif "bias" in name:
            p.normal_(0, 0.1)
        else:
            p.copy_(1 + 0.1 * torch.randn_like(p))  # norm weights
    model.save_pretrained(folder, safe_serialization=True, **save_kwargs)
    (tokenizer or byte_level_tokenizer()).save(str(folder / "tokenizer.json"))
    return folder


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("ckpt")
    return {a: write_checkpoint(root / a, a, tokenizer=metaspace_tokenizer() if a == "llama" else None) for a in ARCHS}


def f64_reference(hf, monkeypatch):
    """transformers' Llama-family modules compute RMSNorm and RoPE in float32 even in a float64
    model; for the float64 comparison those two run in float64 (HF's formula, without the
    float32 cast; RoPE from ``rope_inv_freq``, itself checked against HF's in float32 below)."""
    from transformers.models.llama import modeling_llama
    from transformers.models.mistral import modeling_mistral
    from transformers.models.qwen2 import modeling_qwen2
    from transformers.models.qwen3 import modeling_qwen3

    def rms(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon))

    norms = (modeling_llama.LlamaRMSNorm, modeling_mistral.MistralRMSNorm, modeling_qwen2.Qwen2RMSNorm)
    for cls in (*norms, modeling_qwen3.Qwen3RMSNorm):
        monkeypatch.setattr(cls, "forward", rms)
    if hasattr(getattr(hf, "model", None), "rotary_emb"):
        inv = rope_inv_freq(hf.our_cfg)

        def rope(x, position_ids):
            freqs = position_ids[..., None].double() * inv  # (B, T, hd/2)
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(x.dtype), emb.sin().to(x.dtype)

        hf.model.rotary_emb.forward = rope


PROMPT = "the cat sat on the mat. the dog"


@pytest.mark.parametrize("arch", list(ARCHS))
@pytest.mark.parametrize("dtype,atol", [(torch.float32, 1e-4), (torch.float64, 1e-10)])
@torch.no_grad()
def test_prefill_and_ten_cached_steps_match_transformers(checkpoints, arch, dtype, atol, monkeypatch):
    """Every prefill position and 10 cached steps equal transformers' model on the same folder,
    and our cache holds M = 2·B·L·T·H_kv·d·b bytes (as does transformers' where it keeps all)."""
    model, tok, card = load(checkpoints[arch], dtype)
    hf = transformers.AutoModelForCausalLM.from_pretrained(checkpoints[arch], dtype=dtype).eval()
    if dtype == torch.float64:
        hf.our_cfg = model.cfg
        f64_reference(hf, monkeypatch)
    ids = encode(tok, PROMPT)
    out = hf(torch.tensor([ids]), use_cache=True)
    full, _ = model(torch.tensor([ids]))
    assert (full - out.logits).abs().max() < atol
    cache = KVCache(model.cfg, dtype=dtype)
    step, past = prefill(model, ids, cache), out.past_key_values
    for _ in range(10):
        token = int(step.logits.argmax())
        out = hf(torch.tensor([[token]]), past_key_values=past, use_cache=True)
        past = out.past_key_values
        step = decode_one_token(model, token, cache)
        assert (step.logits - out.logits[0, -1]).abs().max() < atol
    T = len(ids) + 10
    M = 2 * 1 * card.n_layer * T * card.n_kv_head * card.head_dim * dtype.itemsize
    assert cache.pos == T and cache.nbytes == M
    if arch != "mistral":  # transformers' sliding-window cache drops keys older than the window
        assert sum(t.numel() * t.element_size() for layer in past.layers for t in (layer.keys, layer.values)) == M


@pytest.mark.parametrize("arch", ["llama3", "mistral"])
@torch.no_grad()
def test_llama3_scaling_and_sliding_window_change_the_logits(checkpoints, arch):
    """Negative control for the two parity tests above: without the llama3 RoPE scaling, or
    without Mistral's window of 4 (the sequence is longer), the logits differ by > 1e-3."""
    model, tok, _ = load(checkpoints[arch])
    plain = copy.deepcopy(model)
    field = "rope_scaling" if arch == "llama3" else "sliding_window"
    object.__setattr__(plain.cfg, field, None)  # the same weights without the feature
    plain._init_rope(torch.float32)
    ids = torch.tensor([encode(tok, PROMPT)])
    assert ids.shape[1] > 8
    assert (model(ids)[0] - plain(ids)[0]).abs().max() > 1e-3


def test_our_rope_frequencies_equal_transformers(checkpoints):
    """rope_inv_freq (plain and llama3) equals transformers' own inv_freq (float32 precision)."""
    for arch in ("llama", "llama3", "qwen2"):
        model, _, _ = load(checkpoints[arch])
        hf = transformers.AutoModelForCausalLM.from_pretrained(checkpoints[arch])
        assert torch.allclose(rope_inv_freq(model.cfg).float(), hf.model.rotary_emb.inv_freq, rtol=1e-6, atol=0)


@torch.no_grad()
def test_gpt2_step_uses_its_absolute_position(checkpoints):
    """GPT-2's learned positions: the step at cache length n matches transformers (position n);
    forcing position 0 instead changes the logits by > 1e-3."""
    model, tok, _ = load(checkpoints["gpt2"])
    hf = transformers.AutoModelForCausalLM.from_pretrained(checkpoints["gpt2"]).eval()
    ids = encode(tok, PROMPT)
    n = len(ids)
    cache = KVCache(model.cfg)
    token = int(prefill(model, ids, cache).logits.argmax())
    forced = copy.deepcopy(cache)
    right = decode_one_token(model, token, cache).logits
    wrong, _ = model(torch.tensor([[token]]), forced, input_pos=torch.zeros(1, 1, dtype=torch.long))
    reference = hf(torch.tensor([ids + [token]])).logits[0, n]  # position n, recomputed in full
    assert (right - reference).abs().max() < 1e-4
    assert (wrong[0, -1] - reference).abs().max() > 1e-3


@torch.no_grad()
def test_sharded_checkpoint_loads_like_a_single_file(checkpoints, tmp_path):
    """Shards listed in model.safetensors.index.json give the same model as one file."""
    folder = write_checkpoint(tmp_path / "sharded", "qwen2", max_shard_size="20KB")
    assert (folder / "model.safetensors.index.json").is_file() and len(list(folder.glob("*.safetensors"))) > 2
    sharded, _, card = load(folder)
    single, _, _ = load(checkpoints["qwen2"])
    for (n, a), (_, b) in zip(sharded.state_dict().items(), single.state_dict().items(), strict=True):
        assert torch.equal(a, b), n
    assert card.file_bytes == sum(f.stat().st_size for f in folder.glob("*.safetensors"))


def test_card_numbers_come_from_the_checkpoint(checkpoints):
    """The card's sizes equal transformers' config and parameter count (a tied head counted
    once), bytes = params · 4, the formula count too, and load time and RSS are measured."""
    for arch in ARCHS:
        fractions = []
        model, _, card = load(checkpoints[arch], progress=fractions.append)
        hf = transformers.AutoModelForCausalLM.from_pretrained(checkpoints[arch])
        c = hf.config
        n = hf.num_parameters()
        if arch == "gpt2":
            assert (c.n_layer, c.n_head, c.n_embd) == (card.n_layer, card.n_head, card.d_model)
            assert c.n_positions == card.context_window
        else:
            head_dim = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads  # Qwen2 has none
            assert (c.num_hidden_layers, c.num_attention_heads, c.num_key_value_heads, c.hidden_size, head_dim) == (
                card.n_layer, card.n_head, card.n_kv_head, card.d_model, card.head_dim)  # fmt: skip
            assert card.context_window == c.max_position_embeddings
        assert card.n_params == n == model.n_params() == params(model.cfg)["total"]
        assert card.weight_bytes == 4 * n and card.vocab_size == VOCAB and card.architecture == c.architectures[0]
        assert card.load_ms > 0 and card.rss_bytes > 0 and card.eos_token_id == EOS
        assert fractions[-1] == 1.0 and fractions == sorted(fractions)


def test_tokenizer_helpers_read_both_tokenizer_styles(checkpoints):
    """token_text keeps a word's leading space for byte-level and metaspace tokenizers; labels
    carry no marker characters; end_token_id is the checkpoint's eos_token_id."""
    for arch in ("gpt2", "llama"):
        _, tok, _ = load(checkpoints[arch])
        ids = encode(tok, "the cat sat")
        if arch == "llama":  # the metaspace tokenizer's post-processor puts BOS first, as Llama-2's does
            assert token_text(tok, ids[0]) == "<s>"
            ids = ids[1:]
        texts = [token_text(tok, i) for i in ids]
        assert "".join(texts).strip() == "the cat sat" and " cat" in texts and " sat" in texts
        assert not any(m in "".join(token_labels(tok, ids)) for m in "Ġ▁")
        assert end_token_id(tok) == EOS
    assert token_text(tok, tok.token_to_id("<0x0A>")) == "⏎"  # a byte-fallback newline
    assert token_text(tok, tok.token_to_id("<0xE2>")) == "<0xE2>"  # part of a character
    tok = metaspace_tokenizer("metaspace")  # the newer converter's decoder
    assert token_text(tok, tok.token_to_id("▁cat")) == " cat"


# -- refusals -----------------------------------------------------------------------------------
def _copy(src, dst):
    shutil.copytree(src, dst)
    return dst


def _edit_config(folder, **changes):
    cfg = json.loads((folder / "config.json").read_text())
    cfg.update(changes)
    (folder / "config.json").write_text(json.dumps(cfg))


def _bad_folders(ck, tmp):
    """(folder or path, expected message) for each refusal."""
    out = []
    f = tmp / "file.txt"
    f.write_text("x")
    out.append((f, "is not a folder"))
    pk = _copy(ck["llama"], tmp / "pickle")
    (pk / "model.safetensors").unlink()
    (pk / "pytorch_model.bin").write_bytes(b"\x80\x04not really a pickle")
    out.append((pk, re.escape("only pickle weights (pytorch_model.bin)")))
    pt = tmp / "pt"
    pt.mkdir()
    (pt / "weights.pt").write_bytes(b"\x80\x04")
    out.append((pt, re.escape("only pickle weights (weights.pt)")))
    rc = _copy(ck["llama"], tmp / "remote")
    _edit_config(rc, auto_map={"AutoModelForCausalLM": "modeling_x.XForCausalLM"})
    supported = "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, GPT2LMHeadModel"
    out.append((rc, f"trust_remote_code.*{supported}"))
    un = _copy(ck["llama"], tmp / "unknown")
    _edit_config(un, architectures=["MambaForCausalLM"])
    out.append((un, "MambaForCausalLM.*not supported; supported: LlamaForCausalLM, MistralForCausalLM"))
    big = _copy(ck["llama"], tmp / "big")  # Llama-3-8B's published shape: 8,030,261,248 parameters
    _edit_config(big, vocab_size=128256, hidden_size=4096, intermediate_size=14336, num_hidden_layers=32,
                 num_attention_heads=32, num_key_value_heads=8, head_dim=128)  # fmt: skip
    out.append((big, r"8,030,261,248 parameters take 29\.92 GiB as float32, over the budget of 4 GiB"))
    sh = write_checkpoint(tmp / "shards", "llama", max_shard_size="20KB")
    sorted(sh.glob("model-*.safetensors"))[1].unlink()
    out.append((sh, "missing shard"))
    sm = _copy(ck["llama"], tmp / "shape")
    _edit_config(sm, intermediate_size=48)
    out.append((sm, r"shape mismatch for model\.layers\.0\.mlp\.\w+_proj\.weight: the weights give \[64, 32\]"))
    nt = _copy(ck["llama"], tmp / "notok")
    (nt / "tokenizer.json").unlink()
    out.append((nt, "no tokenizer.json"))
    tr = _copy(ck["llama"], tmp / "truncated")
    data = (tr / "model.safetensors").read_bytes()
    (tr / "model.safetensors").write_bytes(data[: len(data) - 1000])
    out.append((tr, "not a readable safetensors file"))
    co = _copy(ck["llama"], tmp / "corrupt")
    (co / "model.safetensors").write_bytes(b"\xff" * 16 + data[16:])
    out.append((co, "not a readable safetensors file"))
    lo = _copy(ck["gpt2"], tmp / "extra")
    _edit_config(lo, n_layer=1)
    out.append((lo, r"tensors this GPT2LMHeadModel does not have: transformer\.h\.1\."))
    # A helper's hostile folders: a config nested 100,000 deep (a RecursionError before), a shard index
    # naming numbers (a TypeError), an empty shard name ("missing shard(s)  of 1").
    deep = _copy(ck["llama"], tmp / "deep")
    (deep / "config.json").write_text("[" * 100_000 + "]" * 100_000)
    out.append((deep, "config.json in deep is nested too deeply"))
    twice = _copy(ck["llama"], tmp / "twice")  # the same tensors in two files: the last read won, silently
    shutil.copy(twice / "model.safetensors", twice / "model-copy.safetensors")
    out.append((twice, "twice: tensors stored in more than one weights file: "))
    digits = _copy(ck["llama"], tmp / "digits")  # Python's int limit named sys.set_int_max_str_digits()
    (digits / "config.json").write_text(
        (digits / "config.json").read_text().replace("{", '{"x": ' + "9" * 5000 + ",", 1)
    )
    out.append((digits, "holds a number over 4,300 digits long"))
    for name, weight_map in (("numbers", {"lm_head.weight": 3}), ("blank", {"lm_head.weight": ""})):
        ix = _copy(ck["llama"], tmp / name)
        (ix / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
        out.append((ix, "not a valid shard index: a shard's name is not a file name"))
    # The same helper's wrong-typed fields got Python's words, naming no field ("could not convert string
    # to float: 'abc'", "dictionary update sequence element #0 …"), or were taken ("no" as true).
    for arch, field, value, said in (
        ("llama", "rms_norm_eps", "abc", "config.json's rms_norm_eps must be a number, got 'abc'"),
        ("llama", "rope_parameters", "yarn", "config.json's rope_parameters must be an object of RoPE settings"),
        ("gpt2", "layer_norm_epsilon", [1], r"config.json's layer_norm_epsilon must be a number, got \[1\]"),
        ("gpt2", "tie_word_embeddings", "no", "config.json's tie_word_embeddings must be true or false, got 'no'"),
        # A hostile-input probe: 10⁴⁰⁰ layers overflowed turning the size into GiB (OverflowError on every page),
        # Infinity passed "> 0", and a window given as text compared an int with a str.
        ("llama", "num_hidden_layers", 10**400, "n_layer must be at most 2⁴⁰ .* a number 401 digits long"),
        ("llama", "rms_norm_eps", float("inf"), "norm_eps and rope_theta must be positive finite numbers"),
        ("llama", "max_position_embeddings", "256", "max_position_embeddings\\) must be a whole number, got '256'"),
    ):
        typed = _copy(ck[arch], tmp / f"typed-{field}-{len(out)}")
        _edit_config(typed, **{field: value})
        out.append((typed, said))
    return out


def test_the_weight_budget_is_checked_before_the_model_is_built(checkpoints, tmp_path, monkeypatch):
    """A config.json claiming 10⁶ layers is refused from its numbers alone: building even a shapes-only
    model of them took minutes and gigabytes (a helper's folder: 30,000 layers, 85 s and 1.5 GB)."""
    huge = _copy(checkpoints["llama"], tmp_path / "huge")
    _edit_config(huge, num_hidden_layers=10**6)
    monkeypatch.setattr(
        "core.checkpoints.load.GPT", lambda cfg: pytest.fail("the model was built before the budget check")
    )
    with pytest.raises(ValueError, match=r"over the budget of 4 GiB"):
        load(huge)


def test_an_oversized_tokenizer_is_refused_before_it_is_parsed(checkpoints, tmp_path, monkeypatch):
    """A tokenizer.json far larger than its model's vocabulary needs is refused from its size alone (a
    helper's 2-million-word file took 8 s and 556 MB to parse before its vocabulary was checked)."""
    from core.checkpoints import files

    big = _copy(checkpoints["llama"], tmp_path / "bigtok")
    vocab_size = json.loads((big / "config.json").read_text())["vocab_size"]
    words = {f"w{i}": i for i in range(200_000)}
    (big / "tokenizer.json").write_text(json.dumps({"model": {"type": "WordLevel", "vocab": words}}))
    size = (big / "tokenizer.json").stat().st_size
    assert size > 2**20 + 512 * vocab_size  # 3.4 MiB for a vocabulary of a few hundred tokens
    monkeypatch.setattr(files, "load_tokenizer", lambda path: pytest.fail("the oversized file was parsed"))
    with pytest.raises(ValueError, match=rf"is {size / 2**20:.1f} MiB, more than a tokenizer of {vocab_size:,} tokens"):
        load(big)


def test_a_deep_generation_config_only_loses_the_end_token(checkpoints, tmp_path):
    """generation_config.json is optional: nested too deeply to read, the model still loads."""
    g = _copy(checkpoints["llama"], tmp_path / "gen")
    _edit_config(g, eos_token_id=None)
    (g / "generation_config.json").write_text("[" * 100_000 + "]" * 100_000)
    model, tok, card = load(g)
    assert card.eos_token_id is None and model.cfg.n_layer == 2


def test_each_bad_folder_is_refused_with_its_message(checkpoints, tmp_path, monkeypatch):
    """Every bad folder gives a ValueError naming its problem; pickle is never unpickled."""

    def no_unpickling(*a, **k):
        raise AssertionError("torch.load was called")

    monkeypatch.setattr(torch, "load", no_unpickling)
    for folder, message in _bad_folders(checkpoints, tmp_path):
        with pytest.raises(ValueError, match=message):
            load(folder)


# -- finding checkpoints, the command line ------------------------------------------------------
def test_hub_cache_lists_supported_snapshots_only(checkpoints, tmp_path, monkeypatch):
    """HF_HUB_CACHE beats HF_HOME/hub; snapshots of supported architectures are listed as
    org/name, remote-code and incomplete ones are not, and --models-dir folders are added."""
    hub = tmp_path / "hub"
    snap = hub / "models--TinyOrg--tiny-llama" / "snapshots" / "0123abc"
    _copy(checkpoints["llama"], snap)
    remote = _copy(checkpoints["qwen2"], hub / "models--x--remote" / "snapshots" / "r1")
    _edit_config(remote, auto_map={"AutoModelForCausalLM": "m.X"})
    (hub / "models--x--empty" / "snapshots" / "r2").mkdir(parents=True)
    mine = tmp_path / "mine"
    _copy(checkpoints["gpt2"], mine / "my-gpt2")
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    assert hub_dir() == hub
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "elsewhere"))
    assert find_checkpoints() == []
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    found = find_checkpoints(models_dir=mine)
    assert [(c.name, c.architecture) for c in found] == [
        ("my-gpt2", "GPT2LMHeadModel"), ("TinyOrg/tiny-llama", "LlamaForCausalLM")]  # fmt: skip
    assert found[1].path == snap
    assert load(found[1].path)[2].name == "TinyOrg/tiny-llama"
    # One odd folder (config.json nested 100,000 deep: a RecursionError took every page down) is skipped.
    deep = _copy(checkpoints["llama"], mine / "deep")
    (deep / "config.json").write_text("[" * 100_000 + "]" * 100_000)
    assert [c.name for c in find_checkpoints(models_dir=mine)] == ["my-gpt2", "TinyOrg/tiny-llama"]
    # An interrupted download: the snapshot's model.safetensors links to a blob that is not there. Its stat
    # raised FileNotFoundError on every page for every session; the snapshot is left out.
    broken = _copy(checkpoints["llama"], hub / "models--x--broken" / "snapshots" / "r3")
    (broken / "model.safetensors").unlink()
    (broken / "model.safetensors").symlink_to("../../blobs/deadbeef")
    assert [c.name for c in find_checkpoints(models_dir=mine)] == ["my-gpt2", "TinyOrg/tiny-llama"]


def test_models_folder_links_and_huge_configs_follow_one_rule(checkpoints, tmp_path):
    """A checkpoint folder linked from outside the models folder is left out, as a .gguf link leading out is
    (core.checkpoints.gguf_files); a link to a folder inside it is listed. A config.json over 1 MB (a 2 GB one took
    the listing 11 s and 4.3 GB) is refused by its size before a byte is read (issue 58)."""
    from core.checkpoints.files import read_config

    mine, outside = tmp_path / "models", tmp_path / "elsewhere"
    inner = _copy(checkpoints["llama"], mine / "inner")
    theirs = _copy(checkpoints["llama"], outside / "theirs")
    (mine / "escape").symlink_to(theirs, target_is_directory=True)
    (mine / "alias").symlink_to(inner, target_is_directory=True)
    empty_hub = tmp_path / "hub"
    assert [c.path.name for c in find_checkpoints(models_dir=mine, hub=empty_hub)] == ["alias", "inner"]
    with open(inner / "config.json", "r+b") as f:  # a sparse 2 GB file: nothing is written but its size
        f.seek(2 * 10**9)
        f.write(b" ")
    assert [c.path.name for c in find_checkpoints(models_dir=mine, hub=empty_hub)] == []
    with pytest.raises(ValueError, match="2,000,000,001 bytes"):
        read_config(inner)


def test_command_line_options(tmp_path):
    """--model, --max-model-gib and --models-dir parse; bad options raise ValueError."""
    assert parse_app_args([]) == AppArgs()
    args = parse_app_args(["--model", str(tmp_path), "--max-model-gib", "2.5", "--models-dir", "~/models"])
    assert args.model == tmp_path and args.max_model_gib == 2.5
    assert args.models_dir == Path.home() / "models"  # "~" expanded
    for bad in (["--bogus"], ["--model"], ["--max-model-gib", "0"], ["--max-model-gib", "nan"]):
        with pytest.raises(ValueError, match="command line"):
            parse_app_args(bad)


@torch.no_grad()
def test_gpt2_in_its_original_layout_loads_the_same(checkpoints, tmp_path):
    """GPT-2 as first converted (no "transformer." prefix, causal-mask buffers saved, an output
    head stored beside the tied embedding) loads to the same weights."""
    from safetensors.torch import load_file, save_file

    folder = _copy(checkpoints["gpt2"], tmp_path / "gpt2-original")
    state = {k.removeprefix("transformer."): v for k, v in load_file(folder / "model.safetensors").items()}
    state["h.0.attn.bias"] = torch.tril(torch.ones(1, 1, 64, 64))
    state["lm_head.weight"] = state["wte.weight"].clone()
    save_file(state, folder / "model.safetensors")
    original, _, _ = load(folder)
    converted, _, _ = load(checkpoints["gpt2"])
    for (n, a), (_, b) in zip(original.state_dict().items(), converted.state_dict().items(), strict=True):
        assert torch.equal(a, b), n


def test_script_args_are_what_follows_app_py():
    """`streamlit run main.py -- --models-dir D` leaves ["app.py", "--models-dir", "D"]; pytest's argv is not ours."""

    assert script_args(["/srv/app.py", "--models-dir", "D"]) == ["--models-dir", "D"]
    assert script_args(["/usr/bin/pytest", "-q", "tests"]) == [] and script_args([]) == []


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
@torch.no_grad()
def test_a_tied_config_with_a_stored_head_keeps_the_stored_head(tmp_path, arch):
    """A config saying tie_word_embeddings: true over a file holding its own lm_head.weight (different from the
    embedding): transformers 5.x keeps the stored head, and so does the loader; logits equal transformers'."""
    folder = write_checkpoint(tmp_path / arch, arch)
    if arch == "gpt2":  # GPT-2 is saved tied: give the file its own, different head
        from safetensors.torch import load_file, save_file

        state = load_file(folder / "model.safetensors")
        state["lm_head.weight"] = torch.randn_like(state["transformer.wte.weight"]) * 0.3
        save_file(state, folder / "model.safetensors", metadata={"format": "pt"})
    _edit_config(folder, tie_word_embeddings=True)
    model, tok, _ = load(folder)
    hf = transformers.AutoModelForCausalLM.from_pretrained(folder).eval()
    assert not torch.equal(hf.lm_head.weight, hf.get_input_embeddings().weight)
    ids = torch.tensor([encode(tok, PROMPT)])
    full, _ = model(ids)
    assert (full - hf(ids).logits).abs().max() < 1e-4


@torch.no_grad()
def test_qwen3_without_its_qk_norms_gives_other_logits(checkpoints):
    """Negative control for Qwen3's parity: the loaded model has a q_norm and k_norm of head_dim 16 per layer (as
    transformers' Qwen3Attention); the same weights with those norms skipped differ from it by > 1e-3."""
    model, tok, _ = load(checkpoints["qwen3"])
    hf = transformers.AutoModelForCausalLM.from_pretrained(checkpoints["qwen3"])
    for ours, theirs in zip(model.layers, hf.model.layers, strict=True):
        for name in ("q_norm", "k_norm"):
            assert torch.equal(getattr(ours.self_attn, name).weight, getattr(theirs.self_attn, name).weight)
            assert getattr(ours.self_attn, name).weight.shape == (16,)
    plain = copy.deepcopy(model)
    for block in plain.layers:
        block.self_attn.q_norm = block.self_attn.k_norm = None
    ids = torch.tensor([encode(tok, PROMPT)])
    assert (model(ids)[0] - plain(ids)[0]).abs().max() > 1e-3
