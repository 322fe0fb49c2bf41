"""Structure: exact checks on the weights, matrix by matrix, in sympy; its finding (MatrixDiffers) is worded by
explain/structure.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from circuits.targets.base import Kind, Target


@dataclass(frozen=True)
class MatrixDiffers:
    """A structure target's finding: the row `what` (the puzzle's own label, or a row's facts) does not hold."""

    what: object


@dataclass(frozen=True)
class AtMost:
    """The expected side of a measured row: its value must be at most `most` (a tolerance, a width)."""

    most: float


@dataclass
class Structure(Target):
    """Exact checks on the weights: `check(answer, model)` returns (what, yours, expected) triples of sympy matrices,
    `what` in the puzzle's own words."""

    description: str
    check: Callable
    kind: Kind = field(default=Kind.STRUCTURE, init=False)

    @property
    def label(self) -> str:
        return self.description

    def finding(self, row: tuple) -> object:
        """The facts of the first row that fails, as the report gives them: by default, that its matrix differs."""
        return MatrixDiffers(row[0])

    def run(self, answer, model) -> list[tuple[object, object, object, bool]]:
        """The rows of the report: (what, yours, expected, whether they agree)."""
        import sympy

        out = []
        for what, yours, expected in self.check(answer, model):
            yours, expected = sympy.Matrix(yours), sympy.Matrix(expected)
            same = yours.shape == expected.shape and (yours - expected).applyfunc(sympy.simplify).is_zero_matrix
            out.append((what, yours, expected, bool(same)))
        return out
