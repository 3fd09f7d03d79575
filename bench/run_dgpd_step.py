"""DGPD Algorithm 1's dual step size (issue 14): epochs and seconds to a certified gap.

``dgpd`` ``variant=basic`` with its default ``step=adaptive`` (m × eq. (16), m by step
doubling with backtracking), ``step=theorem`` (Theorem 4.2's η, eq. (16)) and a fixed
η = 1, until the duality gap certifies 1e-9·max(1, |P|) or the cap (5000 epochs, 30 s).
Problems: the issue's case (standardized breast_cancer, smoothed hinge, l2 = 1e-3), a1a
(sparse LIBSVM, smoothed hinge, l2 = 1e-3), a sparse synthetic logistic with l1 + l2 and the
tests' sparse synthetic problem (800 × 500, density 0.02, smoothed hinge, l1 + l2). Every
rule runs ``--repeats`` times, interleaved, after a warm-up; the table shows the median
seconds and the ratio to the adaptive step's median (epochs are deterministic).

    .venv/bin/python -m bench.run_dgpd_step            # bench/results/dgpd_step.md
    .venv/bin/python -m bench.run_dgpd_step --repeats 1
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable

import numpy as np

from bench.common import Log, environment, md_table, mirror_dir, write_results
from faceoff.core.analysis import relative_gap
from faceoff.solvers.numba_cache import configure_numba_cache

RULES = {"adaptive": {}, "theorem": {"step": "theorem"}, "eta=1": {"eta": 1.0}}
TOL, MAX_EPOCHS, MAX_SECONDS = 1e-9, 5000.0, 30.0


def problems() -> dict[str, Callable]:
    from sklearn.datasets import load_breast_cancer

    from faceoff.data.svmlight import read_svmlight
    from faceoff.data.synthetic import classification
    from faceoff.solvers.problem import Data, build_problem

    def breast_cancer():
        A, b = load_breast_cancer(return_X_y=True)
        A = (A - A.mean(axis=0)) / A.std(axis=0)
        return build_problem(Data(A), np.where(b == 1, 1.0, -1.0), "smooth_hinge", 1.0, 0, 1e-3)

    def a1a():
        A, b = read_svmlight(mirror_dir() / "a1a.bz2", n_features=123)
        return build_problem(Data(A), b, "smooth_hinge", 1.0, 0.0, 1e-3)

    def synthetic_logistic():
        A, b = classification(n_samples=500, n_features=150, density=0.05, seed=11)
        return build_problem(Data(A), b, "logistic", 1.0, 1e-3, 1e-3)

    def synthetic_sparse():
        A, b = classification(n_samples=800, n_features=500, density=0.02, seed=2)
        return build_problem(Data(A), b, "smooth_hinge", 1.0, 1e-3, 1e-3)

    return {
        "breast_cancer, smoothed hinge, l2 1e-3 (dense 569 × 30)": breast_cancer,
        "a1a, smoothed hinge, l2 1e-3 (sparse 1605 × 123)": a1a,
        "synthetic logistic, l1 = l2 = 1e-3 (sparse 500 × 150)": synthetic_logistic,
        "synthetic smoothed hinge, l1 = l2 = 1e-3 (sparse 800 × 500)": synthetic_sparse,
    }


def run(problem, params: dict, max_epochs: float = MAX_EPOCHS):
    from faceoff.solvers.run import solve
    from faceoff.solvers.trace import StopRules

    stop = StopRules(max_epochs=max_epochs, max_seconds=MAX_SECONDS, tol=TOL)
    return solve(problem, "dgpd", {"variant": "basic", **params}, stop, seed=0)


def main() -> None:
    configure_numba_cache()  # before any kernel is imported
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    log = Log()
    env = environment()
    rows = []
    for name, make in problems().items():
        problem = make()
        for params in RULES.values():  # warm-up: compile, load the caches
            run(problem, params, max_epochs=5.0)
        seconds: dict[str, list[float]] = {rule: [] for rule in RULES}
        finals = {}
        for _ in range(args.repeats):
            for rule, params in RULES.items():
                result = run(problem, params)
                seconds[rule].append(result.final.time_s)
                finals[rule] = result
                log(f"{name}: {rule} {result.stop_reason} epoch {result.final.epoch:.0f} "
                    f"gap {result.final.gap:.1e} {result.final.time_s:.2f} s")  # fmt: skip
        base = statistics.median(seconds["adaptive"])
        for rule in RULES:
            result, median = finals[rule], statistics.median(seconds[rule])
            done = relative_gap(result.final.gap, result.final.primal) <= TOL
            rows.append([
                name, rule, f"{result.final.epoch:.0f}" if done else f"> {result.final.epoch:.0f}",
                f"{result.final.gap:.1e}", f"{median:.2f}" if done else f"> {median:.2f}",
                ("" if done else "> ") + f"{median / base:.1f}×",
                f"{result.final.extras['eta']:.3g}",
            ])  # fmt: skip
    lines = [
        "# DGPD Algorithm 1: the dual step size",
        "",
        f"`python -m bench.run_dgpd_step --repeats {args.repeats}`: commit {env['commit']}"
        f"{' (dirty)' if env['dirty'] else ''}, {env['date']}, {env['cpu']} ({env['cores']} "
        f"cores), load average {', '.join(f'{v:.2f}' for v in env['load_average'])} at the "
        "start (shared machine: compare ratios, not seconds).",
        "",
        f"Epochs and median seconds to gap ≤ {TOL:g}·max(1, |P|) (cap {MAX_EPOCHS:.0f} epochs, "
        f"{MAX_SECONDS:.0f} s); ratio = median seconds ÷ the adaptive step's; "
        '"> ": the cap came first, a lower bound; η is the last step taken.',
        "",
        *md_table(["problem", "step", "epochs", "final gap", "seconds", "ratio", "η"], rows),
    ]
    write_results("dgpd_step.md", lines)


if __name__ == "__main__":
    main()
