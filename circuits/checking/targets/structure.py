"""Structure: exact checks on the weights, matrix by matrix, in sympy."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from circuits.checking.targets.base import Target


@dataclass
class Structure(Target):
    """Exact checks on the weights: `check(answer, model)` returns (what, yours, expected) triples of sympy matrices."""

    description: str
    check: Callable
    kind: str = field(default="structure", init=False)

    @property
    def label(self) -> str:
        return self.description

    def check_alone(self, checker, attempt, model, n_examples):
        return checker.check_structure(self, attempt, model)

    def run(self, answer, model) -> list[tuple[str, object, object, bool]]:
        import sympy

        out = []
        for what, yours, expected in self.check(answer, model):
            yours, expected = sympy.Matrix(yours), sympy.Matrix(expected)
            same = yours.shape == expected.shape and (yours - expected).applyfunc(sympy.simplify).is_zero_matrix
            out.append((what, yours, expected, bool(same)))
        return out
