"""The computed verdicts of the paper benchmarks (never written in)."""

from bench.run_dgpd_sparse import claim_lines
from bench.run_spdc_ridge import ahead_verdict


def _cell(p6, p9, final=1e-3):
    return {
        1e-6: {"passes": p6, "seconds": None},
        1e-9: {"passes": p9, "seconds": None},
        "final_rel": final,
    }


def test_spdc_is_ahead_with_fewer_passes_than_both_rivals():
    cells = {"spdc": _cell(50, 90), "dual_cd": _cell(60, 200), "saga": _cell(80, None)}
    ahead, detail = ahead_verdict(cells, "spdc")
    assert ahead is True and "1e-09" in detail


def test_spdc_is_behind_when_a_rival_needs_fewer_passes():
    cells = {"spdc": _cell(50, 90), "dual_cd": _cell(40, 80), "saga": _cell(80, None)}
    assert ahead_verdict(cells, "spdc")[0] is False


def test_without_any_target_the_final_suboptimality_decides():
    cells = {
        "spdc": _cell(None, None, 1e-5),
        "dual_cd": _cell(None, None, 1e-3),
        "saga": _cell(None, None, 1e-2),
    }
    ahead, detail = ahead_verdict(cells, "spdc")
    assert ahead is True and "final" in detail
    assert ahead_verdict({"spdc": cells["spdc"]}, "spdc")[0] is None


def _row(dgpd, other):
    def run(t):
        return {"seconds": [0.0, t], "rel": [1.0, 1e-9]}

    return {"runs": {"dgpd": run(dgpd), "dual_cd": run(other)}}


def test_claim_lines_count_the_settings_the_reference_wins():
    lines = claim_lines([_row(1.0, 2.0), _row(3.0, 2.0), {"runs": {}}], "dgpd", ["dual_cd"])
    assert len(lines) == 2
    assert all("1 of 2" in line and "not reproduced" in line for line in lines)
    lines = claim_lines([_row(1.0, 2.0)], "dgpd", ["dual_cd"])
    assert all("**reproduced**" in line for line in lines)
