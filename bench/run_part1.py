"""Benchmark part 1: time to relative suboptimality 1e-6 against scikit-learn, lightning and
cyanure.

For each dataset × loss × l2 the run

1. certifies P* with a long run of our ``dual_cd`` to a relative duality gap of 1e-12
   (cached in ``bench/out/pstar.json``);
2. runs ``dual_cd`` (uniform, importance and permutation sampling), ``primal_cd`` (uniform
   and importance; Newton steps in permutation order), ``saga`` and ``lbfgs`` and reads off
   the trace the epoch of the first point with (P − P*)/|P*| ≤ 1e-6, then times runs to
   that epoch without trace points (``StopRules.quiet_until``), as a refit's fit is timed;
3. times each peer through the service's adapters (``faceoff.solvers.peers``): a peer traced
   by refits is fitted from scratch with a growing iteration budget (1, 2, 4, …, then a
   bracketed search) and reports the wall time of the smallest budget whose coefficients
   reach the target under our P; a peer with a callback (lightning) is timed like ours;
4. divides the solver time per epoch of each of those runs by the pass floor, one CSR
   product with A plus one with Aᵀ.

Each time is the best of up to 3 runs (while the repeats stay cheap); our other solvers and
the peers stop once 10× slower than dual_cd (see ``SLOW_FACTOR``). The report compares the
fastest of ours with the fastest peer, and each method with the peers' implementations of
it (``PAIRS``). The peers' weight mappings are checked first: each peer, run to convergence
by ``solve`` on a9a at l2 = 1e-1 and 1e-2, must land within 1e-8 of P*, or the run stops.

Run ``python -m bench.run_part1`` (``make bench``) from the repository root; ``--quick``
validates the harness on a9a in a minute or two. Tables go to stdout and
``bench/out/part1.md``, raw numbers to ``bench/out/part1.json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from bench.common import (
    DATASETS,
    PSTAR_GAP,
    REPO,
    FirstPoint,
    Loaded,
    Log,
    PStar,
    certify_pstar,
    environment,
    load,
    md_table,
    pass_floor,
    past_the_hit,
)
from bench.peers import PEERS, is_refit, missing_packages, supports, title
from faceoff.core.analysis import relative_suboptimality
from faceoff.dashboard.figures.labels import auto_label
from faceoff.solvers.numba_cache import configure_numba_cache

TARGET = 1e-6  # relative suboptimality (P − P*)/|P*| to reach
SLOW_FACTOR = 10.0  # our other solvers and the peers stop once this much slower than dual_cd ...
MIN_CAP_SECONDS = 2.0  # ... but are always allowed this long
PEER_RESOLUTION = 0.03  # a peer's budget is searched to within 3% (or one iteration)
MAPPING_TOL = 1e-8  # a converged peer must land this close to P* (relative)
MAPPING_L2 = (1e-1, 1e-2)  # well-conditioned l2 weights on which the mapping is checked
LOSSES = ("logistic", "smooth_hinge")
# our columns: (label, catalogue solver, params); dual_cd first (the others are capped
# relative to its time). A method's default (its name alone, params {}: every ``auto``
# parameter chooses from the problem) and its candidate settings, every auto parameter
# given explicitly (issue 34)
_PLAIN = {"accelerate": "none", "shrinking": "off"}  # dual_cd without Catalyst or shrinking
OURS: tuple[tuple[str, str, dict], ...] = (
    ("dual_cd uni", "dual_cd", {"sampling": "uniform", **_PLAIN}),
    ("dual_cd", "dual_cd", {}),
    ("dual_cd imp", "dual_cd", {"sampling": "importance", **_PLAIN}),
    ("dual_cd per", "dual_cd", {"sampling": "permutation", **_PLAIN}),
    # liblinear's shrinking (acts on the smoothed hinge; the logistic runs as per)
    ("dual_cd shr", "dual_cd", {"sampling": "permutation", **_PLAIN, "shrinking": "on"}),
    ("dual_cd cat", "dual_cd", {"sampling": "permutation", **_PLAIN, "accelerate": "catalyst"}),
    ("primal_cd", "primal_cd", {}),
    ("primal_cd uni", "primal_cd", {"sampling": "uniform", "step": "fixed"}),
    ("primal_cd imp", "primal_cd", {"sampling": "importance", "step": "fixed"}),
    ("primal_cd newton", "primal_cd", {"sampling": "permutation", "step": "newton"}),
    ("saga", "saga", {}),
    ("saga 1", "saga", {"step_scale": 1.0}),  # 1/(3·L_max), the paper's
    # 1/L_max, lightning's step for the logistic
    ("saga 1/L", "saga", {"step_scale": 3.0}),
    ("lbfgs", "lbfgs", {}),
)
NAMES = [label for label, _, _ in OURS]
COORDINATE = [label for label, solver, _ in OURS if solver in ("dual_cd", "primal_cd")]
# each method's default column (its params left out: auto) and its candidate settings
DEFAULTS = {label: solver for label, solver, params in OURS if not params}
CANDIDATES = {
    method: [label for label, solver, params in OURS if solver == method and params]
    for method in DEFAULTS.values()
}
# same method, ours against a peer's (issue 14, target 2): our fastest mode of the method
PAIRS: tuple[tuple[str, str], ...] = (
    ("dual_cd", "sklearn.liblinear"),
    ("dual_cd", "lightning.sdca"),
    ("saga", "sklearn.saga"),
    ("saga", "lightning.saga"),
    ("primal_cd", "lightning.cd"),
    ("lbfgs", "sklearn.lbfgs"),
)


@dataclass(frozen=True)
class Settings:
    """What one run covers and how much time each measurement may take."""

    datasets: tuple[str, ...]
    l2s: tuple[float, ...]
    repeats: int  # best of up to this many timed runs ...
    repeat_seconds: float  # ... while their total stays under this
    our_seconds: float  # solver-time cap of one of our runs
    our_epochs: float
    peer_fit_seconds: float  # no peer fit predicted to take longer is started
    peer_max_iter: int
    pstar_seconds: float
    mapping_seconds: float = 30.0  # cap of each peer's run in the weight-mapping check


# datasets: names of bench.common.DATASETS
FULL = Settings(
    datasets=("a9a", "w8a", "news20-unit"),  # raw news20 at l2=1e-6: P* not certifiable
    l2s=(1e-4, 1e-6),
    repeats=3,
    repeat_seconds=6.0,
    our_seconds=40.0,
    our_epochs=1e5,
    peer_fit_seconds=20.0,
    peer_max_iter=100_000,
    pstar_seconds=120.0,
)
QUICK = Settings(
    datasets=("a9a",),
    l2s=(1e-4,),
    repeats=3,
    repeat_seconds=3.0,
    our_seconds=20.0,
    our_epochs=1e5,
    peer_fit_seconds=5.0,
    peer_max_iter=100_000,
    pstar_seconds=60.0,
)


# ----------------------------------------------------------------------------- output


log = Log()


def fmt_time(seconds: float) -> str:
    """Seconds with 3 significant digits."""
    return f"{seconds:.3g}"


# ----------------------------------------------------------------------------- data


def make_problem(loaded: Loaded, loss: str, l2: float):
    from faceoff.solvers.problem import build_problem

    return build_problem(loaded.data, loaded.b, loss, 1.0, 0.0, l2)


# ----------------------------------------------------------------------------- P*


def pstar_key(loaded: Loaded, loss: str, l2: float) -> str:
    return f"{loaded.spec.name}|sha256={loaded.sha256[:16]}|{loss}|gamma=1|l2={l2!r}"


class PStarCache:
    """P* values in a JSON file, keyed by dataset (and its sha256), loss and l2."""

    def __init__(self, path: Path, refresh: bool) -> None:
        self.path = path
        self.values: dict[str, dict] = {}
        if path.is_file() and not refresh:
            self.values = json.loads(path.read_text())

    def get(self, loaded: Loaded, loss: str, l2: float, seconds: float) -> PStar:
        key = pstar_key(loaded, loss, l2)
        if key in self.values:
            cached = PStar(**self.values[key])
            # a run with a longer budget retries a P* that was not certified
            if cached.rel_gap <= PSTAR_GAP or cached.seconds >= seconds * 0.99:
                return cached
        log(
            f"P*  {loaded.spec.name} {loss} l2={l2:g}: dual_cd to relative gap {PSTAR_GAP:g} "
            f"(at most {seconds:g} s)"
        )
        value = certify_pstar(make_problem(loaded, loss, l2), seconds)
        flag = "" if value.rel_gap <= PSTAR_GAP else "  NOT CERTIFIED to 1e-12"
        log(
            f"    P* = {value.p_star:.15g}, relative gap {value.rel_gap:.2e} after "
            f"{value.epochs:.0f} epochs, {value.seconds:.1f} s{flag}"
        )
        self.values[key] = asdict(value)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.values, indent=1, sort_keys=True))
        return value


# ----------------------------------------------------------------------------- timing


@dataclass
class Outcome:
    """Time to target of one solver on one problem.

    ``seconds`` is the best time to target over the repeats (None: not reached); ``budget``
    the epochs (ours: the first that reaches it, to within PEER_RESOLUTION) or ``max_iter``
    (peers) it took,
    or the largest one tried; ``rel`` the suboptimality there; ``spent`` the time of the
    longest attempt, a lower bound on the time to target when it was not reached.
    """

    seconds: float | None
    budget: float
    rel: float
    spent: float
    times: list[float] = field(default_factory=list)
    fits: int = 0
    traced: float | None = None  # ours and callback peers: time to target of the traced run
    quiet: bool = False  # ``seconds`` from runs without trace points (see time_ours)
    auto: dict = field(default_factory=dict)  # ours: what each auto parameter chose

    def per_epoch(self) -> float:
        """Seconds per epoch (ours: solver time per epoch of the run to the target)."""
        return (self.spent if self.seconds is None else self.seconds) / self.budget

    def cell(self) -> str:
        if self.seconds is not None:
            return f"{fmt_time(self.seconds)} ({self.budget:.0f})"
        if not math.isfinite(self.rel):
            return f"diverged ({self.budget:.0f})"
        return f"> {fmt_time(self.spent)} ({self.budget:.0f}: {self.rel:.0e})"


def _solve_quiet(problem, solver: str, params: dict, stop, on_point=None):
    """solve() with the garbage collector off (as timeit and the peers' fits); returns the
    result and the wall time of the solve() call itself."""
    from faceoff.solvers.run import solve

    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter()
        result = solve(problem, solver, params, stop, seed=0, on_point=on_point)
        return result, time.perf_counter() - started
    finally:
        gc.enable()


def time_ours(problem, solver: str, params: dict, pstar: PStar, settings: Settings) -> Outcome:
    """Time to rel. suboptimality ≤ TARGET, best of repeats, timed as a refit peer's fit.

    A traced run finds the first trace point that reaches the target, at epoch E; the epoch
    is then narrowed to within PEER_RESOLUTION between the point before and E by runs to an
    epoch (:func:`narrow_epoch`: the trace's points are ~8% apart, a refit peer's budget is
    searched to 3%); each timed run then goes to that epoch with no trace point on the way
    (``StopRules.quiet_until``; the narrowing's own run to it is the first), so its solver
    time carries none of the trace's interruptions (runs are deterministic for a seed, so
    it ends on the same iterate, or a few steps later: its final point is checked against
    the target, and the traced time is kept if it misses it). ``traced`` keeps the traced
    run's time to the target."""
    from faceoff.solvers.trace import StopRules

    first = FirstPoint(lambda point: relative_suboptimality(point.primal, pstar.p_star) <= TARGET)
    stop = StopRules(
        max_epochs=settings.our_epochs,
        max_seconds=settings.our_seconds,
        tol=past_the_hit(TARGET, pstar.p_star),
        should_stop=first.should_stop,
    )
    result, _ = _solve_quiet(problem, solver, params, stop, first)
    hit = first.point
    auto = dict(result.trace[0].extras.get("auto", {})) if result.trace else {}
    if hit is None:
        rels = relative_suboptimality([p.primal for p in result.trace], pstar.p_star)
        best = min((r for r in rels if math.isfinite(r)), default=math.nan)
        return Outcome(None, result.final.epoch, best, result.final.time_s, auto=auto)

    def run_to(epoch: float):
        stop = StopRules(
            max_epochs=epoch, max_seconds=settings.our_seconds, tol=0.0, quiet_until=epoch
        )
        return _solve_quiet(problem, solver, params, stop)[0].final

    # the trace's points are ~8% apart: narrow the epoch to PEER_RESOLUTION, as a refit
    # peer's budget is, between the last point above the target and the hit
    before = max((p.epoch for p in result.trace if p.epoch < hit.epoch), default=0.0)

    reached: dict[float, Any] = {}  # the narrowing's runs that reached, by their end

    def reaches(epoch: float) -> tuple[float, bool]:
        final = run_to(epoch)
        ok = relative_suboptimality(final.primal, pstar.p_star) <= TARGET
        if ok:
            reached[final.epoch] = final
        return final.epoch, ok

    end = narrow_epoch(reaches, before, hit.epoch)
    # the narrowing's run to the end it found is the first repeat: the same quiet run
    times = [reached[end].time_s] if end in reached else []
    final = reached.get(end, hit)
    epochs, rel, quiet = final.epoch, relative_suboptimality(final.primal, pstar.p_star), True
    while len(times) < settings.repeats and (
        not times or sum(times) + times[-1] <= settings.repeat_seconds
    ):
        final = run_to(end)
        # ended past the hit, above the target
        if relative_suboptimality(final.primal, pstar.p_star) > TARGET:
            times, quiet = [hit.time_s], False  # the traced run's time, at its hit
            epochs, rel = hit.epoch, relative_suboptimality(hit.primal, pstar.p_star)
            break
        times.append(final.time_s)
        epochs, rel = final.epoch, relative_suboptimality(final.primal, pstar.p_star)
    return Outcome(
        min(times), epochs, rel, max(times), times, traced=hit.time_s, quiet=quiet, auto=auto
    )


def narrow_epoch(
    reaches: Callable[[float], tuple[float, bool]],
    lo: float,
    hi: float,
    resolution: float = PEER_RESOLUTION,
    max_runs: int = 8,
) -> float:
    """The smallest epoch found in (lo, hi] at which a run reaches the target, to within
    ``resolution`` of it (or one epoch): bisection, as :class:`PeerSearch` narrows a peer's
    budget. ``reaches(e)`` runs to epoch e and returns (the epoch it ended at, whether its
    final point reaches the target); runs at ``lo`` do not reach, at ``hi`` they do. A run
    ending at or past ``hi`` (a solver that only stops at whole passes) ends the search."""
    for _ in range(max_runs):
        if hi - lo <= max(1.0, resolution * hi):
            break
        ended, reached = reaches(0.5 * (lo + hi))
        if ended >= hi:
            break
        if reached:
            hi = ended
        else:
            lo = ended
    return hi


class PeerSearch:
    """Smallest iteration budget at which a peer's ``coef_`` reaches the target.

    Budgets double from 1 until one reaches it (or the next fit would take longer than
    ``settings.peer_fit_seconds``); the bracket is then narrowed to one iteration, or to
    PEER_RESOLUTION of the budget (as our epochs are, see :func:`time_ours`), by
    interpolating log-suboptimality linearly in the budget, with bisection as the fallback.
    Every budget is a fresh fit from scratch with the same ``random_state``, so the iterate
    after k iterations does not depend on the budget.
    """

    def __init__(self, peer: str, problem, pstar: PStar, settings: Settings) -> None:
        from faceoff.solvers.run import budget_fitter

        self.problem, self.pstar, self.settings = problem, pstar, settings
        self._fit = budget_fitter(peer, problem)  # the input's layout is made here, once
        self.evals: dict[int, tuple[float, float]] = {}  # budget → (seconds, rel)

    def fit(self, k: int) -> tuple[float, np.ndarray]:
        """One timed fit from scratch with budget k: (seconds, coef)."""
        result = self._fit(k)
        return result.seconds, result.x

    def evaluate(self, k: int) -> tuple[float, float]:
        """(seconds, relative suboptimality) at budget k, fitted once."""
        if k not in self.evals:
            seconds, coef = self.fit(k)
            primal = self.problem.primal_value(coef)
            self.evals[k] = (seconds, relative_suboptimality(primal, self.pstar.p_star))
        return self.evals[k]

    def run(self, target: float = TARGET, narrow: bool = True) -> Outcome:
        """Search the budget; ``narrow=False`` stops at the first doubling that reaches."""
        cap = self.settings.peer_fit_seconds
        k = 1
        while True:
            seconds, rel = self.evaluate(k)
            if rel <= target:
                break
            if not math.isfinite(rel) or 2 * seconds > cap or 2 * k > self.settings.peer_max_iter:
                return Outcome(None, k, rel, seconds, fits=len(self.evals))
            k *= 2
        hi, lo = k, k // 2  # lo = 0: nothing below hi was tried
        halving = True
        while narrow and hi - lo > max(1, PEER_RESOLUTION * hi):
            guess = (lo + hi) // 2
            r_lo, r_hi = (self.evals[lo][1] if lo else math.nan), self.evals[hi][1]
            if halving and lo and r_lo > target and r_hi > 0:
                slope = (math.log(r_lo) - math.log(r_hi)) / (hi - lo)
                if slope > 0:
                    guess = lo + math.ceil((math.log(r_lo) - math.log(target)) / slope)
            k = min(max(guess, lo + 1), hi - 1)
            width = hi - lo
            if self.evaluate(k)[1] <= target:
                hi = k
            else:
                lo = k
            halving = (hi - lo) <= width / 2  # interpolate again only while it pays
        seconds, rel = self.evaluate(hi)
        times = [seconds]
        while len(times) < self.settings.repeats and sum(times) + seconds <= (
            self.settings.repeat_seconds
        ):
            times.append(self.fit(hi)[0])
        return Outcome(min(times), hi, rel, max(times), times, fits=len(self.evals))


# ----------------------------------------------------------------------------- checks


def check_mappings(loaded: Loaded, cache: PStarCache, settings: Settings) -> list[dict]:
    """Each peer, run by ``solve`` on ``loaded`` at the MAPPING_L2 weights until its gap
    is within MAPPING_TOL/10, must land within MAPPING_TOL of P*; otherwise its weight
    mapping is wrong and the run stops."""
    from faceoff.solvers.trace import StopRules

    checks = []
    for loss in LOSSES:
        for l2 in MAPPING_L2:
            problem = make_problem(loaded, loss, l2)
            pstar = cache.get(loaded, loss, l2, settings.pstar_seconds)
            for peer in PEERS:
                if not supports(peer, loss):
                    continue
                stop = StopRules(
                    max_epochs=1e5, max_seconds=settings.mapping_seconds, tol=MAPPING_TOL / 10
                )
                result, _ = _solve_quiet(problem, peer, {}, stop)
                rel = relative_suboptimality(result.final.primal, pstar.p_star)
                ok = abs(rel) <= MAPPING_TOL
                checks.append(
                    {
                        "peer": peer,
                        "dataset": loaded.spec.name,
                        "loss": loss,
                        "l2": l2,
                        "rel": rel,
                        "epochs": result.final.epoch,
                        "ok": ok,
                    }
                )
                log(
                    f"map {peer:18s} {loss:12s} l2={l2:g}: relative P − P* = {rel:.1e} "
                    f"after {result.final.epoch:.0f} epochs  {'ok' if ok else 'FAILED'}"
                )
                if not ok:
                    raise SystemExit(
                        f"weight mapping check failed for {peer} ({loss}, l2={l2:g}): "
                        f"its solution is {rel:.3e} from P* (relative), expected within "
                        f"{MAPPING_TOL:g}; fix the mapping in faceoff.solvers.peers"
                    )
    return checks


# ----------------------------------------------------------------------------- report


def _ratio(ours: Outcome, best: Outcome | None) -> str:
    if ours.seconds is None:
        return "—"
    if best is None:
        return "no peer"
    if best.seconds is None:
        return f"< {ours.seconds / best.spent:.2g}"
    return f"{ours.seconds / best.seconds:.2f}"


def best_peer(cells: dict[str, Outcome | None]) -> tuple[str, Outcome] | None:
    """The fastest of ``cells`` (peers, or our columns) that reached the target, else the
    one that ran longest without."""
    tried = {name: o for name, o in cells.items() if o is not None}
    if not tried:
        return None
    reached = {name: o for name, o in tried.items() if o.seconds is not None}
    if reached:
        name = min(reached, key=lambda n: reached[n].seconds)
        return name, reached[name]
    name = max(tried, key=lambda n: tried[n].spent)
    return name, tried[name]


def pair_cells(row: dict) -> list[str]:
    """A row of the same-method table: for each of PAIRS, our fastest mode of the method ÷
    the peer (Catalyst's acceleration is another method: it is left out); a method with
    no candidate settings (lbfgs) is its default column."""
    cells = [row["dataset"], row["loss"], f"{row['l2']:g}"]
    for method, peer in PAIRS:
        chosen = [
            label
            for label, s, params in OURS
            if s == method and params and params.get("accelerate", "none") == "none"
        ] or [label for label, s, _ in OURS if s == method]
        modes = {label: Outcome(**row["ours"][label]) for label in chosen}
        fastest, theirs = best_peer(dict(modes)), row["peers"][peer]
        cells.append(
            "n/a" if theirs is None or fastest is None else _ratio(fastest[1], Outcome(**theirs))
        )
    return cells


def default_cells(row: dict) -> list[str]:
    """A row of the defaults table: each method's default (what auto chose) ÷ the best
    peer of the same method, then the fastest default ÷ the best peer overall."""
    cells = [row["dataset"], row["loss"], f"{row['l2']:g}"]
    peers = {p: (Outcome(**o) if o else None) for p, o in row["peers"].items()}
    defaults = {label: Outcome(**row["ours"][label]) for label in DEFAULTS}
    for label, method in DEFAULTS.items():
        same = {peer: peers[peer] for m, peer in PAIRS if m == method}
        best = best_peer(same)
        chose = auto_label(defaults[label].auto) if defaults[label].auto else ""
        ratio = "n/a" if best is None else f"{_ratio(defaults[label], best[1])} ({best[0]})"
        cells.append(f"{ratio}; {chose}" if chose else ratio)
    mine, best = best_peer(dict(defaults)), best_peer(peers)
    cells += [
        mine[0] if mine else "—",
        best[0] if best else "—",
        _ratio(mine[1], best[1] if best else None) if mine else "—",
    ]
    return cells


def setting_cells(row: dict) -> list[str]:
    """A row of the defaults-against-settings table: each method's default ÷ its fastest
    candidate setting (named), in time and in epochs (runs are deterministic for a seed:
    the epochs do not depend on the machine's load, the seconds do)."""
    cells = [row["dataset"], row["loss"], f"{row['l2']:g}"]
    for label, method in DEFAULTS.items():
        if not CANDIDATES[method]:
            continue
        default = Outcome(**row["ours"][label])
        fastest = best_peer({c: Outcome(**row["ours"][c]) for c in CANDIDATES[method]})
        if fastest is None:
            cells.append("—")
            continue
        name, best = fastest
        epochs = ""
        if default.seconds is not None and best.seconds is not None:
            epochs = f", epochs {default.budget / best.budget:.2f}"
        cells.append(f"{_ratio(default, best)} ({name}{epochs})")
    return cells


def report(results: dict, command: str) -> str:
    env = results["environment"]
    s = results["settings"]
    lines = [
        f"# Faceoff benchmark, part 1: time to relative suboptimality {TARGET:g}",
        "",
        f"Command: `{command}`",
        "",
        f"- {env['date']}, commit {env['commit']}{' (dirty tree)' if env['dirty'] else ''}",
        f"- CPU: {env['cpu']}, {env['cores']} cores, load average at start "
        f"{', '.join(f'{v:.2f}' for v in env['load_average'])}",
        *(
            f"- part {i}: {part['date']}, load average at its start "
            f"{', '.join(f'{v:.2f}' for v in part['load_average'])}"
            for i, part in enumerate(results.get("parts", [])[1:], start=2)
        ),
        f"- Python {env['python']}, numpy {env['numpy']}, scipy {env['scipy']}, "
        f"scikit-learn {env['scikit-learn']}, lightning {env['lightning']}, "
        f"numba {env['numba']}; OPENBLAS_CORETYPE={env['OPENBLAS_CORETYPE'] or 'unset'}",
        "- threadpools: "
        + "; ".join(
            f"{p['internal_api']} {p['version']} ({p['num_threads']} threads"
            f"{', ' + p['architecture'] if p.get('architecture') else ''})"
            for p in env["threadpools"]
        ),
        f"- caps: our runs {s['our_seconds']:g} s solver time; no peer fit predicted above "
        f"{s['peer_fit_seconds']:g} s; our other solvers and the peers also stop at "
        f"{SLOW_FACTOR:g}× "
        "the fastest plain dual_cd (no Catalyst, no shrinking) of the row "
        f"(at least {MIN_CAP_SECONDS:g} s); best of up to "
        f"{s['repeats']} runs within {s['repeat_seconds']:g} s",
        "",
        "Datasets:",
        "",
    ]
    lines += md_table(
        ["dataset", "n", "d", "nnz", "positive", "note", "sha256"],
        [
            [
                d["name"],
                str(d["n_samples"]),
                str(d["n_features"]),
                str(d["nnz"]),
                f"{d['positive_fraction']:.3f}",
                d["note"] or "",
                d["sha256"][:12],
            ]
            for d in results["datasets"]
        ],
    )
    names, peers = NAMES, list(PEERS)
    lines += [
        "",
        f"## Time to (P − P*)/|P*| ≤ {TARGET:g}, seconds (epochs)",
        "",
        "Ours: a traced run finds the epoch of its first trace point that reaches the "
        "target, narrowed to 3% (or one epoch) as a peer's budget is, by runs to an epoch; "
        "the time is the solver time of a run to that epoch with no trace point on "
        "the way (the method's set-up included), as a refit's fit is timed (the traced "
        "run's time is in part1.json: each evaluation leaves the next stretch of the solver "
        "on cold caches). Peers traced by refits: wall "
        "time of `fit()` from scratch at the smallest `max_iter` that reaches it (input "
        "already in the peer's layout); peers with a callback: as ours. `> t (k: s)`: not "
        "reached; the largest budget k tried took t seconds and stopped at suboptimality s. "
        "`n/a`: the peer lacks the loss. "
        "Ratios: the fastest of ours (and dual_cd with permutation sampling, the peers' "
        "order) ÷ the fastest peer (< 1 is a win).",
        "",
    ]
    rows = []
    for row in results["rows"]:
        if row.get("skipped"):
            rows.append(
                [row["dataset"], row["loss"], f"{row['l2']:g}", row["skipped"]]
                + [""] * (len(names) + len(peers) + 4)
            )
            continue
        ours = {name: Outcome(**row["ours"][name]) for name in names}
        cells = {p: (Outcome(**row["peers"][p]) if row["peers"][p] else None) for p in peers}
        best = best_peer(cells)
        best_outcome = best[1] if best else None
        mine = best_peer(dict(ours))
        rows.append(
            [row["dataset"], row["loss"], f"{row['l2']:g}", f"{row['pstar']['p_star']:.10g}"]
            + [ours[n].cell() for n in names]
            + [cells[p].cell() if cells[p] else "n/a" for p in peers]
            + [
                mine[0] if mine else "—",
                best[0] if best else "—",
                _ratio(mine[1], best_outcome) if mine else "—",
                _ratio(ours["dual_cd per"], best_outcome),
            ]
        )
    lines += md_table(
        ["dataset", "loss", "l2", "P*"]
        + names
        + peers
        + ["best of ours", "best peer", "best ours ÷ best peer", "dual_cd per ÷ best peer"],
        rows,
    )
    lines += [
        "",
        "## Same method: ours ÷ the peer's",
        "",
        "Time to the target of our fastest mode of a method (its columns above) ÷ the peer's "
        "implementation of the same method (< 1: ours is faster); `n/a`: the peer lacks the "
        "loss; `< r`: the peer did not reach the target, r is ours ÷ its time spent; `—`: "
        "ours did not reach it within its cap (see the times above).",
        "",
    ]
    lines += md_table(
        ["dataset", "loss", "l2"] + [f"{method} ÷ {peer}" for method, peer in PAIRS],
        [pair_cells(row) for row in results["rows"] if not row.get("skipped")],
    )
    kept = [row for row in results["rows"] if not row.get("skipped")]
    lines += [
        "",
        "## Defaults: each method's default ÷ the best peer of the same method",
        "",
        "A method's default is its column named alone (every `auto` parameter chooses from "
        "the problem in the solver's set-up, which the clock counts); after `;` what auto "
        "chose. Same-method peers: "
        + ", ".join(f"{m} — {p}" for m, p in PAIRS)
        + ". Goal (issue 34): each ≤ 1.0, the fastest default ≤ 0.5 × the best peer.",
        "",
    ]
    lines += md_table(
        ["dataset", "loss", "l2"]
        + [f"{label} ÷ best same-method peer" for label in DEFAULTS]
        + ["fastest default", "best peer", "fastest default ÷ best peer"],
        [default_cells(row) for row in kept],
    )
    lines += [
        "",
        "## Defaults ÷ each method's fastest setting",
        "",
        "The default's time ÷ the fastest of the method's candidate settings (every auto "
        "parameter given), that setting in brackets with the ratio of their epochs (the "
        "same iterates when the default chose that setting: the time ratio is then the "
        "noise of two timings, the epoch ratio 1.00).",
        "",
    ]
    lines += md_table(
        ["dataset", "loss", "l2"] + [f"{m} ÷ fastest" for m, c in CANDIDATES.items() if c],
        [setting_cells(row) for row in kept],
    )
    lines += [
        "",
        "Peers: " + "; ".join(f"`{p}` = {title(p)}" for p in PEERS) + ".",
        "",
        "## Cost of one epoch ÷ pass floor",
        "",
        "Pass floor: best time of `A @ x` plus `A.T @ r` with scipy CSR. Epoch: solver time "
        "÷ epochs (non-zeros visited / nnz) of the timed run above, at the target (or where "
        "the run stopped). Target: ≤ 2× the floor.",
        "",
    ]
    rows = []
    for row in results["rows"]:
        if row.get("skipped"):
            continue
        floor = row["pass_floor"]
        per_epoch = [Outcome(**row["ours"][n]).per_epoch() for n in COORDINATE]
        rows.append(
            [row["dataset"], row["loss"], f"{row['l2']:g}", f"{floor * 1e3:.3g}"]
            + [f"{t * 1e3:.3g} ({t / floor:.2f}×)" for t in per_epoch]
        )
    lines += md_table(["dataset", "loss", "l2", "floor ms"] + [f"{n} ms" for n in COORDINATE], rows)
    lines += [
        "",
        "## P* and its certificate",
        "",
    ]
    lines += md_table(
        ["dataset", "loss", "l2", "P*", "relative gap", "dual_cd epochs", "seconds"],
        [
            [
                r["dataset"],
                r["loss"],
                f"{r['l2']:g}",
                f"{r['pstar']['p_star']:.15g}",
                f"{r['pstar']['rel_gap']:.1e}",
                f"{r['pstar']['epochs']:.0f}",
                f"{r['pstar']['seconds']:.1f}",
            ]
            for r in results["rows"]
        ],
    )
    lines += [
        "",
        f"Weight mappings (each peer converged at l2 ∈ {MAPPING_L2}, must be within "
        f"{MAPPING_TOL:g} of P*):",
        "",
    ]
    lines += md_table(
        ["peer", "dataset", "loss", "l2", "relative P − P*", "epochs", "ok"],
        [
            [
                c["peer"],
                c["dataset"],
                c["loss"],
                f"{c['l2']:g}",
                f"{c['rel']:.1e}",
                f"{c['epochs']:.0f}",
                "yes" if c["ok"] else "NO",
            ]
            for c in results["mapping_checks"]
        ],
    )
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run_part1",
        description="Time to relative suboptimality 1e-6 of dual_cd and primal_cd against "
        "scikit-learn (liblinear, saga, lbfgs), lightning (SDCA, SAGA, CD) and cyanure.",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="validate the harness: a9a, l2=1e-4, short caps (1–2 minutes)",
    )
    parser.add_argument(
        "--datasets",
        help=f"comma-separated, from {', '.join(DATASETS)} (default: a9a,w8a,news20; --quick: a9a)",
    )
    parser.add_argument(
        "--l2", help="comma-separated l2 weights (default 1e-4,1e-6; --quick: 1e-4)"
    )
    parser.add_argument(
        "--peer-seconds",
        type=float,
        help="start no peer fit predicted to take longer (default 20; quick 5)",
    )
    parser.add_argument(
        "--our-seconds",
        type=float,
        help="solver-time cap of each run of dual_cd/primal_cd (default 40; quick 20)",
    )
    parser.add_argument(
        "--pstar-seconds",
        type=float,
        help="time cap of each P* certification run (default 120; quick 60)",
    )
    parser.add_argument(
        "--mapping-seconds",
        type=float,
        help="cap of each peer's run to convergence in the weight-mapping check (default 30; "
        "a loaded machine may need more)",
    )
    parser.add_argument(
        "--refresh-pstar",
        action="store_true",
        help="recompute every P* instead of reading bench/out/pstar.json",
    )
    parser.add_argument(
        "--out", type=Path, default=REPO / "bench" / "out", help="output folder (default bench/out)"
    )
    parser.add_argument(
        "--report",
        type=Path,
        nargs="+",
        metavar="PART1_JSON",
        help="run nothing: write the report of these part1.json files (rows of one run split "
        "over processes, by --datasets) to OUT/part1.md",
    )
    return parser.parse_args(argv)


def merged(paths: list[Path]) -> dict:
    """The results of several part1.json files as one: the first's environment and
    settings, every file's datasets, rows and mapping checks, and each file's environment
    under ``parts`` (its date and load average are in the report's header)."""
    parts = [json.loads(path.read_text()) for path in paths]
    results = {**parts[0], "parts": [part["environment"] for part in parts]}
    for key in ("datasets", "rows", "mapping_checks"):
        results[key] = [item for part in parts for item in part[key]]
    return results


def settings_from(args: argparse.Namespace) -> Settings:
    settings = QUICK if args.quick else FULL
    if args.datasets:
        names = tuple(n.strip() for n in args.datasets.split(",") if n.strip())
        unknown = [n for n in names if n not in DATASETS]
        if unknown or not names:
            raise SystemExit(
                f"unknown dataset {unknown[0] if unknown else '(none)'}; "
                f"accepted: {', '.join(DATASETS)}"
            )
        settings = replace(settings, datasets=names)
    if args.l2:
        try:
            l2s = tuple(float(v) for v in args.l2.split(","))
        except ValueError:
            raise SystemExit(f"--l2 takes comma-separated numbers, got {args.l2!r}") from None
        if not l2s or not all(v > 0 and math.isfinite(v) for v in l2s):
            raise SystemExit(f"--l2 weights must be positive numbers, got {args.l2!r}")
        settings = replace(settings, l2s=l2s)
    if args.peer_seconds is not None:
        settings = replace(settings, peer_fit_seconds=args.peer_seconds)
    if args.our_seconds is not None:
        settings = replace(settings, our_seconds=args.our_seconds)
    if args.pstar_seconds is not None:
        settings = replace(settings, pstar_seconds=args.pstar_seconds)
    if args.mapping_seconds is not None:
        settings = replace(settings, mapping_seconds=args.mapping_seconds)
    return settings


def _plain(value: Any) -> Any:
    """A NumPy scalar (a mapping check's numpy.bool) as the Python value json writes."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def main(argv: list[str] | None = None) -> int:
    configure_numba_cache()  # before any kernel is imported
    args = parse_args(argv)
    if args.report:
        results = merged(args.report)
        text = report(results, results["command"])
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "part1.md").write_text(text)
        print(text)
        return 0
    missing = missing_packages()
    if missing:
        print(
            "bench.run_part1 needs every peer package:\n  "
            + "\n  ".join(missing)
            + "\n(see bench/README.md)",
            file=sys.stderr,
        )
        return 2
    from faceoff.solvers import trace

    # every point of the grid (8% apart in epochs), whatever its evaluation costs: the times to
    # target are read off the trace, and evaluation is never solver time
    trace.EVALUATION_SHARE = math.inf
    settings = settings_from(args)
    command = " ".join(["python -m bench.run_part1", *(sys.argv[1:] if argv is None else argv)])
    from faceoff.solvers.run import warmup

    env = environment()
    log(
        f"{env['cpu']} · {env['cores']} cores · load {env['load_average'][0]:.2f} · numpy "
        f"{env['numpy']} · scikit-learn {env['scikit-learn']} · lightning {env['lightning']}"
    )
    for solver in sorted({solver for _, solver, _ in OURS}):
        started = time.perf_counter()
        warmup(solver)
        log(f"warm-up {solver}: {time.perf_counter() - started:.1f} s")
    cache = PStarCache(args.out / "pstar.json", args.refresh_pstar)
    results: dict = {
        "environment": env,
        "settings": asdict(settings),
        "datasets": [],
        "rows": [],
        "mapping_checks": [],
    }
    for index, name in enumerate(settings.datasets):
        loaded = load(DATASETS[name])
        info = loaded.info
        results["datasets"].append(info)
        log(
            f"{name}: {info['n_samples']} × {info['n_features']}, nnz {info['nnz']}, "
            f"loaded in {loaded.seconds:.1f} s"
        )
        if index == 0:
            mapping_data = loaded if name == "a9a" else load(DATASETS["a9a"])
            results["mapping_checks"] = check_mappings(mapping_data, cache, settings)
        floor = pass_floor(loaded.data.csr_matrix)
        log(f"{name}: pass floor (A @ x + A.T @ r) {floor * 1e3:.3g} ms")
        for loss in LOSSES:
            for l2 in settings.l2s:
                results["rows"].append(bench_row(loaded, loss, l2, floor, cache, settings))
                partial = {**results, "command": command}
                (args.out / "part1.json").write_text(json.dumps(partial, indent=1, default=_plain))
    text = report(results, command)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "part1.md").write_text(text)
    (args.out / "part1.json").write_text(
        json.dumps({**results, "command": command}, indent=1, default=_plain)
    )
    print()
    print(text)
    log(f"wrote {args.out / 'part1.md'} and {args.out / 'part1.json'}")
    return 0


def bench_row(
    loaded: Loaded,
    loss: str,
    l2: float,
    floor: float,
    cache: PStarCache,
    settings: Settings,
) -> dict:
    """One table row: P*, our solvers, the peers, the epoch costs."""
    tag = f"{loaded.spec.name} {loss} l2={l2:g}"
    row: dict = {"dataset": loaded.spec.name, "loss": loss, "l2": l2, "pass_floor": floor}
    pstar = cache.get(loaded, loss, l2, settings.pstar_seconds)
    row["pstar"] = asdict(pstar)
    if not pstar.usable:
        row["skipped"] = f"P* not certified (relative gap {pstar.rel_gap:.1e})"
        log(f"{tag}: skipped, {row['skipped']}")
        return row
    problem = make_problem(loaded, loss, l2)
    row["ours"], row["peers"] = {}, {}
    capped = settings
    for n, solver, params in OURS:
        # OURS lists dual_cd first: the others are capped relative to its time
        outcome = time_ours(problem, solver, params, pstar, capped)
        row["ours"][n] = asdict(outcome)
        log(f"{tag}: {n:14s} {outcome.cell()}")
        # capped by plain dual_cd: a cap from Catalyst's (or shrinking's) time would stop
        # the peers of the same-method pairs before they reach the target
        plain = params.get("accelerate") == "none" and params.get("shrinking") == "off"
        if solver == "dual_cd" and plain and outcome.seconds is not None:
            cap = max(MIN_CAP_SECONDS, SLOW_FACTOR * outcome.seconds)
            capped = replace(
                capped,
                our_seconds=min(capped.our_seconds, cap),
                peer_fit_seconds=min(capped.peer_fit_seconds, cap),
            )
    row["caps"] = {"our_seconds": capped.our_seconds, "peer_fit_seconds": capped.peer_fit_seconds}
    for peer in PEERS:
        if not supports(peer, loss):
            row["peers"][peer] = None
            continue
        if is_refit(peer):
            outcome = PeerSearch(peer, problem, pstar, capped).run()
        else:  # a callback trace, timed like ours
            peer_caps = replace(capped, our_seconds=capped.peer_fit_seconds)
            outcome = time_ours(problem, peer, {}, pstar, peer_caps)
        row["peers"][peer] = asdict(outcome)
        log(f"{tag}: {peer:18s} {outcome.cell()}  [{outcome.fits} fits]")
    per_epoch = {n: Outcome(**row["ours"][n]).per_epoch() for n in COORDINATE}
    log(f"{tag}: epoch ÷ floor " + ", ".join(f"{n} {t / floor:.2f}" for n, t in per_epoch.items()))
    return row


if __name__ == "__main__":
    sys.exit(main())
