"""The pure helpers of the paper benchmarks: labels, time-to-target, table cells, figures."""

import math

import pytest

from bench.figures import (
    Curve,
    Panel,
    SolverChoice,
    convergence_figure,
    first_reaching,
    fmt_duration,
    median,
    parse_solver,
    relative_gaps,
    solver_colour,
    speedup_cell,
)


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


def test_variants_share_the_colour_of_their_solver():
    assert solver_colour("spdc[batch_size=22]") == solver_colour("spdc")
    assert solver_colour("dgpd") != solver_colour("spdc")


def test_first_reaching_returns_the_first_point_below_the_target():
    xs = [0.0, 1.0, 2.0, 3.0]
    assert first_reaching(xs, [1.0, 1e-3, 1e-7, 1e-9], 1e-6) == 2.0
    assert first_reaching(xs, [1.0, 1e-3, 1e-7, 1e-9], 1e-3) == 1.0
    assert first_reaching(xs, [1.0, 0.5, 0.4, 0.3], 1e-6) is None


def test_relative_gaps_divide_by_the_magnitude_of_pstar():
    assert relative_gaps([3.0, 2.0], 2.0) == [0.5, 0.0]
    assert relative_gaps([-1.0], -2.0) == [0.5]
    assert relative_gaps([0.25], 0.0) == [0.25]


def test_median_counts_unreached_as_infinite():
    assert median([3.0, None, 1.0]) == 3.0
    assert median([None, None, 1.0]) is None
    assert median([1.0, 2.0]) == 1.5
    assert median([]) is None


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
    assert fig.data[3].line.dash == "dash"
    assert all(math.isfinite(v) and v > 0 for t in fig.data for v in t.y)
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis3.type == "log"
