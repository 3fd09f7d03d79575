"""Issue 33's acceptance in CI: the history generator at 2,000 jobs, then every listing and
page of the issue, with the rows each of their queries touches counted (EXPLAIN ANALYZE of
every SELECT they make), not timed: no page reads a trace point except the compare page
and the trace endpoint, which read only the points of the jobs they draw; no sequential
scan of trace_points anywhere, in the pages' queries or in the hot queries of the report."""

from __future__ import annotations

import psycopg
import pytest

from bench import run_history as history
from faceoff.core.migrate import upgrade
from tests.backends import PG_HOST, PG_PORT, create_pg_database, drop_pg_database, require

JOBS = 2000
POINTS = (40, 80)  # a job: few points keep the test fast; the counts cannot depend on them
DRAWING = {"compare page, 60 curves", "GET /jobs/{id}/trace?max_points=500"}


@pytest.fixture(scope="module")
def filled():
    require("PostgreSQL", PG_HOST, PG_PORT)
    url = create_pg_database()
    try:
        upgrade(url)
        history.generate(url, JOBS, POINTS, worker_jobs=20)
        with psycopg.connect(history.dsn(url), autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
        yield url
    finally:
        drop_pg_database(url)


def test_the_generator_fills_a_history(filled):
    url = filled
    with psycopg.connect(history.dsn(url)) as conn:
        jobs, statuses, sweeps, teams = conn.execute(
            "SELECT count(*), count(DISTINCT status), count(DISTINCT sweep_id), "
            "count(DISTINCT team_id) FROM jobs"
        ).fetchone()
        points, summarized, traced = conn.execute(
            "SELECT (SELECT count(*) FROM trace_points), (SELECT count(*) FROM job_summaries), "
            "(SELECT count(*) FROM jobs WHERE n_points > 0)"
        ).fetchone()
        big = conn.execute("SELECT count(*) FROM jobs WHERE sweep_id = 1").fetchone()[0]
    assert jobs == JOBS and statuses == 5 and sweeps == 1 and teams == 1
    assert big == JOBS  # sweep 1 holds the first 2,000 jobs
    assert JOBS * 0.8 * POINTS[0] / 2 < points < JOBS * POINTS[1]
    assert summarized == traced > 0.95 * JOBS


def test_no_page_reads_trace_points_but_the_ones_it_draws(filled):
    url = filled
    with history.clients(url) as (get, dashboard):
        requests = history.calls(url, get, dashboard, JOBS)
        seen = {name: history.touched(url, call) for name, (call, _) in requests.items()}
    with psycopg.connect(history.dsn(url)) as conn:
        drawn = conn.execute(
            "SELECT sum(n_points) FROM (SELECT n_points FROM jobs WHERE sweep_id = 1 "
            "AND n_points > 0 ORDER BY id DESC LIMIT 60) AS drawn"
        ).fetchone()[0]
        longest = conn.execute("SELECT max(n_points) FROM jobs").fetchone()[0]
    assert set(seen) >= set(history.TARGETS) - {"GET /jobs (worst filter/page)"}
    for name, found in seen.items():
        assert found.queries > 0, name
        assert "trace_points" not in found.seq_scans, (name, found)
        trace_rows = found.rows.get("trace_points", 0)
        if name not in DRAWING:
            assert trace_rows == 0, (name, found)
    assert 0 < seen["compare page, 60 curves"].rows["trace_points"] <= drawn
    assert 0 < seen["GET /jobs/{id}/trace?max_points=500"].rows["trace_points"] <= longest


def test_the_hot_queries_use_indexes(filled):
    url = filled
    for name, scans, rows, _ in history.explain(url):
        assert "Seq Scan trace_points" not in scans, (name, scans)
        if "trace" in name or "compare" in name:
            assert "trace_points_pkey" in scans, (name, scans)
        assert int(rows) < 50_000, (name, rows)
