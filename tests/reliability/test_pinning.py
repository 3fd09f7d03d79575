"""Pinned hosts, quotas and cancelled messages on real processes: uvicorn, PostgreSQL, a Redis
server of the test's own (so every key in it can be counted), a worker serving a host of the
test's own, the dashboard and the CLI.

Round 3 found a job or sweep pinned to a host no worker serves (``host: "nohost"``) answered
201 and stayed queued forever with no reason shown; 5,300 pinned jobs queued in ~7 s with no
quota; and after they were cancelled 5,001 messages and 918 keys remained in Redis.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import httpx
import pytest
import redis

from faceoff.core.queue import job_queue
from faceoff.worker.reaper import EPOCH_KEY
from tests.dashboard.conftest import running_dashboard
from tests.reliability.brokers import redis_server
from tests.reliability.servers import TINY, api_env, running_api
from tests.reliability.test_dashboard_auth import _callback
from tests.service.workers import running_worker, wait_for

PINNED = 1000  # the pinned jobs cancelled
QUEUED_QUOTA = PINNED + 1
STOP = {"max_epochs": 5, "max_seconds": 10}
JOB = {"dataset": "tiny", "loss": "logistic", "l2": 1e-2, "solver": "dual_cd", "stop": STOP}


def pinned_sweep(host: str, seeds: int, **extra) -> dict:
    return {
        "datasets": ["tiny"],
        "losses": ["logistic"],
        "l2": [1e-2],
        "solvers": ["dual_cd"],
        "seeds": list(range(seeds)),
        "stop": STOP,
        "host": host,
        **extra,
    }


@pytest.fixture
def service(postgres_url, settings_for, tmp_path, monkeypatch):
    """(client, settings, the worker's host, Redis client): a worker serving a host of its
    own, the API with a queued-jobs quota of QUEUED_QUOTA and one open sweep."""
    host = f"live-{uuid.uuid4().hex[:8]}"
    with redis_server(tmp_path) as broker:
        settings = settings_for(postgres_url, broker.url)
        monkeypatch.setenv("FACEOFF_WORKER_HOST", host)
        quotas = {"FACEOFF_TEAM_MAX_QUEUED_JOBS": str(QUEUED_QUOTA)}
        quotas["FACEOFF_TEAM_MAX_OPEN_SWEEPS"] = "1"
        with (
            running_worker(settings) as worker,
            running_api(api_env(settings, **quotas), settings.HOME / "api.log") as api,
            httpx.Client(base_url=api.url, timeout=60) as client,
            redis.Redis.from_url(broker.url) as keys,
        ):
            made = client.post("/datasets", json={"name": "tiny", "source": TINY})
            assert made.status_code == 201, made.text
            # the reaper's first pass sends every queued job again on a broker without its
            # epoch marker (a fresh Redis): let it pass before anything is queued
            epoch = EPOCH_KEY.format(queue=settings.QUEUE)
            wait_for(lambda: keys.exists(epoch), 60, "the reaper's first pass", worker)
            yield client, settings, host, keys, worker, api


def wait_done(client: httpx.Client, job_id: int, worker) -> dict:
    deadline = time.monotonic() + 120
    while (job := client.get(f"/jobs/{job_id}").json())["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, worker.log()[-3000:]
        time.sleep(0.2)
    return job


def test_pinning_quotas_and_cancelled_messages(service, postgres_url):
    client, settings, host, keys, worker, api = service
    # a host no live worker serves: a 422 naming it and the live ones
    refused = client.post("/jobs", json={**JOB, "host": "nohost"})
    assert refused.status_code == 422, refused.text
    (error,) = refused.json()["detail"]
    assert error["loc"] == ["body", "host"]
    assert "'nohost'" in error["msg"] and f"live hosts: {host} " in error["msg"]
    sweep_refused = client.post("/sweeps", json=pinned_sweep("nohost", 2))
    assert sweep_refused.status_code == 422 and "'nohost'" in sweep_refused.text
    # a live host runs; nothing waits
    live = client.post("/jobs", json={**JOB, "host": host})
    assert live.status_code == 201 and live.json()["waiting"] is None, live.text
    assert wait_done(client, live.json()["id"], worker)["status"] == "succeeded"
    baseline = set(keys.keys("*"))

    # wait_for_host: accepted, and the job says why it waits, in the API, CLI and dashboard
    made = client.post("/jobs", json={**JOB, "host": "nohost", "wait_for_host": True})
    assert made.status_code == 201, made.text
    waiting = made.json()
    assert waiting["waiting"] == "waiting for host nohost" and waiting["status"] == "queued"
    assert client.get(f"/jobs/{waiting['id']}").json()["waiting"] == "waiting for host nohost"
    cli = subprocess.run(
        [sys.executable, "-m", "faceoff.cli.main", "status", str(waiting["id"]), "--url", api.base],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert "waiting for host nohost" in cli.stdout, cli.stdout + cli.stderr
    with running_dashboard(postgres_url) as base, httpx.Client(base_url=base, timeout=60) as dash:
        filters = ("sweep", "dataset", "solver", "loss", "status")
        inputs = [(f"runs-{f}", "value", None) for f in filters]
        outputs = [("runs-table", "data"), ("runs-interval", "disabled")]
        outputs += [("runs-summary", "children"), ("runs-share", "href")]
        table = _callback(dash, outputs, [*inputs, ("runs-interval", "n_intervals", 0)])
        rows = {row["id"]: row for row in table["runs-table"]["data"]}
    assert rows[waiting["id"]]["progress"] == "waiting for host nohost"

    # a thousand more in one sweep: then the team's queued-jobs quota is full (429)
    started = time.monotonic()
    big = pinned_sweep("nohost", PINNED, l2=[0.02], wait_for_host=True)
    swept = client.post("/sweeps", json=big)
    assert swept.status_code == 201, swept.text
    print(f"{PINNED} pinned jobs queued in {time.monotonic() - started:.1f} s")
    queue = job_queue(settings, "nohost")
    assert keys.llen(queue) == PINNED + 1
    over = client.post("/jobs", json={**JOB, "seed": 7, "host": host})
    assert over.status_code == 429, over.text
    assert over.headers["retry-after"] == "60"
    assert "FACEOFF_TEAM_MAX_QUEUED_JOBS" in over.json()["detail"]
    # a second open sweep: over the open-sweeps quota
    other = client.post("/sweeps", json=pinned_sweep(host, 1, l2=[0.5]))
    assert other.status_code == 429 and "sweeps" in other.json()["detail"], other.text

    # cancelling leaves nothing in the broker: no message, no key of the host's queue
    jobs = client.get("/jobs", params={"status": "queued", "limit": 1000}).json()["data"]
    jobs += client.get("/jobs", params={"status": "queued", "limit": 1000, "offset": 1000}).json()[
        "data"
    ]
    assert len(jobs) == PINNED + 1
    started = time.monotonic()
    for job in jobs:
        cancelled = client.post(f"/jobs/{job['id']}/cancel")
        assert cancelled.status_code == 200 and cancelled.json()["waiting"] is None
    left = set(keys.keys("*"))
    print(
        f"{len(jobs)} pinned jobs cancelled in {time.monotonic() - started:.1f} s; Redis: "
        f"{keys.llen(queue)} messages in their queue, {len(left)} keys ({len(baseline)} before "
        f"they were queued), keys of the host: {sorted(k for k in left if b'nohost' in k)}"
    )
    assert keys.llen(queue) == 0 and keys.llen(settings.QUEUE) == 0
    assert not [k for k in left if b"nohost" in k]
    assert left - baseline <= {b"_kombu.binding_deadlines"}, left - baseline
    # with the queue empty the quotas admit work again, and the worker runs it
    again = client.post("/sweeps", json=pinned_sweep(host, 1, l2=[0.5]))
    assert again.status_code == 201, again.text
