"""Integers as a request gives them, one rule for the API, the catalogue and the CLI.

A JSON body's integer field or solver parameter takes a JSON integer only: ``true``, ``3.0``,
``3.5`` and text such as ``"3"`` are refused (:func:`strict_int`), so a value means what it
says in any client's JSON. Where the transport is text — a query string, a path, a form
field, a command-line flag — an integer is ASCII decimal digits with an optional minus sign
(:func:`int_text`): no ``_`` separators (``"3_0"``), no other scripts' digits (``"٣٠"``),
no spaces, no ``+``, no exponent, which Python's ``int()`` and lax parsers would accept.
"""

from __future__ import annotations

import operator
import re
from typing import Any

INTEGER_TEXT = re.compile(r"-?[0-9]+")  # fullmatch; [0-9], not \d (which is any script's)


def strict_int(raw: Any) -> int:
    """``raw`` if it is an integer (Python's, NumPy's), never a bool; TypeError otherwise."""
    if isinstance(raw, bool):
        raise TypeError("a boolean is not an integer")
    return operator.index(raw)


def int_text(text: str) -> int:
    """The integer written ``text`` in ASCII decimal digits, optionally negative; ValueError
    for anything else."""
    if not INTEGER_TEXT.fullmatch(text):
        raise ValueError(f"{text[:40]!r} is not an integer written in the digits 0-9")
    return int(text)
