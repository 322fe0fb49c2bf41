"""A puzzle: its statement, givens, the answer it asks for, the targets it checks and its inputs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from circuits.checking.inputs import Inputs
from circuits.errors import CircuitError
from circuits.targets import Kind, Target


class Stub:
    """The placeholder a learner replaces: `W_Q = FILL_ME_IN("roughly 2 non-zero entries")`."""

    def __init__(self, hint: str = ""):
        self.hint = hint

    def __call__(self, hint: str = "") -> "Stub":
        return Stub(hint)

    def __repr__(self) -> str:
        return f"FILL ME IN ({self.hint})" if self.hint else "FILL ME IN"


FILL_ME_IN = Stub()


DIFFICULTIES = (1, 2, 3)  # ★ a first try, ★★ some invention, ★★★ a construction of your own


def _whole(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def check_level(difficulty, minutes, shown: str) -> None:
    """One line naming the culprit when a difficulty is not 1, 2 or 3 or a time is not a whole number of minutes ≥ 1."""
    if difficulty is not None and not (_whole(difficulty) and difficulty in DIFFICULTIES):
        raise CircuitError(f"{shown}: difficulty = {difficulty!r}; it must be 1, 2 or 3 (stars)")
    if minutes is not None and not (_whole(minutes) and minutes >= 1):
        raise CircuitError(f"{shown}: minutes = {minutes!r}; it must be a whole number of minutes ≥ 1")


def stars(difficulty: int | None) -> str:
    """★★☆ for 2 of 3; "" when the puzzle does not say."""
    return "" if difficulty is None else "★" * difficulty + "☆" * (len(DIFFICULTIES) - difficulty)


@dataclass
class Puzzle:
    """Everything the checker needs to know about one puzzle.

    `answer` lists the names the learner defines in the file (matrices, a `params`
    mapping, or functions for a code puzzle); `build(answer)` turns them into a Model.
    `sharpness` names the answer matrices (or a params symbol) that scale how peaked
    attention is, for the sharpness margin. `hints` are staged, from a nudge to a
    near-answer that still leaves the writing to the learner (`circuits hint`).
    `writes` declares where each head and MLP may write ({"head 1.0": ["seen"], "mlp 0": ["pred:*"]});
    without it, each may write only into the direction families its reference answer writes
    (checking/guarantees.py). `reads` declares what each matrix that reads the residual stream may read
    ({"head 1.0 W_K": ["dup"], "mlp 0 W_in": ["x", "y"], "W_U": ["out:*"]}); without it, each may read only the
    direction families its reference answer reads. `difficulty` (1–3 stars) and `minutes` (a learner's expected
    time) are shown by `circuits list`; a shipped puzzle that declares neither gets them from
    circuits/curriculum/levels.toml.
    """

    number: int
    name: str
    title: str
    answer: Sequence[str]
    targets: Sequence[Target]
    build: Callable | None = None
    inputs: Inputs | None = None
    examples: Sequence = ()
    sharpness: Sequence[str] = ()
    optional: Sequence[str] = ("params",)
    source: str = ""
    notes: str = ""
    margin_max_len: int | None = None
    hints: Sequence[str] = ()
    writes: Mapping[str, Sequence[str]] | None = None
    reads: Mapping[str, Sequence[str]] | None = None
    difficulty: int | None = None
    minutes: int | None = None

    def __post_init__(self):
        from circuits.targets import fields

        fields.whole("Puzzle", "number", self.number)
        for name in ("name", "title"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise CircuitError(f"Puzzle: {name} is {getattr(self, name)!r}; it needs a non-empty string")
        if not self.targets:
            raise CircuitError(f"puzzle {self.name!r} declares no targets, so nothing could fail")
        if any(t.kind is Kind.BEHAVIOUR for t in self.targets) and (self.inputs is None or self.build is None):
            raise CircuitError(f"puzzle {self.name!r} has behaviour targets but no inputs= or build=")
        if isinstance(self.hints, str) or not all(isinstance(h, str) and h.strip() for h in self.hints):
            raise CircuitError(
                f"puzzle {self.name!r}: hints= must be a list of non-empty strings, got {type(self.hints).__name__}"
            )
        check_level(self.difficulty, self.minutes, f"puzzle {self.name!r}")

    @property
    def id(self) -> str:
        return f"{self.number:02d}_{self.name}"
