"""Compressed uploads cannot exhaust the API's memory: a real uvicorn API on PostgreSQL, its
address space capped (so a regression fails with MemoryError instead of swapping the
machine), fed round 3's bomb and its variants, its peak RSS (VmHWM) read from /proc.

Round 3 found an 8 MB gzip of repeated members expanding to 1.8 GB of svmlight text and 368M
values — every limit of the time met — raising the API from 216 MB to 4,956 MB RSS until it
answered 500 MemoryError after 174 s. Now an upload is counted while it streams in and
refused at ``FACEOFF_API_MAX_UPLOAD_VALUES`` (413 naming it), and validated in blocks: the
API never holds an upload's matrix, whatever its size.
"""

from __future__ import annotations

import bz2
import gzip
import io
import random
import time
import zipfile
from pathlib import Path

import httpx
import pytest

from faceoff.core.settings import Settings
from tests.reliability.servers import ApiProcess, running_api

API_ADDRESS_SPACE = 3 * 1024**3  # the API's cap: a regression dies of MemoryError, not swap
RSS_GROWTH_BOUND = 96 * 1024**2  # no upload may raise the API's peak RSS by more
BOMB_SECONDS = 120.0  # the bomb is refused well within this on a loaded 2-core machine
GOOD = b"+1 1:0.5 3:1\n-1 2:1.5\n+1 1:1 2:2 3:3\n"


def svmlight_lines(count: int, seed: int = 0) -> bytes:
    """``count`` lines of 90 short values each (~4.9 bytes a value, as round 3's bomb), a few
    values random so that they compress like data, not like a run of one byte."""
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        values = " ".join(
            f"{j}:{rng.randint(2, 9) if rng.random() < 4e-4 else 1}" for j in range(1, 91)
        )
        lines.append(f"1 {values}\n")
    return "".join(lines).encode()


def gzip_bomb() -> tuple[bytes, int, int]:
    """(round 3's bomb: 102 identical gzip members, 8.1 MiB; its text's bytes; values)."""
    text = svmlight_lines(40_000)
    member = gzip.compress(text, 6)
    return member * 102, len(text) * 102, text.count(b":") * 102


@pytest.fixture(scope="module")
def bomb() -> tuple[bytes, int, int]:
    return gzip_bomb()


@pytest.fixture
def api(postgres_url, tmp_path):
    """uvicorn on PostgreSQL with the default limits (sized from this machine's memory),
    its address space capped, warmed up by an upload and its statistics."""
    home = tmp_path / "home"
    env = {"FACEOFF_DATABASE_URL": postgres_url, "FACEOFF_HOME": str(home)}
    with (
        running_api(env, home / "api.log", max_address_space=API_ADDRESS_SPACE) as server,
        httpx.Client(base_url=server.url, timeout=BOMB_SECONDS) as client,
    ):
        warm = upload(client, GOOD, "warm.svm")
        assert warm.status_code == 201, warm.text
        assert client.get(f"/datasets/{warm.json()['id']}/stats").status_code == 200
        yield client, server, home


def upload(client: httpx.Client, content: bytes, filename: str, **form) -> httpx.Response:
    return client.post("/datasets/upload", files={"file": (filename, content)}, data=form)


def assert_refused_with_bounded_memory(server: ApiProcess, response, status: int) -> None:
    assert response.status_code == status, response.text[:500]
    assert server.process.poll() is None, server.log()[-3000:]


def stored(home: Path) -> list[str]:
    return sorted(p.name for p in (home / "uploads").iterdir())


def test_the_gzip_bomb_is_refused_early_with_bounded_memory(api, bomb):
    client, server, home = api
    content, text_bytes, values = bomb
    limit = Settings().API_MAX_UPLOAD_VALUES  # this machine's default, as the API's
    assert len(content) < 9 * 2**20 and text_bytes > 1.8e9 and values > 3.6e8
    assert values > limit and text_bytes < Settings().MAX_UPLOAD_DECOMPRESSED_BYTES
    before = server.peak_rss()
    started = time.monotonic()
    response = upload(client, content, "bomb.gz")
    seconds = time.monotonic() - started
    growth = server.peak_rss() - before
    print(
        f"gzip bomb ({len(content)} bytes, {text_bytes} bytes of text, {values} values): "
        f"{response.status_code} in {seconds:.1f} s; peak RSS {before / 2**20:.0f} → "
        f"{server.peak_rss() / 2**20:.0f} MiB"
    )
    assert_refused_with_bounded_memory(server, response, 413)
    assert response.json()["detail"] == (
        f"the file holds more than {limit} feature values, this server's limit for an upload "
        "(FACEOFF_API_MAX_UPLOAD_VALUES)"
    )
    assert growth < RSS_GROWTH_BOUND, f"peak RSS grew by {growth / 2**20:.0f} MiB"
    assert seconds < BOMB_SECONDS
    assert stored(home) == [f"{upload_sha(client)}.svm"]  # only the warm-up's file


def upload_sha(client: httpx.Client) -> str:
    (dataset,) = client.get("/datasets").json()["data"]
    return dataset["sha256"]


def test_bombs_of_every_container_are_refused_with_bounded_memory(api):
    """bz2 streams, gzip inside gzip, zip inside gzip, gzip inside bzip2, a zip archive: the
    values cap refuses what expands, the first bytes refuse a second layer."""
    client, server, home = api
    text = svmlight_lines(4_000)
    limit = Settings().API_MAX_UPLOAD_VALUES
    copies = limit // text.count(b":") + 2  # just over the values cap
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("data.svm", text * 50)
    cases = {
        "bz2 streams": (bz2.compress(text) * copies, 413, "FACEOFF_API_MAX_UPLOAD_VALUES"),
        "gzip in gzip": (gzip.compress(gzip.compress(text * 50)), 422, "gzip data holding gzip"),
        "zip in gzip": (gzip.compress(archive.getvalue()), 422, "gzip data holding zip"),
        "gzip in bzip2": (bz2.compress(gzip.compress(text)), 422, "bzip2 data holding gzip"),
        "zip": (archive.getvalue(), 422, "zip data; upload svmlight text"),
    }
    before = server.peak_rss()
    for what, (content, status, words) in cases.items():
        response = upload(client, content, "x.svm")
        assert_refused_with_bounded_memory(server, response, status)
        assert words in response.text, (what, response.text)
    growth = server.peak_rss() - before
    assert growth < RSS_GROWTH_BOUND, f"peak RSS grew by {growth / 2**20:.0f} MiB"
    assert len(stored(home)) == 1
    # a large valid upload is validated in blocks: the API holds no matrix of it
    big = svmlight_lines(60_000, seed=1)  # 26 MB of text, 5.4M values
    made = upload(client, gzip.compress(big, 1), "big.svm.gz", name="big")
    assert made.status_code == 201, made.text
    assert made.json()["nnz"] == big.count(b":") and made.json()["n_samples"] == 60_000
    growth = server.peak_rss() - before
    print(f"5.4M-value upload: peak RSS grew by {growth / 2**20:.0f} MiB")
    assert growth < RSS_GROWTH_BOUND
