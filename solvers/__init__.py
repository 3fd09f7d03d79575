"""Faceoff solver library: losses, penalties, problems and the coordinate methods.

Import :mod:`faceoff.solvers.catalogue` for metadata only (no Numba);
:func:`faceoff.solvers.run.solve` runs a solver. A process that runs kernels first calls
:func:`faceoff.solvers.numba_cache.configure_numba_cache` (the cache folder of these
sources); importing this package has no side effect.
"""
