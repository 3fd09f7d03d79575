"""K-class objectives as a person sees them: headless Chromium against the dashboard."""

from __future__ import annotations

from faceoff.core.db import session_scope
from faceoff.core.models import SUCCEEDED, Dataset, Job
from faceoff.core.specs import JobSpec, canonical_job, objective_hash, spec_hash
from tests.dashboard import factories
from tests.dashboard.conftest import running_dashboard
from tests.dashboard.test_multiclass_labels import LABELS, PLANTED


def add_k_class_runs(
    url: str, name: str = "planted", l2s: tuple[float, ...] = (1e-3,)
) -> list[int]:
    """A finished lbfgs run of each form and l2 on a 3-class dataset ``name``, with its trace
    and P*."""
    ids = []
    with session_scope(url) as session:
        dataset = Dataset(name=name, source=PLANTED, labels=LABELS, n_samples=300)
        session.add(dataset)
        session.flush()
        runs = [
            (form, rate, l2) for l2 in l2s for form, rate in (("ovr", 0.6), ("multinomial", 0.7))
        ]
        for form, rate, l2 in runs:
            spec = canonical_job(
                JobSpec(dataset=name, loss="logistic", l2=l2, solver="lbfgs", multiclass=form)
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
        shown = panel_titles(page)
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


def panel_titles(page) -> list[str]:
    """The compare graph's annotations as read, a title's lines (a long objective name is
    wrapped at its " · " separators) joined back by " · "."""
    return page.evaluate(
        """Array.from(document.querySelectorAll('#compare-graph .annotation-text')).map(el => {
            const lines = Array.from(el.querySelectorAll('tspan.line'));
            return lines.length ? lines.map(t => t.textContent).join(' · ') : el.textContent;
        })"""
    )


def _overlapping(boxes: list[dict]) -> list[tuple[int, int]]:
    """The pairs of boxes (x, y, width, height) that overlap."""
    pairs = []
    for i, a in enumerate(boxes):
        for j, b in enumerate(boxes[:i]):
            if (
                a["x"] < b["x"] + b["width"]
                and b["x"] < a["x"] + a["width"]
                and a["y"] < b["y"] + b["height"]
                and b["y"] < a["y"] + a["height"]
            ):
                pairs.append((j, i))
    return pairs


def test_long_k_class_panel_titles_do_not_overlap(sqlite_url, page, tmp_path):
    """Four K-class objectives of a long-named dataset on a 2 × 2 grid: each panel's title
    (an objective's full name) stays clear of the others and of the figure's title, at the
    test's 1400-pixel viewport and at a narrow 900-pixel one (before titles were wrapped,
    the two titles of each row overlapped at 900 pixels)."""
    name = "news20.binary.scale.tfidf"
    ids = add_k_class_runs(sqlite_url, name, (1e-6, 1e-4))
    with running_dashboard(sqlite_url) as base:
        for width in (1400, 900):
            page.set_viewport_size({"width": width, "height": 900})
            page.goto(f"{base}/compare?jobs={','.join(map(str, ids))}")
            titles = page.locator("#compare-graph .annotation-text")
            titles.first.wait_for()
            shown = panel_titles(page)
            assert f"{name} · logistic · K = 3, one-vs-rest · l2=1e-06" in shown
            boxes = [titles.nth(i).bounding_box() for i in range(titles.count())]
            boxes.append(page.locator("#compare-graph .gtitle").bounding_box())
            page.screenshot(path=str(tmp_path / f"compare-{width}.png"), full_page=True)
            assert not _overlapping(boxes), (width, boxes, tmp_path)
