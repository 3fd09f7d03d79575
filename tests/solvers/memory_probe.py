"""``python -m tests.solvers.memory_probe CASES_JSON``: run solvers on problems in this fresh
process and print, a JSON line per case, its peak memory above the process's baseline
beside the catalogue's estimate (SolverSpec.working_bytes).

Each case is ``{"solver", "params", "loss", "penalty", "multiclass", "n", "d", "density",
"classes"}``, with ``"path": N`` a regularization path of N λs instead of one run. Its
matrix and labels are made first. The case then runs once (imports, Numba's compilation for
these types and layouts, the library's own start-up: what a worker's warm-up does, part of
its baseline, not of a job). Then the kernel's peak RSS counter is reset
(``/proc/self/clear_refs``: VmHWM := VmRSS) and the problem is built and solved again. The
job's peak is VmHWM − VmRSS at the reset + the bytes of the matrix and labels: everything
the job allocates, C and Fortran included (tracemalloc sees Python's allocations only),
counted from the same baseline the estimate leaves out. Run it with
MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ fixed (as the test does): glibc then
returns freed memory, so the measured run cannot reuse the warm-up's pages unseen.
``ru_maxrss`` of this process is printed too (monotone: an upper envelope)."""

from __future__ import annotations

import gc
import json
import resource
import sys
import time

import numpy as np
import scipy.sparse as sp

from faceoff.solvers.catalogue import get_spec
from faceoff.solvers.path import solve_path
from faceoff.solvers.problem import build_problem
from faceoff.solvers.run import solve
from faceoff.solvers.trace import StopRules


def _status(field: str) -> int:
    """A field of /proc/self/status, in bytes."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(field)


def _data(n: int, d: int, density: float, classes: int, loss: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    if density >= 1:
        A = sp.csr_matrix(rng.standard_normal((n, d)))
    else:
        A = sp.random(n, d, density=density, format="csr", random_state=seed, dtype=np.float64)
        A.data = rng.standard_normal(A.nnz)
    A.indices = A.indices.astype(np.int32)
    A.indptr = A.indptr.astype(np.int32)
    if loss == "squared":
        b = rng.standard_normal(n)
    elif classes > 1:
        b = (np.arange(n) % classes).astype(np.float64)
    else:
        b = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    return A, b


def _run(case: dict, A, b, stop: StopRules) -> None:
    l1 = 0.0 if case["penalty"] == "l2" else 1e-3
    l2 = 0.0 if case["penalty"] == "l1" else 1e-2  # an l1-only peer's penalty: l2 = 0
    problem = build_problem(A, b, case["loss"], l1=l1, l2=l2, multiclass=case["multiclass"])
    spec = get_spec(case["solver"])
    params = spec.parse_params(case.get("params"))
    if case.get("path"):  # a path job: its λs one after the other on this one problem
        solve_path(problem, case["solver"], None, params, stop, 0, n_lambdas=case["path"])
        return
    solve(problem, case["solver"], params, stop, 0)


def measure(case: dict) -> dict:
    spec = get_spec(case["solver"])
    classes = case.get("classes", 1)
    n, d, density = case["n"], case["d"], case["density"]
    # made before the reset: the generator's temporaries (scipy's sampling of positions
    # takes 8·n·d bytes) are not a job's; the matrix and labels are, added below
    A, b = _data(n, d, density, classes, case["loss"])
    held = A.data.nbytes + A.indices.nbytes + A.indptr.nbytes + b.nbytes
    stop = StopRules(max_epochs=case.get("epochs", 3), max_seconds=60)
    _run(case, A, b, stop)  # the warm-up: the same run, compiled on these types
    gc.collect()
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # VmHWM := VmRSS
    base = _status("VmRSS")
    started = time.monotonic()
    _run(case, A, b, stop)
    peak = _status("VmHWM") - base + held
    params = spec.parse_params(case.get("params"))
    estimate = spec.working_bytes(n, d, A.nnz, params, case["penalty"], classes)
    return {
        **case,
        "nnz": A.nnz,
        "peak": peak,
        "estimate": estimate,
        "base": base,
        "seconds": round(time.monotonic() - started, 2),
        "ru_maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }


if __name__ == "__main__":
    for case in json.loads(sys.argv[1]):
        print(json.dumps(measure(case)), flush=True)
