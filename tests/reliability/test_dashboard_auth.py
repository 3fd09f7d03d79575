"""The dashboard behind the API's tokens: a real dashboard process with authentication on,
driven over HTTP (tests/dashboard/test_auth_browser.py drives it with Chromium). Without a
login, pages redirect to /login and Dash's endpoints answer 401; after logging in with a
team's token, the callbacks return that team's runs only."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import uuid
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
from sqlalchemy import update

from faceoff.cli.up import free_port
from faceoff.core import auth
from faceoff.core.db import session_scope
from faceoff.core.models import Dataset, Job, Sweep
from faceoff.core.secret_key import (
    MIN_ENTROPY_BITS,
    check_secret_key,
    entropy_bits,
    make_secret_key,
)
from faceoff.core.settings import Settings
from tests.dashboard.conftest import running_dashboard
from tests.dashboard.factories import SETTINGS, add_sweep

SECRET_KEY = make_secret_key()  # made at run time: a key written here would be published
PUBLISHED_KEY = "h2Vq8Jx0LmRt4WzKc7NyBp3DsGf6UaEo9Ti1Xr5QkYvHn_Mw"  # random, but in the repository


def _give(url: str, team_id: int, sweep_id: int, dataset: str) -> None:
    """Make a sweep, its jobs and its dataset the team's."""
    with session_scope(url) as session:
        session.execute(update(Sweep).where(Sweep.id == sweep_id).values(team_id=team_id))
        session.execute(update(Job).where(Job.sweep_id == sweep_id).values(team_id=team_id))
        session.execute(update(Dataset).where(Dataset.name == dataset).values(team_id=team_id))


@pytest.fixture(scope="module")
def secured_dashboard(tmp_path_factory):
    """(base URL, database URL, {team: (token id, secret, sweep id, job ids)}) of a running
    dashboard with authentication on; alpha and beta each own a sweep."""
    from faceoff.core.migrate import upgrade

    url = f"sqlite:///{tmp_path_factory.mktemp('dashboard-auth') / 'faceoff.db'}"
    upgrade(url)
    teams = {}
    for team, settings in (("alpha", SETTINGS[:2]), ("beta", SETTINGS[2:])):
        dataset = f"{team}-data"
        sweep_id, job_ids = add_sweep(url, settings, n_points=30, dataset_name=dataset)
        with session_scope(url) as session:
            token, secret = auth.create_token(session, team)
            token_id, team_id = token.id, token.team_id
        _give(url, team_id, sweep_id, dataset)
        teams[team] = (token_id, secret, sweep_id, job_ids)
    extra = {"FACEOFF_AUTH_ENABLED": "true", "FACEOFF_SECRET_KEY": SECRET_KEY}
    with running_dashboard(url, extra_env=extra) as base:
        yield base, url, teams


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("", "is required"),
        ("change-me-to-a-long-random-string", "bits of entropy"),  # the old .env.example
        ("Change-Me-please-to-a-long-random-string-0123456789", "is published"),
        ("test-secret-key-for-signing-sessions", "bits of entropy"),  # this file's, round 2
        ("adversarial-test-secret-key-0123456789abcdef", "is published"),  # 264 bits
        (PUBLISHED_KEY, "is published"),  # in no list: found in this file
        ("short-but-random-Xq9", "bits of entropy, fewer than 256"),
        ("ab" * 20, "bits of entropy, fewer than 256"),
        ("0123456789abcdef" * 4, "bits of entropy, fewer than 256"),
        # 122 random bits (drawn from a fixed seed: every pytest process collects the same id)
        (str(uuid.UUID(int=random.Random(30).getrandbits(128), version=4)), "fewer than 256"),
    ],
)
def test_auth_needs_a_strong_secret_key(key, problem):
    from faceoff.dashboard.app import create_app

    with pytest.raises(RuntimeError, match=problem) as refused:
        create_app(Settings(DATABASE_URL="sqlite://", AUTH_ENABLED=True, SECRET_KEY=key))
    assert "`faceoff secret`" in str(refused.value)


def test_env_example_ships_no_secret_key():
    example = (Path(__file__).parents[2] / ".env.example").read_text()
    assert re.findall(r"^FACEOFF_SECRET_KEY=(.*)$", example, re.M) == [""]


@pytest.mark.parametrize(
    "key",
    [
        "change-me-to-a-long-random-string",
        # the repository's own test key of round 2: a cookie signed with it logged in
        "test-secret-key-for-signing-sessions",
        PUBLISHED_KEY,
    ],
)
def test_the_dashboard_refuses_to_start_with_a_published_key(tmp_path, key):
    env = {
        **os.environ,
        "FACEOFF_DATABASE_URL": f"sqlite:///{tmp_path / 'faceoff.db'}",
        "FACEOFF_AUTH_ENABLED": "true",
        "FACEOFF_SECRET_KEY": key,
        "FACEOFF_DASHBOARD_PORT": str(free_port()),
    }
    try:
        done = subprocess.run(
            [sys.executable, "-m", "faceoff.dashboard"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the dashboard started with a published secret key")
    assert done.returncode != 0
    assert "FACEOFF_SECRET_KEY" in done.stderr and "Traceback" not in done.stderr
    assert "is published" in done.stderr or "bits of entropy" in done.stderr


def test_faceoff_secret_prints_a_key_the_dashboard_accepts():
    printed = subprocess.run(
        [sys.executable, "-m", "faceoff.cli.main", "secret"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.strip()
    assert len(printed) == 64 and entropy_bits(printed) >= MIN_ENTROPY_BITS
    check_secret_key(printed)
    assert printed != make_secret_key()


def _runs(client: httpx.Client) -> tuple[set[int], list[int]]:
    """The job ids of the runs table and the sweeps it offers, as the browser asks for them."""
    filters = ("sweep", "dataset", "solver", "loss", "status")
    outputs = [("runs-table", "data"), ("runs-interval", "disabled")]
    outputs += [("runs-summary", "children"), ("runs-share", "href")]
    inputs = [(f"runs-{f}", "value", None) for f in filters] + [("runs-interval", "n_intervals", 0)]
    table = _callback(client, outputs, inputs)["runs-table"]["data"]
    outputs = [(f"runs-{f}", p) for p in ("options", "value") for f in filters]
    options = _callback(client, outputs, [("runs-chosen", "data", {})])["runs-sweep"]["options"]
    return {row["id"] for row in table}, [option["value"] for option in options]


def _callback(client: httpx.Client, outputs, inputs) -> dict:
    """Run a multi-output Dash callback with the (id, property, value) inputs."""
    key = "...".join(f"{o}.{p}" for o, p in outputs)
    body = {
        "output": f"..{key}..",
        "outputs": [{"id": o, "property": p} for o, p in outputs],
        "inputs": [{"id": i, "property": p, "value": v} for i, p, v in inputs],
        "changedPropIds": [],
    }
    response = client.post("/_dash-update-component", json=body)
    assert response.status_code == 200, response.text[:2000]
    return response.json()["response"]


def test_without_login_pages_redirect_and_callbacks_get_401(secured_dashboard):
    base, _, teams = secured_dashboard
    with httpx.Client(base_url=base, timeout=30) as client:
        for path in ("/", "/compare?jobs=1", f"/sweep/{teams['alpha'][2]}"):
            response = client.get(path)
            assert response.status_code == 302, path
            assert response.headers["location"].startswith("/login?next=")
        assert client.get("/_dash-layout").status_code == 401
        assert client.get("/_dash-dependencies").status_code == 401
        callback = client.post("/_dash-update-component", json={"output": "runs-table.data"})
        assert callback.status_code == 401 and "log in" in callback.json()["detail"]
        assert client.get("/login").status_code == 200
        assert client.get("/assets/style.css").status_code == 200
        refused = client.post("/login", data={"token": "fo_wrong"})
        assert refused.status_code == 401 and "not valid" in refused.text
        # a valid token: a signed session cookie, then the Dash endpoints answer
        accepted = client.post("/login", data={"token": teams["alpha"][1], "next": "//evil"})
        assert accepted.status_code == 302 and accepted.headers["location"] == "/"
        assert client.get("/_dash-layout").status_code == 200
        assert _runs(client) == ({*teams["alpha"][3]}, [teams["alpha"][2]])
        client.get("/logout")
        assert client.get("/_dash-layout").status_code == 401


@pytest.mark.parametrize(
    "target",
    [
        "/\t/evil.com",  # browsers drop tabs and newlines: //evil.com
        "/\n/evil.com",
        "/\r\n/evil.com",
        "\t//evil.com",
        "//evil.com",
        "/\\evil.com",  # browsers read a backslash as a slash
        "/\\/evil.com",
        "https://evil.com",
        "evil.com",
        " /x",
        "/x y",
        "/\x00",
        "/\x7f",
        "/\u2028/evil.com",
        "/\u3000/evil.com",
        "",
    ],
)
def test_login_follows_only_paths_of_this_site(secured_dashboard, target):
    base, _, teams = secured_dashboard
    with httpx.Client(base_url=base, timeout=30) as client:
        page = client.get("/login", params={"next": target})
        assert page.status_code == 200
        assert 'name="next" value="/"' in page.text
        login = client.post("/login", data={"token": teams["alpha"][1], "next": target})
        assert login.status_code == 302, login.text[:500]
        assert login.headers["location"] == "/"


@pytest.mark.parametrize("raw", ["%2F%ED%B0%80", "%2F%FF%0A", "%2F%E2%80%A8%2Fevil.com"])
def test_login_with_a_next_that_is_not_utf8(secured_dashboard, raw):
    """Bytes no browser would send as a path (a lone surrogate, invalid UTF-8)."""
    base, _, teams = secured_dashboard
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    with httpx.Client(base_url=base, timeout=30) as client:
        assert client.get(f"/login?next={raw}").status_code == 200
        body = f"token={teams['alpha'][1]}&next={raw}".encode()
        login = client.post("/login", content=body, headers=form)
        assert login.status_code == 302, login.text[:500]
        assert login.headers["location"].startswith("/")
        assert not login.headers["location"].startswith("//")


def test_login_returns_to_the_page_asked_for(secured_dashboard):
    base, _, teams = secured_dashboard
    target = "/compare?jobs=1,2&x=epoch"
    with httpx.Client(base_url=base, timeout=30) as client:
        asked = client.get(target)
        assert asked.headers["location"] == "/login?" + urlencode({"next": target})
        login = client.post("/login", data={"token": teams["alpha"][1], "next": target})
        assert login.status_code == 302 and login.headers["location"] == target
