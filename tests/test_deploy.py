"""The deployment files agree with the app: Kubernetes manifests (parsed with PyYAML), the
Dockerfile and the systemd unit for replicas on other hosts."""

import configparser
import json
import re
import subprocess
import tomllib

import yaml
from packaging.requirements import Requirement

from bench.browser import ROOT
from serve import nginx
from serve.cli import streamlit_command
from tests.test_package import build_wheel, wheel_files

DOCS = list(yaml.safe_load_all((ROOT / "deploy/k8s/class-server.yaml").read_text()))
MAX_UPLOAD_BYTES = tomllib.loads((ROOT / ".streamlit/config.toml").read_text())["server"]["maxUploadSize"] * 2**20


def one(kind: str, name: str = "inference-explainer") -> dict:
    """The manifest of this kind and name (the class store's Redis has its own Deployment and Service)."""
    [doc] = [d for d in DOCS if d["kind"] == kind and d["metadata"]["name"] == name]
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
    assert notes[prefix + "session-cookie-name"] == nginx.COOKIE
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
    cmd = streamlit_command(image_cmd()[1:])
    assert image_cmd()[0] == "inference-explainer"
    assert cmd[cmd.index("--server.address") + 1] == "0.0.0.0"
    assert cmd[cmd.index("--server.port") + 1] == str(port["containerPort"])
    for probe in ("readinessProbe", "livenessProbe"):
        check = container[probe]["httpGet"]
        assert check["path"] == "/_stcore/health" and check["port"] in (port["name"], port["containerPort"])
    assert [p["targetPort"] for p in service["spec"]["ports"]] in ([port["name"]], [port["containerPort"]])
    cpu = container["resources"]["requests"]["cpu"]
    cores = int(cpu[:-1]) / 1000 if cpu.endswith("m") else float(cpu)
    assert cores == 0.5 and spec["replicas"] * cores == 2


def test_replica_unit_runs_the_app_on_its_instance_port():
    """The systemd unit for other hosts runs the installed ``inference-explainer`` on the instance's
    port (%i), reachable from the front host, from outside any checkout, with nothing to make first (the app
    writes nothing into its install: the server's DynamicUser cannot write to /opt), and restarts it when it
    stops."""
    unit = _unit()
    service = unit["Service"]
    venv = "/opt/inference-explainer/.venv/bin/"
    start = service["ExecStart"].split()
    assert start[0] == venv + "inference-explainer"
    cmd = streamlit_command([a.replace("%i", "8601") for a in start[1:]])  # systemd puts the port in
    assert cmd[cmd.index("--server.port") + 1] == "8601" and cmd[cmd.index("--server.address") + 1] == "0.0.0.0"
    assert "ExecStartPre" not in service
    assert service["WorkingDirectory"] == "/"
    assert unit["Service"]["Restart"] == "always"
    assert (
        "EXPLAINER_STEPS_IN_LINE=1" in unit["Service"]["Environment"].split()
    )  # as serve's replicas (serve/step_queue.py)


def _unit() -> configparser.ConfigParser:
    """The replica unit as systemd reads it (a key given twice, such as SystemCallFilter, adds to the first)."""
    unit = configparser.ConfigParser(interpolation=None, strict=False)
    unit.optionxform = str  # systemd's keys are case-sensitive
    unit.read(ROOT / "deploy/class-replica@.service")
    return unit


def test_replica_unit_shares_one_class_store_on_its_host_and_is_sandboxed(tmp_path):
    """Issue 55 item 10: a host's replicas share one class store (a SQLite file in the unit's state directory, each
    instance the same dynamic user, so each may open it; a Redis URL with its password comes from a root-only
    environment file, never the command line), and systemd's own rating of the sandbox,
    ``systemd-analyze security --offline``, is at most 4.0 (it was 8.4, "EXPOSED")."""
    service = _unit()["Service"]
    env = dict(item.split("=", 1) for item in service["Environment"].split())
    store = env["EXPLAINER_CLASS_STORE"]
    assert store == f"sqlite:////var/lib/{service['StateDirectory']}/classes.db"
    assert service["DynamicUser"] == "yes" and service["User"] == service["StateDirectory"]
    assert service["EnvironmentFile"] == "-/etc/inference-explainer/env" and "redis" not in service["ExecStart"]
    instance = tmp_path / "class-replica@8601.service"
    instance.write_text((ROOT / "deploy/class-replica@.service").read_text())
    rated = subprocess.run(
        ["systemd-analyze", "security", "--offline=true", "--no-pager", str(instance)],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    level = float(re.search(r"Overall exposure level for class-replica@8601\.service: ([\d.]+)", rated)[1])
    assert level <= 4.0, rated


def _pods() -> list[tuple[dict, dict]]:
    """(Deployment, pod spec) of every Deployment in the manifests."""
    return [(d, d["spec"]["template"]["spec"]) for d in DOCS if d["kind"] == "Deployment"]


def test_manifests_live_in_their_namespace_and_run_hardened_pods():
    """Issue 55 item 10: every object in the namespace inference-explainer (none in default); every pod as a
    non-root high UID with the runtime's seccomp profile and no service-account token; every container with a
    read-only root filesystem, no capability and no privilege escalation; images at exact releases (Redis at least
    7.4.6, which fixes CVE-2025-49844; the app at the package's version); NetworkPolicies deny by default and admit
    the ingress controller to the app and the app to Redis; the Ingress ends TLS for its host."""
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    [namespace] = [d["metadata"]["name"] for d in DOCS if d["kind"] == "Namespace"]
    assert namespace == "inference-explainer"
    assert all(d["metadata"]["namespace"] == namespace for d in DOCS if d["kind"] != "Namespace")
    images = {}
    for deployment, pod in _pods():
        context = pod["securityContext"]
        assert context["runAsNonRoot"] and context["runAsUser"] >= 10000
        assert context["seccompProfile"] == {"type": "RuntimeDefault"}
        assert pod["automountServiceAccountToken"] is False and pod["serviceAccountName"] != "default"
        for container in pod["containers"]:
            sc = container["securityContext"]
            assert sc["readOnlyRootFilesystem"] and sc["allowPrivilegeEscalation"] is False
            assert sc["capabilities"] == {"drop": ["ALL"]}
            images[deployment["metadata"]["name"]] = container["image"]
    assert images["inference-explainer"] == f"inference-explainer:{version}"
    redis = re.fullmatch(r"redis:(\d+)\.(\d+)\.(\d+)-alpine", images["redis"])
    assert redis and tuple(map(int, redis.groups())) >= (7, 4, 6)
    policies = {d["metadata"]["name"]: d["spec"] for d in DOCS if d["kind"] == "NetworkPolicy"}
    assert policies["default-deny"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    app, store = policies["inference-explainer"], policies["class-store"]
    assert app["ingress"][0]["from"][0]["namespaceSelector"]["matchLabels"] == {
        "kubernetes.io/metadata.name": "ingress-nginx"
    }
    assert store["ingress"][0]["from"][0]["podSelector"] == app["podSelector"]
    [tls] = one("Ingress")["spec"]["tls"]
    assert tls["hosts"] == [one("Ingress")["spec"]["rules"][0]["host"]] and tls["secretName"]


def test_manifests_validate_against_the_kubernetes_api_schemas():
    """Each object is valid for the Kubernetes API (kubernetes-validate's schemas, strict: no unknown field)."""
    import kubernetes_validate

    for doc in DOCS:
        kubernetes_validate.validate(doc, kubernetes_validate.latest_version(), strict=True)


SCAN = ROOT / ".ci/scan/bin/checkov"
# The checks the manifests skip on purpose, each with its reason in an annotation beside it.
SKIPPED = {"CKV_K8S_11", "CKV_K8S_35", "CKV_K8S_43"}


def test_manifests_pass_the_policy_scan():
    """checkov's Kubernetes policies (README's test command installs it into .ci/scan): no check fails, and the only
    ones skipped are the three decisions the manifests give a reason for (no CPU limit; secrets read from the
    environment; tags rather than digests). It failed 34 of 184 checks before."""
    scan = subprocess.run(
        [str(SCAN), "-f", str(ROOT / "deploy/k8s/class-server.yaml"), "--framework", "kubernetes", "--skip-download",
         "--compact", "-o", "json"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    report = json.loads(scan.stdout)
    assert report["summary"]["failed"] == 0, [c["check_id"] for c in report["results"]["failed_checks"]]
    assert report["summary"]["passed"] >= 150
    skipped = report["results"]["skipped_checks"]
    assert {c["check_id"] for c in skipped} == SKIPPED
    assert all(c["check_result"].get("suppress_comment") for c in skipped)


def test_image_runs_a_replica_with_its_steps_in_line():
    """Each pod is one replica of a class server, so its decode Steps queue as serve's replicas' do."""
    lines = (ROOT / "deploy/Dockerfile").read_text().splitlines()
    assert "ENV EXPLAINER_STEPS_IN_LINE=1" in lines


def image_cmd() -> list[str]:
    """The Dockerfile's CMD (its JSON form, continued over lines)."""
    text = (ROOT / "deploy/Dockerfile").read_text()
    return json.loads(text[text.index("\nCMD ") + 5 :].replace("\\\n", ""))


def test_image_installs_the_package_held_to_the_lock():
    """The image installs torch from the CPU index, then the package from the build context held to the lock
    (``pip install -c requirements.txt``), then runs as a user who cannot write to site-packages; it copies no
    source files in and makes nothing in site-packages (the figures' code is served from where it lies)."""
    lines = [line.strip() for line in (ROOT / "deploy/Dockerfile").read_text().splitlines()]
    runs = [i for i, line in enumerate(lines) if line.startswith("RUN ")]
    install = next(i for i in runs if "pip install" in lines[i] and "/src" in lines[i])
    assert (
        "--mount=type=bind,source=.,target=/src" in lines[install] and "-c /tmp/requirements.txt /src" in lines[install]
    )
    torch = next(i for i, line in enumerate(lines) if "download.pytorch.org/whl/cpu torch==" in line)
    user = next(i for i, line in enumerate(lines) if line.startswith("USER "))
    assert torch < install < user
    assert not [line for line in lines if "ui.static" in line]
    copied = [line.split()[1] for line in lines if line.startswith("COPY ")]
    assert copied == ["requirements.txt"]


def test_image_checks_streamlit_health():
    """The image's HEALTHCHECK asks streamlit's own health endpoint on the port the app listens on."""
    text = (ROOT / "deploy/Dockerfile").read_text().replace("\\\n", " ")  # continued lines joined
    [check] = [line for line in text.splitlines() if line.startswith("HEALTHCHECK ")]
    cmd = image_cmd()
    port = cmd[cmd.index("--port") + 1]
    assert f"http://127.0.0.1:{port}/_stcore/health" in check and "--start-period=" in check


def test_build_context_leaves_out_git_tests_and_caches():
    """.dockerignore keeps the repository's history, tests, docs, benches and caches out of the build context."""
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines() if line.strip()}
    assert {".git", "tests", "bench", "docs", "**/__pycache__", ".*cache", "build", "*.egg-info"} <= ignored
    assert not {"app.py", "main.py", "core", "ui", "serve", "assets", "frontend", "setup.py"} & ignored


def _pins(name: str) -> dict[str, str]:
    """{package: version} of every ``name==version`` line of a requirements file (comments and options skipped)."""
    pins = {}
    for line in (ROOT / name).read_text().splitlines():
        text = line.split("#")[0].strip()
        if text and not text.startswith("-"):
            requirement = Requirement(text)
            [spec] = requirement.specifier
            assert spec.operator == "==", line
            pins[requirement.name.lower()] = spec.version
    return pins


def test_pyproject_ranges_hold_what_requirements_locks():
    """pyproject.toml declares compatible ranges (no exact pins) for the packages requirements.in pins, and every
    pinned version lies in its range: ``pip install -c requirements.txt .`` resolves to the lock."""
    deps = [Requirement(d) for d in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]]
    direct = _pins("requirements.in")
    assert sorted(d.name for d in deps) == sorted(direct)
    assert not [d for d in deps if any(spec.operator == "==" for spec in d.specifier)]
    for dep in deps:
        assert direct[dep.name] in dep.specifier, (dep, direct[dep.name])


def _via(name: str) -> set[str]:
    """Every package a pip-compile lock names as the reason another is there (its ``# via`` lines)."""
    reasons = set()
    for line in (ROOT / name).read_text().splitlines():
        text = line.strip().removeprefix("#").strip().removeprefix("via").strip()
        if line.startswith("    #") and text and not text.startswith(("-r ", "-c ")):
            reasons.add(text.lower())
    return reasons


def test_requirements_lock_the_whole_set():
    """requirements.txt and requirements-test.txt are whole locks (pip-compile's, deploy/lock.sh): each holds its
    .in file's pins unchanged, every package another is there for is pinned too, and the suite's lock holds every
    package of the app's at the app's version."""
    app, suite = _pins("requirements.txt"), _pins("requirements-test.txt")
    assert _pins("requirements.in").items() <= app.items()
    assert {k: v for k, v in _pins("requirements-test.in").items()}.items() <= suite.items()
    assert _via("requirements.txt") <= set(app) and _via("requirements-test.txt") <= set(suite)
    assert app.items() <= suite.items()
    assert len(app) > 3 * len(_pins("requirements.in"))  # the transitive set, not the 14 direct pins alone
    assert app["torch"] == "2.13.0"


def test_the_suite_runs_on_its_lock():
    """Every package of requirements-test.txt is installed here at its locked version (README's test command
    installs exactly that file)."""
    from importlib.metadata import PackageNotFoundError, version

    wrong = {}
    for name, pinned in _pins("requirements-test.txt").items():
        try:
            found = version(name)
        except PackageNotFoundError:
            found = None
        if found is None or found.split("+")[0] != pinned:
            wrong[name] = (pinned, found)
    assert not wrong


def run_time_files() -> list[str]:
    """Every file the installed app opens or imports at run time, relative to the checkout: main.py, app.py
    and its packages' modules, the pages, assets/, frontend/*.js, .streamlit/config.toml and the nginx
    template (``serve``)."""
    files = [ROOT / "main.py", ROOT / "app.py", ROOT / ".streamlit/config.toml", ROOT / "deploy/nginx.conf.template"]
    files += sorted((ROOT / "app_pages").glob("*.py")) + sorted((ROOT / "frontend").glob("*.js"))
    files += [p for p in (ROOT / "assets").rglob("*") if p.is_file()]
    for package in ("core", "ui", "serve"):
        files += [p for p in (ROOT / package).rglob("*.py") if (p.parent / "__init__.py").exists()]
    return sorted(p.relative_to(ROOT).as_posix() for p in files)


def test_wheel_ships_every_file_the_app_opens(tmp_path):
    """The built wheel (``pip wheel --no-deps``, a few seconds) holds every run-time file at the same path inside
    ``inference_explainer/`` as in the checkout (so ``core.model.shipped.ROOT`` finds them there) and no
    generated static/."""
    shipped = wheel_files(build_wheel(tmp_path))
    wanted = run_time_files()
    assert {"assets/model.safetensors", "assets/tokenizer.json", "assets/lessons/fifteen-minutes.toml"} <= set(wanted)
    assert {"assets/style/a11y.css", "assets/draft/model.safetensors", "frontend/plotly_loader.js"} <= set(wanted)
    missing = [f for f in wanted if f"inference_explainer/{f}" not in shipped]
    assert not missing, f"not in the wheel: {missing}"
    assert not [f for f in shipped if "/static/" in f]
