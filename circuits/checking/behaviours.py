"""Kept for puzzle files that import from here: the attention behaviours live in circuits.targets.behaviours."""

from circuits.targets.behaviours import (  # noqa: F401
    BEHAVIOURS,
    DEFAULT_BEHAVIOURS,
    DEFAULT_THRESHOLD,
    current_token,
    duplicate_token,
    first_token,
    induction,
    mass_on_target,
    previous_token,
)
