"""docker-compose.yml run for real, as a team runs it: the repository's file, unchanged, in a
Docker engine on this machine.

No image registry is reachable here, so the images are built first (images.py): a Debian
base by debootstrap + ``docker import``, and on it Debian's python3, postgresql and
redis-server standing in for python:3.11-slim, postgres:16 and redis:7, and the app from the
repository's Dockerfile. The compose file selects them through its variables (FACEOFF_IMAGE,
POSTGRES_IMAGE, REDIS_IMAGE), so what runs is the file a user runs with the official images.

Networking stays on this machine: the containers talk to each other on the project's own
bridge network (service names, as in production), the API and the dashboard are published on
127.0.0.1 only, on free ports (API_PUBLISH, DASHBOARD_PUBLISH), and this test reaches them
there and nowhere else — no container address is contacted from outside the engine's own
namespaces (the engine's docker-proxy forwards the published ports). A dockerd started here
has no NAT or forwarding (engine.py), so the running containers cannot reach the outside.

The scenario, each step timed (the table is printed at the end and kept in the cache folder's
timings.log): start dockerd if none runs; build or reuse the images; ``up -d``; wait for a
healthy API with a live worker; create a team token with ``faceoff tokens create`` inside the
api container; register the datasets through the published API port; ``--scale worker=3``;
submit a sweep with a peer (sklearn.lbfgs) to the three workers; open the dashboard in
Chromium; ``restart worker`` mid-sweep; wait for every job; ``down`` then ``up`` again and
find every job, trace point and dataset still there (named volumes); ``down -v`` removes
them.

Skipped with the reason when no Docker engine runs and none can be started, or no compose
command is installed; under CI (``CI`` set) that is a failure instead: .ci/run installs
docker.io, docker-compose and debootstrap from Debian's packages.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from faceoff.cli.up import free_port
from tests.conftest import REPO
from tests.deploy.engine import (
    EngineUnavailable,
    compose_command,
    docker,
    docker_engine,
)
from tests.deploy.images import CACHE, build_images

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(3600)]

T = TypeVar("T")
WORKERS = 3
DATASET = {
    "name": "compose-e2e",
    "source": {
        "kind": "synthetic",
        "generator": "classification",
        "n_samples": 20000,
        "n_features": 500,
        "density": 0.05,
        "seed": 0,
    },
}
# 48 jobs of up to 3 s of solver time each: long enough to restart the workers while it runs
# (tol 0 and small l2, so that most run their time out): ~50 s of work for three workers
SWEEP = {
    "name": "compose e2e",
    "datasets": [DATASET["name"]],
    "losses": ["logistic"],
    "l2": [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10],
    "solvers": ["dual_cd", "primal_cd", "saga", "agd", "lbfgs", "sklearn.lbfgs"],
    "stop": {"max_epochs": 1e7, "max_seconds": 3, "tol": 0},
}
# a team's own upload: kept in the faceoff-home volume, the rest in PostgreSQL's
UPLOAD = "".join(f"{1 if i % 3 else -1} 1:{i % 7 + 1} 4:{i % 5 - 2}.5 9:1\n" for i in range(40))
# the reaper requeues a job of a killed worker after this long (default 60 s)
TEST_SETTINGS = {
    "FACEOFF_HEARTBEAT_TIMEOUT_SECONDS": "15",
    "FACEOFF_DISPATCH_TIMEOUT_SECONDS": "15",
}


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; CI is set: the compose test must run (.ci/run installs Docker)")
    pytest.skip(reason)


class Clock:
    """Wall time of each step, in order."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, float]] = []

    @contextmanager
    def __call__(self, step: str) -> Iterator[None]:
        start = time.monotonic()
        try:
            yield
        finally:
            self.steps.append((step, time.monotonic() - start))

    def table(self) -> str:
        width = max((len(step) for step, _ in self.steps), default=10)
        return "\n".join(f"  {step:<{width}} {seconds:8.1f} s" for step, seconds in self.steps)


class Compose:
    """The compose command on the repository's file, for one project."""

    def __init__(self, command: list[str], project: str, env_file: Path, env: dict[str, str]):
        self.command = command
        self.project = project
        self.env_file = env_file
        self.env = env

    def argv(self, *args: str) -> list[str]:
        return [
            *self.command,
            *("--project-name", self.project),
            *("--file", str(REPO / "docker-compose.yml")),
            *("--env-file", str(self.env_file)),
            *args,
        ]

    def __call__(self, *args: str, timeout: float = 600) -> str:
        result = subprocess.run(
            self.argv(*args), capture_output=True, text=True, env=self.env, timeout=timeout
        )
        if result.returncode != 0:
            raise AssertionError(
                f"{' '.join(self.argv(*args))} exited with {result.returncode}:\n"
                f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}\n{self.logs()}"
            )
        return result.stdout

    def logs(self, tail: int = 60) -> str:
        result = subprocess.run(
            self.argv("logs", "--no-color", "--tail", str(tail)),
            capture_output=True,
            text=True,
            env=self.env,
            timeout=120,
        )
        return f"--- compose logs (last {tail} lines of each) ---\n{result.stdout[-20000:]}"


def _wait(predicate: Callable[[], T | None], timeout: float, what: str, compose: Compose) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not reached after {timeout:.0f} s\n{compose.logs()}")
        time.sleep(1.0)


def _env_file(path: Path) -> Path:
    """.env as README says: .env.example with the password and the secret key set."""
    password = secrets.token_hex(12)
    lines = []
    for line in (REPO / ".env.example").read_text().splitlines():
        line = line.replace("change-me", password)
        if line.startswith("FACEOFF_SECRET_KEY="):
            line = f"FACEOFF_SECRET_KEY={secrets.token_urlsafe(32)}"
        lines.append(line)
    lines += [f"{key}={value}" for key, value in TEST_SETTINGS.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def _health(api: httpx.Client) -> dict[str, Any] | None:
    try:
        response = api.get("/health")
    except httpx.HTTPError:
        return None
    return response.json() if response.status_code == 200 else None


def _live_workers(api: httpx.Client, count: int) -> Callable[[], dict[str, Any] | None]:
    def check() -> dict[str, Any] | None:
        health = _health(api)
        return health if health is not None and health["workers"] >= count else None

    return check


def _progress(api: httpx.Client, sweep_id: int) -> dict[str, int]:
    response = api.get(f"/sweeps/{sweep_id}")
    assert response.status_code == 200, response.text
    return response.json()["progress"]


def _snapshot(api: httpx.Client, sweep_id: int) -> dict[str, Any]:
    """Every dataset, job and trace point the team can read."""
    datasets = api.get("/datasets", params={"limit": 100}).json()
    jobs = api.get("/jobs", params={"sweep_id": sweep_id, "limit": 100}).json()
    traces = {}
    for job in jobs["data"]:
        points = api.get(f"/jobs/{job['id']}/trace").json()["data"]
        traces[job["id"]] = [(p["seq"], p["epoch"], p["primal"], p["gap"]) for p in points]
    keys = ("id", "status", "solver", "n_points", "primal", "gap", "attempts", "worker_host")
    return {
        "datasets": datasets,
        "jobs": {job["id"]: {k: job[k] for k in keys} for job in jobs["data"]},
        "traces": traces,
    }


def _report(clock: Clock, images_state: str, ps: str, capsys, record_property) -> None:
    """The step times (and ``ps`` with the scaled workers), on the terminal even under
    pytest-xdist (a worker's stderr is the terminal's) and in the cache folder."""
    text = (
        f"compose end to end ({images_state}), {datetime.now():%Y-%m-%d %H:%M}:\n"
        f"{clock.table()}\n"
        f"docker-compose ps with {WORKERS} workers:\n{ps}"
    )
    record_property("compose_timings", text)
    with capsys.disabled():
        print(f"\n{text}", file=sys.stderr)
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / "timings.log").open("a") as log:
        log.write(text + "\n\n")


def test_docker_compose_for_a_team(tmp_path, request, capsys, record_property):
    command = compose_command()
    if command is None:
        _unavailable("no compose command (Debian package docker-compose, or Compose v2)")
    clock = Clock()
    images_state = "not built"
    ps = "(not reached)"
    with ExitStack() as stack:
        try:
            with clock("dockerd"):
                started = stack.enter_context(
                    docker_engine(tmp_path / "dockerd.log", CACHE / "engine.users")
                )
        except EngineUnavailable as err:
            _unavailable(f"no Docker engine: {err}")
        _, seconds = clock.steps.pop()
        clock.steps.append((f"dockerd ({'started here' if started else 'running'})", seconds))
        stack.callback(lambda: _report(clock, images_state, ps, capsys, record_property))
        page = request.getfixturevalue("page")

        with clock("images"):
            images = build_images()
        images_state = (
            f"images built: {', '.join(images.built)}" if images.built else "images reused"
        )
        clock.steps += [
            (f"  {step}", seconds)
            for step, seconds in images.timings.items()
            if step != "images (total)"
        ]

        api_port, dashboard_port = free_port(), free_port()
        env_file = _env_file(tmp_path / "env")
        env = {
            **os.environ,
            "COLUMNS": "160",  # docker-compose 1.29's ps table, unwrapped
            "ENV_FILE": str(env_file),
            "FACEOFF_IMAGE": images.app,
            "POSTGRES_IMAGE": images.postgres,
            "REDIS_IMAGE": images.redis,
            "PYTHON_IMAGE": images.python,
            "API_PUBLISH": f"127.0.0.1:{api_port}",
            "DASHBOARD_PUBLISH": f"127.0.0.1:{dashboard_port}",
        }
        compose = Compose(command, f"faceoff-e2e-{os.getpid()}", env_file, env)
        stack.callback(_down_for_good, compose)
        api = stack.enter_context(
            httpx.Client(base_url=f"http://127.0.0.1:{api_port}/api/v1", timeout=30)
        )

        with clock("up -d"):
            compose("up", "-d", "--no-build")
        with clock("healthy: API, database, broker, a worker"):
            _wait(_live_workers(api, 1), 600, "a healthy API with a live worker", compose)
        with clock("token (faceoff tokens create in the api container)"):
            token = compose("exec", "-T", "api", "faceoff", "tokens", "create", "--team", "e2e")
            token = token.strip()
        assert token, "faceoff tokens create printed no secret"
        api.headers["Authorization"] = f"Bearer {token}"

        with clock("datasets (synthetic, upload)"):
            created = api.post("/datasets", json=DATASET)
            assert created.status_code == 201, created.text
            files = {"file": ("team.svm", UPLOAD.encode())}
            uploaded = api.post("/datasets/upload", files=files, data={"name": "e2e-upload"})
            assert uploaded.status_code == 201, uploaded.text

        with clock(f"--scale worker={WORKERS}"):
            compose("up", "-d", "--no-build", "--scale", f"worker={WORKERS}")
        with clock(f"{WORKERS} workers live"):
            health = _wait(_live_workers(api, WORKERS), 600, f"{WORKERS} live workers", compose)
        assert len(health["worker_hosts"]) == WORKERS, health
        # submitted to the three: a worker's warm-up (20-110 s here, by load) is not a race
        # between the first worker and the sweep
        with clock("sweep submitted"):
            sweep = api.post("/sweeps", json=SWEEP)
            assert sweep.status_code == 201, sweep.text
        sweep_id, n_jobs = sweep.json()["id"], sweep.json()["n_jobs"]
        assert n_jobs == len(SWEEP["solvers"]) * len(SWEEP["l2"])

        with clock("dashboard in Chromium (login, runs table)"):
            dashboard = f"http://127.0.0.1:{dashboard_port}"
            page.goto(dashboard + "/")
            page.wait_for_selector("#login-submit")
            page.fill("#token", token)
            page.click("#login-submit")
            page.wait_for_url(dashboard + "/")
            page.wait_for_selector("#runs-table a[href^='/compare?jobs=']", timeout=60_000)
            shown = page.locator("#runs-table a[href^='/compare?jobs=']").count()
        assert shown >= 1

        progress = _progress(api, sweep_id)
        assert progress["queued"] + progress["running"] > 0, (
            f"the sweep ended before the workers' restart: {progress}; make it longer"
        )
        with clock("restart worker (mid-sweep)"):
            compose("restart", "worker")
        with clock("sweep finished"):
            _wait(
                lambda: (p := _progress(api, sweep_id))["succeeded"] + p["failed"] == n_jobs,
                900,
                "every job of the sweep finished",
                compose,
            )
        before = _snapshot(api, sweep_id)
        jobs = before["jobs"].values()
        assert [j for j in jobs if j["status"] != "succeeded"] == [], "every job succeeds"
        assert all(before["traces"][j["id"]] for j in jobs), "every job has its trace"
        assert any(j["solver"] == "sklearn.lbfgs" for j in jobs)
        hosts = {j["worker_host"] for j in jobs}
        assert len(hosts) >= 2, f"the scaled workers shared the sweep: {hosts}"
        ps = compose("ps")
        workers = compose("ps", "-q", "worker").split()
        states = docker("inspect", "--format", "{{.State.Status}}", *workers).stdout.split()
        assert states == ["running"] * WORKERS, ps
        with clock("pg_dump through compose (README's backup)"):
            dump = compose("exec", "-T", "postgres", "pg_dump", "-U", "faceoff", "-d", "faceoff")
        assert "COPY public.trace_points" in dump and "COPY public.jobs" in dump
        uploads = compose("exec", "-T", "api", "ls", "/var/lib/faceoff/uploads").split()
        assert f"{uploaded.json()['sha256']}.svm" in uploads, uploads

        with clock("down"):
            compose("down")
        with clock("up -d again"):
            compose("up", "-d", "--no-build")
        with clock("healthy again"):
            _wait(_live_workers(api, 1), 600, "a healthy API after down and up", compose)
        with clock("every dataset, job and trace point read back"):
            after = _snapshot(api, sweep_id)
        assert after["datasets"] == before["datasets"]
        assert after["jobs"] == before["jobs"]
        assert after["traces"] == before["traces"]
        assert compose("exec", "-T", "api", "ls", "/var/lib/faceoff/uploads").split() == uploads

        with clock("down -v"):
            compose("down", "-v")
        assert _project_volumes(compose.project) == [], "down -v removes the named volumes"


def _project_volumes(project: str) -> list[str]:
    label = f"com.docker.compose.project={project}"
    return docker("volume", "ls", "-q", "--filter", f"label={label}").stdout.split()


def _down_for_good(compose: Compose) -> None:
    """Whatever happened, nothing of the project is left behind."""
    subprocess.run(compose.argv("down", "-v"), capture_output=True, env=compose.env, timeout=300)
