"""model/positions.py: positional embeddings by construction: one-hot, or sinusoidal pairs (cos:i, sin:i) in which
a previous position is a rotation of the current one."""

import numpy as np
import pytest

from circuits.errors import CircuitError
from circuits.model.positions import one_hot_positions, rotation, sinusoidal, sinusoidal_names


def test_one_hot_and_the_names_of_sinusoidal_pairs():
    assert (one_hot_positions(3) == np.eye(3)).all()
    assert sinusoidal_names(2) == ["cos:0", "sin:0", "cos:1", "sin:1"]


def test_a_previous_position_is_the_current_one_rotated_back():
    a = 0.7
    P = sinusoidal(6, [a], [2.0])  # [2, 6]
    assert np.allclose(rotation(-a) @ P[:, 1:], P[:, :-1])
    assert np.allclose(np.linalg.norm(P, axis=0), 2.0)
    with pytest.raises(CircuitError, match="got 1 frequencies but 2 magnitudes"):
        sinusoidal(4, [a], [1.0, 2.0])
