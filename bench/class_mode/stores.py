"""The class store a run uses, and how it is made unavailable for an outage: a ``redis-server`` this bench
starts on a loopback port with an append-only file fsynced on every write (``RedisServer``: stopped and started
again on its port), or the SQLite file made read-only (``ReadOnlySqlite``: ``chattr +i`` on the file and its
write-ahead log).

Why ``chattr +i`` and not the file's mode: the replicas run as root here, and root writes a file whatever its mode
(CAP_DAC_OVERRIDE). Replicas started without that capability (``setpriv --bounding-set -dac_override,…``) do
refuse a read-only file, but only when they open it: SQLite keeps its connections open (the store pools them),
and a file descriptor opened for writing keeps writing after ``chmod 444``. The immutable flag is checked on every
write, so the replicas' open connections fail too (``disk I/O error`` on the log, ``attempt to write a readonly
database`` on a connection opened meanwhile). It needs a file system with that flag (ext4, xfs, btrfs) and
CAP_LINUX_IMMUTABLE."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from pathlib import Path


class StoreError(RuntimeError):
    """This machine cannot provide the store or the outage asked for (a sentence saying why)."""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ping(port: int) -> bool:
    """Whether a Redis server answers PING on 127.0.0.1:port (RESP by hand)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """``redis-server`` on 127.0.0.1 (a free port), its append-only file in ``folder``: what was written before
    ``stop`` is there again after ``start``."""

    name = "Redis"

    def __init__(self, folder: Path):
        if shutil.which("redis-server") is None:
            raise StoreError("redis-server is not installed (Debian: apt-get install redis-server)")
        self.folder, self.port, self.proc = folder, _free_port(), None
        self.log = folder / "redis.log"

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self, timeout_s: float = 15) -> None:
        cmd = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        cmd += ["--appendonly", "yes", "--appendfsync", "always", "--dir", str(self.folder)]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while not ping(self.port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                tail = self.log.read_text(errors="replace").splitlines()[-3:]
                raise StoreError("redis-server did not start: " + " / ".join(tail))
            time.sleep(0.05)

    def stop(self) -> None:
        """SIGTERM (Redis writes its append-only file and exits), then wait."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def up(self) -> bool:
        return ping(self.port)

    def close(self) -> None:
        self.stop()


class ReadOnlySqlite:
    """The SQLite store at ``path`` made read-only (``stop``) and writable again (``start``) with the
    immutable flag; StoreError at once when this file system or this process cannot set it."""

    name = "SQLite"

    def __init__(self, path: Path):
        self.path = Path(path)
        probe = self.path.parent / ".immutable-probe"
        probe.touch()
        try:
            for flag in ("+i", "-i"):
                done = subprocess.run(["chattr", flag, str(probe)], capture_output=True, text=True)
                if done.returncode != 0:
                    raise StoreError(f"chattr {flag} does not work here ({done.stderr.strip()}): no read-only outage")
        except FileNotFoundError:
            raise StoreError("chattr is not installed (e2fsprogs): no read-only outage") from None
        finally:
            subprocess.run(["chattr", "-i", str(probe)], capture_output=True)
            probe.unlink(missing_ok=True)
        self.frozen: list[Path] = []

    @property
    def url(self) -> str:
        return f"sqlite:///{self.path}"

    def start(self) -> None:
        """Writable again (the flag off every file it was set on)."""
        if self.frozen:
            subprocess.run(["chattr", "-i", *map(str, self.frozen)], check=True)
        self.frozen = []

    def stop(self) -> None:
        """Read-only: the database and its write-ahead log (the shared-memory index stays writable, as it is on a
        read-only medium SQLite can still read)."""
        self.frozen = [p for p in (self.path, Path(f"{self.path}-wal")) if p.exists()]
        subprocess.run(["chattr", "+i", *map(str, self.frozen)], check=True)

    def up(self) -> bool:
        return not self.frozen

    def close(self) -> None:
        self.start()
