"""The class engine's service in-process (issue 56): rooms, the shared system prompt read from the prefix cache, a
fault ending a room's requests in a sentence, and the Signal that wakes a waiting coroutine from the engine thread."""

from types import SimpleNamespace

import pytest

from core.model.shipped import load_model, load_shipped_tokenizer
from core.model.tokenizer import decode, encode, end_token_id
from core.serving.engine import EngineSettings
from serve import engine_service
from serve.engine_events import Stream
from serve.engine_service import FAILED, EngineService, RoomFull
from tests.helpers.engine import finish


@pytest.fixture(scope="module")
def svc():
    tok = load_shipped_tokenizer()
    return EngineService(load_model(), tok, "the shipped model", end_id=end_token_id(tok))


def test_a_system_prompt_is_computed_once_and_read_by_every_later_request(svc):
    """A system prompt of 50 tokens (three whole blocks of 16): each later request reads 48 positions from the
    cache, computed once when the teacher applied it."""
    tok = load_shipped_tokenizer()
    system = "The cat sat on the mat. The dog sat on the mat. The cat saw the dog. The cat stayed.\n" * 2
    assert len(encode(tok, system)) == 50
    svc.configure("class:SYSTEM", system_prompt=system)
    [own] = [s.rid for s in svc.room("class:SYSTEM").streams.values() if s.label == "System prompt"]
    finish(svc, "class:SYSTEM", own, "system")  # its blocks are cached once its prefill has run
    hits = []
    for i, text in enumerate(["Once upon a time", "The best way to learn is"]):
        rid = svc.send("class:SYSTEM", f"b{i}", text, 2)
        hits.append(finish(svc, "class:SYSTEM", rid, f"b{i}")[-1]["hit_tokens"])
    assert hits == [48, 48]


def test_each_long_document_prefills_whole_with_the_prefix_cache_on(svc):
    """Two long documents ("Add a long document" twice): the second finds none of the first's blocks cached (it
    would otherwise read all but its last block, and show the class no stall). Each is the context less 3 long."""
    ctx = svc.model.cfg.block_size
    numbers = []
    for _ in range(2):
        rid = svc.long_document("class:DOCS", "teacher")
        end = finish(svc, "class:DOCS", rid, "teacher:document")[-1]
        numbers.append((end["prompt_tokens"], end["hit_tokens"]))
    assert svc.room("class:DOCS").engine.settings.prefix_caching
    assert numbers == [(ctx - 3, 0), (ctx - 3, 0)]


def test_rooms_are_apart(svc):
    svc.configure("alone:A", token_budget=16)
    assert svc.room("alone:B").engine.settings == EngineSettings()  # the defaults, untouched by A
    rid = svc.send("alone:A", "A", "hello", 1)
    assert svc.stream("alone:B", rid, "A") is None and svc.stream("alone:A", rid, "B") is None
    finish(svc, "alone:A", rid, "A")


def test_a_fault_ends_the_rooms_requests_in_a_sentence_and_the_next_one_runs(svc, monkeypatch):
    room = svc.room("alone:FAULT")
    monkeypatch.setattr(room.engine, "step", lambda: 1 / 0)
    rid = svc.send("alone:FAULT", "F", "hello", 3)
    assert finish(svc, "alone:FAULT", rid, "F")[-1] == {"kind": "ended", "why": FAILED}
    rid = svc.send("alone:FAULT", "F", "hello", 3)  # a fresh engine for the room
    assert finish(svc, "alone:FAULT", rid, "F")[-1]["kind"] == "done"


def test_too_many_rooms_drop_the_least_recently_used_idle_one(monkeypatch):
    svc = EngineService(load_model(), load_shipped_tokenizer(), "the shipped model")
    monkeypatch.setattr(engine_service, "MAX_ROOMS", 2)
    for name in ("alone:R1", "alone:R2", "alone:R3"):  # none busy: R3 takes the place of the oldest
        svc.room(name)
    assert sorted(svc.rooms) == ["alone:R2", "alone:R3"]
    svc.room("class:K7QX2M")  # a class is another kind: counted apart
    assert len(svc.rooms) == 3
    for name in ("alone:R2", "alone:R3"):
        svc.send(name, "x", "hello", 64)  # both busy: no place for a new one
    with pytest.raises(RoomFull, match="as many rooms as it can"):
        svc.room("alone:R4")


def test_a_character_split_over_two_byte_tokens_streams_whole(svc):
    """ "é" as two byte-level tokens (0xC3, 0xA9): the first token's event adds no text (never "\ufffd"), the
    second adds "é", so the streamed text is the decoded text."""
    tok = load_shipped_tokenizer()
    ids = [tok.token_to_id("Ã"), tok.token_to_id("©")]  # byte-level BPE's characters for the bytes 0xC3, 0xA9
    assert decode(tok, ids) == "é" and decode(tok, ids[:1]) == "\ufffd"
    s = Stream("r", "o", "Student 1")
    r = SimpleNamespace(admitted_at=0.0, arrival=0.0, outputs=ids[:1], token_times=[0.01], state="running")
    svc._events(s, r, 0.0)
    r.outputs, r.token_times = ids, [0.01, 0.02]
    svc._events(s, r, 0.0)
    assert [e["text"] for e in s.events if e["kind"] == "token"] == ["", "é"]
