"""Cost of an SPDC epoch against the pass floor (one CSR product with A plus one with Aᵀ).

The issue's target: an SPDC epoch with lazy updates (§6) at most 3× the pass floor on news20
(rows scaled to unit norm, classes 1–10 vs 11–20). For m = 1 uniform, m = 1 weighted and
m = 8 uniform, smoothed hinge, l2 and elastic net, on news20 and a9a, the solver time per
epoch is read off the trace (time_s / epoch between the point at ``SKIP_EPOCHS`` and the
last point, so set-up and the first short chunks do not count) and divided by the floor of
:func:`bench.common.pass_floor`. Each figure is the best of ``REPEATS`` runs; the whole
table is measured ``ROUNDS`` times and a cell reports the range.

Run ``python -m bench.run_spdc_cost`` from the repository root; the table goes to stdout
and ``bench/results/spdc_cost.md``.
"""

from __future__ import annotations

import sys

from bench.common import DATASETS, environment, load, pass_floor, write_results
from faceoff.solvers.numba_cache import configure_numba_cache

L2 = 1e-4
L1 = 1e-5  # elastic net
EPOCHS = 10.0
SKIP_EPOCHS = 1.0
REPEATS = 3
ROUNDS = 3
TARGET = 3.0
CONFIGS = (
    ("m=1 uniform", {"batch_size": 1, "sampling": "uniform"}),
    ("m=1 weighted", {"batch_size": 1, "sampling": "weighted"}),
    ("m=8 uniform", {"batch_size": 8, "sampling": "uniform"}),
)


def seconds_per_epoch(problem, params: dict) -> float:
    """Solver seconds per epoch after the first SKIP_EPOCHS, best of REPEATS runs."""
    from faceoff.solvers.run import solve
    from faceoff.solvers.trace import StopRules

    best = float("inf")
    for seed in range(REPEATS):
        result = solve(problem, "spdc", params, StopRules(max_epochs=EPOCHS, tol=0.0), seed=seed)
        first = next(p for p in result.trace if p.epoch >= SKIP_EPOCHS)
        last = result.final
        best = min(best, (last.time_s - first.time_s) / (last.epoch - first.epoch))
    return best


def main() -> int:
    configure_numba_cache()  # before any kernel is imported
    from faceoff.solvers.problem import build_problem
    from faceoff.solvers.run import warmup

    env = environment()
    warmup("spdc")
    cases = []
    for name in ("news20-unit", "a9a"):
        loaded = load(DATASETS[name])
        for l1 in (0.0, L1):
            problem = build_problem(loaded.data, loaded.b, "smooth_hinge", l1=l1, l2=L2)
            cases.extend((name, problem, label, params) for label, params in CONFIGS)
    floors: dict[str, list[float]] = {}
    times: dict[tuple, list[float]] = {}
    for round_ in range(ROUNDS):  # whole table per round: a cell's spread is the noise
        for name, problem, label, params in cases:
            if name not in floors or len(floors[name]) <= round_:
                floors.setdefault(name, []).append(pass_floor(problem.data.csr_matrix))
            per_epoch = seconds_per_epoch(problem, params)
            times.setdefault((name, problem.penalty.name, label), []).append(per_epoch)
            print(
                f"round {round_ + 1}: {name} {problem.penalty.name} {label}: "
                f"{per_epoch * 1e3:.2f} ms ({per_epoch / floors[name][round_]:.2f}× the floor)",
                flush=True,
            )
    lines = [
        "# SPDC epoch cost against the pass floor",
        "",
        "Command: `python -m bench.run_spdc_cost`",
        "",
        f"- {env['date']}, commit {env['commit']}{' (uncommitted changes)' if env['dirty'] else ''}"
        f"; CPU: {env['cpu']}, {env['cores']} cores; load average at start "
        + ", ".join(f"{x:.2f}" for x in env["load_average"]),
        f"- smoothed hinge (γ = 1), l2 = {L2:g} (elastic net: l1 = {L1:g}), lazy updates, "
        f"{EPOCHS:g} epochs; seconds per epoch after epoch {SKIP_EPOCHS:g}, best of "
        f"{REPEATS} seeds; floor: one scipy CSR product with A plus one with Aᵀ, measured in "
        f"each round; the table is run {ROUNDS} times and each cell gives the rounds' range. "
        f"Target: news20 ≤ {TARGET:g}× the floor.",
        "",
        "| dataset | n × d, nnz | floor | penalty | sampling | s / epoch | ÷ floor |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, problem, label, _ in cases:
        data = problem.data
        ts = times[(name, problem.penalty.name, label)]
        fl = floors[name]
        ratios = [t / f for t, f in zip(ts, fl, strict=True)]
        lines.append(
            f"| {name} | {data.n_samples} × {data.n_features}, {data.nnz} "
            f"| {min(fl) * 1e3:.2f}–{max(fl) * 1e3:.2f} ms | {problem.penalty.name} | {label} "
            f"| {min(ts) * 1e3:.2f}–{max(ts) * 1e3:.2f} ms "
            f"| {min(ratios):.2f}–{max(ratios):.2f} |"
        )
    print("\n".join(lines))
    write_results("spdc_cost.md", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
