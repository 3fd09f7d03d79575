"""The service's data layer: settings, database models, job specifications.

Nothing here imports Numba: the API uses this package to validate and store requests.
"""
