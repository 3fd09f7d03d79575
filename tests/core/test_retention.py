"""Retention (core.retention, ``faceoff prune``, ``POST /api/v1/admin/prune``): old traces
thinned to the points the dashboard draws, or dropped, with every figure's points, every
time to ε, the jobs and P* unchanged."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from sqlalchemy import func, select, update
from starlette.testclient import TestClient

from faceoff.api.main import create_app
from faceoff.cli.main import main as faceoff
from faceoff.core import analysis, summaries
from faceoff.core.db import read_session, session_scope
from faceoff.core.jobs import trace_columns
from faceoff.core.models import Job, JobSummary, Reference, TracePoint, utcnow
from faceoff.core.retention import parse_age, prune
from faceoff.core.settings import Settings, get_settings
from tests.core.test_summaries import XS, add_jobs, random_trace, run

DRAWN = 500  # dashboard.rows.MAX_POINTS


def history(url: str, old: int = 4, new: int = 2) -> tuple[list[int], list[int]]:
    """``old`` jobs finished 100 days ago and ``new`` ones just now, traces of 300 to 1500
    points, with a P* for their objectives."""
    rng = np.random.default_rng(90)
    ids = add_jobs(url, old + new)
    for job_id in ids:
        run(url, job_id, random_trace(rng, int(rng.integers(300, 1500)), 0.25), rng)
    with session_scope(url) as session:
        for key in ("objective-0", "objective-1", "objective-2"):
            session.add(Reference(objective_hash=key, objective={}, primal=0.25, gap=1e-12))
            session.flush()
            summaries.on_new_optimum(session, key)
        long_ago = utcnow() - timedelta(days=100)
        session.execute(update(Job).where(Job.id.in_(ids[:old])).values(finished_at=long_ago))
    return ids[:old], ids[old:]


def state(url: str, ids: list[int]) -> tuple[dict, dict, dict]:
    """(drawn traces, times to ε on the grid, the jobs' final values) of ``ids``."""
    with read_session(url) as session:
        jobs = list(session.scalars(select(Job).where(Job.id.in_(ids))))
        drawn = trace_columns(session, jobs, max_points=DRAWN)
        refs = {r.objective_hash: {"primal": r.primal} for r in session.scalars(select(Reference))}
        times = {
            (criterion, k): summaries.times_to_eps(session, jobs, criterion, eps, XS, refs)
            for criterion in analysis.CRITERIA
            for k, eps in summaries.EPS_GRID.items()
        }
        finals = {j.id: (j.status, j.n_points, j.primal, j.gap, j.epoch) for j in jobs}
    return drawn, times, finals


def points(url: str, ids: list[int]) -> int:
    with read_session(url) as session:
        query = select(func.count()).select_from(TracePoint).where(TracePoint.job_id.in_(ids))
        return int(session.scalar(query) or 0)


def test_thinning_keeps_what_is_drawn_and_every_time_to_eps(database_url):
    old, new = history(database_url)
    before = state(database_url, old + new)
    kept_new = points(database_url, new)
    with session_scope(database_url) as session:
        done = prune(session, utcnow() - timedelta(days=90))
    assert done.jobs == len(old) and done.points_deleted > 0 and done.mode == "thinned"
    assert points(database_url, old) == done.points_kept <= DRAWN * len(old)
    assert points(database_url, new) == kept_new  # recent traces untouched
    assert state(database_url, old + new) == before
    with session_scope(database_url) as session:  # pruning again finds nothing to thin
        assert prune(session, utcnow() - timedelta(days=90)).jobs == 0
        # a better P* cannot be applied to thinned traces: their summaries are kept as are
        session.execute(update(Reference).values(primal=0.2499))
        for key in ("objective-0", "objective-1", "objective-2"):
            summaries.on_new_optimum(session, key)
        pruned = select(JobSummary.pruned).where(JobSummary.job_id.in_(old))
        assert set(session.scalars(pruned)) == {"thinned"}


def test_dropping_keeps_the_summaries_jobs_and_references(database_url):
    old, new = history(database_url)
    _, times, finals = state(database_url, old + new)
    with session_scope(database_url) as session:
        done = prune(session, utcnow() - timedelta(days=90), keep_summaries_only=True)
    assert done.jobs == len(old) and done.mode == "dropped" and done.points_kept == 0
    assert points(database_url, old) == 0 and points(database_url, new) > 0
    drawn_after, times_after, finals_after = state(database_url, old + new)
    assert times_after == times and finals_after == finals
    assert all(drawn_after[j]["seq"] == [] for j in old)
    with read_session(database_url) as session:
        assert session.scalar(select(func.count()).select_from(Reference)) == 3


def test_ages():
    assert parse_age("90d") == timedelta(days=90) and parse_age("30m") == timedelta(minutes=30)
    for bad in ("90", "1w", "-3d", "", "9999999d"):
        with pytest.raises(ValueError, match="90d, 12h or 30m"):
            parse_age(bad)


def test_the_command_and_the_admin_route(sqlite_url, monkeypatch, capsys):
    old, _ = history(sqlite_url, old=2, new=1)
    monkeypatch.setenv("FACEOFF_DATABASE_URL", sqlite_url)
    get_settings.cache_clear()
    try:
        assert faceoff(["prune", "--older-than", "3 weeks"]) == 2
        assert "--older-than: age '3 weeks' is not accepted" in capsys.readouterr().err
        assert faceoff(["prune", "--older-than", "90d"]) == 0
        assert '"jobs": 2, ' in capsys.readouterr().out
    finally:
        get_settings.cache_clear()
    app = create_app(Settings(DATABASE_URL=sqlite_url))
    with TestClient(app, client=("127.0.0.1", 1234)) as api:
        bad = api.post("/api/v1/admin/prune", json={"older_than": "ninety days"})
        assert bad.status_code == 422 and "older_than" in bad.text and "90d" in bad.text
        dropped = api.post(
            "/api/v1/admin/prune", json={"older_than": "90d", "keep_summaries": True}
        )
        assert dropped.status_code == 200, dropped.text
        assert dropped.json()["jobs"] == 2 and dropped.json()["mode"] == "dropped"
    assert points(sqlite_url, old) == 0
    secured = Settings(DATABASE_URL=sqlite_url, AUTH_ENABLED=True, SECRET_KEY="k" * 64)
    from faceoff.core.auth import create_token

    with session_scope(sqlite_url) as session:
        _, secret = create_token(session, "not-admins")
    with TestClient(create_app(secured), client=("10.0.0.5", 1234)) as api:
        refused = api.post(
            "/api/v1/admin/prune",
            json={"older_than": "90d"},
            headers={"Authorization": f"Bearer {secret}"},
        )
    assert refused.status_code == 403 and "FACEOFF_ADMIN_TEAM" in refused.text
