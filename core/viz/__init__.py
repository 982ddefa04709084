"""Figures: pure ``fig_*(data) -> go.Figure`` functions, one module per lesson, one shared template.

The only plotly importer (with ``theme``). No streamlit. Text that came from a user (tokens of a
prompt) is escaped before it reaches plotly, whose labels otherwise interpret a subset of HTML.
"""

from core.viz.attention import describe_attention, fig_attention
from core.viz.batching import describe_batch_cache, describe_batch_speed, fig_batch_cache, fig_batch_speed
from core.viz.context import describe_cache_over_time, fig_cache_over_time
from core.viz.cost import (
    describe_growth,
    describe_measured,
    describe_step_work,
    fig_growth_shapes,
    fig_measured,
    fig_step_work,
)
from core.viz.handout import figure_html
from core.viz.latency import describe_timeline, fig_timeline
from core.viz.memory import describe_kv_variants, describe_memory_budget, fig_kv_variants, fig_memory_budget
from core.viz.paged import (
    describe_block_pool,
    describe_block_tables,
    describe_policy_comparison,
    fig_block_pool,
    fig_block_tables,
    fig_policy_comparison,
)
from core.viz.quant import (
    describe_bits_per_weight,
    describe_block,
    describe_quant_sweep,
    fig_bits_per_weight,
    fig_block,
    fig_quant_sweep,
)
from core.viz.ruler import describe_ruler, fig_ruler
from core.viz.speculative import PROPOSED, describe_three_distributions, fig_three_distributions, speculative_rounds
from core.viz.table import figure_table
from core.viz.theme import CACHED, COLORSCALE, MUTED, NEW_WORK, TEMPLATE, safe
from core.viz.worked import fig_worked_grid

__all__ = [
    "describe_attention",
    "describe_batch_cache",
    "describe_batch_speed",
    "describe_cache_over_time",
    "describe_growth",
    "describe_measured",
    "describe_step_work",
    "describe_timeline",
    "describe_kv_variants",
    "describe_memory_budget",
    "describe_block_pool",
    "describe_block_tables",
    "describe_policy_comparison",
    "describe_bits_per_weight",
    "describe_block",
    "describe_quant_sweep",
    "describe_ruler",
    "describe_three_distributions",
    "figure_table",
    "figure_html",
    "fig_attention",
    "fig_growth_shapes",
    "fig_step_work",
    "fig_measured",
    "fig_kv_variants",
    "fig_memory_budget",
    "fig_ruler",
    "fig_block",
    "fig_bits_per_weight",
    "fig_quant_sweep",
    "fig_timeline",
    "fig_cache_over_time",
    "fig_batch_cache",
    "fig_batch_speed",
    "fig_block_pool",
    "fig_block_tables",
    "fig_policy_comparison",
    "fig_three_distributions",
    "fig_worked_grid",
    "PROPOSED",
    "speculative_rounds",
    "CACHED",
    "COLORSCALE",
    "MUTED",
    "NEW_WORK",
    "TEMPLATE",
    "safe",
]
