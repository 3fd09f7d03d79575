"""Error responses: every error is JSON, in FastAPI's shapes, and none is a bare 500.

- SpecError → 422 ``{"detail": [{"loc": ["body", ...], "msg": ..., "type": "value_error"}]}``
  (the shape of FastAPI's validation errors);
- NotFoundError → 404, ConflictError → 409, UploadTooLarge → 413, each ``{"detail": message}``;
- the database unreachable or busy (:func:`core.db.is_unavailable`) → 503
  ``{"detail": "database unavailable: ..."}``, the broker unreachable → 503
  ``{"detail": "broker unavailable: ..."}``, both with ``Retry-After``;
- anything else → logged, 500 ``{"detail": "internal server error"}``.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from kombu.exceptions import OperationalError as KombuOperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from core.db import brief, is_unavailable
from core.jobs import (
    ConflictError,
    NotFoundError,
    UploadTooLarge,
    json_safe,
)
from core.specs import SpecError

log = logging.getLogger("api")
REQUEST_PARTS = ("body", "query", "path", "header")
RETRY_AFTER_SECONDS = 5


def validation_error(loc: tuple, message: str, kind: str = "value_error") -> JSONResponse:
    """A 422 response in FastAPI's validation-error shape."""
    loc = tuple(loc) if loc and loc[0] in REQUEST_PARTS else ("body", *loc)
    return JSONResponse(
        status_code=422, content={"detail": [{"loc": list(loc), "msg": message, "type": kind}]}
    )


def _spec_error(_request: Request, exc: SpecError) -> JSONResponse:
    return validation_error(exc.loc, exc.message)


def _request_validation(_request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = []
    for error in exc.errors():
        item = {"loc": list(error["loc"]), "msg": error["msg"], "type": error["type"]}
        try:
            item["input"] = json_safe(jsonable_encoder(error.get("input")))
        except (TypeError, ValueError):
            pass
        errors.append(item)
    return JSONResponse(status_code=422, content={"detail": errors})


def _message(status: int):
    def handler(_request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse(status_code=status, content={"detail": str(exc)})

    return handler


def _unavailable(what: str, request: Request, exc: Exception) -> JSONResponse:
    log.warning("%s unavailable on %s %s: %s", what, request.method, request.url.path, brief(exc))
    return JSONResponse(
        status_code=503,
        content={"detail": f"{what} unavailable: {brief(exc)}; try again later"},
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


def _database_error(request: Request, exc: Exception) -> JSONResponse:
    if not is_unavailable(exc):
        return _internal(request, exc)
    return _unavailable("database", request, exc)


def _broker_error(request: Request, exc: Exception) -> JSONResponse:
    return _unavailable("broker", request, exc)


def _internal(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return JSONResponse(status_code=500, content={"detail": "internal server error"})


def install(app: FastAPI) -> None:
    app.add_exception_handler(SpecError, _spec_error)
    app.add_exception_handler(RequestValidationError, _request_validation)
    app.add_exception_handler(NotFoundError, _message(404))
    app.add_exception_handler(ConflictError, _message(409))
    app.add_exception_handler(UploadTooLarge, _message(413))
    app.add_exception_handler(DBAPIError, _database_error)
    app.add_exception_handler(PoolTimeoutError, _database_error)
    for broker_error in (KombuOperationalError, RedisConnectionError, RedisTimeoutError):
        app.add_exception_handler(broker_error, _broker_error)
    app.add_exception_handler(Exception, _internal)
