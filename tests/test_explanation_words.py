"""A failing target's words are made in explain from the facts its kind found: the kind's sentence, then the
puzzle's own names, then the notes, in that order."""

from circuits.explain import hint, summary, words
from circuits.explain.attention import AttentionMiss, Sharpen
from circuits.explain.keys import WrongKey
from circuits.explain.notes import EarlierFailure, LeakNote, noted
from circuits.explain.scores import ScaleBy
from circuits.explain.terms import PuzzleTerms
from circuits.targets import Explanation


def explanation(hint_facts, **more) -> Explanation:
    miss = AttentionMiss((1, 0), ("<bos>", "a", "b"), 2, (1,), 0.5, 0.9, False, 1, 0.5, 0, 0.5)
    return Explanation(2, miss, None, hint_facts, (1, 0), **more)


def test_the_summary_is_worded_from_the_miss():
    assert summary(explanation(None)) == (
        "at query 2 'b' the target is key 1 'a', but head 1.0 puts only 0.500 there "
        "(needs ≥ 0.9); its largest weight, 0.500, is on key 0 '<bos>'"
    )


def test_the_hint_is_in_the_puzzles_names_then_the_notes_follow_in_order():
    sharpen = Sharpen((1, 0), 1, 0.25, ScaleBy(2.0, 3))
    plain = hint(explanation(sharpen))
    assert plain == (
        "head 1.0 attends most to the right key, but the score there beats the next best by only 0.25: "
        "sharpen the pattern; at this length (3 keys visible) the scores need ×2 (raise your sharpness "
        "symbol of the attention by that much)"
    )
    terms = PuzzleTerms({}, {}, frozenset({"W_Q1"}), {"attention": ["β"], "prediction": []})
    notes = [EarlierFailure("(a) head 0.0 attends to the previous token"), LeakNote("W_O1 writes into tok:*")]
    said = hint(explanation(sharpen, terms=terms, notes=notes))
    assert said == (
        plain.replace("your sharpness symbol of the attention", "your sharpness symbol β")
        + ". This may follow from the failure of part (a), earlier in the circuit: fix that first"
        + ". Note: W_O1 writes into tok:*"
    )


def test_a_heads_matrices_take_the_answers_names_and_a_missing_one_is_a_given():
    wrong = WrongKey(0, 1.5, 1, 0.5, (("cos/sin:*", 1.0),), (), None, "signs", "cos/sin:*")
    terms = PuzzleTerms({(1, 0, "W_Q"): "W_Q_b"}, {}, frozenset({"W_Q_b"}), {})
    assert hint(explanation(wrong, terms=terms)) == (
        "attention went to the wrong position: key 0 scores 1.5 against 0.5 for the target key 1; of the directions "
        "W_K (a given) reads, cos/sin:* favour key 0 by 1: look at the signs and sizes of W_Q_b's and W_K (a given)'s "
        "entries on cos/sin"
    )
    assert "W_Q_b" not in hint(explanation(wrong))  # without the puzzle's names: the roles as written


def test_one_other_key_is_worded_in_the_singular():
    from circuits.explain.values import NotSharp

    def said(others):
        return words(NotSharp((0, 0), ("<bos>", "0"), 1, (0,), 3.0, 0.953, others, ScaleBy(2.3, 2)))

    assert "because 1 other key shares the softmax" in said(1)
    assert "because 2 other keys share the softmax" in said(2)


def test_a_hint_ending_in_a_question_gets_the_earlier_failure_note_without_a_stray_full_stop():
    """A blind trial read "which of this token's directions should it read?. This may follow …" (29)."""
    note = EarlierFailure("(a) the head attends to BOS")
    asked = noted(note, "Look at W_Q: which of this token's directions should it read?")
    assert "read? This may follow from the failure of part (a), earlier in the circuit" in asked and "?." not in asked
    said = noted(note, "look at W_Q.")
    assert said.startswith("look at W_Q. This may follow") and ".." not in said


def test_a_tie_names_only_the_directions_the_puzzle_lets_the_keys_read():
    """Keys 0 and 1 differ in both position pairs; the puzzle lets head 1.0's W_K read pair 0 only: the hint names
    that pair, not "those directions" (which would send the learner to pair 1); where it may read none of them, it
    says what must change instead."""
    from circuits.explain.scores import Differs
    from circuits.explain.terms import saying

    every = ("tok:a", "cos:0", "sin:0", "cos:1", "sin:1")
    tie = Differs(0, 1, ("cos/sin:*",), (), ("a", "a"), every[1:], every, (1, 0))
    heads = {(1, 0, "W_Q"): "W_Q1", (1, 0, "W_K"): "W_K1"}

    def said(reads):
        with saying(PuzzleTerms(heads, {}, frozenset({"W_Q1", "W_K1"}), {}, reads), (1, 0), None):
            return words(tie)

    assert said(None).endswith(
        "W_Q1 and W_K1 — reading those directions would make key 0 'a' score higher than key 1 'a'"
    )
    assert said({"head 1.0 W_K": ["cos:0", "sin:0"]}).endswith(
        "W_Q1 and W_K1 — reading cos:0, sin:0 would make key 0 'a' score higher than key 1 'a'"
    )
    assert said({"head 1.0 W_K": ["cos:*", "sin:*"]}).endswith(
        "reading those directions would make key 0 'a' score higher than key 1 'a'"
    )
    assert said({"head 1.0 W_K": ["tok:*"]}) == (
        "Their residuals differ only in cos/sin:*, which the puzzle does not let W_K1 read: what is written into "
        "them before this layer must differ in what it reads"
    )


def test_a_cancelled_sharpness_is_said_in_the_factor_or_as_a_note():
    """Where the hint names the factor its scores need, the note replaces its "(raise … by that much)"; where it names
    none, the note follows it."""
    from circuits.explain.sharpening import NotAScale

    why = NotAScale("W_K divides by s (entry [0, a] = 1/s): every score of head 1.0 stays the same as s grows")
    said = hint(explanation(Sharpen((1, 0), 1, 0.25, ScaleBy(2.0, 3)), notes=[why]))
    assert said.endswith(
        "the scores need ×2, and raising your sharpness symbol of the attention does not raise them: " + why.detail
    )
    assert "by that much" not in said
    assert noted(why, "look at W_Q.") == "look at W_Q. Raising the sharpness will not fix this: " + why.detail
