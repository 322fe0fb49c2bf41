"""What a puzzle checks, one module per kind of target: behaviour (output, attention, next token, MLP output)
exact (structure, OV circuit, an MLP patched or its width, code) and mechanisms checked by intervention
(depends), on the base in `base`.

Each kind carries what it is and how it passes (evaluate, slack, bound, validate, what `circuits show` prints), so
adding a kind means adding a module here; why it fails, in words, is circuits/explain/ (its public name goes in
circuits/__init__.py; the names below keep the existing kinds' import paths, and a new kind need not join them:
docs/adding_a_target_kind.md). `scores` and `specs` hold the helpers several kinds share; `readouts` (what a
behaviour target reads), `behaviours` (attention behaviours by name), `examples` (a puzzle's fixed inputs),
`fields` and `once` are what the kinds are made of. A layer below checking: nothing here imports the checker.
"""

from circuits.targets.attention import Attention
from circuits.targets.base import (
    Evaluation,
    Explanation,
    Kind,
    Shows,
    Target,
    Tokens,
    higher_is_worse,
)
from circuits.targets.code import Code
from circuits.targets.depends import Depends
from circuits.targets.mlp import MLPOut, MLPOutput
from circuits.targets.next_token import NEAR_TIE, NextToken
from circuits.targets.output import Output
from circuits.targets.ov import OVCircuit, copying_score, full_ov, raised
from circuits.targets.patched import PatchedMLP
from circuits.targets.readouts import HeadOutput, HeadZ, Readout, Residual
from circuits.targets.scores import factor_needed
from circuits.targets.structure import Structure
from circuits.targets.width import MLPWidth, ValueWidth

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
