"""Entering a class as a browser does: the teacher's start panel (``?class=new``), a student's join form
(``?class=CODE``), each sent to a class route by the page's POST component and followed by a page load
with the cookie the route set; the display's address (no cookie)."""

from __future__ import annotations

import asyncio
import urllib.parse

from bench.class_mode import web
from bench.class_mode.page import now
from bench.class_mode.tab import COOKIE, SEAT, TEACHER, TIMEOUT_S, Tab, until

ROUTES = "/explainer/class/"


def typed(wid: str, text: str):
    def set_state(w):
        w.id, w.string_value = wid, text

    return set_state


async def submit(tab: Tab, label: str, widgets, errors: list) -> dict | None:
    """Press the form's submit button ``label`` with ``widgets``' values; then, as ``frontend/class_post.js``,
    POST the request the page's POST component carries to its class route once, and open the address it names
    with the cookie the route set. The route's answer (None, with an error, when it refused)."""
    wid, fragment = tab.forms[label]
    tab.posting = None
    await tab.click(wid, fragment, widgets)
    if not await until(
        f"{tab.name}: the page's POST to a class route after {label}", lambda: tab.posting, errors=errors
    ):
        return None
    data = tab.posting
    t0 = now()
    status, answer = await asyncio.to_thread(
        web.post, tab.base, ROUTES + data["action"], data.get("body") or {}, tab.jar
    )
    answer["post_ms"] = (now() - t0) * 1000
    if status != 200:
        errors.append(f"{tab.name}: the {data['action']} route answered {status}: {answer.get('error')}")
        return None
    then = {k: answer["code"] if v == "{code}" else v for k, v in (data.get("then") or {}).items()}
    await tab.navigate(urllib.parse.urlencode(then))
    return answer


async def open_class(base: str, errors: list) -> tuple[Tab, str] | None:
    """The teacher opens ``?class=new`` and presses *Start a class*; (the console's tab, the class code)."""
    tab = Tab("teacher", base=base, query="class=new")
    await tab.open()
    if not await until("the start panel's Start a class", lambda: "Start a class" in tab.forms, errors=errors):
        return None
    answer = await submit(tab, "Start a class", [], errors)
    if answer is None:
        return None
    if tab.cookie(TEACHER) is None or tab.cookie(TEACHER)[0] != answer["code"]:
        errors.append(f"the open route set no teacher cookie for class {answer['code']}: {sorted(tab.jar.values)}")
        return None
    return tab, answer["code"]


async def join(tab: Tab, code: str, nickname: str, errors: list) -> tuple[float, float, float] | None:
    """A student on the class's link: the join form, the code and a nickname, Join; seated when the class's page
    (a new session with the seat cookie) draws the seat line. (Join → the seat line, the join route's answer, the
    link opened → the seat line) in ms, or None (with an error) when it did not seat."""
    t_link = now()
    await tab.open()
    if not await until(
        f"{tab.name}: the join form",
        lambda: {"Class code", "Nickname (optional)"} <= set(tab.inputs) and "Join" in tab.forms,
        errors=errors,
    ):
        return None
    t0 = now()
    form = [typed(tab.inputs["Class code"], code), typed(tab.inputs["Nickname (optional)"], nickname)]
    answer = await submit(tab, "Join", form, errors)
    if answer is None:
        return None
    if tab.cookie(SEAT) is None or tab.cookie(SEAT)[0] != code:
        errors.append(f"{tab.name}: the join route set no seat cookie: {sorted(tab.jar.values)}")
        return None
    if not await until(
        f"{tab.name}: seated (the class line names a seat)", lambda: tab.seat is not None, errors=errors
    ):
        return None
    return (now() - t0) * 1000, answer["post_ms"], (now() - t_link) * 1000


async def display(base: str, code: str, step: int, out) -> Tab:
    """The projector's page (``?class=CODE&view=display&present=1``, no cookie): following at ``step``."""
    tab = Tab("display", base=base, query=urllib.parse.urlencode({"class": code, "view": "display", "present": 1}))
    t0 = now()
    await tab.open()
    if await until("the display's stage at the teacher's step", lambda: tab.step == step, errors=out.errors):
        out.display_ms = (now() - t0) * 1000
    return tab


async def warm(url: str, replicas) -> None:
    """Each replica's first session imports the pages and loads the model: one plain page load and Prefill per
    replica (pinned by its cookie, once the replica itself answers its health URL) before a class uses it."""

    async def one(replica):
        deadline = now() + TIMEOUT_S
        while True:
            try:
                if await asyncio.to_thread(web.get, f"http://{replica.address}", "/_stcore/health", web.Jar()) == 200:
                    break
            except OSError:
                pass
            if now() > deadline:
                raise RuntimeError(f"replica {replica.name} did not answer within {TIMEOUT_S} s")
            await asyncio.sleep(0.2)
        tab = Tab(f"warm {replica.name}", base=url)
        tab.jar.values[COOKIE] = replica.name
        await tab.open()
        await until(f"replica {replica.name} draws Prefill", lambda: "Prefill" in tab.buttons)
        await tab.click(*tab.buttons["Prefill"][:2])
        await until(f"replica {replica.name} prefills", lambda: tab.step == 0)
        await tab.close()

    await asyncio.gather(*(one(r) for r in replicas))
