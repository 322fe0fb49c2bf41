"""The values a target or readout is declared with, checked when it is made (as tracr's dataclasses do): one line
naming the object, the field, the value it has and what it needs, never a TypeError deep inside a check."""

from __future__ import annotations

import math
import numbers

from circuits.errors import CircuitError


def _has(value) -> str:
    return f"the string {value!r}" if isinstance(value, str) else f"{value!r} ({type(value).__name__})"


def whole(owner: str, name: str, value, least: int = 0, optional: bool = False) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
        raise CircuitError(f"{owner}: {name} is {_has(value)}; it needs a whole number ≥ {least}")


def number(owner: str, name: str, value, optional: bool = False, example: str = "0.9") -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise CircuitError(f"{owner}: {name} is {_has(value)}; it needs a finite number, e.g. {name}={example}")


def labels(owner: str, name: str, value, optional: bool = True) -> None:
    """A tuple (or list) of names: of residual directions, or of tokens."""
    if value is None and optional:
        return
    if isinstance(value, str) or not isinstance(value, (tuple, list)) or not all(isinstance(v, str) for v in value):
        raise CircuitError(f"{owner}: {name} is {_has(value)}; it needs a tuple of names, e.g. {name}=('x', 'y')")


def function(owner: str, name: str, value, optional: bool = True) -> None:
    if value is None and optional:
        return
    if not callable(value):
        raise CircuitError(f"{owner}: {name} is {_has(value)}; it needs a function")
