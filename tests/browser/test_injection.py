"""Real browser: typed markup is shown literally and never runs."""

import pytest

from bench.browser import browser_page, heatmap_rows, running_app, screenshot, wait_idle, wait_rows

pytestmark = pytest.mark.browser

EVIL = "<b>bold</b> <a href=javascript:alert(1)>x</a> <img src=x onerror=alert(2)> &amp; **md** [l](http://x)"


def test_typed_markup_stays_literal_and_inert():
    """Prefill and step on a prompt full of HTML and markdown: no dialog, no <b>/<img>/<a> element is
    created from it, and the heatmap labels and the text box hold the literal characters."""
    with running_app() as url, browser_page() as page:
        dialogs = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(url)
        box = page.get_by_role("textbox", name="Prompt")
        box.fill(EVIL)
        box.press("Control+Enter")
        page.get_by_role("button", name="Prefill").last.click()
        page.wait_for_function("() => document.querySelectorAll('.js-plotly-plot').length >= 2", timeout=30000)
        n = heatmap_rows(page)
        page.get_by_role("button", name="Step ▸").click()
        wait_rows(page, n + 1)
        wait_idle(page)
        assert dialogs == []
        # No element was created from the typed markup anywhere in the app.
        assert page.locator("img[src='x']").count() == 0
        assert page.locator("a[href^='javascript']").count() == 0
        assert page.locator("[data-testid='stMain'] b:text('bold')").count() == 0
        # The key labels drawn show the literal characters (position 0 is always labelled) ...
        ticks = page.evaluate(
            "() => [...document.querySelectorAll('.attn-root .xtick text')].map(t => t.textContent).join(' ')"
        )
        assert "0: <" in ticks and "&lt;" not in ticks and "&amp;" not in ticks  # literal, not double-escaped
        # ... because every label reaches plotly escaped exactly once (the '&' token as '&amp;').
        labels = page.evaluate("() => document.querySelector('.attn-root .js-plotly-plot').layout.yaxis.ticktext")
        assert "0: &lt;" in labels and any(label.endswith(": &amp;") for label in labels)
        # The whole text below the stage, and the one-line text beside Step (its tail), literal too.
        code = page.locator(".st-key-stage-fulltext").get_by_test_id("stCode").inner_text()
        assert code.startswith(EVIL) and "**md** [l](http://x)" in page.get_by_test_id("stCode").first.inner_text()
        assert page.get_by_test_id("stException").count() == 0
        screenshot(page, "injection-literal")


def test_a_refusal_quotes_typed_text_as_typed():
    """The ruler's values box holds '**1**[l](http://e.com)\\*, 2': the refusal quotes the first
    entry with its asterisks, its brackets and one backslash, and no link is made of the address
    (escaping alone left markdown's bare-address links live)."""
    with running_app() as url, browser_page() as page:
        page.goto(f"{url}/quantize")
        box = page.locator("textarea").first
        box.wait_for(timeout=30000)
        box.fill("**1**[l](http://e.com)\\*, 2")
        box.press("Control+Enter")
        alert = page.get_by_test_id("stAlertContentError").first
        alert.wait_for(timeout=30000)
        text = alert.inner_text().replace("\u2060", "")
        screenshot(page, "refusal-literal")
        assert "'**1**[l](http://e.com)\\*'" in text and "is not a number" in text, text
        assert alert.locator("a").count() == 0 and alert.locator("strong, em").count() == 0


def test_an_over_long_pasted_answer_arrives_and_is_explained():
    """A practice box took at most 120 characters: a longer paste put nothing in it and Check said "Type at least
    one answer" (a helper found it). The box now takes the paste and Check says how long it is; the other box's
    answer is still marked."""
    with running_app() as url, browser_page() as page:
        page.goto(f"{url}/practice")
        ttft = page.get_by_role("textbox", name="TTFT")
        ttft.wait_for(timeout=60000)
        ttft.click()
        page.keyboard.insert_text("1" * 150)  # what a paste does
        page.get_by_role("textbox", name="TPOT").fill("55 ms")
        page.get_by_role("button", name="Check").click()
        page.get_by_text("that is 150 characters").wait_for(timeout=30000)
        assert len(ttft.input_value()) == 150
        screenshot(page, "practice-long-paste")
        page.get_by_text("1 checked · 1 right · 1 couldn't be read").wait_for(timeout=30000)
