"""Issue 30 item 7: plug-ins whose ``extra_memory`` raises or returns nonsense (NaN, ∞, a
negative, a string, an int beyond a float, a bool), installed beside the API process: POST
/jobs and /sweeps answer 422 naming the plug-in and what it did, never 500; one whose
estimate is huge but finite is refused with the number of bytes."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.reliability.servers import TINY, api_env, running_api

SPECS = """
import math

from faceoff.solvers.spec import SolverSpec


def _raises(n, d, params, penalty):
    raise RuntimeError("estimate exploded")


def _spec(name, extra):
    return SolverSpec(name, "t", "r", "primal", module="badmem_specs", extra_memory=extra)


RAISES = _spec("badmem.raises", _raises)
NAN = _spec("badmem.nan", lambda *a: math.nan)
INF = _spec("badmem.inf", lambda *a: math.inf)
NEGATIVE = _spec("badmem.negative", lambda *a: -1.0)
STRING = _spec("badmem.string", lambda *a: "lots")
BEYOND = _spec("badmem.beyond", lambda *a: 10**400)
BOOL = _spec("badmem.bool", lambda *a: True)
HUGE = _spec("badmem.huge", lambda *a: 1e30)
"""
BROKEN = {
    "badmem.raises": "raised RuntimeError: estimate exploded",
    "badmem.nan": "returned nan",
    "badmem.inf": "returned inf",
    "badmem.negative": "returned -1.0",
    "badmem.string": "returned 'lots'",
    "badmem.beyond": "returned 1000",
    "badmem.bool": "returned True",
}


def install_plugins(folder: Path) -> Path:
    """``folder`` holding a hand-made distribution of the plug-ins above (for PYTHONPATH)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "badmem_specs.py").write_text(SPECS)
    info = folder / "badmem_plugins-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: badmem-plugins\nVersion: 0.1\n")
    names = {**dict.fromkeys(BROKEN), "badmem.huge": None}
    lines = [f"{name} = badmem_specs:{name.split('.')[1].upper()}" for name in names]
    (info / "entry_points.txt").write_text("[faceoff.solvers]\n" + "\n".join(lines) + "\n")
    return folder


@pytest.fixture
def site(tmp_path) -> Path:
    return install_plugins(tmp_path / "site")


def test_a_broken_extra_memory_is_a_422_naming_the_plugin(
    site, settings_for, sqlite_url, redis_url, tmp_path
):
    settings = settings_for(sqlite_url, redis_url)
    env = api_env(settings, PYTHONPATH=str(site))
    with running_api(env, tmp_path / "api.log") as api, httpx.Client(timeout=30) as client:
        listed = client.get(f"{api.url}/solvers").json()
        assert set(BROKEN) < {s["name"] for s in listed["data"]}, listed["broken_plugins"]
        made = client.post(f"{api.url}/datasets", json={"name": "small", "source": TINY})
        assert made.status_code == 201, made.text
        for name, what in BROKEN.items():
            job = {"dataset": "small", "solver": name, "loss": "logistic", "l2": 1e-3}
            sweep = {"datasets": ["small"], "losses": ["logistic"], "l2": [1e-3]}
            for path, body, loc in (
                ("/jobs", job, ["body", "solver"]),
                ("/sweeps", {**sweep, "solvers": [name]}, ["body", "solvers"]),
            ):
                answer = client.post(f"{api.url}{path}", json=body)
                assert answer.status_code == 422, (path, name, answer.text)
                error = answer.json()["detail"][0]
                assert error["loc"] == loc, error
                assert f"solver {name!r} (badmem_specs): extra_memory" in error["msg"]
                assert what in error["msg"], error["msg"]
        huge = {"dataset": "small", "solver": "badmem.huge", "loss": "logistic", "l2": 1e-3}
        refused = client.post(f"{api.url}/jobs", json=huge)
        assert refused.status_code == 422, refused.text
        assert "GiB" in refused.text and "badmem.huge" in refused.text
        assert client.get(f"{api.url}/health").status_code == 200
