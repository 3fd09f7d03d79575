"""Hostile input never makes the API answer 5xx, never costs more than a small JSON body, and
never comes back in an error body: non-finite numbers, overflowing integer parameters, lone
surrogates and control characters in any string, cross-parameter rules of the solvers, huge
bodies (capped by FACEOFF_MAX_JSON_BYTES, refused before authentication would parse them).

The 4xx table runs on the ASGI app over a fresh PostgreSQL database and Redis; the body-size,
memory and authenticate-before-parse checks run against a real uvicorn process.
"""

from __future__ import annotations

import json
import select
import socket
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from faceoff.api.main import create_app
from faceoff.core import auth
from faceoff.core.db import session_scope
from faceoff.core.settings import Settings
from tests.backends import LOCAL
from tests.reliability.servers import peak_rss, running_api

JOB = '{"dataset": "a1a", "loss": "logistic", "l2": 1e-4, "solver": "dual_cd"%s}'
SWEEP = '{"datasets": ["a1a"], "losses": ["logistic"], "l2": [1e-4], "solvers": ["agd"]%s}'
REFERENCE = '{"dataset": "a1a", "loss": "logistic", "l2": 1e-4%s}'
SURROGATE = "\\udc00"  # as JSON writes it: json.loads gives the lone surrogate "\udc00"


def job(extra: str) -> str:
    return JOB % f", {extra}"


def with_params(solver: str, params: str) -> str:
    return JOB.replace('"dual_cd"', f'"{solver}"') % f', "params": {params}'


# (path, raw JSON body, the loc of the refused field)
HOSTILE_JSON = [
    # non-finite numbers, JSON's NaN/Infinity and overflowing literals (1e400 parses as inf)
    ("/jobs", job('"positive": [NaN]'), ["body", "positive", 0]),
    ("/jobs", job('"positive": [Infinity]'), ["body", "positive", 0]),
    ("/jobs", job('"positive": [1, 1e400]'), ["body", "positive", 1]),
    ("/sweeps", SWEEP % ', "positive": [NaN]', ["body", "positive", 0]),
    ("/sweeps", SWEEP % ', "gamma": Infinity', ["body", "gamma"]),
    ("/references", REFERENCE % ', "positive": [-Infinity]', ["body", "positive", 0]),
    # integer solver parameters set to Infinity or 1e400
    ("/jobs", with_params("spdc", '{"batch_size": Infinity}'), ["body", "params", "batch_size"]),
    ("/jobs", with_params("spdc", '{"batch_size": 1e400}'), ["body", "params", "batch_size"]),
    ("/jobs", with_params("lbfgs", '{"memory": 1e400}'), ["body", "params", "memory"]),
    ("/jobs", with_params("lbfgs", '{"memory": -Infinity}'), ["body", "params", "memory"]),
    ("/jobs", with_params("dgpd", '{"inner_passes": 1e400}'), ["body", "params", "inner_passes"]),
    ("/jobs", with_params("saga", '{"step_scale": 1e400}'), ["body", "params", "step_scale"]),
    (
        "/sweeps",
        SWEEP.replace('"agd"', '{"solver": "dgpd", "params": {"inner_passes": [1, Infinity]}}')
        % "",
        ["body", "solvers", 0, "params", "inner_passes"],
    ),
    # a lone surrogate in any string
    ("/jobs", JOB.replace("a1a", SURROGATE) % "", ["body", "dataset"]),
    ("/jobs", JOB.replace("dual_cd", SURROGATE) % "", ["body", "solver"]),
    ("/jobs", job(f'"params": {{"{SURROGATE}": 1}}'), ["body", "params"]),
    ("/jobs", job(f'"params": {{"sampling": "{SURROGATE}"}}'), ["body", "params", "sampling"]),
    ("/sweeps", SWEEP % f', "name": "x{SURROGATE}"', ["body", "name"]),
    ("/sweeps", SWEEP.replace('"a1a"', f'"{SURROGATE}"') % "", ["body", "datasets", 0]),
    ("/sweeps", SWEEP.replace('"agd"', f'"{SURROGATE}"') % "", ["body", "solvers", 0]),
    (
        "/datasets",
        f'{{"name": "{SURROGATE}", "source": {{"kind": "sklearn", "name": "breast_cancer"}}}}',
        ["body", "name"],
    ),
    (
        "/datasets",
        f'{{"name": "x", "source": {{"kind": "registry", "name": "a{SURROGATE}"}}}}',
        ["body", "source", "registry", "name"],
    ),
    ("/references", REFERENCE.replace("a1a", SURROGATE) % "", ["body", "dataset"]),
    (
        "/references",
        REFERENCE % f', "solver": "{SURROGATE}"',
        ["body", "solver"],
    ),
    ("/jobs", job(f'"{SURROGATE}": 1'), ["body"]),  # an unknown field named by a surrogate
    # control characters
    ("/jobs", JOB.replace("a1a", "a\\u0000b") % "", ["body", "dataset"]),
    ("/sweeps", SWEEP % ', "name": "x\\u001b[2J"', ["body", "name"]),
    ("/sweeps", SWEEP.replace('"a1a"', '"a1a\\u0085"') % "", ["body", "datasets", 0]),
    # a rule between parameters, checked by the solver's own code at submission
    ("/jobs", with_params("spdc", '{"alpha": 0.5}'), ["body", "params", "alpha"]),
    (
        "/sweeps",
        SWEEP.replace('"agd"', '{"solver": "spdc", "params": {"alpha": [0.5]}}') % "",
        ["body", "solvers", 0, "params", "alpha"],
    ),
]


@pytest.fixture
def client(postgres_url, redis_url, settings_for) -> Iterator[TestClient]:
    """The API on a fresh PostgreSQL database (which refuses NUL bytes), from this machine."""
    settings = settings_for(postgres_url, redis_url)
    with TestClient(create_app(settings), client=LOCAL, raise_server_exceptions=False) as client:
        yield client


def assert_refused(response: httpx.Response, loc: list | None = None) -> dict:
    """A 4xx whose JSON body names the field (``loc`` is a prefix of some error's loc)."""
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:500])
    body = response.json()
    if loc is not None:
        assert response.status_code == 422, body
        locs = [item["loc"] for item in body["detail"]]
        assert any(item[: len(loc)] == loc for item in locs), (loc, body)
        assert all(item["msg"] for item in body["detail"]), body
    return body


@pytest.mark.parametrize(("path", "raw", "loc"), HOSTILE_JSON)
def test_hostile_json_gets_a_4xx_naming_the_field(client, path, raw, loc):
    content = raw.encode()
    response = client.post(
        f"/api/v1{path}", content=content, headers={"content-type": "application/json"}
    )
    assert_refused(response, loc)
    assert len(response.content) < 4096


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("dataset=%00", "dataset"),
        ("solver=a%1Fb", "solver"),
        ("dataset=%ED%B0%80", "dataset"),  # a surrogate's bytes: not UTF-8
        ("dataset=%FF%FE", "dataset"),
        ("loss=%00", "loss"),
        ("status=" + "x" * 10_000, "status"),
    ],
)
def test_hostile_query_strings_get_a_422(client, query, field):
    body = assert_refused(client.get(f"/api/v1/jobs?{query}"), ["query", field])
    assert len(json.dumps(body)) < 4096


UPLOAD = b"1 1:1\n-1 2:1\n"


@pytest.mark.parametrize(
    ("form", "field"),
    [
        ({"name": "\udc00".encode("utf-8", "surrogatepass")}, "name"),
        ({"name": b"a\x00b"}, "name"),
        ({"name": "x" * 100_000}, "name"),
        ({"n_features": "1e400"}, "n_features"),
        ({"n_features": "Infinity"}, "n_features"),
        ({"n_features": "NaN"}, "n_features"),
        ({"n_features": "\udc00".encode("utf-8", "surrogatepass")}, "n_features"),
        ({"n_features": str(2**64)}, "n_features"),
    ],
)
def test_hostile_upload_form_fields_get_a_422(client, form, field):
    response = client.post(
        "/api/v1/datasets/upload", files={"file": ("x.svm", UPLOAD)}, data={"name": "ok", **form}
    )
    body = assert_refused(response, ["body", field])
    assert len(json.dumps(body)) < 4096


def test_error_bodies_never_echo_large_inputs(client):
    big = "x" * 900_000
    cases = [
        job(f'"params": {{"memory": "{big}"}}').replace("dual_cd", "lbfgs"),  # in a message
        JOB.replace("a1a", big) % "",  # a too-long string
        job(f'"params": {{"{big}": 1}}'),  # an unknown parameter's name: in the loc
        # a missing field: its "input" is the whole body
        '{"loss": "logistic", "l2": 1e-4, "solver": "agd", "positive": [' + "1," * 400_000 + "1]}",
    ]
    for raw in cases:
        assert len(raw) < 1024 * 1024
        response = client.post(
            "/api/v1/jobs", content=raw.encode(), headers={"content-type": "application/json"}
        )
        assert_refused(response)
        assert len(response.content) < 4096, response.content[:300]


def test_a_maximal_sweep_fits_the_json_body_limit(client):
    """Every list of a sweep at its longest, with the longest items the schema accepts, is
    well under FACEOFF_MAX_JSON_BYTES (and is refused for its size in jobs, not in bytes)."""
    spdc = {
        "batch_size": 65536,
        "sampling": "weighted",
        "alpha": 0.12345678901234567,
        "tau": 1.2345678901234567e-300,
        "sigma": 1.2345678901234567e-300,
        "theta": 0.12345678901234567,
        "updates": "dense",
    }
    sweep = {
        "name": "n" * 200,
        "datasets": [f"{i:04d}" + "d" * 196 for i in range(1000)],
        "normalize": "rows",
        "positive": [-1.2345678901234567e-300] * 1000,
        "losses": ["logistic", "smooth_hinge", "squared"],
        "gamma": 1.2345678901234567e-06,  # at least GAMMA_MIN
        "l2": [1.2345678901234567e-300] * 1000,
        "l1": [1.2345678901234567e-300] * 1000,
        "solvers": [{"solver": "spdc", "params": spdc}] * 1000,
        "seeds": [2**31 - 1] * 1000,
        "stop": {"max_epochs": 1e7, "max_seconds": 86400, "tol": 0.12345678901234567},
        "force": False,
    }
    raw = json.dumps(sweep).encode()
    assert len(raw) < Settings().MAX_JSON_BYTES / 2
    response = client.post(
        "/api/v1/sweeps", content=raw, headers={"content-type": "application/json"}
    )
    assert response.status_code == 422, response.text[:300]
    assert "jobs, more than this server's limit" in response.json()["detail"][0]["msg"]


# ---------------------------------------------------------------- a real uvicorn process


def _read_response(sock: socket.socket, timeout: float) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of the next response on ``sock``; 100 Continue is status 100."""
    sock.settimeout(timeout)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed before a response: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, v in (x.split(":", 1) for x in lines[1:])}
    length = int(headers.get("content-length", 0))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return status, headers, body


def _request_head(port: int, path: str, headers: dict[str, str]) -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{port}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def post_expecting_continue(port: int, path: str, headers: dict[str, str], length: int):
    """POST announcing a ``length``-byte JSON body with ``Expect: 100-continue``: the server
    asks for the body (100) only once the application reads it. Returns the first response
    and the seconds it took; the body is never sent."""
    head = {
        "Content-Type": "application/json",
        "Content-Length": str(length),
        "Expect": "100-continue",
        **headers,
    }
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(_request_head(port, path, head))
        response = _read_response(sock, timeout=10)
    return response, time.monotonic() - started


def post_chunked(port: int, path: str, headers: dict[str, str], total: int):
    """POST a chunked JSON body (no Content-Length) of up to ``total`` bytes, stopping as soon
    as the server answers; returns (status, headers, body) and the bytes sent."""
    head = {"Content-Type": "application/json", "Transfer-Encoding": "chunked", **headers}
    piece = b"[" + b"0," * 32767 + b"0"  # 64 KiB of a JSON list of zeros
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(_request_head(port, path, head))
        try:
            while sent < total and not select.select([sock], [], [], 0)[0]:
                data = piece if sent == 0 else b"," + piece[1:]
                sock.sendall(b"%x\r\n%s\r\n" % (len(data), data))
                sent += len(data)
            if sent >= total:
                sock.sendall(b"1\r\n]\r\n0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed: read its answer
        return _read_response(sock, timeout=60), sent


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident memory (VmHWM), MB."""
    return peak_rss(pid) / 2**20


@pytest.fixture
def served(postgres_url, redis_url, tmp_path) -> Iterator[tuple[int, int, dict[str, str]]]:
    """(port, pid, Authorization header of a valid token) of ``uvicorn faceoff.api.main:app`` with
    authentication on, configured from the environment as in production."""
    with session_scope(postgres_url) as session:
        _, secret = auth.create_token(session, "alpha")
    env = {
        "FACEOFF_HOME": str(tmp_path / "home"),
        "FACEOFF_DATABASE_URL": postgres_url,
        "FACEOFF_BROKER_URL": redis_url,
        "FACEOFF_QUEUE": f"faceoff-test-input-{uuid.uuid4().hex[:8]}",
        "FACEOFF_AUTH_ENABLED": "true",
    }
    with running_api(env, tmp_path / "faceoff.api.log") as api:
        yield api.port, api.process.pid, {"Authorization": f"Bearer {secret}"}


def test_requests_are_authenticated_before_their_body_is_read(served):
    """No token, a wrong token: 401 at once, without the server asking for the body."""
    port, _, token = served
    length = 900 * 1024  # under the JSON body limit: only authentication can refuse it
    for headers in ({}, {"Authorization": "Bearer fo_not-a-real-token"}):
        for path in ("/api/v1/jobs", "/api/v1/sweeps", "/api/v1/datasets/upload"):
            (status, _, body), seconds = post_expecting_continue(port, path, headers, length)
            assert status == 401, (path, status, body[:200])
            assert "token" in json.loads(body)["detail"]
            assert seconds < 5
    # with a valid token the server does ask for the body
    (status, _, _), _ = post_expecting_continue(port, "/api/v1/jobs", token, length)
    assert status == 100


def test_large_json_bodies_are_refused_in_bounded_time_and_memory(served):
    port, pid, token = served
    for _ in range(3):  # warm up: the first requests load what every request needs
        response = httpx.get(f"http://127.0.0.1:{port}/api/v1/jobs", headers=token, timeout=10)
        assert response.status_code == 200, response.text
    baseline = peak_rss_mb(pid)
    limit = Settings().MAX_JSON_BYTES
    # declared: refused before a byte of it is read, with or without a token
    for headers in ({}, token):
        (status, _, body), seconds = post_expecting_continue(
            port, "/api/v1/jobs", headers, 50 * 1024 * 1024
        )
        assert status == 413 and "FACEOFF_MAX_JSON_BYTES" in json.loads(body)["detail"]
        assert seconds < 5
    # streamed without a length: cut off once the limit has passed
    started = time.monotonic()
    (status, _, body), sent = post_chunked(port, "/api/v1/sweeps", token, 16 * 1024 * 1024)
    assert status == 413, body[:300]
    assert "FACEOFF_MAX_JSON_BYTES" in json.loads(body)["detail"]
    assert sent < 16 * limit and time.monotonic() - started < 10
    assert peak_rss_mb(pid) - baseline < 64, (baseline, peak_rss_mb(pid))
    # the upload route keeps its own, larger limit
    multipart = {"Content-Type": "multipart/form-data; boundary=b", **token}
    (status, _, _), _ = post_expecting_continue(
        port, "/api/v1/datasets/upload", multipart, 2 * limit
    )
    assert status == 100


def test_a_lone_surrogate_in_a_raw_query_string_is_a_422(served):
    """Raw (not percent-encoded) non-UTF-8 bytes in the request target."""
    port, _, token = served
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        head = "GET /api/v1/jobs?dataset=\udc00&solver=a\x7f HTTP/1.1\r\nHost: x\r\n"
        sock.sendall(head.encode("utf-8", "surrogatepass") + b"Authorization: ")
        sock.sendall(token["Authorization"].encode() + b"\r\n\r\n")
        status, _, body = _read_response(sock, timeout=10)
    assert 400 <= status < 500, (status, body[:300])
