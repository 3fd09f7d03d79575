"""Faceoff: a benchmarking service for regularized-ERM solvers.

The repository's folders are the subpackages of this one package (``faceoff.solvers`` is
``solvers/``, ``faceoff.api`` is ``api/``, ...; see pyproject.toml's package-dir).
"""

from importlib.metadata import PackageNotFoundError, version

# The distribution's name (pip install faceoff-bench): "faceoff" on PyPI is another project.
# The import name and the command stay ``faceoff``.
DISTRIBUTION = "faceoff-bench"

try:
    __version__ = version(DISTRIBUTION)
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"
