"""circuits/explain/: why a behaviour target fails, in words. The checker returns a failure as data (its stage,
shortest input and trace); `explain(target, trace, tokens)` finds the facts of one failing input, per kind, and
`words(fact)` says each, registered beside it; `explained(result)` adds them (with the notes the failures say
together) to a checker's result, for whatever shows it. The mutation audit never explains: it needs a verdict."""

import copy

import numpy as np
import pytest
from helpers import solution

from circuits import explain
from circuits.audit import run
from circuits.checking import checker, guarantees
from circuits.checking.margins import scaled
from circuits.errors import CircuitError
from circuits.explain import failures
from circuits.explain.attention import AttentionMiss, Sharpen
from circuits.explain.next_token import NotReaching, TokenMiss
from circuits.explain.output import ReadoutMiss
from circuits.explain.sharpening import Sharpening
from circuits.targets import Attention, NextToken, Output


def blunter(stem: str, factor: float):
    """The reference of `stem` with its sharpness scaled by `factor`: a copy of the attempt, and its model."""
    attempt = copy.copy(solution(stem))
    attempt.answer = scaled(attempt.answer, attempt.puzzle.sharpness, factor)
    return attempt, attempt.model()


def test_an_attention_miss_is_a_fact_and_its_words():
    attempt, model = blunter("04_previous_token", 0.3)
    target = next(t for t in attempt.puzzle.targets if isinstance(t, Attention) and t.where == "previous-token")
    e = explain.explain(target, model.run([list("abcd")]), list("abcd"))
    assert isinstance(e.summary, AttentionMiss) and (e.summary.query, e.summary.keys, e.summary.top) == (2, (1,), 1)
    assert isinstance(e.hint, Sharpen) and e.hint.scale.factor > 1
    assert explain.summary(e) == (
        "at query 2 'c' the target is key 1 'b', but head 0.1 puts only 0.892 there (needs ≥ 0.9); its largest "
        "weight, 0.892, is on key 1 'b'"
    )
    assert explain.words(e.hint).startswith("head 0.1 attends most to the right key, but the score there beats")


def test_an_output_miss_is_a_fact_and_its_words():
    attempt = copy.copy(solution("01_consonants"))
    attempt.answer = copy.deepcopy(attempt.answer)
    attempt.answer.W_V = np.asarray(attempt.model().head(0, 0).W_V) * 2.0  # every value twice what it should be
    target = next(t for t in attempt.puzzle.targets if isinstance(t, Output))
    tokens = list("abcce")
    e = explain.explain(target, attempt.model().run([tokens]), tokens)
    assert isinstance(e.summary, ReadoutMiss) and e.summary.error > target.tol
    said = explain.summary(e)
    assert said.startswith(f"at position {e.summary.query} ") and f"tolerance {target.tol:g})" in said


def test_a_next_token_miss_is_a_fact_and_its_words():
    attempt, model = blunter("11_copying_head", 0.0)
    target = next(t for t in attempt.puzzle.targets if isinstance(t, NextToken))
    e = explain.explain(target, model.run([list("abcde")]), list("abcde"))
    assert isinstance(e.summary, TokenMiss) and isinstance(e.hint, NotReaching) and e.hint.rival.how == "tie"
    assert explain.summary(e) == "after position 1 'b' the expected next token has log-prob -1.609 < -0.1"
    assert "a tie, each 0.200, so no sharpness can make 'a' sure" in explain.hint(e)


def test_the_checker_returns_data_and_explained_adds_the_words_in_the_puzzles_terms():
    attempt, _ = blunter("04_previous_token", 0.3)
    result = checker.check(attempt, margins=False)
    failed = [t for t in result.targets if t.status == "failed"]
    assert failed and all(t.failure.explanation is None for t in failed)  # the checker explains nothing
    f = failed[0].failure
    assert f.trace is not None and len(f.tokens) <= len(f.found) and f.tried and f.max_len
    explain.explained(result)
    e = f.explanation
    assert e is not None and e.terms is not None and result.explained
    assert [n for n in e.notes if isinstance(n, Sharpening)]  # sized on every input the check tried
    assert "your sharpness symbol s" in explain.hint(e)  # the puzzle's own symbol, not the library's words
    assert explain.explained(result) is result and e.notes == f.explanation.notes  # once: a second call adds nothing


def test_a_leak_is_a_fact_the_note_says():
    """A write outside the declaration is a fact on the result (the error, its `detail`); explained says it as a
    note after the first failing target's hint, never by splitting the error's English."""
    attempt, model = blunter("07_induction_k_composition", 0.1)
    with pytest.raises(CircuitError) as caught:  # nothing may write: head 0.0's writes leak
        guarantees.check_writes(model, {w: [] for w in guarantees.writes_for(attempt)}, "07.py")
    leak = caught.value
    assert str(leak) == f"07.py: {leak.detail}" and leak.detail.startswith("head 0.0 writes into prev:a (1)")
    result = checker.check(attempt, margins=False)
    assert result.status == "failing" and result.leak is None  # the answer's own writes are all declared
    result.leak = leak
    first = next(t for t in result.targets if t.status == "failed")
    assert explain.hint(explain.explained(result) and first.failure.explanation).endswith(f". Note: {leak.detail}")


def test_the_audit_never_explains(monkeypatch):
    """An audit needs only whether a mutant is killed: with the explain stage watched, it decides without it."""
    attempt, _ = blunter("04_previous_token", 0.3)
    asked = []
    monkeypatch.setattr(failures, "_explain", asked.append)
    assert run.rejects(solution("04_previous_token"), attempt.answer)
    assert not run.passes_in_full(solution("04_previous_token"), attempt.answer)
    assert asked == []
    explain.check(attempt, margins=False)  # a check that is shown explains: the watch sees it
    assert len(asked) == 1


def test_the_words_name_each_matrix_as_the_puzzle_does_when_they_are_made():
    """A matrix is named through the puzzle's terms as its words are made, as the head it belongs to: the writer's
    own (W_V0, a given W_O), the hint's head's (W_Q1); outside an explanation being said, the library's names."""
    from circuits.explain.keys import WriterFirst
    from circuits.explain.terms import PuzzleTerms, saying

    fact = WriterFirst((0, 0), ("prev:*",), ("tok:*",))
    terms = PuzzleTerms({(0, 0, "W_V"): "W_V0", (1, 0, "W_Q"): "W_Q1"}, {}, frozenset({"W_V0", "W_Q1"}), {})
    with saying(terms, (1, 0), None):
        said = explain.words(fact)
    assert "W_V0 of head 0.0 reads tok:* and W_O (a given) of head 0.0 writes" in said
    assert said.endswith("before W_Q1 and W_K (a given) of this head")
    assert "W_V of head 0.0 reads tok:* and W_O of head 0.0" in explain.words(fact)  # no terms: as the library says
