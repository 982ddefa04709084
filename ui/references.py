"""The chapters' references, on screen where the chapter cites them (Ch. 30 §30.10): Shazeer 2019
beside MQA, Kwon et al. 2023 §4.1 on the paged cache, Jacob et al. 2018 §2.1 at the zero point.
Only the works the chapters list, in their words (Ch. 19 lists none)."""

from __future__ import annotations

import streamlit as st

# Ch. 30 §30.10, in the chapter's words: author, title, year, and what the chapter reads it for.
REFERENCES = {
    "shazeer": (
        "Shazeer, *Fast Transformer Decoding: One Write-Head is All You Need*, 2019",
        "the incremental attention implementation makes stored K/V and head-sharing costs explicit",
    ),
    "kwon": (
        "Kwon et al., *Efficient Memory Management for Large Language Model Serving with PagedAttention*, 2023",
        "Section 4.1 distinguishes logical KV content from physical block allocation",
    ),
    "jacob": (
        "Jacob et al., *Quantization and Training of Neural Networks for Efficient Integer-Arithmetic-Only "
        "Inference*, 2018",
        "Section 2.1 defines scale/zero-point mappings; its mobile-network measurements are not LLM results",
    ),
}


def cite(key: str, container=st) -> None:
    """One reference as a caption: "Reference (Ch. 30 §30.10): <work>. <what for>."."""
    work, why = REFERENCES[key]
    container.caption(f"Reference (Ch. 30 §30.10): {work}. {why[0].upper()}{why[1:]}.")
