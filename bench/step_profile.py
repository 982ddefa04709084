"""Where a Step's server time goes: py-spy samples of a live streamlit process, sorted into parts.

``start(pid)`` attaches ``py-spy record`` (raw collapsed stacks), ``finish`` stops it and
``breakdown`` sorts every sampled stack into the first matching part below. Stacks are read
root → leaf, frames as ``function (file:line)``. ``event_loop_shares`` reads a recording of every
thread, idle ones too (``start(pid, event_loop=True)``), and says where streamlit's event loop (the
main thread: it reads and writes every session's websocket) spends its wall time under load.
py-spy also samples threads that only wait (here its idle detection lets them through): a stack
whose innermost frame is one of ``WAITING`` is counted apart and left out of the shares.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

RATE_HZ = 250
WAITING = (
    "EpollSelector.select (selectors.py",  # the event loop with nothing to do
    "_worker (concurrent/futures/thread.py:81)",  # a thread pool's idle worker
    "polling_path_watcher.py:90)",  # streamlit's config-file watcher, asleep between polls
    "Condition.wait (threading.py",
    "Event.wait (threading.py",
)

# (part, substrings of a stack; the first part with any match wins). The recompute check is named
# before the model: both run the transformer, but the check is the full-prefix forward pass the
# decode page runs beside each cached step to show they agree.
PARTS = [
    ("recompute check (full-prefix forward pass)", ("full_forward (",)),
    ("figure building (core/viz, plotly, its JSON)", ("core/viz", "/plotly/", "attention_matrix (")),
    (
        "model: the cached step, sampling, the session",
        ("core/model/model.py", "core/decode/generate.py", "core/decode/session.py"),
    ),
    ("protobuf: serializing and hashing messages", ("SerializeToString", "serialize_forward_msg", "_pb2", "protobuf")),
    ("websocket and event loop (starlette, uvicorn, asyncio)", ("starlette/", "uvicorn/", "websockets/", "asyncio/")),
    ("streamlit: page script, widgets, elements, session state", ("streamlit/",)),
    ("lesson pages and the rest", ("",)),
]


# Where the main thread's wall time goes (``event_loop_shares``): the first part whose frame is in the
# stack (root → leaf), Thread.start anywhere in it, the selector only as the innermost frame.
EVENT_LOOP_PARTS = (
    "blocked starting a rerun's script thread (Thread.start)",
    "in epoll: waiting for the network, or woken and waiting for the GIL",
    "running: websockets, messages, sessions",
)


def start(pid: int, event_loop: bool = False) -> tuple[subprocess.Popen, Path]:
    """Attach ``py-spy record`` to ``pid``; returns the recorder and its output file. With
    ``event_loop``: every thread, idle ones too, each stack rooted at ``thread (tid): name``, sampled
    without pausing the process (``--idle --threads --nonblocking``)."""
    # The venv's own py-spy when the venv is not on PATH (``.venv/bin/python -m bench.server_load``).
    exe = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if exe is None:
        raise RuntimeError("py-spy is not installed (pip install -r requirements-test.txt)")
    out = Path(tempfile.mkdtemp(prefix="step-profile-")) / "stacks.txt"
    # Blocking mode (py-spy pauses the process for each sample): slower, but every stack is whole.
    cmd = [exe, "record", "--pid", str(pid), "--rate", str(RATE_HZ), "--format", "raw", "--output", str(out)]
    if event_loop:
        cmd += ["--idle", "--threads", "--nonblocking"]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE), out


def finish(recorder: tuple[subprocess.Popen, Path]) -> Path:
    """Stop the recorder (py-spy writes its file on Ctrl-C) and return the stacks file."""
    proc, out = recorder
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    if not out.exists():
        raise RuntimeError(f"py-spy wrote no profile: {err.decode(errors='replace')[-300:]}")
    return out


def breakdown(stacks: Path) -> tuple[list[tuple[str, int]], int]:
    """(part, samples) for every part of ``PARTS``, in that order, and the waiting samples."""
    counts: Counter[str] = Counter()
    for line in stacks.read_text(errors="replace").splitlines():
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        if any(w in stack.rsplit(";", 1)[-1] for w in WAITING):
            counts["waiting"] += int(n)
            continue
        part = next(name for name, keys in PARTS if any(k in stack for k in keys))
        counts[part] += int(n)
    return [(name, counts[name]) for name, _ in PARTS], counts["waiting"]


def event_loop_shares(stacks: Path) -> list[tuple[str, int]]:
    """(part, samples) of the main thread for each of ``EVENT_LOOP_PARTS``, from a recording made
    with ``start(pid, event_loop=True)``. Streamlit's event loop runs on the main thread; each rerun
    (a Step) starts a new script thread, and ``Thread.start`` waits until that thread has run, which
    needs a core and Python's GIL: meanwhile no session of the process is read or written."""
    counts = dict.fromkeys(EVENT_LOOP_PARTS, 0)
    for line in stacks.read_text(errors="replace").splitlines():
        stack, _, n = line.rpartition(" ")
        frames = stack.split(";")
        if not n.isdigit() or not frames[0].endswith(": MainThread"):
            continue
        if any(f.startswith("Thread.start (") for f in frames):
            part = EVENT_LOOP_PARTS[0]
        elif frames[-1].startswith("EpollSelector.select ("):
            part = EVENT_LOOP_PARTS[1]
        else:
            part = EVENT_LOOP_PARTS[2]
        counts[part] += int(n)
    return list(counts.items())


def top_frames(stacks: Path, n: int = 12) -> list[tuple[str, int]]:
    """The ``n`` innermost functions with the most samples, waiting ones left out."""
    counts: Counter[str] = Counter()
    for line in stacks.read_text(errors="replace").splitlines():
        stack, _, k = line.rpartition(" ")
        leaf = stack.rsplit(";", 1)[-1]
        if k.isdigit() and not any(w in leaf for w in WAITING):
            counts[leaf] += int(k)
    return counts.most_common(n)


class ProfiledSteps:
    """A ``server_load.Probe``-like pair of hooks that records one session's Steps with py-spy."""

    def __init__(self, pid: int):
        self.pid, self.recorder, self.stacks = pid, None, None

    def before(self) -> None:
        self.recorder = start(self.pid)
        time.sleep(1.0)  # py-spy attaches; a single-session run has nothing else to do meanwhile

    def after(self, steps: int) -> None:
        self.stacks = finish(self.recorder)
