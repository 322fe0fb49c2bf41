"""Kept for puzzle files that import from here: the MLP targets live in circuits.targets.mlp."""

from circuits.targets.mlp import MLPOut, MLPOutput

__all__ = ["MLPOut", "MLPOutput"]
