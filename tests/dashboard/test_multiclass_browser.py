"""K-class objectives as a person sees them: headless Chromium against the dashboard."""

from __future__ import annotations

from faceoff.core.db import session_scope
from faceoff.core.models import SUCCEEDED, Dataset, Job
from faceoff.core.specs import JobSpec, canonical_job, objective_hash, spec_hash
from tests.dashboard import factories
from tests.dashboard.conftest import running_dashboard
from tests.dashboard.test_multiclass_labels import LABELS, PLANTED


def add_k_class_runs(url: str) -> list[int]:
    """A finished lbfgs run of each form on a 3-class dataset, with its trace and P*."""
    ids = []
    with session_scope(url) as session:
        dataset = Dataset(name="planted", source=PLANTED, labels=LABELS, n_samples=300)
        session.add(dataset)
        session.flush()
        for form, rate in (("ovr", 0.6), ("multinomial", 0.7)):
            spec = canonical_job(
                JobSpec(
                    dataset="planted", loss="logistic", l2=1e-3, solver="lbfgs", multiclass=form
                )
            )
            job = Job(
                dataset_id=dataset.id,
                spec=spec.model_dump(mode="json", exclude_none=True),
                spec_hash=spec_hash(spec),
                objective_hash=objective_hash(spec),
                solver="lbfgs",
                loss="logistic",
                status=SUCCEEDED,
                stop_reason="converged",
            )
            session.add(job)
            session.flush()
            factories._write_points(session, job, factories.trace(rate, 60, 0.001))
            factories.add_reference(session, job.objective_hash, job.id)
            ids.append(job.id)
    return ids


def test_k_class_objectives_are_named_on_the_compare_and_dataset_pages(sqlite_url, page, tmp_path):
    ids = add_k_class_runs(sqlite_url)
    with running_dashboard(sqlite_url) as base:
        page.goto(f"{base}/compare?jobs={','.join(map(str, ids))}")
        titles = page.locator("#compare-graph .annotation-text")
        titles.first.wait_for()
        shown = [titles.nth(i).text_content() for i in range(titles.count())]
        assert "planted · logistic · K = 3, multinomial · l2=0.001" in shown
        assert "planted · logistic · K = 3, one-vs-rest · l2=0.001" in shown
        page.screenshot(path=str(tmp_path / "compare.png"), full_page=True)
        page.goto(f"{base}/dataset/1?objective=1")
        advice = page.locator("#dataset-advice")
        page.get_by_text("apply per class").wait_for(timeout=30_000)
        assert "One-vs-rest (K = 3)" in advice.inner_text()
        stats = page.locator("#dataset-stats").inner_text()
        assert "classes K" in stats and "0 100, 1 100, 2 100" in stats
        page.screenshot(path=str(tmp_path / "dataset.png"), full_page=True)
