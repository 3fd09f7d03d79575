"""Uploads (``POST /api/v1/datasets/upload``): size limits, bzip2/gzip recognized by their
magic bytes and decompressed in a streaming way under a cap (a real bomb is refused), and
every malformed svmlight file refused with ``FILE: line N: problem`` and nothing registered:
no Dataset row, no file left in the upload folder.

Feature indices must be strictly increasing within a line (as LIBSVM writes them): a
decreasing or repeated index is refused with its line, never silently re-sorted or summed."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import tracemalloc

import pytest
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from faceoff.core.uploads import UploadLimits, UploadTooLarge, compression, receive
from tests.backends import LOCAL

MAX_BYTES = 64 * 1024
MAX_DECOMPRESSED = 256 * 1024
GOOD = b"+1 1:0.5 3:1\n-1 2:1.5\n+1 1:1 2:2 3:3\n"


@pytest.fixture
def api(sqlite_url, settings_for):
    settings = settings_for(
        sqlite_url, MAX_UPLOAD_BYTES=MAX_BYTES, MAX_UPLOAD_DECOMPRESSED_BYTES=MAX_DECOMPRESSED
    )
    with TestClient(create_app(settings), client=LOCAL) as client:
        yield client, settings


def upload(client, content: bytes, filename: str = "bad.svm", **form):
    return client.post("/api/v1/datasets/upload", files={"file": (filename, content)}, data=form)


def stored(settings) -> list[str]:
    folder = settings.upload_dir
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def assert_nothing_registered(client, settings) -> None:
    assert client.get("/api/v1/datasets").json()["count"] == 0
    assert stored(settings) == []


@pytest.mark.parametrize(
    ("content", "filename"),
    [
        (GOOD, "tiny.svm"),
        (GOOD.replace(b" ", b"\t"), "tiny.svm"),  # tabs separate like spaces
        (GOOD.replace(b"\n", b"\r\n"), "tiny.svm"),
        (b"# header\n" + GOOD + b"\n\n", "tiny.svm"),
        (bz2.compress(GOOD), "tiny.svm.bz2"),
        (bz2.compress(GOOD[:13]) + bz2.compress(GOOD[13:]), "tiny.bz2"),  # two bzip2 streams
        (gzip.compress(GOOD), "tiny.gz"),
        (gzip.compress(GOOD), "tiny.svm"),  # recognized by its magic bytes, not its name
    ],
    ids=["plain", "tabs", "crlf", "comments", "bz2", "bz2-multistream", "gz", "gz-misnamed"],
)
def test_valid_uploads_are_stored_decompressed(api, content, filename):
    client, settings = api
    response = upload(client, content, filename)
    assert response.status_code == 201, response.text
    dataset = response.json()
    assert dataset["name"] == "tiny"
    assert (dataset["n_samples"], dataset["n_features"], dataset["nnz"]) == (3, 3, 6)
    assert stored(settings) == [f"{dataset['sha256']}.svm"]
    text = (settings.upload_dir / f"{dataset['sha256']}.svm").read_bytes()
    assert compression(text) is None and hashlib.sha256(text).hexdigest() == dataset["sha256"]


def test_plain_and_compressed_uploads_of_the_same_data_are_one_file(api):
    client, settings = api
    plain = upload(client, GOOD, "tiny.svm").json()
    again = upload(client, bz2.compress(GOOD), "tiny.bz2")
    assert again.status_code == 200 and again.json()["id"] == plain["id"]
    assert stored(settings) == [f"{plain['sha256']}.svm"]


# (content, line, words the message must contain); each is also uploaded bzip2-compressed
MALFORMED = [
    (b"", None, ["empty"]),
    (b"\n# nothing but a comment\n", None, ["empty"]),
    (b"1\n-1\n", None, ["no feature values"]),
    (b"1 1:1\n1 3=0.5\n", 2, ["'3=0.5' is not <index>:<value>"]),
    (b"1 3:0.5,4:1\n", 1, ["value '0.5,4:1' of feature 3 is not a number"]),
    (b"1 3:0.5;4:1\n", 1, ["value '0.5;4:1' of feature 3 is not a number"]),
    (b"1,0.5,2\n", 1, ["label '1,0.5,2' is not a number", "CSV"]),
    (b"1 1:1\n-1 0:0.5 2:1\n", 2, ["feature index 0", "start at 1"]),
    (b"1 -4:0.5\n", 1, ["feature index -4", "start at 1"]),
    (b"1 x:1\n", 1, ["feature index 'x'", "not an integer"]),
    (b"1 1:1\n1 2:nan\n", 2, ["'nan'", "not a finite number"]),
    (b"1 2:inf\n", 1, ["'inf'", "not a finite number"]),
    (b"1 2:-1e999\n", 1, ["'-1e999'", "not a finite number"]),
    (b"1 1:1\nyes 1:1\n", 2, ["label 'yes' is not a number"]),
    (b"inf 1:1\n", 1, ["label 'inf'", "not a finite number"]),
    (b"1 3:1 2:1\n", 1, ["feature index 2 after 3", "increasing"]),
    (b"1 1:1\n1 2:1 2:5\n", 2, ["feature index 2 after 2", "unique"]),
    (b"1 1:1 2\n", 1, ["'2' is not <index>:<value>"]),
    (b"\x89PNG\r\n\x1a\n\x00", 1, ["label '\\x89PNG' is not a number"]),
]


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "bz2"])
@pytest.mark.parametrize(("content", "line", "words"), MALFORMED)
def test_malformed_svmlight_is_refused_and_nothing_is_registered(
    api, content, line, words, compress
):
    client, settings = api
    body = bz2.compress(content) if compress else content
    response = upload(client, body, "../../etc/bad.svm")
    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", "file"]
    where = "bad.svm" if line is None else f"bad.svm: line {line}"
    assert error["msg"].startswith(f"{where}: "), error["msg"]
    for word in words:
        assert word in error["msg"]
    assert "etc" not in error["msg"]  # only the last component of the client's name is used
    assert_nothing_registered(client, settings)


def test_index_beyond_n_features_is_refused(api):
    client, settings = api
    response = upload(client, b"1 1:1\n-1 7:1\n", n_features="5")
    assert response.status_code == 422
    assert response.json()["detail"][0]["msg"] == (
        "bad.svm: line 2: feature index 7 is larger than n_features=5"
    )
    assert_nothing_registered(client, settings)


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (b"BZh9" + b"\x00" * 100, "bzip2"),
        (bz2.compress(GOOD * 50)[:-20], "bzip2"),  # truncated
        (gzip.compress(GOOD)[:-6], "gzip"),
        (b"\x1f\x8b" + b"garbage" * 10, "gzip"),
    ],
    ids=["bz2-garbage", "bz2-truncated", "gz-truncated", "gz-garbage"],
)
def test_corrupt_compressed_upload_is_a_422(api, body, kind):
    client, settings = api
    response = upload(client, body, "faceoff.data.bz2")
    assert response.status_code == 422, response.text
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", "file"]
    assert error["msg"].startswith(f"faceoff.data.bz2: not valid {kind} data")
    assert_nothing_registered(client, settings)


def test_upload_over_the_size_limit_is_a_413(api):
    client, settings = api
    response = upload(client, b"+1 1:0.5 3:1\n" * (MAX_BYTES // 10), "big.svm")
    assert response.status_code == 413
    assert response.json() == {
        "detail": f"the file is larger than the limit of {MAX_BYTES} bytes "
        "(FACEOFF_MAX_UPLOAD_BYTES)"
    }
    assert_nothing_registered(client, settings)


@pytest.mark.parametrize("compress", [bz2.compress, gzip.compress], ids=["bz2", "gz"])
def test_decompression_bomb_is_a_413(api, compress):
    client, settings = api
    bomb = compress(b"0" * 50_000_000)
    assert len(bomb) < MAX_BYTES
    response = upload(client, bomb, "bomb.svm")
    assert response.status_code == 413
    assert response.json() == {
        "detail": f"the decompressed size exceeds the limit of {MAX_DECOMPRESSED} bytes "
        "(FACEOFF_MAX_UPLOAD_DECOMPRESSED_BYTES)"
    }
    assert_nothing_registered(client, settings)


def test_a_bomb_is_decompressed_in_bounded_memory(tmp_path):
    """50 MB of zeros in 81 bytes of bzip2, under a 20 MB cap: refused once 20 MB are
    written, while Python never holds more than a few chunks of it."""
    bomb = bz2.compress(b"0" * 50_000_000)
    tracemalloc.start()
    try:
        with pytest.raises(UploadTooLarge, match="decompressed size exceeds the limit"):
            receive(
                io.BytesIO(bomb), tmp_path, "bomb.bz2", UploadLimits(1 << 20, 20_000_000, 10**9)
            )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8_000_000
    assert list(tmp_path.iterdir()) == []
