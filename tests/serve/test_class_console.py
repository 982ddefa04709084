"""The teacher's console on a real server (``streamlit run main.py``), spoken to at streamlit's websocket protocol
as a browser tab (``bench.class_mode.tab.Tab``): the class bar's fragment reruns on each pulse of the class's event
stream, a pulse saying the class store is out of reach draws the bar as one warning, a plan the store refused is
sent by the console itself once the store takes writes again, and a reveal while the store is out of reach still
draws the console's stage (issue 49)."""

import asyncio
import json
from pathlib import Path

import pytest

from bench.browser import running_app, running_server
from bench.class_mode import joining
from bench.class_mode.page import BROKEN, now
from bench.class_mode.stores import ReadOnlySqlite, RedisServer, StoreError
from bench.class_mode.tab import Tab, until

JOIN_TOGGLE = "Join code"  # the console bar's toggle (ui.classroom.console.bar)
QUIET_S = 1.0  # no message to the console's tab for this long: no run in flight (a pulse then reruns the bar)


@pytest.fixture(scope="module")
def base():
    with running_app() as url:
        yield url


async def _console_after_an_outage_pulse(base: str) -> dict:
    errors: list[str] = []
    opened = await joining.open_class(base, errors)
    assert opened is not None, errors
    tab, _ = opened
    try:
        assert await until("the bar's listener and toggle", lambda: tab.listener and JOIN_TOGGLE in tab.toggles)
        assert await until("the console's runs over", lambda: now() - tab.last_message > QUIET_S)
        tab.deliver(json.dumps({"unavailable": True}))  # what the stream sends while the store is out of reach
        assert await until("the bar says the class is out of reach", lambda: tab.lost_since(0))
        tab.toggles.clear()
        back = {"version": 0, "students": 0, "answered": 0, "question": None, "round": 1}  # a pulse not seen yet
        tab.deliver(json.dumps(back))
        drawn = await until("the bar drawn again", lambda: JOIN_TOGGLE in tab.toggles or tab.exceptions, 30)
        return {"drawn": drawn and JOIN_TOGGLE in tab.toggles, "exceptions": tab.exceptions}
    finally:
        await tab.close()


def test_the_console_bar_draws_again_after_a_pulse_said_the_store_was_out_of_reach(base):
    """After the bar drew only the out-of-reach warning (its widgets not drawn in that fragment run), the next pulse
    draws the whole bar again, its join-code toggle included, and no page error ("Something went wrong")."""
    seen = asyncio.run(_console_after_an_outage_pulse(base))
    assert not [e for e in seen["exceptions"] if BROKEN in e], seen["exceptions"]
    assert seen["drawn"], seen


async def _a_step_while_the_store_refuses_writes(base: str, store: ReadOnlySqlite) -> dict:
    errors: list[str] = []
    opened = await joining.open_class(base, errors)
    assert opened is not None, errors
    console, code = opened
    ana = Tab("ana", base=base, query=f"class={code}")
    try:
        assert await until("the console's Prefill", lambda: "Prefill" in console.buttons)
        await console.click(*console.buttons["Prefill"][:2])
        assert await joining.join(ana, code, "Ana", errors) is not None, errors
        assert await until("Ana's stage at step 0", lambda: ana.step == 0)
        store.stop()  # the file read-only: the store reads (pulses go on) and refuses every write
        try:
            await console.click(*console.buttons["Step ▸"][:2])
            assert await until("the console's own stage at step 1", lambda: console.step == 1)
        finally:
            store.start()
        t_back = now()
        followed = await until("Ana's stage at step 1", lambda: ana.step == 1, 15)
        return {"followed_s": now() - t_back if followed else None, "ana": ana.state(), "errors": errors}
    finally:
        await console.close()
        await ana.close()


def test_a_plan_the_store_refused_reaches_the_students_when_it_takes_writes_again(tmp_path: Path):
    """The SQLite file read-only while the teacher takes a Step: the console keeps the plan and, once the file is
    writable again, sends it by itself (no pulse comes: the store was readable throughout), so a student's stage
    reaches the Step within a few seconds. (It stayed at the earlier step until the teacher clicked again.)"""
    try:
        store = ReadOnlySqlite(tmp_path / "classes.db")
    except StoreError as err:
        pytest.skip(str(err))
    with running_server(env={"EXPLAINER_CLASS_STORE": store.url}) as (base, _):
        seen = asyncio.run(_a_step_while_the_store_refuses_writes(base, store))
    assert seen["followed_s"] is not None, seen


async def _a_reveal_while_redis_is_stopped(base: str, redis: RedisServer) -> dict:
    errors: list[str] = []
    opened = await joining.open_class(base, errors)
    assert opened is not None, errors
    console, _ = opened
    try:
        assert await until("the console's Prefill", lambda: "Prefill" in console.buttons)
        await console.click(*console.buttons["Prefill"][:2])
        assert await until("the console's stage at step 0", lambda: console.step == 0)
        wid, fragment = console.toggles["Predict first"]

        def predict(w):
            w.id, w.bool_value = wid, True

        drawn = console.page_elements
        await console.send(fragment, [predict])  # a full run of the page
        assert await until("the page drawn again", lambda: console.page_elements > drawn)
        assert await until("the console's runs over", lambda: now() - console.last_message > QUIET_S)
        redis.stop()
        try:
            await console.click(*console.buttons["Step ▸"][:2])  # reveals the class's answers and takes the Step
            shown = await until("the console's stage at step 1", lambda: console.step == 1, 30)
        finally:
            redis.start()
        return {"shown": shown, "state": console.state(), "exceptions": console.exceptions}
    finally:
        await console.close()


def test_a_reveal_while_the_store_is_out_of_reach_still_draws_the_consoles_stage(tmp_path: Path):
    """Redis stopped, the console reveals its class's question (Predict first, then Step): its own stage shows the
    Step, the class's answers said to be out of reach (the whole stage was the one out-of-reach warning, until the
    teacher's next click), and no page error."""
    try:
        redis = RedisServer(tmp_path)
        redis.start()
    except StoreError as err:
        pytest.skip(str(err))
    try:
        with running_server(env={"EXPLAINER_CLASS_STORE": redis.url}) as (base, _):
            seen = asyncio.run(_a_reveal_while_redis_is_stopped(base, redis))
    finally:
        redis.close()
    assert not seen["exceptions"], seen
    assert seen["shown"], seen
