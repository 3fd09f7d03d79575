"""A hostile team member against the running service: a bounded replay of every class of bad
input found by hand (non-finite and huge numbers, lone surrogates and control characters in
every string, oversized and malformed bodies, out-of-range ids and queries, forged headers,
hostile uploads, someone else's dataset name) against a real uvicorn API on PostgreSQL with
Redis and a real worker, authentication on and two teams.

It asserts what the service promises: no answer is a 5xx, the API's memory stays under a
stated bound throughout, the service still runs real jobs to the end afterwards and leaves
no job queued.
"""

from __future__ import annotations

import io
import itertools
import json
import time
from collections import Counter
from dataclasses import dataclass, field

import httpx
import psutil
import pytest

from faceoff.core import auth
from faceoff.core.db import session_scope
from faceoff.core.secret_key import make_secret_key
from tests.reliability.servers import TINY, api_env, running_api
from tests.service.workers import running_worker

RSS_BOUND_BYTES = 400 * 1024**2  # the API process, measured after every request
BIG_JSON_BYTES = 8 * 1024**2  # far beyond the JSON body cap, far below the upload cap
REPLAY_SECONDS = 240.0  # the whole replay must end well within this

NUMBERS = [
    "NaN",
    "Infinity",
    "-Infinity",
    "1e400",
    "-1e400",
    "2147483648",
    "9223372036854775808",
    "-1",
    "0",
    "1e-400",
    '"1"',
    "null",
    "[]",
    "{}",
    "true",
]
STRINGS = [
    "\\udc00",
    "\\ud800x",
    "a\\u0000b",
    "line\\nbreak",
    "\\t",
    "",
    " ",
    "a" * 5000,
    "../../etc/passwd",
    "%2e%2e%2f",
    "a9a",
    "é\\u202e",
    "\\uffff",
]
JOB = {
    "dataset": "adv-tiny",
    "loss": "logistic",
    "l2": 1e-2,
    "solver": "dual_cd",
    "stop": {"max_epochs": 5, "max_seconds": 10},
}
SWEEP = {
    "name": "adv",
    "datasets": ["adv-tiny"],
    "losses": ["logistic"],
    "l2": [1e-2],
    "solvers": ["dual_cd", {"solver": "spdc", "params": {"batch_size": [1, 4]}}],
    "seeds": [0],
    "stop": {"max_epochs": 5, "max_seconds": 10},
}
MARK = "\x00MARK\x00"  # replaced by a raw JSON token in the serialized body


@dataclass
class Request:
    """One request of the replay: what it is, and how to send it."""

    what: str
    method: str
    path: str
    content: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    files: dict | None = None
    data: dict | None = None
    token: str = "a"  # "a", "b" or "" (no token)


def _raw(body: dict, path: tuple, token: str) -> bytes:
    """``body`` as JSON with the value at ``path`` replaced by the raw JSON ``token``."""
    copy = json.loads(json.dumps(body))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = MARK
    return json.dumps(copy).replace(json.dumps(MARK), token).encode()


def _leaves(body, prefix=()):
    """Paths of every leaf of a JSON body (list items included)."""
    if isinstance(body, dict):
        for key, value in body.items():
            yield from _leaves(value, (*prefix, key))
    elif isinstance(body, list):
        for index, value in enumerate(body):
            yield from _leaves(value, (*prefix, index))
    else:
        yield prefix


def _json(what: str, path: str, content: bytes, token: str = "a") -> Request:
    headers = {"Content-Type": "application/json"}
    return Request(what, "POST", path, content, headers, token=token)


def corpus() -> list[Request]:
    """The replay: every class of hostile input, against every operation it applies to."""
    requests: list[Request] = []
    job = {**JOB, "positive": [1.0], "params": {"sampling": "uniform", "shrinking": "off"}}
    spdc = {**JOB, "solver": "spdc", "params": {"batch_size": 4, "alpha": 0.5}}
    lbfgs = {**JOB, "solver": "lbfgs", "params": {"memory": 10}}
    dgpd = {**JOB, "solver": "dgpd", "params": {"inner_passes": 5}}
    reference = {k: v for k, v in JOB.items() if k != "stop"} | {"positive": [1.0]}
    bodies = {
        "/jobs": [job, spdc, lbfgs, dgpd],
        "/sweeps": [SWEEP],
        "/references": [reference],
        "/datasets": [{"name": "adv-other", "source": TINY}],
    }
    # every leaf of every body: non-finite/huge numbers and hostile strings
    for path, examples in bodies.items():
        for body in examples:
            for leaf in _leaves(body):
                values = NUMBERS + [json.dumps(s).replace("\\\\", "\\") for s in STRINGS]
                for value in values:
                    where = ".".join(map(str, leaf))
                    requests.append(
                        _json(f"{path} {where}={value[:20]}", path, _raw(body, leaf, value))
                    )
    # a lone surrogate as a key (params, and the body itself)
    requests.append(
        _json(
            "params key surrogate",
            "/jobs",
            _raw({**JOB, "params": {"x": 1}}, ("params",), '{"\\udc00": 1}'),
        )
    )
    requests.append(_json("body key surrogate", "/jobs", json.dumps({**JOB, "\udc00": 1}).encode()))
    # malformed and oversized bodies, with and without a token
    big = json.dumps({**JOB, "pad": "x" * BIG_JSON_BYTES}).encode()
    nested = b"[" * 100_000 + b"]" * 100_000
    for token in ("a", ""):
        for path in ("/jobs", "/sweeps", "/references", "/datasets"):
            requests += [
                _json(f"{path} big body token={token!r}", path, big, token),
                _json(f"{path} nested", path, nested, token),
                _json(f"{path} truncated", path, b'{"dataset": "a', token),
                _json(f"{path} invalid utf-8", path, b'{"dataset": "\xff\xfe"}', token),
                _json(f"{path} empty", path, b"", token),
                _json(f"{path} list", path, b"[1, 2, 3]", token),
                Request(
                    f"{path} form",
                    "POST",
                    path,
                    b"a=1",
                    {"Content-Type": "text/plain"},
                    token=token,
                ),
            ]
    # ids, queries and headers
    for path in ("/jobs/{}", "/jobs/{}/trace", "/sweeps/{}", "/datasets/{}", "/datasets/{}/stats"):
        for value in ("2147483648", "-1", "0", "1e400", "NaN", "%ED%B3%80", "1" * 400):
            requests.append(Request(f"GET {path} {value[:12]}", "GET", path.format(value)))
    requests.append(Request("cancel huge id", "POST", "/jobs/2147483648/cancel", b""))
    queries = {
        "/jobs": ["limit", "offset", "status", "sweep_id", "solver", "dataset", "loss"],
        "/datasets": ["limit", "offset"],
        "/sweeps": ["limit", "offset"],
        "/references": ["objective_hash", "dataset", "loss", "penalty", "l1", "l2", "limit"],
        "/datasets/1/stats": ["loss", "l2", "gamma", "normalize"],
        "/jobs/1/trace": ["after_seq", "max_points"],
    }
    for path, names in queries.items():
        for name, value in itertools.product(
            names, ("1e400", "NaN", "-1", "2147483648", "%ED%B3%80", "%00", "x" * 3000)
        ):
            requests.append(
                Request(f"GET {path}?{name}={value[:12]}", "GET", f"{path}?{name}={value}")
            )
    for value in (
        "Bearer " + "x" * 8000,
        "Bearer",
        "Basic Zm9vOmJhcg==",
        "Bearer \t x",
        "bearer a b c",
    ):
        requests.append(
            Request(
                f"Authorization {value[:16]}",
                "GET",
                "/jobs",
                headers={"Authorization": value},
                token="",
            )
        )
    requests.append(
        Request("forwarded", "GET", "/jobs", headers={"X-Forwarded-For": "8.8.8.8, \x7f"}, token="")
    )
    # uploads
    uploads = {
        "declared 2^31-1 features": (b"1 1:1\n-1 2:1\n", {"n_features": "2147483647"}),
        "declared 1e400 features": (b"1 1:1\n-1 2:1\n", {"n_features": "1e400"}),
        "declared -1 features": (b"1 1:1\n-1 2:1\n", {"n_features": "-1"}),
        "index 2^31": (b"1 2147483648:1\n-1 1:1\n", {}),
        "index 2^63": (b"1 9223372036854775808:1\n-1 1:1\n", {}),
        "value NaN": (b"1 1:nan\n-1 2:1\n", {}),
        "value 1e400": (b"1 1:1e400\n-1 2:1\n", {}),
        "label inf": (b"inf 1:1\n-1 2:1\n", {}),
        "empty": (b"", {}),
        "binary": (bytes(range(256)) * 8, {}),
        "surrogate bytes": (b"1 1:1 # \xed\xb3\x80\n-1 2:1\n", {}),
        "public name": (b"1 1:1\n-1 2:1\n", {"name": "a9a"}),
        "surrogate name": (b"1 1:1\n-1 2:1\n", {"name": "\udc00".encode("utf-8", "surrogatepass")}),
        "bz2 garbage": (b"BZh91AY&SY" + b"\x00" * 64, {}),
    }
    for i, (what, (content, form)) in enumerate(uploads.items()):
        data = {"name": f"adv-upload-{i}", **form}
        requests.append(
            Request(
                f"upload {what}",
                "POST",
                "/datasets/upload",
                files={"file": ("x.svm", io.BytesIO(content))},
                data=data,
            )
        )
    # someone else's name, on every path of the other team
    for name in ("a9a", "breast_cancer", "adv-tiny"):
        source = {"name": name, "source": {**TINY, "n_samples": 50, "n_features": 5}}
        requests.append(
            _json(f"team b takes {name}", "/datasets", json.dumps(source).encode(), "b")
        )
    return requests


def _send(client: httpx.Client, request: Request, tokens: dict[str, str]) -> httpx.Response:
    headers = dict(request.headers)
    if request.token:
        headers["Authorization"] = f"Bearer {tokens[request.token]}"
    if request.files is not None:
        for _, (_, handle) in request.files.items():
            handle.seek(0)
        return client.request(
            request.method, request.path, files=request.files, data=request.data, headers=headers
        )
    return client.request(request.method, request.path, content=request.content, headers=headers)


@pytest.fixture
def service(postgres_url, redis_url, settings_for):
    """A real API (auth on) and worker on a fresh PostgreSQL database; tokens of teams a, b."""
    settings = settings_for(
        postgres_url,
        redis_url,
        AUTH_ENABLED=True,
        SECRET_KEY=make_secret_key(),
        MAX_UPLOAD_BYTES=4 * 1024**2,
    )
    tokens = {}
    with session_scope(postgres_url) as session:
        for team in ("a", "b"):
            tokens[team] = auth.create_token(session, f"team-{team}")[1]
    with (
        running_worker(settings) as worker,
        running_api(api_env(settings), settings.HOME / "faceoff.api.log") as api,
    ):
        with httpx.Client(base_url=api.url, timeout=30.0) as client:
            headers = {"Authorization": f"Bearer {tokens['a']}"}
            response = client.post(
                "/datasets", json={"name": "adv-tiny", "source": TINY}, headers=headers
            )
            assert response.status_code == 201, response.text
            yield client, api, worker, tokens


def test_hostile_requests_get_4xx_with_bounded_memory(service):
    client, api, worker, tokens = service
    process = psutil.Process(api.process.pid)
    statuses: Counter[int] = Counter()
    failures, peak = [], 0
    requests = corpus()
    started = time.monotonic()
    for request in requests:
        try:
            response = _send(client, request, tokens)
        except httpx.TransportError as err:
            failures.append(f"{request.what}: no answer ({type(err).__name__}: {err})")
            assert api.process.poll() is None, (
                f"the API died on {request.what}:\n{api.log()[-3000:]}"
            )
            continue
        statuses[response.status_code] += 1
        if response.status_code >= 500:
            failures.append(f"{request.what}: {response.status_code} {response.text[:200]}")
        elif response.status_code >= 400:
            assert len(response.content) < 64 * 1024, (
                f"{request.what}: a {len(response.content)}-byte error"
            )
        peak = max(peak, process.memory_info().rss)
        assert peak < RSS_BOUND_BYTES, f"API RSS {peak / 2**20:.0f} MB after {request.what}"
        assert time.monotonic() - started < REPLAY_SECONDS, "the replay took too long"
    # the statistics of every dataset the replay registered, a hostile upload included
    headers = {"Authorization": f"Bearer {tokens['a']}"}
    for dataset in client.get("/datasets?limit=1000", headers=headers).json()["data"]:
        try:
            response = client.get(f"/datasets/{dataset['id']}/stats", headers=headers)
        except httpx.TransportError as err:
            failures.append(f"stats of {dataset['name']}: no answer ({err})")
            continue
        statuses[response.status_code] += 1
        if response.status_code >= 500:
            failures.append(f"stats of {dataset['name']}: {response.status_code}")
        peak = max(peak, process.memory_info().rss)
        assert peak < RSS_BOUND_BYTES, f"API RSS {peak / 2**20:.0f} MB: stats of {dataset}"
    counts = dict(sorted(statuses.items()))
    print(f"{len(requests)} requests, statuses {counts}, peak RSS {peak / 2**20:.0f} MB")
    assert not failures, "\n".join(failures)
    # nobody took a9a, breast_cancer or team a's adv-tiny (shared, as synthetic data is)
    listed = client.get("/datasets?limit=1000", headers={"Authorization": f"Bearer {tokens['b']}"})
    names = {d["name"]: d for d in listed.json()["data"]}
    assert names["adv-tiny"]["source"] == TINY
    for public in ("a9a", "breast_cancer"):
        assert public not in names or names[public]["source"]["kind"] != "synthetic"

    # ... and the service still runs real work to the end, leaving nothing queued
    response = client.post("/sweeps", json={**SWEEP, "name": "after the replay"}, headers=headers)
    assert response.status_code == 201, response.text
    sweep_id = response.json()["id"]
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        progress = client.get(f"/sweeps/{sweep_id}", headers=headers).json()["progress"]
        if progress["succeeded"] == 3:
            break
        time.sleep(0.2)
    else:
        raise AssertionError(f"the sweep did not finish: {progress}\n{worker.log()[-3000:]}")
    queued = client.get("/jobs?status=queued&limit=1000", headers=headers).json()["count"]
    assert queued == 0
