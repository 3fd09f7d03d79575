"""Numba's on-disk cache in a folder keyed by the solver sources, set where a process starts.

Numba's on-disk cache (``cache=True``) is keyed on each function's own source file, so a
kernel compiled against an older version of a helper in another file (a loss, the
sampler) would be reused after that helper changed. The cache therefore lives in a
folder named after a hash of this package's sources: any change starts a fresh cache.
Set ``FACEOFF_NUMBA_CACHE`` to choose the parent folder (default ~/.cache/faceoff/numba).

Numba picks a kernel's cache folder when the kernel's module is imported, so a process
that runs kernels calls :func:`configure_numba_cache` first, before importing them: the
worker (as Celery imports its task modules), ``faceoff solve``, the benchmarks, the tests'
conftest, a program using the library. Child processes inherit the folder
(``NUMBA_CACHE_DIR``). Importing ``faceoff.solvers`` changes nothing.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path


def configure_numba_cache() -> str:
    """Point Numba's cache (``NUMBA_CACHE_DIR``, and Numba's config if it is already
    imported) at the folder of the current solver sources; returns the folder."""
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode())
        digest.update(path.read_bytes())
    default = Path.home() / ".cache" / "faceoff" / "numba"
    folder = str(Path(os.environ.get("FACEOFF_NUMBA_CACHE", default)) / digest.hexdigest()[:16])
    # Numba reads the variable when it is imported; if it already is, its config too
    os.environ["NUMBA_CACHE_DIR"] = folder
    config = sys.modules.get("numba.core.config")
    if config is not None:
        vars(config)["CACHE_DIR"] = folder
    return folder
