"""components.exact_number: parameters written exactly (they read back as the same float)
and compactly."""

from __future__ import annotations

import pytest

from faceoff.dashboard.components import exact_number


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (2, "2"),
        (2**31 - 1, "2147483647"),
        (0.0, "0"),
        (1.0, "1"),
        (1e-4, "1e-4"),
        (2.5e-7, "2.5e-7"),
        (0.001, "0.001"),
        (0.5, "0.5"),
        (123456.7, "123456.7"),
        (1e6, "1e6"),
        (-3e-5, "-3e-5"),
        (0.1 + 0.2, "0.30000000000000004"),
        (None, ""),
    ],
)
def test_exact_number(value, shown):
    assert exact_number(value) == shown
    if value is not None:
        assert float(shown) == value
