"""Real browser: the cache page on a projector (1920×1080, ?present=1): the validity table shows every column."""

import pytest

from bench.browser import browser_page, running_app, screenshot, wait_idle

pytestmark = pytest.mark.browser

# The validity table: the box of its element (a table or a data grid) and of the page's main column, the widths
# its content needs and has, and the right edge of the text "reuse the reference cache?" wherever it is drawn.
TABLE_JS = """() => {
  const head = [...document.querySelectorAll('[data-testid=stMain] th, [data-testid=stMain] [role=columnheader]')]
    .find((e) => e.textContent.includes('reuse the reference cache?'));
  if (!head) return null;
  const table = head.closest('[data-testid=stTable], [data-testid=stDataFrame]');
  table.scrollIntoView({block: 'center'});
  const block = table.parentElement.getBoundingClientRect();
  const scroller = table.querySelector('.dvn-scroller') || table.querySelector('table').parentElement;
  return {head: head.getBoundingClientRect().right, right: table.getBoundingClientRect().right,
          block: block.right, need: scroller.scrollWidth, has: scroller.clientWidth};
}"""


def test_the_validity_tables_last_column_is_whole_on_a_projector():
    """At 1920×1080 in presenter mode the last column, 'reuse the reference cache?', lies inside the table and the
    table inside the page's column, with no width scrolled out of view (a data grid cut it: 'reuse the refere…')."""
    with running_app() as url, browser_page(1920, 1080) as page:
        page.goto(f"{url}/cache?present=1")
        page.wait_for_function(TABLE_JS.replace("return {", "return !!{"), timeout=120000)
        wait_idle(page, 120000)
        boxes = page.evaluate(TABLE_JS)
        screenshot(page, "cache-validity-table-presenter")
    assert boxes["head"] <= boxes["right"] + 1 and boxes["right"] <= boxes["block"] + 1, boxes
    assert boxes["need"] <= boxes["has"] + 1, boxes
