"""Machine fairness: what a job ran on, and whether its times are comparable.

A worker collects a machine record once per process (:func:`machine_record`): its host
name, CPU model, physical and logical cores, and the versions of NumPy, SciPy, Numba, the
peer libraries and Faceoff. It stores the record on every job it claims
(``Job.machine``), with the run's concurrency — how many jobs were running on that host,
counted in the database at the claim (``Job.concurrency``) and the most seen at the claim,
at each heartbeat and at the end (``Job.concurrency_max``) — and the host's 1-minute load
average at the start and end (``Job.load_start``, ``Job.load_end``).

Counting running jobs in the database, rather than keeping a per-host counter in Redis,
needs no cleanup: a job whose worker was killed stops counting once the reaper requeues
it, whereas a counter would keep the killed run's increment forever.

:func:`fairness_warnings` says, for the rows of a comparison, what makes their times not
comparable: several CPU models, a job that shared its host's cores with more jobs than the
host has physical cores, or a job that ran while the host's load average was above its
physical cores (:func:`overloaded`: other processes than jobs, e.g. a build or a browser,
competed for the cores). The dashboard, the CLI and the API read it from here.
"""

from __future__ import annotations

import os
import platform
import re
import socket
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from faceoff import DISTRIBUTION
from faceoff.core.settings import Settings, get_settings

CPUINFO = Path("/proc/cpuinfo")
# distributions whose versions change timings: ours, the numerical stack and the peers
VERSIONED = (
    DISTRIBUTION,
    "numpy",
    "scipy",
    "numba",
    "scikit-learn",
    "cyanure",
    "sklearn-contrib-lightning",
)
# a host name a job may be pinned to: RFC 1123 labels (underscores allowed, as container
# and cloud host names have them), dot-separated
_LABEL = r"[A-Za-z0-9_]([A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?"
HOST_PATTERN = rf"^{_LABEL}(\.{_LABEL})*$"
HOST_MAX_LENGTH = 253
HOST_QUEUE = "{queue}.host.{host}"


def host_queue(queue: str, host: str) -> str:
    """The Celery queue of jobs pinned to worker host ``host``."""
    return HOST_QUEUE.format(queue=queue, host=host)


def worker_host_name(settings: Settings | None = None) -> str:
    """This worker's host name: ``FACEOFF_WORKER_HOST`` if set (e.g. one name for the
    containers of one machine), else the system's (``settings``: the environment's)."""
    return (settings or get_settings()).WORKER_HOST or socket.gethostname()


def _cpuinfo(text: str) -> tuple[str | None, int | None]:
    """(CPU model, physical cores) from the text of /proc/cpuinfo; None where not stated.
    Physical cores: distinct (physical id, core id) pairs."""
    model = None
    cores: set[tuple[str, str]] = set()
    for block in re.split(r"\n\s*\n", text):
        fields = {}
        for line in block.splitlines():
            key, sep, value = line.partition(":")
            if sep:
                fields[key.strip()] = value.strip()
        model = model or fields.get("model name") or fields.get("Model") or None
        if "core id" in fields:
            cores.add((fields.get("physical id", "0"), fields["core id"]))
    return model, len(cores) or None


def cpu_facts(cpuinfo: Path = CPUINFO) -> tuple[str, int, int]:
    """(CPU model, physical cores, logical cores) of this machine: /proc/cpuinfo where it
    exists, else ``platform.processor()`` and ``os.cpu_count()`` (physical = logical)."""
    logical = os.cpu_count() or 1
    try:
        model, physical = _cpuinfo(cpuinfo.read_text(errors="replace"))
    except OSError:
        model, physical = None, None
    model = model or platform.processor() or platform.machine() or "unknown"
    return " ".join(model.split()), min(physical or logical, logical), logical


def versions(names: Iterable[str] = VERSIONED) -> dict[str, str | None]:
    """{distribution: installed version, None when not installed}."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


@lru_cache(maxsize=1)
def machine_record() -> dict[str, Any]:
    """This process's machine record (collected once): host, cpu_model, physical_cores,
    logical_cores, platform, python and versions."""
    model, physical, logical = cpu_facts()
    return {
        "host": worker_host_name(),
        "cpu_model": model,
        "physical_cores": physical,
        "logical_cores": logical,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": versions(),
    }


def load_average() -> float | None:
    """The host's 1-minute load average (None where the system has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


# ---------------------------------------------------------------- warnings


def machine_text(row: Mapping[str, Any]) -> str | None:
    """One line on what a job ran on, None before a worker recorded it: ``ran on vm (AMD
    EPYC, 2 physical cores): 1 job running at start, at most 2; load 1.2 → 1.5; numpy
    2.4.6, ...``."""
    machine = row.get("machine")
    if not machine:
        return None
    text = (
        f"ran on {machine.get('host')} ({machine.get('cpu_model')}, "
        f"{machine.get('physical_cores')} physical cores): "
        f"{row.get('concurrency')} jobs running at start, at most {row.get('concurrency_max')}"
    )
    loads = [row.get("load_start"), row.get("load_end")]
    if loads[0] is not None:
        text += "; load " + " → ".join(f"{load:g}" for load in loads if load is not None)
    versions = machine.get("versions") or {}
    installed = [f"{name} {version}" for name, version in versions.items() if version]
    return text + (f"; {', '.join(installed)}" if installed else "")


def cpu_model(row: Mapping[str, Any]) -> str | None:
    """The CPU model a job (a mapping with ``machine``) ran on, None if not recorded."""
    machine = row.get("machine") or {}
    return machine.get("cpu_model")


def oversubscribed(row: Mapping[str, Any]) -> bool:
    """Whether the job shared its host with more running jobs than the host has physical
    cores (``concurrency_max`` > ``machine.physical_cores``): its times are inflated."""
    cores = (row.get("machine") or {}).get("physical_cores")
    seen = row.get("concurrency_max") or row.get("concurrency")
    return bool(cores and seen and seen > cores)


def overloaded(row: Mapping[str, Any]) -> float | None:
    """The host's highest 1-minute load average seen by the job (at its start and end) when
    it was above the host's physical cores — other processes were competing for the cores,
    so its times are inflated; None otherwise (or when not recorded)."""
    cores = (row.get("machine") or {}).get("physical_cores")
    loads = [load for load in (row.get("load_start"), row.get("load_end")) if load is not None]
    if not cores or not loads or max(loads) <= cores:
        return None
    return max(loads)


def _jobs(rows: list[Mapping[str, Any]]) -> str:
    ids = ", ".join(str(row.get("id")) for row in rows[:10])
    return ids + (", …" if len(rows) > 10 else "")


def fairness_warnings(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """What makes the times of these jobs not comparable, one sentence each (none: fair).

    Each row is a job as a mapping with ``id``, ``machine``, ``concurrency``,
    ``concurrency_max``, ``load_start`` and ``load_end`` (the API's job, or the dashboard's
    row)."""
    rows = list(rows)
    warnings = []
    models = sorted({m for row in rows if (m := cpu_model(row))})
    if len(models) > 1:
        warnings.append(
            f"measured on {len(models)} different CPU models: {'; '.join(models)} — "
            "times are not comparable across them"
        )
    crowded = [row for row in rows if oversubscribed(row)]
    if crowded:
        worst = max(crowded, key=lambda row: row.get("concurrency_max") or 0)
        cores = worst["machine"]["physical_cores"]
        warnings.append(
            f"{len(crowded)} job(s) ran with more concurrent jobs than physical cores "
            f"(up to {worst.get('concurrency_max')} jobs on {cores} cores; jobs "
            f"{_jobs(crowded)}): their times are inflated"
        )
    loaded = [(load, row) for row in rows if (load := overloaded(row)) is not None]
    if loaded:
        load, worst = max(loaded, key=lambda pair: pair[0])
        cores = worst["machine"]["physical_cores"]
        warnings.append(
            f"{len(loaded)} job(s) ran while their host's load average was above its physical "
            f"cores (up to {load:g} on {cores} cores; jobs {_jobs([r for _, r in loaded])}): "
            "other processes competed for the cores, so their times are inflated"
        )
    return warnings
