// The presenter's clicker, whatever control was touched last (issue 37). Installed once per browser
// tab by a hidden component (ui/lesson.py: the lesson bar, and the decode page): one keydown listener
// on the window in the capture phase, so it sees a key before any control does.
//
// - PageDown / PageUp (what clickers send) always go to the lesson's next / previous stop; on the
//   decode page without a lesson PageDown is Step.
// - → / ← are the next / previous stop in a lesson; on the decode page → is Step and ← still the previous stop (an
//   arrow-key clicker can always go back); P and K are
//   Prefill and Play there. A control keeps them while it is being operated: typing in a text box, a
//   slider or a radio group moved by keyboard, a select box whose list is open.
// - A control hands the clicker back by itself once its value is committed by the pointer (an option
//   chosen, a slider let go, a radio or toggle clicked), by Enter in a text or number box or by Ctrl+Enter in a
//   text area (the prompt box): it is blurred. Escape blurs a control that has the focus.
// - Every press counts: a press while the page's script runs is queued and applied, in order, when
//   it is idle (streamlit dropped a click on a bar that was being redrawn). The buttons' callbacks
//   move relative to the stop on the server, so a press never repeats a move already made.

const BUTTONS = {
  next: ".st-key-lesson-next button",
  prev: ".st-key-lesson-prev button",
  step: ".st-key-stage-step button",
  prefill: ".st-key-decode-prefill button",
  play: ".st-key-decode-play button",
};
const TEXT_TYPES = new Set(["text", "number", "search", "email", "password", "url", "tel", ""]);
const IDLE_AFTER_CLICK_MS = 3000; // a click that started no run (a disabled or vanished button) frees the queue

const typing = (el) =>
  !!el &&
  (el.isContentEditable ||
    el.tagName === "TEXTAREA" ||
    (el.tagName === "INPUT" && TEXT_TYPES.has(el.type) && el.getAttribute("role") !== "combobox"));
const listOpen = (el) =>
  (!!el && el.getAttribute("aria-expanded") === "true") || !!document.querySelector('[role="listbox"]');
const isControl = (el) =>
  !!el && el !== document.body && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT");

function scriptState() {
  const app = document.querySelector("[data-test-script-state]");
  return app ? app.getAttribute("data-test-script-state") : "notRunning";
}

// A box committed by Enter and not typed in (or clicked into) since: it no longer keeps the arrow keys, even if a
// redraw handed the focus back to it before its blur (the clicker's → then moved its caret, on a busy machine).
let committed = null;

const queue = [];
let sent = null; // {at, sawRun}: the last click, until its run has ended

const WAIT_FOR_BUTTON_MS = 60000; // a fresh tab draws the bar's text before its buttons' code has loaded

const SETTLED_MS = 400; // a page may run again at once (st.rerun, a switch of page): idle this long first
let idleSince = null;

function pump() {
  const busy = scriptState() !== "notRunning";
  idleSince = busy ? null : (idleSince ?? Date.now());
  if (sent) {
    if (busy) sent.sawRun = true;
    else if (sent.sawRun || Date.now() - sent.at > IDLE_AFTER_CLICK_MS) sent = null;
  }
  if (sent || busy || !queue.length) return;
  if (Date.now() - idleSince < SETTLED_MS) return setTimeout(pump, SETTLED_MS);
  const { action, at } = queue[0];
  const button = document.querySelector(BUTTONS[action]);
  if (!button && Date.now() - at < WAIT_FOR_BUTTON_MS) return; // not drawn yet: the next tick tries again
  queue.shift();
  if (!button || button.disabled) return pump(); // the last stop, no request yet: nothing to do
  sent = { at: Date.now(), sawRun: false };
  button.click();
}

function watch() {
  const app = document.querySelector("[data-test-script-state]");
  if (app) new MutationObserver(pump).observe(app, { attributes: true, attributeFilter: ["data-test-script-state"] });
  setInterval(pump, 250); // the app element is replaced on a reconnect; the observer alone would miss it
}

function actionFor(e, active) {
  // The bar and the decode page's marker, not their buttons: a press may come before those are drawn.
  const lesson = !!document.querySelector(".st-key-lesson-bar");
  const stage = !!document.querySelector(".st-key-clicker-decode, .st-key-stage-step");
  if (e.key === "PageDown") return lesson ? "next" : stage ? "step" : null;
  if (e.key === "PageUp") return lesson ? "prev" : null;
  // The keys below belong to a control while it is being operated.
  const operated =
    (typing(active) && active !== committed) ||
    listOpen(active) ||
    (active && (active.type === "range" || active.type === "radio"));
  if (operated) return null;
  if (e.key === "ArrowRight") return stage ? "step" : lesson ? "next" : null;
  if (e.key === "ArrowLeft") return lesson ? "prev" : null; // back a stop, on the decode stop too (→ is Step there)
  const letter = e.key.length === 1 ? e.key.toLowerCase() : "";
  if (stage && letter === "p") return "prefill";
  if (stage && letter === "k") return "play";
  return null;
}

function onKey(e) {
  const active = document.activeElement;
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && active && active.tagName === "TEXTAREA") {
    // A text area (the decode page's prompt) applies its text on Ctrl+Enter (Enter is a new line): the clicker is
    // free again, as after Enter in a text box. Its → had moved the caret until the teacher clicked elsewhere.
    setTimeout(() => active.blur(), 0);
    return;
  }
  if (e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return;
  if (e.key === "Escape") {
    if (isControl(active) && !listOpen(active)) setTimeout(() => active.blur(), 0);
    return;
  }
  if (e.key === "Enter" && active && active.tagName === "INPUT" && typing(active)) {
    committed = active;
    setTimeout(() => active.blur(), 0); // streamlit commits the box on Enter; the clicker is free again
    return;
  }
  const action = actionFor(e, active);
  if (!action) return;
  e.preventDefault();
  e.stopImmediatePropagation();
  if (isControl(active)) active.blur(); // an open list closes; the control lets go of the keys
  queue.push({ action, at: Date.now() });
  pump();
}

// A value committed by the pointer: the control lets go of the focus (and so of the clicker's keys). A
// slider's thumb may be let go anywhere on the page, so the press marks it and any release ends it.
const POINTED = '[data-testid="stSlider"], [data-testid="stRadio"], [data-testid="stCheckbox"], [data-testid="stToggle"]';
let pressed = false;

function onPointerDown(e) {
  const t = e.target instanceof Element ? e.target : null;
  if (committed && t && (t === committed || committed.contains(t))) committed = null; // clicked into: editing again
  pressed = !!t && !!t.closest(POINTED);
}

function onPointerUp() {
  if (!pressed) return;
  pressed = false;
  setTimeout(() => {
    const a = document.activeElement;
    if (a && (a.type === "range" || a.type === "radio" || a.type === "checkbox")) a.blur();
  }, 0);
}

function onChosen(e) {
  const t = e.target instanceof Element ? e.target : null;
  if (!t || !t.closest('[role="option"]')) return;
  // The option was clicked: the select box closes with its new value; then let go of the focus.
  setTimeout(() => {
    const a = document.activeElement;
    if (a && a.getAttribute("role") === "combobox") a.blur();
  }, 0);
}

export default function () {
  document.documentElement.classList.add("clicker-ready"); // the lesson bar shows once its keys work
  if (window.__explainerClicker) return;
  window.__explainerClicker = true;
  window.addEventListener("keydown", onKey, true);
  document.addEventListener("input", (e) => (e.target === committed ? (committed = null) : null), true);
  document.addEventListener("pointerdown", onPointerDown, true);
  document.addEventListener("pointerup", onPointerUp, true);
  document.addEventListener("click", onChosen, true);
  window.__clickerQueue = () => queue.length + (sent ? 1 : 0); // presses not yet done (tests wait on it)
  watch();
}
