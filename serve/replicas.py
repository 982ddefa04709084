"""A class server: `streamlit run main.py` replicas (two per core) on loopback ports, nginx in front.

    python -m serve [--replicas N] [--port 8501] [--host 0.0.0.0]
    python -m serve --backend 10.0.0.11:8501 --backend 10.0.0.12:8501 --port 80   # replicas elsewhere
    python -m serve --print-config [...]                                           # the nginx config only
    python -m serve --replicas 2 -- --models-dir /srv/models     # the app's own options after --

One Streamlit process runs one script rerun at a time (Python's global interpreter lock), so a class
on one process uses one core and students' clicks queue behind each other. This starts N replicas
(default: two per core, see ``default_replicas``), writes an nginx config from
`deploy/nginx.conf.template` into a temporary directory, checks it with `nginx -t`, starts nginx on
the public port, prints the address and runs until Ctrl-C or SIGTERM, which stop every child. A
replica that exits is started again on its port (its students' sessions are lost; their page says
so and they press Prefill again). nginx keeps each browser on one replica with a cookie it sets
itself (see the template).
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from core.checkpoints.app_options import PASSWORD_ENV
from core.classroom.store import ENV_URL as CLASS_STORE_ENV
from serve import step_queue
from serve.nginx import (
    ServeError,
    address_problem,
    check_config,
    find_nginx,
    free_port,
    nginx_command,
    nginx_config,
    port_taken,
)
from serve.version import app_version

ROOT = Path(__file__).resolve().parents[1]  # the checkout, or site-packages


@dataclass
class Replica:
    """One streamlit process behind nginx: ``name`` is the value of the affinity cookie."""

    name: str
    address: str  # host:port
    proc: subprocess.Popen | None = None  # None for a replica on another host (--backend)
    restarts: int = 0
    app_args: tuple[str, ...] = ()  # the operator's options for the app (after ``--``), e.g. --models-dir
    cpu: int | None = None  # the core its process (every thread) runs on; None: any core


@dataclass
class ClassServer:
    url: str
    replicas: list[Replica]
    nginx: subprocess.Popen
    prefix: Path  # the nginx config, its logs and the replicas' logs
    engine: Replica | None = None  # the class engine's process (serve/engine_process.py), "Serve the class"


def _die_with_parent() -> None:
    """In the child before exec (Linux): get SIGTERM if serve itself is killed, so no replica or
    nginx outlives it on a shared machine."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def default_replicas() -> int:
    """Two replicas per core this process may run on. Why not one: a replica's threads share one
    GIL, so a burst of its students' reruns queues inside it, while two processes per core are
    shared by the kernel's scheduler. With 40 sessions on 2 cores, 4 replicas gave a Step p95 of
    63–109 ms following along and 506–572 ms hammering (5 runs), against 220–334 and 669–678 ms
    for 2 (2 runs; ``python -m bench.server_load --replicas N``, README). Eight (four per core)
    gave about the same hammering p95 as four later (438–486 against 473–545 ms, 3 and 4 runs), and
    again with the heap frozen (``serve/gc_freeze.py``: 424–454 against 438–457 ms, 2 runs each)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return 2 * cores


def pinned_cpus(n: int, pin: bool = True) -> list[int | None]:
    """The core for each of ``n`` local replicas: this process's allowed cores in turn, or None
    each (``pin`` False, or a single core). Why pin: a replica's threads (the event loop and the
    script runs) hand Python's GIL to each other for every message; on different cores each
    hand-off wakes the other core. With a class hammering Step, 2 replicas pinned spent 0.9–1.2 ms
    of kernel time per Step against 2.1–2.5 unpinned, and the Step p95 fell by ~25 %; following
    along, pinned replicas answered slower (p95 220–430 ms against 120–290): a replica cannot
    borrow the other core (``python -m bench.server_load --replicas 2 [--pin]``, README)."""
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if not pin or len(cores) < 2:
        return [None] * n
    return [cores[i % len(cores)] for i in range(n)]


def start_child(cmd: list[str], log: Path, cpu: int | None = None, env: dict | None = None) -> subprocess.Popen:
    """Start ``cmd`` in its own process group (a terminal's Ctrl-C reaches serve, which stops the
    children in order), output appended to ``log``; on core ``cpu`` (every thread) if given, with
    these environment variables added to serve's own (``env``)."""

    def before_exec() -> None:
        _die_with_parent()
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})  # threads started later inherit it

    with open(log, "ab") as out:
        return subprocess.Popen(
            cmd,
            cwd=ROOT,
            env={**os.environ, **(env or {})},
            stdout=out,
            stderr=subprocess.STDOUT,
            process_group=0,
            preexec_fn=before_exec,
        )


def replica_command(replica: Replica) -> list[str]:
    """``streamlit run main.py`` on the replica's loopback port, with the app's own options (``--model``,
    ``--models-dir``, ``--max-model-gib``) after ``--`` as ``streamlit run`` expects them."""
    port = replica.address.rsplit(":", 1)[1]
    cmd = [sys.executable, "-m", "streamlit", "run", "main.py", "--server.headless", "true"]
    cmd += ["--server.port", port, "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false"]
    return cmd + (["--", *replica.app_args] if replica.app_args else [])


def engine_command(engine: Replica) -> list[str]:
    """The class engine on its loopback port, with the app's own options (its store, public URL, engine model)."""
    port = engine.address.rsplit(":", 1)[1]
    cmd = [sys.executable, "-m", "serve.engine_process", "--port", port]
    return cmd + (["--", *engine.app_args] if engine.app_args else [])


def start_engine(engine: Replica, prefix: Path) -> None:
    engine.proc = start_child(engine_command(engine), prefix / "engine.log", env=class_store_env(prefix))


def class_store_env(prefix: Path) -> dict[str, str]:
    """The local replicas' class store, unless the operator set ``$EXPLAINER_CLASS_STORE``: one SQLite
    file in ``prefix``, kept while the server runs, so every replica sees the same class and a class
    survives a replica's restart (issue 41). An app's ``--class-store URL`` after ``--`` wins over it."""
    return {} if os.environ.get(CLASS_STORE_ENV) else {CLASS_STORE_ENV: f"sqlite:///{prefix / 'classes.db'}"}


def start_replica(replica: Replica, prefix: Path) -> None:
    log = prefix / f"replica-{replica.name}.log"
    # Every replica queues its decode Steps, one at a time (serve/step_queue.py), and shares the class store.
    env = {step_queue.ENV: "1", **class_store_env(prefix)}
    replica.proc = start_child(replica_command(replica), log, replica.cpu, env=env)


def wait_healthy(url: str, proc: subprocess.Popen, timeout_s: float, log: Path, path: str = "/_stcore/health") -> None:
    """Poll ``url`` + ``path`` until it answers; ServeError (with the end of ``log``) if
    ``proc`` exits or time runs out."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            urllib.request.urlopen(url + path, timeout=2)
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace").splitlines()[-5:] if log.exists() else []
                raise ServeError("\n".join([f"{url} did not start; the end of its log:", *tail])) from None
            time.sleep(0.3)


def stop(procs: list[subprocess.Popen | None]) -> None:
    """SIGTERM to every live process at once, then wait (10 s each at most, then SIGKILL)."""
    live = [p for p in procs if p is not None and p.poll() is None]
    for p in live:
        p.terminate()
    for p in live:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def supervise(server: ClassServer, stopping: threading.Event, prefix: Path) -> None:
    """Start again any local replica that exits (at most 5 times each), until ``stopping`` is set."""
    while not stopping.wait(0.5):
        for r in [*server.replicas, *([server.engine] if server.engine else [])]:
            if r.proc is None or r.proc.poll() is None or r.restarts >= 5:
                continue
            print(
                f"serve: {'the class engine' if r is server.engine else 'replica ' + r.name} ({r.address}) exited "
                f"with code {r.proc.returncode}; starting it again",
                file=sys.stderr,
                flush=True,
            )
            r.restarts += 1
            (start_engine if r is server.engine else start_replica)(r, prefix)


@contextlib.contextmanager
def class_server(
    replicas: int | None = None,
    port: int = 8501,
    host: str = "127.0.0.1",
    backends: tuple[str, ...] = (),
    nginx: str | None = None,
    timeout_s: float = 120,
    app_args: tuple[str, ...] = (),
    pin: bool = False,
):
    """Yield a running ``ClassServer``: ``replicas`` local streamlit processes (default:
    ``default_replicas()``) or the given remote ``backends`` ("host:port"), behind nginx on
    ``host:port``; stop everything afterwards. Raises ServeError when nginx is missing, the port
    is taken, the config fails ``nginx -t`` or a process does not start. ``app_args`` go to every
    local replica's app (e.g. ``("--models-dir", "/srv/models")``); ``pin``: local replica i on
    allowed core i mod cores (``pinned_cpus``)."""
    binary = find_nginx(nginx)
    if port_taken(host, port):
        raise ServeError(f"port {port} on {host} is taken by another program: choose another with --port")
    n = replicas or default_replicas()
    reps = [Replica(f"r{i}", a) for i, a in enumerate(backends)] or [
        Replica(f"r{i}", f"127.0.0.1:{free_port()}", app_args=tuple(app_args), cpu=cpu)
        for i, cpu in enumerate(pinned_cpus(n, pin))
    ]
    prefix = Path(tempfile.mkdtemp(prefix="class-server-"))
    stopping, server, watcher = threading.Event(), None, None
    engine = Replica("engine", f"127.0.0.1:{free_port()}", app_args=tuple(app_args))
    try:
        named = [(r.name, r.address) for r in reps]
        (prefix / "nginx.conf").write_text(nginx_config(named, f"{host}:{port}", prefix, engine.address))
        check_config(binary, prefix)
        start_engine(engine, prefix)  # loads its model while the replicas start
        local = [r for r in reps if not backends]
        for r in local:
            start_replica(r, prefix)
        for r in local:
            wait_healthy(f"http://{r.address}", r.proc, timeout_s, prefix / f"replica-{r.name}.log")
        health = "/explainer/serve/health"
        wait_healthy(f"http://{engine.address}", engine.proc, timeout_s, prefix / "engine.log", health)
        proc = start_child([*nginx_command(binary, prefix), "-g", "daemon off;"], prefix / "nginx.log")
        url = f"http://{'127.0.0.1' if host == '0.0.0.0' else host}:{port}"
        server = ClassServer(url, reps, proc, prefix, engine)
        wait_healthy(server.url, proc, 15, prefix / "error.log")
        watcher = threading.Thread(target=supervise, args=(server, stopping, prefix), daemon=True)
        watcher.start()
        yield server
    finally:
        stopping.set()
        if watcher is not None:
            watcher.join()  # no replica is started again from here on
        stop([server and server.nginx, *(r.proc for r in reps), engine.proc])
        if not os.environ.get("CLASS_SERVER_KEEP_LOGS"):
            shutil.rmtree(prefix, ignore_errors=True)


def split_app_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """serve's own options, and what follows ``--`` (the app's options, passed to every replica)."""
    if "--" not in argv:
        return argv, []
    i = argv.index("--")
    return argv[:i], argv[i + 1 :]


def main(argv: list[str] | None = None) -> int:
    argv, app_args = split_app_args(sys.argv[1:] if argv is None else argv)
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Options after -- go to every replica's app, e.g. -- --models-dir /srv/models; "
        "--class-store URL: class mode's store, sqlite:////PATH or redis://HOST:6379/0 (default: one SQLite "
        "file in the server's temporary folder, shared by its local replicas)",
    )
    ap.add_argument("--version", action="version", version=f"%(prog)s {app_version()}")
    ap.add_argument(
        "--replicas", type=int, default=default_replicas(), help="streamlit processes (default: two per core)"
    )
    ap.add_argument("--port", type=int, default=8501, help="the public port students open")
    ap.add_argument("--host", default="0.0.0.0", help="address to listen on (default: every interface)")
    ap.add_argument("--backend", action="append", default=[], help="host:port of a replica on another machine")
    ap.add_argument("--nginx", help="path to the nginx binary (default: found on PATH or /usr/sbin)")
    ap.add_argument("--print-config", action="store_true", help="print the nginx config and exit")
    ap.add_argument(
        "--pin",
        action="store_true",
        help="replica i on core i mod cores (its own core while there are enough): more Steps per second "
        "when a class hammers Step, slower answers when it follows along (default: any core)",
    )
    ap.add_argument(
        "--teacher-password",
        help="opening a class asks for it (a server anyone on the network reaches); "
        "also $EXPLAINER_TEACHER_PASSWORD, which keeps it out of the process list",
    )
    ap.add_argument("--public-url", help="the address students open (the join QR code), e.g. http://class:8501")
    args = ap.parse_args(argv)
    if args.teacher_password:  # to every replica through its environment: never in a process list
        os.environ[PASSWORD_ENV] = args.teacher_password
    if args.public_url:
        app_args = [*app_args, "--public-url", args.public_url]
    if args.replicas < 1:
        ap.error("--replicas must be at least 1")
    problem = address_problem(args.host, args.port, args.backend)
    if problem:  # before anything binds or writes a config: ";evil" was written into nginx's
        ap.error(problem)
    if args.print_config:
        named = [(f"r{i}", a) for i, a in enumerate(args.backend)] or [
            (f"r{i}", f"127.0.0.1:{8600 + i}") for i in range(args.replicas)
        ]
        print(nginx_config(named, f"{args.host}:{args.port}", Path("/var/lib/class-server"), "127.0.0.1:8599"))
        return 0
    # Ctrl-C and SIGTERM both raise KeyboardInterrupt here (also when started in the background of
    # a script, where SIGINT would otherwise be ignored); class_server then stops every child.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.default_int_handler)
    try:
        with class_server(
            args.replicas,
            args.port,
            args.host,
            tuple(args.backend),
            args.nginx,
            app_args=tuple(app_args),
            pin=args.pin,
        ) as server:
            n = len(server.replicas)
            where = server.url
            if args.host == "0.0.0.0":
                where = f"http://{socket.gethostname()}:{args.port} (on this machine: {server.url})"
            cpus = [r.cpu for r in server.replicas if r.cpu is not None]
            on = f" (on cores {', '.join(map(str, cpus))})" if cpus else ""
            print(f"Class server: {n} replica{'s' * (n > 1)}{on} behind nginx. Students open {where}", flush=True)
            print(f"Logs: {server.prefix}. Ctrl-C stops it.", flush=True)
            while server.nginx.poll() is None:
                time.sleep(1)
            raise ServeError(f"nginx exited (code {server.nginx.returncode}); see {server.prefix}/error.log")
    except KeyboardInterrupt:
        pass
    except ServeError as err:
        print(f"serve: {err}", file=sys.stderr)
        return 1
    print("Class server stopped.", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
