"""circuits.explain's tables: the words of a failing target's per-position facts. Its table is chosen by the type of
the kind's per-position facts (no kind string), one set of columns and one row maker per type, registered beside
the facts."""

import numpy as np
import pytest

from circuits.explain import columns, rows, table
from circuits.explain.attention import AttentionPositions
from circuits.explain.next_token import NextTokenPositions
from circuits.explain.output import ReadoutPositions
from circuits.targets import Explanation


def test_each_kind_of_facts_has_its_own_columns_and_rows():
    facts = [
        ReadoutPositions(["a"], np.array([[1.0]]), np.array([[0.5]]), np.array([0.5]), 0.1),
        AttentionPositions(["a"], np.array([[1.0]]), np.array([[True]]), np.array([0]), np.array([1.0]), 0.9),
        NextTokenPositions(["a"], ["b"], ["b"], np.array([-0.1])),
    ]
    for f in facts:
        headers, cells = table(Explanation(0, None, f, None))
        assert headers == columns(f) and len(cells) == 1 and len(cells[0]) == len(headers)
    assert table(Explanation(0, None, facts[0], None))[1] == [["0", "'a'", "[1]", "[0.5]", "0.5", "✗"]]
    kinds = {type(f) for f in facts}
    assert kinds <= set(columns.registry) and kinds <= set(rows.registry)


def test_facts_of_no_known_type_have_no_table():
    with pytest.raises(TypeError, match="no table for object"):
        table(Explanation(0, None, object(), None))
