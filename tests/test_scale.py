"""checking/scale.py: the sharpness symbol is a true scale: what a head's scores depend on (W_Qᵀ W_K and the query
bias's row, times its scale) grows in proportion to it."""

import numpy as np
from helpers import solution

from circuits.checking.margins import scaled
from circuits.checking.scale import scores


def test_a_heads_scores_grow_in_proportion_to_the_sharpness():
    attempt = solution("04_previous_token")
    names = list(attempt.puzzle.sharpness)
    assert names
    build = attempt.puzzle.build
    base = build(attempt.answer)
    twice = build(scaled(attempt.answer, names, 2.0))
    sharpened = 0
    for l in range(base.n_layers):
        for h in range(base.n_heads(l)):
            a, b = scores(base.head(l, h)), scores(twice.head(l, h))
            assert a.shape == (base.d_model + 1, base.d_model)
            assert np.allclose(b, 2 * a) or np.allclose(b, a)  # scaled by it, or a head it does not sharpen
            sharpened += bool(np.any(a)) and np.allclose(b, 2 * a)
    assert sharpened >= 1
