"""docker-compose.yml is valid and its commands work, without a Docker engine: the file is
checked statically (both compose generations read all of it; images and ports are variables
whose defaults are the official images and the usual ports) and the same commands are run
natively against this machine's PostgreSQL and Redis (a 20-job sweep through the API,
deduplication, cancellation). tests/deploy/test_compose_real.py runs the file in Docker."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

from faceoff.cli.up import free_port
from tests.backends import create_pg_database, drop_pg_database, require
from tests.conftest import REPO

COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
OURS = ("migrate", "api", "worker", "dashboard")


def _substitute(text: str, env: dict[str, str]) -> str:
    """Compose's ${VAR:-default} substitution (nested defaults included)."""
    pattern = re.compile(r"\$\{(\w+)(?::-([^${}]*))?\}")
    while True:
        new = pattern.sub(lambda m: env.get(m.group(1)) or (m.group(2) or ""), text)
        if new == text:
            return new
        text = new


def command_of(service: str) -> list[str]:
    command = SERVICES[service]["command"]
    return shlex.split(command) if isinstance(command, str) else list(command)


def test_services_and_healthchecks():
    assert {"postgres", "redis", *OURS} <= set(SERVICES)
    for name in ("postgres", "redis", "api"):
        assert SERVICES[name]["healthcheck"]["test"], name
    depends = {name: SERVICES[name].get("depends_on", {}) for name in OURS}
    assert depends["migrate"]["postgres"]["condition"] == "service_healthy"
    for name in ("api", "worker", "dashboard"):
        assert depends[name]["migrate"]["condition"] == "service_completed_successfully"
    for name in ("api", "worker"):
        assert depends[name]["redis"]["condition"] == "service_healthy"
    assert SERVICES["migrate"]["restart"] == "no"
    assert "ports" not in SERVICES["worker"], "workers scale with --scale worker=N"


def test_configuration_only_from_environment():
    for name in OURS:
        env = SERVICES[name]["environment"]
        for key in ("FACEOFF_DATABASE_URL", "FACEOFF_BROKER_URL", "FACEOFF_QUEUE"):
            assert key in env, (name, key)
    example = (REPO / ".env.example").read_text()
    for key in ("FACEOFF_DATABASE_URL", "FACEOFF_BROKER_URL", "POSTGRES_PASSWORD"):
        assert re.search(rf"^{key}=", example, re.M), key
    url = _substitute(SERVICES["api"]["environment"]["FACEOFF_DATABASE_URL"], {})
    assert url == "postgresql+psycopg://faceoff:faceoff@postgres:5432/faceoff"


@pytest.mark.parametrize("service", OURS)
def test_every_command_exists_in_the_project(service):
    argv = command_of(service)
    if argv[:2] == ["python", "-m"]:
        spec = importlib.util.find_spec(argv[2])
        assert spec is not None, argv
        if spec.submodule_search_locations:  # a package runs its __main__
            assert importlib.util.find_spec(f"{argv[2]}.__main__") is not None, argv
        else:
            assert callable(getattr(importlib.import_module(argv[2]), "main", None)), argv
    else:
        assert argv[0] == "uvicorn", argv
        module, attr = argv[1].split(":")
        assert hasattr(importlib.import_module(module), attr), argv


def test_both_compose_generations_read_the_whole_file():
    """No syntax only Compose v2 knows: docker-compose 1.29 rejects env_file's long form
    (path/required) and misreads a ${VAR:-default} nested in another's default."""
    text = (REPO / "docker-compose.yml").read_text()
    assert "version" not in COMPOSE  # obsolete in v2, and 1.29 then reads the Compose spec
    assert not re.search(r"\$\{[^}]*\$\{", text), "nested ${...} defaults"
    assert not re.search(r"!(reset|override)\b", text)
    assert not {"include", "name"} & set(COMPOSE)
    for name, service in SERVICES.items():
        env_file = service.get("env_file")
        files = env_file if isinstance(env_file, list) else [env_file] * (env_file is not None)
        assert all(isinstance(f, str) for f in files), (name, env_file)
        assert not {"develop", "post_start", "pre_stop"} & set(service), name
        for dependency in service.get("depends_on", {}).values():
            assert dependency["condition"] in (
                "service_started",
                "service_healthy",
                "service_completed_successfully",
            ), (name, dependency)


def test_images_and_ports_are_variables_defaulting_to_the_official_ones():
    images = {name: _substitute(SERVICES[name]["image"], {}) for name in SERVICES}
    assert images["postgres"] == "postgres:16" and images["redis"] == "redis:7"
    assert {images[name] for name in OURS} == {"faceoff:latest"}
    local = _substitute(SERVICES["postgres"]["image"], {"POSTGRES_IMAGE": "local/pg:1"})
    assert local == "local/pg:1"
    dockerfile = (REPO / "Dockerfile").read_text()
    default_base = re.search(r"^ARG PYTHON_IMAGE=(\S+)$", dockerfile, re.M)
    assert default_base and default_base.group(1) == "python:3.11-slim"
    for name in OURS:
        build_arg = SERVICES[name]["build"]["args"]["PYTHON_IMAGE"]
        assert _substitute(build_arg, {}) == default_base.group(1), name
    for name, port in (("api", "8000"), ("dashboard", "8050")):
        (published,) = SERVICES[name]["ports"]
        assert _substitute(published, {}) == f"{port}:{port}"
        variable = f"{name.upper()}_PUBLISH"
        loopback = _substitute(published, {variable: "127.0.0.1:18000"})
        assert loopback == f"127.0.0.1:18000:{port}", name


def test_compose_config_accepts_the_file(tmp_path):
    """The installed compose command (docker-compose 1.29, or Compose v2) parses the file; no
    engine is needed for `config`."""
    compose = _installed_compose()
    if compose is None:
        pytest.skip("no compose command installed (docker-compose or the Compose v2 plugin)")
    env_file = tmp_path / "env"
    env_file.write_text((REPO / ".env.example").read_text())
    env = {**os.environ, "ENV_FILE": str(env_file), "API_PUBLISH": "127.0.0.1:18000"}
    argv = [*compose, "--file", str(REPO / "docker-compose.yml"), "--env-file", str(env_file)]
    result = subprocess.run([*argv, "config"], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    config = yaml.safe_load(result.stdout)
    database_url = config["services"]["api"]["environment"]["FACEOFF_DATABASE_URL"]
    assert database_url.startswith("postgresql+psycopg://faceoff:change-me@postgres:5432/")
    assert "127.0.0.1" in str(config["services"]["api"]["ports"])


def _installed_compose() -> list[str] | None:
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    docker = shutil.which("docker")
    if (
        docker
        and subprocess.run([docker, "compose", "version"], capture_output=True).returncode == 0
    ):
        return [docker, "compose"]
    return None


def test_the_image_has_no_server_command_of_its_own_but_the_api():
    """The services' commands live in docker-compose.yml, the dashboard's in one place (it
    changes server there); the image installs no development extra."""
    dockerfile = (REPO / "Dockerfile").read_text()
    assert "faceoff.dashboard" not in dockerfile
    assert "[dev" not in dockerfile and "--reload" not in dockerfile
    cmd = re.search(r"^CMD (.+)$", dockerfile, re.M)
    assert cmd and json.loads(cmd.group(1)) == command_of("api")


def test_dockerignore_sends_only_what_the_dockerfile_copies():
    """A whitelist: the build context holds no virtualenv, git history or caches."""
    lines = [
        line
        for line in (REPO / ".dockerignore").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert lines[0] == "*", "everything is left out first, then what is copied let in"
    dockerfile = (REPO / "Dockerfile").read_text()
    sources = {
        source
        for line in dockerfile.splitlines()
        if line.startswith("COPY ") and "--from" not in line
        for source in line.split()[1:-1]
    }
    assert sources <= {line.removeprefix("!") for line in lines if line.startswith("!")}


def test_dockerfile_copies_every_package_the_commands_need():
    dockerfile = (REPO / "Dockerfile").read_text()
    packages = (
        "faceoff",
        "solvers",
        "data",
        "core",
        "api",
        "worker",
        "dashboard",
        "migrations",
        "cli",
        "client",
    )
    for package in packages:
        assert re.search(rf"^COPY {package} {package}$", dockerfile, re.M), package
    assert re.search(r"^WORKDIR /app$", dockerfile, re.M)  # run away from the sources


def _native(service: str) -> list[str]:
    """The compose command of ``service`` as it runs here (this venv's python)."""
    argv = command_of(service)
    if argv[0] == "python":
        return [sys.executable, *argv[1:]]
    return [sys.executable, "-m", *argv]


def _wait(predicate, timeout: float, what: str, logs: list[Path]):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            tails = "\n".join(f"--- {p}\n{p.read_text()[-3000:]}" for p in logs if p.exists())
            pytest.fail(f"{what} not reached after {timeout} s\n{tails}")
        time.sleep(0.3)


@pytest.mark.slow
def test_compose_commands_run_natively(tmp_path):
    """migrate → worker + api, as compose starts them, on real PostgreSQL and Redis."""
    require("PostgreSQL", "127.0.0.1", 5432)
    require("Redis", "127.0.0.1", 6379)
    database_url = create_pg_database()
    port = free_port()
    env = {
        **os.environ,
        "FACEOFF_DATABASE_URL": database_url,
        "FACEOFF_BROKER_URL": "redis://127.0.0.1:6379/15",
        "FACEOFF_QUEUE": f"compose-{port}",
        "FACEOFF_HOME": str(tmp_path / "home"),
        "FACEOFF_WORKER_CONCURRENCY": "2",
    }
    api_argv = [*_native("api")]
    api_argv[api_argv.index("--port") + 1] = str(port)
    api_argv[api_argv.index("--host") + 1] = "127.0.0.1"
    logs = [tmp_path / "faceoff.worker.log", tmp_path / "faceoff.api.log"]
    processes = []
    try:
        subprocess.run(_native("migrate"), env=env, check=True, timeout=120, capture_output=True)
        for argv, log in ((_native("worker"), logs[0]), (api_argv, logs[1])):
            with log.open("wb") as handle:
                processes.append(
                    subprocess.Popen(argv, env=env, stdout=handle, stderr=subprocess.STDOUT)
                )
        api = httpx.Client(base_url=f"http://127.0.0.1:{port}/api/v1", timeout=30)

        def healthy():
            try:
                health = api.get("/health")
            except httpx.HTTPError:
                return None
            return health.status_code == 200 and health.json()["workers"] >= 1

        _wait(healthy, 240, "API healthy with a live worker", logs)
        dataset = {
            "name": "compose-synthetic",
            "source": {
                "kind": "synthetic",
                "generator": "classification",
                "n_samples": 500,
                "n_features": 50,
                "density": 0.2,
                "seed": 0,
            },
        }
        assert api.post("/datasets", json=dataset).status_code == 201
        sweep = {
            "datasets": ["compose-synthetic"],
            "losses": ["logistic", "smooth_hinge"],
            "l2": [1e-2, 1e-3],
            "solvers": ["dual_cd", "primal_cd", "spdc", "saga", "agd"],
            "stop": {"max_seconds": 20, "tol": 1e-8},
        }
        created = api.post("/sweeps", json=sweep)
        assert created.status_code == 201, created.text
        sweep_id = created.json()["id"]
        assert created.json()["n_jobs"] == 20

        def finished():
            counts = api.get(f"/sweeps/{sweep_id}").json()["progress"]
            return counts if counts.get("succeeded", 0) == 20 else None

        _wait(finished, 240, "20 succeeded jobs", logs)
        jobs = api.get("/jobs", params={"sweep_id": sweep_id, "limit": 100}).json()
        assert jobs["count"] == 20
        for job in jobs["data"]:
            trace = api.get(f"/jobs/{job['id']}/trace").json()
            points = trace["data"] if isinstance(trace, dict) else trace
            assert points[0]["seq"] == 0 and points[-1]["gap"] <= 1e-8 * max(
                1, abs(points[-1]["primal"])
            )
        # an identical submission is the same job
        spec = {**jobs["data"][0]["spec"]}
        again = api.post("/jobs", json=spec)
        assert again.status_code == 200 and again.json()["id"] == jobs["data"][0]["id"]
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
        drop_pg_database(database_url)
