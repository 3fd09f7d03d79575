"""Prometheus metrics: requests and latency per route, jobs by status (read on scrape)."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from faceoff.core.db import session_factory
from faceoff.core.jobs import job_counts
from faceoff.core.settings import Settings

log = logging.getLogger("api")


class JobsCollector:
    """``faceoff_jobs{status=...}``, counted in the database at each scrape."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def collect(self) -> Iterator[GaugeMetricFamily]:
        gauge = GaugeMetricFamily("faceoff_jobs", "Jobs by status", labels=["status"])
        try:
            with session_factory(self.settings.database_url)() as session:
                counts = job_counts(session)
        except Exception:  # a scrape must not fail because the database is down
            log.exception("cannot count jobs for /metrics")
            return
        for status, count in counts.items():
            gauge.add_metric([status], count)
        yield gauge


class Metrics:
    """The app's own registry (several apps may live in one process, as in the tests)."""

    def __init__(self, settings: Settings) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "faceoff_http_requests",
            "HTTP requests by method, route template and status",
            ["method", "route", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "faceoff_http_request_duration_seconds",
            "HTTP request latency by method and route template (streams: until closed)",
            ["method", "route"],
            registry=self.registry,
        )
        self.registry.register(JobsCollector(settings))


def route_template(scope: Scope) -> str:
    """The full path with its path parameters as ``{name}``; "unmatched" for no route."""
    if scope.get("route") is None:
        return "unmatched"
    names = {str(value): name for name, value in scope.get("path_params", {}).items()}
    return "/".join(
        f"{{{names[part]}}}" if part in names else part for part in scope["path"].split("/")
    )


class MetricsMiddleware:
    """Counts and times every HTTP request under its route template (``/jobs/{job_id}``)."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        start = time.perf_counter()

        async def record_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, record_status)
        finally:
            method = scope["method"]
            template = route_template(scope)
            self.metrics.requests.labels(method, template, str(status)).inc()
            self.metrics.latency.labels(method, template).observe(time.perf_counter() - start)
