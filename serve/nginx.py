"""nginx and ports for the class server (`serve/replicas.py`): the config written from
`deploy/nginx.conf.template`, `nginx -t`, the binary's whereabouts, and free or taken ports.

Every refusal is a ``ServeError`` whose message is meant for the teacher (no traceback).
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the checkout, or site-packages
TEMPLATE = ROOT / "deploy" / "nginx.conf.template"
COOKIE = "class_replica"
INSTALL_NGINX = "sudo apt-get install -y nginx"


class ServeError(Exception):
    """A refusal to start, with a message meant for the teacher (no traceback)."""


def find_nginx(path: str | None = None) -> str:
    """The nginx binary (Debian installs it in /usr/sbin, often not on a user's PATH)."""
    found = path or shutil.which("nginx") or ("/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None)
    if not found or not Path(found).exists():
        raise ServeError(f"nginx is not installed; install it with:\n    {INSTALL_NGINX}")
    return found


def max_upload_mb() -> int:
    """streamlit's ``server.maxUploadSize`` in MB (MiB) from .streamlit/config.toml (default 200)."""
    cfg = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    return int(cfg.get("server", {}).get("maxUploadSize", 200))


ENGINE_LOCATION = """        # The class engine (serve/engine_process.py): one for every replica's students. Its token
        # streams are server-sent events: passed on at once (no buffering), open while a request streams.
        location /explainer/serve/ {
            proxy_pass http://{address};
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_buffering off;
            proxy_read_timeout 1h;
            proxy_connect_timeout 5s;
        }
"""


def nginx_config(replicas: list[tuple[str, str]], listen: str, prefix: Path, engine: str | None = None) -> str:
    """The template filled in for ``replicas`` [(name, "host:port")], listening on ``listen``
    ("host:port"), with logs and temporary files under ``prefix``; ``engine`` ("host:port"): the class engine's
    process, which gets the engine's routes (None: the replicas answer them, each with an engine of its own)."""
    addresses = [a for _, a in replicas]
    server = "        server {} max_fails=1 fail_timeout=5s;"
    groups = []
    for name, address in replicas:
        backups = [f"        server {a} backup;" for a in addresses if a != address]
        groups.append("\n".join([f"    upstream {name} {{", server.format(address), *backups, "    }"]))
    mb = max_upload_mb()
    values = {
        "prefix": str(prefix),
        "cookie": COOKIE,
        "listen": listen,
        "all_servers": "\n".join(server.format(a) for a in addresses),
        "replica_upstreams": "\n".join(groups),
        "cookie_to_pool": "\n".join(f"        {name} {name};" for name, _ in replicas),
        "address_to_name": "\n".join(f'        "~(^|, ){re.escape(a)}$" {name};' for name, a in replicas),
        "max_upload_mb": str(mb),
        "max_body": f"{mb * 1024 + 64}k",  # 64 KiB for the multipart boundary and part headers
        "engine_location": ENGINE_LOCATION.replace("{address}", engine) if engine else "",
    }
    text = TEMPLATE.read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    if "{{" in text:
        raise ValueError(f"unfilled placeholder in {TEMPLATE.name}: {text[text.index('{{') :][:40]!r}")
    return text


def nginx_command(nginx: str, prefix: Path) -> list[str]:
    return [nginx, "-p", str(prefix), "-e", str(prefix / "error.log"), "-c", str(prefix / "nginx.conf")]


def check_config(nginx: str, prefix: Path) -> None:
    """``nginx -t`` on the written config; raises ServeError with nginx's own message."""
    done = subprocess.run([*nginx_command(nginx, prefix), "-t", "-q"], capture_output=True, text=True)
    if done.returncode != 0:
        raise ServeError(f"nginx -t refused the generated config:\n{done.stderr.strip()}")


def port_taken(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


HOST = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$|^\[?[0-9A-Fa-f:.]+\]?$")  # a name or an IP address


def address_problem(host: str, port: int, backends: list[str]) -> str | None:
    """What is wrong with ``--host``, ``--port`` or a ``--backend`` host:port, or None. They go into
    nginx's config verbatim, so only names, IP addresses and ports 1 … 65535 pass (port 70000 raised
    Python's OverflowError, and a host ";evil" was reported as a taken port)."""
    if not 1 <= port <= 65535:
        return f"--port must be 1 … 65535, got {port}"
    if not HOST.match(host):
        return f"--host must be a host name or an IP address, got {host!r}"
    for b in backends:
        name, _, num = b.rpartition(":")
        if not (name and HOST.match(name) and num.isdigit() and 1 <= int(num) <= 65535):
            return f"--backend must be host:port (port 1 … 65535), got {b!r}"
    return None
