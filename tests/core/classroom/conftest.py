"""The class store's fixtures: every store test runs on both backends, SQLite in a fresh file and Redis
on a loopback ``redis-server`` started for this folder's tests (skipped only where the binary is
missing; ``.ci/run`` installs it)."""

import pytest

from core.classroom.store import open_store
from tests.helpers import redis_server


@pytest.fixture(scope="module")
def redis_url():
    with redis_server.url_or_skip() as url:
        yield url


@pytest.fixture(params=["sqlite", "redis"])
def url(request, tmp_path):
    """The URL of an empty store of each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'classes.db'}"
    url = request.getfixturevalue("redis_url")
    store = open_store(url)
    store.r.flushdb()
    store.close()
    return url


@pytest.fixture
def store(url):
    store = open_store(url)
    yield store
    store.close()
