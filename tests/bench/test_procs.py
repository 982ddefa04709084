"""bench.procs reads a process's CPU time and children from /proc: checked against this process's
own clock (``time.process_time``) and a child it starts."""

import os
import subprocess
import sys
import time

from bench.procs import children, cpu_seconds, kernel_cpu_seconds

TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def test_cpu_seconds_follow_the_process_clock():
    pid, t0, c0 = os.getpid(), time.process_time(), cpu_seconds(os.getpid())
    while time.process_time() - t0 < 0.3:  # burn 0.3 s of CPU
        sum(i * i for i in range(1000))
    spent, read = time.process_time() - t0, cpu_seconds(pid) - c0
    assert abs(read - spent) <= 3 * TICK_S  # /proc counts whole clock ticks
    assert 0 <= kernel_cpu_seconds([pid]) <= cpu_seconds(pid)


def test_children_lists_a_child_by_its_parent_pid():
    child = subprocess.Popen([sys.executable, "-c", "import signal; signal.pause()"])
    try:
        assert child.pid in children(os.getpid())
        assert children(child.pid) == []
    finally:
        child.kill()
        child.wait()
