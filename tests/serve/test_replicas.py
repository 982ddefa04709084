"""The class server (serve/replicas.py): streamlit replicas on loopback behind nginx, one browser per replica.

nginx must be installed (CI installs it like chromium); these tests fail, not skip, without it.
"""

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tomllib
import urllib.request
from pathlib import Path

import pytest

from bench.browser import CHROMIUM, CHROMIUM_ARGS, ROOT, heatmap_rows, open_from_menu, screenshot, wait_rows
from bench.procs import children
from bench.ws_session import drive
from serve import nginx as class_nginx
from serve import replicas
from tests.helpers.poll import until
from tests.serve.test_class_routes import Browser
from tests.serve.test_engine_routes import Engine
from ui.serve_class import restart

LOST = "The class server restarted your session"
# A Llama-style config padded past nginx's default 16 KB body buffer, so the upload exercises the
# generated client_body settings; 32 query heads and 8 KV heads are what the page must show.
CONFIG = json.dumps(
    {
        "model_type": "llama",
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "hidden_size": 4096,
        "torch_dtype": "bfloat16",
        "notes": "x" * 40_000,
    }
).encode()


def session_connects(replica: replicas.Replica) -> int:
    """Sessions the replica itself has connected so far (streamlit's /_stcore/metrics)."""
    url = f"http://{replica.address}/_stcore/metrics?families=session_events"
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    return int(re.search(r'session_events_total\{type="connect"\} (\d+)', text).group(1))


def uploaded_bytes(replica: replicas.Replica) -> int:
    """Bytes of uploaded files the replica holds (0 when none)."""
    url = f"http://{replica.address}/_stcore/metrics?families=cache_memory_bytes"
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    return sum(int(n) for n in re.findall(r"cache_memory_bytes\{[^}]*UploadedFileManager[^}]*\} (\d+)", text))


def log(server: replicas.ClassServer) -> str:
    """nginx's access log: one line per request with the replica that answered and the cookie sent."""
    return (server.prefix / "access.log").read_text()


@pytest.fixture(scope="module")
def class2():
    with replicas.class_server(2, port=class_nginx.free_port()) as server:
        yield server


def test_generated_config_passes_nginx_t(tmp_path):
    """`nginx -t` accepts the config for local replicas and for replicas on other hosts; it passes
    websocket upgrades, keeps idle websockets for an hour and admits uploads of streamlit's
    maxUploadSize (.streamlit/config.toml) but not twice that."""
    nginx = class_nginx.find_nginx()
    limit = tomllib.loads((ROOT / ".streamlit/config.toml").read_text())["server"]["maxUploadSize"] * 2**20
    for backends in ([("r0", "127.0.0.1:8600"), ("r1", "127.0.0.1:8601")], [("r0", "10.0.0.11:8501")]):
        text = class_nginx.nginx_config(backends, "127.0.0.1:8501", tmp_path)
        (tmp_path / "nginx.conf").write_text(text)
        class_nginx.check_config(nginx, tmp_path)  # raises ServeError with nginx's message
        assert "proxy_set_header Upgrade $http_upgrade;" in text and "proxy_read_timeout 1h;" in text
        body = int(re.search(r"client_max_body_size (\d+)k;", text).group(1)) * 1024
        assert limit < body < 2 * limit
        assert all(f"upstream {name} {{\n        server {address}" in text for name, address in backends)


def test_refuses_clearly_without_nginx_or_on_a_taken_port():
    """No nginx: exit 1 with the apt-get line. A taken port: exit 1 naming the port. No traceback."""
    cmd = [sys.executable, "-m", "serve", "--host", "127.0.0.1", "--replicas", "1"]
    done = subprocess.run([*cmd, "--nginx", "/nonexistent/nginx"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 1 and "apt-get install -y nginx" in done.stderr and "Traceback" not in done.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([*cmd, "--port", str(port)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 1 and f"port {port}" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "args, said",
    [
        (["--port", "70000"], "--port must be 1 … 65535, got 70000"),  # was an OverflowError traceback, exit 0
        (["--port", "-1"], "--port must be 1 … 65535, got -1"),
        (["--host", ";evil"], "--host must be a host name or an IP address, got ';evil'"),  # was "port … taken"
        (["--backend", "x y;z:1", "--print-config"], "--backend must be host:port"),  # was written into nginx's config
    ],
)
def test_bad_addresses_are_refused_before_anything_starts(args, said):
    """The public port, host and backends go into nginx's config verbatim: anything but a name or IP address
    and a port 1 … 65535 is refused by argparse (exit 2), with no traceback and no config printed."""
    done = subprocess.run(
        [sys.executable, "-m", "serve", "--replicas", "1", *args], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr and not done.stdout
    assert class_nginx.address_problem("10.0.0.12", 8601, ["10.0.0.11:8601", "app-2.school.lan:8602"]) is None


def test_ctrl_c_stops_every_child():
    """`python -m serve` prints the address and hands what follows `--` to its replica's app and its class engine;
    Ctrl-C (SIGINT) stops nginx, every replica and the engine, exit 0."""
    port = class_nginx.free_port()
    cmd = [sys.executable, "-m", "serve", "--host", "127.0.0.1", "--replicas", "1", "--port", str(port)]
    cmd += ["--", "--max-model-gib", "3"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}" in line, line
        kids = children(proc.pid)
        assert len(kids) == 3  # one replica, the class engine and nginx's master
        argvs = [Path(f"/proc/{k}/cmdline").read_bytes().split(b"\0")[:-1] for k in kids]
        replica = next(a for a in argvs if b"streamlit" in a)
        assert replica[replica.index(b"main.py") :][-3:] == [b"--", b"--max-model-gib", b"3"]
        engine = next(a for a in argvs if b"serve.engine_process" in a)
        assert engine[-3:] == [b"--", b"--max-model-gib", b"3"]  # the app's options: its store, its engine model
        kids += [k for pid in kids for k in children(pid)]  # nginx's worker
        urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=10)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
        assert [k for k in kids if Path(f"/proc/{k}").exists()] == []
    finally:
        proc.kill()
        proc.wait()


def test_protocol_sessions_spread_over_both_replicas(class2):
    """10 protocol sessions × 5 Steps through nginx: all complete, no errors, no cross-talk; each
    replica itself counts exactly the sessions whose affinity cookie names it, and both serve some."""
    before = {r.name: session_connects(r) for r in class2.replicas}
    r = asyncio.run(drive(class2.url, sessions=10, steps=5))
    assert r["errors"] == [] and r["completed"] == 10 and r["crosstalk"] == [] and len(r["step_ms"]) == 50
    served = {x.name: session_connects(x) - before[x.name] for x in class2.replicas}
    named = {x.name: list(r["replica_of"].values()).count(x.name) for x in class2.replicas}
    assert served == named and min(served.values()) >= 1
    address = {x.name: x.address for x in class2.replicas}
    streams = re.findall(r'"GET /_stcore/stream [^"]*" 101 \d+ upstream=(\S+) cookie=(\S+)', log(class2))
    assert len(streams) == 10 and all(up == address[cookie] for up, cookie in streams)
    # Each replica queues its Steps (serve/step_queue.py): serve started it with the switch on.
    for x in class2.replicas:
        environ = Path(f"/proc/{x.proc.pid}/environ").read_bytes().split(b"\0")
        assert b"EXPLAINER_STEPS_IN_LINE=1" in environ


def allowed_cpus(pid: int) -> str:
    """The kernel's own account of where ``pid`` may run: ``Cpus_allowed_list`` in /proc."""
    status = Path(f"/proc/{pid}/status").read_text()
    return re.search(r"^Cpus_allowed_list:\s*(\S+)", status, re.M).group(1)


def test_pinned_replicas_each_run_on_their_own_core():
    """With ``pin`` (``serve --pin``), on a machine with two or more cores, replica i runs on the
    i-th allowed core, every one of its threads (the event loop's and the script runs'); by
    default they may run anywhere."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        pytest.skip("one core: nothing to pin to")
    with replicas.class_server(2, port=class_nginx.free_port(), pin=True) as server:
        pids = [r.proc.pid for r in server.replicas]
        assert [allowed_cpus(pid) for pid in pids] == [str(cores[0]), str(cores[1])]
        threads = [int(t) for t in os.listdir(f"/proc/{pids[0]}/task")]
        assert len(threads) > 1 and {allowed_cpus(t) for t in threads} == {str(cores[0])}
        r = asyncio.run(drive(server.url, sessions=2, steps=2))
        assert r["errors"] == [] and r["completed"] == 2
    assert replicas.pinned_cpus(3, pin=True) == [cores[0], cores[1], cores[2 % len(cores)]]
    assert replicas.pinned_cpus(2, pin=False) == [None, None]


def test_front_nginx_over_replicas_elsewhere(class2):
    """`--backend` mode (replicas on other hosts): a second nginx in front of the running replicas,
    started by nobody here, carries protocol sessions to both of them with affinity."""
    backends = tuple(r.address for r in class2.replicas)
    with replicas.class_server(port=class_nginx.free_port(), backends=backends) as front:
        assert all(r.proc is None for r in front.replicas)
        r = asyncio.run(drive(front.url, sessions=4, steps=2))
        streams = re.findall(r'"GET /_stcore/stream [^"]*" 101 \d+ upstream=(\S+) cookie=(r\d+)', log(front))
    assert r["errors"] == [] and r["crosstalk"] == [] and r["completed"] == 4
    address = {x.name: x.address for x in front.replicas}
    assert len(streams) == 4 and all(up == address[cookie] for up, cookie in streams)
    assert {up for up, _ in streams} == set(backends)


def prefill_and_step(page) -> None:
    """Prefill, then one Step: the stage's heatmap holds one row more."""
    page.get_by_role("button", name="Prefill").click(timeout=60_000)
    page.wait_for_function("() => document.querySelector('.attn-root')?.dataset.rows > 0", timeout=60_000)
    rows = heatmap_rows(page)
    page.get_by_role("button", name="Step ▸").click()
    wait_rows(page, rows + 1, timeout_ms=60_000)


@pytest.mark.browser
def test_browsers_upload_through_the_balancer_and_survive_a_killed_replica(class2):
    """Two browsers. The first uploads a config.json on the KV-cache memory page through nginx and
    the upload reaches its own replica (nginx's log, and that replica alone holds the file); then
    both Prefill and Step on the decode page, each on its own replica. The first one's replica is
    killed: that page says its session restarted and can Prefill again; the other page keeps its
    state and steps on; serve starts the killed replica again."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            ctx = browser.new_context(viewport={"width": 1280, "height": 800})
            victim = ctx.new_page()
            victim.goto(class2.url + "/memory")
            victim.get_by_role("combobox", name="Model shape").click(timeout=60_000)
            victim.get_by_role("option", name="From a config.json (paste or upload)").click()
            victim.get_by_test_id("stMain").locator("input[type=file]").set_input_files(
                files=[{"name": "class.json", "mimeType": "application/json", "buffer": CONFIG}]
            )
            victim.get_by_text("32 query heads, 8 KV heads").first.wait_for(timeout=60_000)
            mine = next(c["value"] for c in ctx.cookies() if c["name"] == class_nginx.COOKIE)
            own = next(r for r in class2.replicas if r.name == mine)
            other = next(r for r in class2.replicas if r.name != mine)
            puts = [x for x in log(class2).splitlines() if "PUT /_stcore/upload_file/" in x]
            assert len(puts) == 1 and f"upstream={own.address} cookie={mine}" in puts[0] and '" 204 ' in puts[0]
            # the metric is cached for 5 s
            until(lambda: uploaded_bytes(own) >= len(CONFIG), 20, "the upload in its replica's metric", every_s=1)
            assert uploaded_bytes(other) == 0

            victim.get_by_text("Decode", exact=True).click()  # the top bar's menu
            victim.get_by_role("menuitem", name="Prefill & decode").click()
            prefill_and_step(victim)
            steady_ctx = browser.new_context(viewport={"width": 1280, "height": 800})
            steady_ctx.add_cookies([{"name": class_nginx.COOKIE, "value": other.name, "url": class2.url}])
            steady = steady_ctx.new_page()
            steady.goto(class2.url)
            prefill_and_step(steady)

            # Until now every request that carried a cookie (pages, static files, the upload,
            # /media) was answered by the replica its cookie names (websockets: checked below).
            address = {r.name: r.address for r in class2.replicas}
            pinned = re.findall(r'"(\S+) (\S+) [^"]*" \d+ \d+ upstream=(\S+) cookie=(r\d+)', log(class2))
            assert all(up == address[cookie] for _, _, up, cookie in pinned)
            assert {"/_stcore/upload_file", "/media"} <= {
                "/" + "/".join(path.split("/")[1:3]) if path.startswith("/_stcore") else "/" + path.split("/")[1]
                for _, path, _, _ in pinned
            }

            old_pid = own.proc.pid
            os.kill(old_pid, signal.SIGKILL)
            victim.get_by_text(LOST).wait_for(timeout=60_000)
            victim.get_by_text("to run the prompt through the model").wait_for(timeout=60_000)  # the empty stage
            screenshot(victim, "class-server-session-restarted")
            prefill_and_step(victim)
            rows = heatmap_rows(steady)
            steady.get_by_role("button", name="Step ▸").click()
            wait_rows(steady, rows + 1, timeout_ms=60_000)  # its request went on: step 2
            assert steady.get_by_text(LOST).count() == 0
            assert victim.get_by_test_id("stException").count() == 0
        finally:
            browser.close()
    # nginx logs a websocket when it closes: each went to the replica its cookie names, except the
    # killed replica's, which nginx passed on to the other one (its upstream list ends there).
    streams = re.findall(r'"GET /_stcore/stream [^"]*" 101 \d+ upstream=(.+?) cookie=(r\d+)', log(class2))
    assert (own.address, own.name) in streams
    assert all(up.split(", ")[-1] in (address[cookie], other.address) for up, cookie in streams)
    assert all(up.split(", ")[-1] == address[cookie] for up, cookie in streams if cookie == other.name)
    until(lambda: own.proc.pid != old_pid and own.proc.poll() is None, 60, "serve to start the killed replica again", 1)
    replicas.wait_healthy(f"http://{own.address}", own.proc, 60, class2.prefix / f"replica-{own.name}.log")


def test_default_is_two_replicas_per_allowed_core():
    """``python -m serve`` without ``--replicas`` balances over two replicas per core this process
    may run on (the nginx config it would write lists them), the count README's runs chose."""
    out = subprocess.run(
        [sys.executable, "-m", "serve", "--print-config"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    start = out.index("upstream all_replicas {")
    upstream = out[start : out.index("}", start)]
    servers = re.findall(r"^\s*server (127\.0\.0\.1:\d+)", upstream, re.M)
    assert len(servers) == len(set(servers)) == 2 * len(os.sched_getaffinity(0))


def test_one_class_engine_serves_every_replica_and_comes_back_when_killed(class2):
    """Behind nginx the engine's routes reach one engine process: two students seated through the replicas send, and
    the class's room lists both. Killed, the engine is started again (a new epoch): a request sent before is said to
    be gone ("lost"), and a new one is served."""
    teacher, ana, bo = Browser(class2.url), Engine(class2.url), Engine(class2.url)
    _, opened = teacher.post("open", {})
    for student in (ana, bo):
        seat = Browser(class2.url)
        assert seat.post("join", {"code": opened["code"]})[0] == 200
        student.jar, student.opener = seat.jar, seat.opener
    rids = [s.post("send", {"text": "Once upon a time", "new_tokens": 4})[1]["rid"] for s in (ana, bo)]
    for student, rid in zip((ana, bo), rids, strict=True):
        assert student.events(rid)[-1]["kind"] == "done"
    with urllib.request.urlopen(f"{class2.url}/explainer/serve/state?class={opened['code']}", timeout=30) as r:
        state = json.loads(r.read())
    assert sorted(req["label"] for req in state["requests"]) == ["Student 1", "Student 2"]
    epoch = state["epoch"]
    class2.engine.proc.kill()

    def epoch_now():
        try:
            with urllib.request.urlopen(f"{class2.url}/explainer/serve/health", timeout=5) as r:
                return json.loads(r.read())["epoch"]
        except OSError:
            return None

    until(lambda: epoch_now() not in (None, epoch), timeout_s=120, what="the engine started again", every_s=0.2)
    assert [e["kind"] for e in ana.events(rids[0])] == ["lost"]
    _, again = ana.post("send", {"text": "Once upon a time", "new_tokens": 2})
    assert ana.events(again["rid"])[-1]["kind"] == "done"


@pytest.mark.browser
def test_a_student_on_another_page_is_told_the_engine_restarted(class2):
    """A browser sends a request on Serve the class, then opens the ruler from the top bar (the same session). The
    engine is killed: the ruler's page says the engine restarted, with a link back to Serve the class, with no
    reload; there a new request is served, and the notice is gone once it is sent."""
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
            page.goto(class2.url + "/serve_class")
            page.get_by_label("Your prompt").fill("Once upon a time")
            page.get_by_role("button", name="Send").click(timeout=60_000)
            expect(page.locator(".serve-numbers")).to_contain_text(re.compile(r"\d+ of \d+ tokens"), timeout=60_000)
            epoch = json.loads(urllib.request.urlopen(f"{class2.url}/explainer/serve/health", timeout=30).read())
            open_from_menu(page, "Quantization", "The quantization ruler")
            class2.engine.proc.kill()
            expect(page.get_by_text(restart.ELSEWHERE)).to_be_visible(timeout=120_000)
            assert (
                json.loads(urllib.request.urlopen(f"{class2.url}/explainer/serve/health", timeout=30).read())["epoch"]
                != epoch["epoch"]
            )
            screenshot(page, "serve-engine-restarted-elsewhere")
            page.get_by_role("link", name="Serve the class").click()
            page.get_by_role("heading", level=1, name="Serve the class").wait_for(timeout=60_000)
            expect(page.get_by_text(restart.RESTARTED)).to_be_visible(timeout=60_000)
            page.get_by_role("button", name="Send").click(timeout=60_000)
            expect(page.get_by_text(restart.RESTARTED)).to_have_count(0, timeout=60_000)
            expect(page.locator(".serve-numbers")).to_contain_text(re.compile(r"\d+ of \d+ tokens"), timeout=60_000)
        finally:
            browser.close()
