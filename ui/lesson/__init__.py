"""Lesson mode: a guided lesson (``core.lesson.stops``) run over the app's pages. A slim bar on every page
says "stop k of n · title" and the question to ask, offers the speaker note in the teacher view
(``?teacher=1``), moves between stops (buttons; PageDown / PageUp, ←, and → off the decode page,
where → is Step), downloads the handout and leaves the lesson. Streamlit glue, called from app.py.

Moving to a stop writes its settings into session state (``Stop.state_updates``; the settings a
page could take but the stop leaves out go back to their defaults) and, in the next run before any
page widget exists, switches to the stop's page. A decode stop with ``step`` starts a fresh request
that ``ui.decode.actions.replay_link`` prefills and replays. The address carries ``?lesson=…&stop=k`` for
shipped lessons, so a teacher can share a link that opens a stop.

The package, by concern: ``components`` (the two browser components, registered once at import:
the clicker's key listener and the stop's scroll), ``moves`` (moving between stops and the address
that carries them), ``draw`` (the bar and its menu, and the bar's style sheet).
"""
