"""The plan of a check: the stages of inputs (worked examples, every small input, random inputs, the property
test), made once per puzzle and shared by the checker, the mutation audit and the benchmark."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from circuits import kept, limits
from circuits.targets import Target, Tokens
from circuits.targets.examples import extremes, worked_examples  # noqa: F401  (part of plan's API)

STAGES = ("worked example", "every small input", "random inputs", "property test")
EXACT = "exact check"  # the stage of a structure target: its rows, checked once, in sympy
CLASS_SAMPLE = 300  # random inputs (besides the examples) on which token classes must not change a target's spec
PROBE = 300  # random inputs (besides the examples and extremes) the sharpness is probed on at each factor


@dataclass(frozen=True)
class Small:
    """Every small input: by class pattern where tokens are interchangeable (a certificate), else by token."""

    inputs: list[Tokens]
    classes: tuple[str, ...] = ()  # certified: the name of each class of interchangeable tokens (else empty)
    tokens: int = 0  # the alphabet's size

    @property
    def certified(self) -> bool:
        return bool(self.classes)

    @property
    def max_len(self) -> int:
        return max(map(len, self.inputs), default=0)


_SMALL = kept.latest("small inputs", 8)  # (classes, targets, settings, sample) -> (targets, every small input)


@dataclass
class Plan:
    """The inputs of a puzzle's check that do not depend on the answer, made once: a check, an audit of every
    mutant and a benchmark all run the same batches. `small(model, targets)` adds the one stage that does
    (token classes are read off the model's W_E), remembered per class partition."""

    puzzle: object
    examples: list[Tokens]
    sample: list[Tokens]  # the random inputs
    extremes: list[Tokens]  # the families' extreme inputs, checked with the random ones
    _small: dict = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, puzzle, n_random: int | None = None, inputs=None) -> Plan:
        """The plan of `puzzle` with `n_random` random inputs (None: the puzzle's own number); `inputs`, when given,
        replaces the puzzle's (the checker's reach the model's n_ctx: guarantees.spanning)."""
        inputs = puzzle.inputs if inputs is None else inputs
        if inputs is None:
            return cls(puzzle, worked_examples(puzzle), [], [])
        return cls(puzzle, worked_examples(puzzle), inputs.sample(n_random, seed=inputs.seed), extremes(inputs))

    @property
    def random(self) -> list[Tokens]:
        """The random stage's batch: the sample, then the extremes."""
        return self.sample + self.extremes

    @property
    def probe(self) -> list[Tokens]:
        """What the sharpness guarantees run on, at each factor of the sharpness: the worked examples, the first
        PROBE random inputs and the extremes."""
        return self.examples + self.sample[:PROBE] + self.extremes

    def small(self, model, targets: Sequence[Target]) -> Small:
        """Every small input for `model` (its token classes decide whether patterns are certified) and `targets`."""
        classes = token_classes(model, list(self.puzzle.inputs.alphabet))
        key = (tuple(map(tuple, classes)), tuple(_class_name(model, c) for c in classes), tuple(map(id, targets)))
        if key not in self._small:
            sample = self.sample[:CLASS_SAMPLE] + self.examples
            settings = self.puzzle.inputs.known_by_text
            known = (*key, settings, tuple(map(tuple, sample)))  # what else small_inputs reads
            if (hit := _SMALL.get(known)) is None or any(a is not b for a, b in zip(hit[0], targets)):
                hit = (tuple(targets), small_inputs(model, self.puzzle, targets, sample, classes))
                if settings is not None:
                    _SMALL.keep(known, hit)  # holds the targets: their ids are not reused while kept
            self._small[key] = hit[1]
        return self._small[key]

    def stages(self, small: Small) -> list[tuple[str, list[Tokens]]]:
        """The batch stages in the order the checker runs them (the property test follows them)."""
        return [(STAGES[0], self.examples), (STAGES[1], small.inputs), (STAGES[2], self.random)]


# --- certification by token classes ----------------------------------------------------------------------------
def token_classes(model, alphabet: Sequence[str]) -> list[list[str]]:
    """Tokens grouped where every reader sees the same vector: identical W_E columns (and W_U rows, if any)."""
    groups: dict[bytes, list[str]] = {}
    for tok in alphabet:
        i = model.vocab.id(tok)
        key = model.W_E[:, i].tobytes() + (model.W_U[i].tobytes() if model.W_U is not None else b"")
        groups.setdefault(key, []).append(tok)
    return list(groups.values())


def _class_name(model, members: list[str]) -> str:
    col = model.W_E[:, model.vocab.id(members[0])]
    nz = np.flatnonzero(col)
    if len(members) > 1 and len(nz) == 1:
        return model.residual.labels[int(nz[0])]
    return members[0] if len(members) == 1 else f"{members[0]}…"


def _classes_ok(target: Target, canon, sample: list[Tokens]) -> bool:
    limits.doing(f"checking target {limits.quoted(target.label)}", " (comparing its spec across token classes)")
    with limits.blaming(sample, lambda s: target.classes_ok(canon, [s])):
        return target.classes_ok(canon, sample)


def small_inputs(
    model, puzzle, targets: Sequence[Target], sample: list[Tokens], classes: list[list[str]] | None = None
) -> Small:
    """Every small input, by class pattern where tokens are interchangeable (a certificate), else by token;
    `sample` is where each target's spec must not tell the tokens of a class apart."""
    inputs = puzzle.inputs
    alphabet = list(inputs.alphabet)
    classes = token_classes(model, alphabet) if classes is None else classes
    if len(classes) < len(alphabet):
        rep = {t: c[0] for c in classes for t in c}
        canon = lambda s: [rep[t] for t in s]  # noqa: E731
        if all(_classes_ok(t, canon, sample) for t in targets):
            reps = [c[0] for c in classes]
            top = inputs.exhaustive_max_len(len(reps))
            if top >= inputs.min_len:
                batch = list(inputs.exhaustive(reps, top))
                return Small(batch, tuple(_class_name(model, c) for c in classes), len(alphabet))
    top = inputs.exhaustive_max_len()
    if top < inputs.min_len:
        return Small([], tokens=len(alphabet))
    return Small(list(inputs.exhaustive(alphabet, top)), tokens=len(alphabet))
