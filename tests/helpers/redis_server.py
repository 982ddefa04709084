"""A throwaway ``redis-server`` on a loopback port for tests (Debian's package; ``.ci/run`` installs it):
no persistence unless asked, stopped afterwards. ``redis_server()`` yields its URL; ``RedisServer`` is the
same server as an object that a test can stop and start again on its port (an outage)."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.helpers.poll import until

BINARY = "redis-server"


def quote_password(password: str) -> str:
    """``password`` as a Redis URL carries it (percent-encoded: "/", "@", ":" and non-ASCII escaped)."""
    return quote(password, safe="")


def available() -> bool:
    return shutil.which(BINARY) is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ping(port: int, password: str | None = None) -> bool:
    """Whether a Redis server answers PING on 127.0.0.1:port (RESP spoken by hand: no client needed),
    after AUTH when it has a ``password``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall((f"AUTH {password}\r\n" if password else "").encode() + b"PING\r\n")
            want = (b"+OK\r\n" if password else b"") + b"+PONG"
            got = b""
            while len(got) < len(want) and (chunk := s.recv(64)):
                got += chunk
            return got.startswith(want)
    except OSError:
        return False


class RedisServer:
    """One ``redis-server`` on 127.0.0.1:``port`` (a free one when None). ``password``: ``--requirepass``;
    ``data_dir``: a folder for an append-only file fsynced on every write, so that what was written
    before ``stop()`` is there again after ``start()`` (none: nothing kept)."""

    def __init__(self, port: int | None = None, password: str | None = None, data_dir: Path | None = None):
        self.port, self.password, self.data_dir = port or _free_port(), password, data_dir
        self.proc: subprocess.Popen | None = None
        self.output = ""

    @property
    def url(self) -> str:
        auth = f":{quote_password(self.password)}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self, timeout_s: float = 10) -> bool:
        """Start it and poll PING until it answers: True; False when it exited at start (its output in
        ``output``). AssertionError (``tests.helpers.poll.until``) when it neither answers nor exits."""
        cmd = [BINARY, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        if self.data_dir is None:
            cmd += ["--appendonly", "no"]
        else:
            cmd += ["--appendonly", "yes", "--appendfsync", "always", "--dir", str(self.data_dir)]
        if self.password:
            cmd += ["--requirepass", self.password]
        log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        with log:
            until(lambda: self.proc.poll() is not None or _ping(self.port, self.password), timeout_s, self.url)
            if self.proc.poll() is None:
                return True
            log.seek(0)
            self.output = log.read().decode(errors="replace")[-2000:]
            return False

    def stop(self) -> None:
        """Stop it (SIGTERM, then SIGKILL after 10 s) and wait until it has exited."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@contextlib.contextmanager
def redis_server(tries: int = 3, password: str | None = None, data_dir: Path | None = None):
    """Yield a fresh, started ``RedisServer``; one that exits at start (its port taken meanwhile) is
    started again on another port. RuntimeError with its output after ``tries`` such starts."""
    output = ""
    for _ in range(tries):
        server = RedisServer(password=password, data_dir=data_dir)
        try:
            if server.start():
                yield server
                return
            output = server.output
        finally:
            server.stop()
    raise RuntimeError(f"redis-server exited at start {tries} times; its last output:\n{output}")


@contextlib.contextmanager
def url_or_skip():
    """Yield the URL of a fresh ``redis_server()`` for a module's fixture; skip its tests where the binary is
    missing (``.ci/run`` installs it)."""
    if not available():
        pytest.skip(f"{BINARY} is not installed (apt-get install redis-server; .ci/run does)")
    with redis_server() as server:
        yield server.url
