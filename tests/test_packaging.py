"""Installing Faceoff adds one import name, ``faceoff``: a built wheel holds the repository's
folders as its subpackages (with the dashboard's assets, the dataset registry and the
migrations), a new solver folder with no edit elsewhere, and nothing else."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile

from tests.conftest import REPO


def test_a_wheel_holds_exactly_one_top_level_package(tmp_path):
    source = tmp_path / "source"
    files = subprocess.run(
        ["git", "ls-files"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout.split()
    for name in files:  # a clean copy: the build leaves nothing in the work tree
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    # a new solver is one folder, no other edit: setup.py lists it for the wheel
    new = source / "solvers" / "algorithms" / "zz_new"
    new.mkdir()
    (new / "__init__.py").write_text('"""A new solver\'s spec."""\n')
    (new / "method.py").write_text('"""A new solver\'s method."""\n')
    command = [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation"]
    built = subprocess.run(
        [*command, "-w", str(tmp_path), str(source)], check=True, capture_output=True, text=True
    )
    # every importable folder is listed: no "Package would be ignored" (30 lines each)
    assert "absent from the `packages` configuration" not in built.stdout + built.stderr
    (wheel,) = tmp_path.glob("faceoff_bench-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names if ".dist-info/" not in name}
    assert top == {"faceoff"}
    for shipped in (
        "faceoff/__init__.py",
        "faceoff/api/routes/jobs.py",
        "faceoff/solvers/algorithms/dual_cd/__init__.py",
        "faceoff/solvers/algorithms/dual_cd/method.py",
        "faceoff/solvers/peers/sklearn/method.py",
        "faceoff/dashboard/assets/style.css",
        "faceoff/dashboard/figures/compare.py",
        "faceoff/dashboard/pages/compare.py",
        "faceoff/data/registry.toml",
        "faceoff/migrations/env.py",
        "faceoff/migrations/script.py.mako",
        "faceoff/migrations/versions/0001_initial_schema.py",
        "faceoff/solvers/algorithms/zz_new/__init__.py",
        "faceoff/solvers/algorithms/zz_new/method.py",
    ):
        assert shipped in names, shipped
    assert not any(name.startswith(("faceoff/tests", "faceoff/bench")) for name in names)


def test_the_version_is_read_from_the_distribution():
    from importlib.metadata import version

    import faceoff
    from faceoff.api.main import create_app
    from faceoff.core.settings import Settings

    assert faceoff.__version__ == version("faceoff-bench")
    assert create_app(Settings(DATABASE_URL="sqlite://")).version == faceoff.__version__


def test_the_install_adds_no_generic_top_level_name(tmp_path):
    """Outside the repository, only ``faceoff`` is importable of this project's names."""
    names = ["api", "core", "data", "cli", "client", "dashboard", "solvers", "worker"]
    code = (
        "import importlib.util as u, sys; "
        f"found = [n for n in {names!r} if u.find_spec(n) is not None]; "
        "assert not found, found; assert u.find_spec('faceoff.solvers.catalogue')"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=tmp_path)


def test_the_distribution_is_faceoff_bench_everywhere_it_is_named():
    """``faceoff`` on PyPI is another project: the distribution is ``faceoff-bench`` (import
    name and command ``faceoff``), and nothing tells anyone to install ``faceoff``."""
    import tomllib
    from importlib.metadata import distribution

    import faceoff

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["name"] == faceoff.DISTRIBUTION == "faceoff-bench"
    assert project["scripts"] == {"faceoff": "faceoff.cli.main:main"}
    installed = distribution("faceoff-bench")
    assert installed.version == project["version"] == faceoff.__version__
    assert {e.name for e in installed.entry_points if e.group == "console_scripts"} == {"faceoff"}
    example = tomllib.loads((REPO / "examples/faceoff-plugin-example/pyproject.toml").read_text())
    (needs,) = [d for d in example["project"]["dependencies"] if d.startswith("faceoff")]
    assert needs.startswith("faceoff-bench>="), needs
    wrong = re.compile(r"""pip install[^\n`]*["' ]faceoff(\[|[<>=]|["' ]|$)|["']faceoff[<>=]""")
    for name in (
        "README.md",
        "CONTRIBUTING.md",
        "Makefile",
        "Dockerfile",
        ".ci/run",
        "docs/plugins.md",
        "examples/faceoff-plugin-example/README.md",
        "solvers/spec.py",
        "bench/README.md",
    ):
        path = REPO / name
        if path.exists():
            for line in path.read_text().splitlines():
                assert not wrong.search(line), f"{name}: {line}"
