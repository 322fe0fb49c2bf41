"""display/report.py: the reports a learner reads. A passing behaviour target says its worst value in its metric's
direction; a target of another kind says none; a failing structure target lists its rows."""

import sympy

from circuits.checking.results import Failure, TargetResult
from circuits.display.render import to_text
from circuits.display.report import target_report, worst_case
from circuits.targets import Kind
from circuits.targets.structure import MatrixDiffers


def test_a_worst_value_is_said_for_a_behaviour_target_only():
    mass = TargetResult("t", Kind.BEHAVIOUR, "passed", worst=0.99713, metric="smallest attention on target")
    assert worst_case(mass) == "smallest attention on target 0.9971"
    assert worst_case(TargetResult("t", Kind.BEHAVIOUR, "passed", worst=0.0123, metric="largest error")) == (
        "largest error 0.012"
    )
    assert worst_case(TargetResult("t", Kind.STRUCTURE, "passed", worst=0.5, metric="largest error")) == ""


def test_a_failing_structure_target_lists_its_rows_and_the_difference():
    rows = [
        ("W_Q", sympy.Matrix([[1]]), sympy.Matrix([[1]]), True),
        ("W_K", sympy.Matrix([[2]]), sympy.Matrix([[1]]), False),
    ]
    failed = TargetResult(
        "weights",
        Kind.STRUCTURE,
        "failed",
        failure=Failure("exact check", [], 0, finding=MatrixDiffers("W_K")),
        structure=rows,
    )
    text = to_text(target_report(failed), width=80)
    assert "✓ W_Q" in text and "✗ W_K" in text
