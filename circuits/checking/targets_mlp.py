"""Kept for puzzle files that import from here: the MLP targets live in circuits.checking.targets.mlp."""

from circuits.checking.targets.mlp import MLPOut, MLPOutput

__all__ = ["MLPOut", "MLPOutput"]
