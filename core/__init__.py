"""The service layer every API route and dashboard page calls: one module per resource of
``api/routes`` (jobs, sweeps, datasets, uploads, references, health) over the settings, the
database models and sessions, and the job specifications.

Nothing here imports Numba: the API uses this package to validate and store requests.
"""
