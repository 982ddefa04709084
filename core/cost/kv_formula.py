"""The memory page's formula line: the formula for the model's kind of attention, its terms as typed,
and the exact total in bytes (Ch. 30 §30.4 for the uniform case; ``core.cost.kv_layers`` for the rest).
"""

from __future__ import annotations

from fractions import Fraction

from core.cost.kv_layers import LayerCache, layer_counts

# What M counts and what it does not, in Ch. 30's words (§30.4 and the answer to Exercise 3): the memory page's caption.
M_LEAVES_OUT = (
    "M is the cache's ideal payload: it does not include weights, logits or workspace (Ch. 30 §30.4). Query-head "
    "count is not an extra factor (Exercise 3): only the KV heads H_kv enter M."
)


def _lengths(lengths: list[int], positions: int) -> tuple[str, str]:
    """(B and T as a formula writes them, their values): one T for equal lengths, else their sum."""
    if len(set(lengths)) == 1:
        return "B · T", f"{len(lengths):,} · {lengths[0]:,}"
    summed = (
        " + ".join(f"{t:,}" for t in lengths)
        if len(lengths) <= 4
        else f"{len(lengths):,} lengths summed: {positions:,}"
    )
    return "(T₁ + T₂ + …)", f"({summed})"


def _per_layer_line(layers, lengths: list[int], b_text: str, end: str) -> str:
    """Layers of several kinds (KV heads, head width or window per layer): "M = 2 · Σ_ℓ H_kv,ℓ·d_ℓ · Σ min(T, W_ℓ) · b
    = 2 · (25 · 2,048 · min(262,144; 1,024) + 5 · 1,024 · 262,144) · 2", one term per kind, kinds in layer order."""
    terms = []
    for layer, count in layer_counts(layers).items():
        if layer.window is None:
            held = f"{sum(lengths):,}"
        elif len(lengths) == 1:
            held = f"min({lengths[0]:,}; {layer.window:,})"
        else:
            held = f"{sum(min(t, layer.window) for t in lengths):,}"
        terms.append(f"{count:,} · {layer.k_values:,} · {held}")
    return f"M = 2 · Σ_ℓ H_kv,ℓ·d_ℓ · Σ min(T, W_ℓ) · b = 2 · ({' + '.join(terms)}) · {b_text} = {end}"


def formula_line(
    layers: tuple[LayerCache, ...], lengths: list[int], d: int, b, total: int, hybrid: bool = False
) -> str:
    """One Markdown line "M = formula = terms = **N bytes**" for ``layers`` (``LayerCache``s), request
    ``lengths``, head width ``d`` and bytes per value ``b`` (a number, or a cache type's name). ``hybrid``:
    ``layers`` are a hybrid's attention layers only, so L is written L_attn."""
    bt, bt_terms = _lengths(lengths, sum(lengths))
    b_text = b if isinstance(b, str) else f"{float(Fraction(b)):g}"
    n = len(layers)
    end = f"**{total:,} bytes**"
    if not layers:
        return f"M = {end}: no layer keeps a KV cache"
    if hybrid:
        line = formula_line(layers, lengths, d, b, total)
        return line.replace("· L ·", "· L_attn ·", 1).replace("M = L ·", "M = L_attn ·", 1)
    first = layers[0]
    kinds = {(x.k_values, x.v_values) for x in layers}
    if first.k_values != first.v_values:  # MLA: latent and shared RoPE key, no factor 2
        r, rope = first.k_values, first.v_values
        if first.window is None:
            return f"M = L · {bt} · (r_kv + d_R) · b = {n:,} · {bt_terms} · ({r:,} + {rope:,}) · {b_text} = {end}"
    if len(kinds) > 1:  # KV heads or head widths per layer: one term per kind of layer
        return _per_layer_line(layers, lengths, b_text, end)
    h = first.k_values // d
    local = [x for x in layers if x.window is not None]
    if not local:
        if bt == "B · T":
            return (
                f"M = 2 · B · L · T · H_kv · d · b = 2 · {len(lengths):,} · {n:,} · {lengths[0]:,} · {h:,} · "
                f"{d:,} · {b_text} = {end}"
            )
        return f"M = 2 · L · {bt} · H_kv · d · b = 2 · {n:,} · {bt_terms} · {h:,} · {d:,} · {b_text} = {end}"
    w = local[0].window
    # ";" between min's arguments: "min(8,192, 4,096)" read as four numbers.
    held = " + ".join(f"min({t:,}; {w:,})" for t in lengths[:4]) + (" + …" if len(lengths) > 4 else "")
    held = held if len(lengths) == 1 else f"({held})"
    n_global = n - len(local)
    if first.k_values != first.v_values:
        return f"M = (L_global · ΣT + L_local · Σ min(T, W)) · (r_kv + d_R) · b, W = {w:,}: = {end}"
    if n_global == 0:
        return f"M = 2 · L · Σ min(T, W) · H_kv · d · b = 2 · {n:,} · {held} · {h:,} · {d:,} · {b_text} = {end}"
    return (
        f"M = 2 · (L_global · ΣT + L_local · Σ min(T, W)) · H_kv · d · b = 2 · ({n_global:,} · {sum(lengths):,} + "
        f"{len(local):,} · {held}) · {h:,} · {d:,} · {b_text} = {end}"
    )
