"""An MLP held by intervention: fed residual vectors the puzzle writes in by hand, as activation patching does (inputs
no token makes), the MLP of a layer must write what the puzzle expects; its facts (PatchedMiss) are worded by
explain/patched.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from circuits.errors import CircuitError
from circuits.model import functional as F
from circuits.targets import fields
from circuits.targets.structure import AtMost, Structure


@dataclass(frozen=True)
class PatchedMiss:
    """A PatchedMLP row: of the `n` vectors fed to the MLP of `layer`, the worst is `case` (the puzzle's name for it);
    there the MLP writes `yours` on `names` where `expected` is wanted: `error` off at most, `tol` allowed."""

    layer: int
    n: int
    case: str
    names: tuple[str, ...]
    yours: tuple[float, ...]
    expected: tuple[float, ...]
    error: float
    tol: float


@dataclass
class PatchedMLP(Structure):
    """The MLP of `layer` on residual vectors patched in. `cases()` yields (name, fed, wanted) triples: `fed` maps
    directions to what the residual stream holds at the MLP's input (other directions 0), `wanted` maps the
    directions the MLP writes to what it must write there, within `tol`."""

    layer: int = 0
    cases: Callable | None = None
    tol: float = 0.1
    check: Callable | None = field(default=None, init=False)
    _made: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self):
        owner = f"PatchedMLP({self.description!r})" if len(self.description) <= 30 else "PatchedMLP"
        fields.whole(owner, "layer", self.layer)
        fields.function(owner, "cases", self.cases, optional=False)
        fields.number(owner, "tol", self.tol, example="0.1")

    @property
    def stage(self) -> float:
        return self.layer + 0.5  # after the layer's heads, as MLPOutput

    def finding(self, row: tuple) -> object:
        return row[0]  # the worst case, in full

    def validate(self, examples, alphabet, fail) -> None:
        """Call `cases()` once when the puzzle loads: a mistake in it is one line naming the target."""
        from circuits.targets.authored import call

        made = call(lambda _: list(self.cases()), None, "cases()", fail)
        if not made:
            raise fail("cases() yielded nothing to feed the MLP")
        for i, case in enumerate(made):
            if not (isinstance(case, tuple) and len(case) == 3 and all(isinstance(m, dict) for m in case[1:])):
                raise fail(
                    f"cases() yielded {case!r} at {i}; it needs (name, fed, wanted) with two dicts of direction → value"
                )

    def _arrays(self, model) -> tuple:
        """The cases as arrays, once per basis: names, wanted, fed `[n, d_model]`, expected `[n, k]` (NaN: not
        asked)."""
        labels = tuple(model.residual.labels)
        if labels not in self._made:
            made = list(self.cases())
            wanted = list(dict.fromkeys(d for _, _, want in made for d in want))
            fed = np.zeros((len(made), len(labels)))
            expected = np.full((len(made), len(wanted)), np.nan)
            for i, (_, given, want) in enumerate(made):
                for d, v in given.items():
                    fed[i, model.residual.index(d)] = v
                expected[i] = [want.get(d, np.nan) for d in wanted]
            self._made[labels] = ([str(name) for name, _, _ in made], wanted, fed, expected)
        return self._made[labels]

    def run(self, answer, model) -> list[tuple[object, object, object, bool]]:
        import sympy

        n = model.n_layers
        if self.layer >= n or model.blocks[self.layer].mlp is None:
            raise CircuitError(
                f"PatchedMLP({self.layer}): the model has no MLP in layer {self.layer}: a mistake in "
                "the puzzle's targets, not in the answer"
            )
        cases, wanted, fed, expected = self._arrays(model)
        block = model.blocks[self.layer]
        x = F.layer_norm(fed, *block.ln_mlp) if block.ln_mlp else fed  # [n, d_model]
        out = F.mlp(x, *block.mlp)[2][:, model.residual.index(wanted)]  # [n, k]
        asked = ~np.isnan(expected)  # [n, k]
        error = np.where(asked, np.nan_to_num(np.abs(out - expected), nan=np.inf), 0).max(axis=1)  # [n]
        k = int(np.argmax(error))
        worst = float(error[k])
        facts = PatchedMiss(
            self.layer,
            len(cases),
            cases[k],
            tuple(wanted),
            tuple(float(v) for v in out[k]),
            tuple(float(v) for v in expected[k]),
            worst,
            self.tol,
        )
        return [(facts, sympy.Matrix([[sympy.Float(round(worst, 3), 3)]]), AtMost(self.tol), worst <= self.tol)]
