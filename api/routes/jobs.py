"""``/jobs``: submit, list, read, trace (downsampled), a path job's λs, live events (SSE),
cancel, final coefficients (npy or csv)."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Annotated, Literal

import numpy as np
from fastapi import APIRouter, Depends, Header, Query, Request, Response
from fastapi.responses import StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from starlette.concurrency import run_in_threadpool

from faceoff.api.deps import (
    AuthenticatedRoute,
    JobId,
    Limit,
    Offset,
    SessionDep,
    SettingsDep,
    TeamDep,
    bearer,
)
from faceoff.api.schemas import (
    JobCreate,
    JobPublic,
    JobsPublic,
    Message,
    PathPublic,
    Responses,
    TracePointPublic,
    TracePublic,
)
from faceoff.core import auth, paths
from faceoff.core import jobs as service
from faceoff.core.db import brief, is_unavailable, session_factory
from faceoff.core.errors import NotFoundError
from faceoff.core.models import TERMINAL
from faceoff.core.specs import Loss, TextInt

router = APIRouter(prefix="/jobs", tags=["jobs"], route_class=AuthenticatedRoute)
log = logging.getLogger("api")

POLL_SECONDS = 0.5  # how often the event stream looks for new points and status changes
KEEPALIVE_POLLS = 30  # a comment line after this many silent polls keeps proxies open
EVENT_BATCH = 500  # at most this many points per poll
NOT_FOUND: Responses = {404: {"model": Message, "description": "no such job"}}
Status = Literal["queued", "running", "succeeded", "failed", "cancelled"]
Text = Annotated[str | None, Query(min_length=1, max_length=200, pattern=r"^[\w.+-]+$")]
CoefficientFormat = Literal["npy", "csv"]
CHUNK_BYTES = 1 << 20  # a coefficient download is sent in pieces of about this size


@router.post(
    "",
    response_model=JobPublic,
    status_code=201,
    responses={
        200: {"model": JobPublic, "description": "an identical job exists"},
        422: {"description": "invalid, or pinned to a host no live worker serves"},
        429: {"model": Message, "description": "over your team's quota of queued jobs"},
    },
)
def create_job(
    body: JobCreate, response: Response, session: SessionDep, settings: SettingsDep, team: TeamDep
) -> JobPublic:
    """Submit a job (201), or get your team's identical queued, running or succeeded job
    (200) unless ``force``. The dataset is a registered name or a public registry name; a
    ``host`` must be one a live worker serves unless ``wait_for_host``."""
    job, created = service.submit_job(
        session,
        body.spec(),
        settings,
        body.force,
        team_id=team,
        wait_for_host=body.wait_for_host,
    )
    session.commit()
    if created:
        service.enqueue_new([job], settings)
    else:
        response.status_code = 200
    return JobPublic.model_validate(job)


@router.get("", response_model=JobsPublic)
def read_jobs(
    session: SessionDep,
    team: TeamDep,
    status: Status | None = None,
    sweep_id: Annotated[TextInt | None, Query(ge=1, le=2**31 - 1)] = None,
    solver: Text = None,
    dataset: Text = None,
    loss: Loss | None = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> JobsPublic:
    """Your team's jobs, newest first, filtered; ``count`` is the number of matches in all."""
    where = service.JobFilter(
        status=status, sweep_id=sweep_id, solver=solver, dataset=dataset, loss=loss
    )
    rows, count = service.list_jobs(session, where, limit, offset, team_id=team)
    return JobsPublic(data=[JobPublic.model_validate(j) for j in rows], count=count)


@router.get("/{job_id}", response_model=JobPublic, responses=NOT_FOUND)
def read_job(job_id: JobId, session: SessionDep, team: TeamDep) -> JobPublic:
    return JobPublic.model_validate(service.get_job(session, job_id, team_id=team))


@router.get("/{job_id}/trace", response_model=TracePublic, responses=NOT_FOUND)
def read_job_trace(
    job_id: JobId,
    session: SessionDep,
    team: TeamDep,
    after_seq: Annotated[TextInt, Query(ge=-1, le=2**31 - 1, description="only seq > this")] = -1,
    max_points: Annotated[
        TextInt | None,
        Query(
            ge=2,
            le=100_000,
            description="downsample to at most this many points, evenly spaced in "
            "log(epoch), keeping the first and the last",
        ),
    ] = None,
) -> TracePublic:
    """The job's convergence trace (the points after ``after_seq``)."""
    points = service.get_trace(session, job_id, after_seq, max_points, team_id=team)
    job = service.get_job(session, job_id, team_id=team)
    return TracePublic(
        job_id=job.id,
        status=job.status,
        n_points=job.n_points,
        trace_mode=job.trace_mode,
        wall_s=job.wall_s,
        data=[TracePointPublic.model_validate(p) for p in points],
    )


@router.get(
    "/{job_id}/path",
    response_model=PathPublic,
    responses={**NOT_FOUND, 409: {"model": Message, "description": "not a path job"}},
)
def read_job_path(job_id: JobId, session: SessionDep, team: TeamDep) -> PathPublic:
    """A path job's λs so far (grid order): each one's l1, time, epochs, certified gap and
    support size, from its trace; λ_max and the path's solver time."""
    return PathPublic.model_validate(paths.get_path(session, job_id, team_id=team))


@router.post(
    "/{job_id}/cancel",
    response_model=JobPublic,
    responses={**NOT_FOUND, 409: {"model": Message, "description": "the job has finished"}},
)
def cancel_job(
    job_id: JobId, session: SessionDep, settings: SettingsDep, team: TeamDep
) -> JobPublic:
    """Cancel a job: a queued one at once (its messages are removed from the broker), a
    running one at its next trace point."""
    job = service.cancel_job(session, job_id, team_id=team)
    session.commit()
    service.withdraw_cancelled(job, settings)
    return JobPublic.model_validate(job)


def _npy(x: np.ndarray, data: bytes) -> tuple[Iterator[bytes | memoryview], int]:
    """(pieces, length) of ``x`` in np.save's format: its header, then views of ``data``,
    its bytes in C order (as stored: no copy)."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, np.lib.format.header_data_from_array_1_0(x))
    head = header.getvalue()
    view = memoryview(data)

    def pieces() -> Iterator[bytes | memoryview]:
        yield head
        for start in range(0, len(view), CHUNK_BYTES):
            yield view[start : start + CHUNK_BYTES]

    return pieces(), len(head) + len(view)


def _label(value: float) -> str:
    """A class value as a column name: ``3`` for 3.0, else its shortest repr."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _csv(x: np.ndarray, classes: list[float] | None, intercept: bool = False) -> Iterator[str]:
    """``feature,coef`` (or ``feature,<class>,...`` for a K-class x, its class values as
    the header), then one line per feature: its index and its coefficients (shortest
    round-trip decimals); with ``intercept``, the last line is ``intercept,c``."""
    columns = x.reshape(x.shape[0], -1)
    if x.ndim == 1:
        names = ["coef"]
    elif classes is not None and len(classes) == columns.shape[1]:
        names = [_label(c) for c in classes]
    else:
        names = [f"class_{k}" for k in range(columns.shape[1])]
    yield ",".join(["feature", *names]) + "\n"
    rows = max(1, CHUNK_BYTES // (24 * columns.shape[1]))
    features = columns.shape[0] - int(intercept)
    for start in range(0, columns.shape[0], rows):
        block = columns[start : start + rows].tolist()
        yield "".join(
            f"{start + i if start + i < features else 'intercept'},{','.join(map(repr, row))}\n"
            for i, row in enumerate(block)
        )


@router.get(
    "/{job_id}/coefficients",
    response_class=StreamingResponse,
    responses={
        **NOT_FOUND,
        200: {
            "content": {"application/octet-stream": {}, "text/csv": {}},
            "description": "`npy`: x in np.save's format (float64, shape (d,) or (d, K); "
            "(d + 1,) with fit_intercept, the intercept last); `csv`: a header "
            "`feature,coef` (`feature,<class>,...` for a K-class job, its class values), "
            "then one line per feature (and `intercept,c` last with fit_intercept)",
        },
        409: {"model": Message, "description": "the job has not finished or stored none"},
    },
)
def read_job_coefficients(
    job_id: JobId,
    session: SessionDep,
    team: TeamDep,
    fmt: Annotated[
        CoefficientFormat, Query(alias="format", description="npy (default) or csv")
    ] = "npy",
) -> StreamingResponse:
    """The final iterate x of a finished job (the point of its last trace point), as the
    worker stored it when the job ended."""
    row = service.get_coefficients(session, job_id, team_id=team)
    x = service.coefficient_array(row)
    name = f"job-{job_id}-coefficients.{fmt}"
    headers = {"Content-Disposition": f'attachment; filename="{name}"'}
    if fmt == "npy":
        pieces, length = _npy(x, row.data)
        headers["Content-Length"] = str(length)
        return StreamingResponse(pieces, media_type="application/octet-stream", headers=headers)
    intercept = bool(service.get_job(session, job_id, team_id=team).spec.get("fit_intercept"))
    return StreamingResponse(
        _csv(x, row.classes, intercept), media_type="text/csv", headers=headers
    )


def _event(kind: str, payload: str, event_id: int | None = None) -> str:
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {kind}\ndata: {payload}\n\n"


class StreamEnd(Exception):
    """Why an event stream ends before its job does (sent as a final ``error`` event)."""


def _poll(
    url: str, job_id: int, team: int | None, after_seq: int, secret: str | None = None
) -> tuple[JobPublic, list[TracePointPublic]]:
    """The team's job, then its points after ``after_seq`` (in that order: once the job is
    seen terminal, every point it recorded is already in the database). StreamEnd when the
    API token ``secret`` has been revoked meanwhile."""
    with session_factory(url)() as session:
        if secret is not None and auth.verify_token(session, secret) is None:
            raise StreamEnd("the API token is no longer valid (revoked); the stream ends")
        job = service.get_job(session, job_id, team_id=team)
        points = service.trace_points(session, job, after_seq, limit=EVENT_BATCH)
        return JobPublic.model_validate(job), [TracePointPublic.model_validate(p) for p in points]


async def _events(
    request: Request, url: str, job_id: int, team: int | None, after_seq: int, secret: str | None
) -> AsyncIterator[str]:
    """The stream, ended by a final ``error`` event if the token is revoked, the job
    disappears or the database becomes unreachable."""
    try:
        async for event in _job_events(request, url, job_id, team, after_seq, secret):
            yield event
    except (StreamEnd, NotFoundError) as end:
        yield _error_event(str(end))
    except (DBAPIError, PoolTimeoutError) as err:
        if not is_unavailable(err):
            raise
        log.warning("event stream of job %d: database unavailable: %s", job_id, brief(err))
        yield _error_event(
            f"database unavailable: {brief(err)}; the stream ends, reconnect later with "
            "Last-Event-ID to resume"
        )


def _error_event(detail: str) -> str:
    return _event("error", json.dumps({"detail": detail}))


async def _job_events(
    request: Request, url: str, job_id: int, team: int | None, after_seq: int, secret: str | None
) -> AsyncIterator[str]:
    status = None
    silent = 0
    while True:
        job, points = await run_in_threadpool(_poll, url, job_id, team, after_seq, secret)
        for point in points:
            yield _event("point", point.model_dump_json(), point.seq)
            after_seq = point.seq
        if job.status != status:
            status = job.status
            yield _event("status", job.model_dump_json())
        if status in TERMINAL and len(points) < EVENT_BATCH:
            return
        if len(points) == EVENT_BATCH:
            continue
        silent = 0 if points else silent + 1
        if silent >= KEEPALIVE_POLLS:
            silent = 0
            yield ": keep-alive\n\n"
        if await request.is_disconnected():
            return
        await asyncio.sleep(POLL_SECONDS)


@router.get(
    "/{job_id}/events",
    response_class=StreamingResponse,
    responses={
        **NOT_FOUND,
        200: {
            "content": {"text/event-stream": {}},
            "description": "Server-Sent Events: `point` (a TracePointPublic, id = seq) for "
            "every new trace point, `status` (a JobPublic) at the start and whenever the "
            "status changes; the stream ends after the terminal status, or after an "
            '`error` (`{"detail": message}`) when the token is revoked or the database '
            "cannot be reached.",
        },
    },
)
async def stream_job_events(
    job_id: JobId,
    request: Request,
    settings: SettingsDep,
    team: TeamDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    after_seq: Annotated[TextInt, Query(ge=-1, le=2**31 - 1)] = -1,
    last_event_id: Annotated[TextInt | None, Header(ge=-1, le=2**31 - 1)] = None,
) -> StreamingResponse:
    """Follow a job live: its trace points as the worker writes them (polled every 0.5 s)
    and its status changes, until it finishes. Resume with ``Last-Event-ID``. The token is
    checked at every poll, so revoking it ends the stream."""
    start = last_event_id if last_event_id is not None else after_seq
    secret = credentials.credentials if settings.AUTH_ENABLED and credentials else None
    await run_in_threadpool(_poll, settings.database_url, job_id, team, 2**31 - 1)  # 404 early
    return StreamingResponse(
        _events(request, settings.database_url, job_id, team, start, secret),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
