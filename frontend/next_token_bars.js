// Next-token bars: the ten most likely tokens, the chosen one marked. Small, so each change is
// redrawn whole with Plotly.react (no plotly.py figure is built on the server per Step).

export default function (component) {
  const { data, parentElement } = component;
  if (!data || !data.tokens) return;
  const root = child(parentElement, "bars-root");
  const plot = child(root, "bars-plot");
  root.setAttribute("role", "figure");
  root.setAttribute("aria-label", data.desc);
  loadPlotly().then((Plotly) => {
    const labels = data.tokens.map((t, i) => esc((i + 1) + ". " + t));
    const trace = {
      type: "bar", orientation: "h", x: data.probs, y: labels, cliponaxis: false,
      marker: { color: data.chosen.map((c) => (c ? data.colors.new : data.colors.cached)),
                pattern: { shape: data.chosen.map((c) => (c ? "/" : "")), fgcolor: "#ffffff", size: 6 } },
      text: data.probs.map((p, i) => (p * 100).toFixed(1) + " %" + (data.chosen[i] ? "  ◀ chosen" : "")),
      textposition: "outside", hovertemplate: "%{y}: %{x:.4f}<extra></extra>", textfont: { size: data.font - 1 },
    };
    const layout = {
      height: data.height, margin: { l: 10, r: 10, t: 34, b: 10 }, paper_bgcolor: "white", plot_bgcolor: "white",
      font: { family: "Source Sans Pro, Arial, sans-serif", size: data.font, color: "#1f1f1f" },
      title: { text: esc(data.title), x: 0, xanchor: "left", font: { size: data.font + 2 } },
      xaxis: { range: [0, 1.7], tickvals: [0, 0.25, 0.5, 0.75, 1], tickformat: ".0%", automargin: true,
               fixedrange: true },
      // Every token labelled (plotly would thin category labels in a short plot).
      yaxis: { type: "category", autorange: "reversed", automargin: true, fixedrange: true,
               tickmode: "array", tickvals: labels, ticktext: labels },
    };
    Plotly.react(plot, [trace], layout, { responsive: true, displayModeBar: false });
    root.dataset.tokens = String(data.tokens.length);
  });
}
