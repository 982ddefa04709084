"""Real browser: a student's Practice attempts survive a reload and exercises opened from their shared addresses in
the same browser (each a new session on the server), so the handout holds them all (issue 50: three exercises done
that way gave a handout with only the last); another browser gets none of them."""

import re

import pytest

from bench.browser import browser_page, rerun, running_app, wait_app_style, wait_idle

pytestmark = pytest.mark.browser

# (shared address, answer box, what the student types): Ch. 30 exercises 1, 2 and 3 with the chapter's numbers.
DONE = (
    ("practice?ex=ch30-1&numbers=0", "TTFT", "110 ms"),
    ("practice?ex=ch30-2&numbers=0", "Cached positions after prefill", "10"),
    ("practice?ex=ch30-3&numbers=0", "Ideal total cache", "768 MiB"),
)


@pytest.fixture(scope="module")
def url():
    with running_app() as u:
        yield u


def _open(page, address: str, checked: int) -> None:
    """Open ``address`` (a new session) and wait until its tally counts the ``checked`` answers this browser kept."""
    page.goto(address)
    page.get_by_role("button", name="Check").wait_for(timeout=120000)
    wait_app_style(page)
    page.get_by_text(re.compile(rf": {checked} checked")).wait_for(timeout=60000)
    wait_idle(page, 120000)


def _check(page, label: str, typed: str) -> None:
    page.get_by_role("textbox", name=label).fill(typed)
    with rerun(page):
        page.get_by_role("button", name="Check").click()


def _handout(page) -> str:
    with page.expect_download(timeout=60000) as download:
        page.get_by_role("button", name=re.compile("Download handout")).click()
    return open(download.value.path(), encoding="utf-8").read()


def test_attempts_from_shared_addresses_and_a_reload_all_reach_the_handout(url):
    """Three exercises, each opened from its shared address in the same tab (a new session each time), a reload
    after the second: each new session's tally counts the checks made before it (after the reload the box shows
    its answer again), and the downloaded handout lists all three exercises with the typed answers. A new browser
    (another context) starts with none of them."""
    with browser_page(1280, 800) as page:
        for i, (address, label, typed) in enumerate(DONE):
            _open(page, f"{url}/{address}", i)  # the answers checked before, back in this new session
            _check(page, label, typed)
            if i == 1:
                page.reload()
                _open(page, page.url, i + 1)
                assert page.get_by_role("textbox", name=label).input_value() == typed  # the box as it was left
        html = _handout(page)
        tally = page.get_by_text(re.compile(r": 3 checked")).count()  # the page's tally: the three, checked here
    titles = ["Exercise 1: TTFT, gaps, TPOT", "Exercise 2: when a token enters the cache", "Exercise 3: fewer KV"]
    assert all(t in html for t in titles), [t for t in titles if t not in html]
    assert all(f"<code>{typed}</code>" in html for _, _, typed in DONE)
    assert tally == 1

    with browser_page(1280, 800, fresh=True) as other:  # another browser: its own storage
        _open(other, f"{url}/practice?ex=ch30-1&numbers=0", 0)
        assert "<code>110 ms</code>" not in _handout(other)
