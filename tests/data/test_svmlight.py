"""faceoff.data.svmlight: real LIBSVM files, and one clear error (file, line, problem) per
bad file."""

from __future__ import annotations

import bz2

import numpy as np
import pytest
import scipy.sparse as sp

from faceoff.data.svmlight import SvmlightError, compact_indices, line_problem, read_svmlight
from tests.datasets import dataset_file


def test_reads_a1a():
    A, b = read_svmlight(dataset_file("a1a"), n_features=123)
    assert A.shape == (1605, 123)
    assert A.nnz == 22249
    assert A.dtype == np.float64
    assert set(np.unique(b)) == {-1.0, 1.0}
    assert int((b == -1).sum()) == 1210


def test_labels_kept_as_in_file():
    _, b = read_svmlight(dataset_file("mushrooms"))
    assert set(np.unique(b)) == {1.0, 2.0}


def test_plain_and_bz2_agree(tmp_path):
    text = b"# a comment\n1 1:0.5 3:2\n\n-1 qid:4 2:1.5  # trailing comment\n2 1:-1e-3\n"
    (tmp_path / "small.txt").write_bytes(text)
    (tmp_path / "small.bz2").write_bytes(bz2.compress(text))
    A, b = read_svmlight(tmp_path / "small.txt")
    A2, b2 = read_svmlight(tmp_path / "small.bz2")
    expected = [[0.5, 0.0, 2.0], [0.0, 1.5, 0.0], [-1e-3, 0.0, 0.0]]
    np.testing.assert_array_equal(A.toarray(), expected)
    np.testing.assert_array_equal(A2.toarray(), expected)
    np.testing.assert_array_equal(b, [1, -1, 2])
    np.testing.assert_array_equal(b2, b)
    assert read_svmlight(tmp_path / "small.txt", n_features=5)[0].shape == (3, 5)


BAD_FILES = [
    # (content, line or None, words the message must contain)
    (b"", None, ["empty"]),
    (b"# only a comment\n\n", None, ["empty"]),
    (b"1,2,3\n4,5,6\n", 1, ["label '1,2,3' is not a number", "CSV"]),
    (b"1 1:2\n1 3=0.5\n", 2, ["'3=0.5' is not <index>:<value>"]),
    (b"1 1:2 3\n", 1, ["'3' is not <index>:<value>"]),
    (b"1 1:1\n-1 0:0.5 2:1\n", 2, ["feature index 0", "start at 1"]),
    (b"1 -3:0.5\n", 1, ["feature index -3", "start at 1"]),
    (b"1 1.5:2\n", 1, ["feature index '1.5'", "not an integer"]),
    (b"1 1:1\n1 1:1\n1 2:nan\n", 3, ["'nan'", "feature 2", "not a finite number"]),
    (b"1 4:inf\n", 1, ["'inf'", "not a finite number"]),
    (b"1 4:-Infinity\n", 1, ["'-Infinity'", "not a finite number"]),
    (b"1 2:x\n", 1, ["value 'x' of feature 2 is not a number"]),
    (b"1 1:1\nspam 1:1\n", 2, ["label 'spam' is not a number"]),
    (b"nan 1:1\n", 1, ["label 'nan'", "not a finite number"]),
    (b"1 3:1 2:1\n", 1, ["feature index 2 after 3", "increasing"]),
    (b"1 2:1 2:1\n", 1, ["feature index 2 after 2", "unique"]),
    (b"1\n-1\n", None, ["no feature values"]),
    # beyond the parser's C int: refused with the line, not an OverflowError
    (b"1 2147483648:1\n-1 1:1\n", 1, ["feature index 2147483648", "larger than 2147483647"]),
    (b"1 1:1\n-1 1:1 99999999999999999999:1\n", 2, ["feature index 99999999999999999999"]),
]


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "bz2"])
@pytest.mark.parametrize(("content", "line", "words"), BAD_FILES)
def test_bad_file(tmp_path, content, line, words, compress):
    path = tmp_path / ("bad.bz2" if compress else "bad.txt")
    path.write_bytes(bz2.compress(content) if compress else content)
    with pytest.raises(SvmlightError) as info:
        read_svmlight(path)
    err = info.value
    message = str(err)
    assert message.startswith(f"{path}: ")
    assert err.path == str(path)
    assert err.line == line
    if line is not None:
        assert f"{path}: line {line}: " in message
    for word in words:
        assert word in message
    assert "\n" not in message


def test_index_beyond_n_features(tmp_path):
    path = tmp_path / "wide.txt"
    path.write_bytes(b"1 1:1\n-1 2:1 7:1\n")
    with pytest.raises(SvmlightError, match=r"line 2: feature index 7 is larger than n_features=5"):
        read_svmlight(path, n_features=5)


def test_largest_index_is_read(tmp_path):
    path = tmp_path / "widest.txt"
    path.write_bytes(b"1 2147483647:1\n-1 1:1\n")
    A, _ = read_svmlight(path)
    assert A.shape == (2, 2**31 - 1) and A.nnz == 2


def test_missing_file(tmp_path):
    path = tmp_path / "nowhere.txt"
    with pytest.raises(FileNotFoundError, match="nowhere.txt: no such file"):
        read_svmlight(path)


def test_directory(tmp_path):
    with pytest.raises(SvmlightError, match="not a regular file"):
        read_svmlight(tmp_path)


def test_corrupt_bz2(tmp_path):
    path = tmp_path / "broken.bz2"
    path.write_bytes(b"this is not bzip2 data")
    with pytest.raises(SvmlightError, match=r"broken\.bz2: cannot read the file"):
        read_svmlight(path)


def test_binary_garbage_is_shown_escaped(tmp_path):
    path = tmp_path / "image.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(SvmlightError, match=r"line 1: label '\\x89PNG' is not a number"):
        read_svmlight(path)


@pytest.mark.parametrize(
    "line",
    [
        b"1 1:2 3:4\n",
        b"-1\n",
        b"+1 qid:3 2:1e-3 10:-4  # comment\n",
        b"\n",
        b"# only\n",
        b"0.5 1:2\t2:3\r\n",
    ],
)
def test_valid_lines(line):
    assert line_problem(line) is None


def test_indices_are_int32_when_they_fit():
    A, _ = read_svmlight(dataset_file("a1a"), n_features=123)
    assert (A.indices.dtype, A.indptr.dtype) == (np.int32, np.int32)  # 12 bytes a non-zero
    wide = sp.csr_matrix(
        (np.ones(1), np.array([2**31], dtype=np.int64), np.array([0, 1], dtype=np.int64)),
        shape=(1, 2**31 + 1),
    )
    assert compact_indices(wide).indices.dtype == np.int64  # does not fit: kept
    small = sp.csr_matrix(A, copy=True)
    small.indices, small.indptr = small.indices.astype(np.int64), small.indptr.astype(np.int64)
    compact = compact_indices(small)
    assert compact.indices.dtype == np.int32
    np.testing.assert_array_equal(compact.toarray(), A.toarray())
