"""Input the dashboard cannot use reads as a message in headless Chromium (the crafted
requests of tests/reliability/test_dashboard_input.py, as a person meets them)."""

from __future__ import annotations

from tests.reliability.test_dashboard_input import dashboard  # noqa: F401


def test_an_out_of_range_job_id_reads_as_a_message_in_the_browser(dashboard, page):  # noqa: F811
    base, _ = dashboard
    page.goto(f"{base}/compare?jobs=2147483648")
    status = page.locator("#compare-status")
    status.filter(has_text="2147483648").wait_for(timeout=15_000)
    assert "out of range" in status.inner_text()
    page.goto(f"{base}/sweep/99999999999")
    page.wait_for_function("document.querySelector('#sweep-title')?.innerText === 'No such sweep'")
