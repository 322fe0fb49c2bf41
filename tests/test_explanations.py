"""display/explanations.py: the words of a failing target's explanation. Its table is chosen by the type of the
kind's per-position facts (no kind string), one set of columns and one row maker per type."""

import numpy as np
import pytest

from circuits.checking.targets import Explanation
from circuits.checking.targets.attention import AttentionPositions
from circuits.checking.targets.next_token import NextTokenPositions
from circuits.checking.targets.output import ReadoutPositions
from circuits.display.explanations import COLUMNS, ROWS, table


def test_each_kind_of_facts_has_its_own_columns_and_rows():
    facts = [
        ReadoutPositions(["a"], np.array([[1.0]]), np.array([[0.5]]), np.array([0.5]), 0.1),
        AttentionPositions(["a"], np.array([[1.0]]), np.array([[True]]), np.array([0]), np.array([1.0]), 0.9),
        NextTokenPositions(["a"], ["b"], ["b"], np.array([-0.1])),
    ]
    for f in facts:
        headers, rows = table(Explanation(0, None, f, None))
        assert headers is COLUMNS[type(f)] and len(rows) == 1 and len(rows[0]) == len(headers)
    assert table(Explanation(0, None, facts[0], None))[1] == [["0", "'a'", "[1]", "[0.5]", "0.5", "✗"]]
    assert set(COLUMNS) == set(ROWS) == {type(f) for f in facts}


def test_facts_of_no_known_type_have_no_table():
    with pytest.raises(KeyError):
        table(Explanation(0, None, object(), None))
