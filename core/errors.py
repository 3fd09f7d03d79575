"""The service layer's errors besides :class:`faceoff.core.specs.SpecError` (an invalid
request, 422): the API maps NotFoundError to 404 and ConflictError to 409."""

from __future__ import annotations


class NotFoundError(LookupError):
    """An id that names nothing the caller may see; the message says which."""


class ConflictError(Exception):
    """A request that contradicts the current state (cancel a finished job, reuse a name)."""


class DataUnavailable(Exception):
    """A registered dataset whose data cannot be loaded now (not in the mirror or the cache
    and not downloadable, corrupt, over the size caps); the message names it and says why."""
