"""What a warm process (a watch, a pytest run) keeps from one check to the next, and that a check gives the same
verdict and report with it as without: a code target's drawn inputs, the specs' values, the random inputs."""

import copy
import dataclasses
import types

import numpy as np
import pytest
from helpers import solution

from circuits.checking import code_targets
from circuits.checking.inputs import Inputs, Uniform
from circuits.display.notebook import result_text
from circuits.explain import check
from circuits.model import functional as F
from circuits.targets import once


def text(result) -> str:
    for r in (result, *result.targets):
        r.seconds = 0.0
    return result_text(result, width=80)


def off_on_long_queries(reference):
    """An attention that is right except where there are 5 or more queries: only the search finds it."""

    def attention(Q, K, V, mask=None):
        A, C = reference(Q, K, V, mask)
        return (A + 1e-3, C) if Q.shape[-2] >= 5 else (A, C)

    return attention


def test_a_code_target_searches_once_and_a_mistake_is_still_reported_as_by_a_fresh_search(monkeypatch):
    import hypothesis

    searches = []
    find = hypothesis.find
    monkeypatch.setattr(hypothesis, "find", lambda *a, **k: searches.append(1) or find(*a, **k))
    attempt = solution("00_attention")
    code_targets._DRAWN.clear()
    first = check(attempt, margins=False)
    assert first.status == "solved" and len(searches) == 2  # one search per target
    again = check(attempt, margins=False)
    assert len(searches) == 2 and text(again) == text(first)  # the drawn inputs tried, no search
    wrong = copy.copy(attempt)
    wrong.answer = types.SimpleNamespace(
        **{**vars(attempt.answer), "attention": off_on_long_queries(attempt.answer.attention)}
    )
    kept = check(wrong, margins=False)
    code_targets._DRAWN.clear()
    fresh = check(wrong, margins=False)
    assert kept.status == fresh.status == "failing" and text(kept) == text(fresh)


def test_a_spec_is_computed_once_across_checks_and_dropped_when_checks_stop_using_it():
    calls = []

    def spec(tokens):
        calls.append("".join(tokens))
        return len(tokens)

    def other(tokens):
        return 0

    with once.per_check():
        once.each((spec, "n"), [["a"], ["b", "c"]], spec)
    with once.per_check():
        assert once.each((spec, "n"), [["a"], ["d"]], spec) == [1, 1]
    assert calls == ["a", "bc", "d"]
    with once.per_check():  # an explanation that reads another spec: the first is still kept
        once.each((other, "n"), [["a"]], other)
    with once.per_check():
        once.each((spec, "n"), [["a"]], spec)
    assert calls == ["a", "bc", "d"]
    for _ in range(once.KEPT_BLOCKS):
        with once.per_check():
            once.each((other, "n"), [["a"]], other)
    with once.per_check():
        once.each((spec, "n"), [["a"]], spec)
    assert calls == ["a", "bc", "d", "a"]  # no check used it for a while: computed again


def test_outside_a_check_nothing_is_kept():
    calls = []

    def spec(tokens):
        calls.append(1)
        return 0

    once.each((spec, "n"), [["a"]], spec)
    once.each((spec, "n"), [["a"]], spec)
    assert calls == [1, 1]


def test_random_inputs_are_drawn_once_and_handed_out_as_copies():
    inputs = Inputs(list("abc"), min_len=1, max_len=6, seed=3)
    first = inputs.sample(40)
    assert first == inputs._sample(40, 3)
    first[0].append("z")
    first.append(["q"])
    assert inputs.sample(40) == inputs._sample(40, 3) != first
    assert inputs.sample(40, seed=4) == inputs._sample(40, 4) != inputs.sample(40)


@dataclasses.dataclass(frozen=True)
class Counted(Uniform):
    """A family of a puzzle's own: its code may change between two checks, so its draws are never kept."""

    name: str = "counted"

    def sample(self, rng, n, alphabet, lo, hi):
        Counted.draws += 1
        return super().sample(rng, n, alphabet, lo, hi)


Counted.draws = 0


def test_a_family_of_the_puzzle_s_own_draws_every_time():
    inputs = Inputs(list("ab"), families=[Counted()])
    inputs.sample(5)
    inputs.sample(5)
    assert Counted.draws == 2


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_heads_whose_patterns_are_all_fixed_get_the_fixed_pattern_as_the_softmax_path_gave_it(dtype):
    rng = np.random.default_rng(0)
    q = rng.normal(size=(3, 2, 6, 4)).astype(dtype)
    v = rng.normal(size=(3, 2, 6, 5)).astype(dtype)
    mask = np.broadcast_to(np.tril(np.ones((6, 6), dtype=bool)), (1, 2, 6, 6))
    fixed = np.where(mask, rng.random((1, 2, 6, 6)), 0.0)
    fixed /= fixed.sum(-1, keepdims=True)
    scores, pattern, z = F.attention(q, q, v, mask, 1.0, fixed)
    softmax_then_fixed = np.where(np.isnan(fixed), F.softmax(q @ np.swapaxes(q, -1, -2), mask), fixed)
    assert pattern.dtype == softmax_then_fixed.dtype and np.array_equal(pattern, softmax_then_fixed)
    assert np.array_equal(z, softmax_then_fixed @ v) and pattern.flags.writeable and pattern.flags.c_contiguous
    partly = fixed.copy()
    partly[:, 0] = np.nan  # head 0 computed: the softmax is taken for it
    assert np.array_equal(
        F.attention(q, q, v, mask, 1.0, partly)[1][:, 0], F.softmax(q @ np.swapaxes(q, -1, -2), mask)[:, 0]
    )


def test_every_small_input_is_worked_out_once_per_puzzle_and_answer_s_token_classes(monkeypatch):
    from circuits.checking import plan

    attempt = solution("01_consonants")
    model, targets = attempt.model(), attempt.puzzle.targets
    made = []
    real = plan.small_inputs
    monkeypatch.setattr(plan, "small_inputs", lambda *a: made.append(1) or real(*a))
    plan._SMALL.clear()
    first = plan.Plan.of(attempt.puzzle, 500).small(model, targets)
    again = plan.Plan.of(attempt.puzzle, 500).small(model, targets)
    assert again is first and len(made) == 1
    other = [dataclasses.replace(t) for t in targets]  # other targets (another file's): worked out anew
    assert plan.Plan.of(attempt.puzzle, 500).small(model, other) == first and len(made) == 2


def test_forget_empties_every_memo_kept_between_checks_and_the_next_check_says_the_same():
    """After checks of 01 and 00 the process keeps random samples, small inputs, spec tables, bound entries and a
    code search; `kept.forget()` empties each, and 01 checked after it reports what it reported warm."""
    from circuits import kept

    warm = check(solution("01_consonants"), n_random=300, property_examples=10, margins=False)
    check(solution("00_attention"), n_random=300, property_examples=10, margins=False)
    check(solution("04_previous_token"), n_random=300, property_examples=10, margins=False)  # binds s
    held = {m.name: len(m) for m in kept.memos() if m.name != "grading verdicts"}  # a grading process's own
    assert len(held) == 4 and all(held.values()), held
    assert once._kept
    kept.forget()
    assert not any(len(m) for m in kept.memos()) and not once._kept
    assert text(check(solution("01_consonants"), n_random=300, property_examples=10, margins=False)) == text(warm)
