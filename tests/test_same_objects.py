"""An audit builds ~1,000 models of one answer, each from the same matrices but the one its mutant edits: inside
`weights.same_objects()` a labelled or symbolic matrix is converted (and read for its symbols) once per object, and
an audit's verdicts are those it reaches converting every matrix anew."""

import contextlib

import numpy as np
import sympy
from helpers import solution

import circuits.audit.run as run
from circuits.audit.allowed_mutants import allowed_for
from circuits.model import weights
from circuits.model.basis import NamedMatrix

s = sympy.Symbol("s")


def labelled():
    return NamedMatrix(["0", "1"], ["a", "b"], np.array([[s, 0], [0, 2 * s]], dtype=object))


def test_inside_the_block_one_object_is_converted_once_and_an_edited_copy_anew(monkeypatch):
    converted = []
    convert = weights._matrix
    monkeypatch.setattr(weights, "_matrix", lambda *a: converted.append(a[0]) or convert(*a))
    W = labelled()
    with weights.same_objects():
        first = weights.matrix(W, "W", (2, 2), params={s: 3})
        again = weights.matrix(W, "W", (2, 2), params={s: 3})
        other_s = weights.matrix(W, "W", (2, 2), params={s: 4})
        copy = NamedMatrix(W.rows, W.cols, W.values.copy())
        copy.values[0, 0] = 5
        edited = weights.matrix(copy, "W", (2, 2), params={s: 3})
        assert weights.symbols_in(W) == weights.symbols_in(W) == {"s"}
    assert again is first and converted.count(W) == 2  # s = 3 once, s = 4 once
    assert first.tolist() == [[3, 0], [0, 6]] and other_s.tolist() == [[4, 0], [0, 8]]
    assert edited.tolist() == [[5, 0], [0, 6]]


def test_outside_the_block_an_edit_in_place_is_always_seen():
    W = labelled()
    before = weights.matrix(W, "W", (2, 2), params={s: 3})
    W.values[0, 0] = 7
    assert weights.matrix(W, "W", (2, 2), params={s: 3}).tolist() == [[7, 0], [0, 6]]
    assert before.tolist() == [[3, 0], [0, 6]]
    W.values[0, 0] = 1
    assert weights.symbols_in(W) == {"s"}
    W.values[1, 1] = 2
    assert weights.symbols_in(W) == set()


def test_the_block_keeps_only_the_latest_conversions():
    with weights.same_objects():
        for n in range(weights.SAME_KEPT * 3):
            weights.matrix(NamedMatrix(["0"], ["a"], np.array([[s * n]], dtype=object)), "W", (1, 1), params={s: 1})
        assert len(weights._SAME.get()) == weights.SAME_KEPT
    assert weights._SAME.get() is None


def test_an_audit_reaches_the_same_verdicts_converting_every_matrix_anew(monkeypatch):
    attempt = solution("04_previous_token")
    kept = run.audit(attempt, allowed_for(attempt), workers=1)
    monkeypatch.setattr(run, "same_objects", contextlib.nullcontext)
    anew = run.audit(attempt, allowed_for(attempt), workers=1)
    for audit in (kept, anew):
        audit.seconds = 0.0
    assert kept == anew and kept.total > 100
