"""Faceoff solver library: losses, penalties, problems and the coordinate methods.

Import :mod:`solvers.catalogue` for metadata only (no Numba); :func:`solvers.run.solve`
runs a solver.
"""
