"""What a puzzle checks, one module per kind of target: behaviour (output, attention, next token, MLP output)
exact (structure, OV circuit, an MLP patched or its width, code) and mechanisms checked by intervention
(depends), on the base in `base`.

Each kind carries what it is and how it passes (evaluate, slack, bound, validate, what `circuits show` prints), so
adding a kind means adding a module here; why it fails, in words, is circuits/explain/ (its public name goes in
circuits/__init__.py; the names below keep the existing kinds' import paths, and a new kind need not join them:
docs/adding_a_target_kind.md). `scores` and `specs` hold the helpers several kinds share.
"""

from circuits.checking.readouts import HeadOutput, HeadZ, Readout, Residual
from circuits.checking.targets.attention import Attention
from circuits.checking.targets.base import (
    Evaluation,
    Explanation,
    Kind,
    Shows,
    Target,
    Tokens,
    higher_is_worse,
)
from circuits.checking.targets.code import Code
from circuits.checking.targets.depends import Depends
from circuits.checking.targets.mlp import MLPOut, MLPOutput
from circuits.checking.targets.next_token import NEAR_TIE, NextToken
from circuits.checking.targets.output import Output
from circuits.checking.targets.ov import OVCircuit, copying_score, full_ov, raised
from circuits.checking.targets.patched import PatchedMLP
from circuits.checking.targets.scores import factor_needed
from circuits.checking.targets.structure import Structure
from circuits.checking.targets.width import MLPWidth, ValueWidth

__all__ = [
    "Target",
    "Evaluation",
    "Explanation",
    "Tokens",
    "Kind",
    "Shows",
    "higher_is_worse",
    "Output",
    "Attention",
    "Depends",
    "NextToken",
    "MLPOut",
    "MLPOutput",
    "Structure",
    "OVCircuit",
    "PatchedMLP",
    "MLPWidth",
    "ValueWidth",
    "Code",
    "HeadOutput",
    "HeadZ",
    "Readout",
    "Residual",
    "NEAR_TIE",
    "factor_needed",
    "copying_score",
    "full_ov",
    "raised",
]
