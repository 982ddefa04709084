"""Class mode (issue 41): a teacher opens a class, students join with its code and follow the
teacher's page, request and step on their own sessions, and answer predict-first questions whose
count and histogram the projector shows. ``link`` (who this session is in which class, from the
address), ``teacher`` (the teacher's panel and what it publishes), ``follow`` (a student's session
showing the plan), ``strip`` (the live line above every page). The class lives in the class store
(``core.classroom.store``), shared by every replica."""
