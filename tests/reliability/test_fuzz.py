"""Schemathesis fuzzes every operation of the API from its own OpenAPI schema (valid and
invalid requests, a bounded derandomized run) against a fresh PostgreSQL database and a real
Redis broker: no answer is a 500, and every error is JSON whose message names the field."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error

from faceoff.api.main import create_app
from faceoff.core.settings import Settings
from faceoff.solvers.catalogue import catalogue
from tests.backends import LOCAL

MAX_EXAMPLES = 30


# the schema only: no request reaches a database before the test gives each operation its app
schema = schemathesis.openapi.from_dict(create_app(Settings()).openapi())


@schema.hook
def flatmap_body(context, body):
    """Also send each job, sweep and reference body with a real dataset and solver, so that
    valid ones get past the catalogue checks to the database and the broker."""
    if not isinstance(body, dict) or not {"dataset", "datasets"} & body.keys():
        return st.just(body)
    real = dict(body)
    if isinstance(body.get("dataset"), str):
        real["dataset"] = "a1a"
    if isinstance(body.get("datasets"), list):
        real["datasets"] = ["a1a"]
    solvers = st.sampled_from(sorted(catalogue()))
    if isinstance(body.get("solver"), str):
        return st.one_of(st.just(body), solvers.map(lambda name: {**real, "solver": name}))
    if isinstance(body.get("solvers"), list):
        return st.one_of(st.just(body), solvers.map(lambda name: {**real, "solvers": [name]}))
    return st.sampled_from([body, real])


@pytest.fixture
def app(postgres_url, redis_url, settings_for):
    """The API on a fresh database (jobs go to a unique queue that nobody consumes; any
    max_seconds the schema allows is accepted), called from this machine: authentication is
    off, as in the default single-user setup."""
    settings = settings_for(
        postgres_url, redis_url, MAX_UPLOAD_BYTES=64 * 1024, MAX_JOB_SECONDS=86400
    )
    api = create_app(settings)

    async def from_this_machine(scope, receive, send) -> None:
        await api({**scope, "client": LOCAL}, receive, send)

    return from_this_machine


def errors_name_the_field(ctx, response, case) -> None:
    """4xx bodies are JSON: a 422 lists ``{"loc": [...], "msg": ...}`` items whose ``loc``
    says where (body, query, path or header, then the field unless the whole body is wrong);
    other errors carry a ``{"detail": "message"}``."""
    if response.status_code < 400:
        return
    body = response.json()
    detail = body["detail"]
    if response.status_code == 422:
        assert isinstance(detail, list) and detail, body
        for item in detail:
            assert item["msg"] and isinstance(item["msg"], str), body
            assert item["loc"] and item["loc"][0] in ("body", "query", "path", "header"), body
    else:
        assert isinstance(detail, str) and detail, body


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # one fresh database per operation
)
def test_no_server_errors_and_errors_name_the_field(case, app):
    case.call_and_validate(app=app, checks=[not_a_server_error, errors_name_the_field])
