"""Puzzles 09-15 reject wrong answers with a shrunk counterexample and a report that points at the cause."""

import numpy as np
import pytest
from helpers import check_with, hint_of, only_failure, solution, summary_of

from circuits.display.report import target_report

STEMS = [
    "09_duplicate_token",
    "10_seen_before",
    "11_copying_head",
    "12_successor_head",
    "13_copy_suppression",
    "14_skip_trigram",
    "15_q_composition",
]


def report_text(target) -> str:
    """The report a learner reads (80 columns), with its line breaks folded into spaces."""
    import io

    from rich.console import Console

    console = Console(width=80, record=True, file=io.StringIO())
    console.print(target_report(target))
    return " ".join(console.export_text().split())


# --- 09 duplicate token ---------------------------------------------------------------------------------------
def test_09_content_alone_ties_the_query_with_its_copy():
    """Without the position term the query's own key scores like its copy: the classic first attempt."""
    attempt = solution("09_duplicate_token")
    W_Q, W_K = attempt.answer.W_Q, attempt.answer.W_K
    failed = only_failure(check_with("09_duplicate_token", W_Q=W_Q[:5, :], W_K=W_K[:5, :]))
    assert failed.failure.tokens == ["a"]  # a new token: its own key outscores BOS
    text = report_text(failed)
    assert "at query 1 'a' the target is key 0 '<bos>', but head 0.0 puts only 0.000 there" in text
    assert "key 1 scores 20 against 10 for the target key 0" in text


def test_09_no_bos_sink_leaves_a_new_token_on_itself():
    attempt = solution("09_duplicate_token")
    W_K = attempt.answer.W_K.T.T
    W_K.values = np.array(W_K.values, dtype=object).copy()
    W_K[4, "bos"] = 0
    f = only_failure(check_with("09_duplicate_token", W_K=W_K)).failure
    assert len(f.tokens) == 1
    assert "the target is key 0 '<bos>'" in summary_of(f.explanation)


# --- 10 seen before ---------------------------------------------------------------------------------------------
def test_10_keys_on_content_see_the_query_itself():
    """Keys that read tok:* (puzzle 09's first attempt) match the query's own position: every token looks seen."""
    attempt = solution("10_seen_before")
    W_K = np.array(attempt.answer.W_K.values, dtype=object)
    W_K[:4, 0:4], W_K[:4, 5:9] = W_K[:4, 5:9], 0  # tok:t instead of prev:t
    failed = only_failure(check_with("10_seen_before", W_K=W_K))
    assert failed.failure.tokens == ["a"]
    text = report_text(failed)
    assert "at position 1 'a' the expected residual seen is [0], yours is [1]" in text


def test_10_a_value_that_reads_bos_writes_the_opposite():
    W_V = np.zeros((1, 10))
    W_V[0, 4] = 1  # bos: 1 at BOS, where a new token looks
    failed = only_failure(check_with("10_seen_before", W_V=W_V))
    assert failed.failure.tokens == ["a"]
    assert "head 1.0" in hint_of(failed.failure.explanation)


# --- 11 copying head --------------------------------------------------------------------------------------------
def test_11_writing_each_token_at_its_neighbours_corner_is_not_copying():
    attempt = solution("11_copying_head")
    W_V = np.array(attempt.answer.W_V.values, dtype=object)
    W_V[:, :5] = np.roll(W_V[:, :5], 1, axis=1)  # token k written at corner k − 1
    result = check_with("11_copying_head", W_V=W_V)
    structure, behaviour = result.targets
    assert structure.status == behaviour.status == "failed"
    text = report_text(structure)
    assert "copying score Σλ/Σ|λ| of W_U W_OV W_E is 0.309 (needs ≥ 0.9)" in text
    assert "(wrong: a → e, b → a, c → b, d → c …)" in text
    assert behaviour.failure.tokens == ["a", "a"] and "log-prob -6.912 < -0.1" in summary_of(
        behaviour.failure.explanation
    )


def test_11_too_small_a_gamma_copies_but_not_surely():
    result = check_with("11_copying_head", params={"γ": 2})
    structure, behaviour = result.targets
    assert structure.status == "passed"  # the circuit copies; only the confidence is short
    assert behaviour.status == "failed"
    hint = hint_of(behaviour.failure.explanation)
    assert "after position 1 your top guess 'a' is right but only 0.643 sure ('b' follows with 0.161)" in hint
    assert "raise your sharpness symbol γ" in hint and "W_U" not in hint and "W_Q" not in hint


def test_11_the_copying_score_of_known_matrices():
    from circuits.checking.targets_ov import copying_score, raised

    assert copying_score(np.eye(3)) == 1.0
    assert copying_score(-2 * np.eye(3)) == -1.0
    assert copying_score(np.zeros((3, 3))) == 0.0
    assert abs(copying_score(np.diag([1.0, 1.0, -2.0]))) < 1e-12
    assert copying_score(np.array([[0, 1], [1, 0]])) == 0.0  # eigenvalues ±1: a swap neither copies nor suppresses
    assert raised(np.array([[1, 0], [1, 2]]), ["x", "y"]) == ["(tie)", "y"]


def test_ov_circuit_needs_an_unembedding():
    from circuits import Head, Model, Vocab
    from circuits.checking.targets_ov import full_ov
    from circuits.errors import CircuitError

    model = Model(Vocab.chars_of("ab"), np.eye(2), layers=[[Head(W_V=np.eye(2), W_O=np.eye(2), pattern="self")]])
    with pytest.raises(CircuitError, match="has no W_U, so head 0.0 has no full OV circuit"):
        full_ov(model, 0, 0)


def test_ov_circuit_target_on_a_tiny_model():
    """OVCircuit on its own: the score within both bounds, the raised tokens, only the tokens asked for."""
    from circuits import Head, Model, Vocab
    from circuits.checking.targets_ov import OVCircuit
    from circuits.explain import words

    swap = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]])  # a ↔ b, c stays
    model = Model(
        Vocab.chars_of("abc"), np.eye(3), W_U=np.eye(3), layers=[[Head(W_V=np.eye(3), W_O=swap, pattern="self")]]
    )
    rows = OVCircuit("t", min_score=-0.5, max_score=0.5, raises=lambda t: {"a": "b", "b": "a"}.get(t, t)).run(
        None, model
    )
    assert [ok for *_, ok in rows] == [True, True]  # eigenvalues 1, 1, −1: score 1/3
    assert words(rows[0][0]) == "head 0.0's copying score Σλ/Σ|λ| of W_U W_OV W_E is 0.333 (needs ≥ −0.5 and ≤ 0.5)"
    ((what, yours, _, ok),) = OVCircuit("t", raises=lambda t: t, tokens=("a", "c")).run(None, model)
    assert not ok and "(wrong: a → (tie))" in words(what) and yours.shape == (1, 2)  # b is not among the outputs


# --- 12 successor head ------------------------------------------------------------------------------------------
def test_12_a_copying_head_is_not_a_successor_head():
    import sympy

    W_O = np.zeros((4, 2), dtype=object)
    W_O[2, 0] = W_O[3, 1] = sympy.Symbol("γ")  # out = mod: no turn
    structure, behaviour = check_with("12_successor_head", W_O=W_O).targets
    assert "(wrong: 0 → 0, 1 → 1, 2 → 2, 3 → 3 …)" in report_text(structure)
    assert behaviour.failure.tokens == ["0"]
    assert "after position 0 '0' the expected next token has log-prob -5.736 < -0.1" in report_text(behaviour)


def test_12_turning_the_wrong_way_gives_the_predecessor():
    W_O = np.array(solution("12_successor_head").answer.W_O.values, dtype=object)
    W_O[2, 1], W_O[3, 0] = W_O[3, 0], W_O[2, 1]  # R(−θ)
    structure, behaviour = check_with("12_successor_head", W_O=W_O).targets
    assert "(wrong: 0 → 9, 1 → 0, 2 → 1, 3 → 2 …)" in report_text(structure)
    assert behaviour.status == "failed"


def test_12_the_worksheets_copying_score_of_a_successor_head():
    """The worksheet says the copying score cannot tell a successor head from a copier well: cos 36° = 0.81."""
    from circuits.checking.targets_ov import copying_score, full_ov

    M = full_ov(solution("12_successor_head").model(), 0, 0)
    assert abs(copying_score(M) - np.cos(np.pi / 5)) < 1e-9


# --- 13 copy suppression ----------------------------------------------------------------------------------------
def test_13_a_positive_head_copies_instead_of_suppressing():
    W_O = -np.array(solution("13_copy_suppression").answer.W_O.values, dtype=object)
    behaviour, structure, _ = check_with("13_copy_suppression", W_O=W_O).targets
    assert behaviour.failure.tokens == ["c", "b"]
    assert (
        "at position 2 'b' the expected residual pred:a, pred:b, pred:c, pred:d, pred:e is [0, 0, 0, 0, 0], "
        "yours is [0, 0, 2, 0, 0]" in report_text(behaviour)
    )
    assert "copying score Σλ/Σ|λ| of W_U W_OV W_E is 1.000 (needs ≤ −0.9)" in report_text(structure)


def test_13_a_query_on_content_suppresses_the_current_token():
    """Query "I am t" instead of "I predict t": a duplicate-token head, which finds the query itself."""
    W_Q = np.array(solution("13_copy_suppression").answer.W_Q.values, dtype=object)
    W_Q[:, 0:5], W_Q[:, 6:11] = W_Q[:, 6:11], 0
    behaviour, structure, _ = check_with("13_copy_suppression", W_Q=W_Q).targets
    assert structure.status == "passed"  # the OV circuit is right; where it looks is not
    assert behaviour.failure.tokens == ["a"]
    assert "yours is [-1, 1, 0, 0, 0]" in report_text(behaviour)


# --- 14 skip-trigrams -------------------------------------------------------------------------------------------
def test_14_one_head_for_both_trigrams_has_the_bug():
    """The worksheet's single head: from in and at to keep, raising mind and bay alike."""
    import sympy

    attempt = solution("14_skip_trigram")
    s, γ = sympy.symbols("s γ")
    W_Q1 = np.array(attempt.answer.W_Q1.values, dtype=object)
    W_Q1[0, 2] = s  # "I am in or at"
    W_O1 = np.array(attempt.answer.W_O1.values, dtype=object)
    W_O1[9, 0] = γ  # mind and bay
    a, b, c = check_with("14_skip_trigram", W_Q1=W_Q1, W_O1=W_O1, W_O2=np.zeros((10, 1))).targets
    assert a.status == "failed" and a.failure.tokens == ["keep", "at"]
    assert "at query 2 'at' the target is key 0 '<bos>', but head 0.0 puts only 0.000 there" in report_text(a)
    assert b.status == "passed"
    assert c.failure.tokens == ["keep", "in"]
    text = report_text(c)
    assert "after position 2 'in' the expected next token has log-prob -0.693 < -0.1" in text
    assert "This may follow from the failure of part (a)" in text


def test_14_a_head_without_a_bos_fallback_leaks_into_the_other_trigram():
    W_K2 = np.array(solution("14_skip_trigram").answer.W_K2.values, dtype=object)
    W_K2[1, 7] = 0  # no key reads bos: from "in", head 0.1 spreads over every key, keep included
    a, b, _ = check_with("14_skip_trigram", W_K2=W_K2).targets
    assert a.status == "passed" and b.status == "failed"
    assert b.failure.tokens == ["keep"]


# --- 15 Q-composition -------------------------------------------------------------------------------------------
def test_15_a_query_on_the_current_token_is_a_duplicate_token_head():
    """Reading tok:* instead of first:* in the query: no composition, and the head finds the current token."""
    W_Q1 = np.array(solution("15_q_composition").answer.W_Q1.values, dtype=object)
    W_Q1[:, 0:4], W_Q1[:, 5:9] = W_Q1[:, 5:9], 0
    a, b, _ = check_with("15_q_composition", W_Q1=W_Q1).targets
    assert a.status == "passed" and b.status == "failed"
    assert b.failure.tokens == ["a", "b"]
    assert "at query 1 'b' the target is key 0 'a', but head 1.0 puts only" in report_text(b)


def test_15_without_the_start_term_position_0_ties_with_a_repeat():
    W_K1 = np.array(solution("15_q_composition").answer.W_K1.values, dtype=object)
    W_K1[4, 4] = 0
    a, b, _ = check_with("15_q_composition", W_K1=W_K1).targets
    assert a.status == "passed"
    assert b.failure.tokens == ["a", "a"]
    text = report_text(b)
    assert "the target is key 1 'a', but head 1.0 puts only 0.500 there" in text
    assert "indistinguishable keys" in text and "start" in text


def test_15_head_0_writing_the_wrong_directions_is_reported_at_head_0():
    W_O0 = np.zeros((9, 4))
    W_O0[:4, :4] = np.eye(4)  # into tok:*, not first:*
    a, b, _ = check_with("15_q_composition", W_O0=W_O0).targets
    assert a.status == b.status == "failed"
    assert a.failure.tokens == ["a"]
    assert "This may follow from the failure of part (a)" in hint_of(b.failure.explanation)


def test_15_the_worksheets_composition_scores():
    from circuits import analysis

    scores = {c.kind: c for c in analysis.composition_scores(solution("15_q_composition").model())}
    q, k = scores["Q"], scores["K"]
    assert (round(q.score, 3), round(q.baseline, 3), round(q.baseline_std, 3)) == (0.5, 0.321, 0.077)
    assert q.verdict == "near" and round(q.z, 1) == 2.3
    assert k.score == 0.0
