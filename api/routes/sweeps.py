"""``/sweeps``: submit a cartesian product of jobs, list, read with progress."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Response

from faceoff.api.deps import AuthenticatedRoute, Limit, Offset, SessionDep, SettingsDep, TeamDep
from faceoff.api.schemas import Message, SweepCreate, SweepPublic, SweepsPublic
from faceoff.core import jobs
from faceoff.core import sweeps as service
from faceoff.core.models import Sweep
from faceoff.core.specs import TextInt

router = APIRouter(prefix="/sweeps", tags=["sweeps"], route_class=AuthenticatedRoute)

SweepId = Annotated[TextInt, Path(ge=1, le=2**31 - 1, description="sweep id")]


def _public(sweep: Sweep, progress: dict[str, int]) -> SweepPublic:
    return SweepPublic(
        id=sweep.id,
        name=sweep.name,
        spec=sweep.spec,
        n_jobs=sweep.n_jobs,
        created_at=sweep.created_at,
        progress=progress,
        jobs_per_solver=service.solver_counts(sweep),
        duplicates_dropped=sweep.duplicates_dropped or {},
    )


@router.post(
    "",
    response_model=SweepPublic,
    status_code=201,
    responses={
        200: {"model": SweepPublic, "description": "an identical sweep exists"},
        422: {
            "description": "invalid, more jobs than MAX_SWEEP_JOBS, or pinned to a host no "
            "live worker serves"
        },
        429: {"model": Message, "description": "over your team's quotas"},
    },
)
def create_sweep(
    body: SweepCreate, response: Response, session: SessionDep, settings: SettingsDep, team: TeamDep
) -> SweepPublic:
    """Submit a sweep (201) of datasets × losses × l2 × l1 × solver settings × seeds.

    A solver setting that does not use the seed (``uses_seed`` of ``GET /solvers``) runs
    once per objective, or once per seed as timing repeats with ``timing_repeats``;
    ``jobs_per_solver`` says how many jobs of each kind each solver has.

    An identical sweep of your team is returned as is (200) unless ``force``. Each job that
    is identical to a queued, running or succeeded job of your team outside any sweep adopts
    that job; the others are new jobs of this sweep (a sweep owns its jobs).
    """
    sweep, new_jobs, created = service.submit_sweep(
        session, body.spec(), settings, body.force, team_id=team, wait_for_host=body.wait_for_host
    )
    session.commit()
    jobs.enqueue_new(new_jobs, settings)
    if not created:
        response.status_code = 200
    return _public(sweep, service.sweep_progress(session, [sweep.id])[sweep.id])


@router.get("", response_model=SweepsPublic)
def read_sweeps(
    session: SessionDep, team: TeamDep, limit: Limit = 100, offset: Offset = 0
) -> SweepsPublic:
    """Your team's sweeps, newest first, with their progress."""
    rows, count = service.list_sweeps(session, limit, offset, team_id=team)
    progress = service.sweep_progress(session, [s.id for s in rows])
    return SweepsPublic(data=[_public(s, progress[s.id]) for s in rows], count=count)


@router.get("/{sweep_id}", response_model=SweepPublic, responses={404: {"model": Message}})
def read_sweep(sweep_id: SweepId, session: SessionDep, team: TeamDep) -> SweepPublic:
    """A sweep and the number of its jobs per status."""
    sweep = service.get_sweep(session, sweep_id, team_id=team)
    return _public(sweep, service.sweep_progress(session, [sweep_id])[sweep_id])
