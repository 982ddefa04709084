"""Everything that computes: the transformer, its KV cache, decoding, costs. Never imports streamlit."""
