"""The property test's inputs kept on disk (checking/drawn.py): the same list hypothesis draws, used without
hypothesis when nothing fails, ignored when damaged, and never standing in for the search when one fails."""

from __future__ import annotations

import json
import sys

import pytest
from helpers import solution

from circuits.checking import checker, drawn, search
from circuits.checking.checker import check


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    search._TRIED.clear()  # the in-memory copy would hide the disk
    yield tmp_path / "circuits" / "drawn"
    search._TRIED.clear()


def _kept(folder):
    return sorted(folder.glob("*.json"))


def test_a_check_keeps_what_hypothesis_draws_and_the_next_check_reads_it_instead(own_cache, monkeypatch):
    attempt = solution("09_duplicate_token")
    assert check(attempt, n_random=200, margins=False).status == "solved"
    (kept,) = _kept(own_cache)
    first = json.loads(kept.read_text())
    assert len(first) >= 50 and all(isinstance(t, str) for s in first for t in s)

    search._TRIED.clear()
    monkeypatch.setattr(search, "_examples_tried", lambda *a: pytest.fail("drew again: the kept list was not read"))
    assert check(attempt, n_random=200, margins=False).status == "solved"


def test_the_kept_list_is_the_one_hypothesis_draws(own_cache):
    from hypothesis import HealthCheck, Phase, settings

    attempt = solution("09_duplicate_token")
    check(attempt, n_random=200, margins=False)
    (kept,) = _kept(own_cache)
    inputs = checker.guarantees.spanning(attempt.puzzle.inputs, attempt.model())
    cfg = settings(
        max_examples=100,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
    assert json.loads(kept.read_text()) == search._examples_tried(inputs.strategy(), cfg)


def test_a_damaged_kept_list_is_ignored_and_drawn_again(own_cache):
    attempt = solution("09_duplicate_token")
    check(attempt, n_random=200, margins=False)
    (kept,) = _kept(own_cache)
    good = kept.read_text()
    for damage in ("[[1, 2]]", "{not json", '{"a": 1}'):
        kept.write_text(damage)
        search._TRIED.clear()
        assert check(attempt, n_random=200, margins=False).status == "solved"
        assert kept.read_text() == good  # drawn again, and kept whole


def test_a_failure_among_the_kept_inputs_is_still_searched_and_shrunk(own_cache):
    """The kept list only answers "nothing fails": when one input fails, hypothesis finds the shortest."""
    attempt = solution("09_duplicate_token")
    inputs = checker.guarantees.spanning(attempt.puzzle.inputs, attempt.model())
    name = search.drawn_key(attempt, inputs, 100)
    long = list("abcdabcdabc")
    drawn.store(name, [long])
    answer = dict(vars(attempt.answer), params={**attempt.answer.params, "s": 0.5})  # too flat: fails on repeats
    model = attempt.model(type(attempt.answer)(**answer))
    found = search.property_test(model, list(attempt.puzzle.targets), [0], None, 100, inputs, name)
    assert found and len(found[0]) < len(long)  # shrunk: the search ran, not the kept list alone


def test_the_name_changes_with_the_puzzle_file_and_the_inputs():
    attempt = solution("09_duplicate_token")
    inputs = attempt.puzzle.inputs
    a = drawn.key("09", inputs, 100, b"one")
    assert a == drawn.key("09", inputs, 100, b"one")
    assert (
        len(
            {
                a,
                drawn.key("09", inputs, 100, b"two"),
                drawn.key("09", inputs, 50, b"one"),
                drawn.key("10", inputs, 100, b"one"),
            }
        )
        == 4
    )
    assert drawn.key("09", object(), 100, b"one") is None  # no stable text: never kept
    assert drawn.key("09", inputs, 100, None) is None


def test_a_folder_that_cannot_be_written_is_no_error(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))  # a file where the folder would be
    drawn.store("x", [["a"]])
    assert drawn.load("x") is None


def test_what_hypothesis_draws_does_not_depend_on_the_source_this_process_imported(tmp_path, monkeypatch, request):
    """hypothesis draws, now and then, a constant found in a "local" module's source (circuits itself when installed
    editable, a reference a command loaded): what a check's search tries must not depend on which ones are loaded.
    (Floats, as a code target's arrays draw them; a puzzle's tokens are small indices, which it never takes.)"""
    from hypothesis import strategies as st
    from hypothesis.internal.conjecture import providers

    if not hasattr(providers, "_get_local_constants"):
        pytest.skip("this hypothesis draws no constants from local modules")
    strategy, cfg = st.lists(st.floats(-1e4, 1e4), min_size=4, max_size=8), search._settings(100)
    before = search._examples_tried(strategy, cfg)
    (tmp_path / "many_constants.py").write_text("X = " + repr([n + 0.25 for n in range(1001, 9000, 37)]) + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import many_constants  # noqa: F401 - a local module full of floats, as a project's source is

    request.addfinalizer(lambda: sys.modules.pop("many_constants", None))
    assert 1001.25 in providers._get_local_constants().floats  # hypothesis sees them outside a check
    assert search._examples_tried(strategy, cfg) == before
    with search.own_constants_only():
        assert not providers._get_local_constants().floats
    assert 1001.25 in providers._get_local_constants().floats  # and after it: a learner's own tests keep theirs
