import json

import pytest

from core.cost.counts import kv_cache_bytes
from core.cost.kv_shape import PRESETS
from core.cost.request_sizes import parse_lengths
from core.cost.shapes import parse_hf_config, parse_model_card


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
    from core.cost.request_sizes import parse_lengths

    assert parse_lengths("4096, 4096") == [4096, 4096]
    assert parse_lengths("8 10") == [8, 10]
    assert parse_lengths("1000000000000") == [10**12]  # the most it takes: exact
    assert parse_lengths("٤٠٩٦, ４０９６") == [4096, 4096]  # other scripts' digits, as the answer boxes read them
    for bad, match in [
        ("", "at least one"),
        ("1.5", "whole number"),
        ("-3", "is negative"),
        ("−3", "is negative"),
        ("³", "whole number of positions"),  # a superscript is a digit but not a decimal one
        ("1000000000001", "up to 1,000,000,000,000 per request"),
        ("9" * 30, "more positions than any context window"),  # 30 digits garbled the page's boxes and axis
        ("9" * 5000, "more positions than any context window"),
        ("0", "at least 1"),
        ("nan", "whole number"),
        ("1, " * 10_001, "more than"),
    ]:
        with pytest.raises(ValueError, match=match):
            parse_lengths(bad)


@pytest.mark.parametrize(
    "text,bpw,kind,typical",
    [
        ("7B, Q2_K, 8K", 2.625, "block", False),  # 84 B per 256 values
        ("7B, Q3_K, 8K", 3.4375, "block", False),  # 110 B per 256
        ("7B, Q4_K, 8K", 4.5, "block", False),  # 144 B per 256
        ("7B, Q5_K, 8K", 5.5, "block", False),  # 176 B per 256
        ("7B, Q6_K, 8K", 6.5625, "block", False),  # 210 B per 256
        ("7B, Q8_0, 8K", 8.5, "block", False),  # 34 B per 32
        ("7B, Q4_0, 8K", 4.5, "block", False),  # 18 B per 32
        ("7B, Q4_1, 8K", 5.0, "block", False),
        ("7B, Q5_0, 8K", 5.5, "block", False),
        ("7B, Q5_1, 8K", 6.0, "block", False),
        ("7B, IQ4_NL, 8K", 4.5, "block", False),  # 18 B per 32
        ("7B, IQ4_XS, 8K", 4.25, "block", False),  # 136 B per 256
        ("6.74B, Q4_K_M, 4K", 4.84, "mix", True),  # llama.cpp's quantize README, Llama 2 7B
        ("7B, Q4_K_S, 4K", 4.58, "mix", True),
        ("7B, Q5_K_M, 4K", 5.68, "mix", True),
        ("7B, Q3_K_L, 4K", 4.27, "mix", True),
        ("7B, F32, 4K", 32, "float", False),
        ("7B, FP16, 4K", 16, "float", False),
        ("7B, f16, 4K", 16, "float", False),
        ("7B, bf16, 4K", 16, "float", False),
        ("7B, INT8, 4K", 8, "integer", False),
        ("7B, int8, 4K", 8, "integer", False),
        ("7B, 4-bit, 4K", 4, "integer", False),
        ("7B, Q4, 8K", 4, "integer", False),
    ],
)
def test_model_card_real_names(text, bpw, kind, typical):
    """Real format names read to their bits per weight (block layouts exact; mixes typical and said to be mixes)."""
    card = parse_model_card(text)
    assert card.bits_per_weight == bpw and card.weight_format.kind == kind and card.weight_format.typical == typical
    if kind == "mix":
        assert "mix" in card.weight_format.note and "typical" in card.weight_format.note
    # only bare bit counts leave the scales out
    assert card.weight_format.counts_scales == (kind != "integer")


def test_q4_k_m_file_size_from_the_typical_figure():
    """“6.74B, Q4_K_M, 4K”: 6.74e9 · 4.84 / 8 ≈ 4.08 GB (a real file's size), not 3.79 GB at 4.5."""
    card = parse_model_card("6.74B, Q4_K_M, 4K")
    assert round(card.n_params * card.bits_per_weight / 8 / 1e9, 2) == 4.08


@pytest.mark.parametrize(
    "text,arch,n_layer,n_kv_head",
    [
        ("7B, Q4, 8K", "meta-llama/Llama-2-7b-hf", 32, 32),
        ("8B, Q4_K_M, 8K", "meta-llama/Meta-Llama-3-8B", 32, 8),
        ("13B, Q8_0, 4K", "meta-llama/Llama-2-13b-hf", 40, 40),
        ("70B, Q4, 8K", "meta-llama/Meta-Llama-3-70B", 80, 8),
        ("1.5B, Q8_0, 32K", "meta-llama/Llama-3.2-1B", 16, 8),
    ],
)
def test_model_card_names_its_kv_shape(text, arch, n_layer, n_kv_head):
    """The card picks the published shape of its size class and says so ("70B" never gets a 7B shape)."""
    card = parse_model_card(text)
    assert (card.kv_shape.name, card.kv_shape.n_layer, card.kv_shape.n_kv_head) == (arch, n_layer, n_kv_head)
    assert f"{n_layer} layers" in card.kv_note and "assumed" in card.kv_note


def test_model_card_far_from_any_shape_says_so():
    """34B is beyond 1.5× of every listed shape: the note says so and asks for the architecture."""
    assert "Choose the architecture" in parse_model_card("34B, Q8_0, 16K").kv_note


@pytest.mark.parametrize(
    "text,match",
    [
        ("7B, Q4_K_X, 8K", "unknown weight format"),
        ("7B, IQ9_XXS, 8K", "7B, Q4_K_M, 8K"),  # no such ggml type
        ("7B, Q33, 8K", "between 1 and 32"),
        ("7B,,8K", "7B, Q4_K_M, 8K"),
        ("7B, Q4, 8K" + " " * 200, "cannot read"),
    ],
)
def test_model_card_refusals_give_an_example(text, match):
    """Unknown names, impossible bit counts and malformed cards are refused with an example of a readable card."""
    with pytest.raises(ValueError, match=match):
        parse_model_card(text)


def _llama_params(vocab, hidden, inter, layers, heads, kv_heads, tied):
    """Parameters of a Llama-style model from its config.json terms (no biases; RMSNorm weights)."""
    head_dim = hidden // heads
    attn = 2 * hidden * hidden + 2 * hidden * kv_heads * head_dim
    per_layer = attn + 3 * hidden * inter + 2 * hidden
    return vocab * hidden * (1 if tied else 2) + layers * per_layer + hidden


@pytest.mark.parametrize(
    "preset,vocab,inter,tied",
    [
        ("Llama-2-7B (MHA)", 32000, 11008, False),
        ("Llama-2-13B (MHA)", 32000, 13824, False),
        ("Llama-3-8B (GQA)", 128256, 14336, False),
        ("Llama-3-70B (GQA)", 128256, 28672, False),
        ("Llama-3.2-1B (GQA)", 128256, 8192, True),
        ("Llama-3.2-3B (GQA)", 128256, 8192, True),
        ("Mistral-7B-v0.1 (GQA)", 32000, 14336, False),
    ],
)
def test_published_parameter_counts_follow_from_configs(preset, vocab, inter, tied):
    """Each preset's parameter count equals the Llama formula over its config.json terms."""
    s = PRESETS[preset]
    assert s.n_params == _llama_params(vocab, s.hidden_size, inter, s.n_layer, s.n_head, s.n_kv_head, tied)


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
    from core.cost.request_sizes import parse_budgets

    assert parse_budgets("12, 20 6", 256) == [12, 20, 6]
    for bad, match in (
        ("0", "at least 1 token"),
        ("x", "whole number of tokens"),
        ("300", "context window"),
        ("", "e.g."),
        ("-5", "budget 1 .* is negative"),
        ("12, 4 096", r"budget 3 .* starts with 0: .* \(4096 or 4,096, not 4 096\)"),
        # Python's int() refuses 5,000 digits with a message naming sys.set_int_max_str_digits.
        ("9" * 5000, r"budget 1 \('9{19}…'\) is more tokens than the context window holds \(256\)"),
    ):
        with pytest.raises(ValueError, match=match):
            parse_budgets(bad, 256)


def test_a_config_with_a_5000_digit_number_gets_a_plain_message():
    """Python's own refusal names sys.set_int_max_str_digits(); students see what is wrong with the file instead."""
    text = '{"num_hidden_layers": ' + "9" * 5000 + ', "num_attention_heads": 32, "hidden_size": 4096}'
    with pytest.raises(ValueError, match="^not a config.json: it has a number with more than 4,300 digits$"):
        parse_hf_config(text)


def test_a_thousands_separator_in_request_lengths_is_read():
    """One rule for every box (core.typed_numbers): "8,192" is 8192, not two requests of 8 and 192 (shown
    25 MiB instead of 1 GiB); items are separated by ";", ", " or spaces; "4 096" leaves a "096" (refused),
    "8.192" has two readings (named), and "8 192" is two items, said in a note."""
    from core.cost.request_sizes import list_notes

    assert parse_lengths("8,192") == [8192] and parse_lengths("8’192") == [8192]
    assert parse_lengths("8192, 4,096") == [8192, 4096] and parse_lengths("4096;4096") == [4096, 4096]
    assert parse_lengths("128,256") == [128256] and "reads as one number, 128256" in list_notes("128,256")[0]
    with pytest.raises(ValueError, match="'096' starts with 0"):
        parse_lengths("4 096")
    with pytest.raises(ValueError, match=r"reads as 8\.192 \(not a whole number\) or, .* as 8192"):
        parse_lengths("8.192")
    with pytest.raises(ValueError, match=r"reads as 1\.5 \(a decimal comma\) or as two items, 1 and 5"):
        parse_lengths("1,5")
    assert parse_lengths("8 192") == [8, 192] and "for 8,192 write 8192" in list_notes("8 192")[0]


@pytest.mark.parametrize(
    "field",
    ["torch_dtype", "model_type", "architectures", "num_hidden_layers", "hidden_size", "\\ud800", "text_config"],
)
def test_a_lone_surrogate_anywhere_gets_a_message_the_browser_can_show(field):
    """A lone surrogate ("\\ud800" in JSON) cannot be encoded as UTF-8, so a message holding one never
    reached the browser: the KV-cache page stayed blank below the box (a helper's paste). Every
    message (or every value read) is now UTF-8, the surrogate named by its code point."""
    cfg = {"num_hidden_layers": 32, "num_attention_heads": 32, "hidden_size": 4096}
    text = json.dumps(cfg)[:-1] + f', "{field}": "\\ud800"}}'
    try:
        shape = parse_hf_config(text)
    except ValueError as e:
        str(e).encode("utf-8")  # raises UnicodeEncodeError if the surrogate is still there
    else:
        for value in vars(shape).values():  # whatever the page may show of it
            str(value).encode("utf-8")


def test_a_context_window_past_the_calculators_range_is_not_used_as_t():
    """max_position_embeddings 10¹³ became the default T, which the page then refused as if the
    student had typed it ("Check the lengths"), and the rest of the page was gone (a helper's paste)."""
    cfg = {"num_hidden_layers": 32, "num_attention_heads": 32, "hidden_size": 4096, "torch_dtype": "bfloat16"}
    shape = parse_hf_config(json.dumps({**cfg, "max_position_embeddings": 10**13}))
    assert shape.context_window is None
    past = "max_position_embeddings 10,000,000,000,000 is past 1,000,000,000,000: not used"
    assert shape.note == f"torch_dtype bfloat16; {past}"
    assert parse_hf_config(json.dumps({**cfg, "max_position_embeddings": 10**12})).context_window == 10**12


def _gguf_types():
    """Every ggml type gguf gives a size for: (name, values per block, bytes per block)."""
    import gguf

    return [(t.name, *gguf.GGML_QUANT_SIZES[t]) for t in gguf.GGMLQuantizationType if t in gguf.GGML_QUANT_SIZES]


@pytest.mark.parametrize("name,block,type_size", _gguf_types())
def test_every_gguf_type_is_priced_from_ggufs_table(name, block, type_size):
    """Each type in gguf.GGMLQuantizationType with a GGML_QUANT_SIZES entry reads on a card (in lower case too) at
    8 · bytes / values bits per weight (IQ2_XXS 66/256 → 2.0625, MXFP4 17/32 → 4.25), and a 7B card's weight bill is
    7·10⁹ × that ÷ 8 bytes, rounded up (those formats store their scales: nothing is added)."""
    from fractions import Fraction

    from core.cost.kv_shape import PRESETS as KV_PRESETS
    from core.cost.weight_bytes import card_budget

    bits = Fraction(8 * type_size, block)
    card = parse_model_card(f"7B, {name.lower()}, 8K")
    assert card.bits_per_weight == bits and card.weight_format.counts_scales
    bill = card_budget(card, next(iter(KV_PRESETS.values())), True, 2, 1, 0, 100)
    assert bill.plan["memory/weights"] == -(-7 * 10**9 * bits.numerator // (8 * bits.denominator))


@pytest.mark.parametrize(
    "name,bits,gb",
    [("IQ2_XXS", 2.0625, "1.80 GB"), ("IQ3_S", 3.4375, "3.01 GB"), ("IQ1_M", 1.75, "1.53 GB"),
     ("TQ1_0", 1.6875, "1.48 GB"), ("MXFP4", 4.25, "3.72 GB")],
)  # fmt: skip
def test_named_ggml_types_on_the_weights_page(name, bits, gb):
    """The issue's five types, which the card refused: 7B at gguf's bits (66, 110, 56, 54 bytes per 256; MXFP4 17 per
    32) is the GB shown in both steps; step 2 says the scales are already counted, never that a switch is off."""
    from core.cost.weight_bytes import card_weight_steps

    card = parse_model_card(f"7B, {name}, 8K")
    first, second = card_weight_steps(card, False)
    assert card.bits_per_weight == bits and f"**{gb}**" in first and "gguf's table" in first
    assert "already in step 1" in second and f"{bits:g} bits per weight" in second and "switch" not in second


def test_request_lengths_with_a_multiplier():
    """The memory page's lengths: 8k = 8,000, 8Ki = 8,192 (IEC), 128Ki = 131,072, 1.5k = 1,500 positions (they were
    refused as "not a whole number"); a capital K is refused naming both readings, 8,000 and 8,192."""
    assert parse_lengths("8k, 8Ki; 128Ki 1.5k") == [8000, 8192, 131072, 1500]
    with pytest.raises(ValueError, match=r"reads as 8,000 .* or 8,192 .*write 8k or 8Ki"):
        parse_lengths("8K")
