"""The base of every target: a named check, what it finds on a batch (Evaluation) and on one failing input (Explanation).

A behaviour target evaluates a whole batch at once (`evaluate`) and explains one
failing input position by position (`explain`), with a hint where one can be derived.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

Tokens = list[str]


@dataclass
class Evaluation:
    """Per input: `ok` [b] and `worst` [b], the input's worst value of the target's metric."""

    ok: np.ndarray
    worst: np.ndarray
    checked: np.ndarray | None = None  # [b] positions that had an expectation (None: the target does not count)


@dataclass
class Explanation:
    """One failing input, position by position, for the report."""

    position: int
    summary: str
    columns: list[str]
    rows: list[list[str]]
    hint: str
    head: tuple[int, int] | None = None
    marks: list | None = None  # per query row: the key (or keys) a target expects (−1: none)
    marks_mean: str = "* = target key"
    mlp: int | None = None  # the layer whose MLP the hint is about



class Target:
    """Base: a named check. `higher_is_worse` says how `worst` reads (errors vs attention mass)."""

    kind = "behaviour"
    label = "target"
    metric = "metric"
    higher_is_worse = True
    reads_logits = False

    @property
    def stage(self) -> float:
        """Where in the circuit the target looks: a layer (a readout after layer l: l + 0.5; the logits: ∞)."""
        return np.inf

    def evaluate(self, trace, batch: list[Tokens]) -> Evaluation:
        raise NotImplementedError

    def explain(self, trace, tokens: Tokens) -> Explanation:
        raise NotImplementedError

    def classes_ok(self, canon: Callable[[Tokens], Tokens], sample: list[Tokens]) -> bool:
        """Whether this target's spec gives the same answer on each input and its class-canonical form."""
        return True
