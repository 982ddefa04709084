"""What a server process costs, read from /proc (Linux): CPU time, memory, its children."""

from __future__ import annotations

import os
from pathlib import Path

from core.model.shipped import ASSETS

WEIGHTS = str(ASSETS / "model.safetensors")


def stat_fields(pid: int) -> list[str]:
    """``/proc/<pid>/stat`` after the command name (split on its last ")": a name may hold spaces or
    parentheses). Index 0 is field 3 of proc(5), the state: 1 is the parent's pid, 11 utime, 12 stime,
    in clock ticks. Raises ``OSError`` once the process has exited."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a live process has used so far."""
    fields = stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def total_cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds the live processes ``pids`` have used so far."""
    return sum(cpu_seconds(p) for p in pids)


def kernel_cpu_seconds(pids: list[int]) -> float:
    """System (kernel) CPU seconds of the live processes ``pids`` so far: syscalls, and waking
    threads that hand each other Python's GIL (stime)."""
    return sum(int(stat_fields(p)[12]) for p in pids) / os.sysconf("SC_CLK_TCK")


def children(pid: int) -> list[int]:
    """Direct children of ``pid`` (e.g. nginx's worker processes under its master)."""
    kids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat_fields(int(stat.parent.name))
        except OSError:
            continue  # the process exited meanwhile
        if int(fields[1]) == pid:
            kids.append(int(stat.parent.name))
    return kids


def memory_mib(pid: int) -> dict[str, float]:
    """Resident set size (RSS), proportional set size (PSS: each shared page divided by the number
    of processes mapping it) and the PSS of the mapped model weights, in MiB, from
    ``/proc/<pid>/smaps_rollup`` and ``/proc/<pid>/smaps``; NaN for a process that has exited."""
    out = {"rss": 0.0, "pss": 0.0, "weights_pss": 0.0}
    try:
        rollup, maps = Path(f"/proc/{pid}/smaps_rollup").read_text(), Path(f"/proc/{pid}/smaps").read_text()
    except OSError:  # the process has exited: nothing to measure
        return {k: float("nan") for k in out}
    for line in rollup.splitlines():
        parts = line.split()
        if parts[0] in ("Rss:", "Pss:"):
            out[parts[0][:-1].lower()] = int(parts[1]) / 1024
    in_weights = False
    for line in maps.splitlines():
        parts = line.split()
        if "-" in parts[0] and not parts[0].endswith(":"):
            in_weights = parts[-1] == WEIGHTS
        elif in_weights and parts[0] == "Pss:":
            out["weights_pss"] += int(parts[1]) / 1024
    return out
