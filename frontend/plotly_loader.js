// Loads the plotly.js that ships inside the installed `plotly` Python package, once per page.
// ui_stage.py makes it available at app/static/plotly.min.js (streamlit's static serving).
function loadPlotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window.__explainerPlotly) {
    window.__explainerPlotly = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = new URL("app/static/plotly.min.js", document.baseURI).href;
      s.onload = () => resolve(window.Plotly);
      s.onerror = () => reject(new Error("plotly.js could not be loaded"));
      document.head.appendChild(s);
    });
  }
  return window.__explainerPlotly;
}

// One child element of the component's host, created once and kept across reruns.
function child(parent, cls, tag = "div") {
  let el = parent.querySelector(":scope > ." + cls);
  if (!el) {
    el = document.createElement(tag);
    el.className = cls;
    parent.appendChild(el);
  }
  return el;
}

// Plotly labels understand a little HTML (<b>, <br>, entities): text from a learner is escaped.
function esc(text) {
  return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}
