"""The teacher moves a page's settings and the class follows (``settings_phase``, issue 54): on the ruler
(``app_pages/quantize.py``) the console types a scale into *s, exactly*; on the memory page it picks another
*Model shape*. Before the first move on a page every follower has drawn it and gone quiet (the lesson phase times moves
between pages). After each move every follower is timed from the console's change to its page drawing the same
sentence the console's page drew for it (the ruler's "Rounding bound s/2 = …", the memory page's "<shape> — …
query heads" caption), and counted when no full run of its page came with it (the page's fragment ran alone)."""

from __future__ import annotations

import re

from bench.class_mode.page import now
from bench.class_mode.tab import TIMEOUT_S, Tab, until

SCALES = (0.05, 0.2, 0.01)  # the ruler's scale, typed into "s, exactly"
RULER = re.compile(r"Rounding bound s/2 = \S+")
SHAPE = re.compile(r"^.+? — .+ query heads")  # the memory page's caption under Model shape
OTHER_SHAPES = ("From a config.json", "Your own")  # a pasted file and typed terms: not a preset to pick


def said(tab: Tab, pattern: re.Pattern, after: float) -> list[tuple[float, str]]:
    """(time, match) for each text ``tab``'s page drew at or after ``after`` that matches ``pattern``."""
    return [(t, m.group(0)) for t, body in tab.texts if t >= after and (m := pattern.search(body))]


async def settings_phase(lesson) -> list[dict]:
    """The ruler's scale moved three times, then the memory page's model shape: one dict per move (page,
    setting, followers, their latencies in ms, the ones that showed it)."""
    t = lesson.teacher
    moves: list[dict] = []
    if not await _arrive(lesson, "quantize", lambda: "s, exactly" in t.numbers, RULER):
        return moves
    for scale in SCALES:
        wid, fragment = t.numbers["s, exactly"]

        def typed(w, wid=wid, scale=scale):
            w.id, w.double_value = wid, scale

        send = lambda fragment=fragment, typed=typed: t.send(fragment, [typed])  # noqa: E731
        moves.append(await _move(lesson, "quantize", f"scale {scale:g}", RULER, send))
    if not await _arrive(lesson, "memory", lambda: "Model shape" in t.selects, SHAPE):
        return moves
    options = [o for o in t.selects["Model shape"][2] if not o.startswith(OTHER_SHAPES)]
    for option in options[1:3] + options[:1]:
        wid, fragment, _ = t.selects["Model shape"]

        def picked(w, wid=wid, option=option):
            w.id, w.string_value = wid, option

        send = lambda fragment=fragment, picked=picked: t.send(fragment, [picked])  # noqa: E731
        moves.append(await _move(lesson, "memory", option, SHAPE, send))
    return moves


async def _arrive(lesson, page: str, ready, pattern: re.Pattern) -> bool:
    """The console opens ``page`` and waits until its control is drawn (``ready()``), its run is over and every
    follower drew the page's sentence and went quiet: a move of the settings is then timed alone, not behind the
    class's runs to the page (the lesson phase times those)."""
    t, errors = lesson.teacher, lesson.out.errors
    t0 = now()
    await t.navigate(f"class={lesson.code}", page=page)
    if not await until(f"the console's {page} page", ready, errors=errors):
        return False
    followers = lesson.followers()
    quiet = lambda: all(now() - s.last_message > 0.3 for s in (t, *followers))  # noqa: E731
    return await until(
        f"every follower on the {page} page", lambda: all(said(s, pattern, t0) for s in followers) and quiet(),
        2 * TIMEOUT_S, errors,
    )  # fmt: skip


async def _move(lesson, page: str, setting: str, pattern: re.Pattern, change) -> dict:
    t, errors = lesson.teacher, lesson.out.errors
    followers = lesson.followers()
    full_runs = {s.name: s.full_runs for s in followers}
    t0 = now()
    await change()
    if not await until(f"the console shows {setting}", lambda: said(t, pattern, t0), errors=errors):
        return {"page": page, "setting": setting, "followers": len(followers), "shown": 0, "ms": [], "alone": 0}
    await until("the console's run is over", lambda: now() - t.last_message > 0.3)
    sentence = said(t, pattern, t0)[-1][1]
    seen = lambda s: next((x for x, text in said(s, pattern, t0) if text == sentence), None)  # noqa: E731
    if not await until(f"every follower shows {setting}", lambda: all(seen(s) for s in followers), 2 * TIMEOUT_S):
        errors += [_missed(s, setting, sentence, pattern, t0) for s in followers if seen(s) is None]
    ms = [(x - t0) * 1000 for s in followers if (x := seen(s)) is not None]
    # the run that drew it has finished (its script_finished came): was it the page's fragment alone?
    await until("the followers' runs are over", lambda: all(now() - s.last_message > 0.3 for s in followers))
    alone = sum(seen(s) is not None and s.full_runs == full_runs[s.name] for s in followers)
    return {"page": page, "setting": setting, "followers": len(followers), "shown": len(ms), "ms": ms, "alone": alone}


def _missed(tab: Tab, setting: str, sentence: str, pattern: re.Pattern, t0: float) -> str:
    """Why a follower did not show the console's ``sentence``: what it drew instead, the pulses it handed over since
    the move (``t0``) and its state, so a miss can be told apart (no pulse, a pulse with no run, a run on the old
    settings)."""
    drew = [text for _, text in said(tab, pattern, 0.0)][-1:] or ["nothing"]
    handed = [text for t, text in tab.forwarded if t >= t0]
    return (
        f"{tab.name} did not show {setting} ({sentence!r}); it last drew {drew[0]!r}; pulses handed over since the "
        f"move: {handed}; {tab.state()}"
    )
