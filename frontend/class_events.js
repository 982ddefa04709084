// Class mode's listener (ui/classroom/wire.py): one EventSource per tab on the app's class event stream
// (serve/class_routes.py). Each event is the class's pulse as data ({version, students, answered, question,
// round}, or {unavailable} / {ended}); the listener the page drew last hands each new pulse to the server as its
// trigger value, which reruns only the fragment that drew it. A page that watches some fields only (data.watch, a
// student's: the plan's version) gets a pulse when one of them, unavailable or ended changes. No page polls: a
// quiet class sends nothing. The stream carries no secret (versions and counts), and the browser reconnects.

function stream(code) {
  const url = new URL("explainer/class/events?code=" + encodeURIComponent(code), document.baseURI).href;
  const hub = (window.__explainerClass ??= {
    url: null, source: null, send: null, last: null, forwarded: null, retry: null,
  });
  if (hub.url !== url) {
    if (hub.source) hub.source.close();
    Object.assign(hub, { url, last: null, forwarded: null, source: new EventSource(url) });
    hub.source.onmessage = (e) => {
      hub.last = e.data;
      if (hub.send) hub.send(e.data);
    };
  }
  return hub;
}

export default function (component) {
  const { data, setTriggerValue } = component;
  if (!data || !data.code) return;
  const hub = stream(data.code);
  const watch = Array.isArray(data.watch) ? data.watch : null;
  const seen = (pulse) =>
    watch ? JSON.stringify([!!pulse.unavailable, !!pulse.ended, ...watch.map((k) => pulse[k] ?? null)]) : null;
  // Each pulse (what this page watches of it) reaches the server once, whichever listener the page has drawn by then.
  const send = (text) => {
    const pulse = JSON.parse(text);
    const key = seen(pulse) ?? text;
    if (key === hub.forwarded) return;
    hub.forwarded = key;
    setTriggerValue("pulse", pulse);
  };
  hub.send = send;
  if (hub.last !== null) send(hub.last);
  // A page holding what the store refused (an answer, the console's plan) draws the listener with data.retry, a
  // count that grows with each such run: it runs again in data.retry_ms with the last pulse, since no pulse comes
  // while the store reads but does not write. Drawn without it, the timer stops.
  clearTimeout(hub.retry);
  if (data.retry) {
    const last = hub.last !== null ? JSON.parse(hub.last) : {};
    hub.retry = setTimeout(() => setTriggerValue("pulse", { ...last, retry: data.retry }), data.retry_ms);
  }
  return () => {
    if (hub.send !== send) return;
    hub.send = null;
    clearTimeout(hub.retry);
  };
}
