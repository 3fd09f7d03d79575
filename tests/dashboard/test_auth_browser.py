"""The dashboard's login in headless Chromium: a team's token shows that team's runs only,
another team's sweep is "No such sweep", and revoking the token logs the browser out."""

from __future__ import annotations

from faceoff.core import auth
from faceoff.core.db import session_scope
from tests.reliability.test_dashboard_auth import secured_dashboard  # noqa: F401


def _login(page, base: str, secret: str, path: str = "/") -> None:
    page.goto(base + path)
    page.wait_for_selector("#login-submit")
    assert page.url.startswith(base + "/login")
    page.fill("#token", secret)
    page.click("#login-submit")


def _shown_jobs(page) -> set[int]:
    page.wait_for_selector("#runs-table td")
    links = page.locator("#runs-table a[href^='/compare?jobs=']").all_inner_texts()
    return {int(text) for text in links}


def test_a_team_sees_only_its_runs_in_the_browser(secured_dashboard, page):  # noqa: F811
    base, url, teams = secured_dashboard
    _, alpha_secret, alpha_sweep, alpha_jobs = teams["alpha"]
    beta_id, beta_secret, beta_sweep, beta_jobs = teams["beta"]
    _login(page, base, alpha_secret)
    page.wait_for_url(base + "/")
    page.wait_for_function(
        f"document.querySelector('#runs-summary')?.innerText === '{len(alpha_jobs)} jobs'"
    )
    assert _shown_jobs(page) == set(alpha_jobs)
    page.goto(f"{base}/sweep/{beta_sweep}")
    page.wait_for_function("document.querySelector('#sweep-title')?.innerText === 'No such sweep'")
    page.context.clear_cookies()

    _login(page, base, beta_secret, f"/compare?sweep={beta_sweep}")
    page.wait_for_url(f"{base}/compare?sweep={beta_sweep}")
    page.goto(base + "/")
    page.wait_for_function(
        f"document.querySelector('#runs-summary')?.innerText === '{len(beta_jobs)} jobs'"
    )
    assert _shown_jobs(page) == set(beta_jobs)
    with session_scope(url) as session:
        auth.revoke_token(session, beta_id)
    page.reload()
    page.wait_for_selector("#login-submit")
    assert page.url.startswith(base + "/login")
