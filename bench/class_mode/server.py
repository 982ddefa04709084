"""The class server for one run: replicas behind nginx sharing a class store, warmed, and one class timed
through them (``main_async``)."""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
import time
from pathlib import Path

from bench.class_mode.joining import warm
from bench.class_mode.lesson import Lesson
from bench.class_mode.page import now
from bench.class_mode.serving import APP_ARGS as SERVING_APP_ARGS
from bench.class_mode.stores import ReadOnlySqlite, RedisServer
from bench.procs import cpu_seconds
from core.classroom.store import ENV_URL, open_store
from serve.nginx import free_port
from serve.replicas import class_server


def store_for(args, tmp: Path):
    """(the store's URL, what makes it unavailable for ``--outage`` or None): ``--store sqlite`` a new file in
    ``tmp``, ``redis`` a redis-server this bench starts, or a URL of a running store (no outage)."""
    if args.store == "redis":
        server = RedisServer(tmp)
        server.start()
        return server.url, server
    if args.store == "sqlite":
        path = tmp / "classes.db"
        return f"sqlite:///{path}", ReadOnlySqlite(path) if args.outage == "sqlite" else None
    return args.store, None


async def main_async(args) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="class-mode-"))
    res = {"load_before": os.getloadavg(), "tmp": tmp}
    control = None
    try:
        store_url, control = store_for(args, tmp)
        res["store"] = store_url
        os.environ[ENV_URL] = store_url  # every replica inherits it (serve.replicas.class_store_env)
        t_start = now()
        app_args = SERVING_APP_ARGS if args.serving else ()
        with class_server(args.replicas, port=free_port(), app_args=app_args) as srv:
            res["started_s"] = now() - t_start
            pids = [r.proc.pid for r in srv.replicas]
            await warm(srv.url, srv.replicas)
            store = open_store(store_url)
            lesson = Lesson(args, srv, store, control, store_url)
            cpu0 = {p: cpu_seconds(p) for p in pids}
            me0, t0 = time.process_time(), now()
            gc.collect()
            gc.disable()  # as bench.ws_session: the clients' pauses would land on every reply in flight
            try:
                res["run"] = await lesson.run()
            finally:
                gc.enable()
                for tab in lesson.tabs():
                    await tab.close()
                if control is not None:
                    control.start() if not control.up() else None
            res["elapsed_s"] = now() - t0
            res["load_after"] = os.getloadavg()
            live = [r.proc.pid for r in srv.replicas if r.proc.poll() is None]
            res["server_cpu_s"] = sum(cpu_seconds(p) - cpu0.get(p, 0.0) for p in live)  # the killed one's is lost
            res["client_cpu_s"] = time.process_time() - me0
            run = res["run"]
            if run.code:
                try:
                    store.end(run.code, run.teacher_key)
                except Exception as err:  # noqa: BLE001 — reported, the class is gone anyway after 12 h
                    run.errors.append(f"ending the class through the store: {err}")
    finally:
        if control is not None:
            control.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return res
