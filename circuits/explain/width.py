"""Width's words: an MLP with more hidden units (Width), or a head with a wider value (ValueRows), than allowed.

The facts are measured where the check runs (targets/width.py); here they are said.
"""

from __future__ import annotations

from circuits.explain.structure import head
from circuits.explain.tables import words
from circuits.targets.width import ValueRows, Width


@words.register
def _(f: Width) -> str:
    return (
        f"W_in of the MLP in layer {f.layer} has shape {f.shape}: d_mlp = {f.shape[0]:,} hidden units, "
        f"at most {f.most:,} allowed"
    )


@words.register
def _(f: ValueRows) -> str:
    return (
        f"W_V of {head(f.head)} has shape {f.shape}: a value of {f.shape[0]:,} dimensions, at most {f.most:,} allowed"
    )
