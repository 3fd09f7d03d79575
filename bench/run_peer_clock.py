"""Peer clocks (issue 41): each peer's traced time to ε against its own untraced fit.

For every peer of the catalogue (traced by refits or through its library's callback) and
every loss it takes, on each dataset (l2 = 1e-4, no intercept): the time at which its trace
in the service (``faceoff.solvers.run.solve``, every point certified) first reaches
(P − P*)/|P*| ≤ ε, best of ``--repeats`` runs, divided by the time of its own untraced fit to
ε, best of ``--repeats`` fits, the two alternated. Goal: every ratio ≤ 1.3.

- **Untraced fit**: the peer's estimator as its adapter builds it, no callback
  (``solvers.run.budget_fitter``), input
  already in its layout, garbage collector off (``refit.timed_fit``). Budgets grow as the
  service's trace takes them: a refit peer's 1, 2, 4, … (the first that reaches ε is the
  budget its trace reaches ε at, so the two times are of one computation); a callback peer's
  ``max_iter`` one pass at a time (SVRG: one outer iteration, two passes), so its untraced
  fit runs to the end of the pass in which its trace reached ε: a ratio below 1 there is
  the rest of that pass.
- **Traced**: a callback peer's point times come from an untraced replay of its fit
  (``refit.replay``); the clock the trace itself ran on is kept in the points' extras
  (``traced_s``) and shown as the "before" column: what the service recorded before the
  replay.

    .venv/bin/python -m bench.run_peer_clock                  # a9a-unit, w8a-unit
    .venv/bin/python -m bench.run_peer_clock --datasets a9a-unit --peers lightning.sdca

Writes ``bench/results/peer_clock.md`` and the raw numbers to ``bench/out/peer_clock.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

from bench.common import (
    DATASETS,
    REPO,
    Log,
    certify_pstar,
    environment,
    load,
    md_table,
    past_the_hit,
    write_results,
)

EPS = 1e-6
L2 = 1e-4
GOAL = 1.3
LOSSES = ("logistic", "smooth_hinge", "squared")

log = Log()


def subopt(primal: float, pstar: float) -> float:
    return (primal - pstar) / abs(pstar)


def search(peer: str, problem, pstar: float, seconds: float):
    """The peer's untraced ``fit`` and the first budget at which it reaches ε (None: not
    within ``seconds`` of fits): a refit peer's budgets double as its trace's do; a callback
    peer's are then bisected to the smallest ``max_iter`` (fits are deterministic for the
    seed)."""
    from faceoff.solvers.catalogue import get_spec
    from faceoff.solvers.run import budget_fitter

    spec = get_spec(peer)
    refit = spec.trace_mode == "refit"
    fit = budget_fitter(peer, problem)
    step = 2 if spec.entry == "svrg" and not refit else 1  # SVRG: two passes an iteration

    def reaches(budget: int) -> bool:
        return subopt(problem.evaluate(fit(budget).x).primal, pstar) <= EPS

    budget, below, spent = step, 0, 0.0
    while True:  # budgets double (a refit trace's own budgets) until one reaches ε
        result = fit(budget)
        spent += result.seconds
        if subopt(problem.evaluate(result.x).primal, pstar) <= EPS:
            break
        if spent > seconds or (refit and result.ended):  # ended: stopped short of ε
            return fit, None
        below, budget = budget, max(budget + step, round(budget * 2 / step) * step)
    while not refit and budget - below > step:  # a callback peer's: to one iteration
        middle = (below + budget) // (2 * step) * step
        below, budget = (below, middle) if reaches(middle) else (middle, budget)
    return fit, budget


def measure(peer: str, problem, pstar: float, repeats: int, seconds: float) -> dict:
    """Untraced fits at the budget :func:`search` found and traced runs of the service,
    alternated (U, T, U, T, …) so that the machine's load falls on both alike; each side's
    best. A traced run's time is that of its first point within ε of P*."""
    from faceoff.solvers.run import solve
    from faceoff.solvers.trace import StopRules

    fit, budget = search(peer, problem, pstar, seconds)
    stop = StopRules(max_epochs=1e5, max_seconds=seconds, tol=past_the_hit(EPS, pstar))
    fits, hits = [], []
    for _ in range(repeats):
        if budget is not None:
            fits.append(fit(budget).seconds)
        result = solve(problem, peer, None, stop, seed=0)
        hit = next((p for p in result.trace if subopt(p.primal, pstar) <= EPS), None)
        if hit is None:
            break
        hits.append(hit)
    best = min(hits, key=lambda p: p.time_s) if hits else None
    return {
        "untraced": {"budget": budget, "seconds": min(fits, default=None), "times": fits},
        "traced": {
            "seconds": best and best.time_s,
            "times": [p.time_s for p in hits],
            "before": min((p.extras.get("traced_s", p.time_s) for p in hits), default=None),
            "epoch": best and best.epoch,
            "budget": best and best.extras.get("max_iter"),
            "replayed": all(p.extras.get("replayed", True) for p in hits),
        },
    }


def peers_for(loss: str, only: list[str] | None) -> list[str]:
    from faceoff.solvers.catalogue import catalogue

    return [
        s.name
        for s in catalogue().values()
        if s.trace_mode in ("refit", "callback")
        and loss in s.losses
        and "l2" in s.penalties
        and (only is None or s.name in only)
        and s.unavailable_reason() is None
    ]


def cell(value: float | None) -> str:
    return "—" if value is None else f"{value:.4f}"


def report(rows: list[dict], env: dict, command: str) -> list[str]:
    lines = [
        "# Peer clocks: traced time to ε ÷ the peer's own untraced fit (issue 41)",
        "",
        f"Command: `{command}` (protocol in bench/run_peer_clock.py). ε: (P − P*)/|P*| ≤ "
        f"{EPS:g}, l2 = {L2:g}, best of 3 on each side. Goal: every ratio ≤ {GOAL}.",
        "",
        f"- {env['date']}, commit {env['commit']}{' (dirty)' if env['dirty'] else ''}; "
        f"CPU: {env['cpu']}, {env['cores']} cores; load average at start "
        + ", ".join(f"{x:.2f}" for x in env["load_average"]),
        f"- Python {env['python']}, numpy {env['numpy']}, scipy {env['scipy']}, scikit-learn "
        f"{env['scikit-learn']}, lightning {env['lightning']}",
        "",
    ]
    table = []
    for r in rows:
        t, u = r["traced"], r["untraced"]
        ratio = t["seconds"] / u["seconds"] if t["seconds"] and u["seconds"] else None
        before = t.get("before") if r["mode"] == "callback" else None
        old = before / u["seconds"] if before and u["seconds"] else None
        where = (
            f"budget {t.get('budget')} / {u['budget']}"
            if r["mode"] == "refit"
            else f"epoch {t['epoch']:.2f} / max_iter {u['budget']}"
            if t["seconds"]
            else "—"
        )
        mark = "" if ratio is None else (" ✓" if ratio <= GOAL else " ✗")
        table.append(
            [
                r["dataset"],
                r["loss"],
                r["peer"],
                r["mode"],
                cell(t["seconds"]),
                cell(u["seconds"]),
                ("—" if ratio is None else f"{ratio:.2f}") + mark,
                "—" if old is None else f"{old:.2f}",
                where,
                f"{r['load']:.1f}",
            ]
        )
    header = [
        "dataset",
        "loss",
        "peer",
        "trace",
        "traced s",
        "untraced s",
        "traced ÷ untraced",
        "before (trace clock) ÷ untraced",
        "where it reached ε (trace / untraced)",
        "load",
    ]
    return lines + md_table(header, table)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="a9a-unit,w8a-unit")
    parser.add_argument("--peers", default=None, help="comma-separated catalogue names")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20.0, help="cap of each run")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    from faceoff.solvers.catalogue import get_spec
    from faceoff.solvers.problem import build_problem

    env = environment()
    only = args.peers.split(",") if args.peers else None
    rows = []
    for name in args.datasets.split(","):
        loaded = load(DATASETS[name])
        for loss in LOSSES:
            peers = peers_for(loss, only)
            if not peers:
                continue
            problem = build_problem(loaded.data, loaded.b, loss, 1.0, 0.0, L2)
            pstar = certify_pstar(problem, 120.0)
            log(f"{name} {loss}: P* {pstar.p_star:.12g} (gap {pstar.rel_gap:.1e})")
            for peer in peers:
                load_now = os.getloadavg()[0]
                measured = measure(peer, problem, pstar.p_star, args.repeats, args.seconds)
                u, t = measured["untraced"], measured["traced"]

                row = {
                    "dataset": name,
                    "loss": loss,
                    "peer": peer,
                    "mode": get_spec(peer).trace_mode,
                    "untraced": u,
                    "traced": t,
                    "load": load_now,
                }
                rows.append(row)
                ratio = t["seconds"] / u["seconds"] if t["seconds"] and u["seconds"] else math.nan
                log(f"  {peer:24s} traced {t['seconds']} untraced {u['seconds']} → {ratio:.2f}")
    command = "python -m bench.run_peer_clock " + " ".join(argv or sys.argv[1:])
    out = REPO / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "peer_clock.json").write_text(json.dumps({"env": env, "rows": rows}, indent=1))
    lines = report(rows, env, command.strip())
    print("\n".join(lines))
    if not args.no_write:
        write_results("peer_clock.md", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
