// Class mode's listener (ui/classroom/wire.py): one EventSource per tab on the app's class event stream
// (serve/class_routes.py). Each event is the class's pulse as data ({version, students, answered, question,
// round}, or {unavailable} / {ended}); the listener the page drew last hands each pulse the server has not run for
// (data.seen: the last one, as the stream wrote it) to the server as its trigger value, which reruns only the
// fragment that drew it. A page that watches some fields only (data.watch, a student's: the plan's version) gets a
// pulse when one of them, unavailable or ended changed. No page polls: a quiet class sends nothing. A session that
// is new (a reload, a replica restarted under it) has run for none, so the stream's latest pulse runs it once. The
// stream carries no secret (versions and counts), and the browser reconnects by itself.
//
// One trigger at a time: after a pulse is handed over, later pulses wait until a run has drawn the listener again
// (each run draws it with a new data.run). A pulse handed over while the run it started is still going (one that
// moves the follower to another page) would rerun the old page's fragment after the new page's run: streamlit
// answers such a run with the old page's session, and the new page's body vanished (a blank page, issue 54).
// HOLD_MS is the longest a pulse waits, should no run draw the listener. A trigger whose run never came (none
// drew the listener, none is going) is handed over again, the same pulse too: the page had kept the plan before it
// until the class's next pulse, which may not come (a question revealed, then the teacher waits).
const HOLD_MS = 3000;

function scriptBusy() {
  const app = document.querySelector("[data-test-script-state]");
  return !!app && ["running", "rerunRequested"].includes(app.getAttribute("data-test-script-state"));
}

function stream(code) {
  const url = new URL("explainer/class/events?code=" + encodeURIComponent(code), document.baseURI).href;
  const hub = (window.__explainerClass ??= { url: null, source: null, send: null, last: null, retry: null });
  if (hub.url !== url) {
    if (hub.source) hub.source.close();
    Object.assign(hub, { url, last: null });
    open(hub);
  }
  return hub;
}

// An answer that is not the stream (nginx's 502 while a replica restarts) closes an EventSource for good, where a
// dropped connection only makes it reconnect: then a new one is opened, and its first event is the latest pulse.
const REOPEN_MS = 1000;

function open(hub) {
  const source = new EventSource(hub.url);
  hub.source = source;
  source.onmessage = (e) => {
    hub.last = e.data;
    if (hub.send) hub.send(e.data);
  };
  source.onerror = () => {
    if (source.readyState !== EventSource.CLOSED) return; // the browser reconnects by itself
    setTimeout(() => {
      if (hub.source !== source) return;
      if (hub.send) open(hub);
      else Object.assign(hub, { url: null, source: null }); // no page listens now: the next listener opens one
    }, REOPEN_MS);
  };
}

export default function (component) {
  const { data, setTriggerValue } = component;
  if (!data || !data.code) return;
  const hub = stream(data.code);
  const watch = Array.isArray(data.watch) ? data.watch : null;
  // What of a pulse this page watches: two pulses alike in it run the page once.
  const keyOf = (text) => {
    if (!watch) return text;
    const pulse = JSON.parse(text);
    return JSON.stringify([!!pulse.unavailable, !!pulse.ended, ...watch.map((k) => pulse[k] ?? null)]);
  };
  let sent = data.seen ? keyOf(data.seen) : null;
  const send = (text, again = false) => {
    const key = keyOf(text);
    if ((key === sent && !again) || hub.held) return;
    sent = key;
    const hold = () => {
      if (scriptBusy()) return (hub.held = setTimeout(hold, HOLD_MS)); // a slow run: it draws the listener yet
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
