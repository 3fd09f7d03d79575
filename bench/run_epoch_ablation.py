"""Where a short-row ``dual_cd`` epoch goes: the kernel with one thing changed at a time.

Issue 14's target 3 asks for an epoch ≤ 2× the pass floor (one CSR product with A plus one
with Aᵀ); ``dual_cd`` meets it on news20 and misses it on a9a and w8a (11–14 non-zeros a
row). The lever the issue proposed is the storage order ("a dual pass in storage order
already costs a third of a random-order pass"). This script measures what each candidate
is worth today, by recompiling ``solvers.algorithms.dual_cd.method._dual_cd`` with one textual
edit (each edit is asserted to apply, so a changed kernel fails loudly rather than
measuring nothing):

- ``as is``: the kernel recompiled unchanged (the control every other row is read against);
- ``storage order``: row i = step mod n, rows read in storage order (the prefetches follow);
  its epochs converge differently (see results/cyclic.md), only its cost per epoch counts;
- ``no state prefetch``: the row's non-zeros still prefetched, not yᵢ, bᵢ, ‖aᵢ‖²/(l2·n) and
  the warm start;
- ``no prefetch``: nothing prefetched;
- ``4 accumulators``: aᵢᵀx summed in four independent partial sums (a shorter dependency
  chain of additions);
- ``no update``: the step computed, x and y never updated (δ taken as 0): what the update
  pass over the row costs (the iterates stay at 0, so only the cost per epoch counts);
- ``no update, no aᵢᵀx``: the same without the pass that computes aᵢᵀx (taken as 0): what
  is left is the draw, the prefetches and the dual step.

Each case: ``permutation`` sampling (the peers' order), l2 = 1e-4, epochs 2–11 of a run
from y = 0, best of ``SEEDS`` seeds; the variants are interleaved and the whole set is run
``ROUNDS`` times, so the spread of one row across rounds is the run-to-run noise. Run
``python -m bench.run_epoch_ablation`` from the repository root (under a minute); the
table goes to stdout and ``bench/results/epoch_ablation.md``.
"""

from __future__ import annotations

import inspect
import sys
import time

from bench.common import DATASETS, Log, environment, load, md_table, pass_floor, write_results
from faceoff.solvers.numba_cache import configure_numba_cache

L2 = 1e-4
EPOCHS = 10
SEEDS = 3
ROUNDS = 3
CASES = (
    ("a9a", "smooth_hinge"),
    ("a9a", "logistic"),
    ("w8a", "smooth_hinge"),
    ("w8a", "logistic"),
    ("news20-unit", "logistic"),  # where the target is met, for contrast
)

_DOT = """        zi = 0.0
        for k in range(start, end):  # aᵢᵀx
            zi += values[k] * x[indices[k]]
"""
_DOT4 = """        s0 = s1 = s2 = s3 = 0.0
        k = start
        while k + 4 <= end:
            s0 += values[k] * x[indices[k]]
            s1 += values[k + 1] * x[indices[k + 1]]
            s2 += values[k + 2] * x[indices[k + 2]]
            s3 += values[k + 3] * x[indices[k + 3]]
            k += 4
        while k < end:
            s0 += values[k] * x[indices[k]]
            k += 1
        zi = (s0 + s1) + (s2 + s3)
"""
# δ = 0 whenever draws ≥ 0 (always, but the compiler cannot know: the step is still computed)
_DELTA = "        delta = y_new - y[i]\n"
_NO_DELTA = "        delta = 0.0 if draws >= 0 else y_new - y[i]\n"
_DRAW = "        i, ahead, half = next_coordinate(sampler, draws)\n"
_STATE_PREFETCH = (
    "        prefetch(y, half)\n",
    "        prefetch(b, half)\n",
    "        prefetch(inv_s, half)\n",
    "        prefetch_warm(loss, warm, half)\n",
)
_ROW_PREFETCH = ("        prefetch_draw(indptr, indices, values, ahead, half)\n",)

VARIANTS: dict[str, tuple[tuple[str, str], ...]] = {
    "as is": (),
    "storage order": (
        (
            _DRAW,
            _DRAW + "        i = draws % n_samples\n        ahead = (draws + 8) % n_samples\n"
            "        half = (draws + 4) % n_samples\n",
        ),
    ),
    "no state prefetch": tuple((line, "") for line in _STATE_PREFETCH),
    "no prefetch": tuple((line, "") for line in _STATE_PREFETCH + _ROW_PREFETCH),
    "4 accumulators": ((_DOT, _DOT4),),
    "no update": ((_DELTA, _NO_DELTA),),
    "no update, no aᵢᵀx": ((_DELTA, _NO_DELTA), (_DOT, "        zi = 0.0\n")),
}


def compile_variant(edits: tuple[tuple[str, str], ...]):
    """``_dual_cd`` with ``edits`` (old → new, each must occur once), compiled afresh."""
    from numba import njit

    from faceoff.solvers.algorithms.dual_cd import method as dual_cd

    source = inspect.getsource(dual_cd._dual_cd.py_func)
    for old, new in edits:
        if source.count(old) != 1:
            raise SystemExit(f"the kernel changed: edit {old.strip()!r} does not apply once")
        source = source.replace(old, new)
    source = source.replace("@njit(cache=True)\n", "")
    namespace = dict(vars(dual_cd))
    exec(compile(source, "<dual_cd variant>", "exec"), namespace)  # noqa: S102 - our own code
    return njit(namespace["_dual_cd"])


def seconds_per_epoch(problem, kernel) -> float:
    """Epochs 2 to EPOCHS + 1 of permutation-sampled ``dual_cd`` run by ``kernel``."""
    from faceoff.solvers.algorithms.dual_cd.method import DualCD

    n = problem.data.n_samples
    best = float("inf")
    for seed in range(SEEDS):
        method = DualCD(problem, "permutation", "exact", seed)
        args = (problem.rows, problem.loss.params, method.subproblem.params)
        kernel(*args, method.sampler.state, method.state, n)  # epoch 1 (and compilation)
        started = time.perf_counter()
        kernel(*args, method.sampler.state, method.state, EPOCHS * n)
        best = min(best, (time.perf_counter() - started) / EPOCHS)
    return best


def main() -> int:
    configure_numba_cache()  # before any kernel is imported
    from faceoff.solvers.problem import build_problem

    log = Log()
    env = environment()
    kernels = {name: compile_variant(edits) for name, edits in VARIANTS.items()}
    loaded = {name: load(DATASETS[name]) for name in sorted({d for d, _ in CASES})}
    floors = {name: pass_floor(each.data.csr_matrix) for name, each in loaded.items()}
    times: dict[tuple, list[float]] = {}
    for round_ in range(ROUNDS):
        for dataset, loss in CASES:
            problem = build_problem(loaded[dataset].data, loaded[dataset].b, loss, l2=L2)
            for variant, kernel in kernels.items():
                t = seconds_per_epoch(problem, kernel)
                times.setdefault((dataset, loss, variant), []).append(t)
                log(f"round {round_ + 1}: {dataset} {loss} {variant}: {t * 1e3:.3f} ms")
    rows = []
    for dataset, loss in CASES:
        floor = floors[dataset]
        control = min(times[(dataset, loss, "as is")])
        for variant in VARIANTS:
            ts = times[(dataset, loss, variant)]
            rows.append(
                [
                    dataset,
                    loss,
                    variant,
                    " / ".join(f"{t * 1e3:.2f}" for t in ts),
                    " / ".join(f"{t / floor:.2f}×" for t in ts),
                    f"{min(ts) / control:.2f}",
                ]
            )
    header = [
        "dataset",
        "loss",
        "kernel",
        f"ms / epoch (rounds 1–{ROUNDS})",
        "÷ pass floor",
        "best ÷ best as is",
    ]
    lines = [
        "# A short-row dual_cd epoch, one change at a time",
        "",
        "Command: `python -m bench.run_epoch_ablation` (see its docstring for the variants).",
        "",
        f"- {env['date']}, commit {env['commit']}{' (uncommitted changes)' if env['dirty'] else ''}"
        f"; CPU: {env['cpu']}, {env['cores']} cores; load average at start "
        + ", ".join(f"{x:.2f}" for x in env["load_average"]),
        "- pass floors: "
        + ", ".join(f"{name} {floor * 1e3:.3f} ms" for name, floor in floors.items()),
        f"- permutation sampling, l2 = {L2:g}, epochs 2–{EPOCHS + 1}, best of {SEEDS} seeds; "
        f"{ROUNDS} rounds, variants interleaved",
        "",
        *md_table(header, rows),
    ]
    print("\n".join(lines))
    write_results("epoch_ablation.md", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
