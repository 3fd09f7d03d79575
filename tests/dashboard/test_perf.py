"""A page with 50 runs × 1000 points answers in about a second (downsampled by core)."""

from __future__ import annotations

import time

from faceoff.dashboard import rows
from tests.dashboard import factories
from tests.dashboard.test_pages import compare, values


def test_compare_50_runs_of_1000_points(client, database_url):
    settings = [(s, p, r) for s, p, r in factories.SETTINGS] * 2
    sweep_id, ids = factories.add_sweep(
        database_url, settings=settings, seeds=tuple(range(6)), n_points=1000
    )
    sweep_id_2, ids_2 = factories.add_sweep(
        database_url, settings=factories.SETTINGS[:2], n_points=1000, dataset_name="second"
    )
    job_ids = ",".join(map(str, ids + ids_2))
    assert len(ids + ids_2) == 50
    client.use(database_url)
    compare(client, jobs=job_ids)  # warm the engine's connection pool
    start = time.perf_counter()
    out = compare(client, jobs=job_ids, x="epoch", y="subopt_rel", logx="log", logy="log")
    elapsed = time.perf_counter() - start
    print(f"compare callback, 50 jobs × 1000 points: {elapsed:.3f} s")
    traces = out["compare-graph"]["figure"]["data"]
    shown = sum(len(values(t["x"])) for t in traces if t.get("showlegend", True))
    assert shown <= 50 * rows.MAX_POINTS  # downsampled by core before it left the server
    assert elapsed < 3.0  # about a second on a quiet machine; the bound allows for noise
