"""The components' JS: each browser-drawn figure's code is a two-line loader that imports its ES module
from the app's own route (``serve.frontend``: ``explainer/js/<digest>/<module>``), so a rerun does not resend
the code and a browser never runs a cached old version.

The route belongs to ``main.py``'s ``st.App``. Where the app was started another way (``streamlit run
app.py``), the module cannot be loaded, and the figure says how to start the app instead of drawing.
"""

from __future__ import annotations

from serve.frontend import url

START_COMMAND = "streamlit run main.py"  # the app with its routes (inference-explainer runs it too)


def loader(module: str) -> str:
    """The JS of a component whose code is ``frontend/<module>``: import it from the route and hand it the
    component; where the route is missing, a note in the figure's place."""
    note = (
        "This figure cannot be drawn: its code is served by the app's own route, which this server does not "
        f"have. Start the app with `{START_COMMAND}` (or the inference-explainer command)."
    )
    return (
        f'const entry = new URL("{url(module)}", document.baseURI).href;\n'
        "export default function (component) {\n"
        "  import(entry).then((m) => m.default(component)).catch(() => {\n"
        "    const { parentElement } = component;\n"
        "    if (parentElement.querySelector(':scope > .static-missing')) return;\n"
        "    const p = document.createElement('p');\n"
        "    p.className = 'static-missing';\n"
        "    p.setAttribute('role', 'alert');\n"
        f"    p.textContent = {note!r};\n"
        "    parentElement.appendChild(p);\n"
        "  });\n"
        "}\n"
    )
