"""Reading a JSON object's fields into typed values (``core.classroom.plan``'s ``from_json``): each
check returns the value as the dataclass keeps it or raises a ValueError whose plain message names the
field ("plan.request.top_k: expected a whole number ≥ 0, got "x"")."""

from __future__ import annotations

import json
import math


def fail(where: str, want: str, got) -> ValueError:
    """The refusal of field ``where``: what it should be and (clipped, as JSON) what it was."""
    return ValueError(f"{where}: expected {want}, got {json.dumps(got, default=repr)[:60]}")


def want_text(where: str, value, choices: tuple[str, ...] = (), optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or (choices and value not in choices):
        raise fail(where, " or ".join(f'"{c}"' for c in choices) if choices else "text", value)
    return value


def want_whole(where: str, value, low: int = 0, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise fail(where, f"a whole number ≥ {low}", value)
    return value


def want_choice(where: str, value, choices: tuple[int, ...]) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value not in choices:
        raise fail(where, " or ".join(map(str, choices)), value)
    return value


def want_number(where: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise fail(where, "a number", value)
    return float(value)


def want_flag(where: str, value) -> bool:
    if not isinstance(value, bool):
        raise fail(where, "true or false", value)
    return value


def want_items(where: str, value, item) -> tuple:
    if not isinstance(value, list | tuple):
        raise fail(where, "a list", value)
    return tuple(item(f"{where}[{i}]", v) for i, v in enumerate(value))


def want_object(where: str, data) -> dict:
    if not isinstance(data, dict):
        raise fail(where, "an object", data)
    return data
