"""``/references``: certified optima P* of objectives."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from faceoff.api.deps import AuthenticatedRoute, SessionDep, SettingsDep, TeamDep
from faceoff.api.schemas import JobPublic, Message, ReferenceCreate, ReferencePublic
from faceoff.core import jobs, references

router = APIRouter(prefix="/references", tags=["references"], route_class=AuthenticatedRoute)


@router.post(
    "",
    response_model=JobPublic,
    status_code=201,
    responses={200: {"model": JobPublic, "description": "an identical job exists"}},
)
def create_reference(
    body: ReferenceCreate,
    response: Response,
    session: SessionDep,
    settings: SettingsDep,
    team: TeamDep,
) -> JobPublic:
    """Submit the high-precision run (tol 1e-13) that certifies P* of an objective (a job
    of your team).

    When it succeeds, the worker records its P and gap as the objective's reference
    (GET /references?objective_hash=, the hash is the job's ``objective_hash`` once the
    job has run). References are keyed by the content of the data (a digest of the matrix
    and labels after transforms), not by the dataset's name, and shared by every team: P*
    is a property of the objective.
    """
    spec = references.reference_job_spec(
        body.objective(), body.solver, body.max_seconds, body.max_epochs
    )
    job, created = jobs.submit_job(session, spec, settings, body.force, team_id=team)
    session.commit()
    if created:
        jobs.enqueue_new([job], settings)
    else:
        response.status_code = 200
    return JobPublic.model_validate(job)


@router.get("", response_model=ReferencePublic, responses={404: {"model": Message}})
def read_reference(
    objective_hash: Annotated[str, Query(pattern=r"^[0-9a-f]{64}$")], session: SessionDep
) -> ReferencePublic:
    """The best certified optimum of an objective, by a job's ``objective_hash`` once a
    worker has run the job (it is then the hash of the job's data digest, loss and weights).
    The description names the dataset only if it is shared with every team."""
    return ReferencePublic.model_validate(references.get_reference(session, objective_hash))
