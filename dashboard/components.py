"""Pieces shared by the pages: the request's database and viewer, URL state and callback
inputs checked, the error banner every callback reports to, export buttons."""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import flask
from dash import (
    MATCH,
    ClientsideFunction,
    Input,
    State,
    clientside_callback,
    ctx,
    dash_table,
    dcc,
    html,
    set_props,
)
from dash.exceptions import UnsupportedRelativePath
from sqlalchemy.exc import SQLAlchemyError

from faceoff.core.datasets import Caps
from faceoff.core.db import brief, is_unavailable

DATABASE_URL_KEY = "FACEOFF_DATABASE_URL"
UPLOAD_DIR_KEY = "FACEOFF_UPLOAD_DIR"
CAPS_KEY = "FACEOFF_CAPS"
ERROR_BANNER = "page-error"  # id of the app layout's banner for callback errors
MAX_ID = 2**31 - 1  # ids are PostgreSQL integers
MAX_NAME = 200
DIGITS = re.compile(r"[0-9]+")
log = logging.getLogger("dashboard")


class InputError(ValueError):
    """A callback input the page cannot use; the message is for the person who gave it."""


def _shown(value: Any) -> str:
    """A short, printable rendering of a value someone sent."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def database_url() -> str:
    """The database URL of the app serving the current request."""
    return flask.current_app.config[DATABASE_URL_KEY]


def viewer_team() -> int | None:
    """The team of the logged-in viewer, None with authentication off (dashboard.auth)."""
    return flask.g.team_id


def upload_dir() -> Path:
    """The upload folder of the app serving the current request."""
    return Path(flask.current_app.config[UPLOAD_DIR_KEY])


def caps() -> Caps:
    """The dataset size caps of the app serving the current request."""
    return flask.current_app.config[CAPS_KEY]


def to_id(value: Any, name: str) -> int:
    """``value`` (an integer or its digits) as a database id, 1 to 2³¹−1; InputError
    naming ``name`` otherwise."""
    if isinstance(value, str) and DIGITS.fullmatch(value.strip()):
        value = int(value) if len(value.strip()) <= 20 else MAX_ID + 1
    if not isinstance(value, int) or isinstance(value, bool):
        raise InputError(f"{name} {_shown(value)} is not a positive integer")
    if not 1 <= value <= MAX_ID:
        raise InputError(f"{name} {_shown(value)} is out of range: ids go from 1 to {MAX_ID}")
    return value


def optional_id(value: Any, name: str) -> int | None:
    """:func:`to_id`, with None and "" meaning no id."""
    return None if value is None or value == "" else to_id(value, name)


def parse_ids(text: Any) -> list[int] | None:
    """``"3,1,2"`` → [1, 2, 3]; None for an empty value; InputError naming a bad id."""
    if text is None or text == "":
        return None
    if not isinstance(text, str | int) or isinstance(text, bool):
        raise InputError(f"job ids {_shown(text)} are not a list such as 1,2,3")
    parts = [part.strip() for part in str(text).split(",")]
    return sorted({to_id(part, "job id") for part in parts if part}) or None


def name_filter(value: Any, name: str) -> str | None:
    """A filter by name (solver, loss, status): None for any, else printable text."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > MAX_NAME or not value.isprintable():
        raise InputError(f"{name} {_shown(value)} is not a name")
    return value


def parse_int(text: Any) -> int | None:
    """An id or index from the URL; None when absent or not an integer from 0 to 2³¹−1."""
    text = str(text) if text is not None else ""
    return int(text) if DIGITS.fullmatch(text) and len(text) <= 10 and int(text) <= MAX_ID else None


EPS_DEFAULT = "1e-6"
EPS_RANGE = (1e-16, 1.0)
EPS_ACCEPTED = f"a number from {EPS_RANGE[0]:g} to {EPS_RANGE[1]:g}, such as 1e-6"
MAX_CHOSEN = 50  # ids per filter of a list


def parse_eps(value: Any) -> tuple[str, str | None]:
    """(ε as text, None) if ``value`` is a number in EPS_RANGE, else (the default, why)."""
    if value is None or value == "":
        return EPS_DEFAULT, None
    text = str(value).strip()[:40]
    try:
        eps = float(text)
    except ValueError:
        eps = math.nan
    if math.isfinite(eps) and EPS_RANGE[0] <= eps <= EPS_RANGE[1]:
        return re.sub(r"e([+-])0*(?=\d)", r"e\1", f"{eps:g}"), None  # 1e-06 → 1e-6
    return EPS_DEFAULT, f"ε {text!r} is not accepted ({EPS_ACCEPTED}); showing ε = {EPS_DEFAULT}"


def parse_id_list(value: Any, name: str) -> tuple[list[int], list[str]]:
    """The ids of a URL value ``"3,1,2"`` or of a dropdown's list, and what was rejected."""
    if value is None or value == "":
        return [], []
    if isinstance(value, list):
        parts = value
    elif isinstance(value, str | int) and not isinstance(value, bool):
        parts = str(value).split(",")
    else:
        return [], [f"{name} {str(value)[:40]!r} is not a list of ids such as 1,2"]
    ids, rejected = [], []
    for part in parts[: MAX_CHOSEN + 1]:
        if isinstance(part, str) and not part.strip():
            continue
        try:
            ids.append(to_id(part.strip() if isinstance(part, str) else part, name))
        except InputError as err:
            rejected.append(f"{err}; ignored")
    if len(parts) > MAX_CHOSEN:
        rejected.append(f"more than {MAX_CHOSEN} {name}s: the first {MAX_CHOSEN} are used")
    return sorted(set(ids))[:MAX_CHOSEN], rejected


def choice(value: Any, accepted: Sequence[str] | Mapping[str, Any], default: str) -> str:
    """``value`` if it is one of ``accepted``, else ``default`` (URLs are typed by people)."""
    return value if isinstance(value, str) and value in accepted else default


def error_banner() -> html.Div:
    """Where the page says that a callback failed (filled by :func:`callback_error`)."""
    return html.Div(id=ERROR_BANNER, className="error banner", role="alert")


def callback_error(err: Exception) -> None:
    """The error handler of every callback (Dash's ``on_error``): the page keeps its content
    and says in its banner what went wrong. Input errors and an unreachable database are
    explained; anything else is logged with its traceback."""
    if isinstance(err, InputError):
        message = str(err)
    elif isinstance(err, UnsupportedRelativePath):  # Dash's page router
        message = "this address is not a page of the dashboard"
    elif isinstance(err, SQLAlchemyError) and is_unavailable(err):
        log.warning("database unavailable for %s: %s", _outputs(), brief(err))
        message = f"database unavailable ({brief(err)}); try again in a moment"
    else:
        log.error("callback for %s failed", _outputs(), exc_info=err)
        message = "internal error while updating the page; it is logged on the server"
    set_props(ERROR_BANNER, {"children": f"{time.strftime('%H:%M:%S')} · {message}"})


def _outputs() -> str:
    outputs = ctx.outputs_list
    outputs = outputs if isinstance(outputs, list) else [outputs]
    return ", ".join(
        _shown(f"{o.get('id')}.{o.get('property')}") for o in outputs if isinstance(o, dict)
    )


def exact_number(value: float | int | None) -> str:
    """A number as a person writes a parameter: exact (the shortest repr that reads back
    as the same float) and compact — ``2``, ``0``, ``0.5``, ``1e-4``, ``2.5e-7``, ``1e6``:
    an exponent below 1e-3 and from 1e6, no trailing zeros; an int as it is. None is
    ``""``."""
    if value is None:
        return ""
    if isinstance(value, int) or not math.isfinite(value):
        return str(value)
    digits = Decimal(repr(value)).normalize()  # repr: the shortest exact digits
    if digits == 0:
        return "0"
    if 1e-3 <= abs(value) < 1e6:
        return format(digits, "f")
    mantissa, _, exponent = format(digits, "e").partition("e")
    return f"{mantissa}e{int(exponent)}"


def table(
    table_id: str, columns: Sequence[tuple[str, str, str]], number: Any = None, **options: Any
) -> dash_table.DataTable:
    """A sortable table of 50 rows a page; ``columns``: (key, header, kind), kind
    ``markdown`` (links), ``numeric`` (shown with the format ``number``) or ``text``. Long
    cells wrap and a table wider than the window scrolls inside its own box, so the page
    stays within the window."""
    specs, left = [], []
    for key, name, kind in columns:
        if kind != "numeric":  # words read from the left, numbers line up on the right
            left.append({"if": {"column_id": key}, "textAlign": "left"})
        spec: dict[str, Any] = {"id": key, "name": name}
        if kind == "markdown":
            spec["presentation"] = "markdown"
        else:
            spec["type"] = kind
            if kind == "numeric" and number is not None:
                spec["format"] = number
        specs.append(spec)
    return dash_table.DataTable(
        id=table_id,
        columns=specs,
        sort_action="native",
        page_action="native",
        page_size=50,
        markdown_options={"link_target": "_self"},
        style_table={"overflowX": "auto", "maxWidth": "100%"},
        style_cell={
            "fontFamily": "inherit",
            "fontSize": "0.9em",
            "padding": "2px 5px",
            "whiteSpace": "normal",
            "height": "auto",
            "maxWidth": "320px",
        },
        style_cell_conditional=left,
        style_header={"fontWeight": "bold"},
        **options,
    )


def href(path: str, params: Mapping[str, Any]) -> str:
    """``path?query`` with the parameters that are set (None and "" are left out)."""
    query = urlencode({k: v for k, v in params.items() if v not in (None, "")})
    return f"{path}?{query}" if query else path


def share_link(page: str) -> html.A:
    """A link to the current view; the browser's address follows it (see ``url_sync``)."""
    return html.A("link to this view", id=f"{page}-share", href="", className="share")


def url_sync(page: str) -> None:
    """Keep the address bar equal to the page's share link, without reloading the page."""
    clientside_callback(
        ClientsideFunction("faceoff", "replaceUrl"),
        Input(f"{page}-share", "href"),
    )


def options(values: Sequence[Any]) -> list[dict[str, Any]]:
    """Dropdown options from values, or from (value, label) pairs."""
    return [
        {"label": v[1], "value": v[0]} if isinstance(v, tuple) else {"label": str(v), "value": v}
        for v in values
    ]


def control(label: str, component: Any) -> html.Div:
    """A labelled control of a page's control bar."""
    return html.Div([html.Label(label), component], className="control")


# the targets ε of time-to-ε views (as query-string values), 1e-6 by default
EPSILONS = ("1e-2", "1e-3", "1e-4", "1e-6", "1e-8", "1e-10")


def eps_choice(value: Any) -> str:
    """``value`` if it is one of :data:`EPSILONS`, else 1e-6."""
    return choice(value, EPSILONS, "1e-6")


def eps_dropdown(page_id: str, value: Any) -> dcc.Dropdown:
    """The ε dropdown of a time-to-ε view, at ``value`` if accepted, else 1e-6."""
    return dcc.Dropdown(
        id=page_id, options=list(EPSILONS), value=eps_choice(value), clearable=False
    )


def radio(page_id: str, labels: Mapping[str, str], value: Any, default: str) -> dcc.RadioItems:
    """Inline radio items {value: label}, ``value`` if accepted, else ``default``."""
    return dcc.RadioItems(
        id=page_id,
        options=[{"label": label, "value": v} for v, label in labels.items()],
        value=choice(value, labels, default),
        inline=True,
    )


def export_bar(page: str, graphs: Sequence[str], csv_label: str = "CSV") -> html.Div:
    """PNG and SVG buttons for each graph (drawn by the browser) and a CSV download of the
    data shown (the page's ``{page}-csv`` callback fills ``{page}-download``)."""
    buttons: list[Any] = []
    for graph in graphs:
        label = "" if len(graphs) == 1 else f" ({graph.removeprefix(page + '-')})"
        for fmt in ("png", "svg"):
            buttons.append(
                html.Button(
                    f"{fmt.upper()}{label}",
                    id={"type": "export-image", "graph": graph, "format": fmt},
                    className="export",
                )
            )
    buttons.append(html.Button(csv_label, id=f"{page}-csv", className="export"))
    buttons.append(dcc.Download(id=f"{page}-download"))
    return html.Div(buttons, className="exports")


clientside_callback(
    ClientsideFunction("faceoff", "downloadImage"),
    Input({"type": "export-image", "graph": MATCH, "format": MATCH}, "n_clicks"),
    State({"type": "export-image", "graph": MATCH, "format": MATCH}, "id"),
    prevent_initial_call=True,
)
