// A student's Practice attempts, kept in this browser's localStorage (issue 50): a reload, or an exercise opened
// from its shared address, starts a new session on the server, which would otherwise have forgotten them, and the
// handout lists only what the session holds. Mounted on every page by ui/practice_saved.py, hidden.
//
// data.records: the session's attempts (core/practice/saved.py's records), sent only when they changed; they are
// merged into what is stored (each record once; the newest MAX kept), never written over it, so two tabs of the
// same browser each add theirs. data.tab: the session's own random name. Once per session, this hands what is
// stored back to the page (the state value "saved"), which checks every record again before it counts: nothing
// stored here can mark an answer right. Nothing leaves this browser but to its own session.

const KEY = "inference-explainer.practice.v1";
const MAX = 300; // core/practice/saved.py MAX_RECORDS

function read() {
  try {
    const stored = JSON.parse(localStorage.getItem(KEY) || "[]");
    return Array.isArray(stored) ? stored : [];
  } catch (e) {
    return []; // unreadable (another program's value, storage switched off): start afresh
  }
}

const identity = (r) => JSON.stringify([r.ex, r.numbers, r.part, r.typed, r.at]);

function merge(stored, records) {
  const seen = new Set();
  const out = [];
  for (const r of [...stored, ...records]) {
    const id = identity(r);
    if (!seen.has(id)) {
      seen.add(id);
      out.push(r);
    }
  }
  out.sort((a, b) => a.at - b.at);
  return out.slice(-MAX);
}

export default function (component) {
  const { data, setStateValue } = component;
  if (!data) return;
  const stored = read();
  if (Array.isArray(data.records) && data.records.length) {
    try {
      localStorage.setItem(KEY, JSON.stringify(merge(stored, data.records)));
    } catch (e) {
      // storage full or switched off (a private window's policy): the session still holds the attempts
    }
  }
  if (window.__practiceSavedTab !== data.tab) {
    window.__practiceSavedTab = data.tab; // this session has had what is stored: once, not on every rerun
    if (stored.length) setStateValue("saved", stored);
  }
}
