"""Every puzzle 00-05 rejects wrong answers with a shrunk counterexample and a hint pointing at the right matrix."""

import numpy as np
import pytest
import sympy
from helpers import ROOT, STEMS, check_with, hint_of, only_failure, solution

from circuits import explain
from circuits.checking import reference
from circuits.display import words
from circuits.explain import check


@pytest.mark.parametrize("stem", STEMS)
def test_every_reference_solution_passes(stem, reference_result):
    """Every reference solution (00-21, and any new one) passes its own check; the wrong answers of this file and
    tests/test_wrong_*.py are edits of these."""
    result = reference_result(stem)
    assert result.status == "solved", [(t.label, t.status, words.said(t)) for t in result.targets]


# --- 01 consonants ---------------------------------------------------------------------------------------------
def test_01_the_seed_answer_fails_on_a_long_vowel_run_ending_in_a_consonant():
    f = only_failure(check_with("01_consonants", W_K=[[0, 5]])).failure
    assert "".join(f.tokens) == "a" * 17 + "b"
    hint = hint_of(f.explanation)  # the factor fixes every length the puzzle promises, this input's full one included
    assert "not sharp enough" in hint and "the scores need ×1.18 (raise the scale of W_Q by that much)" in hint


def test_01_swapped_values_point_at_W_V():
    f = only_failure(check_with("01_consonants", W_V=[[0, 1], [1, 0]])).failure
    assert f.tokens == ["a"]
    assert "look at W_V" in hint_of(f.explanation)


def test_01_attending_to_vowels_points_at_W_Q_W_K():
    f = only_failure(check_with("01_consonants", W_K=[[20, 0]])).failure
    assert len(f.tokens) == 2 and f.tokens[0] in "aeiou"
    assert "Look at W_Q and W_K" in hint_of(f.explanation)


# --- 02 first consonant ----------------------------------------------------------------------------------------
def test_02_the_seed_answer_fails_once_the_string_is_long():
    f = only_failure(check_with("02_first_consonant", W_K=[[0, 0, 5]])).failure
    assert len(f.tokens) == 18
    assert "the scores need ×" in hint_of(f.explanation) and "raise the scale of W_Q" in hint_of(f.explanation)


def test_02_reading_the_vowel_row_points_at_W_V():
    f = only_failure(check_with("02_first_consonant", W_V=[[1, 0, 0], [0, 0, 0]])).failure
    assert f.tokens == ["a"] and "look at W_V" in hint_of(f.explanation)


# --- 03 uniform ----------------------------------------------------------------------------------------------------
def test_03_a_key_that_prefers_vowels_is_not_uniform():
    f = only_failure(check_with("03_uniform", W_K=[[1, 0]], W_Q=[[1, 1]])).failure
    assert f.tokens == ["a", "b"]
    assert "attending evenly" in hint_of(f.explanation) and "W_Q and W_K" in hint_of(f.explanation)


def test_03_counting_consonants_points_at_W_V():
    f = only_failure(check_with("03_uniform", W_V=[[0, 1]])).failure
    assert f.tokens == ["a"] and "look at W_V" in hint_of(f.explanation)


# --- 04 previous token ------------------------------------------------------------------------------------------
def test_04_too_small_a_sharpness_fails_and_says_sharpen():
    f = only_failure(check_with("04_previous_token", params={"s": 2})).failure
    assert "sharpen" in hint_of(f.explanation) or "scale W_Q or W_K" in hint_of(f.explanation)


def test_04_the_wrong_rotation_direction_attends_elsewhere():
    attempt = solution("04_previous_token")
    W = attempt.answer.W_Q_prev
    flipped = W.T.T  # a copy with the same labels
    flipped.values = W.values.copy()
    for pair in range(2):  # R(+α) instead of R(−α): swap the signs of the sin terms
        r = 2 * pair
        flipped.values[r, 4 + r + 1] *= -1
        flipped.values[r + 1, 4 + r] *= -1
    result = check_with("04_previous_token", W_Q_prev=flipped)
    failed = only_failure(result)
    assert failed.label.startswith("head 0.1")
    assert "wrong position" in hint_of(failed.failure.explanation) and "rotation's direction and its sign" in hint_of(
        failed.failure.explanation
    )
    assert len(failed.failure.tokens) <= 4


# --- 05 virtual head ---------------------------------------------------------------------------------------------
def test_05_reading_the_wrong_dimension_breaks_the_two_token_copy():
    attempt = solution("05_virtual_head")
    W_V2 = np.array(attempt.answer.W_V2).copy()
    W_V2[3] = 0
    W_V2[3, 0] = 1  # dimension 0 of the previous token, not of the token two back
    result = check_with("05_virtual_head", W_V2=W_V2)
    structure = next(t for t in result.targets if t.kind == "structure")
    assert structure.status == "failed"
    bad = [what for what, _, _, same in structure.structure if not same]
    assert "W_net² = W_O² W_V²" in bad and "two-token copy W_net² · W_net¹" in bad
    behaviour = next(t for t in result.targets if t.kind == "behaviour")
    assert behaviour.status == "failed" and len(behaviour.failure.tokens) <= 3


def test_05_writing_into_head_2s_dimensions_fails():
    W_O1 = np.zeros((16, 4), dtype=int)
    for k in range(4):
        W_O1[12 + k, k] = 1
    result = check_with("05_virtual_head", W_O1=W_O1)
    assert result.status == "failing"
    f = next(t for t in result.targets if t.kind == "behaviour").failure
    assert f.tokens and "W_V" in hint_of(f.explanation)


def test_05_exact_products_are_symbolic_when_the_answer_is():
    b = sympy.Symbol("b")
    attempt = solution("05_virtual_head")
    W_O1 = sympy.Matrix(attempt.answer.W_O1) * b
    result = check_with("05_virtual_head", W_O1=W_O1, params={"b": 1})
    assert result.status == "solved"


# --- 00 attention by hand -------------------------------------------------------------------------------------
def test_00_an_upper_triangular_mask_is_caught():
    result = check_with("00_attention", causal_mask=lambda T: np.triu(np.ones((T, T), dtype=bool)))
    f = only_failure(result)
    assert f.label.startswith("causal_mask") and "causal_mask(2)[0, 1] is True" in explain.words(f.failure.finding)
    assert f.failure.finding == reference.MaskEntry(2, 0, 1, yours=True, may=False)  # facts; display words them


def test_00_nan_on_fully_masked_rows_is_caught():
    def naive(Q, K, V, mask=None):
        s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        A = e / e.sum(-1, keepdims=True)
        return A, A @ V

    with np.errstate(all="ignore"):
        f = only_failure(check_with("00_attention", attention=naive))
    assert "NaN" in explain.words(f.failure.finding) and "must be all zeros" in explain.words(f.failure.finding)
    assert (
        isinstance(f.failure.finding, reference.NanAt)
        and explain.code.cause(f.failure.finding) == explain.code.FullyMasked()
    )


def test_00_a_missing_scale_is_caught():
    def unscaled(Q, K, V, mask=None):
        A = np.exp(Q @ np.swapaxes(K, -1, -2))
        A = A / A.sum(-1, keepdims=True)
        return A, A @ V

    f = only_failure(check_with("00_attention", attention=unscaled))
    assert "differs" in explain.words(f.failure.finding) or "NaN" in explain.words(f.failure.finding)


def test_04_numbers_with_the_scale_baked_in_must_declare_the_sharpness_symbol():
    """The worksheet asks for a symbol s; without one the margin once claimed "no sharpness needed", which was false."""
    attempt = solution("04_previous_token")
    model = attempt.model()
    baked = {
        name: np.array(getattr(model.head(0, i // 2), "W_Q" if i % 2 == 0 else "W_K"))
        for i, name in enumerate(["W_Q_self", "W_K_self", "W_Q_prev", "W_K_prev"])
    }
    result = check_with("04_previous_token", params={}, **baked)
    assert result.status == "error"
    assert words.said(result).count("\n") == 0
    assert "declare the sharpness as a sympy symbol s" in words.said(result) and "params = {'s': 30}" in words.said(
        result
    )


def test_04_the_sharpness_margin_is_not_measured_without_the_symbol():
    from circuits.checking.margins import sharpness

    attempt = solution("04_previous_token")
    model = attempt.model()
    for i, name in enumerate(["W_Q_self", "W_K_self", "W_Q_prev", "W_K_prev"]):
        setattr(attempt.answer, name, np.array(getattr(model.head(0, i // 2), "W_Q" if i % 2 == 0 else "W_K")))
    attempt.answer.params = {}
    assert sharpness(attempt) is None


def test_00_a_mistake_no_first_case_shows_is_shrunk_to_a_short_input_in_a_bounded_number_of_runs():
    """A mistake only three keys show: hypothesis finds it, the deterministic shrink makes it short, and the learner's
    code runs a bounded number of times (a count, not a clock: the report never depends on how busy the machine is)."""
    from circuits.checking.checker import SHRINK_CALLS

    right = solution("00_attention").answer.attention
    runs = []

    def three_keys(Q, K, V, mask=None):
        runs.append(K.shape)
        A, _ = right(Q, K, V, mask)
        A = A * 0.99 if K.shape[1] >= 3 else A
        return A, A @ V

    f = only_failure(check_with("00_attention", attention=three_keys))
    said = explain.words(f.failure.finding)
    assert f.failure.stage == "property test" and "for Q (1, 1, 1), K (1, 3, 1), V (1, 3, 1), mask None" in said
    first = len(reference.attention_inputs.first())
    assert len(runs) <= 2 + first + 100 + SHRINK_CALLS + 1  # worked examples, first cases, the search, the shrink


def test_00_the_first_cases_pass_for_the_library_and_are_tried_in_grading_too():
    from circuits.checking.checker import code_inputs

    target = solution("00_attention").puzzle.targets[1]
    cases = target.first_cases()
    assert cases and all(reference.compare_attention(solution("00_attention").answer, c) is None for c in cases)
    tried = code_inputs(target, 5)[len(target.examples) : len(target.examples) + len(cases)]
    assert len(tried) == len(cases) and all(
        repr(a) == repr(b) for a, b in zip(tried, cases)
    )  # right after the examples


def test_00_the_librarys_own_functions_are_not_an_answer():
    from circuits.model import functional

    f = only_failure(check_with("00_attention", attention=reference.attention))
    assert f.label.startswith("attention") and "the library's own function" in explain.words(f.failure.finding)
    f = only_failure(check_with("00_attention", causal_mask=functional.causal_mask))
    assert f.label.startswith("causal_mask") and "write causal_mask yourself" in explain.words(f.failure.finding)


def test_00_the_reference_is_not_in_the_learners_file():
    from helpers import stub

    for text in (stub("00_attention"), (ROOT / "solutions" / "00_attention.py").read_text(encoding="utf-8")):
        assert "def reference_" not in text and "import softmax" not in text


def test_00_a_crash_shows_the_input_and_the_learners_line(tmp_path):
    from circuits.checking.loader import load

    text = (ROOT / "solutions" / "00_attention.py").read_text(encoding="utf-8")
    crash = "    assert Q.shape[0] == 1, 'one batch only'"
    text = text.replace("    return A, A @ V", f"{crash}\n    return A, A @ V")
    path = tmp_path / "00_attention.py"
    path.write_text(text, encoding="utf-8")
    line = text.splitlines().index(crash) + 1
    result = check(load(path), property_examples=50, margins=False)
    f = only_failure(result)
    assert f.label.startswith("attention")
    assert f"your attention raised AssertionError: one batch only at line {line}" in explain.words(f.failure.finding)
    assert "for Q (2, 1, 1), K (2, 1, 1), V (2, 1, 1), mask None" in explain.words(f.failure.finding)
