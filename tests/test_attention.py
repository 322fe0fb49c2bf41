"""targets/attention.py: an attention target on a real trace: what `circuits show` prints of it (the keys
it expects and the head's argmax) and, on an answer that fails it, its explanation's per-position facts."""

from helpers import solution

from circuits.checking.margins import scaled
from circuits.explain import explain
from circuits.explain.attention import AttentionPositions
from circuits.targets import Attention, Shows

TOKENS = list("abcd")


def test_each_head_attends_where_its_target_expects():
    attempt = solution("04_previous_token")
    trace = attempt.model().run([TOKENS])
    for target in attempt.puzzle.targets:
        shown = target.shown(trace, TOKENS)
        assert shown["kind"] is Shows.ATTENTION and shown["head"] == [target.layer, target.head]
        assert all(e is None or top in e for e, top in zip(shown["expected"], shown["output"]))


def test_a_blunt_head_is_explained_position_by_position():
    attempt = solution("04_previous_token")
    blunt = attempt.puzzle.build(scaled(attempt.answer, attempt.puzzle.sharpness, 0.0))  # uniform attention
    target = next(t for t in attempt.puzzle.targets if isinstance(t, Attention) and t.where == "previous-token")
    facts = explain(target, blunt.run([TOKENS]), TOKENS).per_position
    assert isinstance(facts, AttentionPositions) and (facts.mass[1:] < target.min_mass).all()
