"""Kernel speed before and after a change: a fixed number of epochs of our solvers, best of N.

Issue 26's acceptance: the loss/solver restructure keeps Numba's static dispatch speed. Each
cell (dataset × loss × solver mode) is run to a fixed epoch with no trace point on the way
(``StopRules.quiet_until``, as part 1 times ours) and the best solver time of ``--repeats``
runs is printed as one JSON line per cell, after one untimed warm run (compilation, caches),
with the best CPU time of the process over the whole ``solve`` call (``time.process_time``:
the kernels run on one thread, so on a loaded machine this counts their work and not the
time they wait for a core; it includes the first and last evaluations, the same in both).
The script uses only APIs that exist at e818635 and after, so the same file runs in both
trees; ``bench/results/restructure.md`` says how it was driven (A B A B in one session).

    python -m bench.run_restructure --datasets a9a,news20-unit --repeats 5 > out.jsonl
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time

from bench.common import DATASETS, load
from faceoff.solvers.problem import build_problem
from faceoff.solvers.run import solve
from faceoff.solvers.trace import StopRules

# label, solver, params, epochs: about 0.05-0.3 s a run on a9a
MODES: tuple[tuple[str, str, dict[str, str], float], ...] = (
    ("dual_cd uni", "dual_cd", {"sampling": "uniform"}, 20.0),
    ("dual_cd per", "dual_cd", {"sampling": "permutation"}, 20.0),
    ("dual_cd shr", "dual_cd", {"sampling": "permutation", "shrinking": "on"}, 20.0),
    ("dual_cd cat", "dual_cd", {"sampling": "permutation", "accelerate": "catalyst"}, 20.0),
    ("primal_cd uni", "primal_cd", {"sampling": "uniform"}, 20.0),
    ("primal_cd newton", "primal_cd", {"sampling": "permutation", "step": "newton"}, 20.0),
    ("saga", "saga", {}, 20.0),
    ("spdc", "spdc", {}, 20.0),
    ("lbfgs", "lbfgs", {}, 20.0),
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="a9a,news20-unit")
    parser.add_argument("--losses", default="logistic,smooth_hinge")
    parser.add_argument("--l2", type=float, default=1e-4)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    for name in args.datasets.split(","):
        loaded = load(DATASETS[name])
        for loss in args.losses.split(","):
            problem = build_problem(loaded.data, loaded.b, loss, 1.0, 0.0, args.l2)
            for label, solver, params, epochs in MODES:
                stop = StopRules(max_epochs=epochs, max_seconds=60.0, tol=0.0, quiet_until=epochs)
                solve(problem, solver, dict(params), stop, seed=0)  # compile and warm
                times, cpu = [], []
                for _ in range(args.repeats):
                    gc.disable()
                    try:
                        started = time.process_time()
                        result = solve(problem, solver, dict(params), stop, seed=0)
                        cpu.append(time.process_time() - started)
                    finally:
                        gc.enable()
                    times.append(result.final.time_s)
                cell = {"dataset": name, "loss": loss, "l2": args.l2, "mode": label}
                cell |= {"epochs": result.final.epoch, "primal": result.final.primal}
                cell |= {"best": min(times), "times": times, "cpu": min(cpu), "cpus": cpu}
                print(json.dumps(cell), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
