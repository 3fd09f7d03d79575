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
    .venv/bin/python -m bench.run_sparse --path                # the 50-λ paths instead

``--path``: the grid λ_max·geomspace(1, 1e-3, 50), every λ to a relative duality gap of
1e-6 (certified by us at each λ). Ours: ``solvers.path.solve_path`` with that stop rule,
the sum of its λs' solver times. A peer: its own path function (scikit-learn's
``lasso_path``, celer's ``celer_path``, skglm's ``AndersonCD.path``), warm-started by the
library, timed as one call; its ``tol`` starts at 1e-6 and is divided by 10 until every λ's
solution reaches the gap (checked with our certificate, outside the timing), and the time
is that call's.

Writes ``bench/results/sparse.md`` and the raw numbers to ``bench/out/sparse.json``. Pin it
to one core on a shared machine (``taskset -c 0``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import time
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
from faceoff.solvers.penalties import ElasticNet

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


def races(names: list[str], losses: list[str]):
    """(problem item, loss, its problem at l1 = 1, l2 = 0) of every race: the logistic loss
    on ±1 labels only, the squared loss on regression targets (the synthetic's own)."""
    from faceoff.solvers.problem import build_problem

    for item in problems(names):
        for loss in losses:
            if loss == "logistic" and not np.all(np.abs(item.b) == 1):
                continue  # regression targets: the Lasso only
            if loss == "squared" and item.name.endswith("(±1)"):
                continue
            yield item, loss, build_problem(item.data, item.b, loss, l1=1.0, l2=0.0)


def fastest(cells: dict, peers: bool) -> str | None:
    """The fastest of our solvers (``peers`` False) or of the peers among ``cells``, of
    those that reached the target; None if none did."""
    reached = [k for k, v in cells.items() if is_peer(k) == peers and v["best"] is not None]
    return min(reached, key=lambda k: cells[k]["best"], default=None)


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
        cells = row["cells"]
        best_ours, best_peer = fastest(cells, peers=False), fastest(cells, peers=True)
        ratio = (
            cells[best_ours]["best"] / cells[best_peer]["best"]
            if best_ours and best_peer and cells[best_peer]["best"] > 0
            else math.nan
        )
        table.append(
            [
                row["dataset"],
                row["loss"],
                f"λmax/{row['fraction']:g}",
                str(row["nnz"]),
                f"{best_ours} {_seconds(cells[best_ours])}" if best_ours else "—",
                f"{best_peer} {_seconds(cells[best_peer])}" if best_peer else "—",
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


# ---------------------------------------------------------------- paths

PATH_GAP = 1e-6  # every λ of a path to this relative duality gap
PATH_LAMBDAS, PATH_RATIO = 50, 1e-3


def _peer_path(name: str, loss: str, A, b, grid: np.ndarray, tol: float):
    """The coefficients (d, len(grid)) of a peer's own path function at ``tol``."""
    n = A.shape[0]
    if name == "sklearn.lasso_path":
        from sklearn.linear_model import lasso_path

        return lasso_path(A, b, alphas=grid, tol=tol, max_iter=1_000_000)[1]
    if name == "celer.celer_path":
        from celer import celer_path

        pb, scale = ("lasso", 1.0) if loss == "squared" else ("logreg", float(n))
        return celer_path(A, b, pb=pb, alphas=grid * scale, tol=tol, max_epochs=1_000_000)[1]
    if name == "skglm.path":
        from skglm.datafits import Logistic, Quadratic
        from skglm.penalties import L1
        from skglm.solvers import AndersonCD

        datafit = Quadratic() if loss == "squared" else Logistic()
        solver = AndersonCD(tol=tol, fit_intercept=False, max_iter=1000)
        return solver.path(A, b, datafit, L1(alpha=float(grid[0])), alphas=grid)[1]
    raise ValueError(name)


PEER_PATHS = {"squared": ("sklearn.lasso_path", "celer.celer_path", "skglm.path")}
PEER_PATHS["logistic"] = ("celer.celer_path", "skglm.path")


def _path_gaps(problem, grid: np.ndarray, coefs: np.ndarray) -> float:
    """The largest relative gap of the path's solutions (our certificate)."""
    from faceoff.solvers.gap import relative_gap

    worst = 0.0
    for k, weight in enumerate(grid):
        at = dataclasses.replace(problem, penalty=ElasticNet(float(weight), 0.0))
        point = at.evaluate(x=np.ascontiguousarray(coefs[:, k]))
        worst = max(worst, float(relative_gap(point.gap, point.primal)))
    return worst


def peer_path(name: str, loss: str, problem, grid: np.ndarray, repeats: int) -> dict:
    """The peer's path time at the loosest tol (1e-6, 1e-7, …) whose every λ reaches
    PATH_GAP, best of ``repeats`` calls."""
    import scipy.sparse as sp

    A = problem.data.csr_matrix if sp.issparse(problem.data.csr_matrix) else None
    A = problem.data.dense if problem.data.dense is not None else A.tocsc()
    b = problem.b
    for exponent in range(6, 15):
        tol = 10.0**-exponent
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            coefs = _peer_path(name, loss, A, b, grid, tol)
            times.append(time.perf_counter() - started)
        worst = _path_gaps(problem, grid, coefs)
        if worst <= PATH_GAP:
            return {"best": min(times), "spread": max(times) / min(times), "tol": tol}
    return {"best": None, "spread": None, "tol": None, "worst_gap": worst}


def our_path(solver: str, problem, grid: np.ndarray, repeats: int, seconds: float) -> dict:
    from faceoff.solvers.path import solve_path
    from faceoff.solvers.trace import StopRules

    times, converged = [], 0
    for _ in range(repeats):
        stop = StopRules(max_epochs=1e9, max_seconds=seconds, tol=PATH_GAP)
        result = solve_path(problem, solver, grid, stop=stop)
        converged = sum(step.stop_reason == "converged" for step in result.steps)
        times.append(result.seconds)
    if converged < len(grid):
        return {"best": None, "spread": None, "converged": converged}
    return {"best": min(times), "spread": max(times) / min(times), "converged": converged}


def _path_cell(name: str, cell: dict) -> str:
    tol = f", tol {cell['tol']:g}" if cell.get("tol") else ""
    return f"{name} {cell['best']:.3f} (×{cell['spread']:.2f}{tol})"


def run_paths(args, env: dict, command: str) -> list[str]:
    from faceoff.solvers.catalogue import catalogue
    from faceoff.solvers.path import default_grid

    rows = []
    only = args.solvers.split(",") if args.solvers else None
    for item, loss, problem in races(args.datasets.split(","), args.losses.split(",")):
        grid = default_grid(problem, PATH_LAMBDAS, PATH_RATIO)
        load_now = os.getloadavg()[0]
        cells = {}
        for solver in contenders(loss, only):
            if catalogue()[solver].warm_start:  # our solvers that follow a path
                cells[solver] = our_path(solver, problem, grid, args.repeats, args.seconds)
                log(f"{item.name} {loss} path {solver}: {cells[solver]}")
        for name in PEER_PATHS.get(loss, ()):
            cells[name] = peer_path(name, loss, problem, grid, args.repeats)
            log(f"{item.name} {loss} path {name}: {cells[name]}")
        rows.append({"dataset": item.name, "loss": loss, "cells": cells, "load": load_now})
    lines = [
        "# Sparse models: 50-λ paths (issue 40)",
        "",
        f"`{command}` — commit {env.get('commit', '?')}, {env.get('cpu', '?')}, "
        f"{env.get('date', '?')}.",
        "",
        f"Seconds for the grid λ_max·geomspace(1, {PATH_RATIO:g}, {PATH_LAMBDAS}) with every λ "
        f"at a relative duality gap ≤ {PATH_GAP:g} (our certificate), best of the repeats "
        "(× the slowest over the fastest). Ours: the sum of the λs' solver times of "
        "`solvers.path.solve_path`; a peer: one call of its path function at the loosest tol "
        "that reaches the gap at every λ (shown). ratio = our fastest ÷ the fastest peer.",
        "",
    ]
    table = []
    for row in rows:
        cells = row["cells"]
        mine, theirs = fastest(cells, peers=False), fastest(cells, peers=True)
        ratio = cells[mine]["best"] / cells[theirs]["best"] if mine and theirs else math.nan

        table.append(
            [
                row["dataset"],
                row["loss"],
                _path_cell(mine, cells[mine]) if mine else "—",
                _path_cell(theirs, cells[theirs]) if theirs else "—",
                f"{ratio:.2f}",
                f"{row['load']:.1f}",
            ]
        )
    lines += md_table(["dataset", "loss", "our fastest", "fastest peer", "ratio", "load"], table)
    lines += ["", "## Every contender", ""]
    names = sorted({k for row in rows for k in row["cells"]})
    lines += md_table(
        ["problem", *names],
        [
            [f"{row['dataset']} {row['loss']}"]
            + [
                (
                    f"{row['cells'][k]['best']:.3f}"
                    if row["cells"][k]["best"] is not None
                    else "not reached"
                )
                if k in row["cells"]
                else "—"
                for k in names
            ]
            for row in rows
        ],
    )
    out = REPO / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "sparse_path.json").write_text(json.dumps({"env": env, "rows": rows}, indent=1))
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
    parser.add_argument("--path", action="store_true", help="the 50-λ paths instead")
    args = parser.parse_args(argv)
    if args.path:
        command = "python -m bench.run_sparse " + " ".join(argv or sys.argv[1:])
        lines = run_paths(args, environment(), command.strip())
        print("\n".join(lines))
        if not args.no_write:
            write_results("sparse_path.md", lines)
        return 0
    from faceoff.solvers.catalogue import catalogue
    from faceoff.solvers.path import lambda_max
    from faceoff.solvers.problem import build_problem

    env = environment()
    only = args.solvers.split(",") if args.solvers else None
    certifier = next(name for name in CERTIFIERS if name in catalogue())
    rows = []
    for item, loss, unit in races(args.datasets.split(","), args.losses.split(",")):
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
                cells[solver] = measure(solver, problem, pstar.p_star, args.repeats, args.seconds)
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
