"""core.machine: reading /proc/cpuinfo, and the fairness warnings of a set of jobs."""

from __future__ import annotations

import os
from importlib import metadata

from faceoff.core.machine import (
    _cpuinfo,
    cpu_facts,
    fairness_warnings,
    machine_record,
    overloaded,
    oversubscribed,
)

# two sockets × two cores × two hyperthreads: 8 logical CPUs, 4 physical cores
CPUINFO = "\n\n".join(
    f"processor\t: {cpu}\nmodel name\t: Intel(R)  Xeon(R) Gold 6248\n"
    f"physical id\t: {cpu // 4}\ncore id\t\t: {(cpu // 2) % 2}\n"
    for cpu in range(8)
)


def test_physical_cores_are_distinct_socket_core_pairs():
    assert _cpuinfo(CPUINFO) == ("Intel(R)  Xeon(R) Gold 6248", 4)
    assert _cpuinfo("processor : 0\n") == (None, None)  # nothing stated: fallback


def test_without_proc_cpuinfo_the_platform_is_asked(tmp_path):
    model, physical, logical = cpu_facts(tmp_path / "missing")
    assert model and physical == logical == os.cpu_count()
    (tmp_path / "cpuinfo").write_text(CPUINFO)
    model, physical, _ = cpu_facts(tmp_path / "cpuinfo")
    assert model == "Intel(R) Xeon(R) Gold 6248"  # whitespace normalized
    assert physical == min(4, os.cpu_count())


def test_the_record_names_the_versions_of_the_numerical_stack():
    versions = machine_record()["versions"]
    assert versions["numpy"] == metadata.version("numpy")
    assert versions["faceoff-bench"] == metadata.version("faceoff-bench")
    assert "faceoff" not in versions  # on PyPI, another project's name
    assert set(versions) >= {"scipy", "numba", "scikit-learn", "cyanure"}


def job(job_id, model, cores, concurrency):
    machine = {"cpu_model": model, "physical_cores": cores}
    return {"id": job_id, "machine": machine, "concurrency_max": concurrency}


def test_warnings_name_cpu_models_and_crowded_jobs():
    assert fairness_warnings([job(1, "A", 2, 2), job(2, "A", 2, 1)]) == []
    assert fairness_warnings([job(1, "A", 2, 2), {"id": 3, "machine": None}]) == []
    (models,) = fairness_warnings([job(1, "B", 4, 1), job(2, "A", 4, 1)])
    assert models.startswith("measured on 2 different CPU models: A; B")
    (crowded,) = fairness_warnings([job(1, "A", 2, 3), job(2, "A", 2, 2)])
    assert "up to 3 jobs on 2 cores; jobs 1)" in crowded
    assert oversubscribed(job(1, "A", 2, 3)) and not oversubscribed(job(1, "A", 2, 2))


def test_a_job_run_above_its_hosts_load_is_flagged():
    """The issue's case: a job run at load 4.66 on 2 cores, alone on its host."""
    busy = {**job(7, "A", 2, 1), "load_start": 4.66, "load_end": 3.1}
    calm = {**job(8, "A", 2, 1), "load_start": 1.2, "load_end": 2.0}  # not above 2 cores
    unknown = {**job(9, "A", 2, 1), "load_start": None, "load_end": None}
    assert overloaded(busy) == 4.66 and overloaded(calm) is None and overloaded(unknown) is None
    assert overloaded({"id": 1, "machine": None, "load_start": 9.0}) is None
    assert fairness_warnings([calm, unknown]) == []
    (loaded,) = fairness_warnings([busy, calm])
    assert "load average was above its physical cores (up to 4.66 on 2 cores; jobs 7)" in loaded
    assert "times are inflated" in loaded
