"""Reading LIBSVM/svmlight files (plain, .bz2 or .gz) with scikit-learn's parser.

A line is ``<label> [qid:<int>] <index>:<value> <index>:<value> ... [# comment]`` with
1-based, strictly increasing feature indices. scikit-learn's parser is fast but its errors
are terse ("need more than 1 value to unpack") and it accepts NaN and infinite values; when
it fails, or the parsed values are not finite, a second pass over the text finds the first
offending line and :class:`SvmlightError` reports ``FILE: line N: problem``. A feature index
above :data:`MAX_INDEX`, which the parser cannot hold, is refused the same way.
"""

from __future__ import annotations

import bz2
import gzip
import math
from collections.abc import Iterator
from io import BufferedIOBase
from pathlib import Path

import numpy as np
import scipy.sparse as sp

MAX_INDEX = 2**31 - 1  # the parser stores indices as C ints
FORMAT_HINT = "svmlight lines are '<label> <index>:<value> ...' with 1-based increasing indices"


class SvmlightError(ValueError):
    """A file that is not valid svmlight; ``path`` and, when known, the 1-based ``line``."""

    def __init__(self, path: str | Path, problem: str, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = self.path if line is None else f"{self.path}: line {line}"
        super().__init__(f"{where}: {problem}")


def read_svmlight(
    path: str | Path, n_features: int | None = None
) -> tuple[sp.csr_matrix, np.ndarray]:
    """Parse an svmlight file.

    Parameters
    ----------
    path : str or Path
        Plain text, or compressed when the name ends in ``.bz2`` or ``.gz``.
    n_features : int, optional
        Number of columns (to align train and test splits); default: the largest index.

    Returns
    -------
    A : csr_matrix, shape (n_samples, n_features), float64
    b : array, shape (n_samples,)
        The labels as written in the file.

    Raises
    ------
    FileNotFoundError
        The file does not exist (the message names it).
    SvmlightError
        The file is empty, malformed, has index 0 or a negative one, non-numeric labels,
        NaN/inf values, an index beyond ``n_features`` or :data:`MAX_INDEX`, or cannot be
        decompressed.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if not path.is_file():
        raise SvmlightError(path, "not a regular file")
    # imported here, after the cheap checks: sklearn.datasets takes about a second to import
    from sklearn.datasets import load_svmlight_file

    try:
        # zero_based=False: "auto" would silently shift a file that uses index 0
        A, b = load_svmlight_file(
            str(path), n_features=n_features, dtype=np.float64, zero_based=False
        )
    except (OSError, EOFError) as err:
        raise SvmlightError(path, f"cannot read the file ({err})") from None
    except (ValueError, OverflowError) as err:
        raise _located(path, n_features) or SvmlightError(
            path, f"not a valid svmlight file ({err}); {FORMAT_HINT}"
        ) from None
    A, b = compact_indices(sp.csr_matrix(A)), np.asarray(b, dtype=np.float64)
    if A.shape[0] == 0:
        raise SvmlightError(path, "no data: the file is empty or holds only comments")
    if not (np.all(np.isfinite(A.data)) and np.all(np.isfinite(b))):
        raise _located(path, n_features) or SvmlightError(path, "contains NaN or inf values")
    if A.nnz == 0:
        raise SvmlightError(path, "no feature values: every line holds only a label")
    return A, b


def compact_indices(A: sp.csr_matrix) -> sp.csr_matrix:
    """A with int32 indices and row pointers when they fit (scikit-learn's parser and
    ``np.load`` give int64): 12 bytes a non-zero instead of 16; A itself if they do not."""
    if A.indices.dtype == np.int32 and A.indptr.dtype == np.int32:
        return A
    if max(A.shape[1], A.nnz) > np.iinfo(np.int32).max:
        return A
    indices = A.indices.astype(np.int32)
    A.indices = indices  # the int64 array is freed before the row pointers are converted
    A.indptr = A.indptr.astype(np.int32)
    return A


def _located(path: Path, n_features: int | None) -> SvmlightError | None:
    """The error of the first bad line of ``path``, or None if every line is valid."""
    for number, line in enumerate(_lines(path), start=1):
        problem = line_problem(line, n_features)
        if problem is not None:
            return SvmlightError(path, problem, number)
    return None


def _lines(path: Path) -> Iterator[bytes]:
    opened: BufferedIOBase
    if path.suffix == ".bz2":
        opened = bz2.open(path, "rb")
    elif path.suffix == ".gz":
        opened = gzip.open(path, "rb")
    else:
        opened = open(path, "rb")
    with opened as f:
        yield from f


def line_problem(line: bytes, n_features: int | None = None) -> str | None:
    """What is wrong with one svmlight line (the rules of scikit-learn's parser, with
    1-based indices and finite values), or None if it is valid."""
    content = line.split(b"#", 1)[0]
    tokens = content.split()
    if not tokens:
        return None
    label, features = tokens[0], tokens[1:]
    label_value = _number(label)
    if label_value is None:
        csv = " (is this a CSV file?)" if _is_csv_row(label) else ""
        return f"label '{_text(label)}' is not a number{csv}; {FORMAT_HINT}"
    if not math.isfinite(label_value):
        return f"label '{_text(label)}' is not a finite number"
    if features and features[0].startswith(b"qid:"):  # query id: read and ignored
        features = features[1:]
    previous = 0
    for token in features:
        index_text, sep, value_text = token.partition(b":")
        if not sep:
            return f"'{_text(token)}' is not <index>:<value>; {FORMAT_HINT}"
        index = _integer(index_text)
        if index is None:
            return f"feature index '{_text(index_text)}' in '{_text(token)}' is not an integer"
        if index < 1:
            return f"feature index {index} is invalid: svmlight feature indices start at 1"
        value = _number(value_text)
        if value is None:
            return f"value '{_text(value_text)}' of feature {index} is not a number"
        if not math.isfinite(value):
            return f"value '{_text(value_text)}' of feature {index} is not a finite number"
        if index <= previous:
            return f"feature index {index} after {previous}: indices must be increasing and unique"
        if n_features is not None and index > n_features:
            return f"feature index {index} is larger than n_features={n_features}"
        if index > MAX_INDEX:
            return f"feature index {index} is larger than {MAX_INDEX}, the largest supported"
        previous = index
    return None


def _number(token: bytes) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def _is_csv_row(token: bytes) -> bool:
    parts = token.split(b",")
    return len(parts) > 1 and all(_number(part) is not None for part in parts)


def _integer(token: bytes) -> int | None:
    try:
        return int(token)
    except ValueError:
        return None


def _text(token: bytes) -> str:
    return token.decode("utf-8", errors="backslashreplace")
