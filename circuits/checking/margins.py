"""How much room a passing answer has: the longest length it still holds at, and how far its sharpness can shrink."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from circuits.checking.inputs import Inputs
from circuits.errors import CircuitError
from circuits.targets.base import Kind

PER_LENGTH = 120  # random inputs per length in the length search, besides the deterministic extremes
TIGHTEST = 16  # inputs per target the sharpness bisection tries alone first (the ones with least slack)


@dataclass
class Margins:
    """How much room a passing answer has, as numbers (display/words.py says them)."""

    longest: int | None  # longest length that passes; None if even max_len + 1 was not searched
    searched_to: int
    first_failure: list[str] | None
    sharpness: float | None  # smallest factor on the sharpness matrices that still passes
    sharpness_of: str


def _behaviour(puzzle):
    return [t for t in puzzle.targets if t.kind is Kind.BEHAVIOUR]


def _at_length(inputs: Inputs, L: int, seed: int) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    batch: list[list[str]] = []
    for fam in inputs.families:
        try:
            batch += fam.sample(rng, PER_LENGTH // len(inputs.families), list(inputs.alphabet), L, L)
        except CircuitError:
            continue  # a family that cannot make this length (e.g. odd length, repeated halves)
        if hasattr(fam, "extremes"):
            batch += fam.extremes(L, L)
    return batch


def passes(model, targets, batch) -> tuple[bool, list[str] | None]:
    """Whether every target passes on every input; stops at the first length that fails."""
    from circuits.checking.evaluation import evaluate

    by_len: dict[int, list[list[str]]] = {}
    for x in batch:
        by_len.setdefault(len(x), []).append(x)
    for L in sorted(by_len, reverse=True):  # long inputs fail first, when anything does
        part = by_len[L]
        ok, _ = evaluate(model, targets, part)
        good = ok.all(0)
        if not good.all():
            return False, part[int(np.flatnonzero(~good)[0])]
    return True, None


def longest_length(model, puzzle, cap: int | None = None) -> tuple[int, int, list[str] | None]:
    """The longest length past max_len (up to cap) at which every target still passes.

    Lengths grow by a quarter at a time until one fails, then bisection finds the
    exact boundary, assuming (as softmax dilution does) that failing persists at longer lengths.
    """
    inputs = puzzle.inputs
    cap = cap or puzzle.margin_max_len or 3 * inputs.max_len
    if model.n_ctx is not None:
        cap = min(cap, model.n_ctx - (1 if model.vocab.bos is not None else 0))
    targets = _behaviour(puzzle)
    check = lambda L: passes(model, targets, _at_length(inputs, L, seed=L))  # noqa: E731
    good, L = inputs.max_len, inputs.max_len + 1
    while L <= cap:
        ok, bad = check(L)
        if not ok:
            while L - good > 1:  # bisect between the last pass and this failure
                mid = (good + L) // 2
                ok_mid, bad_mid = check(mid)
                good, L, bad = (mid, L, bad) if ok_mid else (good, mid, bad_mid)
            return good, cap, bad
        good, L = L, min(cap, max(L + 1, int(L * 1.25))) if L < cap else cap + 1
    return max(cap, inputs.max_len), cap, None


def scaled(answer, names, factor: float):
    """`answer` with each sharpness name (an answer matrix, or a symbol bound in params) times `factor`."""
    scaled = copy.copy(answer)
    for name in names:
        if name in vars(answer):
            value = getattr(answer, name)
            setattr(
                scaled,
                name,
                value * factor
                if hasattr(value, "__mul__") and not isinstance(value, list)
                else np.asarray(value, dtype=float) * factor,
            )
        elif isinstance(getattr(answer, "params", None), dict):
            params = dict(scaled.params)  # the names scaled so far kept: s and γ are scaled together
            for key in list(params):
                if str(key) == name:
                    params[key] = params[key] * factor
            scaled.params = params
    return scaled


def _tightest(model, targets, batch: list[list[str]], k: int = TIGHTEST) -> list[list[str]]:
    """The `k` inputs of `batch` each target passes by least at factor 1 (by its worst value): the likeliest to fail
    at a smaller factor."""
    from circuits.checking.evaluation import evaluate

    _, worst = evaluate(model, targets, batch)
    picked: set[int] = set()
    for t, target in enumerate(targets):
        picked.update(np.argsort(-worst[t] if target.higher_is_worse else worst[t], kind="stable")[:k].tolist())
    return [batch[i] for i in sorted(picked)]


def sharpness(attempt, steps: int = 9, model=None) -> float | None:
    """The smallest factor on the puzzle's sharpness matrices (or symbol) at which every target still passes.

    The bisection (factor 0 first, then `steps` halvings of [0, 1]) runs on a few inputs, the tightest at factor 1
    (`model`, if given, is the answer's own): a step they fail is a step the whole batch fails. The factor found is
    then confirmed on the whole batch; where the batch fails there, its failing input joins the few and the
    bisection runs again. The factor said has passed the whole batch and the one a step below has failed it (the
    same factor as bisecting on the whole batch, wherever passing grows with the factor)."""
    from circuits.checking.validate import undeclared_sharpness

    puzzle = attempt.puzzle
    if not puzzle.sharpness or undeclared_sharpness(attempt):
        return None  # not measured: scaling a symbol the answer does not use would change nothing
    inputs = puzzle.inputs
    targets = _behaviour(puzzle)
    batch = inputs.sample(1000, seed=inputs.seed + 1)
    batch += [x for f in inputs.families if hasattr(f, "extremes") for x in f.extremes(inputs.min_len, inputs.max_len)]

    models: dict[float, object] = {}  # each factor's model, built once

    def at(factor: float):
        if factor not in models:
            try:
                models[factor] = attempt.model(scaled(attempt.answer, puzzle.sharpness, factor))
            except CircuitError:
                models[factor] = None  # an answer that cannot be built at this factor fails at it
        return models[factor]

    few = _tightest(model if model is not None else at(1.0), targets, batch)
    verdicts: dict[float, tuple[bool, int]] = {}  # factor -> (the few pass, how many of them were checked)

    def few_pass(factor: float) -> bool:
        good, done = verdicts.get(factor, (at(factor) is not None, 0))
        if good and done < len(few):
            good = passes(at(factor), targets, few[done:])[0]
        verdicts[factor] = (good, len(few))
        return good

    def bisect() -> float:
        if few_pass(0.0):
            return 0.0
        lo, hi = 0.0, 1.0
        for _ in range(steps):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if few_pass(mid) else (mid, hi)
        return hi

    while True:
        found = bisect()
        if found == 1.0:
            return found  # every step failed: 1 itself is never tried, by this bisection or the whole batch's
        good, bad = passes(at(found), targets, batch)
        if good:
            return found
        few.append(bad)


def measure(attempt, model) -> Margins:
    longest, cap, bad = longest_length(model, attempt.puzzle)
    return Margins(longest, cap, bad, sharpness(attempt, model=model), " and ".join(attempt.puzzle.sharpness))
