// Class mode's credentials (ui/classroom/post.py): POST to one of the app's class routes (open, join, pair,
// leave; serve/class_routes.py), whose answer sets or clears this browser's HttpOnly cookie, then open the
// class's address, so the next session reads the cookie. Nothing secret passes through this code: the route
// keeps the key or seat token in the cookie. A refusal comes back to the page as this component's value.

export default function (component) {
  const { data, setTriggerValue } = component;
  if (!data || !data.action) return;
  if (window.__explainerPosted === data.nonce) return; // one POST per request, however often it is drawn
  window.__explainerPosted = data.nonce;
  const url = new URL("explainer/class/" + data.action, document.baseURI).href;
  const send = () =>
    fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(data.body || {}),
    });
  // 428: a seat needs this browser's cookie, which that answer has just set: ask once more, now with it.
  send()
    .then((r) => (r.status === 428 ? send() : r))
    .then((r) => r.json().then((answer) => ({ ok: r.ok, answer })))
    .then(({ ok, answer }) => {
      if (!ok) return setTriggerValue("refused", { nonce: data.nonce, error: answer.error || "refused" });
      const next = new URL(window.location.href);
      next.search = "";
      for (const [k, v] of Object.entries(data.then || {})) next.searchParams.set(k, v === "{code}" ? answer.code : v);
      window.location.assign(next.href);
    })
    .catch(() =>
      setTriggerValue("refused", { nonce: data.nonce, error: "The server could not be reached: try again." }),
    );
}
