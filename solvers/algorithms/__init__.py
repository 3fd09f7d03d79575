"""One module per method; each exposes ``solve(problem, params, recorder, seed)`` and ``warmup()``."""
