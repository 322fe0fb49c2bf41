"""A structure or code target's finding is facts from checking, worded in display/findings.py: the library's compare
and the OV rows hand over numbers, and each kind of fact has one function that says it."""

import dataclasses

import numpy as np
import sympy

from circuits.checking import reference
from circuits.checking.targets import code, ov, structure
from circuits.display.findings import FINDINGS, expected_matrix, words


def test_every_fact_of_a_finding_has_its_words():
    facts = {
        value
        for module in (reference, code, ov, structure)
        for value in vars(module).values()
        if isinstance(value, type)
        and dataclasses.is_dataclass(value)
        and value.__module__ == module.__name__
        and value.__dataclass_params__.frozen
    }
    assert len(facts) >= 18 and sorted(c.__name__ for c in facts if c not in FINDINGS) == []


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
    assert found == reference.NanAt(
        "A",
        (0, 0, 0),
        reference.Overflows(250000 / np.sqrt(2)),
        reference.AttentionCase((1, 1, 2), (1, 2, 2), (1, 2, 1), None),
    )


def test_each_fact_is_worded_as_the_report_prints_it():
    case = reference.AttentionCase((1, 1, 1), (1, 1, 1), (1, 1, 1), [[[0]]])
    assert words(reference.NanAt("A", (0, 0, 0), reference.FullyMasked(), case)) == (
        "A has NaN at [0, 0, 0] — a row with every key masked must be all zeros (for Q (1, 1, 1), K (1, 1, 1), "
        "V (1, 1, 1), mask [[[0]]])"
    )
    assert words(reference.Overflows(176776.69)) == (
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


def test_an_ov_row_and_its_bound_are_worded_in_display():
    bound = ov.ScoreBound(0.9, None)
    row = ov.CopyingScore((0, 1), -0.25, ov.ScoreBound(-0.5, 0.5))
    assert words(row) == "head 0.1's copying score Σλ/Σ|λ| of W_U W_OV W_E is -0.250 (needs ≥ −0.5 and ≤ 0.5)"
    assert expected_matrix(bound) == sympy.Matrix([[sympy.Symbol("≥ 0.9")]])
    five = ov.RaisedMost((1, 0), tuple((t, "a") for t in "bcdef"))
    assert words(five).endswith("head 1.0's W_U W_OV W_E (wrong: b → a, c → a, d → a, e → a …)")
    assert words(structure.MatrixDiffers(five)).endswith("…) differs from the expected matrix")
    assert words(structure.MatrixDiffers("W_OV of head 1")) == "W_OV of head 1 differs from the expected matrix"
