"""sealed/answer.py: the learner's file runs in a fenced child; what comes back is data. A reply to a call
of the learner's code is its value, what it raised (re-raised here under its own type name), or a stand-in for a
value that could not cross. (The fence itself is tested in tests/test_sealed.py.)"""

import numpy as np
import pytest

from circuits.sealed import codec
from circuits.sealed.answer import answered


def test_a_value_crosses_as_itself():
    a = np.arange(6.0).reshape(2, 3)
    assert (answered("f", {"value": codec.value(a)}) == a).all()
    assert answered("f", {"value": codec.value([1, "x", None])}) == [1, "x", None]


def test_what_the_learners_code_raised_is_raised_here_with_its_line():
    with pytest.raises(Exception, match="bad shape") as e:
        answered("f", {"raised": {"type": "ValueError", "message": "bad shape", "line": 12, "code": "x.T"}})
    assert type(e.value).__name__ == "ValueError" and e.value.circuits_line == 12 and e.value.circuits_code == "x.T"


def test_a_value_that_cannot_cross_comes_back_as_a_stand_in_named_as_its_type():
    stand_in = answered("f", {"unreadable": "cannot send a Widget"})
    assert repr(stand_in) == "<Widget>"
    function = answered("f", {"unreadable": "cannot send a function"})
    with pytest.raises(TypeError, match="a function handed in where numbers go"):
        function(1)
