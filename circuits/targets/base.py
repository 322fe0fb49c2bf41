"""The base of every target: a named check, what it finds on a batch (Evaluation), and the shape of an explanation
of one failing input (Explanation), which circuits/explain/ makes per kind.

A behaviour target evaluates a whole batch at once (`evaluate`); circuits.explain explains one failing input
position by position, with a hint where one can be derived.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

Tokens = list[str]


class Kind(StrEnum):
    """How a target is checked, as its result carries it and JSON prints it (the member's value)."""

    BEHAVIOUR = "behaviour"  # on batches of inputs, with the other behaviour targets
    CODE = "code"  # the learner's function against the library's
    STRUCTURE = "structure"  # exact, on the weights
    MECHANISM = "mechanism"  # by intervention on the forward pass
    FILE = "file"  # no target: the row of a puzzle file that could not be loaded


class Shows(StrEnum):
    """What `circuits show` prints of a behaviour target on one input (`Target.shown`'s "kind")."""

    ATTENTION = "attention"  # a head's attended keys, marked on its heatmap
    OUTPUT = "output"  # a readout's vectors
    NEXT_TOKEN = "next-token"  # the predicted next token


@dataclass
class Evaluation:
    """Per input: `ok` [b] and `worst` [b], the input's worst value of the target's metric."""

    ok: np.ndarray
    worst: np.ndarray
    checked: np.ndarray | None = None  # [b] positions that had an expectation (None: the target does not count)


@dataclass
class Explanation:
    """One failing input, position by position, for the report. `per_position` holds the facts of each position
    (what the kind expects there and what the model does), `summary` the facts of the miss and `hint` those of its
    likely cause; circuits.explain makes it and words it (`table`, `summary`, `hint`)."""

    position: int
    summary: object  # the kind's facts of the miss (AttentionMiss, ReadoutMiss, TokenMiss, …)
    per_position: object  # one of the kinds' per-position facts (ReadoutPositions, AttentionPositions, …)
    hint: object  # the facts of the likely cause (TiedKeys, WrongKey, NotSharp, …)
    head: tuple[int, int] | None = None
    marks: list | None = None  # per query row: the key (or keys) a target expects (−1: none)
    marks_mean: str = "target"  # what a mark is (explain.MARKS words it): "target", "value", "raises"
    mlp: int | None = None  # the layer whose MLP the hint is about
    terms: object = None  # the puzzle's own names for the matrices the hint names (explain.terms.PuzzleTerms)
    notes: list = field(default_factory=list)  # what explain adds after the hint: EarlierFailure, LeakNote, Sharpening


class Target:
    """Base: a named check. `higher_is_worse` says how `worst` reads (errors vs attention mass)."""

    kind = Kind.BEHAVIOUR
    label = "target"
    metric = "metric"
    higher_is_worse = True
    reads_logits = False
    checked_last = False  # a fast check (the mutation audit's) runs it after the behaviour targets: it costs more

    @property
    def stage(self) -> float:
        """Where in the circuit the target looks: a layer (a readout after layer l: l + 0.5; the logits: ∞)."""
        return np.inf

    @property
    def tolerance(self) -> float | None:
        """The largest error the target lets a readout have, for a target that has one (None: no tolerance)."""
        return None

    def evaluate(self, trace, batch: list[Tokens]) -> Evaluation:
        raise NotImplementedError

    def classes_ok(self, canon: Callable[[Tokens], Tokens], sample: list[Tokens]) -> bool:
        """Whether this target's spec gives the same answer on each input and its class-canonical form."""
        return True

    def slack(self, worst: np.ndarray) -> np.ndarray:
        """How far each input's `worst` value is from failing the target (≥ 0: passes), in the metric's units."""
        raise NotImplementedError(f"{type(self).__name__} does not say how far a value is from failing it")

    def bound(self) -> str:
        """The bound the metric must keep, as a report says it: "tolerance 0.1", "needs ≥ 0.9"."""
        raise NotImplementedError(f"{type(self).__name__} does not state its bound")

    def validate(self, examples: list[Tokens], alphabet: list[str], fail: Callable[[str], Exception]) -> None:
        """Check the puzzle author's functions this target holds on the worked `examples`, when the puzzle
        loads; raise `fail(what)` at the first mistake (see `authored`)."""

    def checks_nothing(self, probe: list[Tokens]) -> bool:
        """Whether the target expects nothing at any position of any input in `probe` (False: cannot tell)."""
        return False

    def shown(self, trace, tokens: Tokens) -> dict | None:
        """What `circuits show` prints for this target on one input (run as `trace`), per position: what it
        expects and what the model does; None for a target that reads no position (structure, code)."""
        return None

    def patched(self, model) -> list[np.ndarray]:
        """[d_model] bool masks of the residual directions this target's interventions patch or zero together
        (none for most kinds): the audit's rules never take a direction inside one as equal to one outside it."""
        return []


def higher_is_worse(metric: str) -> bool:
    """Whether a larger value of `metric` (a behaviour target's metric, as its result carries it) is nearer to
    failing: as the kind of target that measures it says (True for a metric no kind declares, as on Target)."""
    kinds, found = [Target], {}
    while kinds:
        cls = kinds.pop()
        kinds += cls.__subclasses__()
        if isinstance(cls.__dict__.get("metric"), str):  # declared by this kind, not inherited
            found[cls.metric] = cls.higher_is_worse
    return found.get(metric, True)
