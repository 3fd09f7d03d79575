"""The migrations are the schema: on SQLite and PostgreSQL they build exactly the models."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect, text

from faceoff.core.db import make_engine
from faceoff.core.migrate import upgrade
from faceoff.core.models import Base
from tests.backends import PG_HOST, PG_PORT, create_pg_database, drop_pg_database, require


def test_migrations_match_models(database_url):
    engine = make_engine(database_url)
    with engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        tables = set(inspect(conn).get_table_names())
    engine.dispose()
    assert diff == []
    assert set(Base.metadata.tables) <= tables


def test_upgrade_reaches_head_and_is_idempotent(sqlite_url):
    """The fixture's database is at the newest revision; upgrading again changes nothing."""
    from alembic.script import ScriptDirectory

    from faceoff.core.migrate import alembic_config

    head = ScriptDirectory.from_config(alembic_config(sqlite_url)).get_current_head()
    engine = make_engine(sqlite_url)

    def state() -> tuple[str | None, dict[str, list[str]]]:
        with engine.connect() as conn:
            revision = MigrationContext.configure(conn).get_current_revision()
            schema = inspect(conn)
            columns = {
                t: [c["name"] for c in schema.get_columns(t)] for t in schema.get_table_names()
            }
        return revision, columns

    before = state()
    upgrade(sqlite_url)
    assert before[0] == head and state() == before
    engine.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def at_0005(request, tmp_path) -> Iterator[str]:
    """A database migrated to revision 0005 only, on each backend."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'old.db'}"
        upgrade(url, "0005")
        yield url
        return
    require("PostgreSQL", PG_HOST, PG_PORT)
    url = create_pg_database()
    try:
        upgrade(url, "0005")
        yield url
    finally:
        drop_pg_database(url)


def test_0006_records_trace_modes_of_earlier_runs_and_downgrades(at_0005):
    """Jobs that ran before 0006 get their solver's trace mode, queued ones none, and no
    job has a wall time; downgrading drops both columns and keeps jobs and traces."""
    from alembic import command

    from faceoff.core.migrate import alembic_config

    engine = make_engine(at_0005)
    job = (
        "INSERT INTO jobs (id, dataset_id, spec, spec_hash, objective_hash, solver, loss, "
        "status, cancel_requested, attempts, created_at, n_points) VALUES (:id, 1, '{}', 'h', "
        "'o', :solver, 'logistic', :status, false, 1, :now, :n_points)"
    )
    now = datetime.now(UTC)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO datasets (id, name, source, created_at) VALUES (1, 'bc', '{}', :now)"
            ),
            {"now": now},
        )
        for id_, solver, status, n_points in (
            (1, "sklearn.liblinear", "succeeded", 3),
            (2, "dual_cd", "succeeded", 5),
            (3, "lightning.sdca", "running", 2),
            (4, "sklearn.lbfgs", "queued", 0),
            (5, "acme.gone", "succeeded", 1),  # a plug-in no longer installed
        ):
            values = {"id": id_, "solver": solver, "status": status, "n_points": n_points}
            conn.execute(text(job), {**values, "now": now})
        conn.execute(
            text(
                "INSERT INTO trace_points (job_id, seq, iteration, epoch, time_s, primal, dual, "
                "gap, nnz_x, extras) VALUES (1, 0, 1, 1.0, 0.01, 1.0, 0.9, 0.1, 3, '{}')"
            )
        )
    engine.dispose()

    upgrade(at_0005)
    engine = make_engine(at_0005)
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT id, trace_mode, wall_s FROM jobs ORDER BY id")).all()
    assert [tuple(r) for r in rows] == [
        (1, "refit", None),
        (2, "native", None),
        (3, "callback", None),
        (4, None, None),
        (5, None, None),
    ]
    engine.dispose()

    command.downgrade(alembic_config(at_0005), "0005")
    engine = make_engine(at_0005)
    with engine.connect() as conn:
        columns = {c["name"] for c in inspect(conn).get_columns("jobs")}
        kept = conn.execute(text("SELECT count(*) FROM trace_points")).scalar_one()
        n_jobs = conn.execute(text("SELECT count(*) FROM jobs")).scalar_one()
    engine.dispose()
    assert not {"trace_mode", "wall_s"} & columns and "dispatched_at" in columns
    assert (kept, n_jobs) == (1, 5)


def test_0007_adds_the_machine_columns_and_downgrades(at_0005):
    """Jobs from before 0007 have no machine record; downgrading to 0006 drops its columns
    and keeps the jobs."""
    from alembic import command

    from faceoff.core.migrate import alembic_config

    upgrade(at_0005, "0006")
    engine = make_engine(at_0005)
    now = datetime.now(UTC)
    with engine.begin() as conn:
        conn.execute(
            text("INSERT INTO datasets (id, name, source, created_at) VALUES (1, 'bc', '{}', :t)"),
            {"t": now},
        )
        conn.execute(
            text(
                "INSERT INTO jobs (id, dataset_id, spec, spec_hash, objective_hash, solver, "
                "loss, status, cancel_requested, attempts, created_at, n_points) VALUES (1, 1, "
                "'{}', 'h', 'o', 'dual_cd', 'logistic', 'succeeded', false, 1, :t, 3)"
            ),
            {"t": now},
        )
    engine.dispose()
    upgrade(at_0005)
    added = {"machine", "concurrency", "concurrency_max", "load_start", "load_end", "pinned_host"}
    engine = make_engine(at_0005)
    with engine.connect() as conn:
        columns = ", ".join(sorted(added))
        row = conn.execute(text(f"SELECT {columns} FROM jobs")).one()
    engine.dispose()
    assert tuple(row) == (None,) * len(added)
    command.downgrade(alembic_config(at_0005), "0006")
    engine = make_engine(at_0005)
    with engine.connect() as conn:
        columns_left = {c["name"] for c in inspect(conn).get_columns("jobs")}
        n_jobs = conn.execute(text("SELECT count(*) FROM jobs")).scalar_one()
    engine.dispose()
    assert not added & columns_left and "wall_s" in columns_left and n_jobs == 1


def test_0008_adds_dataset_labels_and_downgrades(at_0005):
    """Datasets from before 0008 have no labels record; one can be written as JSON and read
    back; downgrading to 0007 drops the column and keeps the datasets."""
    from alembic import command

    from faceoff.core.migrate import alembic_config

    upgrade(at_0005, "0007")
    engine = make_engine(at_0005)
    with engine.begin() as conn:
        conn.execute(
            text("INSERT INTO datasets (id, name, source, created_at) VALUES (1, 'bc', '{}', :t)"),
            {"t": datetime.now(UTC)},
        )
    engine.dispose()
    upgrade(at_0005)
    engine = make_engine(at_0005)
    labels = '{"kind": "classes", "n_classes": 2, "counts": {"-1": 212, "1": 357}}'
    with engine.begin() as conn:
        assert conn.execute(text("SELECT labels FROM datasets")).scalar_one() is None
        conn.execute(text("UPDATE datasets SET labels = :labels"), {"labels": labels})
        stored = conn.execute(text("SELECT labels FROM datasets")).scalar_one()
    engine.dispose()
    assert (json.loads(stored) if isinstance(stored, str) else stored) == json.loads(labels)
    command.downgrade(alembic_config(at_0005), "0007")
    engine = make_engine(at_0005)
    with engine.connect() as conn:
        columns = {c["name"] for c in inspect(conn).get_columns("datasets")}
        names = conn.execute(text("SELECT name FROM datasets")).scalars().all()
    engine.dispose()
    assert "labels" not in columns and "stats" in columns and names == ["bc"]


def test_0009_makes_dataset_names_per_team_and_keeps_every_row(at_0005):
    """Datasets (their labels too), the jobs on them and their trace points survive 0009
    (SQLite rebuilds the table); afterwards two teams may hold one name, a team or the shared
    datasets may not hold it twice; downgrading restores the single unique name."""
    from alembic import command
    from sqlalchemy.exc import IntegrityError

    from faceoff.core.migrate import alembic_config

    upgrade(at_0005, "0008")
    engine = make_engine(at_0005)
    now = datetime.now(UTC)
    dataset = (
        "INSERT INTO datasets (name, source, created_at, team_id, labels) "
        "VALUES (:n, '{}', :t, :team, '{\"kind\": \"targets\"}')"
    )
    with engine.begin() as conn:
        for team in ("alpha", "beta"):
            conn.execute(
                text("INSERT INTO teams (name, created_at) VALUES (:n, :t)"), {"n": team, "t": now}
            )
        conn.execute(text(dataset), {"n": "shared", "t": now, "team": None})
        conn.execute(text(dataset), {"n": "mine", "t": now, "team": 1})
        conn.execute(
            text(
                "INSERT INTO jobs (id, dataset_id, spec, spec_hash, objective_hash, solver, "
                "loss, status, cancel_requested, attempts, created_at, n_points) VALUES (1, 2, "
                "'{}', 'h', 'o', 'dual_cd', 'logistic', 'succeeded', false, 1, :t, 1)"
            ),
            {"t": now},
        )
        conn.execute(
            text(
                "INSERT INTO trace_points (job_id, seq, iteration, epoch, time_s, primal, dual, "
                "gap, nnz_x, extras) VALUES (1, 0, 1, 1.0, 0.01, 1.0, 0.9, 0.1, 3, '{}')"
            )
        )
    engine.dispose()
    upgrade(at_0005)
    engine = make_engine(at_0005)
    with engine.begin() as conn:
        rows = conn.execute(text("SELECT id, name, team_id FROM datasets ORDER BY id")).all()
        assert [tuple(r) for r in rows] == [(1, "shared", None), (2, "mine", 1)]
        kept = conn.execute(text("SELECT labels FROM datasets WHERE id = 1")).scalar_one()
        assert (json.loads(kept) if isinstance(kept, str) else kept) == {"kind": "targets"}
        assert conn.execute(text("SELECT dataset_id FROM jobs")).scalar_one() == 2
        assert conn.execute(text("SELECT count(*) FROM trace_points")).scalar_one() == 1
        conn.execute(text(dataset), {"n": "mine", "t": now, "team": 2})  # beta's own "mine"
    for name, team in (("mine", 1), ("shared", None)):
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(text(dataset), {"n": name, "t": now, "team": team})
    with engine.begin() as conn:
        conn.execute(text("DELETE FROM datasets WHERE team_id = 2"))
    engine.dispose()
    command.downgrade(alembic_config(at_0005), "0008")
    engine = make_engine(at_0005)
    with pytest.raises(IntegrityError), engine.begin() as conn:
        conn.execute(text(dataset), {"n": "mine", "t": now, "team": 2})
    with engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM trace_points")).scalar_one() == 1
    engine.dispose()


def test_0010_summarizes_the_traces_already_stored(at_0005):
    """0010 back-fills the trace summaries of existing jobs: what core.summaries would have
    written, against the P* of each job's objective."""
    from faceoff.core import summaries

    upgrade(at_0005, "0009")
    engine = make_engine(at_0005)
    now = datetime.now(UTC)
    primal = [1.0, 0.5, 0.30001, 0.3000001, 0.3]
    gap = [1.0, 0.2, 1e-4, 1e-7, 1e-11]
    with engine.begin() as conn:
        conn.execute(
            text("INSERT INTO datasets (name, source, created_at) VALUES ('d', '{}', :t)"),
            {"t": now},
        )
        for job_id, n in ((1, 5), (2, 0), (3, 3)):
            conn.execute(
                text(
                    "INSERT INTO jobs (id, dataset_id, spec, spec_hash, objective_hash, solver, "
                    "loss, status, cancel_requested, attempts, created_at, n_points) VALUES "
                    "(:id, 1, '{}', 'h', :o, 'dual_cd', 'logistic', 'succeeded', false, 1, :t, :n)"
                ),
                {"id": job_id, "o": "with" if job_id == 1 else "without", "t": now, "n": n},
            )
            for seq in range(n):
                conn.execute(
                    text(
                        "INSERT INTO trace_points (job_id, seq, iteration, epoch, time_s, "
                        "primal, dual, gap, nnz_x, extras) VALUES (:j, :s, :s, :e, :ts, :p, 0, "
                        ":g, 1, '{}')"
                    ),
                    {
                        "j": job_id,
                        "s": seq,
                        "e": seq + 1.0,
                        "ts": 0.1 * seq,
                        "p": primal[seq],
                        "g": gap[seq],
                    },
                )
        conn.execute(
            text(
                'INSERT INTO "references" (objective_hash, objective, primal, gap, created_at) '
                "VALUES ('with', '{}', 0.3, 1e-12, :t)"
            ),
            {"t": now},
        )
    engine.dispose()
    upgrade(at_0005)
    engine = make_engine(at_0005)
    with engine.connect() as conn:
        covered = conn.execute(
            text("SELECT job_id, n_points, p_star FROM job_summaries ORDER BY job_id")
        ).all()
        reach = conn.execute(
            text("SELECT job_id, criterion, k, seq, iteration, epoch, time_s FROM job_reach")
        ).all()
    engine.dispose()
    assert [tuple(r) for r in covered] == [(1, 5, 0.3), (3, 3, None)]  # none for no points
    want = []
    for job_id, n, p_star in ((1, 5, 0.3), (3, 3, None)):
        trace = {
            "seq": list(range(n)),
            "iteration": list(range(n)),
            "epoch": [s + 1.0 for s in range(n)],
            "time_s": [0.1 * s for s in range(n)],
            "primal": primal[:n],
            "gap": gap[:n],
        }
        for row in summaries.reaching(trace, p_star, ("gap_rel", "subopt_rel")):
            want.append((job_id, *row.values()))
    assert sorted(tuple(r) for r in reach) == sorted(want)
    assert {r[1] for r in reach} == {"gap_rel", "subopt_rel"}


def test_0011_copies_what_auto_chose_onto_the_jobs_and_downgrades(at_0005):
    """0011 back-fills ``jobs.auto`` from the first trace point's extras (issue 34): the
    choices of a job that ran at auto, NULL for one that chose nothing or has no point;
    downgrading to 0010 drops the column and keeps the jobs and their traces."""
    from alembic import command

    from faceoff.core.migrate import alembic_config

    upgrade(at_0005, "0010")
    engine = make_engine(at_0005)
    now = datetime.now(UTC)
    chose = {"sampling": "permutation", "accelerate": "none", "shrinking": "on"}
    extras = {1: {"nnz_y": 3, "auto": chose}, 2: {"nnz_y": 3}}  # job 3: no point
    with engine.begin() as conn:
        conn.execute(
            text("INSERT INTO datasets (name, source, created_at) VALUES ('d', '{}', :t)"),
            {"t": now},
        )
        for job_id in (1, 2, 3):
            conn.execute(
                text(
                    "INSERT INTO jobs (id, dataset_id, spec, spec_hash, objective_hash, solver, "
                    "loss, status, cancel_requested, attempts, created_at, n_points) VALUES "
                    "(:id, 1, '{}', 'h', 'o', 'dual_cd', 'smooth_hinge', 'succeeded', false, 1, "
                    ":t, :n)"
                ),
                {"id": job_id, "t": now, "n": 2 if job_id in extras else 0},
            )
        for job_id, first in extras.items():
            for seq in range(2):
                conn.execute(
                    text(
                        "INSERT INTO trace_points (job_id, seq, iteration, epoch, time_s, "
                        "primal, dual, gap, nnz_x, extras) VALUES (:j, :s, :s, 1.0, 0.1, 1.0, "
                        "0.9, 0.1, 1, :x)"
                    ),
                    {"j": job_id, "s": seq, "x": json.dumps(first if seq == 0 else {})},
                )
    engine.dispose()
    upgrade(at_0005)
    engine = make_engine(at_0005)
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT id, auto FROM jobs ORDER BY id")).all()
    engine.dispose()
    stored = [(i, json.loads(a) if isinstance(a, str) else a) for i, a in rows]
    assert stored == [(1, chose), (2, None), (3, None)]
    command.downgrade(alembic_config(at_0005), "0010")
    engine = make_engine(at_0005)
    with engine.connect() as conn:
        columns = {c["name"] for c in inspect(conn).get_columns("jobs")}
        kept = conn.execute(text("SELECT count(*) FROM trace_points")).scalar_one()
    engine.dispose()
    assert "auto" not in columns and "wall_s" in columns and kept == 4
