// The decode stage's attention heatmap: drawn in full once (Prefill, a layer/head change, a
// reload), then each Step appends one row. The payloads are built by core/viz/stage.py. Their
// text (token labels typed by a learner) is escaped for plotly's labels with esc() and otherwise
// only ever set as textContent, never as HTML.

import { child, esc, loadPlotly } from "./plotly_loader.js";

const SCALE = 10000; // core/viz/stage.py sends shares × 10,000 as integers

function shares(ints) {
  return ints.map((v) => v / SCALE);
}

function padded(row, width) {
  const out = new Array(width).fill(null);
  for (let i = 0; i < row.length; i++) out[i] = row[i];
  return out;
}

function heatTrace(st, z, y0, name, opacity) {
  return {
    type: "heatmap", z: z, x0: 0, dx: 1, y0: y0, dy: 1, zmin: 0, zmax: 1,
    colorscale: "Cividis", opacity: opacity, name: name, showscale: opacity === 1,
    hoverongaps: false, xgap: st.rows.length <= 40 ? 1 : 0, ygap: st.rows.length <= 40 ? 1 : 0,
    hovertemplate: "query position %{y}<br>key position %{x}<br>share %{z:.3f}<extra>" + name + "</extra>",
    colorbar: { title: { text: "share" }, thickness: 10, len: 0.5, y: 0.6 },
  };
}

// Key labels along x: as many as fit the plot's width, evenly spaced, always the newest position
// and the most-attended one (an evenly spaced label too close to those is dropped).
function xTicks(T, focus, width, font) {
  const room = Math.max(4, Math.floor(width / (font * 1.35)));
  const step = Math.max(1, Math.ceil(T / room));
  const must = [T - 1];
  if (focus !== null && focus !== undefined) {
    // Two labels closer than a label's room overlap (e.g. "65: the" on "66: limit"): the newest key
    // then gives way to the most-attended one, which the figure points at.
    if (focus !== T - 1 && T - 1 - focus < step) must.pop();
    must.push(focus);
  }
  const near = (i) => must.some((m) => i !== m && Math.abs(i - m) < step);
  const out = new Set(must);
  for (let i = 0; i < T; i += step) if (!near(i)) out.add(i);
  return [...out].sort((a, b) => a - b);
}

function layoutFor(st, d) {
  const T = st.rows.length, old = T - st.newCount;
  const visible = Math.max(4, Math.floor((st.height - 150) / st.rowPx));
  const top = Math.max(-0.5, T - visible - 0.5);
  const focus = d.focus;
  const xticks = xTicks(T, focus, st.width * 0.8, st.font);
  const shapes = [{ type: "rect", x0: -0.5, x1: T - 0.5, y0: old - 0.5, y1: T - 0.5, layer: "above",
                    line: { color: st.colors.new, width: 3 } }];
  const notes = [];
  if (focus !== null && focus !== undefined) {
    shapes.push({ type: "rect", x0: focus - 0.5, x1: focus + 0.5, y0: T - 1.5, y1: T - 0.5, layer: "above",
                  line: { color: "#000000", width: 3 } });
    // Anchored on the side away from the plot's edge, so the label never covers the y tick labels.
    const side = focus < T / 3 ? "left" : focus > (2 * T) / 3 ? "right" : "center";
    notes.push({ x: focus, y: T - 1, xref: "x", yref: "y", ax: 0, ay: -34, showarrow: true, arrowhead: 2, xanchor: side,
                 arrowcolor: "#000000", text: esc(d.focus_text), font: { size: st.font, color: "#000000" },
                 bgcolor: "rgba(255,255,255,0.92)", bordercolor: "#000000" });
  }
  // A phone (a class's student at 390 px): the title on two lines with the note under it, or the SVG clips them.
  const narrow = st.width < 480;
  let title = narrow ? esc(d.title).replace(": ", ":<br>") : esc(d.title);
  if (top > -0.5 && narrow) {
    title += "<br><span style=\"font-size:" + (st.font - 1) + "px;color:" + st.colors.cached + "\">▲ " +
             Math.round(top + 0.5) + " rows above: drag down</span>";
  } else if (top > -0.5) {
    notes.push({ x: 0, y: 1, xref: "paper", yref: "paper", xanchor: "left", yanchor: "bottom", showarrow: false,
                 text: "▲ " + Math.round(top + 0.5) + " earlier rows above: drag the plot down to see them",
                 font: { size: st.font - 1, color: st.colors.cached } });
  }
  return {
    // The top margin grows with the font: in presenter fonts the title's descenders touched the
    // "earlier rows above" note sitting on the plot's top edge.
    height: st.height, margin: { l: 10, r: 10, t: (narrow ? 6.5 : 2) * st.font + 8, b: 10 }, paper_bgcolor: "white", plot_bgcolor: "#ececec",
    font: { family: "Source Sans Pro, Arial, sans-serif", size: st.font, color: "#1f1f1f" },
    title: { text: title, x: 0, xanchor: "left", font: { size: st.font + 2 } },
    dragmode: "pan", showlegend: false, shapes: shapes, annotations: notes,
    xaxis: { title: { text: "key: the position being scored" }, range: [-0.5, T - 0.5], fixedrange: true,
             tickmode: "array", tickvals: xticks, ticktext: xticks.map((i) => esc(st.labels[i])),
             tickangle: -60, automargin: true, showgrid: false, zeroline: false },
    yaxis: { title: { text: "query: the position asking", standoff: 4 }, range: [T - 0.5, top], autorange: false,
             tickmode: "array", tickvals: st.labels.map((_, i) => i), ticktext: st.labels.map(esc),
             automargin: true, showgrid: false, zeroline: false },
  };
}

function drawAll(Plotly, plot, st, d) {
  const T = st.rows.length, old = T - st.newCount;
  const traces = [
    heatTrace(st, st.rows.slice(0, old).map((r) => padded(r, T)), 0, "read from the KV cache", 0.45),
    heatTrace(st, st.rows.slice(old).map((r) => padded(r, T)), old, "new this step", 1),
  ];
  return Plotly.react(plot, traces, layoutFor(st, d), { responsive: true, displaylogo: false,
                                                          modeBarButtons: [["resetScale2d", "toImage"]] });
}

function appendRow(Plotly, plot, st, d) {
  // The previous newest row joins the dimmed, cached rows; the new row becomes trace 1. One
  // Plotly.update redraws once (extendTraces + restyle + relayout redrew the whole plot three times).
  const T = st.rows.length;
  const previous = st.rows.slice(T - 1 - st.newCount, T - 1);
  st.newCount = 1;
  const cached = plot.data[0].z.concat(previous.map((r) => padded(r, T - 1)));
  return Plotly.update(plot, { z: [cached, [padded(st.rows[T - 1], T)]], y0: [0, T - 1] }, layoutFor(st, d), [0, 1]);
}

// Under a lesson's bar the stage starts lower than on its own page (presenting, the rows above it took ~90 px more
// than a 1080-px screen leaves): the heatmap is made as much shorter as it needs to end on the screen, by at most
// 40 % (fewer rows show; the earlier ones are a drag away). Measured from the top of the page, not from where it is
// scrolled to now, and again whenever the rows above it change height (the text row beside Step grew 26 px after the
// heatmap was drawn), so a stop settles in place without the late scroll that hid the title row, Layer and Head,
// under the bar (issue 37, item 9). Elsewhere the height is the payload's.
function fitted(root, plot, height) {
  if (!document.querySelector(".st-key-lesson-bar")) return height;
  const main = root.closest('[data-testid="stMain"]');
  const box = root.getBoundingClientRect();
  const below = box.bottom - plot.getBoundingClientRect().bottom; // the description line under the plot
  const room = window.innerHeight - (box.top + (main ? main.scrollTop : 0)) - below - 12; // lesson_scroll.js keeps 8
  return Math.round(Math.max(0.6 * height, Math.min(height, room)));
}

function refit(Plotly, root, plot) {
  const st = root.__state;
  if (!st || !st.last) return;
  const height = fitted(root, plot, st.asked);
  if (Math.abs(height - st.height) < 2) return;
  st.height = height;
  Plotly.relayout(plot, layoutFor(st, st.last));
}

function watchFit(Plotly, root, plot) {
  if (root.__fitWatch) return;
  const page = document.querySelector('[data-testid="stMainBlockContainer"]');
  if (!page) return;
  root.__fitWatch = new ResizeObserver(() => {
    if (!root.isConnected) return root.__fitWatch.disconnect();
    refit(Plotly, root, plot);
  });
  root.__fitWatch.observe(page);
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  if (!data || !data.kind) return;
  const root = child(parentElement, "attn-root");
  const plot = child(root, "attn-plot");
  const desc = child(root, "attn-desc", "p");
  desc.setAttribute("aria-live", "polite");
  root.setAttribute("role", "figure");
  loadPlotly().then((Plotly) => {
    let st = root.__state;
    if (st) st.width = root.clientWidth || st.width;
    if (data.kind === "full") {
      desc.textContent = data.desc; // its line is measured below the plot
      st = root.__state = { fig: data.fig, rows: data.rows.map(shares), labels: data.labels.slice(), newCount: data.new,
                            height: fitted(root, plot, data.height), asked: data.height, rowPx: data.row_px,
                            font: data.font, colors: data.colors, width: root.clientWidth || 600 };
      drawAll(Plotly, plot, st, data);
    } else if (!st || st.fig !== data.fig || st.rows.length !== data.base) {
      // This element missed a drawing (a new mount after a page change or a reconnect): ask for all.
      setTriggerValue("need_full", data.fig + ":" + data.base);
      return;
    } else {
      st.rows.push(shares(data.row));
      st.labels.push(data.label);
      appendRow(Plotly, plot, st, data);
    }
    st.last = data;
    watchFit(Plotly, root, plot);
    desc.textContent = data.desc;
    root.setAttribute("aria-label", data.desc);
    root.dataset.rows = String(st.rows.length);
    root.dataset.fig = st.fig;
    if (data.step !== undefined) root.dataset.step = String(data.step);
    if (!plot.__hoverBound) {
      plot.__hoverBound = true;
      plot.on("plotly_hover", (ev) => {
        const p = ev.points[0], s = root.__state;
        desc.textContent = "asking " + s.labels[p.y] + " · scoring " + s.labels[p.x] + " · share " + p.z.toFixed(3);
      });
      plot.on("plotly_unhover", () => { desc.textContent = root.getAttribute("aria-label"); });
    }
  }).catch((err) => { desc.textContent = "The heatmap could not be drawn: " + err.message; });
}
