"""targets/output.py: an output target on a real trace: what `circuits show` prints of it (expected and
yours per position) and its explanation's per-position facts."""

import numpy as np
from helpers import solution

from circuits.explain import explain
from circuits.explain.output import ReadoutPositions
from circuits.targets import Output, Shows


def test_a_readout_shows_yours_beside_the_expected():
    attempt = solution("01_consonants")
    tokens = list("abcce")
    trace = attempt.model().run([tokens])
    target = next(t for t in attempt.puzzle.targets if isinstance(t, Output))
    shown = target.shown(trace, tokens)
    assert shown["kind"] is Shows.OUTPUT
    pairs = [(e, y) for e, y in zip(shown["expected"], shown["output"]) if e is not None]
    assert pairs and all(np.allclose(e, y, atol=target.tol) for e, y in pairs)  # the reference is right
    facts = explain(target, trace, tokens).per_position
    assert isinstance(facts, ReadoutPositions) and facts.tokens[-len(tokens) :] == tokens
