"""Checking: puzzles and their inputs, the loader, the checker and its verdict, margins (what a target is and how
it passes is circuits/targets/, the layer below).

A puzzle file imports what it needs from `circuits` and from here (the kinds named here keep their import paths; a
new kind is exported by circuits/__init__.py from its own module).
"""

from circuits.checking import reference, strategies
from circuits.checking.inputs import Copies, Inputs, Repeated, Runs, Uniform
from circuits.checking.puzzle import FILL_ME_IN, Puzzle, Stub
from circuits.targets import (
    Attention,
    Code,
    Depends,
    HeadOutput,
    HeadZ,
    MLPOut,
    MLPOutput,
    MLPWidth,
    NextToken,
    Output,
    OVCircuit,
    PatchedMLP,
    Residual,
    Structure,
    Target,
    ValueWidth,
)

__all__ = [
    "reference",
    "strategies",
    "Copies",
    "Inputs",
    "Repeated",
    "Runs",
    "Uniform",
    "FILL_ME_IN",
    "Puzzle",
    "Stub",
    "MLPOut",
    "MLPOutput",
    "MLPWidth",
    "ValueWidth",
    "OVCircuit",
    "PatchedMLP",
    "Attention",
    "Code",
    "Depends",
    "HeadOutput",
    "HeadZ",
    "NextToken",
    "Output",
    "Residual",
    "Structure",
    "Target",
]
