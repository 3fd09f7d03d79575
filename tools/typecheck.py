"""Type-check the product: mypy on every subpackage of `faceoff` (the settings of `[tool.mypy]`).

The repository's folders are installed as the subpackages of `faceoff` through setuptools'
`package-dir` (pyproject.toml: `api/` is `faceoff.api`). mypy cannot be pointed at that mapping:
it names a module after its folder (`mypy_path` and `explicit_package_bases` would make `api/`
the package `api`, whose `from faceoff.core import ...` then finds nothing), and the editable
install maps the names through an import hook (`__editable___faceoff_*_finder.py`, loaded by a
`.pth`), which mypy, reading files rather than importing them, does not run. The layout the
project keeps (its top-level folders, issue 26) therefore needs this script: it lays the same
package out as a tree of symbolic links in `build/typecheck/faceoff/` (read from pyproject.toml,
so a new subpackage needs no edit here) and runs mypy on it. Exits with mypy's status.

    python tools/typecheck.py                # every subpackage
    python tools/typecheck.py faceoff.data   # or some
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from setuptools.config.pyprojecttoml import read_configuration

REPO = Path(__file__).resolve().parent.parent
TREE = REPO / "build" / "typecheck"


def package_dir() -> dict[str, str]:
    """pyproject.toml's package-dir: `faceoff.<sub>` → its folder."""
    config = read_configuration(REPO / "pyproject.toml")
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
    return mapping


def link_tree() -> Path:
    """`build/typecheck/faceoff/<sub>` → `<repo>/<folder>` for every mapped subpackage."""
    mapping = package_dir()
    top = TREE / "faceoff"
    top.mkdir(parents=True, exist_ok=True)
    links = {"__init__.py": REPO / mapping["faceoff"] / "__init__.py"}
    for package, folder in mapping.items():
        parts = package.split(".")
        if len(parts) != 2:
            continue  # the top package itself, or a nested one that lives inside its parent
        links[parts[1]] = REPO / folder
    for name, target in links.items():
        link = top / name
        if link.is_symlink() and link.resolve() == target.resolve():
            continue
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(target)
    return TREE


def main(argv: list[str]) -> int:
    packages = argv or [name for name in package_dir() if name.count(".") == 1]
    tree = link_tree()
    env = dict(os.environ, MYPYPATH=str(tree))
    command = [sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml")]
    for package in packages:
        command += ["-p", package]
    return subprocess.run(command, cwd=REPO, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
