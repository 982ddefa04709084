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
    env = {e["name"]: e for e in app["env"]}
    url = env[ENV_URL]["value"]
    assert isinstance(open_store(url), RedisStore)
    where = urlsplit(url)
    service = docs["Service", where.hostname]
    [port] = service["spec"]["ports"]
    redis = docs["Deployment", where.hostname]["spec"]["template"]
    assert port["port"] == where.port and service["spec"]["selector"].items() <= redis["metadata"]["labels"].items()
    [container] = redis["spec"]["containers"]
    assert port["targetPort"] in [p["name"] for p in container["ports"]]


def test_the_kubernetes_redis_asks_for_a_password_keeps_its_file_and_takes_only_the_app():
    """deploy/k8s: Redis runs with --requirepass from the class-store secret, which the app's pods put into their
    store URL (kubernetes expands $(REDIS_PASSWORD)); its append-only file lies on a persistent volume; a
    NetworkPolicy lets only the app's pods reach its port."""
    docs = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(MANIFEST.read_text())}
    [app] = docs["Deployment", "inference-explainer"]["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e for e in app["env"]}
    secret = {"secretKeyRef": {"name": "class-store", "key": "password"}}
    assert env["REDIS_PASSWORD"]["valueFrom"] == secret
    assert urlsplit(env[ENV_URL]["value"]).password == "$(REDIS_PASSWORD)"
    assert list(env).index("REDIS_PASSWORD") < list(env).index(ENV_URL)  # defined before it is expanded
    redis = docs["Deployment", "redis"]["spec"]["template"]["spec"]
    [container] = redis["containers"]
    args = container["args"]
    assert (
        args[args.index("--requirepass") + 1] == "$(REDIS_PASSWORD)" and args[args.index("--appendonly") + 1] == "yes"
    )
    assert {e["name"]: e for e in container["env"]}["REDIS_PASSWORD"]["valueFrom"] == secret
    [volume] = redis["volumes"]
    claim = volume["persistentVolumeClaim"]["claimName"]
    assert ("PersistentVolumeClaim", claim) in docs and {"name": "data", "mountPath": "/data"} in container[
        "volumeMounts"
    ]
    policy = docs["NetworkPolicy", "class-store"]["spec"]
    assert policy["podSelector"]["matchLabels"] == docs["Deployment", "redis"]["spec"]["selector"]["matchLabels"]
    [rule] = policy["ingress"]
    assert rule["from"] == [{"podSelector": {"matchLabels": {"app": "inference-explainer"}}}]
    assert rule["ports"] == [{"protocol": "TCP", "port": 6379}]
