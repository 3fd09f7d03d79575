"""The look of each solver setting (a colour and a line style), the same in every figure of
the dashboard and of the benchmarks (``bench/figures.py``); the grey layer of cells without
a time; the blank figure.

**Looks** (:func:`setting_styles`). A figure gives each of its solver settings a look of its
own, decided from the settings it shows, in a stable order (the catalogue's, then by name),
so the pages of one sweep draw a setting alike:

- *ours and peers apart*: our solvers are drawn solid (their further settings dotted), the
  peers dashed, each library with dash patterns of its own (:data:`PEER_DASHES` shared out
  among the figure's libraries; with fewer than four, a library's further settings take
  its second pattern); dots and markers take the matching symbol (:data:`SYMBOLS`: circles
  and diamonds for ours);
- *one hue family per solver*: a solver's first setting takes the next colour of its side's
  palette (:data:`OURS`, Okabe & Ito's colours for colour-blind readers, and :data:`PEERS`),
  its other settings shades and neighbouring hues of it;
- *never twice, and apart for colour-blind readers*: each colour is the first of its
  candidates (the palette, the family, then a grid of clear colours) that stays at least
  :data:`SAME_STYLE` ΔE00 from every look with the same line style and :data:`ANY_STYLE`
  from every look, as seen with normal vision and with protanopia, deuteranopia and
  tritanopia (:mod:`.vision`); where no candidate does, the one farthest away. No two
  looks of a figure are equal;
- *grey only for "not reached"*: every colour has a chroma of at least :data:`MIN_CHROMA`,
  so none passes for :data:`GREY`.

Which solvers are peers, and their library: a catalogue solver's ``requires`` (the
distribution it needs), else a dotted name's prefix (``sklearn.saga``, a plug-in's
``acme.newton``).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np
import plotly.graph_objects as go

from faceoff.core.analysis import NOT_REACHED
from faceoff.dashboard.figures import vision
from faceoff.solvers.catalogue import catalogue

# our solvers: Okabe & Ito's palette without its yellow and black (too pale, and no hue)
OURS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#882255")
# peers: another palette, at least 7 ΔE00 from each of OURS (Paul Tol's indigo, purple, rose
# and red, and colours of the sRGB cube picked farthest from the others)
PEERS = ("#332288", "#801a00", "#9980ff", "#b3664d", "#8000ff", "#aa3377", "#ee6677", "#cc3311")
OUR_DASHES = ("solid", "dot")  # a setting's index among its solver's settings picks one
PEER_DASHES = ("dash", "dashdot", "longdash", "longdashdot")  # shared out among libraries
SYMBOLS = {
    "solid": "circle",
    "dot": "diamond",
    "dash": "square",
    "dashdot": "triangle-up",
    "longdash": "triangle-down",
    "longdashdot": "pentagon",
}
SAME_STYLE = 12.0  # ΔE00 between two looks with the same line style
ANY_STYLE = 6.0  # ΔE00 between any two looks
FAR = 40.0  # ΔE00 beyond which a fallback colour is far enough (no extreme is sought)
MIN_CHROMA = 20.0  # C*ab of every look: greys (C* ≈ 0) mean "not reached"
LIGHTNESS = (25.0, 78.0)  # L* of a look: readable on white, never black
# a family: lightness steps and hue turns (degrees) around a solver's colour, nearest first
STEPS = (0.0, -12.0, 12.0, -22.0, 22.0, -32.0, 32.0, -42.0)
TURNS = (0.0, -15.0, 15.0, -30.0, 30.0)
PATTERNS = {"solid": "", "dot": ".", "dash": "/", "dashdot": "x", "longdash": "-"}
GREY = "#9e9e9e"  # cells and bars of settings without a time: never reached, no P*
GREY_SCALE = [[0.0, "#d9d9d9"], [1.0, GREY]]


class Look(NamedTuple):
    """How a solver setting is drawn: its colour, its line style and its marker symbol."""

    color: str
    dash: str

    @property
    def symbol(self) -> str:
        return SYMBOLS[self.dash]


def _catalogue() -> list[tuple[str, str | None]]:
    """The catalogue's solvers in its order, each with the distribution it requires."""
    return [(name, spec.requires) for name, spec in catalogue().items()]


def library(solver: str) -> str | None:
    """The library a peer comes from (the distribution its spec requires, else its dotted
    name's prefix), None for one of ours. ``spdc[batch_size=8]`` is ``spdc``'s."""
    solver = solver.split("[", 1)[0]
    requires = dict(_catalogue()).get(solver)
    if requires:
        return requires
    return solver.split(".", 1)[0] if "." in solver else None


def _solver_key(solver: str) -> tuple[int, str]:
    order = [name for name, _ in _catalogue()]
    return (order.index(solver) if solver in order else len(order), solver)


@lru_cache(maxsize=256)
def _family(base: str) -> tuple[str, ...]:
    """Colours of ``base``'s family, nearest first: its lightness stepped and its hue
    turned in CIELCh, each brought into sRGB by lowering its chroma, the pale and grey
    ones left out."""
    lightness, a, b = vision.lab(base)
    chroma, hue = np.hypot(a, b), np.arctan2(b, a)
    out = []
    for step, turn in itertools.product(STEPS, TURNS):
        target = float(np.clip(lightness + step, *LIGHTNESS))
        angle = hue + np.radians(turn)
        for scale in np.linspace(1.0, 0.0, 21):
            rgb, inside = vision.lab_to_rgb(
                (target, chroma * scale * np.cos(angle), chroma * scale * np.sin(angle))
            )
            if inside:
                break
        color = vision.rgb_to_hex(rgb)
        if vision.chroma(color) >= MIN_CHROMA and color not in out:
            out.append(color)
    return tuple(out)


@lru_cache(maxsize=1)
def _grid() -> tuple[tuple[str, ...], np.ndarray]:
    """The last resort: clear colours of the sRGB cube (an 11-step grid) in the lightness
    range, with how each vision sees them."""
    steps = np.linspace(0.0, 1.0, 11)
    cube = np.array(list(itertools.product(steps, steps, steps)))
    lab = vision.linear_to_lab(vision.to_linear(cube))
    clear = (
        (np.hypot(lab[:, 1], lab[:, 2]) >= 30)
        & (lab[:, 0] >= LIGHTNESS[0])
        & (lab[:, 0] <= LIGHTNESS[1])
    )
    colors = tuple(vision.rgb_to_hex(c) for c in cube[clear])
    return colors, vision.seen(colors)


def _pick(preferred: Sequence[str], drawn: Sequence[Look], dash: str) -> str:
    """The first colour of ``preferred`` that keeps SAME_STYLE from the ``drawn`` looks with
    line style ``dash`` and ANY_STYLE from all of them; else, of ``preferred`` and the grid,
    the one that comes closest to those thresholds, then the farthest from them."""
    seen_drawn = vision.seen([look.color for look in drawn])
    same = np.array([look.dash == dash for look in drawn], dtype=bool)
    taken = {look.color for look in drawn}

    def away(views: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        d = vision.distances(views, seen_drawn)
        return d[:, same].min(axis=1, initial=np.inf), d.min(axis=1, initial=np.inf)

    to_same, to_every = away(vision.seen(preferred))
    for k, color in enumerate(preferred):
        if color not in taken and to_same[k] >= SAME_STYLE and to_every[k] >= ANY_STYLE:
            return color
    grid_colors, grid_seen = _grid()
    grid_same, grid_every = away(grid_seen)
    colors = [*preferred, *grid_colors]
    same_d, every_d = np.concatenate([to_same, grid_same]), np.concatenate([to_every, grid_every])
    # the thresholds first, then the farthest (up to FAR)
    score = (
        1e4 * np.minimum(same_d, SAME_STYLE)
        + 1e2 * np.minimum(every_d, ANY_STYLE)
        + np.minimum(same_d, FAR)
        + np.minimum(every_d, FAR)
    )
    score[[k for k, color in enumerate(colors) if color in taken]] = -np.inf
    return colors[int(np.argmax(score))]


@lru_cache(maxsize=128)
def _looks(pairs: tuple[tuple[str, str], ...]) -> dict[str, Look]:
    by_solver: dict[str, list[str]] = {}
    for solver, setting in sorted(set(pairs), key=lambda p: (_solver_key(p[0]), p[1])):
        by_solver.setdefault(solver, []).append(setting)
    libraries = list(dict.fromkeys(lib for s in by_solver if (lib := library(s)) is not None))
    looks: dict[str, Look] = {}
    bases: dict[str, str] = {}
    used_palette: dict[bool, list[str]] = {False: [], True: []}
    for k in range(max((len(v) for v in by_solver.values()), default=0)):
        for solver, settings in by_solver.items():
            if k >= len(settings):
                continue
            lib = library(solver)
            if lib is None:
                dash = OUR_DASHES[k % len(OUR_DASHES)]
            else:  # the patterns shared among the libraries, a library's by its settings
                own = max(1, len(PEER_DASHES) // len(libraries))
                index = libraries.index(lib) + len(libraries) * (k % own)
                dash = PEER_DASHES[index % len(PEER_DASHES)]
            if k == 0:
                palette = PEERS if lib is not None else OURS
                preferred = [c for c in palette if c not in used_palette[lib is not None]]
            else:
                preferred = list(_family(bases[solver]))
            color = _pick(preferred, list(looks.values()), dash)
            looks[settings[k]] = Look(color, dash)
            if k == 0:
                bases[solver] = color
                used_palette[lib is not None].append(color)
    return {setting: looks[setting] for settings in by_solver.values() for setting in settings}


def setting_styles(settings: Iterable[tuple[str, str]]) -> dict[str, Look]:
    """The look of each solver setting of a figure, from its (solver, setting) pairs (see
    the module's "Looks"), in the looks' order (ours, then peers, each by the catalogue's
    order, then by name): the same settings always get the same looks."""
    return dict(_looks(tuple(sorted(set(settings)))))


def rgba(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def grey_layer(
    settings: Sequence[str], objectives: Sequence[str], states: Mapping[tuple[int, int], str]
) -> dict[str, Any]:
    """The cells with no time or rank, grey and labelled with why (``states``: (setting,
    objective) index → :func:`faceoff.core.analysis.unreached_reason`): a heatmap trace as
    Plotly's JSON, for ``go.Figure.add_trace`` or a figure written as JSON."""
    z = np.full((len(settings), len(objectives)), np.nan)
    text = [[""] * len(objectives) for _ in settings]
    for (i, j), state in states.items():
        z[i, j] = 1.0 if state == NOT_REACHED else 0.0
        text[i][j] = state
    return {
        "type": "heatmap",
        "z": z,
        "x": list(objectives),
        "y": list(settings),
        "text": text,
        "texttemplate": "%{text}",
        "textfont": {"color": "#222"},
        "colorscale": GREY_SCALE,
        "zmin": 0,
        "zmax": 1,
        "showscale": False,
        "name": "no time",
        "hovertemplate": "%{y}<br>%{x}<br>%{text}<extra></extra>",
    }


def empty_figure(message: str) -> go.Figure:
    """A blank figure that says why it is blank."""
    fig = go.Figure()
    fig.add_annotation(text=message, xref="paper", yref="paper", x=0.5, y=0.5, showarrow=False)
    fig.update_layout(template="plotly_white", xaxis={"visible": False}, yaxis={"visible": False})
    return fig
