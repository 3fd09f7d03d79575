"""The Faceoff REST API (FastAPI): jobs, sweeps, datasets, solvers, references, health."""
