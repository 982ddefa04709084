"""Class routes that only the app's own pages can call (issue 55, items 1 and 9), against a real server
(``streamlit run main.py``) and behind the class server's nginx: a cross-site POST (another site's form) to open,
join or leave is refused and changes no cookie; a body that is not JSON is refused; a long body is answered 413
without being read; watchers of classes nobody listens to are dropped."""

import http.client
import json
import urllib.parse

import pytest

from bench.browser import running_app
from serve import nginx as class_nginx
from serve import replicas
from tests.serve.test_class_routes import Browser


def _raw(base: str, route: str, body: bytes, headers: dict) -> tuple[int, list[str], dict]:
    """One POST with exactly ``headers`` (no cookie jar): status, Set-Cookie headers, the answer's JSON."""
    url = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.request("POST", f"/explainer/class/{route}", body=body, headers=headers)
    r = conn.getresponse()
    status, cookies, raw = r.status, r.headers.get_all("Set-Cookie") or [], r.read()
    conn.close()
    return status, cookies, json.loads(raw or b"{}")


@pytest.fixture(scope="module")
def base():
    with running_app() as url:
        yield url


JSON = {"Content-Type": "application/json"}


@pytest.mark.parametrize("route", ["open", "join", "leave", "pair"])
def test_another_sites_post_is_refused_and_changes_no_cookie(base, route):
    """A form on another web site (its Origin), or a request naming no origin at all: 403, no Set-Cookie (leave had
    deleted the teacher's cookie; open and join had seated the teacher's browser elsewhere)."""
    body = json.dumps({"code": "ABCDEF"}).encode()
    for origin in ({"Origin": "http://evil.example"}, {"Referer": "http://evil.example/form"}, {}):
        status, cookies, answer = _raw(base, route, body, {**JSON, **origin})
        assert (status, cookies) == (403, []), (origin, status, cookies)
        assert "another site" in answer["error"]


def test_the_apps_own_origin_passes_and_the_referer_stands_in_for_it(base):
    assert _raw(base, "open", b"{}", {**JSON, "Origin": base})[0] == 200
    assert _raw(base, "open", b"{}", {**JSON, "Referer": base + "/?class=ABCDEF"})[0] == 200


@pytest.mark.parametrize("kind", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"])
def test_a_body_that_is_not_json_is_refused(base, kind):
    """What a cross-site form can send without a preflight, even from our own origin: 415, no cookie."""
    status, cookies, _ = _raw(base, "open", b'{"seats": 5}', {"Content-Type": kind, "Origin": base})
    assert (status, cookies) == (415, [])


def test_a_long_body_is_answered_413_unread(base):
    """A declared 100 MB body is refused from its header, before a byte of it is read; a chunked one as soon as it
    passes 4 kB. The server answers at once and still serves."""
    url = urllib.parse.urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.putrequest("POST", "/explainer/class/join")
    for k, v in {**JSON, "Origin": base, "Content-Length": str(100 * 2**20)}.items():
        conn.putheader(k, v)
    conn.endheaders()
    conn.send(b"{" + b" " * 65_536)  # a first slice only: the answer comes without the rest
    r = conn.getresponse()
    assert r.status == 413 and not r.headers.get_all("Set-Cookie")
    conn.close()
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    conn.request("POST", "/explainer/class/join", body=iter([b"{" + b" " * 3000] * 4), headers={**JSON, "Origin": base})
    assert conn.getresponse().status == 413  # chunked: no length declared
    conn.close()
    assert Browser(base).post("open")[0] == 200


def test_behind_nginx_the_forwarded_origin_is_the_apps_own():
    """Through the class server's nginx (Host and X-Forwarded-Proto passed on): the page's own origin passes, another
    site's does not."""
    with replicas.class_server(1, port=class_nginx.free_port()) as server:
        assert Browser(server.url).post("open")[0] == 200
        assert _raw(server.url, "open", b"{}", {**JSON, "Origin": "http://evil.example"})[0] == 403


def test_watchers_of_classes_nobody_can_join_are_dropped(tmp_path):
    """The event stream kept one watcher per class code ever asked for (5,000 made-up codes: +5 MiB, never freed):
    a watcher whose class does not exist ends at its first read and leaves the replica's table; so does one nobody
    listens to any more."""
    import asyncio

    from serve.class_events import Watcher
    from serve.class_routes import ClassRoutes

    routes = ClassRoutes(f"sqlite:///{tmp_path / 'classes.db'}")

    async def made_up() -> int:
        for i in range(200):
            code = f"ZZZ{i:03d}"[:6]
            routes._watchers[code] = Watcher(routes.store, code, routes._forget)
        while any(not w.done for w in routes._watchers.values()):
            await asyncio.sleep(0.05)
        return len(routes._watchers)

    assert asyncio.run(made_up()) == 0
