"""targets/ov.py: a head's full OV circuit W_U W_OV W_E and its copying score, the one both the OVCircuit
target and circuits.analysis use; a head that writes nothing W_U reads scores 0 in both."""

import numpy as np
import pytest
from helpers import STEMS, solution

from circuits import analysis as A
from circuits.analysis.factored import FactoredMatrix
from circuits.targets import OVCircuit
from circuits.targets.ov import CopyingScore, copying_score, full_ov


def models():
    """Every shipped solution's model that unembeds, with its heads."""
    for stem in STEMS:
        attempt = solution(stem)
        if attempt.puzzle.build is not None and (model := attempt.model()).W_U is not None:
            yield stem, model


def test_a_zero_circuit_scores_zero_dense_or_factored():
    """0, not NaN: it neither copies nor suppresses, prints as 0 and fails a bound such as ≥ 0.9."""
    assert copying_score(np.zeros((3, 3))) == 0.0
    assert copying_score(FactoredMatrix(np.zeros((3, 2)), np.ones((2, 3)))) == 0.0
    assert copying_score(np.eye(3)) == 1.0 and copying_score(-np.eye(3)) == -1.0
    factored = FactoredMatrix(np.ones((4, 1)), np.ones((1, 4)))  # rank 1, eigenvalue 4
    assert copying_score(factored) == pytest.approx(copying_score(factored.AB)) == pytest.approx(1.0)


def test_the_checker_and_analysis_give_every_shipped_head_the_same_circuit_and_score():
    seen_zero = 0
    for stem, model in models():
        tokens = list(model.vocab.tokens)
        for h in model.heads():
            dense = full_ov(model, h.layer, h.index, tokens)
            np.testing.assert_allclose(dense, A.full_ov(model, h).AB, atol=1e-9, err_msg=stem)
            if dense.shape[0] == dense.shape[1]:
                score = A.copying_score(model, h)
                assert score == pytest.approx(copying_score(dense), abs=1e-9), (stem, h.layer, h.index)
                seen_zero += not np.any(dense)
    assert seen_zero >= 3  # heads that write only where W_U does not read (08, 14, 21, 26): each scores 0


def test_a_target_on_a_head_that_writes_nothing_fails_with_a_score_of_zero():
    """Puzzle 21's head 0.0 writes into dup, which W_U never reads: as a copier it scores 0 and fails."""
    model = solution("21_ioi_mini").model()
    rows = OVCircuit("copies", layer=0, head=0, min_score=0.9).run(None, model)
    (what, _, _, ok) = rows[0]
    assert isinstance(what, CopyingScore) and what.score == 0.0 and not ok
    assert OVCircuit("does not copy", layer=0, head=0, max_score=0.5).run(None, model)[0][3]
