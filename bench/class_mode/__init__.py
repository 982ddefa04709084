"""Class mode (issues 41, 49) through a class server: a teacher, N students and the display join, follow,
answer, and survive a replica's death, a store outage and a classmate's wrong codes, measured in one run.

    python -m bench.class_mode [--replicas 4] [--students 40] [--steps 20] [--questions 5] [--quiet 10]
                               [--store sqlite|redis|URL] [--outage redis|sqlite] [--outage-s 10]
                               [--lesson fifteen-minutes|none] [--lesson-stops K] [--lesson-cpu-s 5]
                               [--no-settings] [--late-joins 5] [--wrong-codes 200] [--quick]

Starts ``--replicas`` app replicas behind nginx (``serve.replicas.class_server``) sharing one class store: a fresh
SQLite file (default), a ``redis-server`` this bench starts on a loopback port with an append-only file
(``--store redis``), or a running store's URL. This process speaks to nginx only, as the browsers would:
one light client per browser tab (``Tab``), each with its own cookies (nginx's affinity cookie, and the
class routes' HttpOnly ``explainer_teacher`` / ``explainer_seat`` / ``explainer_browser``), sent with the
health request, the class routes' POSTs, the websocket's upgrade request (streamlit reads
``st.context.cookies`` from it) and the event stream. A tab sends what a browser sends: the forms' text
boxes with their submit button, button triggers with their fragment id, the *Predict first* toggle (every
value it set goes again with each later rerun), the page's script hash as the last ``navigation`` message
named it; it keeps streamlit's fragment timers (``auto_rerun``); a closed websocket is reopened as the
frontend does (the health URL with the old cookie, which nginx rewrites to a live replica, then a
websocket asking to resume the old session). The class listener's browser side
(``frontend/class_events.js``) is here too: the first time a page draws the ``explainer_class_events``
component the tab opens ``GET /explainer/class/events?code=CODE`` (server-sent events, reconnecting after
the stream's ``retry`` when it drops), and each new pulse goes to the server once (one already forwarded is
not sent again) as a ``rerun_script`` of the fragment that drew the listener (ForwardMsg delta metadata),
with the component's trigger ``$$STREAMLIT_INTERNAL_KEY_<id>__events`` carrying
``json_trigger_value = [{"event": "pulse", "value": …}]`` as streamlit's frontend encodes it.

The lesson: the teacher opens ``?class=new`` and presses *Start a class*; the page's POST component
carries ``POST /explainer/class/open``, which this tab sends, keeping the teacher cookie, and then opens the
class's address ``?class=CODE`` (the console) and prefills. The students open ``?class=CODE`` over ``--ramp``
seconds and join through the form (a nickname each): ``POST /explainer/class/join``, then the class's page
with the seat cookie. The display opens ``?class=CODE&view=display&present=1`` (no cookie) and follows like
a student. The class sits still for ``--quiet`` seconds (the replicas' CPU then: no page polls). The teacher
takes ``--steps`` Steps, ``--questions`` of them asked first (*Predict first* on: the question opens; →
reveals it and takes the Step; the toggle off again); each student answers 0.5 s … ``--answer-s`` after its
buttons appear, a random option; every 4th double-clicks. After Step ``--kill-after`` (default: half the
Steps) one replica that does not hold the console is killed (SIGKILL; ``serve`` starts it again) while the
teacher keeps stepping until its followers are back. ``--outage`` makes the store unavailable for
``--outage-s`` seconds during the last question (Redis stopped and started again; the SQLite file and its
log made immutable, ``stores.py`` says why): some answers before it, some while it is away, the Step taken
meanwhile. Then the guided lesson (issue 54): the console opens ``?class=CODE&lesson=NAME&stop=1`` and presses
→ to the last stop (``--lesson-stops``: to that one) and ← back to stop 1, then ✕; after each move every follower
is timed to the lesson bar's "Stop k of n" on the console's page (the page hash its navigation message named),
then, once no tab got a message for 1 s, checked for a blank page (its last bar another stop or page, no heading of
the stop's page drawn, or a fragment run of the page it left: the run the frontend answers by dropping the page's
body), and the replicas' CPU is measured for ``--lesson-cpu-s``. The console then types three scales into the
ruler's *s, exactly* and picks three model shapes on the memory page; each follower is timed to drawing the
console's sentence for it. With a Redis store, ``--late-joins`` students join through the route alone (the
pulse's count moves, its plan version does not) while Redis's MONITOR counts the pages' plan reads (goal 0).
At the end one browser sends ``--wrong-codes`` join attempts with wrong codes while classmates join.
With ``--serving K`` (``serving.py``) the class engine runs the larger preset and K seated students send Serve the
class requests back to back from the quiet phase to the last Step, so the quiet and follow rows are measured
while the engine works (issue 56).

Measured: joins; following (the teacher's click for Step k → the follower's stage reports ``decode steps
k``; p50/p95 over followers × Steps, and its two halves: click → the pulse reaches the tab, pulse → the
stage); the reruns the pulses cause; answering (every answer counted exactly once by ``tally``,
``answered`` and each seat's ``my_answer``; the last answer → the console's "N of N answered"); the kill;
the outage (answers before and during it counted once, followers at the teacher's step within 5 s of the
store's return, no traceback on any page); the wrong codes (a classmate's join against one just before).
A traceback, a timeout, a missed goal of those checks or a wrong count is an error: the process exits 1
after printing. Traffic goes to 127.0.0.1 only.
``--quick`` (tests/bench/test_class_mode_quick.py): 2 replicas, 6 students joining over 1 s, 4 Steps, 1
question (answers within 3 s), the kill after Step 2, 1.5 s still, the lesson to stop 2 and back (0.5 s of CPU
each), 2 late joins, 50 wrong codes, a 3 s outage if asked (with
``--questions 2``, so that one question is counted without it).

The package, by concern: ``tab.py`` (one browser tab at the protocol level: ``Tab``, ``until``),
``page.py`` (what a tab's page shows), ``web.py`` (cookies, the class routes' POSTs, the event stream),
``joining.py`` (the start panel, the join form, the display), ``lesson.py`` (the teacher's class, the
whole run), ``stops.py`` (the guided lesson walked), ``settings.py`` (the ruler's scale and the memory page's
shape moved), ``reads.py`` (pulses whose plan version did not move, and the plan reads), ``answers.py`` (a
question and its answers), ``kill.py`` (a replica killed mid-class),
``stores.py`` and ``outage.py`` (the store and its outage), ``wrong_codes.py``, ``measures.py`` (``Run``),
``server.py`` (the class server, its warm-up and one timed class), ``report.py`` and ``phases.py`` (the
tables), ``__main__.py`` (the command line).
"""
