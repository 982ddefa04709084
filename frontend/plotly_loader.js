// Shared by the stage's modules: loads the plotly.js that ships inside the installed `plotly`
// Python package, once per page, and two small DOM helpers. ui/decode/stage.py serves this folder and
// that plotly.min.js together through streamlit's static serving, in a folder named after their
// contents (a new version never meets a browser's cached old one).

const PLOTLY_URL = new URL("./plotly.min.js", import.meta.url).href;

export function loadPlotly() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window.__explainerPlotly) {
    window.__explainerPlotly = new Promise((resolve, reject) => {
      const s = document.createElement("script");
      s.src = PLOTLY_URL;
      s.onload = () => resolve(window.Plotly);
      s.onerror = () => reject(new Error("plotly.js could not be loaded"));
      document.head.appendChild(s);
    });
  }
  return window.__explainerPlotly;
}

// One child element of the component's host, created once and kept across reruns.
export function child(parent, cls, tag = "div") {
  let el = parent.querySelector(":scope > ." + cls);
  if (!el) {
    el = document.createElement(tag);
    el.className = cls;
    parent.appendChild(el);
  }
  return el;
}

// Plotly labels understand a little HTML (<b>, <br>, entities): text from a learner is escaped.
export function esc(text) {
  return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}
