"""Sparse models (issue 40): the Lasso and l1-logistic, ours against skglm, celer, sklearn.

For each dataset × loss × λ (l1 = λ_max/10 and λ_max/100 with λ_max = ‖Aᵀφ'(0)‖∞/n the
smallest weight at which x = 0 is optimal; l2 = 0; no intercept): every solver of the
catalogue that takes the loss with l2 = 0 and is installed, run as the service runs it
(``faceoff.solvers.run.solve``: every trace point certified by its rescaled duality gap, a
peer's clock its own fit's), and the time of its first trace point with
(P − P*)/|P*| ≤ 1e-6, best of ``--repeats`` runs (the spread is the slowest over the
fastest). P* is certified to a relative gap of 1e-12 by the first solver of
``CERTIFIERS`` in the catalogue. ratio = our fastest ÷ the fastest peer (goal ≤ 1.0).

    .venv/bin/python -m bench.run_sparse                       # every dataset, both losses
    .venv/bin/python -m bench.run_sparse --datasets leu --losses squared --repeats 1

Writes ``bench/results/sparse.md`` and the raw numbers to ``bench/out/sparse.json``. Pin it
to one core on a shared machine (``taskset -c 0``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from dataclasses import dataclass

import numpy as np

from bench.common import (
    DATASETS,
    REPO,
    FirstPoint,
    Log,
    certify_pstar,
    environment,
    load,
    md_table,
    past_the_hit,
    write_results,
)

TARGET = 1e-6  # relative suboptimality to reach
LOSSES = ("squared", "logistic")
FRACTIONS = (10.0, 100.0)  # l1 = λ_max / fraction
CERTIFIERS = ("ws_cd", "primal_cd")  # who certifies P* (the first one in the catalogue)
PEER_LIBRARIES = ("sklearn", "skglm", "celer", "cyanure", "lightning")
SYNTHETIC = "correlated"  # n = 500, d = 5000, ρ = 0.6 (data.synthetic.correlated)

log = Log()


@dataclass
class Problem:
    name: str
    note: str
    data: object
    b: np.ndarray


def problems(names: list[str]) -> list[Problem]:
    """The datasets as our Data with ±1 labels (the Lasso fits them as targets, as celer's
    and skglm's benchmarks do on leukemia), and the correlated synthetic design."""
    from faceoff.data.synthetic import correlated
    from faceoff.solvers.problem import Data

    out = []
    for name in names:
        if name == SYNTHETIC:
            A, b = correlated(500, 5000, rho=0.6, seed=0)
            note = "n = 500, d = 5000, ρ = 0.6, 5% support, snr 3 (dense)"
            labels = np.where(b > 0, 1.0, -1.0)
            out.append(Problem(name, note, Data(A), b))
            out.append(Problem(f"{name} (±1)", f"{note}; labels sign(b)", Data(A), labels))
            continue
        loaded = load(DATASETS[name])
        out.append(Problem(name, loaded.spec.note, loaded.data, loaded.b))
    return out


def is_peer(solver: str) -> bool:
    return solver.split(".")[0] in PEER_LIBRARIES


def contenders(loss: str, only: list[str] | None) -> list[str]:
    """Every installed solver that takes ``loss`` with l2 = 0 (or those of ``only``)."""
    from faceoff.solvers.catalogue import catalogue

    return [
        name
        for name, spec in catalogue().items()
        if "l1" in spec.penalties
        and loss in spec.losses
        and spec.unavailable_reason() is None
        and (only is None or name in only)
    ]


def lambda_max(problem) -> float:
    n = problem.n_samples
    derivs = problem.loss_derivs(np.zeros(n))
    return float(np.abs(problem.data.rmatvec(derivs)).max()) / n


def time_to_target(solver: str, problem, p_star: float, seconds: float) -> dict:
    """One run as the service runs it: the time of its first point within TARGET of P*."""
    from faceoff.solvers.run import solve
    from faceoff.solvers.trace import StopRules

    hit = FirstPoint(lambda point: (point.primal - p_star) / abs(p_star) <= TARGET)
    stop = StopRules(
        max_epochs=1e9,
        max_seconds=seconds,
        tol=past_the_hit(TARGET, p_star),
        should_stop=hit.should_stop,
    )
    result = solve(problem, solver, None, stop, seed=0, on_point=hit)
    point = hit.point
    return {
        "seconds": None if point is None else point.time_s,
        "reason": result.stop_reason,
        "final_subopt": (result.final.primal - p_star) / abs(p_star),
        "nnz": result.final.nnz_x,
    }


def measure(solver: str, problem, p_star: float, repeats: int, seconds: float) -> dict:
    runs = [time_to_target(solver, problem, p_star, seconds) for _ in range(repeats)]
    times = [r["seconds"] for r in runs if r["seconds"] is not None]
    return {
        "best": min(times) if len(times) == len(runs) else None,
        "spread": max(times) / min(times) if len(times) == len(runs) and min(times) > 0 else None,
        "runs": runs,
    }


def _seconds(cell: dict) -> str:
    if cell["best"] is None:
        last = cell["runs"][-1]
        return f"not reached ({last['reason']}, {last['final_subopt']:.0e})"
    return f"{cell['best']:.4f} (×{cell['spread']:.2f})"


def report(rows: list[dict], env: dict, command: str) -> list[str]:
    lines = [
        "# Sparse models: the Lasso and l1-logistic (issue 40)",
        "",
        f"`{command}` — commit {env.get('commit', '?')}, {env.get('cpu', '?')}, "
        f"{env.get('date', '?')}.",
        "",
        "Seconds to (P − P*)/|P*| ≤ 1e-6 through `solvers.run.solve` (the service's clock: "
        "solver time, evaluation excluded; a peer timed by its own fit), best of the repeats "
        "(× the slowest over the fastest). l2 = 0, no intercept. ratio = our fastest ÷ the "
        "fastest peer; load = the 1-minute load average when the cell started.",
        "",
    ]
    table = []
    for row in rows:
        ours = {k: v for k, v in row["cells"].items() if not is_peer(k) and v["best"] is not None}
        peers = {k: v for k, v in row["cells"].items() if is_peer(k) and v["best"] is not None}
        best_ours = min(ours, key=lambda k: ours[k]["best"]) if ours else None
        best_peer = min(peers, key=lambda k: peers[k]["best"]) if peers else None
        ratio = (
            ours[best_ours]["best"] / peers[best_peer]["best"]
            if best_ours and best_peer and peers[best_peer]["best"] > 0
            else math.nan
        )
        table.append(
            [
                row["dataset"],
                row["loss"],
                f"λmax/{row['fraction']:g}",
                str(row["nnz"]),
                f"{best_ours} {_seconds(ours[best_ours])}" if best_ours else "—",
                f"{best_peer} {_seconds(peers[best_peer])}" if best_peer else "—",
                f"{ratio:.2f}",
                f"{row['load']:.1f}",
            ]
        )
    header = ["dataset", "loss", "l1", "nnz(x*)", "our fastest", "fastest peer", "ratio", "load"]
    lines += md_table(header, table)
    lines += ["", "## Every solver", ""]
    solvers = sorted({name for row in rows for name in row["cells"]})
    every = [
        [f"{row['dataset']} {row['loss']} λmax/{row['fraction']:g}"]
        + [_seconds(row["cells"][s]) if s in row["cells"] else "—" for s in solvers]
        for row in rows
    ]
    lines += md_table(["problem", *solvers], every)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default=f"leu,rcv1_small_vw,dorothea_train,{SYNTHETIC}")
    parser.add_argument("--losses", default=",".join(LOSSES))
    parser.add_argument("--fractions", default=",".join(f"{f:g}" for f in FRACTIONS))
    parser.add_argument("--solvers", default=None, help="comma-separated catalogue names")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=30.0, help="cap of each run")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    from faceoff.solvers.catalogue import catalogue
    from faceoff.solvers.problem import build_problem

    env = environment()
    only = args.solvers.split(",") if args.solvers else None
    certifier = next(name for name in CERTIFIERS if name in catalogue())
    rows = []
    for item in problems(args.datasets.split(",")):
        for loss in args.losses.split(","):
            if loss == "logistic" and not np.all(np.abs(item.b) == 1):
                continue  # regression targets: the Lasso only
            if loss == "squared" and item.name.endswith("(±1)"):
                continue
            unit = build_problem(item.data, item.b, loss, l1=1.0, l2=0.0)
            lmax = lambda_max(unit)
            for fraction in (float(f) for f in args.fractions.split(",")):
                problem = build_problem(item.data, item.b, loss, l1=lmax / fraction, l2=0.0)
                pstar = certify_pstar(problem, 300.0, certifier)
                if not pstar.usable:
                    log(f"{item.name} {loss} λmax/{fraction:g}: P* gap {pstar.rel_gap:.1e}, skip")
                    continue
                log(f"{item.name} {loss} λmax/{fraction:g}: P* {pstar.p_star:.12g}")
                load_now = os.getloadavg()[0]
                cells = {}
                for solver in contenders(loss, only):
                    cells[solver] = measure(
                        solver, problem, pstar.p_star, args.repeats, args.seconds
                    )
                    log(f"  {solver:28s} {_seconds(cells[solver])}")
                best = min(
                    (c["runs"][0]["nnz"] for c in cells.values() if c["best"] is not None),
                    default=-1,
                )
                rows.append(
                    {
                        "dataset": item.name,
                        "note": item.note,
                        "loss": loss,
                        "fraction": fraction,
                        "l1": lmax / fraction,
                        "p_star": pstar.p_star,
                        "nnz": best,
                        "cells": cells,
                        "load": load_now,
                    }
                )
    command = "python -m bench.run_sparse " + " ".join(argv or sys.argv[1:])
    out = REPO / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "sparse.json").write_text(json.dumps({"env": env, "rows": rows}, indent=1))
    lines = report(rows, env, command.strip())
    print("\n".join(lines))
    if not args.no_write:
        write_results("sparse.md", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
