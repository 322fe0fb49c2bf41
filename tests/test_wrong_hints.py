"""Hints on composed circuits name the real cause, in the puzzle's own matrix names, through the real entry points."""

import re

import numpy as np
from helpers import ROOT, check_with, hint_of, only_failure, solution, summary_of
from test_wrong_induction import failing

from circuits.cli import main


def edited_copy(tmp_path, stem: str, old: str, new: str):
    """solutions/<stem>.py with one line of the answer edited, as a learner's file."""
    text = (ROOT / "solutions" / f"{stem}.py").read_text(encoding="utf-8")
    answer = text.index("# ── your answer")
    assert old in text[answer:]
    path = tmp_path / f"{stem}.py"
    path.write_text(text[:answer] + text[answer:].replace(old, new), encoding="utf-8")
    return path


def test_07_keys_reading_what_nothing_writes_say_so_through_the_cli(tmp_path, capsys):
    path = edited_copy(tmp_path, "07_induction_k_composition", 'W_O1[f"prev:{t}", k] = 1', 'W_O1[f"tok:{t}", k] = 1')
    assert main(["check", str(path), "--no-margins"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "head 1.0's keys read prev:*, which nothing writes before layer 1" in out
    assert "(the embedding, head 0.0 write only tok:*, bos, cos/sin:* at this input)" in out
    assert "Look at W_K2 of head 1.0, or at W_O1 of head 0.0" in out
    assert "rotation" not in out and "wrong position" not in out


def test_06_beta_too_large_blames_the_position_weight_and_later_parts_point_back():
    failed = failing("06_induction_pointer", params={"s": 60, "β": 3})
    d = next(t for label, t in failed.items() if label.startswith("(d)")).failure.explanation
    assert "the position term outweighs the tok:* term" in hint_of(d) and "W_Q_d's entries on cos/sin" in hint_of(d)
    assert "rotation" not in hint_of(d)
    for label, t in failed.items():
        if label.startswith(("(e)", "(f)")) and t.kind == "behaviour":
            assert "This may follow from the failure of part (d), earlier in the circuit" in hint_of(
                t.failure.explanation
            )


def test_06_pointer_failing_only_because_the_copy_is_wrong_points_at_e():
    def swapped(W):
        W.values[[0, 1]] = W.values[[1, 0]]  # v:0 gets sin:0 and v:1 gets cos:0
        return W

    failed = failing("06_induction_pointer", W_V_e=swapped)
    failed = {label: t for label, t in failed.items() if t.kind == "behaviour"}  # (f)'s mechanism fails too
    assert [label[:3] for label in failed] == ["(e)", "(f)"]  # the earliest in the circuit first
    e, f = (t.failure.explanation for t in failed.values())
    assert "look at W_V_e and W_O_e" in hint_of(e) and "may follow" not in hint_of(e)
    assert "This may follow from the failure of part (e), earlier in the circuit: fix that first." in hint_of(f)


def test_06_heads_of_one_layer_do_not_point_at_each_other():
    failed = failing("06_induction_pointer", params={"s": 3, "β": 0.33})
    b = next(t for label, t in failed.items() if label.startswith("(b)")).failure.explanation
    assert "may follow" not in hint_of(b)  # (b) reads nothing (a) writes


def test_06_head_0_3_writing_into_position_fails_e():
    def writes_cos1(W):
        W["cos:1", 6] = 1  # v:6's copy also lands in cos:1, which head 1.0's keys read
        return W

    failed = failing("06_induction_pointer", W_O_e=writes_cos1)
    assert "(e) head 0.3 writes nothing outside v:0 … v:7 (±0.05)" in failed


def test_05_a_head_that_writes_the_wrong_value_is_told_so():
    attempt = solution("05_virtual_head")
    W_V2 = np.array(attempt.answer.W_V2).copy()
    W_V2[3] = 0
    W_V2[3, 0] = 1
    f = next(t for t in check_with("05_virtual_head", W_V2=W_V2).targets if t.kind == "behaviour").failure
    assert "head 1.0 writes it, but the wrong value" in hint_of(f.explanation)
    assert "W_V2 of head 1.0" in hint_of(f.explanation) and "its W_O2" in hint_of(f.explanation)
    assert "does not" not in hint_of(f.explanation)


def test_01_to_03_hints_never_name_a_W_O_the_puzzle_does_not_have():
    for stem, answer in (
        ("01_consonants", {"W_V": [[0, 1], [1, 0]]}),
        ("02_first_consonant", {"W_V": [[1, 0, 0], [0, 0, 0]]}),
        ("03_uniform", {"W_V": [[0, 1]]}),
    ):
        hint = hint_of(only_failure(check_with(stem, **answer)).failure.explanation)
        assert "look at W_V" in hint and "W_O" not in hint, hint


def test_not_sharp_enough_says_by_how_much_and_that_factor_is_enough():
    """The factor is sized for every input the check tries (every length it promises), not only the shrunk one
    the report shows: following it once passes, and much less does not."""
    failed = failing("07_induction_k_composition", params={"s": 2})
    f = next(t for label, t in failed.items() if label.startswith("head 0.0"))
    said = hint_of(f.failure.explanation)
    factor = float(
        re.search(r"the scores need ×([\d.]+) \(raise your sharpness symbol s by that much\)", said).group(1)
    )
    assert 1 < factor < 4, said
    assert "every length up to" in said
    for s, passes in ((2 * factor, True), (2 * factor * 0.95, False)):  # the factor holds every target, its own
        result = check_with("07_induction_k_composition", params={"s": s})  # and the mechanism's (patched inputs)
        assert (result.status == "solved") == passes, (s, [(t.label, t.status) for t in result.targets])


def test_03_prints_enough_digits_to_show_the_difference():
    f = only_failure(check_with("03_uniform", W_K=[[0, 0.0001]], W_Q=[[1, 1]])).failure
    assert "the expected head 0.0 z (A·V) is [0.5], yours is [0.499975]" in summary_of(f.explanation)
