"""``faceoff plugin check``'s command line, in process: its checks as choices, one line and
exit status 2 for bad input or a solver it cannot check (the checks themselves:
tests/plugins/test_conformance.py)."""

from __future__ import annotations

import pytest

from faceoff.cli.main import main
from faceoff.solvers.conformance import CHECKS


def test_the_help_names_every_check(capsys):
    with pytest.raises(SystemExit) as done:
        main(["plugin", "check", "--help"])
    assert done.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert all(check in out for check in CHECKS), out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["plugin", "check", "lab.none"], "faceoff plugin: error: unknown solver 'lab.none'"),
        (["plugin", "check", "lbfgs", "--tol", "0"], "--tol must be a number > 0, got 0.0"),
    ],
)
def test_bad_input_is_one_line_and_status_2(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


def test_an_unknown_check_is_refused(capsys):
    with pytest.raises(SystemExit) as done:
        main(["plugin", "check", "lbfgs", "--only", "speed"])
    assert done.value.code == 2
    assert "invalid choice: 'speed'" in capsys.readouterr().err
