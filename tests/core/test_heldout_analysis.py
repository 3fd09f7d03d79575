"""core.analysis: held-out measures of a trace and the time they take to settle within δ of
their final value, against hand-computed traces (NaN, empty, no metrics); and their read
path (core.jobs.trace_columns, core.summaries.times_to_settle) on both backends."""

from __future__ import annotations

import math

import pytest

from faceoff.core import analysis, summaries
from faceoff.core.db import read_session, session_scope
from faceoff.core.jobs import trace_columns
from faceoff.core.models import SUCCEEDED, Dataset, Job, TracePoint

# test loss 1.0, 0.5, 0.3, 0.295, 0.31, 0.3 at t = 0.5, 1, ..., 3 s
LOSSES = [1.0, 0.5, 0.3, 0.295, 0.31, 0.3]
ACCURACY = [0.5, 0.8, 0.9, 0.906, 0.9, 0.9]


def held_out_trace(losses, scores, key: str = "accuracy") -> dict:
    n = len(losses)
    return {
        "seq": list(range(n)),
        "iteration": [10 * (k + 1) for k in range(n)],
        "epoch": [float(k + 1) for k in range(n)],
        "time_s": [0.5 * (k + 1) for k in range(n)],
        "test": [{"loss": a, key: b} for a, b in zip(losses, scores, strict=True)],
    }


def test_held_out_measures_read_the_test_metrics_of_each_point():
    trace = held_out_trace(LOSSES, ACCURACY)
    assert analysis.measure(trace, "test_loss", None).tolist() == LOSSES
    assert analysis.measure(trace, "test_score", None).tolist() == ACCURACY
    regression = held_out_trace(LOSSES, [0.1, 0.5, None, 0.7, 0.7, 0.7], key="r2")
    scores = analysis.measure(regression, "test_score", None)
    assert math.isnan(scores[2]) and scores[[0, 1, 3]].tolist() == [0.1, 0.5, 0.7]
    # no metrics at any point (a job without a test split): no measure, as without P*
    plain = {"time_s": [1.0, 2.0], "primal": [1.0, 0.5], "gap": [0.1, 0.0]}
    for name in analysis.HELD_OUT:
        assert analysis.measure(plain, name, None) is None
        assert analysis.measure({**plain, "test": [None, None]}, name, None) is None
        assert analysis.held_out([], name) is None


@pytest.mark.parametrize(
    ("values", "delta", "relative", "index"),
    [
        # within 1% of 0.3 (0.297 … 0.303): 0.295 at 3 and 0.31 at 4 are not; settled at 5
        (LOSSES, 1e-2, True, 5),
        # within 5% (0.285 … 0.315): from index 2 on
        (LOSSES, 5e-2, True, 2),
        # accuracy within 0.01 of 0.9 (absolute): from index 2 on; 0.005: 0.906 is out
        (ACCURACY, 1e-2, False, 2),
        (ACCURACY, 5e-3, False, 4),
        ([0.7], 1e-2, True, 0),  # one point: settled at once
        ([0.3, 0.3, 0.3], 0.0, False, 0),
        ([1.0, math.nan, 1.0], 1e-2, True, 2),  # a NaN point is not within δ
        ([1.0, 1.0, math.nan], 1e-2, True, None),  # no finite final value
        ([], 1e-2, True, None),  # empty
        ([2.0, 0.0, 0.0], 1e-2, True, 1),  # a final 0: relative δ means exactly 0
    ],
)
def test_settle_index_is_the_first_point_after_which_values_stay_within_delta(
    values, delta, relative, index
):
    assert analysis.settle_index(values, delta, relative) == index


def test_time_to_settle_of_a_hand_made_trace():
    trace = held_out_trace(LOSSES, ACCURACY)
    assert analysis.time_to_settle(trace, "test_loss", 1e-2) == 3.0
    assert analysis.time_to_settle(trace, "test_loss", 1e-2, "epoch") == 6.0
    assert analysis.time_to_settle(trace, "test_loss", 5e-2, "iteration") == 30.0
    assert analysis.time_to_settle(trace, "test_score", 1e-2) == 1.5
    diverged = held_out_trace([1.0, 0.5, None], [0.5, 0.8, 0.1])
    assert analysis.time_to_settle(diverged, "test_loss", 1e-2) is None
    assert analysis.time_to_settle({"time_s": [], "test": []}, "test_loss", 1e-2) is None
    no_metrics = {"time_s": [1.0, 2.0], "test": [None, None]}
    assert analysis.time_to_settle(no_metrics, "test_score", 1e-2) is None
    with pytest.raises(ValueError, match="unknown held-out measure 'gap'"):
        analysis.time_to_settle(trace, "gap", 1e-2)


def test_a_setting_is_ranked_by_settling_only_when_every_run_succeeded_with_metrics():
    ok = [("succeeded", True, 1.0), ("succeeded", True, 3.0), ("succeeded", True, 2.0)]
    assert analysis.settled_value(ok) == (2.0, None)
    assert analysis.settled_value([*ok, ("running", True, 0.5)]) == (None, "running")
    assert analysis.settled_value([*ok, ("queued", False, None)]) == (None, "queued")
    assert analysis.settled_value([*ok, ("succeeded", False, None)]) == (
        None,
        "no held-out metrics",
    )
    assert analysis.settled_value([("failed", True, 0.1)]) == (None, "failed")
    assert analysis.settled_value([("succeeded", True, None)]) == (None, "no final value")
    assert analysis.settled_value([]) == (None, "no held-out metrics")


def test_ranking_leaves_out_a_result_that_says_why_it_has_no_rank():
    results = [
        {"setting": "a", "objective": "o", "value": 2.0},
        {"setting": "b", "objective": "o", "value": 1.0},
        {"setting": "c", "objective": "o", "value": None, "reason": "no held-out metrics"},
        {"setting": "d", "objective": "o", "value": None, "reason": "running"},
    ]
    (ranked,) = analysis.ranking(results)
    assert ranked["ranks"] == {"b": 1, "a": 2} and ranked["winner"] == "b"
    assert ranked["unranked"] == {"c": "no held-out metrics", "d": "running"}


def _add_job(session, dataset_id: int, name: str, tests: list) -> int:
    job = Job(
        dataset_id=dataset_id,
        spec={"stop": {"max_seconds": 10}},
        spec_hash=name,
        objective_hash="objective",
        solver="lbfgs",
        loss="logistic",
        status=SUCCEEDED,
        n_points=len(tests),
    )
    session.add(job)
    session.flush()
    for seq, test in enumerate(tests):
        extras = {"traced_s": 0.1} if test is None else {"test": test, "traced_s": 0.1}
        session.add(
            TracePoint(
                job_id=job.id,
                seq=seq,
                iteration=seq,
                epoch=float(seq + 1),
                time_s=0.5 * (seq + 1),
                primal=1.0,
                dual=0.9,
                gap=0.1,
                nnz_x=3,
                extras=extras,
            )
        )
    return job.id


def test_the_held_out_metrics_are_read_through_core(database_url):
    with session_scope(database_url) as session:
        dataset = Dataset(name="d", source={"kind": "synthetic"})
        session.add(dataset)
        session.flush()
        tests = [{"loss": a, "accuracy": b} for a, b in zip(LOSSES, ACCURACY, strict=True)]
        held = _add_job(session, dataset.id, "held", tests)
        plain = _add_job(session, dataset.id, "plain", [None] * 3)
    with read_session(database_url) as session:
        found = list(session.query(Job).order_by(Job.id))
        columns = trace_columns(session, found, ("time_s", "test"))
        assert columns[held]["test"] == tests and columns[plain]["test"] == [None] * 3
        times = summaries.times_to_settle(session, found, "test_loss", 1e-2, ["time", "epoch"])
        with pytest.raises(ValueError, match="unknown trace fields"):
            trace_columns(session, found, ("extras",))
    assert times[held] == {"held_out": True, "time": 3.0, "epoch": 6.0}
    assert times[plain] == {"held_out": False, "time": None, "epoch": None}
