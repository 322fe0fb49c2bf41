"""Puzzles 06-08 (induction heads) reject wrong answers with a shrunk counterexample and a hint naming the matrices."""

import copy
from pathlib import Path

import numpy as np
import pytest
from helpers import hint_of, summary_of

from circuits.checking.loader import load
from circuits.display import words
from circuits.explain import check

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def attempt_with(stem: str, **answer):
    """solutions/<stem>.py with some answer names replaced (a value, or a function of the reference value)."""
    attempt = load(SOLUTIONS / f"{stem}.py")
    for name, value in answer.items():
        setattr(attempt.answer, name, value(copy.deepcopy(getattr(attempt.answer, name))) if callable(value) else value)
    return attempt


def failing(stem: str, **answer):
    """Check the edited solution: it must fail. Returns {label prefix: target result} of the failed targets."""
    result = check(attempt_with(stem, **answer), n_random=2000, property_examples=50, margins=False)
    assert result.status == "failing", [(t.label, t.status, words.said(t)) for t in result.targets]
    return {t.label: t for t in result.targets if t.status == "failed"}


def the(failed: dict, prefix: str):
    """The failed target whose label starts with prefix, with its shrunk input and explanation."""
    hits = [t for label, t in failed.items() if label.startswith(prefix)]
    assert hits, f"expected {prefix!r} among the failures, got {list(failed)}"
    return hits[0].failure


def turned_the_other_way(W):
    """Transpose each 2 × 2 rotation block of a query: R(θ) becomes R(−θ)."""
    for pair in range(2):
        r = 2 * pair
        c, d = np.flatnonzero(W.values[r] != 0)
        W.values[r, d], W.values[r + 1, c] = W.values[r + 1, c], W.values[r, d]
    return W


# --- 06 induction by pointer arithmetic --------------------------------------------------------------------
def test_06_previous_position_rotated_the_wrong_way_looks_two_back():
    failed = failing("06_induction_pointer", W_Q_c=turned_the_other_way)
    assert list(failed) == [label for label in failed if label.startswith("(c)")]  # only part (c) is wrong
    f = the(failed, "(c)")
    assert len(f.tokens) <= 3
    assert "wrong position" in hint_of(f.explanation) and "W_Q" in hint_of(f.explanation)
    assert "rotation's direction and its sign" in hint_of(f.explanation)


def test_06_induction_query_rotated_backwards_misses_the_next_position():
    failed = failing("06_induction_pointer", W_Q_f=turned_the_other_way)
    assert [(label[:3], t.kind) for label, t in failed.items()] == [("(f)", "behaviour"), ("(f)", "mechanism")]
    f = the(failed, "(f)")
    assert len(f.tokens) <= 3
    assert "W_Q" in hint_of(f.explanation) and "rotation's direction and its sign" in hint_of(f.explanation)


def test_06_a_missing_minus_on_beta_attends_to_itself():
    def plus_beta(W):
        W.values[4:8] = -W.values[4:8]  # rows 4-7: +β·position instead of −β·position
        return W

    failed = failing("06_induction_pointer", W_Q_d=plus_beta)
    f = the(failed, "(d)")
    assert f.tokens in (["a", "a"], ["b", "b"], ["c", "c"], ["d", "d"])  # the shortest input with a copy
    assert "wrong position" in hint_of(f.explanation) and "signs and sizes of W_Q_d's and W_K_d's entries" in hint_of(
        f.explanation
    )
    assert "rotation" not in hint_of(f.explanation)  # (d) weighs the position, it does not rotate it
    assert "(f)" in " ".join(label[:3] for label in failed)  # the pointer built on it fails too


def test_06_too_small_a_sharpness_says_sharpen():
    failed = failing("06_induction_pointer", params={"s": 3, "β": 0.33})
    f = the(failed, "(d)")
    assert len(f.tokens) <= 4
    assert "sharpen" in hint_of(f.explanation) and "raise your sharpness symbol s by that much" in hint_of(
        f.explanation
    )


def test_06_copying_sin_into_the_cos_slot_points_at_W_V():
    def swapped(W):
        W.values[[0, 1]] = W.values[[1, 0]]  # v:0 gets sin:0 and v:1 gets cos:0
        return W

    failed = failing("06_induction_pointer", W_V_e=swapped)
    f = the(failed, "(e)")
    assert len(f.tokens) == 2
    assert "W_V" in hint_of(f.explanation)


def test_06_a_self_position_head_is_not_a_same_content_head():
    attempt = load(SOLUTIONS / "06_induction_pointer.py")
    failed = failing("06_induction_pointer", W_Q_a=attempt.answer.W_Q_b, W_K_a=attempt.answer.W_K_b)
    f = the(failed, "(a)")
    assert len(f.tokens) == 2 and f.tokens[0] == f.tokens[1]
    assert "evenly" in hint_of(f.explanation) and "W_Q_a and W_K_a" in hint_of(f.explanation)


# --- 07 induction by K-composition --------------------------------------------------------------------------
def test_07_previous_token_head_rotated_the_wrong_way():
    failed = failing("07_induction_k_composition", W_Q1=turned_the_other_way)
    f = the(failed, "head 0.0")
    assert len(f.tokens) <= 3
    assert "W_Q" in hint_of(f.explanation) and "rotation's direction and its sign" in hint_of(f.explanation)


def test_07_keys_reading_the_current_token_make_a_duplicate_head_not_an_induction_head():
    def reads_content(W):
        W.values[:, :4], W.values[:, -4:] = W.values[:, -4:].copy(), 0  # tok:a … tok:d instead of prev:a … prev:d
        return W

    failed = failing("07_induction_k_composition", W_K2=reads_content)
    assert list(failed) == [label for label in failed if label.startswith("head 1.0")]
    f = the(failed, "head 1.0")
    assert len(f.tokens) <= 3
    assert "W_Q2 and W_K2" in hint_of(f.explanation)


def test_07_writing_the_previous_token_where_head_2_does_not_read_fails_the_induction_target():
    def writes_content(W):
        W.values[:4], W.values[-4:] = W.values[-4:].copy(), 0  # W_O1 writes tok:* instead of prev:*
        return W

    failed = failing("07_induction_k_composition", W_O1=writes_content)
    f = the(failed, "head 1.0")
    assert len(f.tokens) <= 3
    assert "W_K" in hint_of(f.explanation)


def test_07_too_small_a_sharpness_says_sharpen():
    failed = failing("07_induction_k_composition", params={"s": 2})
    f = the(failed, "head 0.0")
    assert "sharpen" in hint_of(f.explanation) and "raise your sharpness symbol s by that much" in hint_of(
        f.explanation
    )


# --- 08 induction on a repeated random sequence -------------------------------------------------------------
def test_08_without_a_default_on_bos_the_first_half_is_not_flat():
    def no_bos_row(W):
        W.values[26] = 0  # the query row that gives BOS its half score
        return W

    failed = failing("08_induction_repeated", W_Q=no_bos_row)
    assert [label.split(":")[0] for label in failed if not label.startswith("head")] == ["first half"]
    f = the(failed, "first half")
    assert len(f.tokens) == 4  # the shortest input allowed
    assert "flat" in hint_of(f.explanation) and "W_Q" in hint_of(f.explanation)


def test_08_too_small_a_logit_scale_fails_the_second_half_and_points_at_W_U():
    failed = failing("08_induction_repeated", params={"s": 30, "γ": 2})
    assert [label.split(":")[0] for label in failed] == ["second half"]
    f = the(failed, "second half")
    assert len(f.tokens) == 4
    assert "surer (raise your sharpness symbol γ)" in hint_of(f.explanation)  # γ, the learner's scale in W_U


def test_08_unembedding_the_current_letter_instead_of_the_copied_one():
    def reads_content(W):
        for t in LETTERS:
            W[t, f"tok:{t}"], W[t, f"out:{t}"] = W[t, f"out:{t}"], 0
        return W

    failed = failing("08_induction_repeated", W_U=reads_content)
    f = the(failed, "second half")
    assert len(f.tokens) == 4 and f.tokens[:2] == f.tokens[2:]
    assert "W_U" in hint_of(f.explanation)


def test_08_too_small_an_attention_sharpness_fails_the_second_half():
    failed = failing("08_induction_repeated", params={"s": 3, "γ": 12})
    f = the(failed, "second half")
    assert len(f.tokens) <= 16 < f.found_len  # dilution needs some length; shrunk from a 40-letter worked example
    assert "W_Q" in hint_of(f.explanation)


@pytest.mark.parametrize("gamma", [10, 12, 30])
def test_08_a_bos_key_scored_like_a_match_fails_whatever_the_logit_scale(gamma):
    """BOS must score half-way: scored like a match it ties with the copy, and a large γ hid that from the log-probs."""

    def bos_like_a_match(W):
        for t in LETTERS:
            W[26, f"tok:{t}"] = W[0, "tok:a"]  # s, not s/2
        return W

    failed = failing("08_induction_repeated", W_Q=bos_like_a_match, params={"s": 30, "γ": gamma})
    f = the(failed, "head 1.0")
    assert f.tokens == ["a", "a"] or len(f.tokens) <= 4
    assert "indistinguishable keys" in hint_of(f.explanation) and "W_Q and W_K" in hint_of(f.explanation)
    assert "0.500" in summary_of(f.explanation)
    for label, t in failed.items():  # no hint may suggest the larger scale that hid the mistake at γ = 30
        assert label.startswith("head") or (
            "The attention is the cause: head 1.0" in hint_of(t.failure.explanation)
            and "sharpness" not in hint_of(t.failure.explanation)
        )
