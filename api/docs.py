"""The API's interactive docs, served from this server: Swagger UI at ``/api/v1/docs`` and
ReDoc at ``/api/v1/redoc``, with their JavaScript and CSS from the ``fastapi-offline``
package (FastAPI's defaults load them from a CDN, so the pages are blank offline)."""

from __future__ import annotations

from importlib.resources import files

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from starlette.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

ASSETS = files("fastapi_offline") / "static"


def install(app: FastAPI, prefix: str) -> None:
    """Serve the docs pages under ``prefix`` and their assets under ``prefix``/docs-assets."""
    assets = f"{prefix}/docs-assets"
    openapi = f"{prefix}/openapi.json"
    app.mount(assets, StaticFiles(directory=str(ASSETS)), name="docs-assets")

    @app.get(f"{prefix}/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi,
            title=f"{app.title} API",
            swagger_js_url=f"{assets}/swagger-ui-bundle.js",
            swagger_css_url=f"{assets}/swagger-ui.css",
            swagger_favicon_url="",
        )

    @app.get(f"{prefix}/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=openapi,
            title=f"{app.title} API",
            redoc_js_url=f"{assets}/redoc.standalone.js",
            redoc_favicon_url="",
            with_google_fonts=False,
        )
