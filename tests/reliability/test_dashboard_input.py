"""Crafted requests to a real dashboard on PostgreSQL. Every server callback of the real
layout (read from ``/_dash-dependencies``), given wrong types, huge ids, lone surrogates,
control characters or nested garbage in any one input, answers with its outputs or a
message on the page (the error banner), never a 5xx and never an internal error; malformed
callback bodies get a 4xx, unknown component-suite files a 404
(tests/dashboard/test_input_browser.py: what Chromium shows)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from faceoff.core.migrate import upgrade
from tests.backends import (
    PG_HOST,
    PG_PORT,
    create_pg_database,
    drop_pg_database,
    require,
)
from tests.dashboard.conftest import running_dashboard
from tests.dashboard.factories import add_sweep

ERROR_BANNER = "page-error"
GARBAGE = [
    None,
    "",
    "abc",
    -1,
    0,
    2**31,
    2**63,
    1e308,
    True,
    "\udc00",
    "a\x00b",
    "²",
    "1,2147483648",
    [1, "x"],
    {"a": [None, {"b": 2}]},
    "x" * 5000,
]
MALFORMED = [
    b"",
    b"not json",
    b"null",
    b"[]",
    b"{}",
    b'"text"',
    b'{"output": 5}',
    b'{"output": ["a"]}',
    b'{"output": "nope.children"}',
    b'{"output": NaN}',
]


@pytest.fixture(scope="module")
def dashboard() -> Iterator[tuple[str, dict[str, Any]]]:
    """(base URL, realistic input values by "id.property") of a dashboard on a fresh
    PostgreSQL database holding one finished sweep."""
    require("PostgreSQL", PG_HOST, PG_PORT)
    url = create_pg_database()
    try:
        upgrade(url)
        sweep_id, job_ids = add_sweep(url, n_points=30)
        realistic = {
            "sweep-id.data": sweep_id,
            "dataset-id.data": 1,
            "compare-jobs.value": ",".join(map(str, job_ids)),
            "runs-chosen.data": {},
            "_pages_location.pathname": "/",
        }
        with running_dashboard(url) as base:
            yield base, realistic
    finally:
        drop_pg_database(url)


def server_callbacks(client: httpx.Client) -> list[dict[str, Any]]:
    """The callbacks that run on the server, as the browser learns them."""
    dependencies = client.get("/_dash-dependencies").json()
    return [cb for cb in dependencies if not cb.get("clientside_function")]


def outputs_of(callback: dict[str, Any]) -> list[dict[str, str]] | dict[str, str]:
    """The ``outputs`` a browser sends: a list for a multi-output callback."""
    output = callback["output"]
    parts = output[2:-2].split("...") if output.startswith("..") else [output]
    specs = [dict(zip(("id", "property"), part.rsplit(".", 1), strict=True)) for part in parts]
    return specs if output.startswith("..") else specs[0]


def body_of(callback: dict[str, Any], values: dict[str, Any], changed: str) -> dict[str, Any]:
    def items(kind: str) -> list[dict[str, Any]]:
        return [
            {**dep, "value": values.get(f"{dep['id']}.{dep['property']}")} for dep in callback[kind]
        ]

    return {
        "output": callback["output"],
        "outputs": outputs_of(callback),
        "inputs": items("inputs"),
        "state": items("state"),
        "changedPropIds": [changed],
    }


def post(client: httpx.Client, body: Any) -> httpx.Response:
    """POST a callback body as JSON with \\u escapes (so lone surrogates can be sent)."""
    content = json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    return client.post("/_dash-update-component", content=content, headers=headers)


def banner(response: httpx.Response) -> str | None:
    """The message a callback put in the error banner, if any."""
    side = response.json().get("sideUpdate") or {}
    return (side.get(ERROR_BANNER) or {}).get("children")


def test_crafted_callback_inputs_get_a_message_not_a_500(dashboard):
    base, realistic = dashboard
    problems, sent, shown = [], 0, 0
    with httpx.Client(base_url=base, timeout=60) as client:
        callbacks = server_callbacks(client)
        assert len(callbacks) >= 12  # the page router and every page's callbacks
        for callback in callbacks:
            # Dash's own page router takes the location as it comes (it fails, logged, on a
            # non-string path, which no browser sends); every callback of ours checks inputs
            router = callback["output"].startswith(".._pages_content.")
            slots = [f"{d['id']}.{d['property']}" for d in callback["inputs"] + callback["state"]]
            for slot in slots:
                for value in GARBAGE:
                    body = body_of(callback, {**realistic, slot: value}, slot)
                    response = post(client, body)
                    sent += 1
                    message = banner(response) if response.status_code == 200 else None
                    shown += message is not None
                    internal = "internal" in (message or "") and not router  # see below
                    if response.status_code not in (200, 204) or internal:
                        problems.append(
                            f"{callback['output']} {slot}={value!r:.40}: "
                            f"{response.status_code} {message or response.text[:200]}"
                        )
    assert not problems, f"{len(problems)} of {sent}:\n" + "\n".join(problems[:40])
    assert sent >= 800 and shown > 0


def test_malformed_callback_requests_get_a_4xx(dashboard):
    base, realistic = dashboard
    with httpx.Client(base_url=base, timeout=60) as client:
        table = ("..runs-table.",)
        callback = next(c for c in server_callbacks(client) if c["output"].startswith(table))
        good = body_of(callback, realistic, callback["inputs"][0]["id"] + ".value")
        bodies = [json.dumps(b).encode() for b in malformed_variants(good)] + MALFORMED
        wrong = []
        for body in bodies:
            headers = {"Content-Type": "application/json"}
            response = client.post("/_dash-update-component", content=body, headers=headers)
            if not 400 <= response.status_code < 500 or len(response.content) > 2000:
                wrong.append((body[-200:], response.status_code, response.text[:200]))
        assert not wrong, "\n".join(map(str, wrong))
        wrong_type = client.post("/_dash-update-component", content=b"{}")
        assert wrong_type.status_code == 415
        assert post(client, good).status_code == 200


def malformed_variants(good: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A valid callback body with a field Dash needs missing or of the wrong shape."""
    for key in ("output", "outputs", "inputs"):
        yield {k: v for k, v in good.items() if k != key}
        for wrong in ("x", 7, None, [1, 2], {"id": {"nested": [None]}}, [{"id": "runs-sweep"}]):
            yield {**good, key: wrong}
    yield {**good, "outputs": good["outputs"][:1]}
    yield {**good, "inputs": good["inputs"][:1]}
    yield {**good, "state": [{"id": "runs-sweep"}]}


@pytest.mark.parametrize(
    "path",
    [
        "/_dash-component-suites/dash/nope.js",
        "/_dash-component-suites/nopackage/x.js",
        "/_dash-component-suites/dash/..%2F..%2Fetc%2Fpasswd",
        "/_dash-component-suites/dash/dcc/nope.v9.9.9m123.js",
    ],
)
def test_unknown_component_suite_files_are_404(dashboard, path):
    base, _ = dashboard
    response = httpx.get(base + path, timeout=30)
    assert response.status_code == 404 and len(response.content) < 2000
