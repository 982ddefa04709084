// Class mode's listener (ui/classroom/wire.py): one EventSource per tab on the app's class event stream
// (serve/class_routes.py). Each event is the class's pulse as data ({version, students, answered, question,
// round}, or {unavailable} / {ended}); the listener the page drew last hands each pulse the server has not seen
// (data.seen: the last one it ran for, as the stream wrote it) to the server as its trigger value, which reruns
// only the fragment that drew it. No page polls: a quiet class sends nothing. A session that is new (a reload, a
// replica restarted under it) has seen none, so the stream's latest pulse runs it once. The stream carries no
// secret (versions and counts), and the browser reconnects by itself.

function stream(code) {
  const url = new URL("explainer/class/events?code=" + encodeURIComponent(code), document.baseURI).href;
  const hub = (window.__explainerClass ??= { url: null, source: null, send: null, last: null });
  if (hub.url !== url) {
    if (hub.source) hub.source.close();
    Object.assign(hub, { url, last: null, source: new EventSource(url) });
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
  let sent = data.seen ?? null;
  const send = (text) => {
    if (text === sent) return;
    sent = text;
    setTriggerValue("pulse", JSON.parse(text));
  };
  hub.send = send;
  if (hub.last !== null) send(hub.last);
  return () => {
    if (hub.send === send) hub.send = null;
  };
}
