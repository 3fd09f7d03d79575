"""A bounded load test (bench/run_load.py, shortened): 20 clients submitting and polling
tiny jobs for 10 s against the docker-compose commands run natively on PostgreSQL and
Redis. No request may fail and no job may be lost; latency is printed, never asserted."""

from __future__ import annotations

import pytest

from bench.run_load import run_load, summary
from bench.service_stack import running_stack

CLIENTS = 20
SECONDS = 10.0


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_concurrent_clients_no_errors_no_lost_jobs(postgres_url, redis_url, tmp_path):
    with running_stack(
        postgres_url, tmp_path / "home", api_workers=2, broker_url=redis_url
    ) as stack:
        result = run_load(stack, CLIENTS, SECONDS)
    print(summary(result))
    for row in result.endpoint_rows():
        print(" | ".join(row))
    jobs = result.jobs
    assert not result.errors, [(s.endpoint, s.error) for s in result.errors[:20]]
    assert jobs.submitted >= CLIENTS
    assert not jobs.lost, f"submitted jobs missing from the database: {jobs.lost[:20]}"
    assert not jobs.unfinished, f"jobs not terminal after the drain: {jobs.unfinished[:20]}"
    assert jobs.statuses == {"succeeded": jobs.submitted}
    assert jobs.unknown == 0 and jobs.queue_left == 0
