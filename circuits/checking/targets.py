"""Kept for puzzle files that import from here: the target kinds live in circuits.targets, the layer below."""

from circuits.targets import *  # noqa: F403
from circuits.targets import __all__  # noqa: F401
