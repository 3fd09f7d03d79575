"""The peers of part 1: catalogue entries run by the adapters of ``faceoff.solvers.peers``.

The weight mappings, the input layouts and the traces are the service's own (see the
adapters' docstrings and README "Peers"): a peer traced by refits (``trace_mode="refit"``)
is timed here one budget at a time through ``budget_fitter`` (the wall time of one fit from
scratch), a peer with a callback (lightning) by its certified trace, like ours.
"""

from __future__ import annotations

from faceoff.solvers.catalogue import get_spec

#: the peer columns of part 1, by catalogue name
PEERS: tuple[str, ...] = (
    "sklearn.liblinear",
    "sklearn.saga",
    "sklearn.lbfgs",
    "lightning.sdca",
    "lightning.saga",
    "lightning.cd",
    "cyanure",
)


def supports(peer: str, loss: str) -> bool:
    return loss in get_spec(peer).losses


def is_refit(peer: str) -> bool:
    return get_spec(peer).trace_mode == "refit"


def title(peer: str) -> str:
    spec = get_spec(peer)
    how = "refits, budget max_iter" if is_refit(peer) else "its callback trace"
    return f"{spec.title} ({how})"


def missing_packages() -> list[str]:
    """One line per peer whose distribution is not installed (empty when all are)."""
    reasons = (get_spec(name).unavailable_reason() for name in PEERS)
    return sorted({reason for reason in reasons if reason is not None})
