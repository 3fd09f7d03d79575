"""A small httpx client of the Faceoff API (``/api/v1``): jobs, sweeps, traces, live events,
datasets. Every error raises :class:`ClientError` with the server's message."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import httpx

API = "/api/v1"


class ClientError(Exception):
    """A request the server refused (``status``: its HTTP status) or could not answer."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class ServerUnreachable(ClientError):
    """No answer from the server at all."""


def _not_utf8(value: Any, loc: str = "") -> str | None:
    """The field (``a.b.0``) of the first string in ``value`` that UTF-8 cannot encode
    (a lone surrogate, as a non-UTF-8 command-line argument becomes), else None."""
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            return loc or "value"
        return None
    items: Iterable[tuple[Any, Any]]
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list | tuple):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        if (found := _not_utf8(item, f"{loc}.{key}" if loc else str(key))) is not None:
            return found
    return None


def error_message(response: httpx.Response) -> str:
    """The server's message: ``detail`` as a string, or ``loc: msg`` for validation errors."""
    try:
        detail = response.json()["detail"]
    except (ValueError, KeyError, TypeError):
        return (
            f"HTTP {response.status_code}: {response.text.strip()[:300] or response.reason_phrase}"
        )
    if isinstance(detail, list):
        parts = []
        for error in detail:
            loc = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
            parts.append(f"{loc}: {error.get('msg')}" if loc else str(error.get("msg")))
        return "; ".join(parts)
    return str(detail)


def parse_events(lines: Iterator[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(event, data) of a Server-Sent Events stream, comments skipped."""
    data: list[str]
    kind, data = "message", []
    for line in lines:
        if not line:
            if data:
                yield kind, json.loads("\n".join(data))
            kind, data = "message", []
        elif line.startswith("event:"):
            kind = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
    if data:
        yield kind, json.loads("\n".join(data))


class Client:
    """The Faceoff API at ``base_url`` (e.g. ``http://127.0.0.1:8000``).

    ``http`` replaces the underlying ``httpx.Client`` (tests pass FastAPI's TestClient).
    """

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        http: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self.http = http or httpx.Client(base_url=self.base_url, timeout=timeout)
        self.http.headers.update(headers)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    def _unreachable(self, err: httpx.TransportError) -> ServerUnreachable:
        return ServerUnreachable(
            f"cannot reach the Faceoff API at {self.base_url}: {err} — is it running? (make up)"
        )

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        for key in ("json", "params", "data"):
            if (where := _not_utf8(kwargs.get(key))) is not None:
                # refused here as the server refuses text it cannot read (a 422)
                raise ClientError(f"{where}: not valid UTF-8 text; the request was not sent", 422)
        try:
            response = self.http.request(method, f"{API}{path}", **kwargs)
        except httpx.TransportError as err:
            raise self._unreachable(err) from None
        if response.is_error:
            raise ClientError(error_message(response), response.status_code)
        return response

    def _request(self, method: str, path: str, **kwargs: Any) -> Any:
        return self._send(method, path, **kwargs).json()

    def _create(self, path: str, **kwargs: Any) -> tuple[dict[str, Any], bool]:
        """POST ``path``: (the resource, True when created (201), False when the server
        returned an existing one (200))."""
        response = self._send("POST", path, **kwargs)
        return response.json(), response.status_code == 201

    # jobs

    def submit_job(
        self, spec: dict[str, Any], force: bool = False, *, multiclass: str | None = None
    ) -> dict[str, Any]:
        """Submit a job spec (core.specs.JobSpec fields); the new or the identical job.
        ``multiclass`` ("ovr" or "multinomial") makes it a K-class problem on the dataset's
        labels as read (as the spec's own ``multiclass`` field does)."""
        return self.submit_job_created(spec, force, multiclass=multiclass)[0]

    def submit_job_created(
        self, spec: dict[str, Any], force: bool = False, *, multiclass: str | None = None
    ) -> tuple[dict[str, Any], bool]:
        """(job, created): created is False when the server returned your team's identical
        queued, running or succeeded job instead of a new one."""
        body = {**spec, "force": force}
        if multiclass is not None:
            body["multiclass"] = multiclass
        return self._create("/jobs", json=body)

    def job(self, job_id: int) -> dict[str, Any]:
        return self._request("GET", f"/jobs/{job_id}")

    def jobs(self, limit: int = 100, offset: int = 0, **filters: Any) -> dict[str, Any]:
        """``{"data": [...], "count": n}``; filters: status, sweep_id, solver, dataset, loss."""
        params = {k: v for k, v in filters.items() if v is not None}
        return self._request("GET", "/jobs", params={**params, "limit": limit, "offset": offset})

    def trace(
        self, job_id: int, after_seq: int = -1, max_points: int | None = None
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"after_seq": after_seq}
        if max_points is not None:
            params["max_points"] = max_points
        return self._request("GET", f"/jobs/{job_id}/trace", params=params)

    def path(self, job_id: int) -> dict[str, Any]:
        """A path job's λs so far: ``steps`` (l1, seconds, epochs, gap_rel, nnz, ...),
        ``lambda_max``, ``seconds`` and ``reached`` (GET /jobs/{id}/path)."""
        return self._request("GET", f"/jobs/{job_id}/path")

    def follow(self, job_id: int, after_seq: int = -1) -> Iterator[tuple[str, dict[str, Any]]]:
        """The job's live events: ``("point", trace point)`` and ``("status", job)``, until
        the job finishes."""
        url = f"{API}/jobs/{job_id}/events"
        try:
            with self.http.stream(
                "GET", url, params={"after_seq": after_seq}, timeout=httpx.Timeout(30, read=None)
            ) as response:
                if response.is_error:
                    response.read()
                    raise ClientError(error_message(response), response.status_code)
                yield from parse_events(response.iter_lines())
        except httpx.TransportError as err:
            raise self._unreachable(err) from None

    def cancel(self, job_id: int) -> dict[str, Any]:
        return self._request("POST", f"/jobs/{job_id}/cancel")

    def download_coefficients(self, job_id: int, out: BinaryIO, format: str = "npy") -> int:
        """Write the final iterate x of a finished job to ``out`` as the server sends it,
        in pieces: ``npy`` (np.save's format, float64, shape (d,) or (d, K)) or ``csv``
        (``feature,coef``, or the class values as the header of a K-class x). The bytes
        written; ClientError 409 when the job has not finished or stored none."""
        url = f"{API}/jobs/{job_id}/coefficients"
        written = 0
        try:
            with self.http.stream("GET", url, params={"format": format}) as response:
                if response.is_error:
                    response.read()
                    raise ClientError(error_message(response), response.status_code)
                for chunk in response.iter_bytes():
                    out.write(chunk)
                    written += len(chunk)
        except httpx.TransportError as err:
            raise self._unreachable(err) from None
        return written

    def coefficients(self, job_id: int) -> Any:
        """The final iterate x of a finished job as a float64 NumPy array, shape (d,) or
        (d, K) (a K-class job's columns in the order of its classes)."""
        import numpy as np

        buffer = io.BytesIO()
        self.download_coefficients(job_id, buffer, "npy")
        buffer.seek(0)
        return np.load(buffer, allow_pickle=False)

    # sweeps

    def submit_sweep(self, spec: dict[str, Any], force: bool = False) -> dict[str, Any]:
        """Submit a sweep spec (core.specs.SweepSpec fields)."""
        return self._request("POST", "/sweeps", json={**spec, "force": force})

    def sweep(self, sweep_id: int) -> dict[str, Any]:
        return self._request("GET", f"/sweeps/{sweep_id}")

    def sweeps(self, limit: int = 100, offset: int = 0) -> dict[str, Any]:
        return self._request("GET", "/sweeps", params={"limit": limit, "offset": offset})

    # catalogue and datasets

    def solvers(self) -> list[dict[str, Any]]:
        return self._request("GET", "/solvers")["data"]

    def datasets(self, limit: int = 100, offset: int = 0) -> dict[str, Any]:
        return self._request("GET", "/datasets", params={"limit": limit, "offset": offset})

    def dataset(self, dataset_id: int) -> dict[str, Any]:
        return self._request("GET", f"/datasets/{dataset_id}")

    def find_dataset(self, name: str) -> dict[str, Any]:
        """The dataset called ``name`` among those you can see; ClientError (404) if none."""
        offset = 0
        while True:
            found = self.datasets(limit=1000, offset=offset)
            for dataset in found["data"]:
                if dataset["name"] == name:
                    return dataset
            offset += len(found["data"])
            if not found["data"] or offset >= found["count"]:
                raise ClientError(f"no dataset named {name!r} on {self.base_url}", 404)

    def register_dataset(self, name: str, source: dict[str, Any]) -> dict[str, Any]:
        """Register ``name`` for a registry, synthetic, sklearn or random_features
        ``source`` (its ``labels`` say what K-class problems it can make)."""
        return self.register_dataset_created(name, source)[0]

    def register_dataset_created(
        self, name: str, source: dict[str, Any]
    ) -> tuple[dict[str, Any], bool]:
        """(dataset, created): created is False when ``name`` already held that source."""
        return self._create("/datasets", json={"name": name, "source": source})

    def upload_dataset(
        self,
        path: str | Path,
        name: str | None = None,
        n_features: int | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> dict[str, Any]:
        """Upload an svmlight file (plain, bzip2 or gzip) and register it (default name: the
        file's); see :meth:`upload_dataset_created`."""
        return self.upload_dataset_created(path, name, n_features, progress)[0]

    def upload_dataset_created(
        self,
        path: str | Path,
        name: str | None = None,
        n_features: int | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """(dataset, created): created is False when the same file was already registered
        under that name. The file is streamed; ``progress(n)`` is called with each ``n``
        bytes read."""
        path = Path(path)
        data = {k: str(v) for k, v in (("name", name), ("n_features", n_features)) if v}
        with path.open("rb") as handle:
            stream = handle if progress is None else _Counted(handle, progress)
            return self._create("/datasets/upload", files={"file": (path.name, stream)}, data=data)

    def dataset_stats(
        self,
        dataset_id: int,
        loss: str = "logistic",
        l2: float = 1e-4,
        gamma: float = 1.0,
        normalize: str = "none",
    ) -> dict[str, Any]:
        """Statistics and the primal-vs-dual advice of a dataset (GET /datasets/{id}/stats)."""
        params = {"loss": loss, "l2": l2, "gamma": gamma, "normalize": normalize}
        return self._request("GET", f"/datasets/{dataset_id}/stats", params=params)

    # references

    def references(self, limit: int = 100, offset: int = 0, **filters: Any) -> dict[str, Any]:
        """``{"data": [...], "count": n}`` of the certified optima P*; filters:
        objective_hash, dataset, loss, penalty, l1, l2."""
        params = {k: v for k, v in filters.items() if v is not None}
        return self._request(
            "GET", "/references", params={**params, "limit": limit, "offset": offset}
        )

    def reference(self, objective_hash: str) -> dict[str, Any]:
        """The reference P* of a job's ``objective_hash`` (404 when none is recorded)."""
        return self._request("GET", f"/references/{objective_hash}")

    def health(self) -> dict[str, Any]:
        """The health report, also when the server answers 503."""
        try:
            response = self.http.get(f"{API}/health")
        except httpx.TransportError as err:
            raise self._unreachable(err) from None
        if response.status_code not in (200, 503):
            raise ClientError(error_message(response), response.status_code)
        return response.json()


class _Counted:
    """A binary file whose reads are reported to ``progress`` (httpx streams it in chunks;
    ``fileno`` lets it send the length)."""

    def __init__(self, handle: Any, progress: Callable[[int], None]) -> None:
        self.handle, self.progress = handle, progress

    def read(self, size: int = -1) -> bytes:
        chunk = self.handle.read(size)
        self.progress(len(chunk))
        return chunk

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self.handle.seek(offset, whence)

    def tell(self) -> int:
        return self.handle.tell()

    def fileno(self) -> int:
        return self.handle.fileno()
