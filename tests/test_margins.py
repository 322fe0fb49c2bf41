"""checking/margins.py: how far a solved answer is from failing: its sharpness names scaled (answer matrices, or a
symbol bound in params) and the longest input length it still passes."""

import types

import numpy as np
import sympy

from circuits.checking.margins import Margins, scaled


def test_scaling_multiplies_the_named_matrices_and_params_only():
    s = sympy.Symbol("s")
    answer = types.SimpleNamespace(W_Q=np.eye(2), W_K=[[1.0, 0.0]], W_V=np.ones(2), params={s: 2.0, "t": 1.0})
    out = scaled(answer, ["W_Q", "W_K", "s"], 3.0)
    assert (out.W_Q == 3 * np.eye(2)).all() and (out.W_K == [[3.0, 0.0]]).all() and out.W_V is answer.W_V
    assert out.params == {s: 6.0, "t": 1.0} and answer.params == {s: 2.0, "t": 1.0}  # the original untouched


def test_margins_are_facts():
    m = Margins(24, 60, ["a", "b"], 0.29, "W_Q")
    assert (m.longest, m.searched_to, m.first_failure, m.sharpness, m.sharpness_of) == (24, 60, ["a", "b"], 0.29, "W_Q")
