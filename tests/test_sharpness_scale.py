"""The sharpness is a true scale (checking/scale.py): every score the learner writes is proportional to the puzzle's
sharpness symbol, and the answer holds up to 100× it. Each shortcut below passes every target (and the live-sharpness
check) with the guarantee switched off, and is refused with its one line with it on; every reference passes it."""

from __future__ import annotations

import copy
import re
import types

import numpy as np
import pytest
import sympy
from helpers import SOLUTIONS, wrong
from test_authoring import write
from test_misconceptions import both, key_line

from circuits import blank
from circuits.audit.run import rejects
from circuits.checking import guarantees, scale
from circuits.checking.answer_names import head_matrices
from circuits.checking.checker import context
from circuits.checking.evaluation import evaluate
from circuits.checking.loader import load
from circuits.checking.margins import scaled
from circuits.checking.pipeline import load as load_file
from circuits.checking.plan import Plan
from circuits.display import words
from circuits.explain import check
from circuits.model.basis import NamedMatrix
from circuits.model.weights import powers

s, γ = sympy.symbols("s γ")
NOT_A_SCALE = "so s is not a scale — write s into the scores once, as a factor"
EVERY_HEAD = "so s is not a scale — write s into the scores of every head you write, as one factor"


def entries(name: str, change):
    """An edit that rewrites every non-zero entry x of the labelled matrix `name` as change(row, x)."""

    def edit(a, g):
        W = getattr(a, name)
        values = W.values.copy()
        for (r, c), x in np.ndenumerate(values):
            if x != 0:
                values[r, c] = change(r, x)
        setattr(a, name, NamedMatrix(W.rows, W.cols, values))

    return edit


def bound(value):
    """An entry with s bound to `value`: the scale baked into a number."""
    return lambda r, x: sympy.sympify(x).subs(s, value)


# ── the shortcuts ─────────────────────────────────────────────────────────────────────────
SHORTCUTS = {
    # (a) the scale baked into the numbers, s on one row: 15 says "s can shrink to 0.22×" and fails at s = 60
    "15 baked, s on the start row only": (
        "15_q_composition",
        entries("W_Q1", lambda r, x: 20 if r < 4 else x),
        f"W_Q1 has 20 at [0, first:a], without s (as [4, first:a] has it): those scores of head 1.0 stay the same "
        f"as s grows, {NOT_A_SCALE}",
    ),
    # (b) s·A against B/s: s cancels in every score, and an answer with 1/s cannot be built at s = 0
    "09 s·A against 20·B/s": (
        "09_duplicate_token",
        entries("W_K", lambda r, x: x * 20 / s),
        f"W_K divides by s (entry [0, tok:a] = 20/s): every score of head 0.0 stays the same as s grows, {NOT_A_SCALE}",
    ),
    "22 s·A against 5·B/s": (
        "22_recent_vowel",
        entries("W_K", lambda r, x: x * 5 / s),
        f"W_K divides by s (entry [0, vowel] = 100/s): every score of head 0.0 stays the same as s grows, "
        f"{NOT_A_SCALE}",
    ),
    # (a) s on some heads only
    "21 head 1.0 baked, s on heads 0.0 and 2.0": (
        "21_ioi_mini",
        entries("W_Q1", bound(20)),
        f"head 1.0's scores do not grow with s (W_Q1 and W_K1 hold no s): its attention stays as sharp as its numbers "
        f"make it, {EVERY_HEAD}",
    ),
    "07 head 1.0 baked, s on head 0.0 only": (
        "07_induction_k_composition",
        entries("W_Q2", bound(30)),
        f"head 1.0's scores do not grow with s (W_Q2 and W_K2 hold no s): its attention stays as sharp as its numbers "
        f"make it, {EVERY_HEAD}",
    ),
    # s on both sides: the scores grow as s²
    "09 s·A against s·B/20": (
        "09_duplicate_token",
        entries("W_K", lambda r, x: x * s / 20),
        f"W_Q has s at [0, tok:a] and W_K has s/20 at [0, tok:a]: every score of head 0.0 grows as s², {NOT_A_SCALE}",
    ),
    # the attention baked, s moved into the readout: the reference writes its scores with s, so they must scale
    "08 attention baked, s moved into W_U": (
        "08_induction_repeated",
        both(entries("W_Q", bound(30)), entries("W_U", lambda r, x: x * s / 30)),
        f"head 1.0's scores do not grow with s (W_Q and W_K hold no s): its attention stays as sharp as its numbers "
        f"make it, {EVERY_HEAD}",
    ),
    # proportional scores that lean on s staying small: BOS a hair above a match, a tie only while s is small
    "18 BOS a hair above a match": (
        "18_histogram",
        lambda a, g: setattr(a, "W_Q", [*a.W_Q[:4], [x * (1 + sympy.Rational(1, 10**5)) for x in a.W_Q[4]]]),
        'at s = 2000 (100× yours) target "head 0.0\'s result is 1/(n + 1), n = the count of the curren…" fails on '
        "'a' (the shortest input it fails on), so s is not a scale that only sharpens: what your answer gets right "
        "must not depend on s staying small",
    ),
    # a prediction's sharpness: W_U baked, s on the row of one answer only
    "26 W_U baked, s on row 4 only": (
        "26_modular_addition",
        lambda a, g: setattr(a, "W_U", [[sympy.sympify(x).subs(s, 10) for x in row] for row in a.W_U[:4]] + a.W_U[4:]),
        'W_U has 10 at [0, 5], without s (as [4, 5] has it): at s = 30 (3× yours) target "after every pair a, b '
        "the answer (a + b) mod 5 has log-prob…\" fails on '00', so s is not a scale — write it into all of W_U",
    ),
}


@pytest.mark.parametrize("case", SHORTCUTS)
def test_a_sharpness_that_is_not_a_scale_is_refused_with_its_line(reference, case):
    stem, edit, line = SHORTCUTS[case]
    result = check(wrong(reference(stem), edit), n_random=2000, margins=False)
    assert result.status == "error", [(t.label, t.status) for t in result.targets]
    assert line in key_line(result)


@pytest.mark.parametrize("case", SHORTCUTS)
def test_each_shortcut_passes_every_target_without_the_guarantee(reference, case, monkeypatch):
    """What the guarantee adds: switched off, each shortcut is certified solved (a live sharpness and all)."""
    stem, edit, _ = SHORTCUTS[case]
    monkeypatch.setattr(scale, "not_a_scale", lambda *args, **kwargs: None)
    assert check(wrong(reference(stem), edit), n_random=2000, margins=False).status == "solved"


# ── the references ────────────────────────────────────────────────────────────────────────
SHARP = [p.stem for p in sorted(SOLUTIONS.glob("[0-9][0-9]_*.py")) if load(p).puzzle.sharpness]
ATTENTION = {
    "01_consonants": ["W_Q"],
    "02_first_consonant": ["W_Q"],
    "11_copying_head": [],
    "12_successor_head": [],
    "26_modular_addition": [],
    "27_split_copy": [],
}  # every other one writes its scores with s


def probe_of(attempt, model):
    return Plan.of(attempt.puzzle, 2000, guarantees.spanning(attempt.puzzle.inputs, model)).probe


@pytest.mark.parametrize("stem", SHARP)
def test_every_reference_sharpness_is_a_true_scale(reference, stem):
    attempt = reference(stem)
    with context():
        model = attempt.model()
        heads = head_matrices(attempt, model)
        assert scale.attention_names(attempt, heads) == ATTENTION.get(stem, ["s"])  # γ is the prediction's
        assert guarantees.reference_facts(attempt).attention == tuple(ATTENTION.get(stem, ["s"]))
        names = scale.attention_names(attempt, heads)
        assert scale.homogeneity(attempt, model, heads, names) is None
        assert scale.proportional(model, scale.at_factors(attempt), heads, names) is None
        assert scale.not_a_scale(attempt, model, probe_of(attempt, model), evaluate, names) is None


def test_the_check_of_a_reference_is_unchanged(reference):
    assert len(SHARP) == 23
    result = check(reference("14_skip_trigram"), n_random=2000)
    assert result.status == "solved" and words.margins(result.margins).endswith("s and γ can shrink to 0.45×")


# ── the two paths: exact (sympy) and numeric ──────────────────────────────────────────────
def test_the_exact_path_splits_each_entry_by_its_power_of_s():
    split = powers([[s / 2 + 3, 0], [20 / s, sympy.sqrt(s)]], ["s"], {"s": 20})
    assert sorted(split.parts) == [-1.0, 0.0, 0.5, 1.0] and split.stray is None
    assert split.parts[1.0][0, 0] == 0.5 and split.parts[0.0][0, 0] == 3 and split.parts[-1.0][1, 0] == 20
    assert powers([[1, sympy.exp(s)]], ["s"], {"s": 20}).stray == (0, 1)
    assert list(powers([[1, 2]], ["s"]).parts) == [0.0]  # plain numbers: one part, no sympy
    assert list(powers([[s * γ]], ["s", "γ"], {"s": 2, "γ": 3}).parts) == [2.0]  # names scaled together


def test_both_paths_see_s_cancel_and_a_reference_scale(reference):
    """On 09 with W_K = 20·B/s: the exact path names the entry, the numeric one the product; the reference passes
    both."""
    cancelled = wrong(reference("09_duplicate_token"), SHORTCUTS["09 s·A against 20·B/s"][1])
    for attempt, fails in ((cancelled, True), (reference("09_duplicate_token"), False)):
        model = attempt.model()
        heads = head_matrices(attempt, model)
        exact = scale.homogeneity(attempt, model, heads, ["s"])
        numeric = scale.proportional(model, scale.at_factors(attempt), heads, ["s"])
        assert (exact is not None, numeric is not None) == (fails, fails)
    assert exact is None and numeric is None
    model = cancelled.model()
    assert scale.proportional(model, scale.at_factors(cancelled), head_matrices(cancelled, model), ["s"]) == (
        "head 0.0's scores do not grow in proportion to s: W_Qᵀ W_K at [tok:a, tok:a] is 20 with yours and 20 at 3× "
        f"(not 60), {NOT_A_SCALE}"
    )


def test_the_numeric_path_catches_what_the_entries_do_not_show(tmp_path):
    """A query bias the learner writes without s (puzzle 92, written for this test): W_Q and W_K scale, b_Q^T W_K
    does not. Only the model built at 3× shows it."""
    text = write(tmp_path).read_text()
    text = text.replace('answer=["W_Q", "W_K", "W_V"]', 'answer=["W_Q", "W_K", "W_V", "b_Q"]')
    text = text.replace(
        "Head(W_Q=answer.W_Q, W_K=answer.W_K, W_V=answer.W_V)",
        "Head(W_Q=answer.W_Q, W_K=answer.W_K, W_V=answer.W_V, b_Q=answer.b_Q)",
    )
    path = tmp_path / "92_first.py"
    path.write_text(text + "b_Q = [1]\n")
    result = check(load_file(path), n_random=300, margins=False)
    assert result.status == "error"
    assert words.said(result).endswith(
        f"head 0.0's scores do not grow in proportion to s: b_Qᵀ W_K at first is 1 with yours and 1 at 3× (not 3), "
        f"{NOT_A_SCALE}"
    )
    path.write_text(text + "b_Q = [s / 10]\n")
    assert check(load_file(path), n_random=300, margins=False).status == "solved"


def test_a_given_head_and_a_head_with_no_score_are_not_the_learners_to_scale(reference):
    """15's head 0.0 has a given pattern; 21 with head 1.0's scores all zero (it fails its target, but nothing in
    it is there to scale)."""
    attempt = reference("15_q_composition")
    model = attempt.model()
    assert scale.homogeneity(attempt, model, head_matrices(attempt, model), ["s"]) is None
    g = reference("21_ioi_mini").puzzle.build.__globals__
    silent = wrong(reference("21_ioi_mini"), lambda a, _: setattr(a, "W_Q1", blank(1, g["resid"])))
    model = silent.model()
    assert scale.homogeneity(silent, model, head_matrices(silent, model), ["s"]) is None


def test_the_range_alone_refuses_15s_baked_answer(reference):
    """The same answer as the homogeneity case: it holds at s = 20 and fails at 3× (s = 60)."""
    attempt = wrong(reference("15_q_composition"), SHORTCUTS["15 baked, s on the start row only"][1])
    with context():
        said = scale.holds_range(attempt, scale.at_factors(attempt), probe_of(attempt, attempt.model()), evaluate)
    assert said.startswith(  # the entry that lacks s first (as homogeneity names it), then what fails at 3×
        'W_Q1 has 20 at [0, first:a], without s (as [4, first:a] has it): at s = 60 (3× yours) target "(b) head '
        "1.0 puts ≥ 0.9 on the later repeats of the first t…\" fails on 'db'"
    )  # key 0 scores 20 − 60/2 < key 1's 0


# ── the margins and the mutation audit ────────────────────────────────────────────────────
def test_margins_scale_every_sharpness_name_together():
    answer = types.SimpleNamespace(W_Q=np.ones((1, 2)), params={"s": 20, "γ": 10})
    assert scaled(answer, ["s", "γ"], 2).params == {"s": 40, "γ": 20}
    assert (scaled(answer, ["W_Q"], 3).W_Q == 3).all() and answer.params == {"s": 20, "γ": 10}


def test_the_audits_fast_check_holds_a_mutant_to_a_true_scale(reference):
    attempt = reference("09_duplicate_token")
    cancelled = wrong(attempt, SHORTCUTS["09 s·A against 20·B/s"][1])
    assert rejects(attempt, cancelled.answer)
    assert not rejects(attempt, copy.copy(attempt.answer))


def test_a_course_reference_that_does_not_build_leaves_the_answers_own_names_to_decide(tmp_path, monkeypatch):
    """A puzzle that declares its writes never needed its reference's model; one that does not build (an author's
    answer in the making) must not turn a learner's passing answer into an error now that its sharpness names are
    read."""
    from test_guarantees import writer

    monkeypatch.chdir(tmp_path)
    declared = 'writes={"head 0.0": ["out"]},'
    writer(tmp_path / "solutions", declared, "W_O = blank(resid, 2)")  # W_O needs (6, 1)
    mine = writer(tmp_path / "puzzles", declared)
    assert guarantees.reference_attention(load_file(mine)) == ()
    assert check(load_file(mine), n_random=200, margins=False).status == "solved"


def test_a_failing_hint_never_says_raise_s_where_s_cancels(reference):
    """09 with W_K = B/s (s cancels, and the scores are too flat): the hint gives the factor the scores need and says
    why raising s will not give it, naming the entry; the same answer with W_K = B says to raise s."""
    from circuits.explain import hint

    def first_hint(attempt):
        result = check(attempt, n_random=300, property_examples=20, margins=False)
        assert result.status == "failing"
        return " ".join(hint(t.failure.explanation) for t in result.targets if t.status == "failed")

    said = first_hint(wrong(reference("09_duplicate_token"), entries("W_K", lambda r, x: x / s)))
    assert "does not raise them: W_K divides by s (entry [0, tok:a] = 1/s)" in said, said
    assert "by that much" not in said and "raise s ×" not in said, said
    flat = wrong(reference("09_duplicate_token"), lambda a, g: setattr(a, "params", {s: 1}))
    assert "does not raise them" not in first_hint(flat)
    assert re.search(r"raise (your sharpness symbol )?s", first_hint(flat))
