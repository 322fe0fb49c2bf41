"""Puzzles 16-21 (MLPs, algorithms from RASP/tracr, IOI in miniature) reject wrong answers with a report that points
at the culprit."""

import numpy as np
import pytest
from helpers import check_with, hint_of, only_failure, solution, summary_of

from circuits.checking.targets_mlp import MLPOut, MLPOutput
from circuits.explain import explain

STEMS = ["16_xor_mlp", "17_kv_memory", "18_histogram", "19_balanced_parens", "20_find_min", "21_ioi_mini"]


# --- the MLP output target, on its own ------------------------------------------------------------------------
def test_the_mlp_output_target_reads_what_the_mlp_writes_and_rejects_a_wrong_value():
    from circuits import MLP, Basis, Layer, Model, Vocab, blank

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
    e = explain(wrong, model.run(["a"]), ["a"])
    assert e.head is None and "W_in" in hint_of(e) and "W_out" in hint_of(e)


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
    assert "yours is xor 2" in summary_of(f.explanation)
    assert "hidden units W_in x are [2]" in hint_of(f.explanation) and "W_out" in hint_of(f.explanation)


def test_16_units_without_a_threshold_fail_where_one_feature_is_on():
    f = only_failure(check_with("16_xor_mlp", W_in=[[1, 1, 0, 0], [1, 1, 0, 0]])).failure
    assert f.tokens in (["b"], ["c"])
    assert "one = 1" in hint_of(f.explanation)


def test_16_writing_into_x_is_caught():
    f = only_failure(check_with("16_xor_mlp", W_out=[[1, 0], [0, 0], [0, 0], [1, -2]])).failure
    assert f.tokens == ["b"] and "worst on 'x'" in hint_of(f.explanation)


# --- 17 key-value memory ---------------------------------------------------------------------------------------
def _kv_answer(threshold: int):
    attempt = solution("17_kv_memory")
    W_in = np.array(attempt.answer.W_in.values, dtype=float)
    W_in[:, list(attempt.answer.W_in.cols.labels).index("one")] = threshold
    return W_in


def test_17_keys_without_a_threshold_fire_on_half_a_name():
    f = only_failure(check_with("17_kv_memory", W_in=_kv_answer(0))).failure
    assert f.tokens == ["Ada"]  # a first name alone: prev:Ada at position 0 (it attends to itself) fires the key
    assert "W_in" in hint_of(f.explanation) and "one = 1" in hint_of(f.explanation)


def test_17_a_threshold_of_two_forgets_every_fact():
    f = only_failure(check_with("17_kv_memory", W_in=_kv_answer(-2))).failure
    assert len(f.tokens) == 2 and "after the ReLU [0, 0, 0, 0]" in hint_of(
        f.explanation
    )  # a whole fact, and no unit fires


def test_17_one_unit_per_city_mixes_up_the_london_names():
    attempt = solution("17_kv_memory")
    W_in = np.array(attempt.answer.W_in.values, dtype=float)[[0, 2, 3]]
    W_in[0] += np.array(attempt.answer.W_in.values, dtype=float)[1]
    W_in[0, list(attempt.answer.W_in.cols.labels).index("one")] = -1
    W_out = np.array(attempt.answer.W_out.values, dtype=float)[:, [0, 2, 3]]
    f = only_failure(check_with("17_kv_memory", W_in=W_in, W_out=W_out)).failure
    assert f.tokens in (["Ada", "Turing"], ["Alan", "Lovelace"])  # half of one London name, half of the other


# --- 18 histogram ----------------------------------------------------------------------------------------------
def test_18_without_bos_the_head_sees_only_the_copies():
    """Leaving BOS out of the picked keys: the head averages over the copies alone, whose values are 0."""
    W_Q = np.array(solution("18_histogram").answer.W_Q, dtype=object)
    W_Q[4] = 0
    result = check_with("18_histogram", W_Q=W_Q)
    attention, output = (t.failure for t in result.targets)
    assert attention.tokens == output.tokens == ["a"]
    assert "puts only 0.000 on key 0 '<bos>'" in summary_of(attention.explanation)
    assert "their scores differ (0: 0, 1: 20)" in hint_of(attention.explanation)
    assert "expected head 0.0 z (A·V) is [0.5], yours is [0]" in summary_of(output.explanation)
    assert "fix that first" in hint_of(output.explanation)


def test_18_bos_scored_twice_as_high_takes_the_attention():
    import sympy

    s = sympy.Symbol("s")
    W_Q = np.array(solution("18_histogram").answer.W_Q, dtype=object)
    W_Q[4] = [2 * s] * 4 + [0]
    f = only_failure(check_with("18_histogram", W_Q=W_Q)).failure
    assert f.tokens == ["a"] and "W_Q and W_K" in hint_of(f.explanation)


def test_18_too_little_sharpness_leaks_onto_other_tokens():
    f = only_failure(check_with("18_histogram", params={"s": 4})).failure
    assert "sharpen the pattern" in hint_of(f.explanation) and "your sharpness symbol" in hint_of(f.explanation)


# --- 20 find the minimum ---------------------------------------------------------------------------------------
def test_20_without_the_position_term_copies_of_the_minimum_tie():
    f = only_failure(check_with("20_find_min", W_K=[[-1, 0, 0]])).failure
    assert f.tokens == ["0", "0"]
    assert "only 0.500 there" in summary_of(f.explanation)
    assert "indistinguishable keys: key 1 and the target key 0 both score 0" in hint_of(f.explanation)
    assert "differ in pos" in hint_of(f.explanation) and "sharpen" not in hint_of(f.explanation)


def test_20_a_position_term_that_outweighs_the_value_keeps_an_earlier_larger_digit():
    f = only_failure(check_with("20_find_min", W_K=[[-1, 0, -20]])).failure
    assert len(f.tokens) == 2 and f.tokens[0] > f.tokens[1]  # the later, smaller digit loses to the earlier one
    assert "pos favours key 0" in hint_of(f.explanation) and "look at W_Q and W_K on pos" in hint_of(f.explanation)


def test_20_favouring_the_latest_copy_is_caught():
    import sympy

    f = only_failure(check_with("20_find_min", W_K=[[-1, 0, sympy.Rational(1, 2)]])).failure
    assert f.tokens == ["0", "0"] and "attention went to the wrong position" in hint_of(f.explanation)


def test_20_too_little_sharpness_fails_on_a_long_tie():
    f = only_failure(check_with("20_find_min", params={"s": 40})).failure
    assert "sharpen the pattern" in hint_of(f.explanation)


# --- 19 balanced parentheses -----------------------------------------------------------------------------------
def test_19_a_shallow_step_misses_a_small_negative_balance():
    f = only_failure(check_with("19_balanced_parens", W_in0=[[0, 0, 0, -5, 0, 0, 0], [0, 0, -1, -5, 0, 0, 0]]))
    assert f.label.startswith("MLP 0")
    assert len(f.failure.tokens) == 7  # bal = −1/7 at the end: −5·bal = 5/7 never reaches the step
    assert "yours is neg 0.714" in summary_of(f.failure.explanation) and "W_in" in hint_of(f.failure.explanation)


def test_19_forgetting_that_the_balance_went_negative_is_caught_in_the_last_stage():
    f = only_failure(check_with("19_balanced_parens", W_in1=[[0, 0, 1, -20, 0, 0, 0]]))
    assert f.label.startswith("MLP 1") and f.failure.tokens == [")"]
    assert "yours is balanced 21" in summary_of(f.failure.explanation) and "ever = 1" in hint_of(f.failure.explanation)


def test_19_counting_only_the_opens_fails_first_and_later_stages_say_so():
    result = check_with("19_balanced_parens", W_V0=[[1, 0, 0, 0, 0, 0, 0]])
    failed = [t for t in result.targets if t.status == "failed"]
    assert failed[0].label.startswith("head 0.0") and failed[0].failure.tokens == [")"]
    assert "look at W_V" in hint_of(failed[0].failure.explanation)
    assert all("fix that first" in hint_of(t.failure.explanation) for t in failed[1:])


# --- 21 IOI in miniature ---------------------------------------------------------------------------------------
NAMES = ["Ann", "Bob", "Cat", "Dan"]


def test_21_a_duplicate_token_head_that_finds_itself_fails_and_later_heads_say_so():
    import copy

    W_Q0 = copy.deepcopy(solution("21_ioi_mini").answer.W_Q0)
    for i in range(12):
        W_Q0[4 + i, f"pos:{i}"] = 0  # no "not myself" term
    result = check_with("21_ioi_mini", W_Q0=W_Q0)
    first = result.targets[0].failure
    assert first.tokens[0] == "Ann" and "the target is key 0 '<bos>'" in summary_of(first.explanation)
    assert "tok:* favour key 1 by 20, bos favours the target by 10" in hint_of(first.explanation)
    later = [t for t in result.targets[1:] if t.status == "failed" and t.kind == "behaviour"]
    assert later and all("fix that first" in hint_of(t.failure.explanation) for t in later)


def test_21_a_name_mover_without_s_inhibition_splits_over_the_names():
    import copy

    W_Q2 = copy.deepcopy(solution("21_ioi_mini").answer.W_Q2)
    for k, n in enumerate(NAMES):
        W_Q2[1 + k, f"s:{n}"] = 0
    result = check_with("21_ioi_mini", W_Q2=W_Q2)
    # the mechanism target of head 2.0 fails too: a patch of s:* cannot move a head that never reads it
    assert [t.status for t in result.targets] == ["passed", "passed", "failed", "failed", "passed", "failed"]
    mover = result.targets[2].failure
    assert mover.tokens == ["Ann", "and", "Bob", "Ann", "gave", "to"]
    assert "puts only 0.333 there" in summary_of(mover.explanation) and "indistinguishable keys" in hint_of(
        mover.explanation
    )
    assert "log-prob -3.377" in summary_of(result.targets[3].failure.explanation)


def test_21_inhibiting_the_wrong_way_round_picks_the_subject():
    import copy

    W_Q2 = copy.deepcopy(solution("21_ioi_mini").answer.W_Q2)
    for k, n in enumerate(NAMES):
        W_Q2[1 + k, f"s:{n}"] = -W_Q2[1 + k, f"s:{n}"]  # +2s: the name mover prefers the subject
    f = check_with("21_ioi_mini", W_Q2=W_Q2).targets[2].failure
    assert f.tokens == ["Ann", "and", "Bob", "Ann", "gave", "to"]
    assert "its largest weight, 0.500, is on key 1 'Ann'" in summary_of(f.explanation)  # the subject, twice
    assert "key 1 scores 60 against 20 for the target key 3" in hint_of(f.explanation) and "W_Q2 and W_K2" in hint_of(
        f.explanation
    )


def test_21_the_template_is_checked_whole():
    attempt = solution("21_ioi_mini")
    family = attempt.puzzle.inputs.families[0]
    sentences = family.extremes(6, 11)
    assert len(sentences) == len({tuple(s) for s in sentences}) == 504  # 12 pairs × 2 orders × 21 filler placings
    assert all(s.count(attempt.puzzle.targets[3].spec(s)[-1]) == 1 for s in sentences)  # the IO, never S
    assert {
        s.index("gave") - 1 - max(i for i, t in enumerate(s) if t != "then" and i < s.index("gave")) for s in sentences
    } == set(range(6))  # S2 stands 0–5 fillers before "gave"


# --- the worked examples say what the model does ---------------------------------------------------------------
def test_worked_examples_match_the_reference_models():
    xor = solution("16_xor_mlp")
    one_unit = xor.puzzle.build(type(xor.answer)(W_in=[[1, 1, 0, 0]], W_out=[[0], [0], [0], [1]], params={}))
    assert one_unit.run(["abcd"]).layers[0].mlp_out[0, :, 3].tolist() == [0, 1, 1, 2]

    hist = solution("18_histogram")
    assert np.allclose(hist.model().run(["abca"]).z(0, 0)[0, 1:, 0], [1 / 2, 1 / 2, 1 / 2, 1 / 3])

    dyck = solution("19_balanced_parens")
    stages = [np.asarray(t.spec(list("())("))).sum(-1) for t in dyck.puzzle.targets]  # bal, neg, ever, balanced
    assert np.allclose(np.array(stages).T, [(1, 0, 0, 0), (0, 0, 0, 1), (-1 / 3, 1, 1 / 3, 0), (0, 0, 1 / 4, 0)])
    assert np.allclose(dyck.model().run(["())("]).resid(1)[0, :, 3:], np.array(stages).T)

    earliest_min = solution("20_find_min").puzzle.targets[0].where
    assert earliest_min(list("2130")) == [0, 1, 1, 3] and earliest_min(list("1010"))[3] == 1

    ioi = solution("21_ioi_mini")
    trace = ioi.model().run(["Ann and Bob then Bob gave to".split()])
    s = ioi.answer.params["s"]
    assert np.allclose(trace.layers[2].scores[0, 0, 7] / s, [0, 1, 0, -1, 0, -1, 0, 0], atol=1e-3)
    assert np.allclose(trace.resid(1)[0, 7, ioi.model().residual.index(["s:Bob"])], 1, atol=1e-3)
