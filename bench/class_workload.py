"""The class as the serving workload (issue 56): ``python -m bench.class_workload [--quick] [--students N]``.

A class server (``python -m serve``: replicas and the class engine behind nginx) with ``--engine-model larger``;
a teacher opens a class and N simulated students join it, then send their own requests through the real routes to
the one engine and read their token streams as a page's EventSource does. Prints one table:

- requests served / sent, and token-identical to solo runs (``generate_cached`` on the same model, greedy);
- throughput: the engine's ÷ the same requests one at a time (``max_running`` 1, the same engine and routes);
- per-student ITL p50 / p95;
- a long document (a request as long as the context) arriving while 8 students decode: their max ITL ÷ their
  median, without chunked prefill and with it at the default budget;
- a shared system prompt of whole blocks: prefix hits per request and the prefill work saved;
- first token after Send with an idle engine, p95 (from the POST to the first token's event);
- the engine's CPU while idle (cores).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from bench.class_mode.web import Jar, post
from bench.engine_client import prompt, send
from bench.procs import cpu_seconds
from core.decode.generate import SamplingConfig, generate_cached
from core.model.shipped import load_shipped_tokenizer
from core.model.tokenizer import decode, encode, end_token_id
from core.serving.engine import EngineSettings
from serve.engine_process import make_service
from serve.engine_service import SIMULATED
from serve.nginx import free_port
from serve.replicas import class_server

QUICK = {"students": 8, "new_tokens": 12, "replicas": 1}
DOC_STUDENTS, DOC_TOKENS = 8, 48
DEFAULT_BUDGET = EngineSettings().token_budget


def settings(base: str, teacher: Jar, **body) -> None:
    """The teacher's change; a long document while the last one still runs is sent once it has ended."""
    for _ in range(100):
        status, answer = post(base, "/explainer/serve/settings", body, teacher)
        if status != 429:
            break
        time.sleep(0.2)
    if status != 200:
        raise SystemExit(f"class_workload: the engine refused {body}: {answer}")


def until_end(tokens: list[int], end: int | None) -> list[int]:
    """A solo run's tokens up to and including the end token, where the engine ends a request."""
    return tokens[: tokens.index(end) + 1] if end in tokens else tokens


def gaps(result: dict) -> list[float]:
    return [b - a for a, b in zip(result["ms"], result["ms"][1:], strict=False)]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, round(q * len(xs) + 0.5) - 1))]


def all_at_once(base: str, jars: list[Jar], new_tokens: int, texts: list[str]) -> tuple[list[dict], float]:
    t0 = time.perf_counter()
    with ThreadPoolExecutor(len(jars)) as pool:
        results = list(pool.map(lambda a: send(base, a[0], a[1], new_tokens), zip(jars, texts, strict=True)))
    return results, time.perf_counter() - t0


def document_hits(base: str, teacher: Jar) -> int:
    """The positions the room's last long document found in the prefix cache (the engine's state, as the display
    reads it)."""
    req = urllib.request.Request(f"{base}/explainer/serve/state", headers=teacher.header())
    with urllib.request.urlopen(req, timeout=60) as r:
        state = json.load(r)
    return [x for x in state["requests"] if x["label"] == "Long document"][-1]["hit_tokens"]


def long_document(base: str, teacher: Jar, jars: list[Jar], chunked: bool) -> tuple[float, int]:
    """8 students decode; once they have started, the long document arrives: their max ITL ÷ their median ITL, and
    the positions the document found in the prefix cache (none: each document is new, and prefills whole)."""
    settings(base, teacher, chunked_prefill=chunked)
    with ThreadPoolExecutor(len(jars)) as pool:
        futures = [pool.submit(send, base, j, prompt(i), DOC_TOKENS) for i, j in enumerate(jars)]
        time.sleep(0.3)  # the students' prefills are done: they decode when the document comes
        settings(base, teacher, long_document=True)
        results = [f.result() for f in futures]
    g = [x for r in results for x in gaps(r)]
    return max(g) / statistics.median(g), document_hits(base, teacher)


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.class_workload", description=__doc__.splitlines()[0])
    ap.add_argument("--students", type=int, default=40)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--replicas", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="; ".join(f"{k} {v}" for k, v in QUICK.items()))
    args = ap.parse_args()
    if args.quick:
        for k, v in QUICK.items():
            if getattr(args, k) == ap.get_default(k):
                setattr(args, k, v)
    n, new = args.students, args.new_tokens
    tok = load_shipped_tokenizer()
    model = make_service("larger").model  # the engine's own weights (the larger preset, seed 0)
    texts = [prompt(i) for i in range(n)]
    end = end_token_id(tok)
    solo = [
        decode(tok, until_end(generate_cached(model, encode(tok, t), new, SamplingConfig()).tokens, end)) for t in texts
    ]
    rows = []
    with class_server(args.replicas, port=free_port(), app_args=("--engine-model", "larger")) as srv:
        base, teacher = srv.url, Jar()
        _, opened = post(base, "/explainer/class/open", {}, teacher)
        jars = [Jar() for _ in range(n)]
        for j in jars:
            post(base, "/explainer/class/join", {"code": opened["code"]}, j)
        settings(base, teacher, max_running=1)
        _, alone_s = all_at_once(base, jars, new, texts)
        settings(base, teacher, max_running=16, token_budget=DEFAULT_BUDGET)
        results, engine_s = all_at_once(base, jars, new, texts)
        served = [r for r in results if "error" not in r and r["end"]["kind"] == "done"]
        same = sum(r.get("text") == s for r, s in zip(results, solo, strict=True))
        itl = [x for r in served for x in gaps(r)]
        rows += [
            ("requests served / sent", f"{len(served)} / {n}"),
            ("requests token-identical to solo runs", f"{same} / {n}"),
            ("throughput: engine ÷ one at a time", f"{alone_s / engine_s:.2f}× ({alone_s:.2f} s ÷ {engine_s:.2f} s)"),
            ("per-student ITL p50 / p95", f"{pct(itl, 0.5):.1f} / {pct(itl, 0.95):.1f} ms"),
        ]
        doc = jars[:DOC_STUDENTS]
        off, on = long_document(base, teacher, doc, False), long_document(base, teacher, doc, True)
        rows.append(
            (
                f"long document: others' max ITL ÷ median, chunking off / on (budget {DEFAULT_BUDGET})",
                f"{off[0]:.1f}× / {on[0]:.1f}×",
            )
        )
        rows.append(("… the document's positions found in the prefix cache, off / on", f"{off[1]} / {on[1]}"))
        # Two whole blocks of 16: 31 tokens of text and a newline (a token of its own, never merged with the next).
        system = decode(tok, encode(tok, " ".join(SIMULATED) * 4)[:31]) + "\n"
        settings(base, teacher, system_prompt=system)
        time.sleep(0.5)  # the system prompt's own prefill (its blocks cached)
        hit, _ = all_at_once(base, jars[:DOC_STUDENTS], 4, texts[:DOC_STUDENTS])
        hits = [r["end"]["hit_tokens"] for r in hit if "end" in r]
        saved = sum(hits) / sum(r["end"]["prompt_tokens"] for r in hit if "end" in r)
        shared = len(encode(tok, system)) / statistics.mean(r["end"]["prompt_tokens"] for r in hit if "end" in r)
        rows.append(("shared system prompt: hits per request (positions)", f"{min(hits)} … {max(hits)}"))
        rows.append(("prefill work saved / shared fraction", f"{saved:.0%} / {shared:.0%}"))
        settings(base, teacher, system_prompt="")
        firsts = [send(base, jars[0], texts[i % n], 2)["first_ms"] for i in range(20)]
        rows.append(("first token after Send, idle engine, p95", f"{pct(firsts, 0.95):.0f} ms"))
        pid = srv.engine.proc.pid
        c0, t0 = cpu_seconds(pid), time.perf_counter()
        time.sleep(5)
        rows.append(
            ("engine CPU with nothing to do", f"{(cpu_seconds(pid) - c0) / (time.perf_counter() - t0):.3f} cores")
        )
    print(f"Serve the class: {n} students, {new} new tokens each, the larger preset, {args.replicas} replicas + nginx")
    print()
    print("| measure | value |")
    print("|---|---:|")
    for k, v in rows:
        print(f"| {k} | {v} |")


if __name__ == "__main__":
    main()
