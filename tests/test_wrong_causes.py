"""Failure reports name the real cause on every kind of target (issue 24): ties, attention behind a readout,
next-token reports for the model at hand, the writer behind a reader, only the puzzle's own matrices, digits
enough to see a gap, labelled vectors in `show`, and the earliest failure first in watch."""

import copy

import numpy as np
import pytest
from helpers import check_with, hint_of, only_failure, solution, summary_of

from circuits import Basis, Head, Model, Vocab, blank
from circuits.audit.mutants import mutants
from circuits.cli import main
from circuits.display import words
from circuits.display.render import to_text
from circuits.display.report import target_report
from circuits.display.watch import compact
from circuits.explain import check, diagnosis, explain
from circuits.targets import Attention


def mutant(stem: str, name: str):
    """The reference answer of `stem` with one named mutant's edit, checked."""
    attempt = solution(stem)
    edit = next(m for m in mutants(attempt) if m.name == name)
    trial = copy.copy(attempt)
    trial.answer = edit.answer
    return check(trial, n_random=500, property_examples=0, margins=False)


def failed(result, prefix: str = ""):
    hits = [t for t in result.targets if t.status == "failed" and t.label.startswith(prefix)]
    assert hits, [(t.label, t.status) for t in result.targets]
    return hits[0]


def report(target) -> str:
    return " ".join(to_text(target_report(target), width=200).split())


# --- 1. ties: one report whichever way the tie-break lands ---------------------------------------------------
def _even_model(w_k):
    """Tokens a and b read through one head whose keys see `w_k`: 'one' is on for both, 'isb' only for b."""
    vocab = Vocab.chars_of("ab")
    W_E = blank(Basis(["one", "isb"]), vocab.tokens)
    W_E["one", "a"] = W_E["one", "b"] = W_E["isb", "b"] = 1
    return Model(vocab, W_E, layers=[[Head(W_Q=[[1, 0]], W_K=[w_k], W_V=[[1, 0]])]])


@pytest.mark.parametrize("target_key", [0, 1])
def test_a_tie_is_one_report_whichever_key_argmax_picks(target_key):
    """Keys 0 and 1 score the same: argmax picks key 0, so once the target is picked and once it is not."""
    model = _even_model([0, 0])
    target = Attention(0, 0, lambda toks: [None, target_key], per_input=True)
    e = explain(target, model.run([["a", "b"]]), ["a", "b"])
    other = 1 - target_key
    assert f"indistinguishable keys: key {other} and the target key {target_key} both score 0" in hint_of(e)
    assert "no scale can separate them" in hint_of(e) and "Their residuals differ in isb" in hint_of(e)
    assert "sharpen" not in hint_of(e) and "×10⁴" not in hint_of(e) and "by only 0" not in hint_of(e)


def test_20_a_tie_landing_on_the_target_is_a_tie_not_a_call_to_sharpen():
    f = only_failure(check_with("20_find_min", W_K=[[-1, 0, 0]])).failure
    assert f.tokens == ["0", "0"] and "its largest weight, 0.500, is on key 1 '0'" in summary_of(
        f.explanation
    )  # tied with the target key 0: the rival is named, not the target
    assert "indistinguishable keys: key 1 and the target key 0 both score 0" in hint_of(f.explanation)
    assert "sharpen" not in hint_of(f.explanation)


def test_07_a_zero_query_is_named_as_the_cause():
    f = failed(mutant("07_induction_k_composition", "W_Q2[0, tok:a] → 0")).failure
    assert "head 1.0's query at position 2 ('a') is exactly zero: W_Q2 reads nothing at that token" in hint_of(
        f.explanation
    )
    assert "sharpen" not in hint_of(f.explanation)


def test_14_a_tie_between_mind_and_bay_is_named_whichever_way_it_breaks():
    hints = [
        hint_of(failed(mutant("14_skip_trigram", name), "(c)").failure.explanation)
        for name in ("W_Q1[0, tok:in] × −1", "W_Q1[0, tok:in] → 0")
    ]
    for hint in hints:  # argmax picks 'bay' in one, 'mind' in the other: the same words
        assert "cannot tell the expected 'mind' from 'bay'" in hint and "tie, " in hint
        assert "your top guess" not in hint and "prefers" not in hint and "sharpness" not in hint


# --- 2. a readout wrong because the attention is wrong --------------------------------------------------------
def test_10_a_readout_wrong_through_the_attention_shows_the_heatmap_and_names_W_Q_and_W_K():
    t = failed(mutant("10_seen_before", "W_Q[0, tok:a] → 0"))
    hint = hint_of(t.failure.explanation)
    assert t.failure.explanation.head == (1, 0)
    assert "its values are not the cause" in hint and "Look at W_Q and W_K of head 1.0" in hint
    assert "leaks" in hint and "W_O and W_V" not in hint
    text = report(t)
    assert (
        "attention of head 1.0 (rows: queries, columns: keys, * = a key whose value the expected vector needs)" in text
    )


def test_13_a_readout_wrong_through_the_attention_shows_the_heatmap():
    t = failed(mutant("13_copy_suppression", "W_Q[0, pred:a] × −1"), "(a)")
    assert "Look at W_Q and W_K of head 0.0" in hint_of(t.failure.explanation)
    assert "attention of head 0.0" in report(t)


def test_13_the_embedding_is_a_given_never_a_head_with_W_O_and_W_V():
    t = failed(mutant("13_copy_suppression", "W_V[1, tok:b] → 0"), "(a)")
    hint = hint_of(t.failure.explanation)
    assert "exactly what the embedding writes there" in hint and "the embedding is a given" in hint
    assert "of the embedding" not in hint and "look at W_V and W_O of head 0.0" in hint


def test_18_an_average_of_values_is_reachable_so_the_report_says_where_the_attention_leaks():
    t = failed(mutant("18_histogram", "W_Q[0, 1] 0 → s"), "head 0.0's result")
    hint = hint_of(t.failure.explanation)
    assert "the values are right but the attention is not" in hint
    assert "head 0.0's attention leaks: it puts 0.667 on keys 1 'a', 2 'b' (value [0])" in hint
    assert "too little goes to 0.333 on key 0 '<bos>' (value [1]) (needs 0.500)" in hint
    assert "no attention pattern can produce it" not in hint and "look at W_V" not in hint
    assert "attention of head 0.0" in report(t)


def test_18_values_that_no_mix_can_reach_still_blame_W_V():
    W_V = np.zeros((1, len(solution("18_histogram").answer.W_V[0])), dtype=object)  # every value 0
    f = failed(check_with("18_histogram", W_V=W_V), "head 0.0's result").failure
    assert "no attention pattern can produce it: look at W_V" in hint_of(f.explanation)


# --- 3. next-token reports for the model at hand --------------------------------------------------------------
@pytest.mark.parametrize(
    "stem, name", [("11_copying_head", "W_O rows out:x ↔ out:y"), ("12_successor_head", "W_O rows out:x ↔ out:y")]
)
def test_copying_and_successor_heads_are_not_told_about_induction_or_W_Q(stem, name):
    t = failed(mutant(stem, name), "(b)")
    hint = hint_of(t.failure.explanation)
    assert "induction" not in hint and "W_Q" not in hint and "W_K" not in hint
    assert "the attention is given" in hint and "no attention pattern" not in hint  # 11's and 12's pattern is a given
    assert "look at W_V and W_O of head 0.0" in hint and "W_U (a given)" in hint
    assert "larger scale" not in hint and "scale in W_U" not in hint


def test_11_too_small_a_gamma_is_told_to_raise_gamma_not_to_scale_W_U():
    hint = hint_of(failed(check_with("11_copying_head", params={"γ": 2}), "(b)").failure.explanation)
    assert "raise your sharpness symbol γ" in hint and "W_U" not in hint


def test_21_the_prediction_names_the_name_mover_not_an_induction_head():
    W_Q2 = copy.deepcopy(solution("21_ioi_mini").answer.W_Q2)
    for k, n in enumerate(["Ann", "Bob", "Cat", "Dan"]):
        W_Q2[1 + k, f"s:{n}"] = -W_Q2[1 + k, f"s:{n}"]  # the name mover prefers the subject
    t = check_with("21_ioi_mini", W_Q2=W_Q2).targets[3]
    hint = hint_of(t.failure.explanation)
    assert "induction" not in hint
    assert "The attention is the cause: head 2.0" in hint and "Look at W_Q2 and W_K2 of head 2.0" in hint
    assert "attention of head 2.0" in report(t)


# --- 4. the writer is wrong, the reader blamed -----------------------------------------------------------------
@pytest.mark.parametrize("name", ["W_V1 rows 0 ↔ 1", "W_V1[0, sin:1] 0 → 1", "W_V1[0, tok:a] × −1"])
def test_07_a_wrong_writer_is_named_before_the_reader(name):
    hint = hint_of(failed(mutant("07_induction_k_composition", name)).failure.explanation)
    assert "which head 0.0 writes" in hint and "look at W_V1 and W_O1 of head 0.0" in hint
    assert "before W_Q2 and W_K2 of this head" in hint


@pytest.mark.parametrize("name", ["W_K2 columns prev:a ↔ prev:b", "W_K2[0, prev:a] × −1"])
def test_07_a_wrong_reader_is_not_blamed_on_the_writer(name):
    hint = hint_of(failed(mutant("07_induction_k_composition", name)).failure.explanation)
    assert "W_V1" not in hint and "W_O1" not in hint and "W_K2" in hint


def test_08_a_key_reading_a_direction_nothing_writes_is_told_so_not_blamed_on_bos_alone():
    """W_K's prev:z column moved to out:a, which no part before layer 1 can write: nothing favours the target, and
    the hint says which direction is dead and the way out: the reader (head 0.0's W_V and W_O are givens, which a
    hint never asks the learner to change)."""
    hint = " ".join(
        hint_of(failed(mutant("08_induction_repeated", "W_K columns prev:z ↔ out:a")).failure.explanation).split()
    )
    assert (
        "W_K also reads out:a, which nothing before layer 1 writes, whatever the input (head 0.0 writes nothing "
        "there), so no key differs there: W_V and W_O of head 0.0 are givens, so W_K should read what is written"
    ) in hint, hint
    assert "(a given)" not in hint, hint


# --- 5. only matrices the puzzle has -------------------------------------------------------------------------------
def test_a_row_mismatch_of_W_Q_and_W_K_names_both_in_the_answers_own_names():
    W_Q2 = np.array(solution("07_induction_k_composition").answer.W_Q2.values, dtype=object)[:3]
    message = words.said(check_with("07_induction_k_composition", W_Q2=W_Q2))
    assert "W_Q2 (W_Q of head 1.0) has 3 rows and W_K2 (W_K of head 1.0) has 4" in message
    assert "same number of rows (d_head)" in message


def test_19_mlp_hints_use_the_answers_names_for_W_in_and_W_out():
    hint = hint_of(
        only_failure(
            check_with("19_balanced_parens", W_in0=[[0, 0, 0, -5, 0, 0, 0], [0, 0, -1, -5, 0, 0, 0]])
        ).failure.explanation
    )
    assert "Look at W_in0" in hint and "W_out0" in hint and "W_in " not in hint


# --- 6. enough digits to see the gap ---------------------------------------------------------------------------------
def test_numbers_get_the_digits_that_show_the_gap():
    assert diagnosis.apart(0.49490, 0.495) == ("0.4949", "0.4950")
    assert diagnosis.apart(0.3, 0.9) == ("0.300", "0.9")
    assert diagnosis.factor(1.00003) == "1.00003" and diagnosis.factor(2.5) == "2.5"


def test_a_mass_just_short_of_the_bound_is_printed_with_the_digits_that_show_it():
    model = _even_model([0, 0.0204])  # b scores 0.0204 above a: a keeps 0.4949
    target = Attention(0, 0, lambda toks: [None, 0], per_input=True, min_mass=0.495)
    trace = model.run([["a", "b"]])
    assert not target.evaluate(trace, [["a", "b"]]).ok.any()
    e = explain(target, trace, ["a", "b"])
    assert "puts only 0.4949 there (needs ≥ 0.4950)" in summary_of(e)


# --- 7. `circuits show` labels vectors by direction ------------------------------------------------------------------
def test_show_labels_d_model_vectors_by_residual_direction(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["show", "17", "Ada Lovelace", "--solution"]) == 0
    out = capsys.readouterr().out
    assert "'Lovelace'  city:London 1  city:London 1" in out
    assert "[0, 0, 0" not in out


# --- 8. watch: the earliest failure in the circuit first, in full -----------------------------------------------------
def test_watch_shows_the_earliest_failure_in_the_circuit_first_and_in_full():
    result = mutant("13_copy_suppression", "W_V[1, tok:b] × −1")
    a, b, _ = result.targets  # (c), where the head looks, is untouched by its values
    assert a.status == b.status == "failed"  # (a) reads the final residual; (b) is head 0.0's own OV circuit
    text = to_text(compact(result), width=200)
    detail = text.index("✗ (b)")
    assert text.index("copying score") > detail and text.index("✗ (a)") > text.index(
        "-0.600 (needs ≤ −0.9)"
    )  # (b) first
    assert "found by" not in text[text.index("✗ (a)") :]  # (a) only as a header line
