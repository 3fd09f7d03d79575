"""``faceoff datasets list|info|fetch``: the registry of named datasets (data.registry)."""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np
from rich.console import Console
from rich.table import Table

from faceoff.core.jsonsafe import json_safe
from faceoff.data.cache import load_dataset
from faceoff.data.fetch import locate, status
from faceoff.data.registry import REGISTRY, DatasetError, UnknownDatasetError, get_spec
from faceoff.data.stats import advise, dataset_stats
from faceoff.data.transforms import normalize
from faceoff.solvers.losses import make_loss


def run(args: argparse.Namespace) -> int:
    """Exit status: 0 done, 2 for an unknown name, 1 when the file cannot be found, downloaded
    or verified; errors are one line on stderr."""
    fmt = args.format or ("table" if sys.stdout.isatty() else "json")
    try:
        if args.action == "list":
            _list(fmt)
        elif args.action == "info":
            _info(args, fmt)
        else:
            _fetch(args.name, fmt)
    except BrokenPipeError:  # `faceoff datasets list | head`: quiet, like `head` wants
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except DatasetError as err:
        message = " ".join(str(err).split())
        print(f"faceoff datasets {args.action}: error: {message}", file=sys.stderr)
        return 2 if isinstance(err, UnknownDatasetError) else 1
    except ValueError as err:  # bad --l2 / --gamma
        print(f"faceoff datasets {args.action}: error: {err}", file=sys.stderr)
        return 2
    return 0


def _list(fmt: str) -> None:
    rows = [
        {
            "name": s.name,
            "task": s.task,
            "n_samples": s.n_samples,
            "n_features": s.n_features,
            "nnz": s.nnz,
            "status": status(s),
        }
        for s in REGISTRY.values()
    ]
    if fmt == "json":
        print(json.dumps(rows, indent=2))
        return
    table = Table(title="faceoff datasets (--format json for URLs)", title_justify="left")
    for column in ("name", "task", "n", "d", "nnz", "status"):
        table.add_column(column, justify="right" if column in ("n", "d", "nnz") else "left")
    for r in rows:
        nnz = "?" if r["nnz"] is None else f"{r['nnz']:,}"
        table.add_row(
            str(r["name"]),
            str(r["task"]),
            f"{r['n_samples']:,}",
            f"{r['n_features']:,}",
            nnz,
            str(r["status"]),
        )
    Console().print(table)


def _info(args: argparse.Namespace, fmt: str) -> None:
    spec = get_spec(args.name)
    info = {**spec.to_dict(), "status": status(spec)}
    if info["status"] != "remote":  # only parse what is here; `fetch` downloads
        A, b, _ = load_dataset(args.name)
        A = normalize(A, args.normalize)
        values, counts = np.unique(b, return_counts=True)
        info["nnz"] = A.nnz
        info["density"] = A.nnz / (A.shape[0] * A.shape[1])
        info["labels"] = {f"{v:g}": int(c) for v, c in zip(values, counts, strict=True)}
        info["normalize"] = args.normalize
        info["stats"] = dataset_stats(A)
        l2 = args.l2 if args.l2 is not None else 1.0 / A.shape[0]
        if not l2 > 0:
            raise ValueError(f"--l2 must be > 0, got {l2!r}")
        info["advice"] = {
            "loss": args.loss,
            "l2": l2,
            **advise(A, make_loss(args.loss, args.gamma).smoothness, l2),
        }
    if fmt == "json":
        print(json.dumps(json_safe(info), indent=2))
        return
    grid = Table.grid(padding=(0, 2))
    rows = [
        ("name", spec.name),
        ("task", spec.task),
        ("shape", f"{spec.n_samples:,} x {spec.n_features:,}"),
        ("nnz", "?" if info["nnz"] is None else f"{info['nnz']:,}"),
        ("density", f"{info['density']:.4g}" if "density" in info else "? (not fetched)"),
        ("labels", _labels_text(info.get("labels"))),
        ("status", info["status"]),
        ("files", ", ".join(info["files"])),
        ("urls", ", ".join(info["urls"]) or "-"),
        ("test split", spec.test or "-"),
        ("provenance", spec.provenance),
    ]
    if "stats" in info:
        st, adv = info["stats"], info["advice"]
        rows += [
            (
                "row norms",
                f"R = {st['R']:.4g}, R̄ = {st['R_mean']:.4g}, R/R̄ = {st['R_ratio']:.3g}"
                f" (after --normalize {args.normalize})",
            ),
            (
                "advice",
                f"{adv['loss']}, l2 = {adv['l2']:.3g}: κ = {adv['kappa']:.3g}; "
                f"T_P/T_D = {adv['ratio']:.3g} (importance sampling) → {adv['winner']}",
            ),
        ]
    for key, value in rows:
        grid.add_row(f"[bold]{key}[/]", value)
    Console().print(grid, highlight=False)


def _labels_text(labels: dict | None) -> str:
    if labels is None:
        return "? (not fetched)"
    return ", ".join(f"{k}: {v:,}" for k, v in labels.items())


def _fetch(name: str, fmt: str) -> None:
    spec = get_spec(name)
    found = locate(spec, copy_to_cache=True, progress=True)
    result = {"name": spec.name, "path": str(found.path), "sha256": found.sha256}
    result["origin"] = found.origin
    if fmt == "json":
        print(json.dumps(result, indent=2))
    else:
        print(f"{spec.name}: {found.path} (from {found.origin}, sha256 {found.sha256})")
