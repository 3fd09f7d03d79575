"""Shared fixtures: the dataset mirror and small problems."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def mirror_dir() -> Path:
    """The local dataset mirror (FACEOFF_DATA_MIRROR, default ../shared/datasets)."""
    return Path(os.environ.get("FACEOFF_DATA_MIRROR", REPO.parent / "shared" / "datasets"))


@pytest.fixture(scope="session")
def mirror() -> Path:
    path = mirror_dir()
    if not path.is_dir():
        pytest.fail(f"dataset mirror {path} not found; set FACEOFF_DATA_MIRROR")
    return path
