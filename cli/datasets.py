"""``faceoff datasets list|info|fetch|upload|synthetic|features``: the registry of named
datasets (data.registry), local svmlight files, and the datasets of a Faceoff server
(``--url``): uploads, synthetic problems and random features registered on it."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import DownloadColumn, Progress, TransferSpeedColumn
from rich.table import Table

from faceoff.cli import InputError
from faceoff.cli.service import client_of
from faceoff.core.jsonsafe import json_safe
from faceoff.core.settings import get_settings
from faceoff.core.specs import SpecError
from faceoff.data.cache import load_dataset
from faceoff.data.fetch import locate, status
from faceoff.data.labels import summarize
from faceoff.data.registry import (
    REGISTRY,
    DatasetError,
    DatasetSpec,
    UnknownDatasetError,
    get_spec,
)
from faceoff.data.stats import advise, dataset_stats
from faceoff.data.transforms import Matrix, normalize
from faceoff.solvers.losses import make_loss

if TYPE_CHECKING:
    import numpy as np

UPLOAD_PROGRESS_BYTES = 1 << 20  # show a progress bar for uploads at least this large


def run(args: argparse.Namespace) -> int:
    """Exit status: 0 done, 2 for an unknown name, a bad file or a refused request, 1 when
    the file cannot be found, downloaded or verified or the server cannot be reached;
    errors are one line on stderr."""
    # httpx only for the commands that call a server: CLI start-up
    from faceoff.client import ClientError, ServerUnreachable

    fmt = args.format or ("table" if sys.stdout.isatty() else "json")
    try:
        if args.action == "list":
            _list(args, fmt)
        elif args.action == "info":
            _info(args, fmt)
        elif args.action == "upload":
            _upload(args, fmt)
        elif args.action in ("synthetic", "features"):
            _register(args, fmt)
        else:
            _fetch(args.name, fmt)
    except BrokenPipeError:  # `faceoff datasets list | head`: quiet, like `head` wants
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except DatasetError as err:
        message = " ".join(str(err).split())
        print(f"faceoff datasets {args.action}: error: {message}", file=sys.stderr)
        return 2 if isinstance(err, UnknownDatasetError) else 1
    except (ValueError, InputError) as err:  # bad --l2 / --gamma, a bad file
        message = " ".join(str(err).split())
        print(f"faceoff datasets {args.action}: error: {message}", file=sys.stderr)
        return 2
    except ClientError as err:
        print(f"faceoff datasets {args.action}: error: {err}", file=sys.stderr)
        refused = not isinstance(err, ServerUnreachable) and 400 <= (err.status or 0) < 500
        return 2 if refused else 1
    return 0


def _list(args: argparse.Namespace, fmt: str) -> None:
    if args.url is not None:
        _server_list(args, fmt)
        return
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
    """A registry name, a local svmlight file, or with --url a dataset of the server."""
    if args.url is not None:
        info = _server_info(args)
    elif Path(args.name).is_file():
        info = _file_info(args)
    else:
        if args.name not in REGISTRY and ("/" in args.name or os.sep in args.name):
            raise InputError(f"{args.name}: no such file (nor a name of faceoff datasets list)")
        spec = get_spec(args.name)
        declared = _registry_classes(spec)
        info = {**spec.to_dict(), "status": status(spec), "classes": declared}
        if info["status"] != "remote":  # only parse what is here; `fetch` downloads
            A, b, _ = load_dataset(args.name)
            info.update(_statistics(args, A, b))
            if declared is not None and declared["kind"] == "targets":
                info["classes"] = declared  # integer targets stay targets
    if fmt == "json":
        print(json.dumps(json_safe(info), indent=2))
        return
    grid = Table.grid(padding=(0, 2))
    for key, value in _info_rows(info):
        grid.add_row(f"[bold]{key}[/]", value)
    Console().print(grid, highlight=False)


def _statistics(args: argparse.Namespace, A: Matrix, b: np.ndarray) -> dict[str, Any]:
    """nnz, density, labels (K and the class counts, as read: never binarized), statistics
    (after --normalize) and the advice of (A, b)."""
    A = normalize(A, args.normalize)
    stats = dataset_stats(A, b)
    l2 = args.l2 if args.l2 is not None else 1.0 / A.shape[0]
    if not l2 > 0:
        raise ValueError(f"--l2 must be > 0, got {l2!r}")
    advice = advise(A, make_loss(args.loss, args.gamma).smoothness, l2)
    advice = {"loss": args.loss, "gamma": args.gamma, **advice}
    return _described(stats, args.normalize, advice, summarize(b))


def _described(
    stats: dict[str, Any], how: str, advice: dict[str, Any], classes: dict[str, Any] | None
) -> dict[str, Any]:
    """What info shows of read data; ``classes``: data.labels.summarize of its labels."""
    return {
        "n_samples": stats["n"],
        "n_features": stats["d"],
        "nnz": stats["nnz"],
        "density": stats["density"],
        "classes": classes,
        "labels": stats.get("label_counts"),
        "normalize": how,
        "stats": stats,
        "advice": advice,
    }


def _file_info(args: argparse.Namespace) -> dict[str, Any]:
    """A local svmlight file, parsed as the service parses an upload (same caps)."""
    # core.uploads imports SQLAlchemy: only for a local file
    from faceoff.core.uploads import UploadTooLarge, read_local

    path = Path(args.name)
    try:
        A, b = read_local(path, get_settings())
    except (SpecError, UploadTooLarge) as err:
        raise InputError(str(err)) from None
    except OSError as err:
        raise InputError(f"cannot read {path}: {err.strerror or err}") from None
    return {"name": path.name, "path": str(path.resolve()), **_statistics(args, A, b)}


def _server_info(args: argparse.Namespace) -> dict[str, Any]:
    """A dataset of the server at --url, by name or id: GET /datasets and its statistics."""
    with client_of(args) as client:
        if args.name.isdigit():
            dataset = client.dataset(int(args.name))
        else:
            dataset = client.find_dataset(args.name)
        l2 = args.l2
        if l2 is None:  # 1/n, as for a local file: the server may not know n yet
            n = dataset["n_samples"] or client.dataset_stats(dataset["id"])["stats"]["n"]
            l2 = 1.0 / n
        found = client.dataset_stats(dataset["id"], args.loss, l2, args.gamma, args.normalize)
    info = {k: dataset[k] for k in ("id", "name", "source", "sha256")}
    info["url"] = args.url
    stats, classes = found["stats"], dataset.get("labels")
    return {**info, **_described(stats, found["normalize"], found["advice"], classes)}


def _info_rows(info: dict[str, Any]) -> list[tuple[str, str]]:
    """The rows of ``faceoff datasets info``: what is known of the dataset, then its
    statistics and the advice once its data has been read."""
    rows = [("name", str(info["name"]))]
    if "task" in info:
        rows.append(("task", info["task"]))
    if "path" in info:
        rows.append(("file", info["path"]))
    if "url" in info:
        rows.append(("server", f"{info['url']}: dataset {info['id']}, {_source(info['source'])}"))
    nnz = info.get("nnz")
    rows += [
        ("shape", f"{info['n_samples']:,} x {info['n_features']:,}"),
        ("nnz", "?" if nnz is None else f"{nnz:,}"),
        ("density", f"{info['density']:.4g}" if "density" in info else "? (not fetched)"),
        ("classes", _classes_text(info.get("classes"))),
    ]
    if "provenance" in info:
        rows += [
            ("status", info["status"]),
            ("files", ", ".join(info["files"])),
            ("urls", ", ".join(info["urls"]) or "-"),
            ("test split", info["test"] or "-"),
            ("provenance", info["provenance"]),
        ]
    if "stats" in info:
        st, adv = info["stats"], info["advice"]
        rows += [
            (
                "row norms",
                f"R = {_g(st['R'], '.4g')}, R̄ = {_g(st['R_mean'], '.4g')}, "
                f"R/R̄ = {_g(st['R_ratio'], '.3g')} (after --normalize {info['normalize']})",
            ),
            (
                "advice",
                f"{adv['loss']}, l2 = {adv['l2']:.3g}: κ = {_g(adv['kappa'], '.3g')}; "
                f"T_P/T_D = {_g(adv['ratio'], '.3g')} (importance sampling) → {adv['winner']}",
            ),
        ]
    return rows


def _g(value: float | None, spec: str) -> str:
    """``value`` formatted, or ``-`` when it is not a number (JSON null for NaN)."""
    return "-" if value is None else format(value, spec)


def _source(source: dict[str, Any]) -> str:
    kind = source.get("kind", "?")
    return f"{kind} {source['name']}" if "name" in source else str(kind)


def _server_list(args: argparse.Namespace, fmt: str) -> None:
    """The datasets of the server at --url that you can see."""
    with client_of(args) as client:
        found = client.datasets(limit=1000)
    if fmt == "json":
        print(json.dumps(found["data"], indent=2))
        return
    table = Table(title=f"datasets on {args.url} ({found['count']} in all)", title_justify="left")
    for column in ("id", "name", "source", "n", "d", "nnz"):
        table.add_column(column, justify="right" if column in ("id", "n", "d", "nnz") else "left")
    for d in found["data"]:
        sizes = [d[k] for k in ("n_samples", "n_features", "nnz")]
        table.add_row(
            str(d["id"]),
            d["name"],
            _source(d["source"]),
            *("?" if v is None else f"{v:,}" for v in sizes),
        )
    Console().print(table)


def _upload(args: argparse.Namespace, fmt: str) -> None:
    """Upload a local svmlight file to the server (a progress bar on stderr for large
    files when it is a terminal)."""
    # cli.output imports Numba (solvers.trace): CLI start-up
    from faceoff.cli.output import bar_column

    path = Path(args.file)
    try:
        size = path.stat().st_size
    except OSError as err:
        raise InputError(f"cannot read {path}: {err.strerror or err}") from None
    if not path.is_file():
        raise InputError(f"{path} is not a file")
    errors = Console(stderr=True)
    shown = size >= UPLOAD_PROGRESS_BYTES and errors.is_terminal
    columns = (bar_column(), DownloadColumn(), TransferSpeedColumn())
    with client_of(args) as client, Progress(*columns, console=errors, disable=not shown) as bar:
        task = bar.add_task("upload", total=size)
        dataset, created = client.upload_dataset_created(
            path, args.name, args.n_features, lambda n: bar.advance(task, n)
        )
    if fmt == "json":
        print(json.dumps({**dataset, "created": created}, indent=2))
        return
    what = "uploaded as" if created else "already registered (same file) as"
    shape = [dataset[k] for k in ("n_samples", "n_features", "nnz")]
    print(
        f"{path.name}: {what} dataset {dataset['id']} {dataset['name']!r} "
        f"({shape[0]:,} x {shape[1]:,}, nnz {shape[2]:,})"
    )


def synthetic_source(args: argparse.Namespace) -> dict[str, Any]:
    """The ``synthetic`` source of POST /datasets that ``faceoff datasets synthetic`` asks
    for (options left out are left to the server's defaults and checks)."""
    source = {
        "kind": "synthetic",
        "generator": args.generator,
        "n_samples": args.n_samples,
        "n_features": args.n_features,
        "density": args.density,
        "seed": args.seed,
        "n_classes": args.n_classes,
        "layout": args.layout,
    }
    return {k: v for k, v in source.items() if v is not None}


def features_source(args: argparse.Namespace) -> dict[str, Any]:
    """The ``random_features`` source of POST /datasets for ``faceoff datasets features``."""
    source = {
        "kind": "random_features",
        "base": args.base,
        "map": args.map,
        "n_components": args.n_components,
        "gamma": args.gamma,
        "n_grids": args.n_grids,
        "sigma": args.sigma,
        "seed": args.seed,
    }
    return {k: v for k, v in source.items() if v is not None}


def _register(args: argparse.Namespace, fmt: str) -> None:
    """Register a synthetic problem or random features of a dataset on the server."""
    from faceoff.cli.service import client_of

    source = synthetic_source(args) if args.action == "synthetic" else features_source(args)
    with client_of(args) as client:
        dataset, created = client.register_dataset_created(args.name, source)
    if fmt == "json":
        print(json.dumps({**dataset, "created": created}, indent=2))
        return
    what = "registered as" if created else "already registered (same source) as"
    shape = [dataset.get(k) for k in ("n_samples", "n_features")]
    sized = f" ({shape[0]:,} x {shape[1]:,})" if None not in shape else ""
    made = source.get("generator") or f"{source['map']} features of {source['base']!r}"
    print(f"{args.action} {made}: {what} dataset {dataset['id']} {dataset['name']!r}{sized}")


def _registry_classes(spec: DatasetSpec) -> dict[str, Any] | None:
    """What the registry says of a dataset's labels before its file is read."""
    if spec.task == "regression":
        return {"kind": "targets"}
    if spec.task == "binary":
        return {"kind": "classes", "n_classes": 2, "counts": None}
    if spec.n_classes is None:
        return None
    counts = dict(spec.class_counts) if spec.class_counts else None
    return {"kind": "classes", "n_classes": spec.n_classes, "counts": counts}


def _classes_text(classes: dict | None) -> str:
    """``K = 3: 1 (2), 2 (1), 3 (1)``, ``targets (label 0.5 is not an integer)``."""
    if classes is None:
        return "? (not fetched)"
    if classes["kind"] == "targets":
        example = classes.get("example")
        return "regression targets" + (f" (label {example} is not an integer)" if example else "")
    k, counts = classes["n_classes"], classes.get("counts")
    if not counts:
        return f"K = {k}"
    return f"K = {k}: " + ", ".join(f"{label} ({n:,})" for label, n in counts.items())


def _fetch(name: str, fmt: str) -> None:
    spec = get_spec(name)
    found = locate(spec, copy_to_cache=True, progress=True)
    result = {"name": spec.name, "path": str(found.path), "sha256": found.sha256}
    result["origin"] = found.origin
    if fmt == "json":
        print(json.dumps(result, indent=2))
    else:
        print(f"{spec.name}: {found.path} (from {found.origin}, sha256 {found.sha256})")
