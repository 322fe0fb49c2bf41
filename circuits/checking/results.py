"""A check's verdict as facts: each target's result, what the check ran on, and the puzzle's result; and one way to
write a result as plain data and read it back (`to_dict` / `from_dict`), which the verdict cache, the pytest plugin's
xdist workers and `--json` share.

What travels is what a summary reads (status, each target's status, numbers and one-line error, coverage, margins,
what is left to fill in); a failure's shrunk input, explanation and trace stay in the process that found them (its
explanation is made there, by circuits.explain, before anything renders it)."""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING

from circuits.checking.margins import Margins
from circuits.errors import CircuitError
from circuits.targets.base import Explanation, Kind, Tokens
from circuits.targets.depends import Interventions

if TYPE_CHECKING:
    from circuits.checking.loader import Attempt

STATUSES = ("solved", "failing", "not attempted", "error")  # a puzzle's
TARGET_STATUSES = ("passed", "failed", "error", "not attempted")  # a target's


@dataclass
class Failure:
    """Where a target failed, as data: the stage, the shortest failing input (`tokens`) and its `trace`; a behaviour
    target's also the input as found and the inputs the check tried (`tried`: the worked examples and extremes,
    `pool`: the small and random inputs, up to `max_len`), on which circuits.explain sizes a sharpening. Its
    `explanation` and `notes` are made by circuits.explain, never by the checker."""

    stage: str
    tokens: Tokens
    found_len: int
    explanation: Explanation | None = None
    trace: object = None
    finding: object = None  # code and structure targets: the facts of what differed (circuits/explain/ words them)
    notes: list = field(default_factory=list)  # what explain adds to a finding without a hint: a LeakNote
    found: Tokens | None = None  # the failing input before shrinking
    tried: list = field(default_factory=list, repr=False)
    pool: list = field(default_factory=list, repr=False)
    max_len: int = 0


@dataclass(frozen=True)
class NotAttempted:
    """An answer with names still FILL ME IN: which names, in which file."""

    missing: tuple[str, ...]
    path: Path


@dataclass
class TargetResult:
    label: str
    kind: Kind
    status: str  # passed | failed | error | not attempted
    failure: Failure | None = None
    worst: float | None = None
    metric: str = ""
    error: CircuitError | None = None  # status error: the one-line mistake, as raised
    structure: list = field(default_factory=list)
    checked: int = 0
    todo: NotAttempted | None = None  # status not attempted: what is left to fill in
    interventions: Interventions | None = None  # a mechanism target: what it tried

    def __post_init__(self):
        self.kind = Kind(self.kind)  # a kind's name ("code") is read as its member; a name of no kind is refused

    def to_dict(self) -> dict:
        """This result as plain data: what a summary reads of it (never its failure, which stays in this process)."""
        return {
            "label": self.label,
            "kind": self.kind.value,
            "status": self.status,
            "error": str(self.error) if self.error is not None else None,
            "worst": self.worst,
            "metric": self.metric,
            "checked": self.checked,
            "interventions": _tried_to_dict(self.interventions),
        }

    @classmethod
    def from_dict(cls, d: dict, todo: NotAttempted | None = None) -> TargetResult:
        """The inverse of `to_dict` (read by PuzzleResult.from_dict, which checks it); a target left to fill in gets
        its puzzle's `todo`."""
        return cls(
            d["label"],
            Kind(d["kind"]),
            d["status"],
            error=_error(d["error"]),
            worst=d["worst"],
            metric=d["metric"],
            checked=d["checked"],
            todo=todo if d["status"] == "not attempted" else None,
            interventions=_tried_from_dict(d["interventions"]),
        )


SKIPPABLE = ("exhaustive", "random", "property", "margins", "writes", "reads")  # the stages a check may skip


@dataclass
class Coverage:
    """What a check ran on, as numbers (display/words.py says them): each stage's count, the lengths, the small
    inputs' reach (by token or, certified, by class pattern) and each stage that did not run."""

    examples: int = 0
    small: int = 0
    random: int = 0
    property_examples: int = 0
    lengths: tuple[int, int] = (0, 0)
    skipped: list[str] = field(default_factory=list)  # the SKIPPABLE stages that did not run
    small_max_len: int = 0  # the longest length of the small inputs (of class patterns, when certified)
    small_min_len: int = 0  # the shortest: the puzzle's min_len
    small_classes: list[str] = field(default_factory=list)  # certified: each class of interchangeable tokens
    small_tokens: int = 0  # the alphabet's size
    small_budget: int = 0  # the puzzle's exhaustive_budget

    @property
    def certified(self) -> bool:
        return bool(self.small_classes)


@dataclass
class PuzzleResult:
    attempt: Attempt | None
    status: str  # solved | failing | not attempted | error
    targets: list[TargetResult]
    coverage: Coverage = field(default_factory=Coverage)
    margins: Margins | None = None
    seconds: float = 0.0
    error: CircuitError | None = None  # status error: the one mistake that stopped the whole check, as raised
    file: str = ""  # the file's stem, for a file that could not be loaded (attempt None)
    todo: NotAttempted | None = None  # status not attempted: what is left to fill in
    leak: CircuitError | None = None  # status failing: a write or read outside the declared ones (its `detail`)
    explained: bool = False  # circuits.explain has added the failures' explanations

    @classmethod
    def unloaded(cls, path, error: CircuitError) -> "PuzzleResult":
        """The summary row of a puzzle file that could not be loaded: an error, never a missing row."""
        return cls(
            None,
            "error",
            [TargetResult("load", Kind.FILE, "error", error=error)],
            error=error,
            file=Path(path).name.removesuffix(".py"),
        )

    @property
    def name(self) -> str:
        return self.attempt.puzzle.id if self.attempt else (self.file or "?")

    def to_dict(self) -> dict:
        """This result as plain data (JSON, execnet): its status, one-line error, what is left to fill in, time,
        coverage, margins and each target's `TargetResult.to_dict`."""
        todo = self.todo
        return {
            "puzzle": self.name,
            "status": self.status,
            "error": str(self.error) if self.error is not None else None,
            "todo": {"missing": list(todo.missing), "path": str(todo.path)} if todo is not None else None,
            "seconds": self.seconds,
            "coverage": {**asdict(self.coverage), "lengths": list(self.coverage.lengths)},
            "margins": asdict(self.margins) if self.margins is not None else None,
            "targets": [t.to_dict() for t in self.targets],
        }

    @classmethod
    def from_dict(cls, d, attempt=None) -> PuzzleResult:
        """The result `to_dict` wrote, for `attempt` (the file it is of, or what stands in for it; None: a file that
        could not be loaded). Data of any other shape is refused (ValueError): what is read is a hint, never trusted."""
        if not readable(d):
            raise ValueError("not a result as PuzzleResult.to_dict writes it")
        todo = NotAttempted(tuple(d["todo"]["missing"]), Path(d["todo"]["path"])) if d["todo"] else None
        return cls(
            attempt,
            d["status"],
            [TargetResult.from_dict(t, todo) for t in d["targets"]],
            Coverage(**{**d["coverage"], "lengths": tuple(d["coverage"]["lengths"])}),
            margins=Margins(**d["margins"]) if d["margins"] else None,
            seconds=float(d["seconds"]),
            error=_error(d["error"]),
            file=d["puzzle"],
            todo=todo,
        )


# --- as plain data ------------------------------------------------------------------------------------------------
_NUMBER = (int, float)
_TARGET = {
    "label": str,
    "kind": str,
    "status": str,
    "error": (str, type(None)),
    "worst": (*_NUMBER, type(None)),
    "metric": str,
    "checked": int,
    "interventions": (dict, type(None)),
}
_RESULT = {
    "puzzle": str,
    "status": str,
    "error": (str, type(None)),
    "todo": (dict, type(None)),
    "seconds": _NUMBER,
    "coverage": dict,
    "margins": (dict, type(None)),
    "targets": list,
}
_TODO = {"missing": list, "path": str}
_TRIED = {
    "reader": list,
    "writer": str,
    "into": list,
    "patched": int,
    "zeroed": int,
    "queries": int,
    "lengths": list,
    "example": (list, type(None)),
}
_MARGINS = {
    "longest": (int, type(None)),
    "searched_to": int,
    "first_failure": (list, type(None)),
    "sharpness": (*_NUMBER, type(None)),
    "sharpness_of": str,
}


def _coverage_types() -> dict:
    """Coverage's fields and the JSON type each is stored as (the type of its default; a tuple is a list)."""
    out = {}
    for f in fields(Coverage):
        default = f.default if f.default is not MISSING else f.default_factory()
        out[f.name] = list if isinstance(default, tuple) else type(default)
    return out


def typed(d, spec: dict, exact: bool = True) -> bool:
    """Whether `d` is a dict with `spec`'s keys (exactly, or at least), each of its type (a bool is not a number)."""
    return (
        isinstance(d, dict)
        and (set(d) == set(spec) if exact else set(spec) <= set(d))
        and all(isinstance(d[k], t) and not (isinstance(d[k], bool) and t is not bool) for k, t in spec.items())
    )


def _strings(xs) -> bool:
    return all(isinstance(x, str) for x in xs)


def readable(d) -> bool:
    """Whether `d` is a result as `PuzzleResult.to_dict` writes it, every field of its type (other keys aside)."""
    if not (typed(d, _RESULT, exact=False) and d["status"] in STATUSES):
        return False
    cov, margins, todo = d["coverage"], d["margins"], d["todo"]
    return (
        typed(cov, _coverage_types())
        and len(cov["lengths"]) == 2
        and all(type(x) is int for x in cov["lengths"])
        and _strings([*cov["skipped"], *cov["small_classes"]])
        and (margins is None or (typed(margins, _MARGINS) and _strings(margins["first_failure"] or [])))
        and (todo is None or (typed(todo, _TODO) and _strings(todo["missing"])))
        and all(
            typed(t, _TARGET)
            and t["kind"] in {k.value for k in Kind}
            and t["status"] in TARGET_STATUSES
            and (t["interventions"] is None or _tried_readable(t["interventions"]))
            for t in d["targets"]
        )
    )


def _tried_readable(d) -> bool:
    """Whether `d` is a mechanism target's Interventions as `_tried_to_dict` writes them."""
    example = d.get("example") if isinstance(d, dict) else None
    return (
        typed(d, _TRIED)
        and len(d["reader"]) == 2
        and all(type(x) is int for x in (*d["reader"], *d["lengths"]))
        and len(d["lengths"]) == 2
        and _strings(d["into"])
        and (example is None or (len(example) == 2 and all(isinstance(e, list) and _strings(e) for e in example)))
    )


def _tried_to_dict(i: Interventions | None) -> dict | None:
    if i is None:
        return None
    example = [list(i.example[0]), list(i.example[1])] if i.example else None
    return {
        "reader": list(i.reader),
        "writer": i.writer,
        "into": list(i.into),
        "patched": i.patched,
        "zeroed": i.zeroed,
        "queries": i.queries,
        "lengths": list(i.lengths),
        "example": example,
    }


def _tried_from_dict(d: dict | None) -> Interventions | None:
    if d is None:
        return None
    example = (tuple(d["example"][0]), tuple(d["example"][1])) if d["example"] else None
    return Interventions(
        tuple(d["reader"]),
        d["writer"],
        tuple(d["into"]),
        d["patched"],
        d["zeroed"],
        d["queries"],
        tuple(d["lengths"]),
        example,
    )


def _error(said: str | None) -> CircuitError | None:
    return CircuitError(said) if said is not None else None
