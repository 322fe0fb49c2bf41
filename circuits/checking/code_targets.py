"""A code target's check: the learner's function against the library's on the worked examples, the target's first
cases and a hypothesis search, with a shrink of its own; the inputs a grader judges its outputs on."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence

from circuits import kept
from circuits.checking.plan import STAGES
from circuits.checking.results import Failure, TargetResult
from circuits.checking.search import hypothesis_stores_nothing_here
from circuits.targets import Code, Kind


def code_verdict(target: Code, answer, example) -> object | None:
    """None when the learner's code agrees with the library's on `example`, else the facts of why not (or the
    puzzle's own compare's sentence)."""
    try:
        return target.compare(answer, example)
    except Exception as e:  # noqa: BLE001 - the learner's code raising is a finding, not a crash
        from circuits.checking.validate import code_mistake

        return code_mistake(e, answer)  # the learner's function, or the puzzle's own compare


def _code_settings(n_examples: int, shrink: bool = True):
    from hypothesis import HealthCheck, Phase, settings

    phases = [p for p in Phase if shrink or p not in (Phase.shrink, Phase.explain)]
    return settings(
        max_examples=n_examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=phases,
        suppress_health_check=list(HealthCheck),
    )


def code_inputs(target: Code, n_examples: int = 100) -> list:
    """The inputs a code target is checked on: its worked examples, then every input its property test draws
    while nothing fails (derandomized, so the same list each time). Any code that agrees on all of them gets
    check's verdict, passed; code that disagrees on one fails there too (unshrunk), so a grader that runs the
    learner's code elsewhere can judge its outputs on exactly these. The target's first cases (searched_with) come
    between, as check tries them: a mistake is found on the same input both ways."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    drawn: list = []

    def record(example) -> bool:
        drawn.append(example)
        return False

    try:
        with hypothesis_stores_nothing_here():
            find(target.strategy(), record, settings=_code_settings(n_examples))
    except (NoSuchExample, Unsatisfiable):
        pass
    return [*target.examples, *target.first_cases(), *drawn]


def check_code_on(target: Code, answer, inputs: Sequence) -> TargetResult:
    """A code target's verdict on `inputs` (from code_inputs): failed at the first one compare rejects."""
    for n, example in enumerate(inputs):
        if (found := code_verdict(target, answer, example)) is not None:
            stage = STAGES[0] if n < len(target.examples) else STAGES[3]
            return TargetResult(target.label, Kind.CODE, "failed", failure=Failure(stage, [], 0, finding=found))
    return TargetResult(target.label, Kind.CODE, "passed", checked=len(inputs))


SHRINK_CALLS = 2_000  # the most times a shrink runs the learner's code (each run ~1 ms for puzzle 00's): a count,
# not a clock, so the input reported never depends on how busy the machine is


def shrunk(example, fails: Callable[[object], bool], smaller: Callable[[object], Iterator], budget: int = SHRINK_CALLS):
    """Greedy, deterministic shrinking of a code target's failing input: the first simpler input (`smaller`, simplest
    first) that still fails, again and again, until none does or `budget` runs of the learner's code are spent."""
    runs = 0
    while runs < budget:
        for candidate in smaller(example):
            runs += 1
            if fails(candidate):
                example = candidate
                break
            if runs >= budget:
                break
        else:
            return example
    return example


_DRAWN = kept.latest("code searches", 8)  # (id(target), n_examples) -> (target, what its search drew)


def _keep(target: Code, n_examples: int, drawn: list) -> None:
    """Keep what a search drew while nothing failed: derandomized, it draws the same list each time (code_inputs), so
    the next check of this target tries the list first and searches only when one of them fails."""
    _DRAWN.keep((id(target), n_examples), (target, drawn))  # holds the target: its id is not reused while kept


def check_code(target: Code, attempt, n_examples: int) -> TargetResult:
    from hypothesis import find
    from hypothesis.errors import NoSuchExample

    def why(example):
        return code_verdict(target, attempt.answer, example)

    def failed(stage: str, found) -> TargetResult:
        return TargetResult(target.label, Kind.CODE, "failed", failure=Failure(stage, [], 0, finding=found))

    for ex in target.examples:
        if (found := why(ex)) is not None:
            return failed(STAGES[0], found)
    if n_examples <= 0:  # the property test was turned off: the worked examples are the whole check
        return TargetResult(target.label, Kind.CODE, "passed", checked=len(target.examples))
    for ex in target.first_cases():  # where the search would shrink a classic mistake to, tried before it
        if (found := why(ex)) is not None:
            return failed(STAGES[3], found)
    fails = lambda e: why(e) is not None  # noqa: E731
    passed = TargetResult(target.label, Kind.CODE, "passed", checked=n_examples + len(target.examples))
    kept = _DRAWN.get((id(target), n_examples))
    if kept is not None and kept[0] is target and not any(fails(copy.deepcopy(e)) for e in kept[1]):
        return passed  # what the search would draw, all agreed on: its verdict, without drawing again
    drawn: list = []

    def fails_kept(example) -> bool:
        drawn.append(copy.deepcopy(example))  # before the learner's code can change it in place
        return fails(example)

    try:  # hypothesis finds a failing input; the target's own shrink (cheap, bounded) makes it short, where it has one
        with hypothesis_stores_nothing_here():
            ex = find(target.strategy(), fails_kept, settings=_code_settings(n_examples, shrink=target.smaller is None))
    except NoSuchExample:
        _keep(target, n_examples, drawn)
        return passed
    if target.smaller is not None:
        ex = shrunk(ex, fails, target.smaller)
    return failed(STAGES[3], why(ex))
