"""Every solver setting of a figure its own look, apart for colour-blind readers too, and grey
only for "not reached" (dashboard.figures.style); the colour arithmetic it rests on
(dashboard.figures.vision) against published values."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from faceoff.dashboard.figures import style, vision
from faceoff.solvers.catalogue import catalogue

# Sharma, Wu & Dalal 2005, Table 1: (L*a*b*, L*a*b*, ΔE00), with the hue-mean edge cases
SHARMA = [
    ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
    ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
    ((50.0, 2.49, -0.001), (50.0, -2.49, 0.0009), 7.1792),
    ((50.0, 2.49, -0.001), (50.0, -2.49, 0.0011), 7.2195),
    ((50.0, -0.001, 2.49), (50.0, 0.0009, -2.49), 4.8045),
    ((50.0, -0.001, 2.49), (50.0, 0.0011, -2.49), 4.7461),
    ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
    ((50.0, 2.5, 0.0), (61.0, -5.0, 29.0), 22.8977),
    ((50.0, 2.5, 0.0), (56.0, -27.0, -3.0), 31.9030),
    ((60.2574, -34.0099, 36.2677), (60.4626, -34.1751, 39.4387), 1.2644),
    ((2.0776, 0.0795, -1.1350), (0.9033, -0.0636, -0.5514), 0.9082),
]
# a figure's looks must keep this far apart, as the worst of the four readers sees them;
# Okabe & Ito's palette, designed for colour-blind readers, keeps 10.9
SAME_STYLE_FLOOR = 10.5
GREYS = ("#7f7f7f", style.GREY, "#d9d9d9")


@pytest.mark.parametrize(("lab1", "lab2", "expected"), SHARMA)
def test_ciede2000_matches_the_published_test_data(lab1, lab2, expected):
    assert float(vision.ciede2000(np.array(lab1), np.array(lab2))) == pytest.approx(
        expected, abs=1e-4
    )
    assert float(vision.ciede2000(np.array(lab2), np.array(lab1))) == pytest.approx(
        expected, abs=1e-4
    )


def test_the_dichromat_simulations_keep_white_and_lose_what_they_should():
    for matrix in vision.MACHADO.values():  # white and greys stay themselves
        np.testing.assert_allclose(matrix.sum(axis=1), 1.0, atol=1e-3)
    red, green = "#d62728", "#2ca02c"  # plotly's red and green: apart with normal vision,
    normal = vision.distances(vision.seen([red]), vision.seen([green]))[0, 0]
    each = vision.ciede2000(vision.seen([red])[:, 0], vision.seen([green])[:, 0])
    by_vision = dict(zip(vision.VISIONS, each, strict=True))
    assert by_vision["normal"] > 60 and by_vision["tritanopia"] > 40
    assert by_vision["deuteranopia"] < 15 and normal == pytest.approx(min(each))  # not so
    # blue and yellow stay apart for red-green dichromats, not for tritanopes as much
    blue, yellow = vision.seen(["#0072b2"]), vision.seen(["#f0e442"])
    each = vision.ciede2000(blue[:, 0], yellow[:, 0])
    assert each[vision.VISIONS.index("deuteranopia")] > 50
    assert vision.worst_case(["#e69f00", "#cc79a7"])[3] == "tritanopia"
    assert vision.lab("#ffffff")[0] == pytest.approx(100.0, abs=1e-3)


def _figure(spec: list[tuple[str, int]]) -> list[tuple[str, str]]:
    """(solver, setting) pairs: each solver with its number of settings."""
    return [(s, s if k == 0 else f"{s}[p={k}]") for s, n in spec for k in range(n)]


OURS = [n for n in catalogue() if style.library(n) is None]
PEERS = [n for n in catalogue() if style.library(n) is not None]
# the sweep (six of ours, dual_cd, saga and spdc with several settings, six peers),
# grown to 20 settings; every catalogue solver; few solvers with many settings
FIGURES = {
    "the issue's sweep": [
        ("primal_cd", 2),
        ("dual_cd", 3),
        ("agd", 1),
        ("lbfgs", 1),
        ("saga", 2),
        ("spdc", 5),
        ("sklearn.liblinear", 1),
        ("sklearn.lbfgs", 1),
        ("sklearn.saga", 1),
        ("cyanure", 1),
        ("lightning.cd", 1),
        ("lightning.saga", 1),
    ],
    "every solver": [(n, 2 if n == "spdc" else 1) for n in catalogue()],
    "three solvers": [("spdc", 8), ("dual_cd", 6), ("saga", 6)],
    "ours only": [
        ("spdc", 6),
        ("dual_cd", 4),
        ("saga", 4),
        ("primal_cd", 2),
        ("dgpd", 2),
        ("agd", 1),
        ("lbfgs", 1),
    ],
    "one solver": [("spdc", 20)],
    "scikit-learn twice": [(n, 2) for n in PEERS if n.startswith("sklearn.")]
    + [("dual_cd", 3), ("spdc", 3)],
}


def _random_figures(count: int) -> dict[str, list[tuple[str, int]]]:
    rng = random.Random(31)
    out = {}
    for k in range(count):
        chosen = rng.sample(list(catalogue()), rng.randint(2, 12))
        counts = [1] * len(chosen)
        while sum(counts) < 20:
            counts[rng.randrange(len(chosen))] += 1
        out[f"random {k}"] = list(zip(chosen, counts, strict=True))
    return out


def closest(looks: dict[str, style.Look]) -> tuple[float, float]:
    """(the smallest worst-reader ΔE00 between two looks with the same line style, the
    smallest between any two looks)."""
    items = list(looks.values())
    views = vision.seen([look.color for look in items])
    d = vision.distances(views, views)
    same = any_style = np.inf
    for i, j in itertools.combinations(range(len(items)), 2):
        any_style = min(any_style, d[i, j])
        if items[i].dash == items[j].dash:
            same = min(same, d[i, j])
    return float(same), float(any_style)


@pytest.mark.parametrize(
    ("name", "spec"), [*FIGURES.items(), *_random_figures(12).items()], ids=str
)
def test_twenty_settings_each_a_look_of_their_own_apart_for_every_reader(name, spec):
    pairs = _figure(spec)
    looks = style.setting_styles(pairs)
    # figures built from the catalogue grow with it (24 solvers: 25 settings, 8 of sklearn)
    grows = ("the issue's sweep", "every solver", "scikit-learn twice")
    assert len(looks) == len(pairs) == 20 or name in grows
    assert len(set(looks.values())) == len(looks)  # never a repeated (colour, dash)
    same, _ = closest(looks)
    assert same >= SAME_STYLE_FLOOR, (name, same)
    for setting, look in looks.items():
        solver = setting.split("[", 1)[0]
        ours = style.library(solver) is None
        assert look.dash in (style.OUR_DASHES if ours else style.PEER_DASHES), setting
        assert vision.chroma(look.color) >= style.MIN_CHROMA, setting  # never a grey
        to_grey = vision.ciede2000(vision.lab(look.color), vision.lab(list(GREYS)))
        assert to_grey.min() >= 10, (setting, look.color)
    assert style.setting_styles(reversed(pairs)) == looks  # the order given does not matter


def test_ours_and_the_peers_are_drawn_apart():
    looks = style.setting_styles(_figure(FIGURES["the issue's sweep"]))
    assert looks["primal_cd"] == style.Look(style.OURS[0], "solid")  # the catalogue's first
    assert looks["dual_cd[p=1]"].dash == "dot"  # a further setting of ours
    libraries = {
        style.library(s.split("[")[0]): looks[s].dash for s in looks if "." in s or "cyanure" in s
    }
    assert libraries == {
        "scikit-learn": "dash",
        "cyanure": "dashdot",
        "sklearn-contrib-lightning": "longdash",
    }
    assert looks["sklearn.liblinear"].color in style.PEERS
    # the collisions are gone: saga ≠ cyanure, sklearn.lbfgs is not grey
    assert looks["saga"].color != looks["cyanure"].color
    assert looks["sklearn.lbfgs"].color not in GREYS
    assert style.library("acme.newton") == "acme" and style.library("spdc[batch_size=8]") is None
    assert looks["spdc"].symbol == "circle" and looks["sklearn.saga"].symbol == "square"
