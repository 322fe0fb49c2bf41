"""checking/results.py: a result as plain data and back (`to_dict` / `from_dict`), the one way the verdict cache,
pytest-xdist's transfer and `--json` write a result; what comes back is said in the same words."""

import copy
import json

import pytest
from helpers import STEMS, solution

from circuits.audit.mutants import mutants
from circuits.checking.results import PuzzleResult, TargetResult
from circuits.display import words
from circuits.display.json import result_json
from circuits.display.render import to_text
from circuits.display.report import puzzle_report, summary_table
from circuits.errors import CircuitError
from circuits.explain import check
from circuits.targets import Kind


def carried(r: PuzzleResult) -> PuzzleResult:
    """`r` written as JSON text and read back, as the cache and an xdist worker carry it."""
    return PuzzleResult.from_dict(json.loads(json.dumps(r.to_dict(), allow_nan=False)), r.attempt)


def said_alike(back: PuzzleResult, r: PuzzleResult) -> None:
    assert back.to_dict() == r.to_dict()
    assert words.said(back) == words.said(r)
    assert to_text(summary_table([back]), width=100) == to_text(summary_table([r]), width=100)


@pytest.mark.parametrize("stem", STEMS)
def test_every_shipped_solutions_result_reads_back_the_same(stem, reference_result):
    """The report, JSON and summary row of a solved result read back (mechanisms' interventions included)."""
    r = reference_result(stem)
    assert r.status == "solved"
    back = carried(r)
    said_alike(back, r)
    assert to_text(puzzle_report(back), width=80) == to_text(puzzle_report(r), width=80)
    assert result_json(back) == result_json(r)
    assert [t.kind for t in back.targets] == [t.kind for t in r.targets]
    assert all(isinstance(t.kind, Kind) for t in back.targets)


def checked(attempt, mutant):
    """`attempt` with the mutant's answer, checked lightly (as the audit does)."""
    trial = copy.copy(attempt)
    trial.answer = mutant.answer
    return check(trial, n_random=200, property_examples=0, margins=False)


@pytest.mark.parametrize("stem", ["03_uniform", "21_ioi_mini"])
def test_a_failing_result_reads_back_its_verdict_without_its_failure(stem):
    """A failing result's statuses, numbers and summary travel; its shrunk input and explanation stay."""
    attempt = solution(stem)
    r = next(r for m in mutants(attempt) if (r := checked(attempt, m)).status == "failing")
    back = carried(r)
    said_alike(back, r)
    assert [t.status for t in back.targets] == [t.status for t in r.targets]
    assert all(t.failure is None for t in back.targets) and any(t.failure is not None for t in r.targets)


def test_an_unfinished_a_broken_and_an_unloaded_result_read_back():
    import dataclasses

    waiting = check(dataclasses.replace(solution("03_uniform"), missing=["W_Q"]))
    back = carried(waiting)
    said_alike(back, waiting)
    assert back.todo == waiting.todo and back.targets[0].todo == waiting.todo
    error = CircuitError("solutions/03_uniform.py: build() returned None, not a Model")
    broken = PuzzleResult(waiting.attempt, "error", [TargetResult("t", "behaviour", "error", error=error)], error=error)
    back = carried(broken)
    said_alike(back, broken)
    assert str(back.error) == str(error) and str(back.targets[0].error) == str(error)
    unloaded = PuzzleResult.unloaded("puzzles/07_x.py", CircuitError("07_x.py: line 3: invalid syntax"))
    back = PuzzleResult.from_dict(json.loads(json.dumps(unloaded.to_dict())))
    said_alike(back, unloaded)
    assert back.name == "07_x" and back.targets[0].kind is Kind.FILE


def test_from_dict_refuses_anything_to_dict_does_not_write():
    """What is read back is a hint, never trusted: a wrong kind, type, key or status is a ValueError."""
    good = PuzzleResult.unloaded("07_x.py", CircuitError("07_x.py: no")).to_dict()
    PuzzleResult.from_dict(good)
    target = good["targets"][0]
    for bad in (
        {**good, "targets": [{**target, "kind": "behavior"}]},
        {**good, "targets": [{**target, "status": "ok"}]},
        {**good, "targets": [{**target, "checked": True}]},  # a bool is not a count
        {**good, "targets": [{k: v for k, v in target.items() if k != "metric"}]},
        {**good, "status": "done"},
        {**good, "seconds": "0.1"},
        {**good, "coverage": {**good["coverage"], "lengths": [1, 2, 3]}},
        {**good, "margins": {"longest": 3}},
        {**good, "todo": {"missing": [1], "path": "x.py"}},
        [good],
    ):
        with pytest.raises(ValueError):
            PuzzleResult.from_dict(bad)


def test_a_target_results_kind_is_typed():
    """A kind's name is read as its member (what a test or an old caller writes); a name of no kind is refused."""
    assert TargetResult("t", "code", "passed").kind is Kind.CODE
    assert TargetResult("t", Kind.MECHANISM, "passed").to_dict()["kind"] == "mechanism"
    with pytest.raises(ValueError):
        TargetResult("t", "behavior", "passed")
