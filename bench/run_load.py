"""Bounded load test on loopback: concurrent clients submitting and polling tiny jobs.

The issue: "A bounded load test on loopback: 50 concurrent clients submitting and polling
for 60 s against the docker-compose-equivalent processes (migrate, api, 2 workers,
PostgreSQL, Redis); p50/p99 latency and error rate in bench/; no errors, no lost jobs."

The services run natively (:mod:`bench.service_stack`) on a fresh PostgreSQL database:
``uvicorn faceoff.api.main:app --workers 2`` (``--api-workers``), 2 ×
``python -m faceoff.worker`` with one
pool process each. Each client (asyncio + httpx, one process) loops until ``--seconds``
have passed: ``POST /jobs`` (a tiny ``dual_cd`` job, a seed of its own so none is
deduplicated), ``GET /jobs/{id}`` every ``--poll`` seconds until the job is terminal, then
``GET /jobs?status=succeeded&limit=20`` (the dashboard's kind of listing). A job in flight
when the time is up is still followed to its end (at most ``DRAIN_SECONDS``). Every request
is timed; an error is a non-2xx status or an exception (timeout, refused connection).

Afterwards the database must hold every submitted job id, terminal, and no job that no
client submitted; the broker's queue must be empty. ``python -m bench.run_load`` writes
``bench/results/load.md``; ``tests/reliability/test_load.py`` runs a short version.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import shutil
import sys
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from sqlalchemy import func, select

from bench.common import Log, md_table
from bench.service_stack import (
    REPO,
    TINY_DATASET,
    Stack,
    environment,
    environment_lines,
    fresh_database,
    percentiles,
    queue_length,
    register_tiny_dataset,
    require_services,
    running_stack,
    tiny_job,
)

DRAIN_SECONDS = 120.0  # jobs in flight at the end must be terminal within this
REQUEST_TIMEOUT = 30.0
TERMINAL = ("succeeded", "failed", "cancelled")
ENDPOINTS = ("POST /jobs", "GET /jobs/{id}", "GET /jobs")
OUT = REPO / "bench" / "results" / "load.md"
LOGS = REPO / "bench" / "out" / "load"

log = Log()


@dataclass
class Sample:
    """One request: which endpoint, how long, and what went wrong (None: a 2xx)."""

    endpoint: str
    seconds: float
    error: str | None


@dataclass
class Jobs:
    """What the database says about the submitted jobs after the run."""

    submitted: int
    statuses: dict[str, int]  # status → submitted jobs with it
    lost: list[int]  # submitted ids missing from the database
    unfinished: list[int]  # submitted ids not terminal
    unknown: int  # jobs in the database that no client submitted
    queue_left: int  # messages left in the broker's queue

    @property
    def ok(self) -> bool:
        return (
            not self.lost
            and not self.unfinished
            and not self.unknown
            and not self.queue_left
            and self.statuses.get("succeeded", 0) == self.submitted
        )


@dataclass
class LoadResult:
    clients: int
    seconds: float  # submitting
    poll: float
    wall: float  # first request to the last client done
    samples: list[Sample] = field(default_factory=list)
    job_ids: list[int] = field(default_factory=list)
    jobs: Jobs | None = None

    @property
    def errors(self) -> list[Sample]:
        return [s for s in self.samples if s.error is not None]

    def endpoint_rows(self) -> list[list[str]]:
        rows = []
        for endpoint in ENDPOINTS:
            samples = [s for s in self.samples if s.endpoint == endpoint]
            p50, p90, p99, high = percentiles([s.seconds for s in samples], (50, 90, 99, 100))
            errors = sum(s.error is not None for s in samples)
            rows.append(
                [
                    endpoint,
                    str(len(samples)),
                    f"{len(samples) / self.wall:.1f}",
                    *(f"{v * 1e3:.1f}" for v in (p50, p90, p99, high)),
                    str(errors),
                    f"{errors / max(len(samples), 1):.2%}",
                ]
            )
        return rows


async def _request(
    client: httpx.AsyncClient, samples: list[Sample], endpoint: str, method: str, url: str, **kw
) -> httpx.Response | None:
    """The timed request; None after an exception. Non-2xx responses are errors."""
    started = time.perf_counter()
    try:
        response = await client.request(method, url, **kw)
    except httpx.HTTPError as err:
        samples.append(Sample(endpoint, time.perf_counter() - started, type(err).__name__))
        return None
    error = None if response.is_success else f"HTTP {response.status_code}"
    samples.append(Sample(endpoint, time.perf_counter() - started, error))
    return response


async def _client(
    client: httpx.AsyncClient,
    seeds: Iterator[int],
    stop_at: float,
    poll: float,
    result: LoadResult,
) -> None:
    drain_at = stop_at + DRAIN_SECONDS
    samples = result.samples
    while time.monotonic() < stop_at:
        created = await _request(
            client, samples, "POST /jobs", "POST", "/jobs", json=tiny_job(next(seeds))
        )
        if created is None or not created.is_success:
            await asyncio.sleep(poll)
            continue
        job_id = created.json()["id"]
        result.job_ids.append(job_id)
        while time.monotonic() < drain_at:
            await asyncio.sleep(poll)
            job = await _request(client, samples, "GET /jobs/{id}", "GET", f"/jobs/{job_id}")
            if job is not None and job.is_success and job.json()["status"] in TERMINAL:
                break
        params = {"status": "succeeded", "limit": 20}
        await _request(client, samples, "GET /jobs", "GET", "/jobs", params=params)


async def _run_clients(api_url: str, clients: int, seconds: float, poll: float) -> LoadResult:
    result = LoadResult(clients, seconds, poll, wall=0.0)
    seeds = itertools.count(1)  # one event loop: next() is never called concurrently
    # an idle connection is dropped by the client before uvicorn's 5 s keep-alive ends it:
    # with both at 5 s a request can leave on a connection the server is closing (ReadError)
    limits = httpx.Limits(
        max_connections=clients, max_keepalive_connections=clients, keepalive_expiry=2.0
    )
    async with httpx.AsyncClient(base_url=api_url, timeout=REQUEST_TIMEOUT, limits=limits) as http:
        started = time.monotonic()
        stop_at = started + seconds
        await asyncio.gather(*(_client(http, seeds, stop_at, poll, result) for _ in range(clients)))
        result.wall = time.monotonic() - started
    return result


def check_jobs(stack: Stack, job_ids: list[int]) -> Jobs:
    """Every submitted job in the database and terminal, nothing else there, queue empty."""
    from faceoff.core.db import engine_for
    from faceoff.core.models import TERMINAL as DONE
    from faceoff.core.models import Job

    with engine_for(stack.database_url).connect() as conn:
        found = dict(conn.execute(select(Job.id, Job.status).where(Job.id.in_(job_ids))).all())
        total = conn.execute(select(func.count()).select_from(Job)).scalar_one()
    return Jobs(
        submitted=len(job_ids),
        statuses=dict(Counter(found.values())),
        lost=sorted(set(job_ids) - set(found)),
        unfinished=sorted(i for i, status in found.items() if status not in DONE),
        unknown=total - len(found),
        queue_left=queue_length(stack.broker_url, stack.queue),
    )


def run_load(stack: Stack, clients: int, seconds: float, poll: float = 0.25) -> LoadResult:
    """Register the tiny dataset, run the clients, then check the jobs in the database."""
    with httpx.Client(base_url=stack.api_url, timeout=REQUEST_TIMEOUT) as api:
        register_tiny_dataset(api)
    # a thread of its own: the caller's thread may already have an event loop (a test
    # session that drove Playwright's sync API does), and asyncio.run refuses to nest
    with ThreadPoolExecutor(max_workers=1) as pool:
        runner = pool.submit(asyncio.run, _run_clients(stack.api_url, clients, seconds, poll))
        result = runner.result()
    result.jobs = check_jobs(stack, result.job_ids)
    return result


def summary(result: LoadResult) -> str:
    jobs = result.jobs
    requests = len(result.samples)
    return (
        f"{result.clients} clients, {result.seconds:g} s: {requests} requests "
        f"({requests / result.wall:.0f}/s), {len(result.errors)} errors; jobs submitted "
        f"{jobs.submitted}, {jobs.statuses}, lost {len(jobs.lost)}, not terminal "
        f"{len(jobs.unfinished)}, unknown {jobs.unknown}, left in the queue {jobs.queue_left}"
    )


# ----------------------------------------------------------------------------- report


def report(command: str, env: dict, stack_text: str, result: LoadResult, load_end) -> str:
    jobs = result.jobs
    requests = len(result.samples)
    errors = result.errors
    kinds = Counter(f"{s.endpoint}: {s.error}" for s in errors)
    lines = [
        "# Load test: concurrent clients submitting and polling tiny jobs",
        "",
        f"Command: `{command}`",
        "",
        *environment_lines(env),
        f"- load average at the end {', '.join(f'{v:.2f}' for v in load_end)}",
        f"- {stack_text}",
        f"- {result.clients} clients (asyncio + httpx, one process on the same machine) for "
        f"{result.seconds:g} s: each submits a tiny job (`dual_cd`, logistic, 5 epochs on "
        f"`{TINY_DATASET}`, 200 × 20), polls `GET /jobs/{{id}}` every {result.poll:g} s until "
        "it is terminal, lists `GET /jobs?status=succeeded&limit=20`, and starts again; jobs "
        "in flight at the end are followed to their end",
        "",
        "## Summary",
        "",
    ]
    lines += md_table(
        ["", ""],
        [
            ["wall time (first request to the last client done)", f"{result.wall:.1f} s"],
            ["requests", f"{requests} ({requests / result.wall:.1f}/s)"],
            ["errors (non-2xx or exception)", f"{len(errors)} ({len(errors) / requests:.3%})"],
            ["jobs submitted", str(jobs.submitted)],
            ["jobs succeeded", str(jobs.statuses.get("succeeded", 0))],
            [
                "jobs failed / cancelled",
                f"{jobs.statuses.get('failed', 0)} / {jobs.statuses.get('cancelled', 0)}",
            ],
            ["jobs lost (submitted, not in the database)", str(len(jobs.lost))],
            ["jobs not terminal after the drain", str(len(jobs.unfinished))],
            ["jobs in the database that no client submitted", str(jobs.unknown)],
            ["messages left in the broker queue", str(jobs.queue_left)],
            ["jobs finished per second", f"{jobs.submitted / result.wall:.1f}"],
            ["verdict (no errors, no lost jobs)", "pass" if jobs.ok and not errors else "FAIL"],
        ],
    )
    lines += ["", "## Latency per endpoint (client side, ms)", ""]
    lines += md_table(
        ["endpoint", "requests", "per s", "p50", "p90", "p99", "max", "errors", "error rate"],
        result.endpoint_rows(),
    )
    if kinds:
        lines += ["", "Errors: " + "; ".join(f"{k} × {n}" for k, n in kinds.most_common())]
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.run_load",
        description="Bounded load test: concurrent clients submitting and polling tiny jobs.",
    )
    parser.add_argument("--quick", action="store_true", help="10 clients for 10 s")
    parser.add_argument("--clients", type=int, help="concurrent clients (default 50)")
    parser.add_argument("--seconds", type=float, help="submitting for this long (default 60)")
    parser.add_argument("--poll", type=float, default=0.25, help="poll interval, s (0.25)")
    parser.add_argument("--api-workers", type=int, default=2, help="uvicorn --workers (2)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (2)")
    parser.add_argument("--out", type=Path, default=OUT, help=f"default {OUT.relative_to(REPO)}")
    parser.add_argument(
        "--out-logs",
        type=Path,
        default=LOGS,
        help=f"the services' logs (default {LOGS.relative_to(REPO)}, emptied first)",
    )
    args = parser.parse_args(argv)
    args.clients = args.clients or (10 if args.quick else 50)
    args.seconds = args.seconds or (10.0 if args.quick else 60.0)
    if args.clients < 1 or args.seconds <= 0 or args.poll <= 0 or args.api_workers < 1:
        parser.error("--clients, --seconds, --poll and --api-workers must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = " ".join(["python -m bench.run_load", *(sys.argv[1:] if argv is None else argv)])
    require_services()
    shutil.rmtree(args.out_logs, ignore_errors=True)
    with fresh_database() as url:
        env = environment(url)
        log(f"{env['cpu']} · {env['cores']} cores · load {env['load_average'][0]:.2f}")
        with running_stack(
            url, args.out_logs, workers=args.workers, api_workers=args.api_workers
        ) as stack:
            log(f"services up: {stack.api_url}; {args.clients} clients for {args.seconds:g} s")
            result = run_load(stack, args.clients, args.seconds, args.poll)
            stack_text = stack.describe()
        log(summary(result))
        text = report(command, env, stack_text, result, os.getloadavg())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print()
    print(text)
    log(f"wrote {args.out}")
    return 0 if result.jobs.ok and not result.errors else 1


if __name__ == "__main__":
    sys.exit(main())
