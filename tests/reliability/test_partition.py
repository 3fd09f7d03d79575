"""A silent PostgreSQL partition (bytes dropped, connections neither refused nor closed):
the API answers 503 within seconds instead of hanging, a running job's worker buffers its
trace and the job completes once the partition heals. Real uvicorn, worker, PostgreSQL and
Redis processes; the partition is a blackholed TCP proxy in front of PostgreSQL.
"""

from __future__ import annotations

import time

import httpx
import pytest
from sqlalchemy.engine import make_url

from faceoff.core.settings import Settings
from tests.backends import PG_HOST, PG_PORT
from tests.reliability.proxy import tcp_proxy
from tests.reliability.test_dispatch import api_process
from tests.reliability.test_faults import (
    add_datasets,
    check_ran_once,
    slow_job,
    wait_done,
    wait_running,
)
from tests.service.workers import running_worker

pytestmark = pytest.mark.slow

# a pooled connection's ping gives up after DB_NETWORK_TIMEOUT_SECONDS (3), the reconnection
# after DB_CONNECT_TIMEOUT_SECONDS (5): the defaults answer within 8 s; 2 s of slack
ANSWER_BOUND = 10.0


def test_a_silent_partition_answers_503_within_seconds_and_loses_nothing(
    postgres_url, redis_url, settings_for, tmp_path
):
    defaults = Settings()
    bound = defaults.DB_NETWORK_TIMEOUT_SECONDS + defaults.DB_CONNECT_TIMEOUT_SECONDS
    assert bound + 2 <= ANSWER_BOUND
    with tcp_proxy(PG_HOST, PG_PORT) as proxy:
        proxied = make_url(postgres_url).set(host="127.0.0.1", port=proxy.port)
        settings = settings_for(proxied.render_as_string(hide_password=False), redis_url)
        slow, _ = add_datasets(postgres_url)
        with (
            running_worker(settings) as worker,
            api_process(settings, tmp_path / "faceoff.api.log") as (_, base),
            httpx.Client(base_url=base, timeout=60) as client,
        ):
            # long enough to be still solving, and writing points, when the link goes silent
            response = client.post("/jobs", json=slow_job(slow, 10))
            assert response.status_code == 201, response.text
            job_id = response.json()["id"]
            wait_running(postgres_url, job_id, worker, min_points=5)
            assert client.get(f"/jobs/{job_id}").status_code == 200
            time.sleep(1)  # its session is closed after the response: its connection is pooled

            proxy.blackhole()
            for method, path in (("GET", f"/jobs/{job_id}"), ("GET", "/jobs")):
                started = time.monotonic()
                response = client.request(method, path)
                elapsed = time.monotonic() - started
                assert response.status_code == 503, response.text
                assert response.json()["detail"].startswith("database unavailable: ")
                assert elapsed <= ANSWER_BOUND, f"{method} {path} answered after {elapsed:.1f} s"
            proxy.up()

            (job,) = wait_done(postgres_url, [job_id], worker, timeout=90)
            check_ran_once(postgres_url, job)
            assert job.stop_reason == "max_seconds"
            assert "kept until the database is back" in worker.log()  # buffered, then written
            assert client.get(f"/jobs/{job_id}").status_code == 200
