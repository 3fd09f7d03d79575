"""Every place that names a loss, a penalty or a normalization derives it from
solvers.vocabulary: the API's OpenAPI enums, the CLI's choices, core's β, the kernels'
losses, the transforms, the catalogue and the dashboard's labels."""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from pathlib import Path

import pytest

from faceoff.api.main import app
from faceoff.cli.main import build_parser
from faceoff.core.references import content_objective
from faceoff.dashboard.figures.labels import objective_labels
from faceoff.data.transforms import NORMALIZATIONS
from faceoff.solvers.catalogue import catalogue
from faceoff.solvers.losses import LossInfo, LossModuleError, make_loss, read_losses
from faceoff.solvers.vocabulary import (
    LOSS_NAMES,
    LOSSES,
    NORMALIZATION_NAMES,
    PENALTY_NAMES,
    get_loss,
    loss_label,
    penalty_name,
    smoothness,
)

ROOT = Path(__file__).resolve().parents[2]
# β of each loss at γ = 2 from the papers: SPDC §7.2 (smoothed hinge 1/γ), logistic 1/4,
# squared 1
BETA_AT_GAMMA_2 = {"logistic": 0.25, "smooth_hinge": 0.5, "squared": 1.0}


def _enums(schema: dict, name: str) -> list[list]:
    """The enums of every property or parameter called ``name`` in an OpenAPI document."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("name") == name and "schema" in node:  # a query parameter
                found.extend(_enum_lists(node["schema"]))
            for key, value in node.get("properties", {}).items():
                if key == name:
                    found.extend(_enum_lists(value))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return found


def _enum_lists(node) -> list[list]:
    """Enums inside a schema node (through anyOf, items and $ref-free nesting)."""
    if isinstance(node, dict):
        own = [node["enum"]] if "enum" in node else []
        return own + [e for value in node.values() for e in _enum_lists(value)]
    if isinstance(node, list):
        return [e for value in node for e in _enum_lists(value)]
    return []


def _resolved(schema: dict) -> dict:
    """The OpenAPI document with every ``$ref`` replaced by what it names."""
    components = schema["components"]["schemas"]

    def resolve(node, depth=0):
        if isinstance(node, dict):
            if "$ref" in node and depth < 20:
                return resolve(components[node["$ref"].rsplit("/", 1)[1]], depth + 1)
            return {k: resolve(v, depth) for k, v in node.items()}
        if isinstance(node, list):
            return [resolve(v, depth) for v in node]
        return node

    return resolve({k: v for k, v in schema.items() if k != "components"})


@pytest.fixture(scope="module")
def openapi() -> dict:
    return _resolved(app.openapi())


def test_api_enums_are_the_vocabulary(openapi):
    # request bodies (job, sweep), query parameters (job filter, dataset stats) and responses
    for name, names in (
        ("loss", LOSS_NAMES),
        ("losses", LOSS_NAMES),
        ("normalize", NORMALIZATION_NAMES),
        ("penalties", PENALTY_NAMES),
    ):
        enums = _enums(openapi, name)
        assert enums, f"no enum for {name!r} in the OpenAPI schema"
        assert all(enum == list(names) for enum in enums), (name, enums)
    paths = openapi["paths"]
    jobs = paths["/api/v1/jobs"]
    assert _enums(jobs["post"]["requestBody"], "loss") == [list(LOSS_NAMES)]
    assert _enums(jobs["get"]["parameters"], "loss") == [list(LOSS_NAMES)]
    stats = next(p for path, p in paths.items() if path.endswith("/stats"))["get"]
    assert _enums(stats["parameters"], "loss") == [list(LOSS_NAMES)]
    assert _enums(stats["parameters"], "normalize") == [list(NORMALIZATION_NAMES)]


def _subparser(parser: argparse.ArgumentParser, *names: str) -> argparse.ArgumentParser:
    for name in names:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[name]
    return parser


def _choices(parser: argparse.ArgumentParser, option: str) -> tuple:
    return tuple(next(a for a in parser._actions if option in a.option_strings).choices)


@pytest.mark.parametrize("command", [("solve",), ("submit",), ("datasets", "info")])
def test_cli_choices_are_the_vocabulary(command):
    parser = _subparser(build_parser(), *command)
    assert _choices(parser, "--loss") == LOSS_NAMES
    assert _choices(parser, "--normalize") == NORMALIZATION_NAMES


@pytest.mark.parametrize("loss", LOSS_NAMES)
def test_smoothness_everywhere_is_the_vocabulary_beta(loss):
    for gamma in (0.5, 1.0, 2.0):
        beta = get_loss(loss).smoothness(gamma)
        assert smoothness(loss, gamma) == beta
        assert make_loss(loss, gamma).smoothness == beta
    assert smoothness(loss, 2.0) == BETA_AT_GAMMA_2[loss]


@pytest.mark.parametrize("loss", LOSS_NAMES)
def test_losses_and_objectives_follow_the_vocabulary(loss):
    info = get_loss(loss)
    made = make_loss(loss, 0.5)
    assert made.name == loss and made.needs_binary_labels == info.needs_binary_labels
    assert set(info.penalties) <= set(PENALTY_NAMES)
    # γ is part of the objective's identity, and of its label, only where it changes the loss
    assert (content_objective("d", loss, 0.5, 0.0, 1.0)["gamma"] is not None) == info.smoothed
    assert (loss_label(loss, 0.5) != loss) == info.smoothed
    row = {"objective_hash": "h", "dataset": "a9a", "loss": loss, "gamma": 0.5}
    row |= {"normalize": "none", "l2": 1e-3, "l1": 0.0}
    assert loss_label(loss, 0.5) in objective_labels([row])["h"]


def test_unknown_names_are_refused_with_the_accepted_ones():
    with pytest.raises(ValueError, match="accepted: " + ", ".join(LOSS_NAMES)):
        make_loss("hinge")
    with pytest.raises(ValueError, match="accepted: " + ", ".join(LOSS_NAMES)):
        smoothness("hinge")


def test_transforms_catalogue_and_penalties_use_the_vocabulary():
    assert tuple(NORMALIZATIONS) == NORMALIZATION_NAMES
    for spec in catalogue().values():
        assert set(spec.losses) <= set(LOSSES) and set(spec.penalties) <= set(PENALTY_NAMES)
    assert penalty_name(0.0) == "l2" and penalty_name(1e-3) == "elastic_net"
    assert penalty_name(1e-3, 0.0) == "l1"


def test_no_loss_name_is_spelled_outside_the_solvers():
    """The acceptance grep: a loss other than the default one is named only in solvers/
    (the default ``logistic`` may be spelled as a default value)."""
    spelled = []
    names = set(LOSS_NAMES) - {"logistic"}
    for folder in ("api", "cli", "client", "core", "dashboard", "data", "worker"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and node.value in names:
                    spelled.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}")
    assert not spelled


def _module(folder: Path, name: str, info: str) -> None:
    """A loss module ``name`` in ``folder`` whose INFO is ``info`` (source text)."""
    (folder / f"{name}.py").write_text(f"from x import LossInfo\n\nINFO = {info}\n")


def _info(name: str, code: int, **changes) -> str:
    fields = {**vars(LOSSES["squared"]), "name": name, "code": code, **changes}
    return "LossInfo(" + ", ".join(f"{key}={value!r}" for key, value in fields.items()) + ")"


def test_the_registry_reads_each_loss_module_without_importing_it(tmp_path):
    """pkgutil lists the modules (not dispatch, not private ones), ast reads their INFO."""
    for name, code in (("beta_loss", 5), ("alpha_loss", 4)):
        _module(tmp_path, name, _info(name, code))
    (tmp_path / "dispatch.py").write_text("raise RuntimeError('never imported')\n")
    (tmp_path / "_helpers.py").write_text("raise RuntimeError('never imported')\n")
    found = read_losses(tmp_path)
    assert list(found) == ["alpha_loss", "beta_loss"]  # sorted, as the API's enums
    expected = {**vars(LOSSES["squared"]), "name": "alpha_loss", "code": 4}
    assert found["alpha_loss"] == LossInfo(**expected)


@pytest.mark.parametrize(
    "info,message",
    [
        ("None", "assigns INFO = LossInfo"),
        ("LossInfo(**FIELDS)", "assigns INFO = LossInfo"),
        ("make_info()", "assigns INFO = LossInfo"),
        (_info("lost", 7, beta=-1.0), "beta -1.0 is not a positive number"),
        (_info("lost", 7).replace("beta=", "beta=1.0 + "), "malformed node"),
        (_info("other", 7), "INFO names the loss 'other', not its module"),
        (_info("lost", 7, extra=1), "unexpected keyword argument 'extra'"),
    ],
)
def test_a_malformed_loss_module_fails_naming_it(tmp_path, info, message):
    _module(tmp_path, "lost", info)
    with pytest.raises(LossModuleError, match=message) as error:
        read_losses(tmp_path)
    assert "lost" in str(error.value)


def test_loss_codes_must_be_unique(tmp_path):
    _module(tmp_path, "first", _info("first", 3))
    _module(tmp_path, "second", _info("second", 3))
    with pytest.raises(LossModuleError, match="'first' and 'second' both have code 3"):
        read_losses(tmp_path)
    codes = [info.code for info in LOSSES.values()]
    assert len(set(codes)) == len(codes)


def test_the_vocabulary_imports_no_numba_and_no_loss_module():
    """The light side reads the losses' sources: importing the vocabulary (as the API does)
    imports neither Numba nor a loss module; asking for a kernel function imports both,
    and sets all of them in the package."""
    code = (
        "import sys, faceoff.solvers.vocabulary as v, faceoff.solvers.losses as losses\n"
        "assert set(v.LOSS_NAMES) == set(losses.LOSSES)\n"
        "assert 'numba' not in sys.modules, 'numba'\n"
        "assert not [m for m in sys.modules if m.startswith('faceoff.solvers.losses.')]\n"
        "losses.loss_value\n"
        "assert 'numba' in sys.modules and 'faceoff.solvers.losses.squared' in sys.modules\n"
        "assert 'dual_step' in vars(losses)  # set once: later lookups are plain reads\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT.parent)
