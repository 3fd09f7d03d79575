"""``/admin``: the server's own maintenance, for its administrators: with authentication on,
the tokens of the team named by ``FACEOFF_ADMIN_TEAM``; with it off, this machine (the
API then answers loopback clients only)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, ConfigDict, Field, field_validator
from sqlalchemy import select

from faceoff.api.deps import AuthenticatedRoute, SessionDep, SettingsDep, TeamDep
from faceoff.core.models import Team, utcnow
from faceoff.core.retention import AGE_ACCEPTED, parse_age, prune

router = APIRouter(prefix="/admin", tags=["admin"], route_class=AuthenticatedRoute)


class PruneRequest(BaseModel):
    """Which traces to prune: those of jobs finished more than ``older_than`` ago."""

    model_config = ConfigDict(extra="forbid")

    older_than: Annotated[str, Field(description=AGE_ACCEPTED, examples=["90d"])]
    keep_summaries: bool = Field(
        False,
        description="drop the old traces entirely (true) instead of thinning them to the "
        "points the dashboard draws (false); jobs, summaries and P* are kept either way",
    )

    @field_validator("older_than")
    @classmethod
    def _age(cls, value: str) -> str:
        parse_age(value)  # ValueError names what is accepted
        return value


class PrunePublic(BaseModel):
    """What pruning did."""

    jobs: int
    points_deleted: int
    points_kept: int
    mode: str


def _require_admin(session: SessionDep, settings: SettingsDep, team: int | None) -> None:
    if not settings.AUTH_ENABLED:
        return
    admin = settings.ADMIN_TEAM
    name = session.scalar(select(Team.name).where(Team.id == team)) if team is not None else None
    if not admin or name != admin:
        raise HTTPException(
            403,
            "only the tokens of the administrators' team may prune traces: the team named by "
            f"FACEOFF_ADMIN_TEAM ({admin or 'not set on this server'})",
        )


@router.post("/prune", response_model=PrunePublic)
def prune_traces(
    body: PruneRequest, session: SessionDep, settings: SettingsDep, team: TeamDep
) -> PrunePublic:
    """Thin (or drop) the traces of jobs that finished more than ``older_than`` ago, keeping
    the jobs, their summaries (time to ε) and the reference optima (core.retention)."""
    _require_admin(session, settings, team)
    done = prune(session, utcnow() - parse_age(body.older_than), body.keep_summaries)
    session.commit()
    return PrunePublic(**done.as_dict())
