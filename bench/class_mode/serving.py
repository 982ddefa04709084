"""The class engine at work while the class follows (``--serving K``, issue 56's last goal): K seated students each
send requests to Serve the class's engine back to back (``bench.engine_client.send``, through nginx with the
seat's cookies), from before the class sits still until its last Step. The server then runs the engine on
``--engine-model larger``, so the quiet and follow rows are measured while a larger model's steps take the CPU."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from bench.engine_client import prompt, send
from bench.procs import cpu_seconds

NEW_TOKENS = 24  # each request's new tokens (the Serve page's default)
APP_ARGS = ("--engine-model", "larger")


@dataclass
class Serving:
    """K students' requests in a loop, one thread each (a seat has one request running at a time)."""

    base: str
    jars: list
    engine_pid: int | None
    stop: threading.Event = field(default_factory=threading.Event)
    results: list = field(default_factory=list)
    threads: list = field(default_factory=list)
    t0: float = 0.0
    cpu0: float = 0.0

    def start(self) -> None:
        self.t0, self.cpu0 = time.perf_counter(), self._engine_cpu()
        for i, jar in enumerate(self.jars):
            t = threading.Thread(target=self._loop, args=(i, jar), daemon=True, name=f"serving-{i}")
            t.start()
            self.threads.append(t)

    def _loop(self, i: int, jar) -> None:
        n = 0
        while not self.stop.is_set():
            try:
                self.results.append(send(self.base, jar, prompt(1000 * i + n), NEW_TOKENS))
            except OSError as err:  # a replica killed under the class: nginx's 502 (said in the table)
                self.results.append({"error": str(err)})
            n += 1

    def finish(self) -> dict:
        """Stop after the requests in flight end; what was served meanwhile (requests, tokens, engine CPU)."""
        self.stop.set()
        for t in self.threads:
            t.join(300)
        seconds = time.perf_counter() - self.t0
        done = [r for r in self.results if "error" not in r and r["end"].get("kind") == "done"]
        return {
            "students": len(self.jars),
            "served": len(done),
            "refused": len(self.results) - len(done),
            "tokens": sum(len(r["ms"]) for r in done),
            "seconds": seconds,
            "engine_cores": (self._engine_cpu() - self.cpu0) / seconds if seconds > 0 else float("nan"),
        }

    def _engine_cpu(self) -> float:
        return cpu_seconds(self.engine_pid) if self.engine_pid else 0.0
