// Lesson mode: on arriving at a stop, scroll the page's main figure fully into view below the
// lesson bar (which stays at the top: position sticky). Presenter pages are taller than a
// projector's screen; the figure is what the class should see. Runs once per arrival (a number
// that ui/lesson.py counts up on every move); it stops as soon as the learner scrolls, clicks or
// types, or another page opens.
//
// The main figure is the page's first plotly figure, the decode stage's heatmap, or the Practice
// page's form — or, where a page marks one (a container keyed "lesson-focus"), the figure together
// with the numbers a stop's question asks about (the latency page: the timeline and its table).
// Figures draw and resize for a while after a page switch: whenever the target's box has stayed the
// same for a moment and is not wholly visible, scroll as little as needed. A figure not drawn yet is waited for.

const MAIN = [".st-key-lesson-focus", ".js-plotly-plot", ".attn-root", '[data-testid="stForm"]']
  .map((s) => '[data-testid="stMain"] ' + s)
  .join(", ");
const WATCH_MS = 12000;
const TICK_MS = 200;
const WAIT_MS = 300000; // a figure that has not appeared within five minutes is not waited for

function follow(arrival, page) {
  // The figure may not exist yet: on a loaded machine a stop's figure appeared 13.5 s after the click (issue 37,
  // item 9), after a fixed wait had given up. Until it is in the page, a MutationObserver waits for it (no clock
  // runs out); from its first sight WATCH_MS is counted, again from the first scroll (the rows above it can still
  // grow after it is scrolled into view), and again whenever another element takes its place (the last page's
  // figure, still on screen while this page runs, is replaced by this one's).
  let deadline = null;
  let seen = null;
  const main = document.querySelector('[data-testid="stMain"]');
  let touched = false;
  const stop = () => (touched = true);
  const events = ["wheel", "touchmove", "mousedown", "keydown"];
  events.forEach((e) => document.addEventListener(e, stop, { once: true, passive: true }));
  const started = Date.now();
  let observer = null;
  const done = () => {
    events.forEach((e) => document.removeEventListener(e, stop));
    if (observer) observer.disconnect();
  };
  const over = () =>
    touched || window.__lessonArrival !== arrival || window.__lessonPage !== page || Date.now() - started > WAIT_MS;
  let last = null;
  let still = 0;
  let first = true;
  const tick = () => {
    if (over() || (deadline !== null && Date.now() > deadline)) return done();
    const el = document.querySelector(MAIN);
    if (!el) {
      // Not drawn yet: wait for the page to change, then look again (a tick each 200 ms would poll for minutes).
      last = null;
      still = 0;
      observer = observer || new MutationObserver(() => {
        if (over()) return done();
        if (!document.querySelector(MAIN)) return;
        observer.disconnect();
        observer = null;
        tick();
      });
      observer.observe(document.body, { childList: true, subtree: true });
      return;
    }
    if (el !== seen) {
      seen = el;
      deadline = Date.now() + WATCH_MS;
    }
    const box = el.getBoundingClientRect();
    const key = box.height > 0 ? [box.top, box.height].map(Math.round).join(",") : null;
    still = key !== null && key === last ? still + 1 : 0;
    last = key;
    if (still >= 3) {
      const bar = document.querySelector(".st-key-lesson-bar");
      const top = bar ? Math.round(bar.getBoundingClientRect().bottom) + 8 : 0;
      const bottom = main ? main.getBoundingClientRect().bottom : window.innerHeight;
      if (first || box.top < top || box.bottom > bottom) {
        if (first && main) main.scrollTop = 0; // a page switch keeps the last page's scroll
        if (first) deadline = Date.now() + WATCH_MS;
        first = false;
        el.style.scrollMarginTop = top + "px";
        el.style.scrollMarginBottom = "8px";
        el.scrollIntoView({ block: "nearest", behavior: "instant" });
        if (main) uncut(main, el, top, bottom);
        last = null;
      }
    }
    setTimeout(tick, TICK_MS);
  };
  tick();
}

// The page's rows at any depth (a row of number boxes, a caption, a figure, a fragment's rows).
const ROWS = '[data-testid="stMain"] [data-testid="stVerticalBlock"] > *';

// After the figure is in view, rows of the page may sit half under the bar: their boxes show, their
// labels are hidden (a helper saw 32, 8, 128 without "L", "H_kv", "d"). Scroll on until those rows
// are wholly under the bar, or back until they are wholly below it, whichever keeps the figure on
// screen. A row holding the figure (a fragment, columns around it) is not one of them.
function uncut(main, el, top, bottom) {
  const fig = el.getBoundingClientRect();
  const edge = top - 8; // the bar's bottom edge
  const cut = [...document.querySelectorAll(ROWS)]
    .filter((row) => !row.querySelector(".st-key-lesson-bar") && !row.contains(el))
    .map((row) => row.getBoundingClientRect())
    .filter((r) => r.height > 0 && r.top < edge && r.bottom > edge);
  if (!cut.length) return;
  const down = Math.max(...cut.map((r) => r.bottom)) - edge;
  const up = top - Math.min(...cut.map((r) => r.top));
  if (fig.top - down >= top) main.scrollTop += down;
  else if (fig.bottom + up <= bottom) main.scrollTop -= up;
}

// A lesson started from the sidebar: close it, as the teacher would, so the lesson gets the whole
// screen (open, it left the page ~600 px at 1280 presenting). Streamlit's own button, so the choice
// is remembered as if clicked; the sidebar's » opens it again.
function closeSidebar() {
  const sel = '[data-testid="stSidebar"][data-collapsed="false"] button[aria-label="Collapse sidebar"]';
  const button = document.querySelector(sel);
  if (button) button.click();
}

export default function (component) {
  const { data } = component;
  if (!data) return;
  if (data.closeSidebar) closeSidebar();
  const moved = window.__lessonPage !== undefined && window.__lessonPage !== data.page;
  window.__lessonPage = data.page;
  if (window.__lessonArrival === data.arrival) {
    // Another page opened through the top bar (no move between stops): start it at its top, not
    // at the scroll the last page had.
    const main = document.querySelector('[data-testid="stMain"]');
    if (moved && main) main.scrollTop = 0;
    return;
  }
  window.__lessonArrival = data.arrival;
  follow(data.arrival, data.page);
}
