"""Fused q/k/v and gate/up (core.model.layout): one product per group at decode, the same numbers.

A loaded checkpoint runs fused (its parity with transformers is tests/core/checkpoints/test_load.py). Here:
the parts stay views of the fused tensor, loading fuses without a copy, anything that gives a
part its own tensor falls back to the separate products, and every path equals an unfused model
on the same weights (the model as the pages see it: one ``nn.Linear`` per projection).
"""

import copy

import pytest
import torch

from core.checkpoints.load import load
from core.model.layout import decode_layout, fuse, fuse_projections, project
from tests.core.checkpoints.test_load import write_checkpoint

IDS = torch.tensor([[5, 17, 42, 9, 101, 33, 7]])


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("fused")
    return {a: write_checkpoint(root / a, a) for a in ("llama", "qwen2", "gpt2")}


def unfused(model):
    """The same weights in separate tensors (a deep copy drops the fused product)."""
    copied = copy.deepcopy(model)
    assert all(b.self_attn.fused_qkv is None and b.mlp.fused_gate_up is None for b in copied.layers)
    return copied


@pytest.mark.parametrize("arch", ["llama", "qwen2", "gpt2"])
@pytest.mark.parametrize("dtype,atol", [(torch.float32, 1e-5), (torch.float64, 1e-12)])
@torch.no_grad()
def test_loaded_model_runs_fused_without_a_copy_and_equals_the_separate_products(folders, arch, dtype, atol):
    """After load every block's q/k/v (Qwen2: with biases) and SwiGLU gate/up are views lying one
    after another in one tensor, read there by the loader (the fused tensor starts at q's first
    value: nothing was concatenated), and the logits equal the unfused model's."""
    model, _, _ = load(folders[arch], dtype=dtype)
    for block in model.layers:
        attn, fused = block.self_attn, block.self_attn.fused_qkv
        assert fused is not None and fused.weight.dtype == dtype
        assert fused.weight.data_ptr() == attn.q_proj.weight.data_ptr()
        assert fused.weight.untyped_storage().data_ptr() == attn.v_proj.weight.untyped_storage().data_ptr()
        assert torch.equal(fused.weight, torch.cat([attn.q_proj.weight, attn.k_proj.weight, attn.v_proj.weight]))
        assert (fused.bias is not None) == (arch != "llama")
        assert (block.mlp.fused_gate_up is not None) == (arch != "gpt2")  # GPT-2's MLP has no gate
    got, _ = model(IDS)
    want, _ = unfused(model)(IDS)
    assert torch.allclose(got, want, rtol=0, atol=atol)


@torch.no_grad()
def test_an_in_place_write_reaches_the_fused_product(folders):
    """A page that rounds a weight in place (``copy_``, as quantizing does) changes what the
    fused product computes: the parts are views of it."""
    model, _, _ = load(folders["qwen2"])
    ref = unfused(model)
    for m in (model, ref):
        m.layers[0].self_attn.k_proj.weight.mul_(-2.0)
        m.layers[1].mlp.up_proj.weight.add_(0.5)
    got, _ = model(IDS)
    want, _ = ref(IDS)
    assert model.layers[0].self_attn.fused_qkv is not None
    assert torch.allclose(got, want, rtol=0, atol=1e-5)
    before, _ = load(folders["qwen2"])[0](IDS)
    assert (got - before).abs().max() > 1e-2  # the write changed the logits


@torch.no_grad()
def test_a_part_given_its_own_tensor_falls_back_to_separate_products(folders):
    """``param.data = …`` (or assigning a new Parameter) leaves the fused tensor stale: the
    forward pass notices and multiplies the parts one by one, so the new weight is used."""
    model, _, _ = load(folders["llama"])
    attn = model.layers[1].self_attn
    x = torch.randn(1, 3, model.cfg.n_embd)
    fused_q = project(x, (attn.q_proj, attn.k_proj, attn.v_proj), attn.fused_qkv)[0]
    attn.q_proj.weight.data = attn.q_proj.weight.detach().clone() * 3  # a tensor of its own
    q, k, v = project(x, (attn.q_proj, attn.k_proj, attn.v_proj), attn.fused_qkv)
    assert torch.allclose(q, 3 * fused_q, atol=1e-4) and not torch.allclose(q, fused_q, atol=1e-2)
    assert torch.allclose(k, attn.k_proj(x), rtol=0, atol=0) and torch.allclose(v, attn.v_proj(x), rtol=0, atol=0)


def test_with_gradients_on_the_parts_get_their_gradients():
    """Training (gradients on) runs the separate products, so each part's own weight gets its
    gradient; the fused tensor is not a parameter."""
    torch.manual_seed(0)
    linears = [torch.nn.Linear(8, n) for n in (8, 4, 4)]
    fused = fuse(linears)
    x = torch.randn(2, 8)
    sum(p.sum() for p in project(x, linears, fused)).backward()
    assert all(m.weight.grad is not None and torch.allclose(m.weight.grad, x.sum(0).expand(m.out_features, 8))
               for m in linears)  # fmt: skip


@torch.no_grad()
def test_fusing_copies_scattered_parts_once_and_keeps_values_names_and_shapes():
    """Parts made separately are copied into one tensor (``decode_layout``: 16 outputs > 8 inputs,
    stored column by column) and become its views; ``.double()`` fuses again."""
    torch.manual_seed(1)
    linears = [torch.nn.Linear(8, n, bias=False) for n in (8, 4, 4)]
    before = [m.weight.clone() for m in linears]
    fused = fuse(linears)
    assert fused.weight.shape == (16, 8) and fused.weight.stride() == (1, 16) and fused.sizes == (8, 4, 4)
    assert all(torch.equal(m.weight, w) and m.weight.shape == w.shape for m, w in zip(linears, before, strict=True))
    assert linears[1].weight.data_ptr() == fused.weight[8].data_ptr()
    with pytest.raises(ValueError, match="same input size"):
        fuse([torch.nn.Linear(8, 4), torch.nn.Linear(6, 4)])


@torch.no_grad()
def test_double_fuses_again_and_still_equals_the_separate_products(folders):
    model, _, _ = load(folders["llama"])
    model = model.double()
    fused = model.layers[0].self_attn.fused_qkv
    assert fused is not None and fused.weight.dtype == torch.float64
    assert fused.weight.data_ptr() == model.layers[0].self_attn.q_proj.weight.data_ptr()
    got, _ = model(IDS)
    want, _ = unfused(model)(IDS)
    assert torch.allclose(got, want, rtol=0, atol=1e-12)


def test_decode_layout_keeps_values_and_stores_along_the_longer_side():
    w = torch.arange(12.0).view(6, 2)  # 6 outputs > 2 inputs: column by column
    assert torch.equal(decode_layout(w), w) and decode_layout(w).stride() == (1, 6)
    assert decode_layout(w.T).stride() == (6, 1)  # 2 × 6: row by row
    assert decode_layout(torch.zeros(4, 4)).stride() == (1, 4)  # square (o_proj): column by column
    model = torch.nn.Module()
    model.layers = []
    fuse_projections(model)  # nothing to fuse: no error


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
@torch.no_grad()
def test_a_rounded_copy_of_a_fused_model_runs_fused_and_equals_its_parts(folders, arch):
    """The weights page's rounded copy (core.quant.model_weights.quantize_weights) of a loaded checkpoint is
    fused again, the original untouched; its logits equal the same rounded weights run part by part."""
    from core.quant.model_weights import quantize_weights

    model, _, _ = load(folders[arch])
    before = model(IDS)[0]
    rounded = quantize_weights(model, 4, 16)
    assert all(b.self_attn.fused_qkv is not None for b in rounded.layers)
    assert torch.equal(model(IDS)[0], before)
    assert not torch.equal(rounded(IDS)[0], before)  # rounding moved the logits
    torch.testing.assert_close(rounded(IDS)[0], unfused(rounded)(IDS)[0], atol=1e-5, rtol=0)
