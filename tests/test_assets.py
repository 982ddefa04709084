"""The shipped model's weights are memory-mapped from safetensors, so processes share them."""

import subprocess
import sys
from pathlib import Path

from core.model.shipped import ASSETS, load_model

WEIGHTS = str(ASSETS / "model.safetensors")
# A child process: load the model, read every weight (so every page is mapped in), then wait.
CHILD = (
    "import sys; from core.model.shipped import load_model; m = load_model(); "
    "print(sum(float(p.sum()) for p in m.parameters()), flush=True); sys.stdin.read()"
)


def file_mappings(pid: str = "self") -> list[tuple[int, int, dict[str, int]]]:
    """(start, end, {Rss, Pss in kB}) of every mapping of model.safetensors in /proc/<pid>/smaps."""
    out, current = [], None
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        parts = line.split()
        if "-" in parts[0] and not parts[0].endswith(":"):
            current = None
            if parts[-1] == WEIGHTS:
                start, end = (int(x, 16) for x in parts[0].split("-"))
                current = {}
                out.append((start, end, current))
        elif current is not None and parts[0] in ("Rss:", "Pss:"):
            current[parts[0][:-1]] = int(parts[1])
    return out


def test_float32_parameters_point_into_the_mapped_file():
    """Every float32 parameter's data lies inside a mapping of assets/model.safetensors (no copy)."""
    model = load_model()
    ranges = [(start, end) for start, end, _ in file_mappings()]
    assert ranges
    for name, p in model.named_parameters():
        ptr = p.data_ptr()
        assert any(start <= ptr and ptr + p.numel() * p.element_size() <= end for start, end in ranges), name


def test_two_processes_share_the_weight_pages():
    """Two processes that each load the model and read every weight: each maps the whole file
    (≥ 3.8 MB resident) and its proportional share (PSS) is about half of that, not all of it."""
    root = Path(__file__).resolve().parents[1]
    kids = [
        subprocess.Popen([sys.executable, "-c", CHILD], cwd=root, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        for _ in range(2)
    ]
    try:
        sums = [float(k.stdout.readline()) for k in kids]
        assert sums[0] == sums[1]
        for k in kids:
            rss = sum(m["Rss"] for _, _, m in file_mappings(str(k.pid)))
            pss = sum(m["Pss"] for _, _, m in file_mappings(str(k.pid)))
            assert rss >= 3_800  # kB: the 4,006,168-byte file, all of it read
            assert pss <= 0.6 * rss
    finally:
        for k in kids:
            k.kill()
            k.wait()
