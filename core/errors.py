"""The service layer's errors besides :class:`faceoff.core.specs.SpecError` (an invalid
request, 422): the API maps NotFoundError to 404, ConflictError to 409 and QuotaExceeded to
429 with Retry-After."""

from __future__ import annotations


class NotFoundError(LookupError):
    """An id that names nothing the caller may see; the message says which."""


class ConflictError(Exception):
    """A request that contradicts the current state (cancel a finished job, reuse a name)."""


class DataUnavailable(Exception):
    """A registered dataset whose data cannot be loaded now (not in the mirror or the cache
    and not downloadable, corrupt, over the size caps); the message names it and says why."""


class QuotaExceeded(Exception):
    """A team's submission over one of its quotas (queued jobs, open sweeps); the message
    names the quota, its setting and the team's count, ``retry_after`` when to try again."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after
