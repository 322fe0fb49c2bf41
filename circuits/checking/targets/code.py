"""Code: a code puzzle's check, the learner's function against the library's on examples and a property test; what a
compare finds is facts (YourCodeRaised here, the library's in checking/reference.py) that display/findings.py words."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from circuits.checking.targets.base import Target


@dataclass(frozen=True)
class YourCodeRaised:
    """A code target's finding: the learner's code raised `error` (its class name) with `message` ("" for none)."""

    error: str
    message: str


@dataclass
class Code(Target):
    """A code puzzle's check: `compare(answer, example)` returns None when the learner's code agrees, else why not
    (facts display/findings.py words, or a puzzle's own sentence)."""

    description: str
    strategy: Callable  # () -> hypothesis strategy of examples
    compare: Callable
    examples: Sequence = ()
    kind: str = field(default="code", init=False)

    @property
    def label(self) -> str:
        return self.description

    def check_alone(self, checker, attempt, model, n_examples):
        return checker.check_code(self, attempt, n_examples)
