"""Every text box in the app refuses 10 MB politely and cheaply (issue 48): the box takes at most its limit, a
longer text is refused with a sentence saying so, nothing is computed from it, and the run costs under a second
of CPU (a 10 MB prompt once cost a replica 41–86 s)."""

import re
import time

import pytest

from bench.fresh_app import new_app
from ui import cache_demo, frame, memory_sections, memory_terms, see_it_move
from ui.classroom import keys as class_keys
from ui.decode import keys as decode_keys

TEN_MB = "x" * 10_000_000


def _boxes(at):
    """Every text input and text area on the page (main area and sidebar), by key."""
    return [w for w in [*at.text_input, *at.text_area] if w.key]


def _pages_with_boxes() -> list[tuple[str, str]]:
    """(page script, box key) for every text box the page draws on opening, including the sidebar's."""
    found, seen = [], set()
    for path, _, _ in frame.PAGES:
        at = new_app(path)
        found += [(path, w.key) for w in _boxes(at) if w.key not in seen]  # the sidebar's box: once
        seen |= {w.key for w in _boxes(at)}
    return found


def _limit(warnings) -> int:
    """The limit the page's refusal states ("This box takes at most 100,000 characters")."""
    said = next(w for w in warnings if "takes at most" in w)
    return int(re.search(r"at most ([\d,]+) characters", said).group(1).replace(",", ""))


CASES = _pages_with_boxes()
CONFIG_BOX = "From a config.json (paste or upload)"  # the memory page's preset that shows the paste box


def test_the_sweep_finds_the_boxes():
    """The sweep reads the app: the decode prompt, the cache page's four boxes and See it move's prompt are in it."""
    keys = {key for _, key in CASES}
    expected = {
        decode_keys.DECODE_PROMPT,
        cache_demo.CACHE_PROMPT,
        cache_demo.CACHE_TEXT,
        cache_demo.CACHE_EDITED,
        see_it_move.SEE_PROMPT,
    }
    assert expected <= keys and cache_demo.CACHE_TRANSCRIPT in keys and class_keys.CLASS_PAIR_TYPED in keys


@pytest.mark.parametrize(("path", "key"), CASES, ids=[f"{p.split('/')[-1]}:{k}" for p, k in CASES])
def test_ten_megabytes_are_refused_politely_in_under_a_second(path, key):
    """10 MB typed (or sent) into the box: the server keeps one character past the limit, the page says the box
    takes at most its limit and computes nothing from it, without a traceback, in under a second of CPU."""
    at = new_app(path)
    [box] = [w for w in _boxes(at) if w.key == key]
    box.set_value(TEN_MB)
    cpu = time.process_time()
    if box.proto.form_id:  # a form sends its boxes with its submit button
        [submit] = [b for b in at.button if b.proto.form_id == box.proto.form_id]
        submit.click()
    at.run()
    cpu = time.process_time() - cpu
    assert not at.exception, at.exception
    assert len(at.session_state[key]) == box.max_chars < 10_000_000  # cut on the server
    limit = _limit([w.value for w in at.warning])
    assert limit < box.max_chars  # a paste past the limit reaches the page, to be refused in words
    assert cpu < 1.0, f"{cpu:.2f} s of CPU"


def test_a_pasted_config_of_ten_megabytes_is_refused_politely():
    """The memory page's paste box (shown for a config.json) refuses 10 MB the same way, reading nothing."""
    at = new_app("app_pages/memory.py")
    at.selectbox(key=memory_terms.MEMORY_PRESET).set_value(CONFIG_BOX).run()
    box = at.text_area(key=memory_sections.MEMORY_PASTED)
    box.set_value(TEN_MB)
    cpu = time.process_time()
    at.run()
    cpu = time.process_time() - cpu
    assert not at.exception and not at.error, (at.exception, at.error)
    assert _limit([w.value for w in at.warning]) == 200_000
    assert cpu < 1.0, f"{cpu:.2f} s of CPU"
