"""The ruler figure's words and marks, band by band, as Ch. 19 "Shrinking the numbers" draws it:

- top band: the number line with a tick on every shelf and the shelf number (the stored integer)
  beneath it, the value at both ends and at 0, and the title "the 4-bit ruler — 16 possible stored
  values, spacing = scale = 0.1" (``chapter_title``, ``shelf_marks``);
- middle band: each value as a labelled dot dropping to its shelf, the stored integer beneath
  (``core.viz.ruler`` draws it from the ``Ruler``);
- bottom band: two storage pills for the first value, "32-bit: 0.3400000035… (4 bytes each)" →
  "4-bit: shelf 3, ruler times 0.1 (half a byte each)" (``pills``), and the caption ``CAPTION``.

Every band follows the ruler's bit width, scale and zero point. Shelf numbers stay readable: each tick
gets its number while neighbouring numbers have room, else every 2nd, 5th, 10th … tick (1-2-5 steps),
and the figure says so (``ShelfMarks.note``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import numpy as np

from core.quant.ruler import Ruler, shown
from core.text import ordinal, plural

CAPTION = "Fewer bits give fewer possible levels."  # Ch. 19, the figure's caption

# Room for shelf numbers: the ruler is drawn at least this wide (px of plot: a handout's page, the
# laptop's column), and a number needs (characters + 1) × CHAR_PX between its neighbour's and its own
# centre (a digit at the presenter's 20 px font is ~11 px wide; the laptop's 12 px font has more room).
PLOT_PX = 640
CHAR_PX = 11
MAX_STEP = 10**12  # beyond any 32-bit range: "label only shelf 0" when even this is too dense


def chapter_title(r: Ruler) -> str:
    """The figure's title in Ch. 19's words: "the 4-bit ruler — 16 possible stored values, spacing = scale =
    0.1" (2^b patterns, whether or not the format uses all of them: symmetric leaves one unused)."""
    return f"the {r.n_bit}-bit ruler — {2**r.n_bit:,} possible stored values, spacing = scale = {shown(r.scale)}"


def axis_range(r: Ruler) -> tuple[float, float]:
    """The ruler's value axis: every value, reconstruction and shelf, padded by a scale step."""
    ends = [r.x, r.x_hat] + ([] if r.levels is None else [r.levels])
    lo, hi = min(float(a.min()) for a in ends), max(float(a.max()) for a in ends)
    pad = max(r.scale, (hi - lo) * 0.05)
    return lo - pad, hi + pad


def shelf_text(q: int) -> str:
    """A shelf number as the ruler prints it: a minus sign, thousands separators ("−7", "−32,767")."""
    return f"{q:,}".replace("-", "−")


def label_step(chars: int, shelf_px: float) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50 … shelves between numbered ticks that leaves a number of
    ``chars`` characters room (``(chars + 1) × CHAR_PX``) when neighbouring shelves are ``shelf_px`` apart;
    ``MAX_STEP`` when none does (shelves packed tighter than a pixel)."""
    need = (chars + 1) * CHAR_PX
    step, k = 1, 0
    while step < MAX_STEP:
        if step * shelf_px >= need:
            return step
        k += 1
        step = (1, 2, 5)[k % 3] * 10 ** (k // 3)
    return MAX_STEP


@dataclass(frozen=True)
class ShelfMarks:
    """The top band's marks: ``ticks`` (x of every drawn shelf tick: all shelves when ``r.levels`` is
    drawn, else only the numbered ones); the plain shelf numbers ``numbers`` at ``numbered_x`` (every
    ``step``-th shelf; 1: every tick); the stored integers of the values, ``stored`` at ``stored_x`` in
    ``stored_row`` (0, or 1 when a stored number to its left is closer than ``gap``), drawn in place of
    the plain numbers within ``gap`` of them (none when more than ``LABELLED`` values: the table lists
    them); ``note``: what is left out, said ("" when nothing is)."""

    ticks: np.ndarray
    numbered_x: np.ndarray
    numbers: list[int]
    stored_x: np.ndarray
    stored: list[int]
    stored_row: list[int]
    step: int
    gap: float
    note: str


LABELLED = 30  # values labelled one by one on the figure (more: the table below it lists them)


def _visible_q(r: Ruler, lo: float, hi: float) -> tuple[int, int]:
    """The stored integers whose shelves fall inside the axis ``lo`` … ``hi`` (clamped to the format's range)."""
    with np.errstate(over="ignore", invalid="ignore"):
        a, b = lo / r.scale + r.zero_point, hi / r.scale + r.zero_point
    q_lo = r.qmin if not math.isfinite(a) else max(r.qmin, min(r.qmax, math.ceil(a)))
    q_hi = r.qmax if not math.isfinite(b) else max(r.qmin, min(r.qmax, math.floor(b)))
    return q_lo, q_hi


def label_rows(every: np.ndarray, these: np.ndarray, near: float) -> list[int]:
    """The row (0 or 1) of a label at each of ``these`` positions: 0, or 1 when the nearest label to its left
    (over ``every`` position, in order) is on row 0 and closer than ``near``: side by side they ran together."""
    row, prev = {}, None
    for x in np.unique(every):
        # Python floats: 1.7e308 − (−1.7e308) is inf without numpy's overflow warning in the log
        row[x] = 1 if prev is not None and float(x) - float(prev) < near and row[prev] == 0 else 0
        prev = x
    return [row[x] for x in these]


def text_width(r: Ruler, chars: int) -> float:
    """The width in value units of a label of ``chars`` characters (and a character's room) on the ruler's axis;
    0 when the axis has no finite span."""
    lo, hi = axis_range(r)
    with np.errstate(over="ignore"):
        span = hi - lo
    return (chars + 1) * CHAR_PX / PLOT_PX * span if math.isfinite(span) and span > 0 else 0.0


def text_positions(r: Ruler, xs, widths) -> list[str]:
    """Where each value label sits against its dot: centred, or to the dot's left (right) when centred it would
    run past the axis's right (left) end: "8 (clipped)" at the last value was cut to "8 (clipped"."""
    lo, hi = axis_range(r)
    out = []
    for x, w in zip(xs, widths, strict=True):
        out.append("middle left" if x + w / 2 > hi else "middle right" if x - w / 2 < lo else "middle center")
    return out


def _stored_rows(stored_x, plain_x, gap: float) -> tuple[list[int], list[float]]:
    """Rows of the stored integers: row 0 beside the plain shelf numbers, row 1 when one would run into a plain
    number or a stored one to its left on row 0; returns the rows and the row-0 positions that still crowd a plain
    number (those plain numbers are left out: a stored number with no room on either row keeps row 0)."""
    rows, row0, row1, crowding = [], [], [], []
    for x in stored_x:
        near_plain = any(abs(x - p) < gap for p in plain_x)
        if not near_plain and not any(abs(x - s) < gap for s in row0):
            rows.append(0)
            row0.append(x)
        elif not any(abs(x - s) < gap for s in row1):
            rows.append(1)
            row1.append(x)
        else:
            rows.append(0)
            row0.append(x)
            crowding.append(x)
    return rows, crowding


def shelf_marks(r: Ruler) -> ShelfMarks:
    """Which shelves get a tick and which a number, so that the numbers never run together (see
    ``label_step``): all of them at the chapter's 15 shelves over 0.7 on each side, every 20th of
    8-bit's 255 there; with more shelves than the ruler draws (16 bits: 65,535), a numbered tick on every
    ``step``-th shelf only, and the note says so. The values' stored integers are numbered on their
    shelves whatever the step, the plain numbers next to them left out."""
    lo, hi = axis_range(r)
    q_lo, q_hi = _visible_q(r, lo, hi)
    chars = max(len(shelf_text(q)) for q in (q_lo, q_hi, *((int(r.q.min()), int(r.q.max())) if r.q.size else ())))
    with np.errstate(over="ignore"):
        span = hi - lo
    finite = math.isfinite(span) and span > 0
    step = label_step(chars, PLOT_PX * r.scale / span if finite else 0.0)
    gap = (chars + 1) * CHAR_PX / PLOT_PX * span if finite else 0.0
    stored_q, stored_x, rows = [], np.array([]), []
    if len(r.x) <= LABELLED:
        pairs = sorted({(float(xh), int(q)) for xh, q in zip(r.x_hat, r.q, strict=True)})
        stored_x = np.array([xh for xh, _ in pairs])
        stored_q = [q for _, q in pairs]
    first = math.ceil(q_lo / step) * step
    shown = set(stored_q)
    plain = [q for q in range(first, q_hi + 1, step) if q not in shown]  # a stored number shows its own
    x_of = {q: r.scale * (q - r.zero_point) for q in plain}
    # The stored integers step down a row rather than hide a plain number (the outlier case hid 2 and 6).
    rows, crowding = _stored_rows(stored_x, [x_of[q] for q in plain], gap)
    plain = [q for q in plain if not any(abs(x_of[q] - x) < gap for x in crowding)]
    n = r.qmax - r.qmin + 1
    numbered_x = np.array([x_of[q] for q in plain], dtype=np.float64)
    if r.levels is None:
        ticks = np.array(
            sorted({*x_of.values(), *(x for x, q in zip(stored_x, stored_q, strict=True) if r.qmin <= q <= r.qmax)})
        )
        note = f"{n:,} shelves, too close to draw: a tick on every {nth(step)}, numbered where there is room"
    else:
        ticks = r.levels
        note = (
            "" if step == 1 else f"{n:,} shelves: a number on every {nth(step)} tick, so that the numbers stay readable"
        )
    return ShelfMarks(ticks, numbered_x, plain, stored_x, stored_q, rows, step, gap, note)


def nth(step: int) -> str:
    """ "2nd", "10th", "10,000th": an ordinal with thousands separators."""
    return f"{step:,}{ordinal(step)[len(str(step)) :]}"


def end_values(r: Ruler) -> list[float] | None:
    """Where the number line is labelled with values: its two ends and 0 ("−0.7, 0, +0.7" in the chapter);
    None when the shelves are too many to draw (the axis's own round ticks then)."""
    if r.levels is None:
        return None
    return sorted({float(r.levels[0]), 0.0, float(r.levels[-1])})


def value_text(v: float) -> str:
    """A value on the ruler: six significant digits, a minus sign ("−0.12", "0.7")."""
    return f"{v:.6g}".replace("-", "−")


# ---- the bottom band: what one value costs, as float32 and as a shelf number ------------------------


def float32_text(x: float) -> tuple[str, str]:
    """``x`` as float32 holds it: (the shortest decimal that reads back as that float32 in float64,
    "0.3400000035762787"; the exact decimal, "0.3400000035762786865234375"). Past float32's largest
    finite value (3.4028235 × 10³⁸) float32 holds ±inf: said so."""
    with np.errstate(over="ignore"):
        f = np.float32(x)
    if not np.isfinite(f):
        return "beyond float32's range (±3.4 × 10³⁸)", "float32 would hold ±infinity"
    return repr(float(f)).replace("-", "−"), f"float32 holds exactly {Decimal(float(f))}".replace("-", "−")


def per_value(n_bit: int) -> str:
    """Bytes per stored value in words: "4 bytes each", "half a byte each", "3/8 of a byte each"."""
    b = Fraction(n_bit, 8)
    if b.denominator == 1:
        return f"{plural(int(b), 'byte')} each"
    words = {2: "half a byte", 4: "a quarter of a byte", 8: "an eighth of a byte"}
    return (words[b.denominator] if b.numerator == 1 else f"{b.numerator}/{b.denominator} of a byte") + " each"


@dataclass(frozen=True)
class Pill:
    """One storage pill: its ``text`` and ``hover`` (what the short text leaves out)."""

    text: str
    hover: str


def pills(r: Ruler) -> tuple[Pill, Pill]:
    """The bottom band for the first value: "32-bit: 0.3400000035762787 (4 bytes each)" → "4-bit: shelf 3,
    ruler times 0.1 (half a byte each)" (affine: "shelf 12, (12 − 8) times 0.1"). The hovers give the
    exact float32 decimal and the rebuilt value."""
    x, q, x_hat = float(r.x[0]), int(r.q[0]), float(r.x_hat[0])
    f32, exact = float32_text(x)
    first = Pill(f"32-bit: {f32} ({per_value(32)})", f"{value_text(x)} as a 32-bit float: {exact}")
    s, q_text = shown(r.scale), shelf_text(q)
    times = f"ruler times {s}" if r.symmetric else f"({q_text} − {r.zero_point}) times {s}"
    rebuilt = f"{q_text} × {s}" if r.symmetric else f"({q_text} − {r.zero_point}) × {s}"
    second = Pill(
        f"{r.n_bit}-bit: shelf {q_text}, {times} ({per_value(r.n_bit)})",
        f"{value_text(x)} stored as shelf {q_text}; rebuilt as {rebuilt} = {value_text(x_hat)}",
    )
    return first, second
