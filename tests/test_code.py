"""targets/code.py: a code target holds the learner's function to the library's; `searched_with` marks its
strategy with the small inputs tried first and how to shrink one."""

from circuits.targets import Code, Kind
from circuits.targets.code import YourCodeRaised, searched_with


def strategy():
    """A fresh strategy function each call: searched_with marks the function it is given."""

    def digits():
        from hypothesis import strategies as st

        return st.integers(0, 9)

    return digits


def test_a_marked_strategy_gives_its_first_cases_and_its_shrink():
    marked = searched_with(lambda: [0, 1], lambda x: iter(range(x)))(strategy())
    target = Code("doubles", marked, compare=lambda answer, x: None)
    assert target.first_cases() == [0, 1] and list(target.smaller(3)) == [0, 1, 2]
    assert target.label == "doubles" and target.kind is Kind.CODE


def test_an_unmarked_strategy_has_none():
    target = Code("doubles", strategy(), compare=lambda answer, x: None)
    assert target.first_cases() == [] and target.smaller is None
    assert YourCodeRaised("ValueError", "no") == YourCodeRaised("ValueError", "no")  # a finding is facts
