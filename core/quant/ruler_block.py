"""One block of a real format under the quantization ruler: the ruler's values as llama.cpp's
legacy blocks of 32 (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0), bit for bit, with what each byte holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from core.gguf.blocks import BlockView, block_view
from core.gguf.layout import LAYOUTS
from core.quant.quantize import _check_values
from core.text import plural, quoted

BLOCK_FORMATS = ("Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0")


@dataclass(frozen=True)
class RulerBlock:
    """The ruler's values as ggml blocks of 32 (zeros appended to fill the last): block ``index``
    of ``n_blocks`` (``core.gguf.blocks.BlockView``), the zeros added, bits per weight from the
    layout (exact) and a sentence saying what was stored."""

    view: BlockView
    n_blocks: int
    padded: int
    bits_per_weight: Fraction
    sentence: str

    @property
    def n_appended(self) -> int:
        """Appended zeros inside the block shown (only the last block has any)."""
        return self.padded if self.view.index == self.n_blocks - 1 else 0


def block_count(x) -> int:
    """Blocks of 32 that ``x`` fills (the last one topped up with zeros); at least 1."""
    return max(1, -(-len(x) // 32))


def ruler_block(x, fmt: str, index: int = 0) -> RulerBlock:
    """Block ``index`` of the values ``x`` in llama.cpp's ``fmt`` (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0),
    bit-identical to ``gguf.quants.quantize``. Fewer than a multiple of 32 values are followed by
    zeros (a block is always 32 values; the zeros take part in its scale and min).

    Raises ``ValueError`` for another format, no values, NaN/±inf, values past fp16's range in
    the scale, or an index outside the blocks."""
    if fmt not in BLOCK_FORMATS:
        raise ValueError(f"the block view shows {', '.join(BLOCK_FORMATS)}, not {quoted(str(fmt), 20)}")
    x = _check_values(x)
    n_blocks = block_count(x)
    padded = n_blocks * 32 - len(x)
    view = block_view(np.concatenate([x, np.zeros(padded)]), fmt, index)
    lay = LAYOUTS[fmt]
    bpw = lay.bits_per_weight
    zeros = f" ({plural(padded, 'zero')} appended to fill the last block)" if padded else ""
    sentence = (
        f"{plural(len(x), 'value')}{zeros} = {plural(n_blocks, 'block')} of 32; each block is "
        f"{lay.type_size} bytes = {plural(8 * lay.type_size, 'bit')} for 32 values = {float(bpw):g} bits per weight"
    )
    return RulerBlock(view, n_blocks, padded, bpw, sentence)
