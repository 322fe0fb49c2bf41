"""checking/puzzle.py: a Puzzle checks itself when made: behaviour targets need inputs and a build, there is at least
one target, a level is one to three stars."""

import pytest

from circuits.checking.inputs import Inputs
from circuits.checking.puzzle import Puzzle, stars
from circuits.errors import CircuitError
from circuits.targets import Attention, Structure


def test_behaviour_targets_need_inputs_and_a_build():
    behaviour = Attention(0, 0, "previous-token")
    with pytest.raises(CircuitError, match="has behaviour targets but no inputs= or build="):
        Puzzle(91, "x", "X", ["W_Q"], [behaviour])
    Puzzle(91, "x", "X", ["W_Q"], [behaviour], build=lambda a: None, inputs=Inputs(list("ab")))
    exact = Structure("W_Q is 1", lambda answer, model: [])
    Puzzle(91, "x", "X", ["W_Q"], [exact])  # an exact target needs neither


def test_a_puzzle_checks_something_and_its_level():
    with pytest.raises(CircuitError, match="declares no targets, so nothing could fail"):
        Puzzle(91, "x", "X", ["W_Q"], [])
    assert stars(2) == "★★☆" and stars(None) == ""
