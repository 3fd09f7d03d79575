"""The packages of the wheel, found in the folders: a new folder (a solver's, a peer
library's, a loss's) needs no edit anywhere to ship.

pyproject.toml maps each subpackage of ``faceoff`` to its top-level folder
(``[tool.setuptools.package-dir]``); every folder below those (``__pycache__`` aside) is a
package here, data-only ones (dashboard/assets, migrations/versions) included, since
setuptools warns "Package would be ignored" for an importable folder that is not listed.
"""

import tomllib
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent


def packages() -> list[str]:
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"
    ]
    found = []
    for package, folder in mapping.items():
        found.append(package)
        if package == "faceoff":
            continue  # faceoff/ holds only __init__.py; its subpackages are mapped
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_dir() and "__pycache__" not in path.parts and not path.name.startswith("."):
                found.append(".".join([package, *path.relative_to(ROOT / folder).parts]))
    return found


setup(packages=packages())
