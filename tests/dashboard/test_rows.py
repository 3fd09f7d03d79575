"""What the pages read through core (dashboard.rows), on each database backend."""

from __future__ import annotations

from faceoff.core import jobs
from faceoff.core.db import read_session, session_scope
from faceoff.core.jobs import JobFilter
from faceoff.core.models import QUEUED, Job
from faceoff.dashboard import rows
from tests.dashboard import factories


def test_traces_are_downsampled_by_core_keeping_first_and_last(database_url):
    settings = [(s, p, r) for s, p, r in factories.SETTINGS] * 2
    _, ids = factories.add_sweep(
        database_url, settings=settings, seeds=(0, 1, 2, 3, 4, 5), n_points=1000
    )
    assert len(ids) == 48
    short = factories.add_running_job(database_url, n_points=30)
    found, refs = rows.job_traces(database_url, JobFilter(job_ids=(*ids, short)), team_id=None)
    assert len(found) == 49 and len(refs) == 2
    assert [r["id"] for r in found] == sorted([*ids, short])  # oldest first
    for row in found:
        seq = row["trace"]["seq"]
        if row["id"] == short:
            assert seq == list(range(30))
            continue
        assert rows.MAX_POINTS // 2 < len(seq) <= rows.MAX_POINTS
        assert seq[0] == 0 and seq[-1] == 999 and seq == sorted(seq)
        assert len(row["trace"]["time_s"]) == len(seq)
    full, _ = rows.job_traces(database_url, JobFilter(job_ids=(ids[0],)), None, team_id=None)
    assert len(full[0]["trace"]["seq"]) == 1000


def test_list_jobs_filters_and_reports_progress(database_url):
    sweep_id, ids = factories.add_sweep(database_url, seeds=(0, 1))
    running = factories.add_running_job(database_url, n_points=10)
    everything, total = rows.list_jobs(database_url, JobFilter(), team_id=None)
    assert total == len(ids) + 1 and everything[0]["id"] == running  # newest first
    assert everything[0]["dataset"] == "synthetic-running"
    in_sweep, _ = rows.list_jobs(database_url, JobFilter(sweep_id=sweep_id), team_id=None)
    assert sorted(r["id"] for r in in_sweep) == sorted(ids)
    dual, _ = rows.list_jobs(
        database_url, JobFilter(sweep_id=sweep_id, solver="dual_cd"), team_id=None
    )
    assert len(dual) == 4 and {r["solver"] for r in dual} == {"dual_cd"}
    live, _ = rows.list_jobs(database_url, JobFilter(status="running"), team_id=None)
    assert [r["id"] for r in live] == [running] and rows.active(live)
    assert 0 < live[0]["progress"] < 1
    first_two, total = rows.list_jobs(database_url, JobFilter(), limit=2, team_id=None)
    assert len(first_two) == 2 and total == len(ids) + 1
    options = rows.filter_options(database_url, team_id=None)
    assert options["sweep"] == [(sweep_id, f"#{sweep_id} synthetic faceoff")]
    assert [name for _, name in options["dataset"]] == ["synthetic-300x40", "synthetic-running"]
    assert options["solver"] == ["dual_cd", "primal_cd", "spdc"]
    assert options["status"] == ["running", "succeeded"]


def test_jobs_read_as_columns_are_the_jobs_objects(database_url):
    """The dashboard reads jobs as columns (core.jobs.job_records, issue 33: building Job
    objects took most of the profiles page): the same jobs, order and count as list_jobs
    under each filter and page, each column the Job's, its dataset's name and labels."""
    sweep_id, ids = factories.add_sweep(database_url, seeds=(0, 1))
    running = factories.add_running_job(database_url, n_points=10)
    with session_scope(database_url) as session:
        waiting = session.get(Job, ids[1])
        waiting.status, waiting.waiting_for_host = QUEUED, "nohost"
    filters = [
        JobFilter(),
        JobFilter(sweep_id=sweep_id, solver="dual_cd"),
        JobFilter(dataset="synthetic-running"),
        JobFilter(dataset="synthetic-300x40", statuses=("succeeded", "queued")),
        JobFilter(job_ids=(ids[0], running), loss="logistic"),
        JobFilter(sweep_ids=(sweep_id,), dataset_ids=(999,)),
    ]
    with read_session(database_url) as session:
        for where in filters:
            everything, _ = jobs.list_jobs(session, where, None, team_id=None)
            assert bool(everything) != bool(where.dataset_ids)  # only the last finds none
            for limit, offset in ((None, 0), (2, 0), (2, 3)):
                found, count = jobs.list_jobs(session, where, limit, offset, team_id=None)
                records, total = jobs.job_records(session, where, limit, offset, team_id=None)
                assert [r.id for r in records] == [j.id for j in found] and total == count
                for record, job in zip(records, found, strict=True):
                    for column in jobs.RECORD_COLUMNS[:-2]:
                        assert getattr(record, column.key) == getattr(job, column.key)
                    assert record.dataset == job.dataset.name
                    assert record.dataset_labels == job.dataset.labels
    shown = {r["id"]: r for r in rows.list_jobs(database_url, JobFilter(), team_id=None)[0]}
    assert shown[ids[1]]["waiting"] == "waiting for host nohost"
    assert shown[running]["waiting"] is None and shown[running]["dataset"] == "synthetic-running"


def test_summaries_of_a_sweep_and_a_dataset(sqlite_url):
    sweep_id, ids = factories.add_sweep(sqlite_url, l2s=(1e-3, 1e-4))
    summary = rows.sweep_summary(sqlite_url, sweep_id, team_id=None)
    assert summary["counts"] == {"succeeded": len(ids)}
    assert rows.sweep_summary(sqlite_url, sweep_id + 1, team_id=None) is None
    with session_scope(sqlite_url) as session:
        dataset_id = session.get(Job, ids[0]).dataset_id
    info = rows.dataset_summary(sqlite_url, dataset_id, team_id=None)
    assert [o["l2"] for o in info["objectives"]] == [1e-4, 1e-3]
    assert info["source"]["kind"] == "synthetic"
    assert rows.dataset_summary(sqlite_url, dataset_id + 100, team_id=None) is None


def test_index_rows_are_a_teams_and_capped(database_url):
    from faceoff.core.auth import get_or_create_team
    from faceoff.core.models import Dataset, Sweep

    first, _ = factories.add_sweep(database_url, settings=factories.SETTINGS[:1], n_points=5)
    second, _ = factories.add_sweep(
        database_url, settings=factories.SETTINGS[:2], n_points=5, dataset_name="other"
    )
    with session_scope(database_url) as session:
        team = get_or_create_team(session, "blue").id
        session.get(Sweep, first).team_id = team
        session.query(Dataset).filter_by(name="other").one().team_id = team
    found, total = rows.sweep_index(database_url, team_id=None)
    assert [(r["id"], r["done"], r["n_jobs"]) for r in found] == [(second, 2, 2)] and total == 1
    found, total = rows.sweep_index(database_url, team_id=team)
    assert [r["id"] for r in found] == [first] and total == 1
    listed, total, unregistered = rows.dataset_index(database_url, limit=1, team_id=team)
    assert len(listed) == 1 and total == 2 and "a9a" in unregistered
    listed, total, _ = rows.dataset_index(database_url, team_id=None)
    assert [(r["name"], r["shared"]) for r in listed] == [("synthetic-300x40", True)]
