"""docs/plugins.md keeps up with the code: every field of SolverSpec and Param is in its
tables, and every attribute it documents of Problem, Data, the Recorder and the loss and
penalty exists, with a docstring where it is a method or property."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from faceoff.solvers.problem import Data, Problem, build_problem
from faceoff.solvers.spec import Param, SolverSpec
from faceoff.solvers.trace import Recorder, StopRules
from tests.conftest import REPO

DOC = (REPO / "docs" / "plugins.md").read_text()


def table_names(heading: str) -> set[str]:
    """The backquoted names of the first column of the table after ``heading``."""
    rows: list[str] = []
    for line in DOC.split(heading, 1)[1].splitlines():
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            break
    rows = [row for row in rows if row.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([a-z_]+)", row.split("|")[1])}


def test_every_spec_field_is_documented():
    fields = {f.name for f in dataclasses.fields(SolverSpec) if f.init and f.name != "_"}
    assert fields == table_names("## The spec: `SolverSpec`")


def test_every_param_field_is_documented():
    section = DOC.split("## Parameters: `Param`", 1)[1].split("\n## ", 1)[0]
    signature = re.search(r"`Param\(([^)]*)\)`", section).group(1)
    assert [name.strip() for name in signature.split(",")] == [
        f.name for f in dataclasses.fields(Param)
    ]


@pytest.fixture(scope="module")
def problem() -> Problem:
    rng = np.random.default_rng(0)
    return build_problem(rng.standard_normal((6, 3)), np.arange(6) % 3, "logistic",
                         multiclass="ovr")  # fmt: skip


@pytest.mark.parametrize(
    ("heading", "owner"),
    [("`faceoff.solvers.problem.Problem`", "problem"), ("`faceoff.solvers.problem.Data`", "data")],
)
def test_the_documented_attributes_exist(problem, heading, owner):
    target = problem if owner == "problem" else problem.data
    names = table_names(heading)
    assert len(names) > 10, names
    for name in names:
        if name in ("loss", "penalty") and owner == "problem":
            continue
        assert hasattr(target, name), f"{type(target).__name__}.{name}"
        member = getattr(type(target), name, None)
        if callable(member) or isinstance(member, property):
            assert (member.__doc__ or "").strip(), f"{type(target).__name__}.{name}"


def test_the_documented_recorder_loss_and_penalty_members_exist(problem):
    recorder = Recorder(problem, StopRules())
    for name in ("checkpoint", "interrupted", "elapsed", "stop", "due", "end", "record_fit",
                 "points", "last", "start", "pause", "resume"):  # fmt: skip
        assert hasattr(recorder, name), name
        member = getattr(Recorder, name, None)
        if callable(member):
            assert (member.__doc__ or "").strip(), name
    for name in ("name", "gamma", "smoothness", "needs_binary_labels", "params"):
        assert hasattr(problem.loss, name), name
    for name in ("l1", "l2", "name", "value", "conjugate", "conjugate_grad", "prox"):
        assert hasattr(problem.penalty, name), name
    assert isinstance(problem.data, Data)
