"""What a structure, OV, width, patched, code or mechanism target finds is facts from checking, worded in
circuits/explain/<kind>.py: the library's compare and the OV rows hand over numbers, and each kind of fact has one
function that says it, registered on `explain.words` by the fact's type.

A newcomer's map: a wrong answer → the check's fact → `explain.words(fact)`, the exact line the report prints."""

import dataclasses

import numpy as np
import pytest
import sympy
from helpers import check_with, only_failure, solution

from circuits import OVCircuit, ValueWidth, explain
from circuits.checking import reference
from circuits.display.report import expected_matrix
from circuits.explain import words
from circuits.targets import code, depends, ov, patched, structure, width


def test_every_fact_of_a_finding_has_its_words():
    facts = {
        value
        for module in (reference, code, ov, structure, width, patched, depends, explain.code)
        for value in vars(module).values()
        if isinstance(value, type)
        and dataclasses.is_dataclass(value)
        and value.__module__ == module.__name__
        and value.__dataclass_params__.frozen
    }
    unworded = [c.__name__ for c in facts if words.dispatch(c) is words.dispatch(object)]
    assert len(facts) >= 24 and sorted(unworded) == []


def test_a_fact_with_no_words_is_a_type_error_naming_it():
    @dataclasses.dataclass(frozen=True)
    class Unsaid:
        layer: int

    with pytest.raises(TypeError, match=r"^no words for a Unsaid: register them beside the fact in circuits/explain/$"):
        words(Unsaid(0))
    assert words("a puzzle's own words") == "a puzzle's own words"  # a str is said as written


def test_a_value_too_wide_is_found_as_facts_and_said_in_explain():
    """Puzzle 27's reference has a value of four dimensions; a ValueWidth of three refuses it: its row is a ValueRows
    fact, said by explain/width.py."""
    attempt = solution("27_split_copy")
    [(what, yours, expected, same)] = ValueWidth("narrow", most=3).run(attempt.answer, attempt.model())
    assert (what, expected, same) == (width.ValueRows((0, 0), (4, 10), 3), structure.AtMost(3), False)
    assert words(what) == "W_V of head 0.0 has shape (4, 10): a value of 4 dimensions, at most 3 allowed"
    assert words(expected) == "≤ 3"


def test_a_copying_head_held_to_suppress_is_found_as_its_score():
    """Puzzle 11's copying head scores +1; held to ≤ −0.9 its row is a CopyingScore, said by explain/ov.py."""
    attempt = solution("11_copying_head")
    target = OVCircuit("suppress", layer=0, head=0, max_score=-0.9)
    [(what, _, bound, same)] = target.run(attempt.answer, attempt.model())
    assert not same and isinstance(what, ov.CopyingScore) and bound == ov.ScoreBound(None, -0.9)
    assert words(what) == f"head 0.0's copying score Σλ/Σ|λ| of W_U W_OV W_E is {what.score:.3f} (needs ≤ −0.9)"


def test_a_wrong_mask_in_the_checker_carries_its_fact_to_the_report():
    """Through the whole checker: a causal mask that lets position 0 see position 1 fails with a MaskEntry fact."""

    def upper(T):
        return np.triu(np.ones((T, T), dtype=bool))

    f = only_failure(check_with("00_attention", causal_mask=upper))
    assert f.failure.finding == reference.MaskEntry(2, 0, 1, True, False)
    assert (
        explain.words(f.failure.finding) == "causal_mask(2)[0, 1] is True but position 0 may not attend to position 1"
    )


def test_the_library_compares_hand_over_facts():
    def wrong_mask(T):
        return np.triu(np.ones((T, T), dtype=bool))

    def overflowing(Q, K, V, mask=None):
        A = np.exp(Q @ np.swapaxes(K, -1, -2))
        return A / A.sum(-1, keepdims=True), A @ V

    answer = type("Answer", (), {"causal_mask": staticmethod(wrong_mask), "attention": staticmethod(overflowing)})
    assert reference.compare_mask(answer, 2) == reference.MaskEntry(2, 0, 1, True, False)
    Q = np.array([[[500.0, 0.0]]])
    K = np.array([[[500.0, 0.0], [499.0, 0.0]]])
    with np.errstate(all="ignore"):
        found = reference.compare_attention(answer, (Q, K, np.array([[[1.0], [3.0]]]), None))
    assert isinstance(found, reference.NanAt) and (found.name, found.index, found.case, found.mask) == (
        "A",
        (0, 0, 0),
        reference.AttentionCase((1, 1, 2), (1, 2, 2), (1, 2, 1), None),
        None,
    )
    assert (found.Q is Q) and (found.K is K)  # the inputs, for explain to tell the cause: not needed for the verdict
    assert explain.code.cause(found) == explain.code.Overflows(250000 / np.sqrt(2))


def test_each_fact_is_worded_as_the_report_prints_it():
    case = reference.AttentionCase((1, 1, 1), (1, 1, 1), (1, 1, 1), [[[0]]])
    one, masked = np.ones((1, 1, 1)), np.zeros((1, 1, 1), dtype=bool)
    assert explain.code.cause(reference.NanAt("A", (0, 0, 0), case, one, one, masked)) == explain.code.FullyMasked()
    assert words(reference.NanAt("A", (0, 0, 0), case, one, one, masked)) == (
        "A has NaN at [0, 0, 0] — a row with every key masked must be all zeros (for Q (1, 1, 1), K (1, 1, 1), "
        "V (1, 1, 1), mask [[[0]]])"
    )
    assert words(explain.code.Overflows(176776.69)) == (
        "this row's scores reach ±1.768e+05, where exp overflows (past 709): subtract the row's max before exp"
    )
    assert words(reference.MaskEntry(2, 0, 1, True, False)) == (
        "causal_mask(2)[0, 1] is True but position 0 may not attend to position 1"
    )
    assert words(
        reference.Raised(
            "causal_mask", "ZeroDivisionError", "division by zero", 3, "return 1 / 0", reference.MaskCase(1)
        )
    ) == ("your causal_mask raised ZeroDivisionError: division by zero at line 3 (return 1 / 0), for T = 1")
    assert words(code.YourCodeRaised("ValueError", "")) == "your code raised ValueError"
    one = np.array([[[1.0]]])
    differs = reference.ValuesDiffer(
        "C",
        (0, 0, 0),
        2.0,
        1.0,
        reference.AttentionCase((1, 1, 1), (1, 1, 1), (1, 1, 1), None),
        one,
        one,
        one,
        2 * one,
        one,
    )
    assert words(differs).splitlines() == [
        "C differs at [0, 0, 0]: yours 2, expected 1 (for Q (1, 1, 1), K (1, 1, 1), V (1, 1, 1), mask None)",
        "Q = [[[1.]]]",
        "K = [[[1.]]]",
        "V = [[[1.]]]",
        "your C = [[[2.]]]",
        "expected C = [[[1.]]]",
    ]


def test_an_ov_row_and_its_bound_are_worded_in_explain():
    bound = ov.ScoreBound(0.9, None)
    row = ov.CopyingScore((0, 1), -0.25, ov.ScoreBound(-0.5, 0.5))
    assert words(row) == "head 0.1's copying score Σλ/Σ|λ| of W_U W_OV W_E is -0.250 (needs ≥ −0.5 and ≤ 0.5)"
    assert expected_matrix(bound) == sympy.Matrix([[sympy.Symbol("≥ 0.9")]])
    five = ov.RaisedMost((1, 0), tuple((t, "a") for t in "bcdef"))
    assert words(five).endswith("head 1.0's W_U W_OV W_E (wrong: b → a, c → a, d → a, e → a …)")
    assert words(structure.MatrixDiffers(five)).endswith("…) differs from the expected matrix")
    assert words(structure.MatrixDiffers("W_OV of head 1")) == "W_OV of head 1 differs from the expected matrix"
