"""Weight formats timed honestly: one cached decode step with the block projections stored as
float32, bfloat16, int8, int4, or ggml's Q8_0 / Q4_0 blocks, each through a real kernel.

Ch. 30 §30.6: "fewer stored bits do not automatically mean every operation runs faster". A format
here is a copy of the model whose projections (``core.model.layout.quantizable_weights``: q, k, v,
o, gate, up, down of every block) are replaced by a module that keeps the weights packed and
multiplies through torch's own kernels:

- int8: ``torch.ops.aten._weight_int8pack_mm`` (one symmetric scale per output row), with bfloat16
  activations and, separately, float32 ones: on torch 2.13's CPU build the float32 path is far
  slower for the same bytes, so both are timed;
- int4: ``torch.ops.aten._weight_int4pack_mm_for_cpu`` (groups of 32, a scale and a zero point
  each, bfloat16 activations; its float32 path is slower still, and not timed).
  ``_dyn_quant_matmul_4bit`` is not used: on x86 (no KleidiAI) ``_dyn_quant_pack_4bit_weight``
  keeps float32 weights;
- Q8_0 / Q4_0: ggml's blocks bit for bit (``core.gguf.blocks``), dequantized to float32 on every
  step, then one float32 matmul: what a simple engine without fused block kernels does.

The kernels' measurements behind these choices: docs/benchmarks.md, "Kernel choices of the formats".

The rest of the model (embedding, norms, output head, KV cache, activations between products) stays
in the format's ``rest`` dtype (``core.cost.step_traffic.FORMATS``): bfloat16 for bfloat16, float32
otherwise. The int kernels get their row of activations converted to bfloat16 and give it back as
float32 (the whole model in bfloat16 spent more of the step outside the int products than in them).
Every format's step runs from the same cached context (a float32 prefill, cast), so max |Δlogit| is
that one step's error against float32. The block projections are also timed alone (one row each, in
the same rounds), so the sentence can say how much of a step is the weight products.

The package, by concern: ``kernels`` (the packed projection modules and the kernel each format
multiplies through), ``measure`` (a model's copy in a format, its weight products, ``FormatRow`` and
``measure_formats``), ``report`` (the sentence and the table from the numbers).
"""
