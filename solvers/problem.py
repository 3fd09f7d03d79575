"""The problem P(x) = 1/n Σ φ(aᵢᵀx, bᵢ) + g(x), its dual and the duality gap.

Dual (saddle form L(x, y) = g(x) + 1/n yᵀAx − 1/n Σ φ*(yᵢ)):

    D(y) = −1/n Σ φ*(yᵢ) − g*(−Aᵀy/n),   x(y) = ∇g*(−Aᵀy/n),   y(x) = φ'(Ax).

Kernels see A in compressed row (CSR, for dual/row methods) and compressed column (CSC,
for primal/column methods) form. Each is built once per data matrix and shared by all
runs, the column form only when a method first reads it (a job of a row method never
holds it: 12 bytes a non-zero); dense input is stored with a full sparsity pattern, so
one kernel serves both.

What a kernel reads comes in a few Numba tuples (``typing.NamedTuple``, free to pass and
to read), built here and beside each method: :class:`RowData` (A by rows and b) or
:class:`KernelData` (A in both layouts and b), the loss's
:class:`~faceoff.solvers.losses.LossParams`, the penalty's
:class:`~faceoff.solvers.penalties.PenaltyParams`, the sampler's
:class:`~faceoff.solvers.sampling.SamplerState`, and the method's own iterate and steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from faceoff.data.labels import MAX_CLASSES, class_indices, prepare_labels
from faceoff.data.transforms import full_pattern_csr
from faceoff.data.transforms import normalize as transform
from faceoff.solvers.losses import (
    Loss,
    loss_conjs,
    loss_derivs,
    loss_values,
    loss_values_derivs,
    make_loss,
    multinomial_conjs,
    multinomial_derivs,
    multinomial_values,
    multinomial_values_derivs,
)
from faceoff.solvers.penalties import ElasticNet
from faceoff.solvers.vocabulary import form_error, get_loss


class Compressed(NamedTuple):
    """One compressed layout of A: ``indptr`` (int64), ``indices`` (int32), ``data`` (float64)."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray


def _compressed(mat: sp.spmatrix | sp.sparray) -> Compressed:
    mat.sort_indices()
    return Compressed(
        np.ascontiguousarray(mat.indptr, dtype=np.int64),
        np.ascontiguousarray(mat.indices, dtype=np.int32),
        np.ascontiguousarray(mat.data, dtype=np.float64),
    )


def _scipy(kind, arrays: Compressed, shape: tuple[int, int]):
    return kind((arrays.data, arrays.indices, arrays.indptr), shape=shape)


BLOCK_NNZ = 1 << 18  # non-zeros per block of the norms' temporaries (2 MiB)


def _blocks(indptr: np.ndarray) -> list[tuple[int, int]]:
    """Ranges [start, stop) of rows (or columns) holding about BLOCK_NNZ non-zeros each."""
    ranges, start, n = [], 0, indptr.size - 1
    while start < n:
        stop = int(np.searchsorted(indptr, indptr[start] + BLOCK_NNZ, side="right")) - 1
        stop = min(max(stop, start + 1), n)
        ranges.append((start, stop))
        start = stop
    return ranges


def _squared_sums(layout: Compressed, rows: bool, shape: tuple[int, int]) -> np.ndarray:
    """Row (``rows``, from the CSR layout) or column sums (from the CSC layout) of A∘A,
    bitwise as ``A.multiply(A).sum(axis)`` computes them, a block at a time: scipy sums a
    row with ``np.add.reduceat`` over the non-zero products (a zero product dropped changes
    its order), a column in row order (``ones @ A∘A``)."""
    n_major, n_minor = shape if rows else shape[::-1]
    sums, ones = np.zeros(n_major), np.ones(n_minor)
    for start, stop in _blocks(layout.indptr):
        lo, hi = layout.indptr[start], layout.indptr[stop]
        squares = np.square(layout.data[lo:hi])
        indptr = layout.indptr[start : stop + 1] - lo
        if rows:
            block = sp.csr_matrix(
                (squares, layout.indices[lo:hi].copy(), indptr), shape=(stop - start, n_minor)
            )
            block.eliminate_zeros()
            sums[start:stop] = np.asarray(block.sum(axis=1)).ravel()
        else:  # the block's transpose, as CSR, times ones: sequential sums in row order
            block = sp.csr_matrix(
                (squares, layout.indices[lo:hi], indptr), shape=(stop - start, n_minor)
            )
            sums[start:stop] = block @ ones
    return sums


def _all_finite(values: np.ndarray) -> bool:
    return all(
        np.isfinite(values[i : i + BLOCK_NNZ]).all() for i in range(0, values.size, BLOCK_NNZ)
    )


class Data:
    """A data matrix A, shape (n_samples, n_features), with both layouts and norms.

    Memory: the CSR input is used as it is when it is float64 (its values shared, its
    indices sorted in place), dense input is viewed, not copied; beyond it, while the norms
    are summed, 8 bytes a non-zero, and the CSC layout (12 bytes a non-zero) once a column
    method (or ``col_sq_norms``, ``col_nnz``) first asks for it.

    Parameters
    ----------
    A : ndarray or scipy sparse matrix, shape (n_samples, n_features)
        Converted to float64 once. Explicit zeros of sparse input are kept.

    Attributes
    ----------
    n_samples, n_features, nnz : int
        The shape and the stored entries (every entry of dense input); an epoch is nnz
        visits. These attributes are part of the plug-in API (docs/plugins.md).
    is_sparse : bool
        Whether A came sparse (dense input runs through the same CSR kernels).
    csr, csc : Compressed
        A by rows and by columns (``indptr`` int64, ``indices`` int32, ``data`` float64),
        sorted indices; ``csc`` is built on first use.
    csr_matrix, csc_matrix : scipy sparse matrices
        Views of the same arrays (read-only by convention: every run shares them).
    row_sq_norms, row_nnz, col_sq_norms, col_nnz : ndarray
        ‖aᵢ‖² and non-zeros of each row, and of each column (built on first use).
    dense : ndarray or None
        A as an (n_samples, n_features) array, a view of ``csr.data``, when every entry is
        stored (dense input, or sparse input with no zero); None otherwise.
    """

    def __init__(self, A) -> None:
        if sp.issparse(A):
            csr = sp.csr_matrix(A, dtype=np.float64)
            self.is_sparse = True
        else:
            dense = np.asarray(A, dtype=np.float64)
            if dense.ndim != 2:
                raise ValueError(f"A must be 2-D, got shape {dense.shape}")
            # full pattern: every entry stored, so dense data runs through the same kernels
            csr = full_pattern_csr(dense)
            self.is_sparse = False
        if not _all_finite(csr.data):
            raise ValueError("A contains NaN or infinite values")
        self.n_samples, self.n_features = csr.shape
        self.csr = _compressed(csr)
        del csr
        shape = (self.n_samples, self.n_features)
        # scipy views of the kernels' arrays (scipy keeps its own int32 indptr when it fits)
        self.csr_matrix = _scipy(sp.csr_matrix, self.csr, shape)
        self.nnz = int(self.csr_matrix.nnz)
        if self.csr_matrix.has_canonical_format:
            self.row_sq_norms = _squared_sums(self.csr, True, shape)
        else:  # duplicate entries: A.multiply(A) squares their sum
            sq = self.csr_matrix.multiply(self.csr_matrix)
            self.row_sq_norms = np.asarray(sq.sum(axis=1)).ravel()
        self.row_nnz = np.diff(self.csr.indptr)
        # every entry stored, in order (n·d entries, sorted, no duplicate): the CSR values
        # are the dense array row by row, so A·X and Aᵀ·R run as BLAS products on a view
        # of them (no copy; dense features such as random Fourier ones are about twice as
        # fast through it as through the CSR product)
        self.dense: np.ndarray | None = None
        if self.nnz == self.n_samples * self.n_features and self.csr_matrix.has_canonical_format:
            self.dense = self.csr.data.reshape(shape)

    @cached_property
    def csc(self) -> Compressed:
        """A by columns, built on first use."""
        return _compressed(self.csr_matrix.tocsc())

    @cached_property
    def csc_matrix(self) -> sp.csc_matrix:
        return _scipy(sp.csc_matrix, self.csc, (self.n_samples, self.n_features))

    @cached_property
    def col_sq_norms(self) -> np.ndarray:
        """‖aʲ‖² of every column."""
        if self.csr_matrix.has_canonical_format:
            return _squared_sums(self.csc, False, (self.n_samples, self.n_features))
        sq = self.csr_matrix.multiply(self.csr_matrix)  # duplicates: squares of their sums
        return np.asarray(sq.sum(axis=0)).ravel()

    @cached_property
    def col_nnz(self) -> np.ndarray:
        return np.diff(self.csc.indptr)

    def matvec(self, x: np.ndarray) -> np.ndarray:
        """Ax (AX of a K-class problem's X)."""
        return (self.csr_matrix if self.dense is None else self.dense) @ x

    def rmatvec(self, r: np.ndarray) -> np.ndarray:
        """Aᵀr."""
        return (self.csr_matrix if self.dense is None else self.dense).T @ r


class RowData(NamedTuple):
    """A and b as row methods' kernels read them: A in CSR layout, b."""

    csr: Compressed
    b: np.ndarray


class KernelData(NamedTuple):
    """A and b as kernels read them: A in CSR (row-wise) and CSC (column-wise) layout, b."""

    csr: Compressed
    csc: Compressed
    b: np.ndarray


class Objective(NamedTuple):
    """A primal–dual pair evaluated: P(x), D(y), gap = P − D, nnz(x) and the pair itself."""

    primal: float
    dual: float
    gap: float
    nnz_x: int
    x: np.ndarray
    y: np.ndarray


@dataclass
class Problem:
    """Data + labels + loss + penalty; one objective, binary (or regression) or K-class.

    Binary and regression problems (``multiclass`` None) have one coefficient vector x,
    shape (n_features,), and one dual variable a sample, y of shape (n_samples,).
    A K-class problem has one column a class, X of shape (n_features, K), and Y of shape
    (n_samples, K), C-contiguous (a row of X, the K coefficients of one feature, is one read):

    - ``"ovr"``, one-vs-rest: P(X) = Σₖ [1/n Σᵢ φ(aᵢᵀxₖ, bᵢₖ) + g(xₖ)] with bᵢₖ = +1 when
      sample i is of class k, −1 otherwise (any loss: the K binary problems share A). Its
      dual is the sum of theirs, D(Y) = Σₖ [−1/n Σᵢ φ*(yᵢₖ, bᵢₖ) − g*(−Aᵀyₖ/n)], and the gap
      the sum of their gaps.
    - ``"multinomial"``, the softmax cross-entropy (logistic loss only):
      P(X) = 1/n Σᵢ [log Σₖ exp(aᵢᵀxₖ) − aᵢᵀx_{yᵢ}] + Σₖ g(xₖ), its dual on a shifted simplex
      per row (:mod:`faceoff.solvers.losses.logistic`).

    Parameters
    ----------
    data : Data
    b : array, shape (n_samples,)
        Labels (±1 for logistic and smoothed hinge) or regression targets (squared); for a
        K-class problem the class index 0..K−1 of every sample (int64).
    loss : Loss
    penalty : ElasticNet
    multiclass : {None, "ovr", "multinomial"}
    classes : array, shape (K,), optional
        The label value of each class index, as read (K-class problems).
    intercept : bool, default False
        An unpenalized intercept c: P(x, c) = 1/n Σ φ(aᵢᵀx + c, bᵢ) + g(x), binary and
        regression problems. The coefficients are then one longer, (x, c): ``coef_shape``
        is (n_features + 1,). The dual gains the constraint Σᵢ yᵢ = 0 (the intercept's
        optimality), which :meth:`feasible` restores before a point is certified.

    A method reads these, the shapes (``n_samples``, ``n_features``, ``n_classes``,
    ``coef_shape``, ``dual_shape``), ``smoothness``, and evaluates with ``primal_value``,
    ``dual_value``, ``loss_derivs``, ``dual_from_primal``, ``primal_from_dual``; none of
    them changes the problem, which is shared by every run on it (docs/plugins.md).
    """

    data: Data
    b: np.ndarray
    loss: Loss
    penalty: ElasticNet
    multiclass: str | None = None
    classes: np.ndarray | None = None
    intercept: bool = False

    def __post_init__(self) -> None:
        n = self.data.n_samples
        if self.intercept and self.multiclass is not None:
            raise ValueError(
                "fit_intercept is for binary and regression problems; a K-class form "
                f"({self.multiclass}) with an intercept is not supported"
            )
        if self.multiclass is not None:
            self._check_classes(n)
            return
        self.b = np.ascontiguousarray(self.b, dtype=np.float64)
        if self.b.shape != (n,):
            raise ValueError(f"labels have shape {self.b.shape}, expected ({n},)")
        if not np.all(np.isfinite(self.b)):
            raise ValueError("labels contain NaN or infinite values")
        if self.loss.needs_binary_labels and not np.all(np.abs(self.b) == 1.0):
            found = np.unique(self.b)[:6]
            raise ValueError(
                f"loss {self.loss.name!r} needs binary labels -1/+1, found values "
                f"{', '.join(f'{v:g}' for v in found)}; binarize them (e.g. --positive)"
            )

    def _check_classes(self, n: int) -> None:
        error = form_error(self.loss.name, self.multiclass)
        if error is not None:
            raise ValueError(error)
        self.b = np.ascontiguousarray(self.b, dtype=np.int64)
        if self.b.shape != (n,):
            raise ValueError(f"class indices have shape {self.b.shape}, expected ({n},)")
        if self.classes is None:
            raise ValueError("a K-class problem needs its class values (classes)")
        self.classes = np.asarray(self.classes, dtype=np.float64)
        K = self.classes.shape[0]
        if K < 2:
            raise ValueError(f"a K-class problem needs at least 2 classes, got {K}")
        if n and (self.b.min() < 0 or self.b.max() >= K):
            raise ValueError(f"class indices must lie in 0..{K - 1}")

    @cached_property
    def rows(self) -> RowData:
        """What row methods' kernels read (A by rows, b): the column layout is not built."""
        return RowData(self.data.csr, self.b)

    @cached_property
    def arrays(self) -> KernelData:
        """What column methods' kernels read: A in both layouts and b."""
        return KernelData(self.data.csr, self.data.csc, self.b)

    @property
    def n_samples(self) -> int:
        """n: the rows of A."""
        return self.data.n_samples

    @property
    def n_features(self) -> int:
        """d: the columns of A."""
        return self.data.n_features

    @property
    def n_classes(self) -> int:
        """K: the columns of X (1 for a binary or regression problem)."""
        return 1 if self.classes is None else int(self.classes.shape[0])

    @property
    def coef_shape(self) -> tuple[int, ...]:
        """The shape of x: (n_features,), (n_features + 1,) with an intercept (x, c), or
        (n_features, K)."""
        d = self.n_features
        if self.multiclass is not None:
            return (d, self.n_classes)
        return (d + 1,) if self.intercept else (d,)

    def weights(self, x: np.ndarray) -> np.ndarray:
        """The penalized coefficients of x: all of them, or all but the intercept."""
        return x[: self.n_features] if self.intercept else x

    def margins(self, x: np.ndarray) -> np.ndarray:
        """Ax, or Ax + c with an intercept."""
        if self.intercept:
            return self.data.matvec(x[: self.n_features]) + x[self.n_features]
        return self.data.matvec(x)

    @property
    def dual_shape(self) -> tuple[int, ...]:
        """The shape of y: (n_samples,), or (n_samples, K)."""
        n = self.n_samples
        return (n,) if self.multiclass is None else (n, self.n_classes)

    @property
    def smoothness(self) -> float:
        """β with ‖∇φ(z) − ∇φ(z')‖ ≤ β‖z − z'‖ for a row's margins: the loss's own β for a
        binary, regression or one-vs-rest problem (each margin apart), 1/2 for the
        multinomial form (the Hessian of log Σ exp, diag(p) − ppᵀ, has eigenvalues ≤ 1/2)."""
        return 0.5 if self.multiclass == "multinomial" else self.loss.smoothness

    @cached_property
    def signs(self) -> np.ndarray:
        """One-vs-rest labels B, shape (n_samples, K), C order: +1 where sample i is of
        class k, −1 elsewhere (built on first use: n·K values; kernels derive bᵢₖ from
        ``b`` instead)."""
        B = np.full((self.n_samples, self.n_classes), -1.0)
        B[np.arange(self.n_samples), self.b] = 1.0
        return B

    def loss_sum(self, Ax: np.ndarray, work: np.ndarray | None = None) -> float:
        """Σᵢ φ at the margins Ax (shape ``dual_shape``); ``work``: scratch of the loss's
        vector sums (shape (≥ 2, Ax.size)) for a binary or one-vs-rest problem."""
        if self.multiclass == "multinomial":
            return multinomial_values(self.loss.params, Ax, self.b)
        if self.multiclass == "ovr":
            return loss_values(self.loss.params, Ax.reshape(-1), self.signs.reshape(-1), work)
        return loss_values(self.loss.params, Ax, self.b, work)

    def conj_sum(self, y: np.ndarray) -> float:
        """Σᵢ φ*(yᵢ) (shape ``dual_shape``); +∞ outside the domain."""
        if self.multiclass == "multinomial":
            return multinomial_conjs(self.loss.params, y, self.b)
        if self.multiclass == "ovr":
            return loss_conjs(self.loss.params, y.reshape(-1), self.signs.reshape(-1))
        return loss_conjs(self.loss.params, y, self.b)

    def loss_derivs(self, Ax: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """φ' at the margins Ax (into ``out`` if given): the dual point a primal iterate
        certifies with."""
        if self.multiclass == "multinomial":
            derivs = multinomial_derivs(self.loss.params, Ax, self.b)
            if out is None:
                return derivs
            out[...] = derivs
            return out
        out = np.empty(Ax.shape) if out is None else out
        labels = self.signs if self.multiclass == "ovr" else self.b
        loss_derivs(self.loss.params, Ax.reshape(-1), labels.reshape(-1), out.reshape(-1))
        return out

    def loss_sum_derivs(
        self, Ax: np.ndarray, out: np.ndarray, work: np.ndarray | None = None
    ) -> float:
        """Σᵢ φ at the margins Ax, with ``out`` ← φ'(Ax), in one pass (one exp serves both for
        the logistic); ``work``: scratch of shape (3, Ax.size) (binary, one-vs-rest)."""
        if self.multiclass == "multinomial":
            value, derivs = multinomial_values_derivs(self.loss.params, Ax, self.b)
            out[...] = derivs
            return value
        labels = self.signs if self.multiclass == "ovr" else self.b
        return loss_values_derivs(
            self.loss.params, Ax.reshape(-1), labels.reshape(-1), out.reshape(-1), work
        )

    def primal_value(self, x: np.ndarray, Ax: np.ndarray | None = None) -> float:
        """P(x) = 1/n Σ φ(aᵢᵀx, bᵢ) + g(x) (``Ax``: the margins, c included)."""
        if Ax is None:
            Ax = self.margins(x)
        return self.loss_sum(Ax) / self.n_samples + self.penalty.value(self.weights(x))

    def dual_value(self, y: np.ndarray, v: np.ndarray | None = None) -> float:
        """D(y) = −1/n Σ φ*(yᵢ) − g*(v), v = −Aᵀy/n (−∞ outside the dual's domain: with
        l2 = 0, where ‖v‖∞ > l1; :meth:`feasible` scales a point into it)."""
        if v is None:
            v = -self.data.rmatvec(y) / self.n_samples
        return -self.conj_sum(y) / self.n_samples - self.penalty.conjugate(v)

    def balanced(self, y: np.ndarray) -> np.ndarray:
        """y moved onto Σᵢ yᵢ = 0 (the dual's constraint with an intercept) inside φ*'s
        domain: the mean removed for the squared loss (domain ℝ); for a loss on ±1 labels,
        whose dual tᵢ = −bᵢyᵢ lies in [0, 1], the larger of Σ_{b=+1} tᵢ and Σ_{b=−1} tᵢ
        scaled down to the smaller (tᵢ stays in [0, 1]). At the optimum y already is."""
        if not self.loss.needs_binary_labels:
            return y - y.mean()
        positive = self.b > 0
        t = -self.b * y
        up, down = float(t[positive].sum()), float(t[~positive].sum())
        out = y.copy()
        if up > down:
            out[positive] *= down / up
        elif down > up:
            out[~positive] *= up / down
        return out

    def feasible(self, y: np.ndarray, ATy: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """(y·s, Aᵀy·s): the dual point y (with its product Aᵀy) scaled into g*'s domain by
        ``penalty.dual_scale`` (s = 1, the same arrays, when l2 > 0): one factor a class of
        a one-vs-rest problem (K independent duals), one for the whole multinomial Y (its
        rows stay on their shifted simplex: s·(p − e) = (s·p + (1 − s)·e) − e). With an
        intercept, y is first :meth:`balanced` (and Aᵀy computed again); the scaling keeps
        Σᵢ yᵢ = 0."""
        if self.intercept:
            y = self.balanced(y)
            ATy = None
        if ATy is None:
            ATy = self.data.rmatvec(y)
        if self.penalty.strongly_convex:
            return y, ATy
        scale = self.penalty.dual_scale(-ATy / self.n_samples, columns=self.multiclass == "ovr")
        return y * scale, ATy * scale

    def dual_from_primal(self, x: np.ndarray, Ax: np.ndarray | None = None) -> np.ndarray:
        """y(x) = φ'(Ax) (φ'(Ax + c) with an intercept), the dual point a primal iterate
        certifies with (before :meth:`feasible`)."""
        if Ax is None:
            Ax = self.margins(x)
        return self.loss_derivs(Ax)

    def primal_from_dual(self, y: np.ndarray) -> np.ndarray:
        """x(y) = ∇g*(−Aᵀy/n)."""
        return self.penalty.conjugate_grad(-self.data.rmatvec(y) / self.n_samples)

    def evaluate(self, x: np.ndarray | None = None, y: np.ndarray | None = None) -> Objective:
        """Evaluate the pair given by a primal iterate x or a dual iterate y (or both)."""
        if x is None and y is None:
            raise ValueError("evaluate needs x or y")
        if x is None:
            assert y is not None  # checked above
            v = -self.data.rmatvec(y) / self.n_samples
            x = self.penalty.conjugate_grad(v)
            Ax = self.data.matvec(x)
        else:
            Ax = self.margins(x)
            v = None
        if y is None:
            y = self.dual_from_primal(x, Ax)
        if self.intercept or not self.penalty.strongly_convex:
            y, ATy = self.feasible(y, self.data.rmatvec(y))
            v = -ATy / self.n_samples
        primal = self.primal_value(x, Ax)
        dual = self.dual_value(y, v)
        nnz = int(np.count_nonzero(self.weights(x)))
        return Objective(primal, dual, primal - dual, nnz, x, y)


def build_problem(
    A,
    b: np.ndarray,
    loss: str,
    gamma: float = 1.0,
    l1: float = 0.0,
    l2: float = 1.0,
    normalize: str = "none",
    positive: Sequence[float] | None = None,
    multiclass: str | None = None,
    max_classes: int = MAX_CLASSES,
    fit_intercept: bool = False,
) -> Problem:
    """The problem a request names: transforms, then labels, then the loss and the penalty.

    Every caller that turns a dataset into a :class:`Problem` (the worker, the CLI, the
    benchmarks, the tests) goes through this function, so the same request gives the same
    numbers everywhere.

    Parameters
    ----------
    A : ndarray, scipy sparse matrix or Data, shape (n_samples, n_features)
        The data as read. A :class:`Data` is used as it is (its layouts are shared with
        other problems), so only ``normalize="none"`` applies to it.
    b : array, shape (n_samples,)
        Labels as read, mapped by ``data.labels.prepare_labels`` (±1 for a loss that needs
        binary labels; the classes in ``positive`` become +1 for any loss).
    loss : str
        A name of ``solvers.vocabulary.LOSS_NAMES``.
    gamma : float, default 1
        Smoothing of a smoothed loss (the smoothed hinge); ignored by the others.
    l1, l2 : float
        Weights of g(x) = l1·‖x‖₁ + l2/2·‖x‖².
    normalize : str, default "none"
        A name of ``solvers.vocabulary.NORMALIZATION_NAMES`` (``data.transforms.normalize``).
    positive : sequence of float, optional
        Label classes that become +1, the others −1 (not with ``multiclass``).
    multiclass : {None, "ovr", "multinomial"}
        A K-class problem on the labels as read (``data.labels.class_indices``: integers,
        2 to ``max_classes`` classes); see :class:`Problem`.
    fit_intercept : bool, default False
        An unpenalized intercept (binary and regression problems; :class:`Problem`).

    Returns
    -------
    Problem
        Raises ``data.labels.LabelError`` (a ValueError) for labels the loss cannot take,
        ValueError for an unknown loss or normalization or invalid weights.
    """
    binary = get_loss(loss).needs_binary_labels  # ValueError for an unknown loss, early
    if isinstance(A, Data):
        if normalize != "none":
            raise ValueError(
                f"normalize={normalize!r} needs the matrix, not a built Data; pass A itself"
            )
        data = A
    else:
        data = Data(transform(A, normalize))
    if multiclass is not None:
        if positive is not None:
            raise ValueError(
                "positive makes a binary problem, multiclass a K-class one: give one of them"
            )
        if fit_intercept:
            raise ValueError(
                f"fit_intercept is for binary and regression problems, not multiclass "
                f"{multiclass!r}"
            )
        index, classes = class_indices(b, max_classes)
        return Problem(data, index, make_loss(loss, gamma), ElasticNet(l1, l2), multiclass, classes)
    labels = prepare_labels(b, binary, positive)
    penalty = ElasticNet(l1, l2)
    return Problem(data, labels, make_loss(loss, gamma), penalty, intercept=fit_intercept)
