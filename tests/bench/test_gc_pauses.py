"""bench.gc_pauses' hook, in a real child process: a full collection is logged with its pause, and
BENCH_GC_NOFREEZE makes gc.freeze do nothing (the "not frozen" setting); pauses_ms reads the logs."""

import subprocess
import sys
import time

from bench.gc_pauses import HOOK, pauses_ms

# One full collection and one of generation 1; the hook is removed before the interpreter's own at exit.
CHILD = "import gc; gc.collect(); gc.collect(1); gc.freeze(); print(gc.get_freeze_count()); gc.callbacks.clear()"


def run_child(tmp_path, nofreeze: str) -> int:
    env = {"PYTHONPATH": str(HOOK), "BENCH_GC_LOG": str(tmp_path), "BENCH_GC_NOFREEZE": nofreeze}
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True)
    return int(out.stdout)


def test_hook_logs_full_collections_and_can_switch_freeze_off(tmp_path):
    t0 = time.time()
    assert run_child(tmp_path, "1") == 0  # gc.freeze() froze nothing
    [log] = tmp_path.glob("*.txt")
    assert len(log.read_text().splitlines()) == 1  # gc.collect() is full; gc.collect(1) is not logged
    assert run_child(tmp_path, "") > 1000  # without the switch, freeze works: the interpreter's objects
    pauses = pauses_ms(tmp_path, t0)
    assert len(pauses) == 2 and all(0 < ms < 10_000 for ms in pauses)
    assert pauses_ms(tmp_path, time.time() + 1) == []


def test_pauses_ms_keeps_only_the_window(tmp_path):
    """A replica's collection as it exits (after the runs) is not counted: pauses_ms cuts at ``until``."""
    (tmp_path / "1.txt").write_text("100.000 5.0 10\n200.000 7.5 3\n300.000 250.0 900\n")
    (tmp_path / "2.txt").write_text("150.000 1.5 0\n")
    assert sorted(pauses_ms(tmp_path, 100.0, 200.0)) == [1.5, 5.0, 7.5]
    assert pauses_ms(tmp_path, 150.5) == [7.5, 250.0]
