"""bench/run_multiclass.py races only solvers that declare the form it poses."""

import pytest

from bench import run_multiclass as bench
from faceoff.solvers.catalogue import get_spec


@pytest.mark.parametrize("form", ["ovr", "multinomial"])
def test_every_raced_solver_declares_the_form_and_the_logistic(form):
    for name in (*bench.OURS[form], *bench.PEERS[form]):
        spec = get_spec(name)
        assert form in spec.multiclass, (name, spec.multiclass)
        assert "logistic" in spec.losses and "l2" in spec.penalties, name
    assert set(bench.PAIRS[form]) <= {*bench.OURS[form], *bench.PEERS[form]}
