"""checking/cache.py: a solved verdict is kept as its result's `to_dict` (format 3), keyed by the bytes checked; an
entry of another shape, a failing result or a verdict of another puzzle is never read back."""

import json

import pytest
from helpers import solution

from circuits.checking import cache
from circuits.checking.checker import check
from circuits.checking.results import PuzzleResult


@pytest.fixture(scope="module")
def solved():
    return check(solution("03_uniform"), n_random=100, property_examples=5, margins=False)


def test_an_entry_is_the_results_own_dict_beside_what_was_asked(solved, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache.store(solved, 100, 5, False)
    (entry,) = (tmp_path / "circuits" / "verdicts").glob("*.json")
    stored = json.loads(entry.read_text(encoding="utf-8"))
    assert {k: v for k, v in stored.items() if k in solved.to_dict()} == json.loads(json.dumps(solved.to_dict()))
    assert (stored["n_random"], stored["property_examples"], stored["margins_measured"]) == (100, 5, False)
    hit = cache.lookup(solved.attempt, 100, 5, False)
    assert hit.cached and hit.to_dict() == solved.to_dict()
    assert cache.lookup(solved.attempt, 200, 5, False) is None  # asked for more than was checked


def test_an_entry_of_the_old_format_or_not_solved_is_not_read(solved, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache.store(solved, 100, 5, False)
    (entry,) = (tmp_path / "circuits" / "verdicts").glob("*.json")
    stored = json.loads(entry.read_text(encoding="utf-8"))
    old = {k: stored[k] for k in ("puzzle", "library", "n_random", "property_examples", "seconds")}
    old |= {"margins_measured": False, "margins": None, "coverage": stored["coverage"]}
    old["targets"] = [{k: t[k] for k in ("label", "kind", "worst", "metric", "checked")} for t in stored["targets"]]
    for bad in (old, {**stored, "status": "failing"}, {**stored, "puzzle": "01_consonants"}):
        entry.write_text(json.dumps(bad), encoding="utf-8")
        assert cache.lookup(solved.attempt, 100, 5, False) is None
    assert cache.FORMAT == 3


def test_a_failing_result_is_never_stored(solved, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    failing = PuzzleResult(solved.attempt, "failing", solved.targets, solved.coverage)
    cache.store(failing, 100, 5, False)
    assert list(tmp_path.rglob("*.json")) == []
