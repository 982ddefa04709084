// "Serve the class" (ui/serve_class/client.py): the student's request to the class's one engine
// (serve/engine_routes.py). When the page hands a new Send (data.send, with a nonce), this POSTs it once, then opens
// the request's token stream (server-sent events) and writes each token's text as it comes, with the request's own
// TTFT, last and median inter-token gap (ITL) and TPOT, live: no page rerun per token. When the request ends its
// numbers go back to the page as this component's value. data.post ({nonce, action, body}) is any other POST
// (simulate, settings), its answer given back the same way. Every text is set with textContent, never as HTML.

import { child } from "./plotly_loader.js";

const RETELL_MS = 2000;
const hub = (window.__explainerServe ??= { sent: null, posted: null, source: null, view: null, finished: null });

function url(path) {
  return new URL("explainer/serve/" + path, document.baseURI).href;
}

// 428: the engine needs this browser's cookie, which that answer has just set: ask once more, now with it. After any
// POST the room's pulse is listened to again: the cookies it went with name the room (a stream opened before the
// browser held them, e.g. set meanwhile by another tab, would follow another room and never show this request).
function post(action, body) {
  const send = () =>
    fetch(url(action), {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body || {}),
    });
  return send()
    .then((r) => {
      if (r.status !== 428) return r;
      window.__explainerServePulse?.reopen?.(); // the room's pulse, now with the cookie that answer set
      return send();
    })
    .then((r) => {
      if (r.ok) window.__explainerServePulse?.reopen?.();
      return r.json().then((answer) => ({ ok: r.ok, answer }));
    })
    .catch(() => ({ ok: false, answer: { error: "The engine could not be reached: try again." } }));
}

function median(xs) {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
}

function ms(v) {
  return v === null || v === undefined ? "–" : v < 10 ? v.toFixed(1) + " ms" : Math.round(v) + " ms";
}

function render(view) {
  if (!view || !view.root) return;
  const root = view.root;
  child(root, "serve-status").textContent = view.status;
  child(root, "serve-text", "pre").textContent = view.text;
  const t = view.times;
  const gaps = t.slice(1).map((x, i) => x - t[i]);
  const tpot = t.length > 1 ? (t[t.length - 1] - t[0]) / (t.length - 1) : null;
  const line = t.length
    ? `First token (TTFT) ${ms(t[0])} · last gap ${ms(gaps.length ? gaps[gaps.length - 1] : null)} · ` +
      `median gap (ITL p50) ${ms(median(gaps))} · TPOT ${ms(tpot)} · ${t.length} of ${view.asked} tokens`
    : "";
  child(root, "serve-numbers").textContent = line;
}

function stream(nonce, rid, asked, setTriggerValue) {
  if (hub.source) hub.source.close();
  const view = (hub.view = { rid, asked, text: "", times: [], status: "Waiting for the engine…", root: hub.view?.root });
  const source = (hub.source = new EventSource(url("stream?rid=" + encodeURIComponent(rid))));
  let ended = false;
  const end = (kind, status, numbers = null) => {
    ended = true;
    source.close();
    view.status = status;
    hub.finished = { nonce, rid, kind, numbers };
    setTriggerValue("finished", hub.finished);
  };
  // A dropped stream reconnects by itself and is sent from its first event again: a token already shown is skipped.
  // An answer that is not the stream (nginx's 502 while the engine restarts) closes it for good: said, Send again.
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED && !ended) {
      end("lost", "The connection to the engine was lost, so this request stopped here: press Send again.");
      render(view);
    }
  };
  source.onmessage = (e) => {
    const ev = JSON.parse(e.data);
    if (ended || (ev.kind === "token" && ev.i < view.times.length)) return;
    if (ev.kind === "queued") view.status = `Sent: ${ev.prompt_tokens} prompt tokens, waiting for the engine…`;
    if (ev.kind === "token") {
      view.text += ev.text;
      view.times.push(ev.ms);
      view.status = "Streaming…";
    }
    if (ev.kind === "done") end("done", "Done: press Send again for another request.", ev);
    if (ev.kind === "lost") end("lost", "The engine restarted and this request is gone: press Send again.");
    if (ev.kind === "ended") end("ended", ev.why);
    render(view);
  };
  render(view);
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  if (!data) return;
  const root = child(parentElement, "serve-root");
  root.setAttribute("aria-live", "polite");
  if (hub.view) hub.view.root = root;
  else hub.view = { root, text: "", times: [], asked: 0, status: data.idle || "" };
  const s = data.send;
  if (s && s.nonce && hub.sent !== s.nonce) {
    hub.sent = s.nonce;
    hub.view.status = "Sending…";
    post("send", { text: s.text, new_tokens: s.new_tokens, seed: s.seed }).then(({ ok, answer }) => {
      if (!ok) {
        hub.view.status = answer.error || "The engine refused it.";
        render(hub.view);
        hub.finished = { nonce: s.nonce, kind: "refused", error: hub.view.status };
        return setTriggerValue("finished", hub.finished);
      }
      stream(s.nonce, answer.rid, s.new_tokens, setTriggerValue);
    });
  }
  // The request's end has not reached this session (it ended while the page was elsewhere, or its run went to the
  // page opened meanwhile): said again, and again every RETELL_MS until a run draws this box with the session no
  // longer waiting (a new count each time: a value equal to the last one sent runs nothing).
  clearTimeout(hub.retell);
  if (data.busy && s && hub.finished?.nonce === s.nonce) {
    const tell = () => {
      hub.told = (hub.told || 0) + 1;
      setTriggerValue("finished", { ...hub.finished, told: hub.told });
      hub.retell = setTimeout(tell, RETELL_MS);
    };
    tell();
  }
  const p = data.post;
  if (p && p.nonce && hub.posted !== p.nonce) {
    hub.posted = p.nonce;
    post(p.action, p.body).then(({ ok, answer }) =>
      setTriggerValue("posted", { nonce: p.nonce, ok, error: ok ? null : answer.error || "refused", answer }),
    );
  }
  render(hub.view);
  return () => clearTimeout(hub.retell);
}
