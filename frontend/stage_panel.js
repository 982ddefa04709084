// The stage's right-hand panel: next-token bars (plotly), the work counter, the equivalence badge
// and the KV-cache line. One element, so a Step sends these few numbers as one small message
// (core/viz/stage.py ``panel`` builds it). Every text is set with textContent, never as HTML.

import { child, esc, loadPlotly } from "./plotly_loader.js";

function text(parent, cls, tag = "div") {
  const el = child(parent, cls, tag);
  return (value) => { el.textContent = value; return el; };
}

function drawBars(Plotly, plot, bars, font) {
  const labels = bars.tokens.map((t, i) => esc((i + 1) + ". " + t));
  const trace = {
    type: "bar", orientation: "h", x: bars.probs, y: labels, cliponaxis: false,
    marker: { color: bars.chosen.map((c) => (c ? bars.colors.new : bars.colors.cached)),
              pattern: { shape: bars.chosen.map((c) => (c ? "/" : "")), fgcolor: "#ffffff", size: 6 } },
    text: bars.probs.map((p, i) => (p * 100).toFixed(1) + " %" + (bars.chosen[i] ? "  ◀ chosen" : "")),
    textposition: "outside", textfont: { size: font - 1 }, hovertemplate: "%{y}: %{x:.4f}<extra></extra>",
  };
  const layout = {
    height: bars.height, margin: { l: 10, r: 10, t: 34, b: 10 }, paper_bgcolor: "white", plot_bgcolor: "white",
    font: { family: "Source Sans Pro, Arial, sans-serif", size: font, color: "#1f1f1f" },
    title: { text: esc(bars.title), x: 0, xanchor: "left", font: { size: font + 2 } },
    xaxis: { range: [0, 1.7], tickvals: [0, 0.25, 0.5, 0.75, 1], tickformat: ".0%", automargin: true,
             fixedrange: true },
    // Every token labelled (plotly would thin category labels in a short plot).
    yaxis: { type: "category", autorange: "reversed", automargin: true, fixedrange: true,
             tickmode: "array", tickvals: labels, ticktext: labels },
  };
  return Plotly.react(plot, [trace], layout, { responsive: true, displayModeBar: false });
}

function metric(parent, cls, m) {
  const box = child(parent, cls);
  const label = text(box, "metric-label")(m.label);
  label.title = m.help || "";
  // A visible "?" beside the label (what the count is: per layer and head), focusable for the keyboard.
  let help = box.querySelector(":scope > .metric-help");
  if (!help) {
    help = document.createElement("span");
    help.className = "metric-help";
    help.textContent = "?";
    help.tabIndex = 0;
    help.setAttribute("role", "note");
    label.after(help);
  }
  help.title = m.help || "";
  help.setAttribute("aria-label", m.help || "");
  help.hidden = !m.help;
  text(box, "metric-value")(m.value);
  const delta = text(box, "metric-delta")(m.delta || "");
  delta.hidden = !m.delta;
}

export default function (component) {
  const { data, parentElement } = component;
  if (!data || !data.bars) return;
  const root = child(parentElement, "panel-root");
  root.style.setProperty("--panel-font", data.font + "px");
  const bars = child(root, "bars-root");
  bars.setAttribute("role", "figure");
  bars.setAttribute("aria-label", data.bars.desc);
  const plot = child(bars, "bars-plot");
  const counters = child(root, "panel-counters");
  counters.setAttribute("aria-live", "polite");
  metric(counters, "metric-cached", data.counters[0]);
  metric(counters, "metric-naive", data.counters[1]);
  const badge = text(root, "panel-badge")(data.badge.text);
  badge.dataset.state = data.badge.state;
  badge.setAttribute("role", "status");
  const kv = child(root, "panel-kv");
  text(kv, "kv-formula")(data.kv.formula);
  const bar = child(kv, "kv-bar", "progress");
  bar.max = data.kv.capacity;
  bar.value = data.kv.positions;
  bar.setAttribute("aria-label", data.kv.shelf);
  text(kv, "kv-shelf")(data.kv.shelf);
  loadPlotly().then((Plotly) => drawBars(Plotly, plot, data.bars, data.font)).then(() => {
    bars.dataset.tokens = String(data.bars.tokens.length);
  });
  handFocusToStep();
}

// A click on a switch of the controls row ("Predict first", "Tables") leaves the focus in its
// checkbox, where streamlit ignores shortcut keys as typing: 1–5 and → (a clicker) did nothing.
// Hand the focus to Step, the next thing to press: when the switch changes, and again when this
// panel is redrawn (Predict first makes room for the question) or the page's rerun has settled.
const SWITCHES = /Predict first|Tables/;

function switchOf(el) {
  const toggle = el && el.closest ? el.closest("[data-testid='stCheckbox']") : null;
  return toggle && SWITCHES.test(toggle.innerText) ? toggle : null;
}

function handFocusToStep() {
  const active = document.activeElement;
  if (!(active && active.type === "checkbox" && switchOf(active))) return;
  const step = [...document.querySelectorAll("button")].find((b) => b.innerText.trim().startsWith("Step"));
  if (step && !step.disabled) step.focus();
}

// Streamlit's switches fire no change event the page can hear (a click on the label toggles them),
// so listen for the click itself; the focus reaches the checkbox just after it, and the page's rerun
// follows: hand the focus over once it has settled, and again after the rerun.
document.addEventListener(
  "click",
  (event) => {
    if (!switchOf(event.target)) return;
    for (const ms of [50, 400, 1200]) setTimeout(handFocusToStep, ms);
  },
  true,
);
