"""What a person sees of machine fairness: a comparison over jobs measured on two CPU
models, or by a job that shared its host with more jobs than physical cores, is flagged."""

from __future__ import annotations

from faceoff.core.db import session_scope
from faceoff.core.models import Job
from tests.dashboard import factories
from tests.dashboard.conftest import running_dashboard

XEON = "Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz"
EPYC = "AMD EPYC 7763 64-Core Processor"


def machine(model: str, cores: int) -> dict:
    return {"host": model.split()[0].lower(), "cpu_model": model, "physical_cores": cores}


def record(url: str, job_id: int, model: str, cores: int, concurrency: int) -> None:
    with session_scope(url) as session:
        job = session.get(Job, job_id)
        job.machine = machine(model, cores)
        job.concurrency = job.concurrency_max = concurrency


def test_compare_and_sweep_pages_flag_unfair_timings(sqlite_url, page):
    sweep_id, ids = factories.add_sweep(sqlite_url)
    record(sqlite_url, ids[0], XEON, 20, 1)
    record(sqlite_url, ids[1], XEON, 20, 2)
    record(sqlite_url, ids[2], EPYC, 64, 1)
    record(sqlite_url, ids[3], EPYC, 2, 3)  # three jobs at once on two cores
    warning = page.locator(".fairness-warning")
    with running_dashboard(sqlite_url) as base:
        page.goto(f"{base}/compare?sweep={sweep_id}")
        warning.wait_for()
        text = warning.inner_text()
        assert "Times not comparable" in text
        assert "2 different CPU models" in text and XEON in text and EPYC in text
        assert f"up to 3 jobs on 2 cores; jobs {ids[3]})" in text

        page.goto(f"{base}/sweep/{sweep_id}")
        warning.wait_for()
        assert XEON in warning.inner_text() and f"jobs {ids[3]})" in warning.inner_text()

        # one CPU model, never more jobs than cores: no warning
        page.goto(f"{base}/compare?jobs={ids[0]},{ids[1]}")
        page.locator("#compare-status").get_by_text("2 jobs").wait_for()
        page.wait_for_timeout(1500)  # the warning's own callback has answered by now
        assert warning.count() == 0

        # the crowded job alone is flagged without a CPU-model warning
        page.goto(f"{base}/compare?jobs={ids[3]}")
        warning.wait_for()
        assert "ran with more concurrent jobs than physical cores" in warning.inner_text()
        assert "CPU models" not in warning.inner_text()


def test_a_job_run_above_its_hosts_load_is_flagged_where_its_time_is_shown(sqlite_url, page):
    """The issue's case: a job run at load 4.66 on 2 cores, alone on its host."""
    sweep_id, ids = factories.add_sweep(sqlite_url)
    for job_id in ids:
        record(sqlite_url, job_id, EPYC, 2, 1)
    with session_scope(sqlite_url) as session:
        session.get(Job, ids[1]).load_start = 4.66
    said = f"up to 4.66 on 2 cores; jobs {ids[1]})"
    warning = page.locator(".fairness-warning")
    with running_dashboard(sqlite_url) as base:
        for path in (
            f"/?sweep={sweep_id}",
            f"/compare?sweep={sweep_id}",
            f"/sweep/{sweep_id}",
            f"/profiles?sweep={sweep_id}",
        ):
            page.goto(base + path)
            warning.wait_for()
            assert said in warning.inner_text(), path
            assert "load average was above its physical cores" in warning.inner_text()
        page.goto(f"{base}/dataset/1")  # the measured winner's times
        warning.wait_for(timeout=30_000)
        assert said in warning.inner_text()
