"""The class engine's routes on a real server (``streamlit run main.py``, the engine in its process; issue 56): a
Send streams the request's own tokens, the same as a solo run of the shipped model; a request is readable only by
the browser that sent it; the room's state carries no prompt text; bad input is refused in a sentence."""

import json
import urllib.error
import urllib.request

from bench.browser import running_app
from core.decode.generate import SamplingConfig, generate_cached
from core.model.shipped import load_model, load_shipped_tokenizer
from core.model.tokenizer import decode, encode, end_token_id
from serve.class_routes import BROWSER
from tests.serve.test_class_routes import Browser


class Engine(Browser):
    """A browser POSTing to the engine's routes and reading its streams."""

    ROUTES = "explainer/serve"

    def get(self, path: str) -> urllib.request.addinfourl:
        return self.opener.open(f"{self.base}/explainer/serve/{path}", timeout=60)

    def events(self, rid: str) -> list[dict]:
        """The request's stream until it ends (the route closes it after the last event)."""
        out = []
        with self.get(f"stream?rid={rid}") as r:
            for line in r:
                if line.startswith(b"data:"):
                    out.append(json.loads(line[5:]))
        return out


def test_a_send_streams_the_tokens_a_solo_run_gives():
    """ "The cat sat on the", 20 new tokens: the stream's text is the greedy solo run's (generate_cached on the
    shipped model, stopping at its end token), its times grow, and its numbers say TTFT and TPOT."""
    tok = load_shipped_tokenizer()
    solo = generate_cached(load_model(), encode(tok, "The cat sat on the"), 20, SamplingConfig()).tokens
    end = end_token_id(tok)
    solo = solo[: solo.index(end) + 1] if end in solo else solo
    with running_app() as url:
        b = Engine(url)
        status, answer = b.post("send", {"text": "The cat sat on the", "new_tokens": 20})
        assert status == 200, answer
        events = b.events(answer["rid"])
    tokens = [e for e in events if e["kind"] == "token"]
    assert "".join(e["text"] for e in tokens) == decode(tok, solo)
    times = [e["ms"] for e in tokens]
    assert times == sorted(times) and len(times) == len(solo)
    done = events[-1]
    assert done["kind"] == "done" and done["tokens"] == len(solo) and done["ttft_ms"] == times[0]
    assert abs(done["tpot_ms"] - (times[-1] - times[0]) / (len(times) - 1)) < 1e-6


def test_a_request_is_its_senders_only_and_the_state_has_no_text():
    with running_app() as url:
        ana, bo = Engine(url), Engine(url)
        secret = "Zanzibar marmalade"
        _, answer = ana.post("send", {"text": secret, "new_tokens": 3})
        bo.post("send", {"text": "hello", "new_tokens": 1})  # Bo's cookie
        assert [e["kind"] for e in bo.events(answer["rid"])] == ["lost"]  # another browser's id: nothing
        ana.events(answer["rid"])
        with ana.get("state") as r:
            state = r.read().decode()
        assert secret not in state and "Student 1" in state
        assert json.loads(state)["requests"][-1]["prompt_tokens"] == len(encode(load_shipped_tokenizer(), secret))


def test_bad_sends_are_refused_in_a_sentence():
    with running_app() as url:
        b = Engine(url)
        cases = [
            ({"text": "", "new_tokens": 5}, 400, "Type a prompt first"),
            ({"text": "x" * 2001, "new_tokens": 5}, 400, "at most 2,000 characters (this one is 2,001)"),
            ({"text": "hi", "new_tokens": 0}, 400, "from 1 to 64"),
            ({"text": "hi", "new_tokens": 65}, 400, "from 1 to 64"),
            ({"text": "hi", "new_tokens": True}, 400, "from 1 to 64"),
            ({"text": ["hi"], "new_tokens": 5}, 400, "Type a prompt first"),
            ({"text": "hi", "new_tokens": 5, "seed": 2**64}, 400, "A seed is a whole number from 0 to 2,147,483,647"),
            ({"text": "hi", "new_tokens": 5, "seed": -1}, 400, "A seed is a whole number"),
        ]
        for body, status, words in cases:
            got, answer = b.post("send", body)
            assert (got, words in answer.get("error", "")) == (status, True), (body, got, answer)
        got, answer = b.post("send", {"text": "猫" * 2000, "new_tokens": 1})  # 6,000 bytes of UTF-8: taken
        assert got == 400 and "passes the model's context" in answer["error"], answer
        got, answer = b.post("settings", {"token_budget": 4})
        assert got == 400 and "token_budget must be a whole number from 8 to 2,048" in answer["error"]
        evil = {"Content-Type": "application/json", "Origin": "http://evil.example"}
        req = urllib.request.Request(f"{url}/explainer/serve/send", data=b"{}", method="POST", headers=evil)
        try:
            urllib.request.urlopen(req, timeout=30)
            raise AssertionError("another site's POST was taken")
        except urllib.error.HTTPError as err:
            assert err.code == 403


def test_requests_at_once_per_browser_and_settings_apply():
    """Alone, a browser's tabs are its classmates: 4 requests at once (64 tokens each), a fifth refused (429); in a
    class, one request per seat. The settings a browser alone sets are its room's, said back and in its state."""
    with running_app() as url:
        b = Engine(url)
        rids = [b.post("send", {"text": f"Once upon a time {i}", "new_tokens": 64})[1]["rid"] for i in range(4)]
        got, answer = b.post("send", {"text": "again", "new_tokens": 2})
        assert got == 429 and "4 of your requests are running (at most 4 at once)" in answer["error"]
        for rid in rids:
            b.events(rid)
        got, answer = b.post("settings", {"chunked_prefill": False, "token_budget": 32, "max_running": 4})
        assert got == 200 and answer["settings"]["token_budget"] == 32
        _, second = b.post("send", {"text": "again", "new_tokens": 2})
        b.events(second["rid"])
        with b.get("state") as r:
            state = json.loads(r.read())
        assert state["settings"] == {"chunked_prefill": False, "token_budget": 32, "prefix_caching": True,
                                     "max_running": 4}  # fmt: skip
        teacher, student = Browser(url), Browser(url)
        _, opened = teacher.post("open", {})
        student.post("join", {"code": opened["code"]})
        seat = Engine(url)
        seat.jar, seat.opener = student.jar, student.opener  # the seated browser's cookies
        _, first = seat.post("send", {"text": "Once upon a time", "new_tokens": 64})
        got, answer = seat.post("send", {"text": "again", "new_tokens": 2})
        assert got == 429 and "Your request is still running: wait for it to end" in answer["error"]
        for cookie in [c for c in seat.jar if c.name == BROWSER]:  # the browser cookie dropped: the same seat
            seat.jar.clear(cookie.domain, cookie.path, cookie.name)
        got, answer = seat.post("send", {"text": "again", "new_tokens": 2})
        assert got == 429 and "still running" in answer["error"]
        seat.events(first["rid"])
