"""The pure helpers of the paper benchmarks: labels, table cells, figures (time to target:
tests/core/test_analysis.py)."""

import math

import pytest

from bench.figures import (
    Curve,
    Panel,
    SolverChoice,
    convergence_figure,
    fmt_duration,
    parse_solver,
    speedup_cell,
)
from faceoff.dashboard.figures.style import setting_styles


def test_parse_solver_round_trips_the_label():
    choice = parse_solver("spdc[batch_size=22, sampling=weighted]")
    assert choice == SolverChoice("spdc", (("batch_size", "22"), ("sampling", "weighted")))
    assert choice.label == "spdc[batch_size=22,sampling=weighted]"
    assert choice.param_dict == {"batch_size": "22", "sampling": "weighted"}
    assert parse_solver("dual_cd").label == "dual_cd"


@pytest.mark.parametrize("text", ["spdc[batch_size]", "spdc[=3]", "1spdc", "spdc[a=1"])
def test_parse_solver_rejects_malformed_text(text):
    with pytest.raises(ValueError, match="solver"):
        parse_solver(text)


def test_speedup_cell_cases():
    assert speedup_cell(2.0, 10.0, 10.0) == "5×"
    assert speedup_cell(2.0, None, 20.0) == "> 10×"
    assert speedup_cell(None, 1.0, 1.0) == "—"


def test_fmt_duration():
    assert fmt_duration(48.24) == "48.2 s"
    assert fmt_duration(725) == "12 min 05 s"


def test_convergence_figure_has_log_axes_and_one_legend_entry_per_solver():
    panels = [
        Panel("a", [Curve("dgpd", [0, 1], [1.0, 0.0]), Curve("spdc", [0, 1], [1.0, 0.1])]),
        Panel("b", [Curve("dgpd", [0, 1], [1.0, 1e-3])]),
        Panel("c", [Curve("spdc[batch_size=8]", [0, 1], [1.0, 1e-3])]),
    ]
    fig = convergence_figure(panels, "time", "rel", "title", columns=2)
    assert len(fig.data) == 4
    assert [t.name for t in fig.data if t.showlegend] == ["dgpd", "spdc", "spdc[batch_size=8]"]
    # the dashboard's looks of the figure's settings: a variant apart from its solver
    looks = setting_styles([("dgpd", "dgpd"), ("spdc", "spdc"), ("spdc", "spdc[batch_size=8]")])
    for trace in fig.data:
        assert (trace.line.color, trace.line.dash) == looks[trace.name]
    assert fig.data[3].line.dash == "dot" and fig.data[1].line.dash == "solid"
    assert fig.data[3].line.color != fig.data[1].line.color
    assert all(math.isfinite(v) and v > 0 for t in fig.data for v in t.y)
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis3.type == "log"
