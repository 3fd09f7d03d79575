"""The names the figures show: axes and measures, solver settings, objectives."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from faceoff.core.paths import grid_size
from faceoff.solvers.catalogue import catalogue
from faceoff.solvers.vocabulary import loss_label, multiclass_label

X_AXES = {
    "time": "solver time (s)",
    "epoch": "epochs (passes over A)",
    "iteration": "iterations",
}
Y_MEASURES = {
    "subopt": "suboptimality P − P*",
    "subopt_rel": "relative suboptimality (P − P*)/|P*|",
    "gap": "duality gap P − D",
    "primal": "primal value P",
    "test_loss": "test loss (held-out)",
    "test_score": "test accuracy / R² (held-out)",
}


def solver_defaults(solver: str) -> dict[str, Any]:
    """Default parameter values of a catalogue solver (empty for an unknown one)."""
    spec = catalogue().get(solver)
    return {p.name: p.default for p in spec.schema} if spec else {}


def _fmt(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


# auto's choices a legend leaves out: the plain option (no acceleration, no shrinking)
_PLAIN_CHOICES = ("none", "off")


def auto_label(auto: Mapping[str, Any]) -> str:
    """``permutation + catalyst``: what a solver's ``auto`` parameters chose (in their
    order), the plain ``none``/``off`` left out, ``on`` as the parameter's name, a number
    as ``step_scale=3``."""
    parts = []
    for name, value in auto.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            parts.append(f"{name}={value:.3g}")
        elif value == "on":
            parts.append(str(name))
        elif value not in _PLAIN_CHOICES:
            parts.append(str(value))
    return " + ".join(parts) or "plain"


def legend_name(
    solver: str,
    params: Mapping[str, Any],
    defaults: Mapping[str, Any],
    auto: Mapping[str, Any] | None = None,
) -> str:
    """``spdc[batch_size=8,sampling=weighted]``: the solver and its non-default parameters;
    then what its ``auto`` parameters chose, if any: ``dual_cd (auto: permutation +
    catalyst)``."""
    changed = [
        f"{k}={_fmt(v)}" for k, v in sorted(params.items()) if k not in defaults or defaults[k] != v
    ]
    name = f"{solver}[{','.join(changed)}]" if changed else solver
    return f"{name} (auto: {auto_label(auto)})" if auto else name


def setting_name(row: Mapping[str, Any]) -> str:
    """The legend name of a job row's solver setting (with what auto chose)."""
    return legend_name(
        row["solver"], row["params"], solver_defaults(row["solver"]), row.get("auto")
    )


def weights_label(
    l2: float, l1: float, intercept: bool = False, path: Mapping[str, Any] | None = None
) -> str:
    """``l2=0.0001``, ``l2=0, l1=0.1``, with ``, intercept`` for a model that fits one; a
    path's l1 is its grid: ``l2=0, l1 path of 50 λ to λ_max·0.001``."""
    if path is not None:
        grid = (
            f"l1 path of {grid_size(path)} given λ"
            if path.get("lambdas") is not None
            else f"l1 path of {grid_size(path)} λ to λ_max·{path['ratio']:g}"
        )
        return f"l2={l2:g}, {grid}" + (", intercept" if intercept else "")
    return f"l2={l2:g}" + (f", l1={l1:g}" if l1 else "") + (", intercept" if intercept else "")


def objective_labels(rows: Sequence[Mapping[str, Any]], full: bool = False) -> dict[str, str]:
    """A label per objective hash: naming only what differs between the objectives, or with
    ``full`` everything (dataset · loss · K-class form · normalization · weights, the form
    as ``K = 20, one-vs-rest`` and absent for a binary problem)."""
    parts: dict[str, dict[str, str]] = {}
    for row in rows:
        parts[row["objective_hash"]] = {
            "dataset": row["dataset"],
            "loss": loss_label(row["loss"], row["gamma"]),
            "form": multiclass_label(row.get("multiclass"), row.get("n_classes")),
            "normalize": "" if row["normalize"] == "none" else f"normalize={row['normalize']}",
            "weights": weights_label(
                row["l2"], row["l1"], bool(row.get("fit_intercept")), row.get("path")
            ),
        }
    varying = ["dataset", "loss", "form", "normalize", "weights"]
    if len(parts) > 1 and not full:
        varying = [k for k in varying if len({p[k] for p in parts.values()}) > 1]
    labels = {h: " · ".join(p[k] for k in varying if p[k]) for h, p in parts.items()}
    if len(set(labels.values())) < len(labels):  # differing in what a label does not show
        labels = {h: f"{label} · objective {h[:8]}".strip(" ·") for h, label in labels.items()}
    return labels


def objective_order(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The full labels of the objectives of ``rows`` in a reading order: by dataset, loss,
    K-class form (binary first), normalization, then by the weights as numbers (l2 = 1e-5
    before 1e-4)."""
    labels = objective_labels(rows, full=True)
    keys = {
        row["objective_hash"]: (
            row["dataset"],
            row["loss"],
            row["gamma"] or 0.0,
            row.get("multiclass") or "",
            row["normalize"],
            row["l2"],
            row["l1"],
            bool(row.get("fit_intercept")),
        )
        for row in rows
    }
    return [labels[h] for h in sorted(keys, key=lambda h: (keys[h], h))]
