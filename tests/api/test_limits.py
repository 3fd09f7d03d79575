"""Request bodies over the limit are refused while they stream in, declared or chunked."""

from __future__ import annotations

from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from tests.backends import LOCAL

LIMIT = 64 * 1024


def _client(sqlite_url, settings_for) -> TestClient:
    settings = settings_for(sqlite_url, MAX_UPLOAD_BYTES=LIMIT)
    return TestClient(create_app(settings), client=LOCAL)


def test_declared_length_over_the_limit_is_refused(sqlite_url, settings_for):
    client = _client(sqlite_url, settings_for)
    body = b"x" * (LIMIT + 2 * 1024 * 1024)
    response = client.post(
        "/api/v1/datasets/upload", content=body, headers={"content-type": "text/plain"}
    )
    assert response.status_code == 413
    assert "FACEOFF_MAX_UPLOAD_BYTES" in response.json()["detail"]


def test_chunked_body_over_the_limit_is_refused(sqlite_url, settings_for, tmp_path):
    client = _client(sqlite_url, settings_for)

    def chunks():  # a multipart upload streamed without Content-Length
        yield (
            b'--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.svm"\r\n'
            b"Content-Type: text/plain\r\n\r\n"
        )
        for _ in range(64):
            yield b"1 1:0.5\n" * 8192  # 64 KiB each, 4 MiB in all
        yield b"\r\n--XyZ--\r\n"

    response = client.post(
        "/api/v1/datasets/upload",
        content=chunks(),
        headers={"content-type": "multipart/form-data; boundary=XyZ"},
    )
    assert response.status_code == 413
    assert "request body larger than" in response.json()["detail"]
    uploads = tmp_path / "home" / "uploads"
    assert not uploads.exists() or not any(uploads.iterdir())


def test_small_bodies_pass(sqlite_url, settings_for):
    client = _client(sqlite_url, settings_for)
    assert client.get("/api/v1/solvers").status_code == 200
    response = client.post("/api/v1/jobs", json={"dataset": "x"})
    assert response.status_code == 422
