"""deploy/: what the compose file promises, checked without docker (deploy/smoke.sh runs it).

The stack itself is started by the deploy smoke test in CI; these tests pin the properties a
reader of the README relies on: which container gets which secret, persistence, restarts,
health checks, the GPU profile, and that an unfilled env file stops the bot at start.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.config import load_config, require_github
from bot.errors import ConfigError

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
REPROBOT_SERVICES = ("web", "triage", "run-cpu", "run-gpu", "builder", "beat")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data = yaml.safe_load((DEPLOY / "compose.yml").read_text())
    assert isinstance(data, dict)
    return data


def _env(svc: dict[str, Any]) -> dict[str, str]:
    env = svc.get("environment") or {}
    assert isinstance(env, dict), "environment as a mapping"
    return {str(k): str(v) for k, v in env.items()}


def test_every_role_runs_from_the_one_image(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert set(services) == {"redis", *REPROBOT_SERVICES}
    for name in REPROBOT_SERVICES:
        svc = services[name]
        assert svc["image"] == "${REPROBOT_IMAGE:-reprobot:latest}", name
        assert svc["build"]["dockerfile"] == "deploy/Dockerfile", name
        assert svc["restart"] == "unless-stopped", name
        assert svc["depends_on"]["redis"]["condition"] == "service_healthy", name
    commands = {name: services[name]["command"][:3] for name in REPROBOT_SERVICES}
    assert commands["web"][0] == "serve"
    assert commands["triage"] == ["worker", "--queues", "triage"]
    assert services["triage"]["command"][-1] == "--beat", "one worker runs the sweep"
    assert sum("--beat" in services[n]["command"] for n in REPROBOT_SERVICES) == 1
    assert commands["run-cpu"] == ["worker", "--queues", "cpu"]
    assert commands["run-gpu"] == ["worker", "--queues", "gpu"]
    assert commands["builder"] == ["worker", "--queues", "build"]
    assert commands["beat"] == ["beat"]


def test_github_credentials_reach_only_the_triage_worker(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name, svc in services.items():
        env = _env(svc)
        creds = {k for k in env if k in ("GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY",
                                         "GITHUB_TOKEN")}
        if name == "triage":
            assert creds == {"GITHUB_APP_ID", "GITHUB_APP_PRIVATE_KEY", "GITHUB_TOKEN"}
            assert svc["secrets"] == ["github_app_key"]
        else:
            assert not creds, f"{name} gets GitHub credentials: {creds}"
            assert "secrets" not in svc, name
            assert "env_file" not in svc, f"{name}: env_file would hand it every variable"
        web_only = {k for k in env if k == "GITHUB_WEBHOOK_SECRET"
                    or k.startswith(("REPROBOT_DASHBOARD_", "REPROBOT_OAUTH_",
                                     "REPROBOT_SESSION_"))}
        if name == "web":
            assert {"GITHUB_WEBHOOK_SECRET", "REPROBOT_DASHBOARD_AUTH",
                    "REPROBOT_DASHBOARD_TOKEN"} <= web_only
        else:
            assert not web_only, f"{name} gets the receiver's secrets: {web_only}"


def test_redis_persists_with_aof_on_a_volume(compose: dict[str, Any]) -> None:
    redis = compose["services"]["redis"]
    cmd = redis["command"]
    assert cmd[cmd.index("--appendonly") + 1] == "yes"
    assert cmd[cmd.index("--dir") + 1] == "/data"
    assert "redis-data:/data" in redis["volumes"]
    assert "redis-data" in compose["volumes"]
    assert redis["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    assert "ports" not in redis, "Redis has no password: never published on the host"


def test_gpu_worker_is_in_a_profile_with_an_nvidia_reservation(compose: dict[str, Any]) -> None:
    gpu = compose["services"]["run-gpu"]
    assert gpu["profiles"] == ["gpu"]
    (device,) = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert device["driver"] == "nvidia" and device["capabilities"] == ["gpu"]
    for name in REPROBOT_SERVICES:
        if name != "run-gpu":
            assert "profiles" not in compose["services"][name], name


def test_builds_volume_is_shared_by_builder_and_run_workers(compose: dict[str, Any]) -> None:
    services = compose["services"]
    for name in ("builder", "run-cpu", "run-gpu"):
        assert any(str(v).startswith("builds:/var/lib/reprobot/builds")
                   for v in services[name]["volumes"]), name
    for name in ("web", "triage", "beat"):
        assert not any("builds:" in str(v) for v in services[name]["volumes"]), name


def test_dockerfile_runs_as_non_root_with_a_healthcheck() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    final = text[text.rindex("\nFROM "):]
    assert "\nUSER reprobot" in final
    assert 'HEALTHCHECK' in final and '"reprobot", "healthcheck"' in final
    assert text.startswith("#") and "ARG BASE_IMAGE=python:3.11-slim-bookworm" in text
    runner = (DEPLOY / "Dockerfile.runner").read_text()
    assert "USER 65534:65534" in runner and "ARG BASE_IMAGE=" in runner


def _dotenv(path: Path) -> dict[str, str]:
    env = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            env[key] = value
    return env


def test_env_example_names_every_variable_compose_needs() -> None:
    text = (DEPLOY / "compose.yml").read_text()
    used = set(re.findall(r"\$\{([A-Z_]+)", text))
    example = (DEPLOY / ".env.example").read_text()
    missing = {v for v in used if v not in example}
    assert not missing, f"not in deploy/.env.example: {sorted(missing)}"


def test_an_unfilled_env_file_stops_the_bot_at_start() -> None:
    env = _dotenv(DEPLOY / ".env.example")
    cfg = load_config(None, env)
    with pytest.raises(ConfigError, match="GITHUB_WEBHOOK_SECRET"):
        require_github(cfg, webhook=True, api=False)
    with pytest.raises(ConfigError, match="GITHUB_APP_ID"):
        require_github(cfg, webhook=False, api=True)
    from bot.auth import check_exposure

    with pytest.raises(ConfigError, match="REPROBOT_DASHBOARD_TOKEN"):
        check_exposure(cfg, "0.0.0.0")


def _apt_mirror() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("apt_mirror", DEPLOY / "apt_mirror.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


DEB822 = """\
Types: deb
URIs: http://mirror.example.org/debian-security
Suites: bookworm-security
Components: main

Types: deb-src
URIs: http://src.example.org/debian
Suites: bookworm

Types: deb
URIs: http://off.example.org/debian
Suites: bookworm
Enabled: no

Types: deb
URIs: http://mirror.example.org/debian
Suites: bookworm bookworm-updates
Components: main
"""


@pytest.mark.parametrize(
    ("files", "want"),
    [
        ([("/etc/apt/sources.list.d/debian.sources", DEB822)], "http://mirror.example.org/debian"),
        ([("/etc/apt/sources.list",
           "# deb http://commented.example.org/debian bookworm main\n"
           "deb [arch=amd64 signed-by=/k.gpg] https://deb.nodesource.com/node_20.x nodistro main\n"
           "deb http://security.example.org/debian-security bookworm-security main\n"
           "deb [arch=amd64] http://one.example.org/debian bookworm main\n")],
         "http://one.example.org/debian"),
        ([("/etc/apt/sources.list.d/x.list", "deb cdrom:/media/ bookworm main\n")], None),
        ([("/etc/apt/sources.list", "deb http://old.example.org/debian bullseye main\n")], None),
    ],
)
def test_debootstrap_uses_the_machines_bookworm_mirror(files: list[tuple[str, str]],
                                                        want: str | None) -> None:
    found = _apt_mirror().mirrors(files)
    assert (found[0] if found else None) == want
