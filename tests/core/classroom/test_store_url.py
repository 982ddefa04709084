"""How the app and the class server name the class store (issue 41): ``--class-store URL`` on the app's
command line, and serve's default of one SQLite file shared by its local replicas. Kept apart from
test_store.py, whose module the store's child processes import (this one pulls in torch)."""

from pathlib import Path
from urllib.parse import urlsplit

import yaml

from core.checkpoints.app_options import parse_app_args
from core.classroom.redis_store import RedisStore
from core.classroom.store import ENV_URL, default_url, open_store
from serve.replicas import class_store_env

MANIFEST = Path(__file__).resolve().parents[3] / "deploy/k8s/class-server.yaml"


def test_the_app_and_the_class_server_name_the_store(monkeypatch, tmp_path):
    """The app's --class-store reaches AppArgs; serve gives its local replicas one shared SQLite file
    through the environment, unless the operator set one there."""
    assert parse_app_args(["--class-store", "redis://r:6379/0"]).class_store == "redis://r:6379/0"
    assert parse_app_args([]).class_store is None
    monkeypatch.delenv(ENV_URL, raising=False)
    env = class_store_env(tmp_path)
    assert env == {ENV_URL: f"sqlite:///{tmp_path}/classes.db"}
    monkeypatch.setenv(ENV_URL, env[ENV_URL])
    assert open_store(default_url()).path == tmp_path / "classes.db"
    assert class_store_env(tmp_path / "other") == {}


def test_the_kubernetes_pods_share_the_redis_service():
    """deploy/k8s: the app's pods name, as their class store, the manifest's Redis Service on its port,
    and that Service reaches the Redis container's port."""
    docs = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(MANIFEST.read_text())}
    [app] = docs["Deployment", "inference-explainer"]["spec"]["template"]["spec"]["containers"]
    url = {e["name"]: e["value"] for e in app["env"]}[ENV_URL]
    assert isinstance(open_store(url), RedisStore)
    where = urlsplit(url)
    service = docs["Service", where.hostname]
    [port] = service["spec"]["ports"]
    redis = docs["Deployment", where.hostname]["spec"]["template"]
    assert port["port"] == where.port and service["spec"]["selector"].items() <= redis["metadata"]["labels"].items()
    [container] = redis["spec"]["containers"]
    assert port["targetPort"] in [p["name"] for p in container["ports"]]
