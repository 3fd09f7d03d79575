"""Faceoff solver library: losses, penalties, problems and the coordinate methods.

Import :mod:`faceoff.solvers.catalogue` for metadata only (no Numba);
:func:`faceoff.solvers.run.solve` runs a solver. A process that runs kernels first calls
:func:`faceoff.solvers.numba_cache.configure_numba_cache` (the cache folder of these
sources); importing this package has no side effect.

``PLUGIN_API`` is the version of what a plug-in solver may rely on (docs/plugins.md: the
entry point, ``SolverSpec`` and ``param``, the ``solve`` contract, ``Problem``, ``Data``,
the ``Recorder`` and ``run_chunked``), MAJOR.MINOR: a minor release only adds to it, a major
one may change or remove. A plug-in states the version it was written for in
``SolverSpec.plugin_api``; the catalogue leaves out one that needs a newer minor version or
another major one, saying so.
"""

# 1.1: the penalty "l1" (l2 = 0), which a spec takes only by listing it (the default
# penalties are the strongly convex ones, as in 1.0)
PLUGIN_API = "1.1"
