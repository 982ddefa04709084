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
