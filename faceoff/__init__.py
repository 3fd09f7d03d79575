"""Faceoff: a benchmarking service for regularized-ERM solvers.

The repository's folders are the subpackages of this one package (``faceoff.solvers`` is
``solvers/``, ``faceoff.api`` is ``api/``, ...; see pyproject.toml's package-dir).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("faceoff")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"
