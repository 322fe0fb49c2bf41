"""targets/next_token.py: a next-token target on a real trace: what `circuits show` prints of it (the token
expected next and the model's top guess) and, on an answer that fails it, its explanation's per-position facts."""

import dataclasses

import pytest
from helpers import solution

from circuits import CircuitError
from circuits.checking.margins import scaled
from circuits.explain import explain
from circuits.explain.next_token import NextTokenPositions
from circuits.targets import NextToken, Shows

TOKENS = list("abcde")


def test_a_copying_head_predicts_the_expected_tokens():
    attempt = solution("11_copying_head")
    target = next(t for t in attempt.puzzle.targets if isinstance(t, NextToken))
    shown = target.shown(attempt.model().run([TOKENS]), TOKENS)
    assert shown["kind"] is Shows.NEXT_TOKEN
    expected = [(e, top) for e, top in zip(shown["expected"], shown["output"]) if e is not None]
    assert expected and all(e == top for e, top in expected)  # the reference's top guess is the expected token


def test_a_blunt_answer_is_explained_position_by_position():
    attempt = solution("11_copying_head")
    target = next(t for t in attempt.puzzle.targets if isinstance(t, NextToken))
    blunt = attempt.puzzle.build(scaled(attempt.answer, attempt.puzzle.sharpness, 0.0))
    facts = explain(target, blunt.run([TOKENS]), TOKENS).per_position
    assert isinstance(facts, NextTokenPositions) and len(facts.top) == len(facts.expected) == len(facts.logprob)


def test_a_spec_naming_a_token_outside_the_vocabulary_is_one_line_naming_it():
    attempt = solution("11_copying_head")
    target = next(t for t in attempt.puzzle.targets if isinstance(t, NextToken))
    trace = attempt.model().run([TOKENS])
    assert target.evaluate(trace, [TOKENS]).ok.all()
    wrong = dataclasses.replace(target, spec=lambda toks: [None] * (len(toks) - 1) + ["z"])
    with pytest.raises(CircuitError, match=r"^unknown token 'z'; the vocabulary is"):
        wrong.evaluate(trace, [TOKENS])
