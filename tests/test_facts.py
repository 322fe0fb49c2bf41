"""Facts in checking, words in display: a result holds numbers and the error itself; display/words.py says them,
and whatever stores a result (the verdict cache, pytest-xdist's transfer) rebuilds the same facts, so it is said
in the same words."""

import dataclasses
import json

import pytest
from helpers import solution

from circuits.checking import cache
from circuits.checking.checker import SKIPPABLE, Coverage, NotAttempted, PuzzleResult, TargetResult
from circuits.checking.margins import Margins
from circuits.display import words
from circuits.display.json import result_json
from circuits.display.render import to_text
from circuits.display.report import puzzle_report, summary_table
from circuits.errors import CircuitError
from circuits.explain import check


@pytest.fixture(scope="module")
def solved():
    """A solved check with margins measured (puzzle 03's reference solution)."""
    return check(solution("03_uniform"), n_random=300, property_examples=20, margins=True)


def test_margins_are_numbers_said_in_display():
    assert (
        words.margins(Margins(24, 60, ["a", "b"], 0.2931, "W_Q"))
        == "holds to length 24 (fails at 25); W_Q can shrink to 0.29×"
    )
    assert (
        words.margins(Margins(60, 60, None, 0.0031, "s"))
        == "holds at every length searched (to 60); s can shrink to 0.0031×"
    )
    assert words.margins(Margins(None, 0, None, 0.0, "s")) == "no sharpness needed"
    assert words.margins(None) == ""


def test_coverage_is_numbers_said_in_display():
    exhaustive = Coverage(2, 3905, 10_000, 100, (1, 20), small_max_len=5, small_min_len=1, small_tokens=4)
    assert words.coverage(exhaustive) == (
        "2 worked examples, every input of length ≤ 5 (3,905 inputs), 10,000 random "
        "inputs (lengths 1..20), a 100-example property test"
    )
    assert words.small_short(exhaustive) == "exhaustive to length 5"
    certified = dataclasses.replace(
        exhaustive, small=16_382, small_max_len=13, small_classes=["vowel", "consonant"], small_tokens=26
    )
    assert words.small_note(certified) == (
        "all 16,382 vowel/consonant patterns of length ≤ 13 (certified: 26 tokens fall into 2 interchangeable classes)"
    )
    assert (
        words.small_short(dataclasses.replace(certified, small_min_len=2))
        == "certified for all 16,382 vowel/consonant patterns of length 2..13"
    )
    none = Coverage(examples=1, skipped=list(SKIPPABLE), small_min_len=12, small_tokens=26, small_budget=20_000)
    assert words.small_note(none) == "" and words.coverage(none) == "1 worked example"
    assert words.skipped(none) == [
        "exhaustive: skipped, 26^12 = 95,428,956,661,682,176 inputs exceed the budget of 20,000 the puzzle allows",
        "random inputs: skipped, n_random = 0",
        "property test: skipped, 0 examples asked for",
        "margins: skipped, as asked (--no-margins)",
        "declared writes and reads: no reference solution found (solutions/NN_name.py beside puzzles/, or in "
        "$CIRCUITS_COURSE) and no writes= or reads= in the Puzzle",
    ]


def test_an_error_is_held_as_raised_and_said_once(tmp_path):
    error = CircuitError("puzzles/01_x.py: W_Q of head 0.0 has shape (1, 3) but needs (2, 3)")
    result = PuzzleResult(
        None, "error", [TargetResult("t", "behaviour", "error", error=error)], error=error, file="01_x"
    )
    assert result.error is error and words.said(result) == words.said(result.targets[0]) == str(error)
    assert result_json(result)["message"] == str(error) and result_json(result)["targets"][0]["message"] == str(error)
    todo = NotAttempted(("W_Q", "W_K"), tmp_path / "01_x.py")
    waiting = TargetResult("t", "behaviour", "not attempted", todo=todo)
    assert words.said(waiting) == f"not attempted: fill in W_Q, W_K in {tmp_path / '01_x.py'}"
    assert words.said(TargetResult("t", "behaviour", "passed")) == ""


def test_a_cached_verdict_is_the_same_facts(solved, tmp_path, monkeypatch):
    """The cache stores numbers and rebuilds real Margins and Coverage: the report says what the check said."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert solved.status == "solved" and isinstance(solved.margins, Margins)
    cache.store(solved, 300, 20, True)
    hit = cache.lookup(solved.attempt, 300, 20, True)
    assert hit is not None and hit.margins == solved.margins and hit.coverage == solved.coverage
    fresh, cached = to_text(puzzle_report(solved), width=80), to_text(puzzle_report(hit), width=80)
    said = lambda text: text[: text.rindex("\n(")]  # noqa: E731  (all but the time, or "solved before")
    assert said(fresh) == said(cached) and "solved before" in cached
    assert "margins: holds" in cached
    same = lambda r: {k: v for k, v in result_json(r).items() if k != "seconds"}  # noqa: E731
    assert same(hit) == same(solved)


def test_a_cache_entry_of_words_is_not_trusted(solved, tmp_path, monkeypatch):
    """An entry whose margins are text (the old format) or of the wrong shape is "not cached": checked again."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache.store(solved, 300, 20, True)
    (entry,) = (tmp_path / "circuits" / "verdicts").glob("*.json")
    stored = json.loads(entry.read_text(encoding="utf-8"))
    for margins in (
        "holds to length 24 (fails at 25)",
        {**stored["margins"], "longest": "24"},
        {**stored["margins"], "first_failure": [1, 2]},
    ):
        entry.write_text(json.dumps({**stored, "margins": margins}), encoding="utf-8")
        assert cache.lookup(solved.attempt, 300, 20, True) is None
    entry.write_text(json.dumps({**stored, "coverage": {**stored["coverage"], "small_classes": [1]}}), encoding="utf-8")
    assert cache.lookup(solved.attempt, 300, 20, True) is None
    entry.write_text(json.dumps(stored), encoding="utf-8")
    assert cache.lookup(solved.attempt, 300, 20, True) is not None


def test_a_result_sent_by_an_xdist_worker_reads_the_same(solved):
    """The plugin sends a worker's results as plain data and rebuilds the same classes: the same summary row."""
    from circuits.pytest_plugin import _received, _sent

    waiting = check(dataclasses.replace(solution("03_uniform"), missing=["W_Q"]))
    assert waiting.status == "not attempted"
    error = CircuitError("solutions/03_uniform.py: build() returned None, not a Model")
    broken = PuzzleResult(
        solved.attempt,
        "error",
        [TargetResult(t.label, t.kind, "error", error=error) for t in solved.targets],
        error=error,
    )
    for r in (solved, waiting, broken):
        sent = _sent("node", r)
        json.dumps(sent)  # plain data
        back = _received(sent)
        assert words.said(back) == words.said(r) and back.coverage == r.coverage and back.margins == r.margins
        assert to_text(summary_table([back]), width=100) == to_text(summary_table([r]), width=100)
