"""A puzzle's batched spec (Output(..., batched=...)) equals its plain spec on many inputs, the checker gives the
same verdict and figures with it as without, and a batched spec of the wrong shape is one clear error."""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from circuits.checking.checker import evaluate
from circuits.checking.loader import load
from circuits.errors import CircuitError
from circuits.explain import check

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(
    p
    for p in (ROOT / "solutions").glob("[0-9][0-9]_*.py")  # the puzzles' code is the same above the answer
    if "batched=" in p.read_text(encoding="utf-8")
)


def _inputs(puzzle, n: int = 3000) -> list[list[str]]:
    """The puzzle's own random inputs, every short input over a few of its tokens, and its extremes."""
    inputs = puzzle.inputs
    out = inputs.sample(n, seed=7)
    out += list(inputs.exhaustive(list(inputs.alphabet)[:3] + list(inputs.alphabet)[-2:], min(inputs.max_len, 5)))
    out += [x for f in inputs.families if hasattr(f, "extremes") for x in f.extremes(inputs.min_len, inputs.max_len)]
    return out


def mismatches(spec, batched, inputs) -> list[list[str]]:
    """The inputs on which `batched` (run per length) differs from `spec`, NaN standing for None."""
    by_len: dict[int, list[list[str]]] = {}
    for x in inputs:
        by_len.setdefault(len(x), []).append(x)
    bad = []
    for L, group in by_len.items():
        got = np.asarray(batched(np.array(group, dtype=str).reshape(len(group), L)), dtype=float)
        for row, x in zip(got, group):
            want = np.asarray([[np.nan] if e is None else e for e in spec(x)], dtype=float).reshape(L, -1)
            if row.shape != want.shape or not np.array_equal(row, want, equal_nan=True):
                bad.append(x)
    return bad


def test_some_puzzles_declare_batched_specs():
    assert {p.stem for p in FILES} >= {"01_consonants", "02_first_consonant", "03_uniform"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_the_batched_spec_equals_the_plain_one(path):
    puzzle = load(path).puzzle
    targets = [t for t in puzzle.targets if getattr(t, "batched", None) is not None]
    inputs = _inputs(puzzle)
    assert targets and len(inputs) > 3000
    for t in targets:
        assert mismatches(t.spec, t.batched, inputs) == []


def test_a_wrong_batched_spec_is_caught_by_the_comparison():
    puzzle = load(ROOT / "solutions" / "01_consonants.py").puzzle
    [target] = puzzle.targets

    def swapped(letters):
        return target.batched(letters)[..., ::-1]

    def off_by_one(letters):
        return np.roll(target.batched(letters), 1, axis=1)

    inputs = _inputs(puzzle, 500)
    assert len(mismatches(target.spec, swapped, inputs)) == len(inputs)
    assert mismatches(target.spec, off_by_one, inputs)


@pytest.mark.parametrize("stem", ["01_consonants", "03_uniform"])
def test_the_checker_gives_the_same_result_with_and_without_the_batched_spec(stem):
    attempt = load(ROOT / "solutions" / f"{stem}.py")
    with_batched = check(attempt, n_random=1500, property_examples=20, margins=False)
    attempt.puzzle.targets = [dataclasses.replace(t, batched=None) for t in attempt.puzzle.targets]
    plain = check(attempt, n_random=1500, property_examples=20, margins=False)
    assert with_batched.status == plain.status == "solved"
    assert [(r.worst, r.checked) for r in with_batched.targets] == [(r.worst, r.checked) for r in plain.targets]


def test_a_batched_spec_of_the_wrong_shape_is_one_line_naming_it():
    attempt = load(ROOT / "solutions" / "01_consonants.py")
    [target] = attempt.puzzle.targets
    wrong = dataclasses.replace(target, batched=lambda letters: np.zeros(letters.shape))
    with pytest.raises(
        CircuitError,
        match=r"the batched spec for .* returned shape \(2, 3\) for 2 inputs of 3 tokens; "
        r"it needs \(2, 3, 2\)",
    ):
        evaluate(attempt.model(), [wrong], [list("abc"), list("bca")])
