import json

import pytest

from core.cost import kv_cache_bytes
from core.shapes import PRESETS, parse_hf_config, parse_model_card


def _kv_per_token(s):
    return kv_cache_bytes(s.n_layer, s.n_kv_head, s.head_dim, 1, s.bytes_per_value)["total"]


def test_preset_kinds():
    """The open-model presets include at least one MHA, one GQA and one MQA shape."""
    kinds = {s.attention_kind for s in PRESETS.values()}
    assert {"MHA", "GQA", "MQA"} <= kinds


def test_well_known_per_token_figures():
    """Llama-2-7B fp16: 2·32·32·128·2 = 512 KiB/token; Llama-3-8B (8 KV heads): 128 KiB; Falcon-7B MQA: 8 KiB."""
    assert _kv_per_token(PRESETS["Llama-2-7B (MHA)"]) == 512 * 1024
    assert _kv_per_token(PRESETS["Llama-3-8B (GQA)"]) == 128 * 1024
    assert _kv_per_token(PRESETS["Falcon-7B (MQA)"]) == 2 * 32 * 1 * 64 * 2


def test_parse_hf_config_defaults():
    """num_key_value_heads defaults to the attention heads; head_dim to hidden/heads; dtype read."""
    s = parse_hf_config(
        json.dumps({"num_hidden_layers": 24, "num_attention_heads": 16, "hidden_size": 2048, "torch_dtype": "bfloat16"})
    )
    assert (s.n_layer, s.n_kv_head, s.head_dim, s.bytes_per_value) == (24, 16, 128, 2)


def test_parse_hf_config_gqa_and_aliases():
    """GQA's num_key_value_heads and explicit head_dim win; GPT-2 style names and multi_query work."""
    s = parse_hf_config(
        b'{"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,'
        b' "hidden_size": 4096, "head_dim": 128, "dtype": "float32"}'
    )
    assert (s.n_kv_head, s.head_dim, s.bytes_per_value) == (8, 128, 4)
    g = parse_hf_config('{"n_layer": 12, "n_head": 12, "n_embd": 768, "torch_dtype": "float32"}')
    assert (g.n_layer, g.n_kv_head, g.head_dim) == (12, 12, 64)
    f = parse_hf_config(
        '{"num_hidden_layers": 32, "num_attention_heads": 71, "hidden_size": 4544, "multi_query": true}'
    )
    assert f.n_kv_head == 1 and "assumed float16" in f.note


@pytest.mark.parametrize(
    "text,match",
    [
        ("", "empty"),
        ("{not json", "not valid JSON"),
        ("[1, 2]", "object"),
        ('{"num_attention_heads": 8, "hidden_size": 512}', "num_hidden_layers"),
        ('{"num_hidden_layers": 2, "hidden_size": 512}', "num_attention_heads"),
        ('{"num_hidden_layers": 2, "num_attention_heads": 8}', "hidden_size"),
        ('{"num_hidden_layers": -2, "num_attention_heads": 8, "hidden_size": 512}', "whole number"),
        ('{"num_hidden_layers": 2.5, "num_attention_heads": 8, "hidden_size": 512}', "whole number"),
        ('{"num_hidden_layers": 2, "num_attention_heads": 8, "hidden_size": 512, "torch_dtype": "float7"}', "float7"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\xff", "not UTF-8"),
        (b"{" + b" " * 1_000_001 + b"}", "limit 1 MB"),
    ],
)
def test_parse_hf_config_errors_name_the_problem(text, match):
    """Malformed, incomplete, binary or oversized files get a message naming the problem."""
    with pytest.raises(ValueError, match=match):
        parse_hf_config(text)


def test_model_card_7b_q4_8k():
    """Ch. 19: "7B, Q4, 8K" = 7,000,000,000 parameters, 4 bits, 8,192 tokens."""
    card = parse_model_card("7B, Q4, 8K")
    assert (card.n_params, card.bits_per_weight, card.context_tokens) == (7 * 10**9, 4, 8192)
    assert parse_model_card("1.5b q8 32k").n_params == 1_500_000_000


@pytest.mark.parametrize("bad", ["", "seven billion", "7B, Q0, 8K", "7B, Q4, 0.5"])
def test_model_card_errors(bad):
    """Unreadable cards get the expected form in the message."""
    with pytest.raises(ValueError):
        parse_model_card(bad)


def test_parse_lengths():
    """Comma or space separated whole numbers; huge values stay exact; bad ones are named."""
    from core.shapes import parse_lengths

    assert parse_lengths("4096, 4096") == [4096, 4096]
    assert parse_lengths("8 10") == [8, 10]
    assert parse_lengths("1000000000000") == [10**12]
    for bad, match in [
        ("", "at least one"),
        ("1.5", "whole number"),
        ("-3", "whole number"),
        ("0", "at least 1"),
        ("nan", "whole number"),
        ("1," * 10_001, "more than"),
    ]:
        with pytest.raises(ValueError, match=match):
            parse_lengths(bad)


def test_parse_hf_config_reads_text_config():
    """A multimodal config (LLaVA) keeps the language model under text_config: its terms are read there,
    matching transformers' own get_text_config()."""
    from transformers import LlamaConfig, LlavaConfig

    text = LlamaConfig(num_hidden_layers=6, num_attention_heads=8, num_key_value_heads=2, hidden_size=512)
    cfg = LlavaConfig(text_config=text.to_dict())
    raw = json.loads(cfg.to_json_string(use_diff=False))
    raw["torch_dtype"] = "bfloat16"
    s = parse_hf_config(json.dumps(raw))
    ref = cfg.get_text_config()
    assert (s.n_layer, s.n_head, s.n_kv_head, s.head_dim) == (
        ref.num_hidden_layers,
        ref.num_attention_heads,
        ref.num_key_value_heads,
        ref.hidden_size // ref.num_attention_heads,
    )
    assert s.bytes_per_value == 2 and "text_config" in s.name


def test_parse_budgets_speaks_of_tokens():
    """Budgets "12, 20" parse; 0, a word and more than the window are refused in tokens."""
    from core.shapes import parse_budgets

    assert parse_budgets("12, 20 6", 256) == [12, 20, 6]
    for bad, match in (
        ("0", "at least 1 token"),
        ("x", "whole number of tokens"),
        ("300", "context window"),
        ("", "e.g."),
    ):
        with pytest.raises(ValueError, match=match):
            parse_budgets(bad, 256)
