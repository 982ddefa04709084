"""The class server for one run: replicas behind nginx sharing a class store, warmed, and one class
timed through them (``main_async``)."""

from __future__ import annotations

import asyncio
import gc
import inspect
import os
import shutil
import tempfile
import time
from pathlib import Path

from bench.class_mode.lesson import Lesson
from bench.class_mode.tab import COOKIE, Tab, now, until
from bench.procs import cpu_seconds
from core.classroom.store import ENV_URL, open_store


async def warm(url: str, replicas) -> None:
    """Each replica's first session imports the pages and loads the model: one plain page load and
    Prefill per replica (pinned by its cookie) before the class starts."""

    async def one(name: str):
        tab = Tab(f"warm {name}", url, "", cookie=f"{COOKIE}={name}")
        await tab.open()
        await until(f"replica {name} draws Prefill", lambda: "Prefill" in tab.buttons)
        await tab.click(*tab.buttons["Prefill"][:2])
        await until(f"replica {name} prefills", lambda: tab.step == 0)
        await tab.close()

    await asyncio.gather(*(one(r.name) for r in replicas))


def server_kwargs(store_url: str) -> dict:
    """How this checkout's ``class_server`` takes a class store: its own argument if it has one,
    else ``--class-store`` for app.py, and the environment variable every replica inherits."""
    os.environ[ENV_URL] = store_url
    params = inspect.signature(__import__("serve.replicas", fromlist=["class_server"]).class_server).parameters
    if "class_store" in params:
        return {"class_store": store_url}
    return {}


async def main_async(args) -> dict:
    from serve.nginx import free_port
    from serve.replicas import class_server

    tmp = Path(tempfile.mkdtemp(prefix="class-mode-"))
    store_url = args.store or f"sqlite:///{tmp / 'classes.db'}"
    res = {"store": store_url, "load_before": os.getloadavg()[0]}
    try:
        t_start = now()
        with class_server(args.replicas, port=free_port(), **server_kwargs(store_url)) as srv:
            res["started_s"] = now() - t_start
            pids = [r.proc.pid for r in srv.replicas]
            await warm(srv.url, srv.replicas)
            store = open_store(store_url)
            code, key = store.open_class()
            res["code"] = code
            lesson = Lesson(args, srv, store, code, key)
            cpu0 = {p: cpu_seconds(p) for p in pids}
            me0, t0 = time.process_time(), now()
            gc.collect()
            gc.disable()  # as bench.ws_session: the clients' pauses would land on every reply in flight
            try:
                res["run"] = await lesson.run()
            finally:
                gc.enable()
                for tab in [lesson.teacher, *lesson.students]:
                    if tab is not None:
                        await tab.close()
            res["elapsed_s"] = now() - t0
            live = [r.proc.pid for r in srv.replicas if r.proc.poll() is None]
            res["server_cpu_s"] = sum(cpu_seconds(p) - cpu0.get(p, 0.0) for p in live)  # the killed one's is lost
            res["client_cpu_s"] = time.process_time() - me0
            res["replicas_of"] = {s.name: s.replicas for s in lesson.students}
            try:
                store.end(code, key)
            except Exception as err:  # noqa: BLE001 — reported, the class is gone anyway after 12 h
                res["run"].errors.append(f"ending the class through the store: {err}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return res
