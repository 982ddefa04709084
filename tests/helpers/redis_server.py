"""A throwaway ``redis-server`` on a loopback port for tests (Debian's package; ``.ci/run`` installs it):
no persistence, stopped afterwards. ``redis_server()`` yields its URL."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile

from tests.helpers.poll import until

BINARY = "redis-server"


def available() -> bool:
    return shutil.which(BINARY) is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ping(port: int) -> bool:
    """Whether a Redis server answers PING on 127.0.0.1:port (RESP spoken by hand: no client needed)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(64).startswith(b"+PONG")
    except OSError:
        return False


@contextlib.contextmanager
def redis_server(timeout_s: float = 10, tries: int = 3):
    """Yield ``redis://127.0.0.1:PORT/0`` of a fresh server, polled with PING until it answers; a server
    that exits at start (its port taken meanwhile) is started again on another port. AssertionError
    (``tests.helpers.poll.until``) when none answers within ``timeout_s``."""
    output = ""
    for _ in range(tries):
        port = _free_port()
        cmd = [BINARY, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        with tempfile.TemporaryFile() as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
            try:
                until(lambda p=proc, n=port: p.poll() is not None or _ping(n), timeout_s, f"redis-server on {port}")
                if proc.poll() is None:
                    yield f"redis://127.0.0.1:{port}/0"
                    return
                log.seek(0)
                output = log.read().decode(errors="replace")[-2000:]
            finally:
                if proc.poll() is None:
                    proc.terminate()
                    try:
                        proc.wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
    raise RuntimeError(f"redis-server exited at start {tries} times; its last output:\n{output}")
