"""Peak Python-traced memory of one call (numpy and scipy arrays are traced)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any


def traced_peak(call: Callable[[], Any]) -> tuple[Any, int]:
    """(call(), the peak of traced allocations during it, in bytes)."""
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
