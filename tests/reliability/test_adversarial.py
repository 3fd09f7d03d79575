"""A hostile team member against the running service: a bounded replay of every class of bad
input found by hand (non-finite and huge numbers, lone surrogates and control characters in
every string, oversized and malformed bodies, out-of-range ids and queries, forged headers,
hostile uploads, someone else's dataset name) against a real uvicorn API on PostgreSQL with
Redis and a real worker, authentication on and two teams.

Round 3 added: compression bombs of every container (round 3's 8 MB gzip of repeated
members, bzip2 streams, a second layer, archives, a 70 MB line), extreme floats (subnormal
γ in every body and the statistics' query), integers that are not JSON integers or ASCII
digits, pinned hosts no worker serves (with and without ``wait_for_host``), sweeps with
repeated axis values, look-alike public names, another team's private name, and another
team's reference on private data. Then plug-ins whose ``extra_memory`` raises or returns
nonsense (tests/plugins/test_broken_memory.py), installed beside the API: 422, never 500;
and round 3's newton-cholesky on a 10 × 30,000 dense dataset: 422 with the bytes.

It asserts what the service promises: no answer is a 5xx, the API's memory stays under a
stated bound throughout (its RSS after every request, and its peak, VmHWM, at the end), the
service still runs real jobs to the end afterwards and leaves no job queued.
"""

from __future__ import annotations

import bz2
import gzip
import io
import itertools
import json
import time
import zipfile
from collections import Counter
from dataclasses import dataclass, field

import httpx
import psutil
import pytest
import redis

from faceoff.core import auth
from faceoff.core.db import session_scope
from faceoff.core.queue import job_queue
from faceoff.core.secret_key import make_secret_key
from tests.plugins.test_broken_memory import BROKEN, install_plugins
from tests.reliability.servers import TINY, api_env, peak_rss, running_api
from tests.reliability.test_upload_bombs import gzip_bomb, svmlight_lines
from tests.service.workers import running_worker

RSS_BOUND_BYTES = 400 * 1024**2  # the API process: after every request, and its peak
BIG_JSON_BYTES = 8 * 1024**2  # far beyond the JSON body cap, far below the upload cap
REPLAY_SECONDS = 420.0  # the whole replay must end well within this

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
    "1e-310",  # subnormal (round 3: γ = 1e-310 was a 500)
    "5e-324",
    '"3_0"',  # integers Python's int() reads (round 3: accepted as parameters)
    '"\\u0663\\u0660"',  # "٣٠"
    "3.5",
    "3.0",
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
# round 3's cases and the answer each must get
ROUND_3 = {
    "upload gzip bomb of round 3": 413,
    "upload bz2 streams bomb": 413,
    "upload gzip in gzip": 422,
    "upload zip in gzip": 422,
    "upload gzip in bzip2": 422,
    "upload zip": 422,
    "upload xz magic": 422,
    "upload a 70 MB line": 422,
    "upload n_features 3_0": 422,
    "upload look-alike w8a.bz2": 409,
    "host nohost wait=False": 422,
    "host nohost wait=True": 201,
    "host a9a wait=True": 201,
    "sweep host wait=False": 422,
    "sweep host wait=True": 201,
    "sweep repeats": 201,
    "stats gamma=1e-310": 422,
    "GET /jobs?limit=3_0": 422,
    **{f"plug-in {name} job": 422 for name in [*BROKEN, "badmem.huge"]},
    **{f"plug-in {name} sweep": 422 for name in BROKEN},
    "register adv-wide": 201,
    "newton-cholesky on 10 x 30000": 422,
    "newton-cholesky sweep on 10 x 30000": 422,
}


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
    # round 3: extreme floats and not-quite integers in the statistics' query and paths
    for name, value in itertools.product(("gamma", "l2"), ("1e-310", "5e-324", "0", "1e-7")):
        requests.append(
            Request(
                f"stats {name}={value}",
                "GET",
                f"/datasets/1/stats?loss=smooth_hinge&{name}={value}",
            )
        )
    for value in ("3_0", "%D9%A3%D9%A0", "%203", "%2B3", "1e1", "3.0"):
        requests += [
            Request(f"GET /jobs?limit={value}", "GET", f"/jobs?limit={value}"),
            Request(f"GET /jobs/{value}", "GET", f"/jobs/{value}"),
        ]
    # round 3: pinned hosts no worker serves, with and without wait_for_host (the waiting
    # jobs are cancelled at the end)
    for wait in (False, True):
        for host in ("nohost", "a9a", "x" * 253):
            body = {**JOB, "host": host, "wait_for_host": wait}
            requests.append(
                _json(f"host {host[:12]} wait={wait}", "/jobs", json.dumps(body).encode())
            )
        sweep = {**SWEEP, "name": f"pinned wait={wait}", "host": "nohost", "wait_for_host": wait}
        requests.append(_json(f"sweep host wait={wait}", "/sweeps", json.dumps(sweep).encode()))
    # round 3: sweeps with repeated axis values (deduplicated: no two jobs share a hash)
    repeated = {
        **SWEEP,
        "name": "repeats",
        "l2": [0.01, 1e-2, 0.010],
        "seeds": [0, 0, 0],
        "datasets": ["adv-tiny", "adv-tiny"],
        "solvers": ["dual_cd", "dual_cd", {"solver": "dual_cd", "params": {}}],
    }
    requests.append(_json("sweep repeats", "/sweeps", json.dumps(repeated).encode()))
    # round 3: look-alikes of public names for shared datasets, on team b
    for name in ("w8a.bz2", "a9a.t.bz2", "W8A.svm", "rcv1_train.binary", "breast_cancer.gz"):
        for source in (TINY, {"kind": "sklearn", "name": "breast_cancer"}):
            body = json.dumps({"name": name, "source": source}).encode()
            requests.append(
                _json(f"team b look-alike {name} {source['kind']}", "/datasets", body, "b")
            )
    # plug-ins whose extra_memory is broken (installed beside the API by ``service``)
    for name in [*BROKEN, "badmem.huge"]:
        requests.append(
            _json(f"plug-in {name} job", "/jobs", json.dumps({**JOB, "solver": name}).encode())
        )
    for name in BROKEN:
        body = {**SWEEP, "name": f"plug-in {name}", "solvers": [name]}
        requests.append(_json(f"plug-in {name} sweep", "/sweeps", json.dumps(body).encode()))
    # round 3: newton-cholesky's d × d Hessian on a 10 × 30,000 dense dataset (4 × 7.2 GB:
    # more than any job may take), refused at submission with the number
    wide = {**TINY, "n_samples": 10, "n_features": 30_000, "density": 1.0}
    body = json.dumps({"name": "adv-wide", "source": wide}).encode()
    requests.append(_json("register adv-wide", "/datasets", body))
    newton = {**JOB, "dataset": "adv-wide", "solver": "sklearn.newton_cholesky"}
    requests.append(_json("newton-cholesky on 10 x 30000", "/jobs", json.dumps(newton).encode()))
    sweep = {**SWEEP, "datasets": ["adv-wide"], "solvers": ["sklearn.newton_cholesky"]}
    body = json.dumps(sweep).encode()
    requests.append(_json("newton-cholesky sweep on 10 x 30000", "/sweeps", body))
    # uploads
    bomb, _, _ = gzip_bomb()
    lines = svmlight_lines(4_000)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("data.svm", lines)
    uploads = {
        # round 3: compression bombs of every container, refused early
        "gzip bomb of round 3": (bomb, {}),
        "bz2 streams bomb": (bz2.compress(lines) * 200, {}),
        "gzip in gzip": (gzip.compress(gzip.compress(lines * 100)), {}),
        "zip in gzip": (gzip.compress(archive.getvalue()), {}),
        "gzip in bzip2": (bz2.compress(gzip.compress(lines)), {}),
        "zip": (archive.getvalue(), {}),
        "xz magic": (b"\xfd7zXZ\x00" + b"\x00" * 64, {}),
        "a 70 MB line": (gzip.compress(b"1 " + b"a" * 70_000_000), {}),
        "n_features 3_0": (b"1 1:1\n-1 2:1\n", {"n_features": "3_0"}),
        "look-alike w8a.bz2": (b"1 1:1\n-1 2:1\n", {"name": "w8a.bz2"}),
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
        MAX_UPLOAD_BYTES=16 * 1024**2,  # round 3's 8 MB bomb reaches decompression
    )
    quotas = {"FACEOFF_TEAM_MAX_OPEN_SWEEPS": "1000"}  # the replay's valid sweeps all run
    plugins = {"PYTHONPATH": str(install_plugins(settings.HOME / "plugins"))}
    tokens = {}
    with session_scope(postgres_url) as session:
        for team in ("a", "b"):
            tokens[team] = auth.create_token(session, f"team-{team}")[1]
    with (
        running_worker(settings) as worker,
        running_api(
            api_env(settings, **quotas, **plugins), settings.HOME / "faceoff.api.log"
        ) as api,
    ):
        with httpx.Client(base_url=api.url, timeout=30.0) as client:
            headers = {"Authorization": f"Bearer {tokens['a']}"}
            response = client.post(
                "/datasets", json={"name": "adv-tiny", "source": TINY}, headers=headers
            )
            assert response.status_code == 201, response.text
            yield client, api, worker, tokens, settings


def test_hostile_requests_get_4xx_with_bounded_memory(service):
    client, api, worker, tokens, settings = service
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
        if request.what in ROUND_3 and response.status_code != ROUND_3[request.what]:
            failures.append(f"{request.what}: {response.status_code} {response.text[:200]}")
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
    highest = peak_rss(api.process.pid)  # VmHWM: the true peak, between samples too
    print(
        f"{len(requests)} requests in {time.monotonic() - started:.0f} s, statuses {counts}, "
        f"RSS after each request at most {peak / 2**20:.0f} MiB, peak (VmHWM) "
        f"{highest / 2**20:.0f} MiB"
    )
    assert not failures, "\n".join(failures)
    assert highest < RSS_BOUND_BYTES, f"the API's peak RSS was {highest / 2**20:.0f} MiB"
    # nobody took a9a, breast_cancer or team a's adv-tiny (shared, as synthetic data is)
    listed = client.get("/datasets?limit=1000", headers={"Authorization": f"Bearer {tokens['b']}"})
    names = {d["name"]: d for d in listed.json()["data"]}
    assert names["adv-tiny"]["source"] == TINY
    for public in ("a9a", "breast_cancer"):
        assert public not in names or names[public]["source"]["kind"] != "synthetic"

    # the jobs waiting for host nohost are cancelled, and leave nothing in the broker
    waiting = client.get("/jobs?status=queued&limit=1000", headers=headers).json()["data"]
    assert waiting and all(
        job["waiting"] == f"waiting for host {job['pinned_host']}" for job in waiting
    )
    for job in waiting:
        assert client.post(f"/jobs/{job['id']}/cancel", headers=headers).status_code == 200
    with redis.Redis.from_url(settings.BROKER_URL) as broker:
        assert broker.llen(job_queue(settings, "nohost")) == 0
        assert broker.llen(job_queue(settings, "a9a")) == 0

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

    # a reference on team a's private data tells team b neither the job nor the data's digest
    made = client.post(
        "/datasets/upload",
        files={"file": ("mine.svm", b"+1 1:0.5 3:1\n-1 2:1.5\n+1 1:1 2:2 3:3\n-1 1:2\n")},
        data={"name": "adv-private"},
        headers=headers,
    )
    assert made.status_code == 201, made.text
    job = client.post("/jobs", json={**JOB, "dataset": "adv-private"}, headers=headers).json()
    deadline = time.monotonic() + 120
    while (job := client.get(f"/jobs/{job['id']}", headers=headers).json())[
        "status"
    ] != "succeeded":
        assert job["status"] in ("queued", "running") and time.monotonic() < deadline, job
        time.sleep(0.2)
    other = {"Authorization": f"Bearer {tokens['b']}"}
    seen = client.get(f"/references/{job['objective_hash']}", headers=other).json()
    assert seen["job_id"] is None and "data_hash" not in seen["objective"], seen
    assert job["data_hash"] not in client.get("/references", headers=other).text
