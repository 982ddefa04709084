"""Class mode (issues 41 and 49): the teacher's plan a class follows (``plan``) and the class store every
replica shares (``store``, with its ``sqlite_store`` and ``redis_store`` backends and ``rules``)."""
