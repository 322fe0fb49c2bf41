"""Puzzles 16-21 (MLPs, algorithms from RASP/tracr, IOI in miniature) reject wrong answers with a report that points at the culprit."""

import numpy as np
import pytest
from helpers import check_with, only_failure, solution

from circuits.checker import check
from circuits.targets_mlp import MLPOut, MLPOutput

STEMS = ["16_xor_mlp"]


@pytest.mark.parametrize("stem", STEMS)
def test_reference_solution_passes(stem):
    result = check(solution(stem), n_random=2000, property_examples=50, margins=False)
    assert result.status == "solved", [(t.label, t.status, t.message) for t in result.targets]


# --- the MLP output target, on its own ------------------------------------------------------------------------
def test_the_mlp_output_target_reads_what_the_mlp_writes_and_rejects_a_wrong_value():
    from circuits import Basis, Layer, MLP, Model, Vocab, blank

    vocab = Vocab.chars_of("ab")
    resid = Basis(["one", "out"])
    W_E = blank(resid, vocab.tokens)
    W_E["one", "a"] = W_E["one", "b"] = 1
    model = Model(vocab, W_E, layers=[Layer(mlp=MLP(W_in=[[2, 0]], W_out=[[0], [1]]))])
    trace = model.run(["ab"])
    target = MLPOutput(MLPOut(0, ("out",)), lambda toks: [[2]] * len(toks), tol=0.1)
    assert np.allclose(MLPOut(0, ("out",)).get(trace), 2)
    assert target.evaluate(trace, [["a", "b"]]).ok.all()
    wrong = MLPOutput(MLPOut(0, ("out",)), lambda toks: [[1]] * len(toks), tol=0.1)
    assert not wrong.evaluate(trace, [["a", "b"]]).ok.any()
    e = wrong.explain(model.run(["a"]), ["a"])
    assert e.head is None and "W_in" in e.hint and "W_out" in e.hint


def test_the_mlp_output_target_says_when_the_layer_has_no_mlp():
    from circuits import Basis, Head, Model, Vocab, blank
    from circuits.errors import CircuitError

    vocab = Vocab.chars_of("ab")
    W_E = blank(Basis(["one"]), vocab.tokens)
    model = Model(vocab, W_E, layers=[[Head(pattern="self", W_V=[[1]])]])
    with pytest.raises(CircuitError, match="layer 0 has no MLP"):
        MLPOut(0).get(model.run(["ab"]))


# --- 16 xor with a ReLU MLP ------------------------------------------------------------------------------------
def test_16_one_unit_that_adds_the_features_fails_at_d():
    f = only_failure(check_with("16_xor_mlp", W_in=[[1, 1, 0, 0]], W_out=[[0], [0], [0], [1]])).failure
    assert f.tokens == ["d"]
    assert "[0, 0, 0, 2]" in f.explanation.summary
    assert "hidden units W_in x are [2]" in f.explanation.hint and "W_out" in f.explanation.hint


def test_16_units_without_a_threshold_fail_where_one_feature_is_on():
    f = only_failure(check_with("16_xor_mlp", W_in=[[1, 1, 0, 0], [1, 1, 0, 0]])).failure
    assert f.tokens in (["b"], ["c"])
    assert "one = 1" in f.explanation.hint


def test_16_writing_into_x_is_caught():
    f = only_failure(check_with("16_xor_mlp", W_out=[[1, 0], [0, 0], [0, 0], [1, -2]])).failure
    assert f.tokens == ["b"] and "worst on 'x'" in f.explanation.hint
