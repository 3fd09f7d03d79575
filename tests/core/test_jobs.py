"""core.jobs: listing with JobFilter, facets, and trace reads that keep the same points
whether a job's trace is read alone (the API) or with others as columns (the dashboard)."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from faceoff.core import jobs
from faceoff.core.auth import get_or_create_team
from faceoff.core.db import read_session, session_scope
from faceoff.core.errors import NotFoundError
from faceoff.core.jobs import JobFilter
from faceoff.core.models import Job, TracePoint
from tests.dashboard import factories


def _give_to_team(url: str, job_ids: list[int], team: str) -> int:
    with session_scope(url) as session:
        team_id = get_or_create_team(session, team).id
        for job_id in job_ids:
            session.get(Job, job_id).team_id = team_id
        return team_id


def test_list_jobs_filters_pages_and_keeps_teams_apart(database_url):
    sweep_id, ids = factories.add_sweep(database_url, seeds=(0, 1))
    running = factories.add_running_job(database_url, n_points=5)
    team = _give_to_team(database_url, ids[:2], "blue")
    with read_session(database_url) as session:

        def listed(where: JobFilter, team_id: int | None = None) -> list[int]:
            found, count = jobs.list_jobs(session, where, None, team_id=team_id)
            assert count == len(found)
            return [job.id for job in found]

        mine = sorted(ids[2:])
        assert listed(JobFilter()) == [running, *reversed(mine)]  # newest first
        assert listed(JobFilter(), team) == sorted(ids[:2], reverse=True)
        assert listed(JobFilter(sweep_id=sweep_id)) == mine[::-1]
        assert listed(JobFilter(dataset="synthetic-running")) == [running]
        dataset_id = session.get(Job, running).dataset_id
        assert listed(JobFilter(dataset_id=dataset_id)) == [running]
        assert listed(JobFilter(job_ids=(ids[0], ids[3], running))) == [running, ids[3]]
        assert listed(JobFilter(status="running", solver="dual_cd", loss="logistic")) == [running]
        assert listed(JobFilter(solver="primal_cd"), team) == []
        several = JobFilter(sweep_ids=(sweep_id, sweep_id + 1), dataset_ids=(dataset_id,))
        assert listed(several) == []  # the sweep's jobs are on another dataset
        both = (session.get(Job, ids[0]).dataset_id, dataset_id)
        assert listed(JobFilter(dataset_ids=both)) == [running, *reversed(mine)]
        assert listed(JobFilter(statuses=("succeeded", "failed"))) == mine[::-1]
        assert listed(JobFilter(sweep_ids=(sweep_id,), statuses=("running",))) == []
        assert listed(JobFilter(sweep_ids=(sweep_id,)), team) == sorted(ids[:2], reverse=True)
        first, count = jobs.list_jobs(session, JobFilter(), 2, 1, team_id=None)
        assert [job.id for job in first] == mine[::-1][:2] and count == len(mine) + 1
        facets = jobs.job_facets(session, team_id=None)
        assert facets == {
            "solver": ["dual_cd", "primal_cd", "spdc"],
            "loss": ["logistic"],
            "status": ["running", "succeeded"],
        }
        assert jobs.job_facets(session, team_id=team)["solver"] == ["dual_cd"]
        with pytest.raises(NotFoundError, match=f"job {ids[0]} not found"):
            jobs.get_job(session, ids[0], team_id=None)


@pytest.mark.parametrize("max_points", [None, 1, 2, 3, 17, 200, 239, 240, 1000])
def test_trace_columns_keep_the_points_of_get_trace(database_url, max_points):
    _, ids = factories.add_sweep(database_url, settings=factories.SETTINGS[:2], n_points=240)
    flat = factories.add_running_job(database_url, n_points=40)
    with session_scope(database_url) as session:  # epochs that never grow: spaced in seq
        session.execute(update(TracePoint).where(TracePoint.job_id == flat).values(epoch=1.0))
    with read_session(database_url) as session:
        found, _ = jobs.list_jobs(session, JobFilter(), None, team_id=None)
        columns = jobs.trace_columns(session, found, ("seq", "epoch", "primal"), max_points)
        for job_id in [*ids, flat]:
            alone = jobs.get_trace(session, job_id, max_points=max_points, team_id=None)
            assert columns[job_id]["seq"] == [p.seq for p in alone]
            assert columns[job_id]["epoch"] == [p.epoch for p in alone]
            assert columns[job_id]["primal"] == [p.primal for p in alone]
            if max_points is not None and max_points >= 2:
                seqs = columns[job_id]["seq"]
                assert 2 <= len(seqs) <= max_points and seqs[0] == 0
                assert seqs[-1] == session.get(Job, job_id).n_points - 1
            # both equal the whole trace thinned in memory (a long trace is read by the
            # points kept), after a seq too
            job = jobs.get_job(session, job_id, team_id=None)
            for after in (-1, 100):
                whole = jobs.trace_points(session, job, after)
                kept = [p.seq for p in jobs._thin(whole, [p.epoch for p in whole], max_points)]
                got = jobs.get_trace(session, job_id, after, max_points, team_id=None)
                assert [p.seq for p in got] == kept
                assert after == 100 or columns[job_id]["seq"] == kept


def test_trace_points_after_a_seq_and_unknown_columns(sqlite_url):
    job_id = factories.add_running_job(sqlite_url, n_points=20)
    with read_session(sqlite_url) as session:
        job = jobs.get_job(session, job_id, team_id=None)
        assert [p.seq for p in jobs.trace_points(session, job, 14)] == [15, 16, 17, 18, 19]
        assert [p.seq for p in jobs.trace_points(session, job, 4, limit=3)] == [5, 6, 7]
        assert jobs.trace_columns(session, [], max_points=10) == {}
        with pytest.raises(ValueError, match="unknown trace fields \\['extras'\\]"):
            jobs.trace_columns(session, [job], ("seq", "extras"))
