"""bench.roofline --device cuda (bench/gpu_fewer_bits.py) on a machine without a GPU: its options are checked and it
says it measured nothing; its shapes give the reference table's weight bytes, and its table is laid out as the
reference's."""

import pytest
import torch

from bench import gpu_fewer_bits, roofline
from bench.gpu_fewer_bits import FORMATS, MIB, NO_GPU, SHAPES, markdown, products, rows_for, weight_bytes
from core.evaluate.format_speed.reference import load_reference

REF = load_reference()
NAMES = {"Llama-3-8B": "llama3-8b", "SmolLM2-135M": "smollm2"}


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is here: the path measures instead")
def test_without_a_gpu_it_says_so_and_measures_nothing(capsys, monkeypatch):
    """torch sees no CUDA device: the command prints why nothing was measured and exits 0 (a skip), without
    building a single weight."""
    monkeypatch.setattr(gpu_fewer_bits, "build_step", lambda *a, **k: pytest.fail("built weights without a GPU"))
    assert roofline.main(["--device", "cuda"]) == 0
    out = capsys.readouterr().out
    assert out.strip() == NO_GPU and "torch.cuda.is_available() is False" in out


@pytest.mark.parametrize(
    "argv,said",
    [
        (["--device", "cuda", "--shapes", "gpt5"], "unknown shape 'gpt5'"),
        (["--device", "cuda", "--formats", "int3"], "unknown format 'int3'"),
        (["--device", "cuda", "--batches", "one"], "--batches takes whole numbers"),
        (["--device", "cuda", "--replays", "0"], "must be at least 1"),
        (["--device", "cuda", "--models", "larger"], "--models and --compiled are the CPU path's"),
        (["--device", "tpu"], "invalid choice: 'tpu'"),
        (["--shapes", "smollm2"], "unrecognized arguments: --shapes smollm2"),  # the CPU path takes no GPU option
    ],
)
def test_options_it_does_not_know_are_refused_with_a_sentence(argv, said, capsys):
    """Unknown shapes, formats, batches, a zero replay count, the CPU path's options with cuda and the GPU
    path's without it: argparse's usage error (exit 2) naming what is wrong, before anything is measured."""
    with pytest.raises(SystemExit) as exit_:
        roofline.main(argv)
    assert exit_.value.code == 2 and said in capsys.readouterr().err


def test_the_shapes_give_the_references_weight_bytes():
    """Each reference row's weight MiB, to the digit the note prints (whole MiB from 1,000, else one decimal), comes
    out of the shape's products in that format, scales included: Llama-3-8B 28,628 MiB in float32 … 4,026 in int4."""
    for r in REF.rows:
        mib = weight_bytes(SHAPES[NAMES[r.model]], r.fmt) / MIB
        # within the note's last printed digit (128.25 MiB of fp8 codes + 844 B of scales printed as 128.2)
        assert mib == pytest.approx(r.weights_mib, abs=0.5 if r.weights_mib >= 1000 else 0.06), r


def test_one_step_is_every_block_projection_and_the_head():
    """SmolLM2-135M: 30 blocks × 7 products + the output head = 211 (the note's "~211 small products")."""
    assert len(products(SHAPES["smollm2"])) == 211 == 30 * 7 + 1
    assert products(SHAPES["llama3-8b"])[-1] == (128256, 4096)


def test_the_table_reproduces_the_references_columns():
    """Fed the reference's step times and its 4.18 TB/s, the table prints its byte floors, ÷ floor and speed vs
    bf16 as the note's table does (Llama-3-8B at batch 1 and 64)."""
    rows = []
    for batch in (1, 64):
        ms = {r.fmt: r.step_ms for r in REF.rows if r.model == "Llama-3-8B" and r.batch == batch}
        rows += rows_for(SHAPES["llama3-8b"], batch, ms, REF.copy_bandwidth_tbs * 1e12)
    table = markdown(rows)
    assert (
        table.splitlines()[0] == "| model shape | B | format | weights | step | byte floor | ÷ floor | speed vs bf16 |"
    )
    assert "| 1 | int4 weight-only, g64 | 4,026 MiB | 2.69 ms | 1.01 ms | 2.66 | 1.72× |" in table
    assert "| 64 | int8 weight-only | 7,160 MiB | 1,085 ms | 1.80 ms | 604 | 0.004× |" in table
    assert "| Llama-3-8B (32 layers, d 4096, FFN 14336, 8 KV heads, vocab 128256) | 1 | float32 |" in table
    assert len(table.splitlines()) == 2 + 2 * len(FORMATS)
