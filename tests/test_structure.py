"""targets/structure.py: a structure target's rows compare the learner's matrix with the expected one in
sympy; the first row that differs is its finding (MatrixDiffers), which display words."""

import sympy

from circuits.targets import Kind, Structure
from circuits.targets.structure import MatrixDiffers

s = sympy.Symbol("s")


def test_rows_agree_exactly_in_sympy_and_a_differing_row_is_the_finding():
    target = Structure(
        "W_Q is s·I",
        lambda answer, model: [
            ("W_Q", answer["W_Q"], s * sympy.eye(2)),
            ("W_K", answer["W_K"], [[1, 0]]),
        ],
    )
    rows = target.run({"W_Q": [[s, 0], [0, (2 * s) / 2]], "W_K": [[1, 1]]}, None)
    assert [r[3] for r in rows] == [True, False]  # s·I however written; W_K differs
    assert target.finding(rows[1]) == MatrixDiffers("W_K")
    assert target.kind is Kind.STRUCTURE and target.label == "W_Q is s·I"


def test_a_shape_mismatch_is_a_difference_not_a_crash():
    target = Structure("shape", lambda answer, model: [("W_V", [[1, 0]], [[1], [0]])])
    assert target.run(None, None)[0][3] is False
