"""axe-core (the npm package, never a copy in this repository) injected into a page of the running app.

`.ci/run` installs it with ``npm install --silent --no-save --prefix .ci/node axe-core@4.14.1``; the tests read
``.ci/node/node_modules/axe-core/axe.min.js`` (or the file named by ``AXE_CORE_JS``).
"""

from __future__ import annotations

import os
from pathlib import Path

from bench.browser import ROOT

AXE_VERSION = "4.14.1"
INSTALL = f"npm install --silent --no-save --prefix .ci/node axe-core@{AXE_VERSION}"
AXE_JS = Path(os.environ.get("AXE_CORE_JS", ROOT / ".ci" / "node" / "node_modules" / "axe-core" / "axe.min.js"))
# WCAG 2.0 and 2.1, levels A and AA: what the issue and the ADA Title II rule ask for.
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
BLOCKING = ("serious", "critical")


def axe_path() -> Path:
    """The axe-core script, or an AssertionError saying how to install it."""
    assert AXE_JS.is_file(), (
        f"axe-core {AXE_VERSION} is missing ({AXE_JS}): run `{INSTALL}` in the repository's root "
        "(the README's test command does)"
    )
    return AXE_JS


RUN_JS = """async (tags) => {
  const r = await axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
  return { version: axe.version, violations: r.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => ({ target: n.target.join(' '), html: n.html.slice(0, 160),
      summary: (n.failureSummary || '').split('\\n').slice(1).join(' ').trim() })) })) };
}"""


def violations(page) -> list[dict]:
    """Every WCAG 2.0/2.1 A and AA violation axe-core finds on ``page`` now (any impact)."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(axe_path()))
    result = page.evaluate(RUN_JS, TAGS)
    assert result["version"] == AXE_VERSION, f"axe-core {result['version']} loaded, {AXE_VERSION} expected"
    return result["violations"]


def listing(found: dict[str, list[dict]]) -> str:
    """One line per violating element: where (page), rule, impact, element, what is wrong."""
    lines = []
    for where, vs in found.items():
        for v in vs:
            for n in v["nodes"]:
                lines.append(f"{where}: {v['id']} ({v['impact']}) {n['target']} — {n['summary'] or v['help']}")
    return "\n".join(lines)


# Text inside disabled controls, with its colour and the first opaque background behind it: axe-core
# skips disabled elements, but a revealed answer or "Hint 3/3" still carries information.
DISABLED_TEXT_JS = """() => {
  const opaque = (el) => { for (; el; el = el.parentElement) { const c = getComputedStyle(el).backgroundColor;
    if (c && c !== 'transparent' && !c.endsWith(', 0)')) return c; } return 'rgb(255, 255, 255)'; };
  const out = [];
  for (const root of document.querySelectorAll('button:disabled, [aria-disabled="true"]')) {
    if (!root.getClientRects().length || getComputedStyle(root).visibility === 'hidden') continue;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement, text = n.textContent.trim();
      if (!text || !el.getClientRects().length) continue;
      const cs = getComputedStyle(el);
      let opacity = 1;  // an ancestor's opacity fades the text too
      for (let e = el; e; e = e.parentElement) opacity *= parseFloat(getComputedStyle(e).opacity);
      out.push({ text: text.slice(0, 40), fg: cs.color, bg: opaque(el), px: parseFloat(cs.fontSize),
                 bold: parseInt(cs.fontWeight) >= 700, opacity: opacity });
    }
  }
  return out;
}"""


def disabled_text(page) -> list[dict]:
    """Text in visible disabled controls: ``text``, ``fg``, ``bg`` (CSS colours), ``px``, ``bold``,
    ``opacity`` (the product of its ancestors')."""
    return page.evaluate(DISABLED_TEXT_JS)


def contrast(fg: str, bg: str, opacity: float = 1.0) -> float:
    """WCAG 2.1 contrast ratio of two CSS colours (coloraide, an independent implementation; the
    foreground's alpha times ``opacity`` is composited over the background first)."""
    from coloraide import Color

    back = Color(bg).convert("srgb")
    front = Color(fg).convert("srgb")
    a = front.alpha() * opacity
    mixed = Color("srgb", [a * f + (1 - a) * b for f, b in zip(front.coords(), back.coords(), strict=True)])
    return mixed.contrast(back, method="wcag21")


def large(px: float, bold: bool) -> bool:
    """WCAG's large text: ≥ 18 pt (24 px), or ≥ 14 pt (18.66 px) bold: 3:1 suffices."""
    return px >= 24 or (bold and px >= 18.66)
