"""Widths as targets: an MLP's hidden units, or a head's value dimensions, at most so many (a bound a puzzle sets,
e.g. fewer units than a table of its inputs would need, or fewer value dimensions than tokens); their facts (Width,
ValueRows) are worded by explain/width.py."""

from __future__ import annotations

from dataclasses import dataclass, field

from circuits.errors import CircuitError
from circuits.targets import fields
from circuits.targets.structure import AtMost, Structure


@dataclass(frozen=True)
class Width:
    """A MLPWidth row: W_in of the MLP of `layer` has `shape` (d_mlp × d_model); the puzzle allows `most` units."""

    layer: int
    shape: tuple[int, int]
    most: int


@dataclass
class MLPWidth(Structure):
    """The MLP of `layer` has at most `most` hidden units (rows of W_in)."""

    layer: int = 0
    most: int = 1
    check: object = field(default=None, init=False)

    def __post_init__(self):
        owner = f"MLPWidth({self.description!r})" if len(self.description) <= 30 else "MLPWidth"
        fields.whole(owner, "layer", self.layer)
        fields.whole(owner, "most", self.most, least=1)

    @property
    def stage(self) -> float:
        return self.layer + 0.5  # the MLP, after the layer's heads

    def finding(self, row: tuple) -> object:
        return row[0]  # the shape and the bound, in full

    def run(self, answer, model) -> list[tuple[object, object, object, bool]]:
        import sympy

        if self.layer >= model.n_layers or model.blocks[self.layer].mlp is None:
            raise CircuitError(
                f"MLPWidth({self.layer}): the model has no MLP in layer {self.layer}: a mistake in "
                "the puzzle's targets, not in the answer"
            )
        shape = tuple(int(n) for n in model.blocks[self.layer].mlp.W_in.shape)
        return [
            (Width(self.layer, shape, self.most), sympy.Matrix([[shape[0]]]), AtMost(self.most), shape[0] <= self.most)
        ]


@dataclass(frozen=True)
class ValueRows:
    """A ValueWidth row: W_V of head `head` (layer, head) has `shape` (d_value × d_model); the puzzle allows `most`."""

    head: tuple[int, int]
    shape: tuple[int, int]
    most: int


@dataclass
class ValueWidth(Structure):
    """Head `layer.head`'s value has at most `most` dimensions (rows of W_V): its OV circuit has rank ≤ `most`."""

    layer: int = 0
    head: int = 0
    most: int = 1
    check: object = field(default=None, init=False)

    def __post_init__(self):
        owner = f"ValueWidth({self.description!r})" if len(self.description) <= 30 else "ValueWidth"
        fields.whole(owner, "layer", self.layer)
        fields.whole(owner, "head", self.head)
        fields.whole(owner, "most", self.most, least=1)

    @property
    def stage(self) -> float:
        return float(self.layer)

    def finding(self, row: tuple) -> object:
        return row[0]  # the shape and the bound, in full

    def run(self, answer, model) -> list[tuple[object, object, object, bool]]:
        import sympy

        if self.layer >= model.n_layers or self.head >= model.n_heads(self.layer):
            raise CircuitError(
                f"ValueWidth({self.layer}, {self.head}): the model has no head {self.layer}.{self.head}: a mistake "
                "in the puzzle's targets, not in the answer"
            )
        shape = tuple(int(n) for n in model.head(self.layer, self.head).W_V.shape)
        head = (self.layer, self.head)
        return [
            (ValueRows(head, shape, self.most), sympy.Matrix([[shape[0]]]), AtMost(self.most), shape[0] <= self.most)
        ]
