"""Code: a code puzzle's check, the learner's function against the library's on examples and a property test; what a
compare finds is facts (YourCodeRaised here, the library's in checking/reference.py) that explain/code.py words."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from circuits.targets.base import Kind, Target


def searched_with(
    first: Callable[[], Sequence], smaller: Callable[[object], Iterator]
) -> Callable[[Callable], Callable]:
    """Mark a code target's strategy (as hypothesis's @example marks a test) with how its check searches cheaply:
    `first()`, small inputs tried in order before any search, each where a search shrinks a classic mistake to;
    and `smaller(example)`, simpler inputs than `example`, simplest first, for a deterministic shrink in place of
    hypothesis's, whose cost on inputs of many arrays runs to seconds."""

    def mark(strategy: Callable) -> Callable:
        strategy.first, strategy.smaller = first, smaller
        return strategy

    return mark


@dataclass(frozen=True)
class YourCodeRaised:
    """A code target's finding: the learner's code raised `error` (its class name) with `message` ("" for none)."""

    error: str
    message: str


@dataclass
class Code(Target):
    """A code puzzle's check: `compare(answer, example)` returns None when the learner's code agrees, else why not
    (facts explain/code.py words, or a puzzle's own sentence)."""

    description: str
    strategy: Callable  # () -> hypothesis strategy of examples
    compare: Callable
    examples: Sequence = ()
    kind: Kind = field(default=Kind.CODE, init=False)

    @property
    def label(self) -> str:
        return self.description

    def first_cases(self) -> list:
        """The small inputs tried before the property test's search (searched_with), in order; none when unmarked."""
        first = getattr(self.strategy, "first", None)
        return list(first()) if first is not None else []

    @property
    def smaller(self) -> Callable[[object], Iterator] | None:
        """Simpler inputs than an example, simplest first (searched_with); None: hypothesis shrinks."""
        return getattr(self.strategy, "smaller", None)
