"""Tables handed to streamlit as Arrow (ui.tables.arrow): the same columns, in order, and the same
values as the rows they came from; rows Arrow cannot type are passed on unchanged."""

import pyarrow as pa

from core.quant import quantize as quant
from core.quant import ruler, ruler_block
from ui import tables as ui_tables

VALUES = quant.parse_values("0.34, -0.12, 0.7, 0.23, 1e-3, -2.5")


def as_rows(table):
    """A dict of columns or a list of rows, as a list of rows."""
    if isinstance(table, dict):
        return [dict(zip(table, vals, strict=True)) for vals in zip(*table.values(), strict=True)]
    return table


def page_tables():
    """Every table the quantization ruler's page and the sidebar card hand to streamlit."""
    r = ruler.ruler(VALUES, 3, None, True, None, list(quant.ROUNDING)[0], True)
    tables = [ruler.ruler_table(r), ruler.formats_table(), {"": ["parameters", "n_layer"], "value": ["1,234", "4"]}]
    for fmt in ruler_block.BLOCK_FORMATS:
        v = ruler_block.ruler_block(VALUES, fmt, 0).view
        tables += [v.byte_parts(), v.packing(), v.rows()]
    return tables


def test_arrow_tables_hold_the_rows_values_in_order():
    for rows in page_tables():
        table = ui_tables.arrow(rows)
        assert isinstance(table, pa.Table)
        expected = as_rows(rows)
        assert table.to_pylist() == expected
        if expected:
            assert table.column_names == list(expected[0])


def test_rows_arrow_cannot_type_are_passed_on():
    mixed = {"value": [1.5, "—", 3]}  # a number column with a dash in it
    assert ui_tables.arrow(mixed) is mixed
    ragged = [{"a": 1, "b": 2}, {"a": 3, "c": 4}]  # from_pylist would drop "c"
    assert ui_tables.arrow(ragged) is ragged
