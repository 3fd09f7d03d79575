"""Faceoff solver library: losses, penalties, problems and the coordinate methods.

Import :mod:`faceoff.solvers.catalogue` for metadata only (no Numba);
:func:`faceoff.solvers.run.solve`
runs a solver.

Numba's on-disk cache (``cache=True``) is keyed on each function's own source file, so a
kernel compiled against an older version of a helper in another file (a loss, the
sampler) would be reused after that helper changed. The cache therefore lives in a
folder named after a hash of this package's sources: any change starts a fresh cache.
Set ``FACEOFF_NUMBA_CACHE`` to choose the parent folder (default ~/.cache/faceoff/numba).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path


def _configure_numba_cache() -> None:
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    default = Path.home() / ".cache" / "faceoff" / "numba"
    folder = str(Path(os.environ.get("FACEOFF_NUMBA_CACHE", default)) / digest.hexdigest()[:16])
    # without importing Numba (the API imports the catalogue and must stay light)
    os.environ["NUMBA_CACHE_DIR"] = folder
    config = sys.modules.get("numba.core.config")
    if config is not None:
        config.CACHE_DIR = folder


_configure_numba_cache()
