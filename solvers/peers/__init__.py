"""Peers: other libraries' solvers behind the interface of ours.

Each adapter (``sklearn``, ``cyanure``, ``lightning``) exposes ``solve(problem, params,
recorder, seed) -> str`` functions named by the catalogue entries (``SolverSpec.entry``),
imports its library lazily, and states its weight mapping to our
P(x) = 1/n Σ φ(aᵢᵀx, bᵢ) + l1‖x‖₁ + l2/2‖x‖² once, in its docstring. ``refit`` makes the
trace: from the library's own callback where it has one, else by refitting with growing
budgets. Importing this package imports no library.
"""
