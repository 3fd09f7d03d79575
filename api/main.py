"""The FastAPI application: ``uvicorn faceoff.api.main:app`` (settings from the environment) or
``create_app(settings)``. Nothing touches the database at import: engines are made on the
first request."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.routing import APIRoute
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.responses import Response

from faceoff import __version__
from faceoff.api import docs, errors
from faceoff.api.access import LocalOnly
from faceoff.api.limits import BodySizeLimit, Limit
from faceoff.api.metrics import Metrics, MetricsMiddleware
from faceoff.api.routes import api_router
from faceoff.core.auth import parse_networks
from faceoff.core.settings import Settings, get_settings

API_PREFIX = "/api/v1"


def operation_id(route: APIRoute) -> str:
    """The route function's name: ``create_job``, ``read_jobs``, ``cancel_job``, ..."""
    return route.name


def create_app(settings: Settings | None = None) -> FastAPI:
    """The API for ``settings`` (default: from the environment)."""
    app = FastAPI(
        title="Faceoff",
        summary="Benchmark regularized-ERM solvers: submit jobs and sweeps, follow their "
        "certified convergence traces.",
        version=__version__,
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=None,  # api.docs serves them with local assets
        redoc_url=None,
        generate_unique_id_function=operation_id,
    )
    app.state.settings = settings or get_settings()
    app.include_router(api_router, prefix=API_PREFIX)
    docs.install(app, API_PREFIX)
    errors.install(app)
    metrics = Metrics(app.state.settings)
    app.add_middleware(MetricsMiddleware, metrics=metrics)
    settings = app.state.settings
    app.add_middleware(
        BodySizeLimit,
        default=Limit(settings.MAX_JSON_BYTES, "FACEOFF_MAX_JSON_BYTES"),
        paths={  # multipart framing needs a little more than the file itself
            f"{API_PREFIX}/datasets/upload": Limit(
                settings.MAX_UPLOAD_BYTES + 1024 * 1024, "FACEOFF_MAX_UPLOAD_BYTES"
            )
        },
    )

    if not app.state.settings.AUTH_ENABLED:  # outermost: before anything else is done
        trusted = parse_networks(app.state.settings.TRUSTED_PROXIES)
        app.add_middleware(LocalOnly, trusted_proxies=trusted)

    @app.get("/metrics", include_in_schema=False)
    def prometheus_metrics() -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return app


app = create_app()
