"""The shipped weights keep their teaching moments on the default prompt: real choices to sample
from, a head that looks back at the traveller's name, and a sensible answer about the limit."""

import re

import pytest
import torch

from core.decode import settings as decode_settings
from core.decode.generate import decode_one_token, prefill
from core.decode.kv_cache import KVCache
from core.model.shipped import load_model, load_shipped_tokenizer
from core.model.tokenizer import decode, encode, end_token_id
from ui.decode import keys as decode_keys

N_STEPS = 20  # output tokens 1..20: prefill + 19 decode steps


@pytest.fixture(scope="module")
def trace():
    """Greedy decoding of the default prompt: prompt ids, output ids, each pass's logits and attention."""
    model, tok = load_model(), load_shipped_tokenizer()
    ids = encode(tok, decode_settings.DEFAULT_PROMPT)
    cache = KVCache(model.cfg, dtype=model.dtype)
    step = prefill(model, ids, cache)
    outputs, logits, atts = [], [], []
    for _ in range(40):
        logits.append(step.logits)
        atts.append(step.att)
        outputs.append(int(torch.argmax(step.logits)))
        step = decode_one_token(model, outputs[-1], cache)
    return tok, ids, outputs, logits, atts


def test_a_quarter_of_the_first_twenty_greedy_steps_have_a_real_runner_up(trace):
    """At ≥ 5 of output tokens 1..20 the second most likely token has probability ≥ 5 % (softmax, T = 1)."""
    _, _, _, logits, _ = trace
    top2 = [torch.softmax(x.double(), -1).topk(2).values.tolist() for x in logits[:N_STEPS]]
    with_choice = [i + 1 for i, (_, second) in enumerate(top2) if second >= 0.05]
    assert len(with_choice) >= N_STEPS // 4, [(round(a, 3), round(b, 3)) for a, b in top2]


def test_the_default_head_looks_back_at_the_name_when_writing_it(trace):
    """When greedy decoding writes the traveller's name again, the page's default layer/head puts
    ≥ 0.5 of the new row's attention on the prompt positions holding that name."""
    tok, ids, outputs, _, atts = trace
    name = re.search(r"my name is (\w+)", decode_settings.DEFAULT_PROMPT).group(1)
    name_ids = encode(tok, " " + name)
    in_prompt = [p for p in range(len(ids)) if ids[p : p + len(name_ids)] == name_ids]
    written = [k for k in range(len(outputs)) if outputs[k : k + len(name_ids)] == name_ids]
    assert in_prompt and written, (in_prompt, decode(tok, outputs))
    k = written[0]  # pass k chose output token k + 1, the name's first token
    att = atts[k][decode_keys.DEFAULTS[decode_keys.DECODE_LAYER]][
        decode_keys.DEFAULTS[decode_keys.DECODE_HEAD], -1
    ]  # the newest row, (S,)
    assert att.shape == (len(ids) + k,)
    assert float(att[in_prompt].sum()) >= 0.5


def test_greedy_answer_compares_the_price_with_the_limit(trace):
    """The reply restates the prompt's price and limit and says 'within/under/below' for
    price ≤ limit ('over/above/more than' otherwise), never the opposite."""
    tok, _, outputs, _, _ = trace
    price = int(re.search(r"costs (\d+) yuan", decode_settings.DEFAULT_PROMPT).group(1))
    limit = int(re.search(r"limit is (\d+) yuan", decode_settings.DEFAULT_PROMPT).group(1))
    end = end_token_id(tok)
    text = decode(tok, outputs[: outputs.index(end)] if end in outputs else outputs)
    reply = text.split("\n")[0]
    ok, not_ok = {"within", "under", "below"}, {"over", "above", "more than"}
    if price > limit:
        ok, not_ok = not_ok, ok
    assert f"{price} yuan" in reply and str(limit) in reply, reply
    assert any(re.search(rf"\b{w}\b", reply) for w in ok), reply
    assert not any(re.search(rf"\b{w}\b", reply) for w in not_ok), reply
