"""Structure's words: a row that does not hold (MatrixDiffers), and a measured row's bound (AtMost).

The facts are made where the check runs (targets/structure.py); here they are said. `head` names a head as
every structure-like kind (OV, width, depends) says it.
"""

from __future__ import annotations

from circuits.explain.tables import words
from circuits.targets.structure import AtMost, MatrixDiffers


def head(at: tuple[int, int]) -> str:
    """A head by (layer, head), as a report names it: "head 0.1"."""
    return f"head {at[0]}.{at[1]}"


@words.register
def _(f: MatrixDiffers) -> str:
    return f"{words(f.what)} differs from the expected matrix"


@words.register
def _(f: AtMost) -> str:
    return f"≤ {f.most:g}"
