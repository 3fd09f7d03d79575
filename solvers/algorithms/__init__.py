"""One module per method, each with ``solve(problem, params, recorder, seed)``."""
