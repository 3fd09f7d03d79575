"""core.health's view of the live workers, as job admission reads it."""

from __future__ import annotations

from faceoff.core import health
from faceoff.core.settings import Settings

RECORD = {"host": "h1", "job_bytes": 64 * 1024**2, "memory_bytes": 2**30, "concurrency": 1}


def test_a_worker_answering_late_is_looked_for_again_before_a_job_is_admitted(
    monkeypatch, tmp_path
):
    """Under load a worker answered the 0.5 s look too late: no worker was seen, so no
    memory bound applied and CI's job that no worker could hold was accepted (201). A
    look that sees none now looks again, waiting longer."""
    timeouts = []

    def live_workers(settings, timeout=health.INSPECT_SECONDS):
        timeouts.append(timeout)
        late = timeout >= health.MISSING_INSPECT_SECONDS
        return health.Workers(1, ["h1"], [RECORD]) if late else health.Workers(0, [], [])

    monkeypatch.setattr(health, "live_workers", live_workers)
    monkeypatch.setattr(health, "check_broker", lambda settings: "ok")
    monkeypatch.setattr(health, "_seen", {})
    settings = Settings(HOME=tmp_path, QUEUE="faceoff-test-late")
    assert health.job_capacity(settings) == RECORD
    assert timeouts == [health.INSPECT_SECONDS, health.MISSING_INSPECT_SECONDS]
    assert health.job_capacity(settings) == RECORD and len(timeouts) == 2  # kept 10 s


def test_no_worker_at_all_costs_one_longer_look_per_fresh_period(monkeypatch, tmp_path):
    timeouts = []

    def live_workers(settings, timeout=health.INSPECT_SECONDS):
        timeouts.append(timeout)
        return health.Workers(0, [], [])

    monkeypatch.setattr(health, "live_workers", live_workers)
    monkeypatch.setattr(health, "check_broker", lambda settings: "ok")
    monkeypatch.setattr(health, "_seen", {})
    settings = Settings(HOME=tmp_path, QUEUE="faceoff-test-none")
    assert health.job_capacity(settings) is None
    assert health.job_capacity(settings) is None
    assert timeouts == [health.INSPECT_SECONDS, health.MISSING_INSPECT_SECONDS]
