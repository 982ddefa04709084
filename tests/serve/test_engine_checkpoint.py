"""The class engine on the server's checkpoint (issue 56, ``--engine-model checkpoint``): a Hugging Face folder's
own weights and tokenizer serve the class, every request's tokens those of ``transformers``' greedy decode of the
same folder; a folder refused, or none given, is said in a sentence before the engine starts."""

import pytest
import torch

from core.checkpoints.app_options import parse_app_args
from core.model.tokenizer import decode, encode
from serve import engine_process
from tests.core.checkpoints.test_load import EOS, write_checkpoint
from tests.helpers.engine import finish

transformers = pytest.importorskip("transformers")

PROMPTS = ("the cat sat on the mat.", "a traveller from Paris paid 750 yuan.", "the dog")
NEW = 12


@torch.no_grad()
def _greedy(hf, ids: list[int], new: int) -> list[int]:
    """``transformers``' own greedy decode: up to ``new`` tokens, the end token included, in float64."""
    out = list(ids)
    for _ in range(new):
        nxt = int(hf(torch.tensor([out])).logits[0, -1].argmax())
        out.append(nxt)
        if nxt == EOS:
            break
    return out[len(ids) :]


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_the_engine_serves_the_checkpoint_as_transformers_decodes_it(tmp_path, arch):
    """Three requests at once (batched, chunked prefill at the default budget) on a random llama (GQA, RoPE) and a
    GPT-2 (learned positions): each streams the text of the checkpoint's greedy tokens, and the engine names the
    folder it runs."""
    folder = write_checkpoint(tmp_path / f"tiny-{arch}", arch)
    svc = engine_process.make_service("checkpoint", folder)
    assert svc.model_label == f"the server's checkpoint tiny-{arch}"
    hf = transformers.AutoModelForCausalLM.from_pretrained(folder, torch_dtype=torch.float64).eval()
    rids = [svc.send("class:CK", f"s{i}", p, NEW) for i, p in enumerate(PROMPTS)]
    for i, (p, rid) in enumerate(zip(PROMPTS, rids, strict=True)):
        events = finish(svc, "class:CK", rid, f"s{i}")
        served = "".join(e["text"] for e in events if e["kind"] == "token")
        expected = decode(svc.tokenizer, _greedy(hf, encode(svc.tokenizer, p), NEW))
        assert served == expected and len(served) >= 3, (arch, p, served)
        assert events[-1]["kind"] == "done" and events[-1]["tokens"] >= 1


def test_a_checkpoint_engine_needs_the_folder_and_says_what_is_wrong_with_it(tmp_path, capsys):
    with pytest.raises(ValueError, match="--engine-model checkpoint serves the --model folder"):
        parse_app_args(["--engine-model", "checkpoint"])
    with pytest.raises(ValueError, match="none was given"):
        engine_process.make_service("checkpoint")
    (tmp_path / "empty").mkdir()
    argv = ["--port", "1", "--", "--engine-model", "checkpoint", "--model", str(tmp_path / "empty")]
    assert engine_process.main(argv) == 2  # before any port is opened
    said = capsys.readouterr().err
    assert said.startswith("the class engine did not start: ") and "no *.safetensors weights" in said, said
