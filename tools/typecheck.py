"""Type-check the service layer: mypy on faceoff.core, faceoff.api, faceoff.worker, faceoff.cli.

The repository's folders are installed as the subpackages of `faceoff` through setuptools'
`package-dir` (pyproject.toml), a mapping mypy cannot follow in an editable install. This script
builds the same package as a tree of symbolic links in `build/typecheck/faceoff/` (read from
pyproject.toml, so a new subpackage needs no edit here) and runs mypy on it with the settings of
`[tool.mypy]`. Exits with mypy's status.

    python tools/typecheck.py            # the four checked packages
    python tools/typecheck.py faceoff.data   # or any others
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from setuptools.config.pyprojecttoml import read_configuration

REPO = Path(__file__).resolve().parent.parent
TREE = REPO / "build" / "typecheck"
CHECKED = ("faceoff.core", "faceoff.api", "faceoff.worker", "faceoff.cli")


def link_tree() -> Path:
    """`build/typecheck/faceoff/<sub>` → `<repo>/<folder>` for every mapped subpackage."""
    config = read_configuration(REPO / "pyproject.toml")
    mapping: dict[str, str] = config["tool"]["setuptools"]["package-dir"]
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
    packages = argv or list(CHECKED)
    tree = link_tree()
    env = dict(os.environ, MYPYPATH=str(tree))
    command = [sys.executable, "-m", "mypy", "--config-file", str(REPO / "pyproject.toml")]
    for package in packages:
        command += ["-p", package]
    return subprocess.run(command, cwd=REPO, env=env, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
