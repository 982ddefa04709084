"""The class engine's service in tests: wait for a request's end on the engine's signal, never the clock."""

import asyncio


def finish(svc, room: str, rid: str, owner: str) -> list[dict]:
    """Wait until request ``rid``'s stream in ``room`` (``owner``'s) has ended; its events."""

    async def wait():
        s = svc.stream(room, rid, owner)
        while s.done_at is None:
            armed = svc.signal.arm()
            if s.done_at is None:
                await svc.signal.wait(armed, 30)
        return s.events

    return asyncio.run(wait())
