// "Serve the class": the engine's pulse (ui/serve_class/client.py, serve/engine_routes.py). One EventSource per tab
// on the room's pulse ({epoch, version}, at most 4 a second while the engine works, nothing while it is idle); each
// new one becomes the component's trigger value, which reruns only the fragment that draws the batch. The stream
// carries no request's text. A closed stream (nginx's 502 while the engine restarts) is opened again.

const REOPEN_MS = 1000;
// A trigger whose run never came (no run drew the component within HOLD_MS, and none is going) is sent again: the
// batch had stayed on an earlier state, as the engine sends nothing more once it is idle.
const HOLD_MS = 3000;
const hub = (window.__explainerServePulse ??= { url: null, source: null, send: null, last: null, held: null });

function scriptBusy() {
  const app = document.querySelector("[data-test-script-state]");
  return !!app && ["running", "rerunRequested"].includes(app.getAttribute("data-test-script-state"));
}

// A POST that set this browser's cookie names its room: serve_stream.js then listens again, with the cookie.
hub.reopen = () => {
  if (!hub.url) return;
  if (hub.source) hub.source.close();
  open();
};

function open() {
  const source = new EventSource(hub.url);
  hub.source = source;
  source.onmessage = (e) => {
    hub.last = e.data;
    if (hub.send) hub.send(e.data);
  };
  source.onerror = () => {
    if (source.readyState !== EventSource.CLOSED) return;
    setTimeout(() => hub.source === source && open(), REOPEN_MS);
  };
}

export default function (component) {
  const { data, setTriggerValue } = component;
  if (!data) return;
  const query = data.code ? "?class=" + encodeURIComponent(data.code) : "";
  const url = new URL("explainer/serve/pulse" + query, document.baseURI).href;
  if (hub.url !== url) {
    if (hub.source) hub.source.close();
    Object.assign(hub, { url, last: null });
    open();
  }
  // One run per new version: a pulse this session has run for (data.seen, "epoch:version") is not sent again. A page
  // that watches the engine's epoch only (data.epoch_only: a student's) runs when the engine restarted, not per step.
  const keyOf = (text) => {
    const p = JSON.parse(text);
    return data.epoch_only ? String(p.epoch) : p.epoch + ":" + p.version;
  };
  let sent = data.seen ? (data.epoch_only ? data.seen.split(":")[0] : data.seen) : null;
  const send = (text, again = false) => {
    const key = keyOf(text);
    if (key === sent && !again) return;
    sent = key;
    clearTimeout(hub.held);
    const hold = () => {
      if (scriptBusy()) return (hub.held = setTimeout(hold, HOLD_MS)); // a slow run: it draws the component yet
      hub.held = null;
      if (hub.send && hub.last !== null) hub.send(hub.last, true);
    };
    hub.held = setTimeout(hold, HOLD_MS);
    setTriggerValue("pulse", JSON.parse(text));
  };
  clearTimeout(hub.held); // drawn by a run: the pulse it ran for is done
  hub.held = null;
  hub.send = send;
  if (hub.last !== null) send(hub.last);
  return () => {
    if (hub.send === send) hub.send = null;
  };
}
