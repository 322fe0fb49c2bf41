"""sealed/codec.py: what crosses between the learner's process and the checker is plain data: arrays as
their entries (objects refused), nested values within limits, and stand-ins for what cannot cross."""

import numpy as np
import pytest

from circuits.sealed import codec


def test_an_array_and_a_nested_value_cross_and_come_back():
    a = np.array([[1.5, -2.0], [0.0, 3.25]])
    back = codec.to_array(codec.array(a))
    assert back.dtype == a.dtype and (back == a).all()
    value = {"a": [1, 2.5, "x"], "b": (True, None)}
    assert codec.to_value(codec.value(value)) == {"a": [1, 2.5, "x"], "b": (True, None)}


def test_an_object_array_is_refused_and_a_stand_in_is_named_as_its_type():
    with pytest.raises(codec.Unreadable):
        codec.array(np.array([object()]))
    assert repr(codec.placeholder("Widget")) == "<Widget>"
    assert repr(codec.placeholder("not a name")) == "<object>"
    assert callable(codec.placeholder("builtin_function_or_method"))
