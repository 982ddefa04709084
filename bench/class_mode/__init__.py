"""Class mode (issue 41) through a class server: a teacher and N students join, follow, answer and
survive a replica's death, measured in one run.

    python -m bench.class_mode [--replicas 4] [--students 40] [--steps 20] [--questions 5]
                               [--store redis://127.0.0.1:PORT/0] [--quick]

Starts ``--replicas`` app replicas behind nginx (``serve.class_server``) sharing one class store (a
fresh SQLite file by default, or ``--store`` URL: a running Redis, which this bench does not start).
This process opens the class directly through that store (``open_class``: the code and the teacher
key; a teacher would press *Start a class*) and then speaks only streamlit's websocket protocol
through nginx, one light client per browser tab (``Tab``), the teacher's included: each tab takes
its affinity cookie from a first plain request as a browser does, sends what a browser sends (the
join form's two text boxes with its submit button, button triggers with their fragment id, the
*Predict first* toggle; every value it set goes again with each later rerun, as the frontend sends
every widget's value) and keeps the browser's fragment timers: a ``ForwardMsg.auto_rerun``
(interval, fragment id; sent each time a ``st.fragment(run_every=…)`` is drawn) starts a timer
that sends ``rerun_script`` for that fragment with ``is_auto_rerun`` every interval, whatever the
server is doing, until a ``stop_auto_rerun`` names it, as streamlit's frontend does
(``handleAutoRerun``: ``setInterval(sendUpdateWidgetsMessage(fragmentId, true))``).

The lesson: the teacher's tab opens ``?class=CODE&key=KEY&present=1`` (the projector; presenter mode
also keeps the sidebar's roster of who answered off the projector) and prefills; the students open
``?class=CODE`` over ``--ramp`` seconds and join through the form (a nickname each); the teacher
takes ``--steps`` Steps, ``--questions`` of them asked first (the *Predict first* toggle on: the
question opens; → reveals it and takes the Step; the toggle off again). Each student answers a
question 0.5–6 s after its buttons appear, a random option; every 4th student double-clicks
(the same button twice, 50 ms apart). After Step ``--kill-after`` (default: half the Steps) one
replica that does not hold the teacher is killed (SIGKILL; ``serve`` starts it again): its
students' websockets close, and each reconnects through nginx as streamlit's frontend does (the
health URL with its old cookie, which nginx rewrites to a live replica; a websocket asking to
resume its old session; a rerun with its own ``?class=…&seat=…`` address), while the teacher keeps
stepping (plain Steps only) until they are all back at the teacher's step.

Measured: join (send *Join* → the seat line), following (the teacher's click for Step k → the
follower's stage reports ``decode steps k``; p50/p95 over followers × Steps), answering (every
answer sent within 10 s of the question; the store's ``tally``, ``answered`` and each seat's
``my_answer`` against what was sent: every answer counted exactly once; the last answer sent → the
teacher's strip showing "N of N answered", p50/p95 over the questions), and the kill (its students
back at the teacher's step with their seat and, by ``my_answer``, their answers; the others'
following while they were away). A page's exception element, a timeout or a wrong count is an
error: the process exits 1 after printing. Traffic goes to 127.0.0.1 only.
``--quick`` (tests/bench/test_class_mode_quick.py): 2 replicas, 6 students joining over 1 s, 3 Steps,
1 question (before Step 2), the kill after Step 2.

The package, by concern: ``tab.py`` (one browser tab at the protocol level: ``Tab``, ``until``),
``lesson.py`` (the teacher's class: joining, following, the whole run; ``Run``, what was measured),
``answers.py`` (a question and its answers), ``kill.py`` (a replica killed mid-class),
``server.py`` (the class server, its warm-up and one timed class), ``report.py`` (the tables),
``__main__.py`` (the command line).
"""
