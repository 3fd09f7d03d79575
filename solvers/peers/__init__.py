"""Peers: other libraries' solvers behind the interface of ours, one folder per library.

``<library>/__init__.py`` holds the library's ``SPECS`` (light: imports no library),
``<library>/method.py`` the adapters: ``solve(problem, params, recorder, seed) -> str``
functions named by the specs (``SolverSpec.entry``), which import the library lazily and
state the weight mapping to our P(x) = 1/n Σ φ(aᵢᵀx, bᵢ) + l1‖x‖₁ + l2/2‖x‖² once, in their
docstring. They support the losses and penalties they can express exactly; the API
refuses the others like ours. ``refit`` makes the trace: from the library's own callback
where it has one, else by refitting with growing budgets.
"""
