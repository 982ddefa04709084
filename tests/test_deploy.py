"""The deployment files agree with the app: Kubernetes manifests (parsed with PyYAML), the
Dockerfile and the systemd unit for replicas on other hosts."""

import ast
import configparser
import fnmatch
import re
import tomllib

import yaml

import serve
from tests.browser_util import ROOT

DOCS = list(yaml.safe_load_all((ROOT / "deploy/k8s/class-server.yaml").read_text()))
MAX_UPLOAD_BYTES = tomllib.loads((ROOT / ".streamlit/config.toml").read_text())["server"]["maxUploadSize"] * 2**20


def one(kind: str) -> dict:
    [doc] = [d for d in DOCS if d["kind"] == kind]
    return doc


def size_bytes(text: str) -> int:
    """An nginx size ("1088k", "2m", "512") in bytes."""
    number, unit = re.fullmatch(r"(\d+)([kKmM]?)", text).groups()
    return int(number) * {"": 1, "k": 2**10, "m": 2**20}[unit.lower()]


def test_ingress_keeps_each_browser_on_one_pod():
    """The Ingress routes by a cookie set by ingress-nginx (persistent mode: scaling never moves a
    browser; a failed pod's browsers get a new cookie), keeps websockets ≥ 1 h, admits streamlit's
    maxUploadSize (less than twice it) and sends / to the Service's named port."""
    ingress, service = one("Ingress"), one("Service")
    notes = ingress["metadata"]["annotations"]
    prefix = "nginx.ingress.kubernetes.io/"
    assert notes[prefix + "affinity"] == "cookie" and notes[prefix + "affinity-mode"] == "persistent"
    assert notes[prefix + "session-cookie-name"] == serve.COOKIE
    assert notes[prefix + "session-cookie-change-on-failure"] == "true"
    assert int(notes[prefix + "proxy-read-timeout"]) >= 3600 and int(notes[prefix + "proxy-send-timeout"]) >= 3600
    assert MAX_UPLOAD_BYTES < size_bytes(notes[prefix + "proxy-body-size"]) < 2 * MAX_UPLOAD_BYTES
    [rule] = ingress["spec"]["rules"]
    [path] = rule["http"]["paths"]
    assert path["path"] == "/" and path["pathType"] == "Prefix"
    backend = path["backend"]["service"]
    assert backend["name"] == service["metadata"]["name"]
    assert backend["port"]["name"] in [p["name"] for p in service["spec"]["ports"]]


def test_deployment_runs_streamlit_on_the_probed_port():
    """Pods listen where the image's streamlit listens (Dockerfile CMD: 0.0.0.0:8501); readiness and
    liveness probe /_stcore/health on that port; the Service selects these pods and targets that
    port; two replicas per core (half a core requested each), 2 cores in all: the class of 40 that
    README's "Past one machine" sizes from the measured runs."""
    deployment, service = one("Deployment"), one("Service")
    spec = deployment["spec"]
    labels = spec["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= labels.items()
    assert service["spec"]["selector"].items() <= labels.items()
    assert isinstance(spec["replicas"], int) and spec["replicas"] >= 2
    [container] = spec["template"]["spec"]["containers"]
    [port] = container["ports"]
    cmd = (ROOT / "deploy/Dockerfile").read_text()
    assert "--server.address=0.0.0.0" in cmd and f"--server.port={port['containerPort']}" in cmd
    for probe in ("readinessProbe", "livenessProbe"):
        check = container[probe]["httpGet"]
        assert check["path"] == "/_stcore/health" and check["port"] in (port["name"], port["containerPort"])
    assert [p["targetPort"] for p in service["spec"]["ports"]] in ([port["name"]], [port["containerPort"]])
    cpu = container["resources"]["requests"]["cpu"]
    cores = int(cpu[:-1]) / 1000 if cpu.endswith("m") else float(cpu)
    assert cores == 0.5 and spec["replicas"] * cores == 2


def test_replica_unit_runs_the_app_on_its_instance_port():
    """The systemd unit for other hosts runs `streamlit run app.py` on the instance's port (%i),
    reachable from the front host, and restarts it when it stops."""
    unit = configparser.ConfigParser(interpolation=None)
    unit.read(ROOT / "deploy/class-replica@.service")
    start = unit["Service"]["ExecStart"]
    assert "streamlit run app.py" in start and "--server.port=%i" in start and "--server.address=0.0.0.0" in start
    assert unit["Service"]["Restart"] == "always"
    assert "EXPLAINER_STEPS_IN_LINE=1" in unit["Service"]["Environment"].split()  # as serve's replicas (turns.py)


def test_image_runs_a_replica_with_its_steps_in_line():
    """Each pod is one replica of a class server, so its decode Steps queue as serve's replicas' do."""
    lines = (ROOT / "deploy/Dockerfile").read_text().splitlines()
    assert "ENV EXPLAINER_STEPS_IN_LINE=1" in lines


def local_imports(path) -> set[str]:
    """Top-level names ``path`` imports (``import x.y`` → x, ``from x import y`` → x)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {
        n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and not n.level
    }
    return names


def test_image_copies_every_module_the_app_imports():
    """Starting from app.py and the page scripts it lists (lessons/), every repository module the
    app imports, directly or through another, is copied into the image by a COPY line (an image
    without ui_stage.py, say, would fail on its first page)."""
    copied = [
        src
        for line in (ROOT / "deploy/Dockerfile").read_text().splitlines()
        if line.startswith("COPY ")
        for src in line.split()[1:-1]
    ]
    covered = lambda rel: any(fnmatch.fnmatch(rel, s) or rel.startswith(s + "/") for s in copied)  # noqa: E731
    todo, seen = [ROOT / "app.py", *sorted((ROOT / "lessons").glob("*.py"))], set()
    while todo:
        path = todo.pop()
        rel = path.relative_to(ROOT).as_posix()
        if rel in seen:
            continue
        seen.add(rel)
        assert covered(rel), f"{rel} is imported by the app but not copied into the image"
        for name in local_imports(path):
            if (ROOT / f"{name}.py").exists():
                todo.append(ROOT / f"{name}.py")
            elif (ROOT / name / "__init__.py").exists():
                todo.extend(sorted((ROOT / name).rglob("*.py")))
    assert {"ui_stage.py", "core/model.py", "lessons/decode.py"} <= seen
    assert "serve.py" not in seen  # the class server runs outside the image
