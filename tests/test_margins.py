"""checking/margins.py: how far a solved answer is from failing: its sharpness names scaled (answer matrices, or a
symbol bound in params) and the longest input length it still passes."""

import types

import numpy as np
import pytest
import sympy
from helpers import solution

from circuits.checking.margins import Margins, scaled, sharpness


def test_scaling_multiplies_the_named_matrices_and_params_only():
    s = sympy.Symbol("s")
    answer = types.SimpleNamespace(W_Q=np.eye(2), W_K=[[1.0, 0.0]], W_V=np.ones(2), params={s: 2.0, "t": 1.0})
    out = scaled(answer, ["W_Q", "W_K", "s"], 3.0)
    assert (out.W_Q == 3 * np.eye(2)).all() and (out.W_K == [[3.0, 0.0]]).all() and out.W_V is answer.W_V
    assert out.params == {s: 6.0, "t": 1.0} and answer.params == {s: 2.0, "t": 1.0}  # the original untouched


def test_margins_are_facts():
    m = Margins(24, 60, ["a", "b"], 0.29, "W_Q")
    assert (m.longest, m.searched_to, m.first_failure, m.sharpness, m.sharpness_of) == (24, 60, ["a", "b"], 0.29, "W_Q")


def _bisected_on_the_whole_batch(attempt, steps: int = 9) -> float | None:
    """The oracle: the sharpness search as it was, every step decided on the whole batch (inputs that failed at a
    smaller factor tried first)."""
    from circuits.checking.margins import _behaviour, passes
    from circuits.errors import CircuitError

    puzzle = attempt.puzzle
    inputs = puzzle.inputs
    targets = _behaviour(puzzle)
    batch = inputs.sample(1000, seed=inputs.seed + 1)
    batch += [x for f in inputs.families if hasattr(f, "extremes") for x in f.extremes(inputs.min_len, inputs.max_len)]
    hard: list[list[str]] = []

    def ok(factor: float) -> bool:
        try:
            model = attempt.model(scaled(attempt.answer, puzzle.sharpness, factor))
        except CircuitError:
            return False
        if hard and not passes(model, targets, hard)[0]:
            return False
        good, bad = passes(model, targets, batch)
        if not good:
            hard.append(bad)
        return good

    if ok(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def _scaled_down(stem: str, factor: float):
    """The shipped solution with its sharpness times `factor`: a margin near 1."""
    import copy

    attempt = copy.copy(solution(stem))
    attempt.answer = scaled(attempt.answer, attempt.puzzle.sharpness, factor)
    return attempt


SHARP = [
    "01_consonants",
    "04_previous_token",
    "08_induction_repeated",
    "09_duplicate_token",
    "20_find_min",
    "21_ioi_mini",
]


@pytest.mark.parametrize(
    ("attempt", "near_one"),
    [*(pytest.param(lambda s=s: solution(s), False, id=s) for s in SHARP)]
    + [
        pytest.param(lambda: _scaled_down("04_previous_token", 0.32), True, id="04 at 0.32"),
        pytest.param(lambda: _scaled_down("21_ioi_mini", 0.47), True, id="21 at 0.47"),
    ],
)
def test_the_sharpness_is_the_bisection_on_the_whole_batch(attempt, near_one):
    attempt = attempt()
    expected = _bisected_on_the_whole_batch(attempt)
    assert expected is not None and (0.9 if near_one else 0) < expected < 1
    assert sharpness(attempt, model=attempt.model()) == expected


@pytest.mark.parametrize("stem", ["01_consonants", "04_previous_token"])
def test_inputs_the_few_miss_are_found_by_the_whole_batch(stem, monkeypatch):
    """With no tight inputs to start from, every step passes on the few: the whole batch refutes each factor found,
    its failing input joins the few, and the search ends where the oracle's does."""
    import circuits.checking.margins as margins

    attempt = solution(stem)
    expected = _bisected_on_the_whole_batch(attempt)
    monkeypatch.setattr(margins, "_tightest", lambda *args, **kwargs: [])
    assert sharpness(attempt) == expected
