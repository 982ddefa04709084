"""App tests of the batching page."""

from tests.app_util import click, new_app


def test_prefill_step_and_finish():
    """Prefill, step until the 6-token request finishes and leaves; bytes: ragged holds exactly the payload."""
    at = new_app("lessons/batching.py")
    click(at, "Prefill the batch")
    for _ in range(6):
        click(at, "Step ▸ (one pass)")
    table = at.dataframe[0].value
    assert list(table["status"]).count("finished, left the batch") == 1
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Wasted on padding"] != "0 B (ragged)"
    at.radio(key="batch.layout").set_value("ragged").run()
    click(at, "Prefill the batch")
    click(at, "Run to the end")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Bytes the layout holds"] == metrics["Bytes holding positions (2·L·H_kv·d·b·Σ lengths)"]
    assert set(at.dataframe[0].value["status"]) == {"finished, left the batch"}


def test_bad_batches_get_messages():
    """Mismatched budgets, a zero budget and no prompts get a clear message, no traceback."""
    at = new_app("lessons/batching.py")
    for prompts, budgets, expect in [
        ("a\nb", "3", "2 prompts but 1"),
        ("a", "0", "at least 1"),
        ("   ", "3", "between 1 and 16"),
    ]:
        at.text_area(key="batch.prompts").set_value(prompts)
        at.text_input(key="batch.budgets").set_value(budgets)
        at.run()
        click(at, "Prefill the batch")
        assert any(expect in w.value for w in at.warning), (expect, [w.value for w in at.warning])
