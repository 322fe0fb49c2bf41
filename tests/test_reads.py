"""Declared reads (checking/guarantees.py): each head's W_Q, W_K and W_V, each MLP's W_in and W_U read only the
residual directions the puzzle lets them (`reads=`, or else the direction families its reference reads). Each
shortcut the issue found through a direction the mechanism does not use is refused here, in one line that names
the matrix, the direction and the entry; reads that cannot change anything (a query row meeting no key row) are
not reads."""

from __future__ import annotations

import copy
import types

import numpy as np
import pytest
import sympy
from helpers import solution

from circuits import blank
from circuits.checking import guarantees
from circuits.checking.pipeline import load
from circuits.display import words
from circuits.errors import CircuitError
from circuits.explain import check

s = sympy.Symbol("s")
NAMES = ["Ann", "Bob", "Cat", "Dan"]


def edited(stem: str, edit, mechanisms: bool = False):
    """The reference attempt of `stem` with `edit(answer)` applied to a deep copy of its answer; without the
    puzzle's mechanism targets (Depends), unless asked, so that what refuses it is the reads alone."""
    import dataclasses

    attempt = solution(stem)
    if not mechanisms:
        kept = [t for t in attempt.puzzle.targets if t.kind != "mechanism"]
        attempt = copy.copy(attempt)
        attempt.puzzle = dataclasses.replace(attempt.puzzle, targets=kept)
    answer = types.SimpleNamespace(**{k: copy.deepcopy(v) for k, v in vars(attempt.answer).items()})
    edit(answer)
    trial = copy.copy(attempt)
    trial.answer = answer
    return trial


def refused(stem: str, edit) -> str:
    result = check(edited(stem, edit), n_random=300, margins=False)
    assert result.status == "error", [(t.label, t.status) for t in result.targets]
    return words.said(result)


def said_of_first_failure(result) -> str:
    from helpers import hint_of

    failed = next(t for t in result.targets if t.status == "failed")
    return hint_of(failed.failure.explanation)


# --- the shortcuts the issue found -------------------------------------------------------------------------------
def _latest_name(a):
    """21's S-inhibition head by position: its key reads names and a ramp over positions, never dup."""
    a.W_K1[0, "dup"] = 0
    for n in NAMES:
        a.W_K1[0, f"tok:{n}"] = 1
    for i in range(12):
        a.W_K1[0, f"pos:{i}"] = i / 10
    a.params = {**a.params, "s": 40}


def test_21_the_latest_name_by_position_passes_every_target_but_is_refused_for_what_it_reads():
    trial = edited("21_ioi_mini", _latest_name)
    behaviour = check(trial, n_random=300, margins=False)
    assert behaviour.status == "error"
    assert all(t.status == "error" for t in behaviour.targets)  # every target passed: only the reads refuse it
    assert words.said(behaviour).endswith(
        "W_K1 reads tok:Ann (W_K1[0, tok:Ann] = 1) (and tok:Bob, tok:Cat …), but this puzzle lets it read only dup: "
        "that column of W_K1 must be 0"
    )
    without = dataclass_replace(trial, reads={"head 1.0 W_K": ["*"]})  # the reads opened: behaviour alone passes it
    assert check(without, n_random=300, margins=False).status == "solved"
    mechanism = check(edited("21_ioi_mini", _latest_name, mechanisms=True), n_random=300, margins=False)
    assert mechanism.status == "failing"  # and its mechanism target, by intervention, fails it too
    assert [t.kind for t in mechanism.targets if t.status == "failed"] == ["mechanism"]


def dataclass_replace(attempt, **changes):
    import dataclasses

    trial = copy.copy(attempt)
    trial.puzzle = dataclasses.replace(attempt.puzzle, **changes)
    return trial


def test_13_a_query_reading_the_current_token_instead_of_the_prediction_is_refused():
    def current_token(a):
        for c in list(a.W_Q.cols.labels):
            if c.startswith("pred:"):
                a.W_Q[0, "tok:" + c[5:]] = s / 4  # the current token, beside the prediction

    assert "W_Q reads tok:" in refused("13_copy_suppression", current_token)


def test_07_keys_that_also_read_bos_or_a_position_are_refused():
    def bos(a):
        a.W_K2[0, "bos"] = 0.1

    assert refused("07_induction_k_composition", bos).endswith(
        "W_K2 reads bos (W_K2[0, bos] = 0.1), but this puzzle lets it read only prev:*: that column of W_K2 must be 0"
    )

    def position(a):
        a.W_K2[1, "cos:0"] = 0.05

    assert "W_K2 reads cos:0 (W_K2[1, cos:0] = 0.05)" in refused("07_induction_k_composition", position)


def test_15_a_query_that_also_reads_start_is_refused():
    def start(a):
        a.W_Q1[4, "start"] = s / 4

    assert "W_Q1 reads start" in refused("15_q_composition", start)


def test_06_b_reading_the_smaller_position_pairs_is_refused():
    def small_pairs(a):
        a.W_Q_b[0, "cos:2"] = s / 100  # a third pair, a little: its own position still wins

    said = refused("06_induction_pointer", small_pairs)
    assert "W_Q_b reads cos:2" in said and "read only cos:0, sin:0, cos:1, sin:1" in said


def test_08_a_bigram_bias_in_W_U_is_refused():
    def bigram(a):
        a.W_U["b", "prev:a"] = 0.5

    assert refused("08_induction_repeated", bigram).endswith(
        "W_U reads prev:a (W_U[b, prev:a] = 0.5), but this puzzle lets it read only out:*: that column of W_U must be 0"
    )


def test_a_failing_answer_that_also_reads_outside_says_so_first_in_its_hint():
    """The failing head's own forbidden read leads its hint (issue 37: it is the likelier fix)."""

    def wrong_and_stray(a):
        a.W_K2[0, "bos"] = 30.0  # so much that every query looks at BOS: a failure, and a stray read

    result = check(edited("07_induction_k_composition", wrong_and_stray), n_random=300, margins=False)
    assert result.status == "failing"
    assert said_of_first_failure(result).startswith("W_K2 reads bos")


# --- what is not a read ------------------------------------------------------------------------------------------
def test_a_query_row_that_meets_no_key_row_reads_nothing():
    """Only W_Q^T W_K reaches a score: a W_Q column paired with a zero W_K row cannot change any attention."""

    def idle_row(a):
        a.W_Q2 = blank(5, a.W_Q2.cols)
        a.W_K2 = blank(5, a.W_K2.cols)
        for k, t in enumerate("abcd"):
            a.W_Q2[k, f"tok:{t}"] = s
            a.W_K2[k, f"prev:{t}"] = 1
        a.W_Q2[4, "bos"] = 3 * s  # row 4 of W_K2 is 0: this column meets nothing

    assert check(edited("07_induction_k_composition", idle_row), n_random=300, margins=False).status == "solved"


def test_an_mlp_unit_that_writes_nothing_reads_nothing():
    attempt = solution("16_xor_mlp")
    model = attempt.model()
    mlp = next(r for r in guarantees.readers(model) if r.name == "mlp 0 W_in")
    assert set(guarantees.read(mlp, model.residual.labels)) == {"x", "y", "one"}


def test_the_query_and_key_reads_come_from_the_qk_circuit():
    W_Q = np.array([[1.0, 0, 0], [0, 2, 0]])  # row 1 reads direction 1 but meets no key row
    W_K = np.array([[0, 0, 1.0], [0, 0, 0]])
    head = types.SimpleNamespace(
        name="head 0.0", W_Q=W_Q, W_K=W_K, W_V=np.zeros((1, 3)), W_O=np.zeros((3, 1)), b_Q=np.array([0, 5.0])
    )
    q, k, v = guarantees._head_readers(head)
    labels = ["a", "b", "c"]
    assert list(guarantees.read(q, labels)) == ["a"]
    assert list(guarantees.read(k, labels)) == ["c"]  # b_Q meets W_K's zero row 1: still only c
    assert guarantees.read(v, labels) == {}


# --- the declaration --------------------------------------------------------------------------------------------
def test_every_shipped_reference_passes_its_own_reads():
    from helpers import STEMS

    for stem in STEMS:
        attempt = solution(stem)
        if attempt.puzzle.build is None:
            continue
        reads = guarantees.reads_for(attempt)
        assert reads is not None, stem
        guarantees.check_reads(attempt.model(), reads, stem)  # raises on a read outside


def test_a_challenge_whose_mechanism_is_yours_declares_no_read():
    assert solution("23_look_back").puzzle.reads == {}
    assert guarantees.reads_for(solution("23_look_back")) == {}
    assert guarantees.reads_for(solution("21_ioi_mini"))["head 1.0 W_K"] == ["dup"]


@pytest.mark.parametrize(
    "bad, said",
    [
        (
            'reads={"head 1.0": ["x"]},',
            r'reads: \'head 1.0\' is not "head L.H W_Q" \(or W_K, W_V\), "mlp L W_in" or "W_U"',
        ),
        ('reads={"mlp 0 W_out": ["x"]},', r"reads: 'mlp 0 W_out' is not"),
        ('reads={"head 0.0 W_V": "out"},', r"reads\['head 0.0 W_V'\]: needs a list of direction names or patterns"),
        ('reads=["x"],', r"reads: found list, needs a dict such as"),
    ],
)
def test_a_read_declaration_is_checked_when_the_puzzle_loads(tmp_path, bad, said):
    from test_guarantees import writer

    with pytest.raises(CircuitError, match=said):
        load(writer(tmp_path, bad))


def test_a_declared_read_refuses_a_course_puzzles_value_reading_outside(tmp_path):
    from test_guarantees import writer

    declared = 'reads={"head 0.0 W_V": ["tok:a"]},'
    assert check(load(writer(tmp_path, declared)), n_random=200, margins=False).status == "solved"
    result = check(load(writer(tmp_path, declared, 'W_V[0, "tok:b"] = 1e-6')), n_random=200, margins=False)
    assert result.status == "failing" or words.said(result).endswith(
        "W_V reads tok:b (W_V[0, tok:b] = 1e-06), but this puzzle lets it read only tok:a: that column of W_V must be 0"
    )
    assert "W_V reads tok:b" in (words.said(result) or said_of_first_failure(result))


def test_a_mechanism_failure_says_the_stray_read_after_its_finding():
    """The 21 shortcut fails its mechanism target first (a finding, no hint): the stray read follows it as a note,
    in the text report and in JSON."""
    from circuits.display.json import result_json
    from circuits.display.render import to_text
    from circuits.display.report import target_report

    result = check(edited("21_ioi_mini", _latest_name, mechanisms=True), n_random=300, margins=False)
    failed = next(t for t in result.targets if t.status == "failed")
    text = " ".join(to_text(target_report(failed), width=200).split())
    assert "does not depend on dup" in text and "Note: W_K1 reads tok:Ann (W_K1[0, tok:Ann] = 1)" in text
    row = next(r for r in result_json(result)["targets"] if r["status"] == "failed")
    assert row["failure"]["hint"].startswith("Note: W_K1 reads tok:Ann")
