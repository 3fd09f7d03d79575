"""Error responses: every error is JSON, in FastAPI's shapes, and none is a bare 500.

- SpecError → 422 ``{"detail": [{"loc": ["body", ...], "msg": ..., "type": "value_error"}]}``
  (the shape of FastAPI's validation errors);
- NotFoundError → 404, ConflictError → 409, UploadTooLarge → 413, QuotaExceeded → 429 (with
  ``Retry-After``), each ``{"detail": message}``;
- the database unreachable or busy (:func:`faceoff.core.db.is_unavailable`) → 503
  ``{"detail": "database unavailable: ..."}``, the broker unreachable → 503
  ``{"detail": "broker unavailable: ..."}``, both with ``Retry-After``;
- anything else → logged, 500 ``{"detail": "internal server error"}``.

Every body goes through :func:`error_response`, which cannot fail to encode: strings are cut
(a 422 repeats at most ECHO_CHARS characters of a field's value, and no list or object, so a
huge body is never echoed back) and lone surrogates escaped.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from kombu.exceptions import OperationalError as KombuOperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

from faceoff.core.db import brief, is_unavailable
from faceoff.core.errors import ConflictError, NotFoundError, QuotaExceeded
from faceoff.core.specs import SpecError
from faceoff.core.uploads import UploadTooLarge

log = logging.getLogger("api")
REQUEST_PARTS = ("body", "query", "path", "header")
RETRY_AFTER_SECONDS = 5
ECHO_CHARS = 200  # the most of a request's string an error body repeats (input, loc)
MESSAGE_CHARS = 2000  # the longest message


def _text(value: str, limit: int) -> str:
    """``value`` cut to ``limit`` characters, lone surrogates escaped (encodable as UTF-8)."""
    if len(value) > limit:
        value = f"{value[:limit]}… ({len(value)} characters)"
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


def _clean(value: Any, limit: int = MESSAGE_CHARS) -> Any:
    """``value`` as strict, encodable JSON: strings cut and escaped, non-finite floats None."""
    if isinstance(value, str):
        return _text(value, limit)
    if isinstance(value, dict):
        return {_text(str(k), ECHO_CHARS): _clean(v, limit) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v, limit) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return _text(str(value), limit)


def _echo(value: Any) -> Any:
    """What a 422 repeats of an invalid value: a number, or a string cut to ECHO_CHARS
    characters; ``...`` for a list or an object (never a whole body)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # "inf", "nan": what JSON's Infinity, NaN or 1e400 became
    if isinstance(value, int) and abs(value) >= 2**63:
        return _text(str(value), ECHO_CHARS)
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return _text(value, ECHO_CHARS)
    return ...


def error_response(status: int, content: dict, headers: dict | None = None) -> JSONResponse:
    """A JSON error response whose body always encodes (see :func:`_clean`)."""
    return JSONResponse(status_code=status, content=_clean(content), headers=headers)


def _loc(loc: tuple | list) -> list:
    return [_text(p, ECHO_CHARS) if isinstance(p, str) else p for p in loc]


def validation_error(loc: tuple, message: str, kind: str = "value_error") -> JSONResponse:
    """A 422 response in FastAPI's validation-error shape."""
    loc = tuple(loc) if loc and loc[0] in REQUEST_PARTS else ("body", *loc)
    return error_response(422, {"detail": [{"loc": _loc(loc), "msg": message, "type": kind}]})


def _spec_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, SpecError)  # Starlette types every handler's exception as Exception
    return validation_error(exc.loc, exc.message)


def _request_validation(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = []
    for error in exc.errors():
        item = {"loc": _loc(error["loc"]), "msg": error["msg"], "type": error["type"]}
        echo = _echo(error.get("input"))
        if echo is not ...:
            item["input"] = echo
        errors.append(item)
    return error_response(422, {"detail": errors})


def _message(status: int) -> Callable[[Request, Exception], JSONResponse]:
    def handler(_request: Request, exc: Exception) -> JSONResponse:
        return error_response(status, {"detail": str(exc)})

    return handler


def _quota(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, QuotaExceeded)
    retry = str(max(1, math.ceil(exc.retry_after)))
    return error_response(429, {"detail": str(exc)}, headers={"Retry-After": retry})


def _unavailable(what: str, request: Request, exc: Exception) -> JSONResponse:
    log.warning("%s unavailable on %s %s: %s", what, request.method, request.url.path, brief(exc))
    return error_response(
        503,
        {"detail": f"{what} unavailable: {brief(exc)}; try again later"},
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
    return error_response(500, {"detail": "internal server error"})


def install(app: FastAPI) -> None:
    app.add_exception_handler(SpecError, _spec_error)
    app.add_exception_handler(RequestValidationError, _request_validation)
    app.add_exception_handler(NotFoundError, _message(404))
    app.add_exception_handler(ConflictError, _message(409))
    app.add_exception_handler(UploadTooLarge, _message(413))
    app.add_exception_handler(QuotaExceeded, _quota)
    app.add_exception_handler(DBAPIError, _database_error)
    app.add_exception_handler(PoolTimeoutError, _database_error)
    for broker_error in (KombuOperationalError, RedisConnectionError, RedisTimeoutError):
        app.add_exception_handler(broker_error, _broker_error)
    app.add_exception_handler(Exception, _internal)
