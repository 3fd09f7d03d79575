"""core.analysis: the quantities read off convergence traces, one definition each (the
relative gap of the stop rule, relative suboptimality with P* = 0, first point reaching ε,
time to ε over seeds, median bands, ranking, profiles), against hand-computed cases."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from faceoff.core import analysis
from faceoff.solvers import gap, trace


def make_trace(primal, gap=None, time_scale=0.5):
    """A trace of len(primal) points: epochs 1, 2, ..., time ``time_scale`` per epoch,
    iterations 10 per epoch."""
    n = len(primal)
    epochs = [float(k + 1) for k in range(n)]
    return {
        "seq": list(range(n)),
        "iteration": [10 * (k + 1) for k in range(n)],
        "epoch": epochs,
        "time_s": [time_scale * e for e in epochs],
        "primal": list(primal),
        "gap": list(gap if gap is not None else [0.0] * n),
    }


# ---------------------------------------------------------------- the measures


def test_the_stop_rule_and_the_analysis_share_one_relative_gap():
    assert analysis.relative_gap is gap.relative_gap is trace.relative_gap
    assert analysis.relative_gap(1e-3, -4.0) == pytest.approx(2.5e-4)  # relative for |P| ≥ 1
    assert analysis.relative_gap(1e-3, 0.25) == 1e-3  # absolute below: P near 0 inflates none
    np.testing.assert_array_equal(
        analysis.relative_gap(np.array([2.0, 2.0]), np.array([0.0, 8.0])), [2.0, 0.25]
    )
    assert math.isnan(analysis.relative_gap(1.0, math.nan))
    assert isinstance(analysis.relative_gap(1.0, 2.0), float)


def test_analysis_imports_no_numba():
    """The dashboard reads through core, which stays free of Numba (CONTRIBUTING)."""
    code = "import sys, faceoff.core.analysis; assert 'numba' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_relative_suboptimality_divides_by_the_magnitude_of_pstar():
    np.testing.assert_array_equal(analysis.relative_suboptimality([3.0, 2.0], 2.0), [0.5, 0.0])
    assert analysis.relative_suboptimality(-1.0, -2.0) == 0.5
    assert math.isnan(analysis.relative_suboptimality(math.nan, 2.0))


def test_relative_suboptimality_is_undefined_at_pstar_zero():
    """P* = 0: no scale to be relative to, NaN (never the absolute P − P*)."""
    assert math.isnan(analysis.relative_suboptimality(0.25, 0.0))
    assert np.isnan(analysis.relative_suboptimality([0.25, 0.0], 0.0)).all()
    assert analysis.suboptimality(0.25, 0.0) == 0.25  # the absolute one is defined


def test_measures_of_a_trace():
    t = make_trace([3.0, 2.5], gap=[1.5, 0.5])
    ref = {"primal": 2.0, "gap": 1e-12}
    assert analysis.measure(t, "primal", None).tolist() == [3.0, 2.5]
    assert analysis.measure(t, "gap", None).tolist() == [1.5, 0.5]
    assert analysis.measure(t, "gap_rel", None).tolist() == [0.5, 0.2]
    assert analysis.measure(t, "subopt", ref).tolist() == [1.0, 0.5]
    assert analysis.measure(t, "subopt_rel", ref).tolist() == [0.5, 0.25]
    assert analysis.measure(t, "subopt", None) is None  # no P*
    assert analysis.measure(t, "subopt_rel", None) is None
    zero = {"primal": 0.0, "gap": 0.0}
    assert analysis.measure(t, "subopt", zero).tolist() == [3.0, 2.5]
    assert analysis.measure(t, "subopt_rel", zero) is None  # P* = 0: as without a P*
    with pytest.raises(ValueError, match="unknown measure 'dual'; accepted: primal, gap"):
        analysis.measure(t, "dual", ref)


# ---------------------------------------------------------------- first point reaching ε


def test_first_reaching_returns_the_first_point_at_or_below_the_target():
    xs = [0.0, 1.0, 2.0, 3.0]
    assert analysis.first_reaching(xs, [1.0, 1e-3, 1e-7, 1e-9], 1e-6) == 2.0
    assert analysis.first_reaching(xs, [1.0, 1e-3, 1e-7, 1e-9], 1e-3) == 1.0  # ≤, not <
    assert analysis.first_reaching(xs, [1.0, 0.5, 0.4, 0.3], 1e-6) is None
    assert analysis.first_index([1.0, 1e-3, 1e-7], 1e-6) == 2


def test_nan_never_reaches_and_an_empty_trace_reaches_nothing():
    assert analysis.first_index([math.nan, 1e-9], 1e-6) == 1
    assert analysis.first_index([math.nan, math.nan], 1e-6) is None
    assert analysis.first_index([], 1e-6) is None
    assert analysis.first_reaching([], [], 1e-6) is None
    with pytest.raises(ValueError, match="2 x values for 1 values"):
        analysis.first_reaching([0.0, 1.0], [1.0], 1e-6)


def test_time_to_eps_reads_the_first_point_in_time_epochs_or_iterations():
    t = make_trace([3.0, 2.01, 2.0001, 2.0], gap=[1.0, 1e-2, 1e-4, 0.0])
    ref = {"primal": 2.0, "gap": 1e-12}
    # (P − P*)/|P*| = 0.5, 5e-3, 5e-5, 0: ε = 1e-3 first met at the third point
    assert analysis.time_to_eps(t, "subopt_rel", 1e-3, ref, "time") == 1.5
    assert analysis.time_to_eps(t, "subopt_rel", 1e-3, ref, "epoch") == 3.0
    assert analysis.time_to_eps(t, "subopt_rel", 1e-3, ref, "iteration") == 30.0
    assert analysis.time_to_eps(t, "subopt_rel", 1e-3, ref) == 1.5  # time by default
    # gap/max(1, |P|) = 1/3, 1e-2/2.01, 1e-4/2.0001, 0
    assert analysis.time_to_eps(t, "gap_rel", 1e-3, None, "epoch") == 3.0
    assert analysis.time_to_eps(t, "subopt_rel", 1e-12, ref, "epoch") == 4.0
    assert analysis.time_to_eps(t, "gap_rel", -1.0, None) is None  # never reached
    with pytest.raises(ValueError, match="accepted: subopt_rel, gap_rel"):
        analysis.time_to_eps(t, "subopt", 1e-3, ref)
    with pytest.raises(ValueError, match="accepted: time, epoch, iteration"):
        analysis.time_to_eps(t, "gap_rel", 1e-3, ref, "seconds")


def test_time_to_eps_is_undecidable_without_pstar_and_at_pstar_zero():
    t = make_trace([1.0, 1e-9], gap=[1.0, 1e-9])
    assert math.isnan(analysis.time_to_eps(t, "subopt_rel", 1e-6, None))
    assert math.isnan(analysis.time_to_eps(t, "subopt_rel", 1e-6, {"primal": 0.0, "gap": 0.0}))
    assert analysis.time_to_eps(t, "gap_rel", 1e-6, None) == 1.0  # the gap needs no P*
    # the benchmarks' reading of the same trace agrees: NaN values never reach
    rel = analysis.relative_suboptimality(t["primal"], 0.0)
    assert analysis.first_reaching(t["time_s"], rel, 1e-6) is None


def test_the_dashboard_and_the_benchmarks_read_the_same_first_point():
    rng = np.random.default_rng(3)
    for _ in range(50):
        p_star = rng.choice([-3.0, 0.5, 2.0])
        primal = p_star + abs(p_star) * 10 ** -np.cumsum(rng.uniform(0, 2, rng.integers(1, 30)))
        t = make_trace(primal, time_scale=rng.uniform(0.1, 2))
        eps = 10 ** -rng.uniform(0, 12)
        rel = analysis.relative_suboptimality(t["primal"], p_star)
        assert analysis.time_to_eps(
            t, "subopt_rel", eps, {"primal": p_star, "gap": 0.0}
        ) == analysis.first_reaching(t["time_s"], rel, eps)


def test_empty_trace():
    t = make_trace([])
    assert analysis.time_to_eps(t, "gap_rel", 1e-6, None) is None
    assert analysis.time_to_eps(t, "subopt_rel", 1e-6, {"primal": 1.0, "gap": 0.0}) is None
    assert math.isnan(analysis.time_to_eps(t, "subopt_rel", 1e-6, None))
    assert analysis.measure(t, "gap_rel", None).size == 0


# ---------------------------------------------------------------- over seeds


def test_seed_summary_counts_a_seed_that_never_reached_as_infinitely_slow():
    summary = analysis.seed_summary([1.0, 3.0, None])
    assert summary == {"value": 3.0, "q25": 2.0, "q75": None, "reached": 2, "seeds": 3}
    assert analysis.seed_summary([2.0, None, None])["value"] is None  # the median never reached
    assert analysis.seed_summary([4.0])["value"] == 4.0
    assert analysis.seed_summary([1.0, 2.0])["value"] == 1.5  # interpolated
    undecided = analysis.seed_summary([1.0, math.nan])
    assert all(math.isnan(undecided[k]) for k in ("value", "q25", "q75"))
    assert undecided["reached"] == 1 and undecided["seeds"] == 2
    assert analysis.seed_summary([]) == {
        "value": None,
        "q25": None,
        "q75": None,
        "reached": 0,
        "seeds": 0,
    }


def test_reached_quantile():
    assert analysis.reached_quantile([3.0, None, 1.0], 0.5) == 3.0
    assert analysis.reached_quantile([None, None, 1.0], 0.5) is None
    assert analysis.reached_quantile([1.0, 2.0], 0.5) == 1.5
    assert analysis.reached_quantile([1.0, None], 0.5) is None  # half way to ∞
    assert analysis.reached_quantile([1.0, 2.0, 3.0, None], 0.25) == 1.75
    assert analysis.reached_quantile([], 0.5) is None


# ---------------------------------------------------------------- median band over seeds


def test_median_band_covers_curves_of_different_lengths():
    a = (np.array([1.0, 2.0, 3.0, 4.0]), np.array([4.0, 3.0, 2.0, 1.0]))
    b = (np.array([1.0, 2.0]), np.array([6.0, 5.0]))
    x, mid, lo, hi = analysis.median_band([a, b], log_x=False, log_y=False, n_grid=7)
    assert x[0] == 1.0 and x[-1] == 4.0
    # b has finished at x = 2 and keeps its final value 5 up to the end of a
    assert mid[0] == pytest.approx(5.0) and mid[-1] == pytest.approx(3.0)
    assert lo[0] == pytest.approx(4.5) and hi[0] == pytest.approx(5.5)
    assert lo[-1] == pytest.approx(2.0) and hi[-1] == pytest.approx(4.0)
    empty = analysis.median_band([(np.array([0.0]), np.array([-1.0]))], True, True)
    assert all(len(v) == 0 for v in empty)


def test_median_band_keeps_finished_seeds_at_their_final_value():
    """The issue's case: the fastest seed ends first at 1e-10; the median of the three
    must not jump up to the other two when it ends."""
    fast = (np.array([0.01, 0.1, 0.31]), np.array([1.0, 1e-4, 1e-10]))
    mid_seed = (np.array([0.01, 0.2, 0.6]), np.array([1.0, 1e-3, 1e-8]))
    slow = (np.array([0.02, 0.5, 1.0]), np.array([1.0, 1e-2, 1e-6]))
    for log_x in (False, True):
        x, mid, lo, hi = analysis.median_band([fast, mid_seed, slow], log_x, True)
        assert x[0] == pytest.approx(0.01) and x[-1] == pytest.approx(1.0)  # longest seed
        assert np.all(np.diff(np.log10(mid)) <= 1e-12)
        assert mid[-1] == pytest.approx(1e-8) and lo[-1] < mid[-1] < hi[-1]
        # a finished seed holds its final value: at the end the band spans 1e-10 … 1e-6
        assert 1e-10 < lo[-1] < 1e-8 < hi[-1] < 1e-6


@pytest.mark.parametrize("log_x", [False, True])
@pytest.mark.parametrize("log_y", [False, True])
def test_median_and_band_are_monotone_when_the_curves_are(log_x, log_y):
    rng = np.random.default_rng(7)
    for _ in range(20):
        curves = []
        for _ in range(rng.integers(2, 7)):
            n = rng.integers(2, 40)
            x = np.cumsum(rng.uniform(0.001, 1.0, n)) + rng.uniform(0, 2)
            y = 10 ** -np.cumsum(rng.uniform(0, 1.5, n))  # never rising, in (0, 1]
            curves.append((x, y))
        x, mid, lo, hi = analysis.median_band(curves, log_x, log_y)
        assert np.all(np.diff(x) > 0)
        assert x[-1] == pytest.approx(max(c[0][-1] for c in curves))
        for values in (mid, lo, hi):
            assert np.all(np.diff(values) <= 1e-12 * np.abs(values[:-1]) + 1e-300)


def test_median_band_of_no_curves_is_empty():
    assert all(v.size == 0 for v in analysis.median_band([], log_x=True, log_y=True))


def test_a_single_curve_is_its_own_median():
    x, y = np.array([1.0, 2.0, 4.0]), np.array([1.0, 0.1, 0.01])
    gx, mid, lo, hi = analysis.median_band([(x, y)], log_x=True, log_y=True, n_grid=3)
    np.testing.assert_allclose(gx, x)
    np.testing.assert_allclose(mid, y)
    np.testing.assert_allclose(lo, y)
    np.testing.assert_allclose(hi, y)


# ---------------------------------------------------------------- ranking


def _timed(setting, value, objective="a9a"):
    return {"setting": setting, "objective": objective, "value": value}


def test_ranking_ties_share_the_lead_in_the_order_given():
    (ranked,) = analysis.ranking([_timed("b", 2.0), _timed("a", 2.0), _timed("c", 5.0)])
    assert ranked["ranks"] == {"b": 1, "a": 2, "c": 3}  # a stable order, not a coin toss
    assert ranked["winner"] == "b" and ranked["runner_up"] == "a"
    assert ranked["speedup"] == 1.0


def test_ranking_never_ranks_what_has_no_time():
    results = [_timed("a", None), _timed("b", math.nan), _timed("c", 0.0), _timed("d", 4.0)]
    (ranked,) = analysis.ranking(results)
    assert ranked["ranks"] == {"c": 1, "d": 2}
    assert ranked["unranked"] == {"a": analysis.NOT_REACHED, "b": analysis.NO_REFERENCE}
    assert ranked["speedup"] is None  # ε met at the start: no ratio to a time of 0
    (nobody,) = analysis.ranking([_timed("a", None), _timed("b", None)])
    assert nobody["winner"] is None and nobody["value"] is None and nobody["ranks"] == {}
    assert analysis.ranking([]) == []


def test_ranking_per_objective_in_the_order_met():
    results = [_timed("a", 1.0, "w8a"), _timed("a", 3.0, "a9a"), _timed("b", 1.0, "a9a")]
    assert [(r["objective"], r["winner"]) for r in analysis.ranking(results)] == [
        ("w8a", "a"),
        ("a9a", "b"),
    ]
    assert [analysis.unreached_reason(v) for v in (None, math.nan, 1.0)] == [
        "not reached",
        "no P*",
        None,
    ]


# ---------------------------------------------------------------- profiles


INF = math.inf
# problems × settings A, B, C: A fastest on p1, B on p2, nobody solves p3
T = np.array([[1.0, 2.0, INF], [4.0, 2.0, 8.0], [INF, INF, INF]])


def test_performance_profile_of_a_hand_computed_case():
    ratios = analysis.performance_ratios(T)
    assert ratios.tolist() == [[1, 2, INF], [2, 1, 4], [INF, INF, INF]]
    profile = analysis.performance_profile(T)
    assert profile.x.tolist() == [1, 2, 4]  # from 1 to the largest finite ratio
    third = 1 / 3
    np.testing.assert_allclose(
        profile.y, [[third, third, 0], [2 * third, 2 * third, 0], [2 * third, 2 * third, third]]
    )
    assert profile.counts.tolist() == [[1, 1, 0], [2, 2, 0], [2, 2, 1]]
    assert profile.n_problems == 3  # p3, solved by nobody, still counts
    assert analysis.fraction_within(ratios, 1e9).tolist() == pytest.approx([2 / 3, 2 / 3, 1 / 3])


def test_data_profile_of_a_hand_computed_case():
    profile = analysis.data_profile(T)  # t in epochs, c_p = one pass
    assert profile.x.tolist() == [1, 2, 4, 8]
    assert profile.counts.tolist() == [[1, 0, 0], [1, 2, 0], [2, 2, 0], [2, 2, 1]]
    assert profile.y[-1].tolist() == pytest.approx([2 / 3, 2 / 3, 1 / 3])


def test_ties_and_a_zero_best_time():
    # p1: a tie at 3 (both ratio 1); p2: ε met at the start by A (0/0 = 1, 5/0 = ∞)
    t = np.array([[3.0, 3.0], [0.0, 5.0]])
    assert analysis.performance_ratios(t).tolist() == [[1, 1], [1, INF]]
    profile = analysis.performance_profile(t)
    assert profile.x.tolist() == [1]
    assert profile.counts.tolist() == [[2, 1]]


def test_nobody_solves_anything_and_no_problems():
    t = np.full((2, 2), INF)
    profile = analysis.performance_profile(t)
    assert profile.x.tolist() == [1] and profile.counts.tolist() == [[0, 0]]
    assert analysis.data_profile(t).x.size == 0
    empty = analysis.performance_profile(np.zeros((0, 2)))
    assert empty.n_problems == 0 and empty.y.shape == (1, 2)


def _rho_by_definition(t: np.ndarray, tau: float) -> list[float]:
    """ρ_s(τ) written out from Dolan & Moré (2002), eqs. (1)–(2), with loops."""
    n_p, n_s = t.shape
    out = []
    for s in range(n_s):
        count = 0
        for p in range(n_p):
            best = min(t[p])
            if math.isfinite(t[p][s]) and t[p][s] / best <= tau:
                count += 1
        out.append(count / n_p)
    return out


def test_performance_profile_equals_the_definition_on_random_cases():
    rng = np.random.default_rng(7)
    for _ in range(50):
        n_p, n_s = rng.integers(1, 9), rng.integers(1, 6)
        t = rng.choice([0.5, 1.0, 1.5, 2.0, 3.7, 10.0, INF], size=(n_p, n_s))
        profile = analysis.performance_profile(t)
        finite = analysis.performance_ratios(t)
        finite = finite[np.isfinite(finite)]
        assert profile.x[0] == 1 and profile.x[-1] == max(1.0, finite.max(initial=1.0))
        for k, tau in enumerate(profile.x):
            assert profile.y[k].tolist() == pytest.approx(_rho_by_definition(t, tau))
            below = np.nextafter(tau, 0)  # a step function: constant up to the next break
            if k:
                assert _rho_by_definition(t, below) == pytest.approx(profile.y[k - 1].tolist())


def _result(setting, digest, value, solver="dual_cd"):
    return {
        "setting": setting,
        "solver": solver,
        "objective": f"label {digest}",
        "objective_hash": digest,
        "dataset": "d",
        "value": value,
        "reached": 0,
        "seeds": 1,
        "job_ids": [],
    }


def test_problems_from_time_to_eps_results():
    results = [
        _result("A", "h1", 1.0),
        _result("B", "h1", None),  # not reached
        _result("A", "h2", 2.0),  # B not run on h2
        _result("A", "h3", math.nan),  # no P*
        _result("B", "h3", math.nan),
    ]
    found = analysis.problems(results)
    assert found.settings == ["A", "B"] and found.hashes == ["h1", "h2"]
    assert found.t.tolist() == [[1, INF], [2, INF]]
    assert found.ran.tolist() == [[True, True], [True, False]]
    assert found.not_run == 1 and found.undecided == ["h3"] and found.unsolved == []
    summary = {s["setting"]: s for s in analysis.solved_summary(found)}
    assert summary["A"]["fraction_solved"] == 1 and summary["A"]["fastest"] == 2
    assert (summary["B"]["run"], summary["B"]["solved"]) == (1, 0)
