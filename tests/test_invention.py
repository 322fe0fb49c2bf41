"""Puzzles that ask for invention (issue 28): the challenges 22–25 and 27–29 and the capstone 26 reject the
misconceptions a learner brings (wrong algorithm, positional shortcut, dead sharpness, write leak), each with a report
that points at it; their worked numbers are true; and every puzzle's level (difficulty, minutes) is validated, shipped
and shown."""

import re
import tomllib

import numpy as np
import pytest
import sympy
from helpers import ROOT, SOLUTIONS, STEMS, check_with, hint_of, only_failure, shipped, solution, summary_of

from circuits.checking import curriculum
from circuits.checking.loader import load
from circuits.display import words
from circuits.errors import CircuitError
from circuits.explain import check

NEW = ["22_recent_vowel", "23_look_back", "24_other_kind", "25_equal_mlp", "26_modular_addition"]
NEW += ["27_split_copy", "28_same_predecessor", "29_smaller_by_value"]  # the OV, composition and RASP challenges
s = sympy.Symbol("s")


def namespace(stem: str) -> dict:
    """The shipped reference file's module namespace (its givens and its answer)."""
    space: dict = {}
    exec(compile((SOLUTIONS / f"{stem}.py").read_text(encoding="utf-8"), stem, "exec"), space)
    return space


def refused(result, *said: str) -> None:
    """The answer is refused by a guarantee, with one message that says each of `said`."""
    assert result.status == "error", [(t.label, t.status) for t in result.targets]
    assert all(x in words.said(result) for x in said), words.said(result)


@pytest.mark.parametrize("stem", NEW)
def test_the_reference_answer_passes(stem, reference_result):
    result = reference_result(stem)  # the session's one check of each reference (tests/conftest.py)
    assert result.status == "solved", [(t.label, t.status, words.said(t)) for t in result.targets]


@pytest.mark.parametrize("stem", NEW)
def test_the_worksheet_states_no_line_of_the_answer(stem):
    text = (SOLUTIONS / f"{stem}.py").read_text(encoding="utf-8")
    doc = text[: text.index('"""', 3)]
    answer = text[text.index("# ── your answer") : text.index("# ── stub")]
    lines = [ln.strip() for ln in answer.splitlines() if "=" in ln and not ln.lstrip().startswith("#")]
    assert lines and not [ln for ln in lines if ln in doc]
    assert "hints" not in doc.lower()


# --- 22: the most recent vowel ---------------------------------------------------------------------------------
def _vowel_answer(bonus=20, ramp=1, sharp=s):
    ns = namespace("22_recent_vowel")
    resid = ns["resid"]
    W_Q, W_K = ns["blank"](1, resid), ns["blank"](1, resid)
    W_Q[0, "vowel"] = W_Q[0, "consonant"] = sharp
    W_K[0, "vowel"] = bonus
    for i in range(ns["N_CTX"]):
        W_K[0, f"pos:{i}"] = ramp * i
    return dict(W_Q=W_Q, W_K=W_K)


def test_22_the_worked_behaviour_is_what_the_spec_and_the_reference_do():
    ns = namespace("22_recent_vowel")
    assert ns["latest_vowel"](list("bacedu")) == [None, 1, 1, 3, 3, 5]
    assert "    key      —     1     1     3     3     5" in ns["__doc__"]
    pattern = solution("22_recent_vowel").model().run(["bacedu"]).pattern(0, 0)[0]
    assert [int(np.argmax(row)) for row in pattern[1:]] == [1, 1, 3, 3, 5]


def test_22_content_alone_splits_between_the_vowels():
    f = only_failure(check_with("22_recent_vowel", **_vowel_answer(ramp=0))).failure
    assert f.tokens == ["a", "a"]  # two vowels tie
    assert "target is key 1 'a', but head 0.0 puts only 0.500 there" in summary_of(f.explanation)


def test_22_recency_alone_attends_to_the_latest_letter():
    f = only_failure(check_with("22_recent_vowel", **_vowel_answer(bonus=0))).failure
    assert f.tokens == ["a", "b"]  # the consonant after the vowel wins
    assert "its largest weight, 0.993, is on key 1 'b'" in summary_of(f.explanation)
    assert "pos:* favour key 1 by 5" in hint_of(f.explanation)


def test_22_a_vowel_bonus_below_the_position_spread_loses_to_a_late_consonant():
    f = only_failure(check_with("22_recent_vowel", **_vowel_answer(bonus=5))).failure
    vowel = max(i for i, t in enumerate(f.tokens) if t in "aeiou")
    assert len(f.tokens) - 1 - vowel >= 5  # a consonant 5 places later ties with the vowel
    assert "puts only 0.498 there" in summary_of(f.explanation)  # the vowel and the consonant share the attention
    assert "indistinguishable keys" in hint_of(f.explanation) and "no scale can separate them" in hint_of(f.explanation)


def test_22_the_earliest_vowel_is_the_wrong_one():
    f = only_failure(check_with("22_recent_vowel", **_vowel_answer(bonus=40, ramp=-1))).failure
    assert f.tokens == ["a", "a"]
    assert "the target is key 1 'a'" in summary_of(f.explanation) and "is on key 0 'a'" in summary_of(f.explanation)


def test_22_a_sharpness_baked_into_the_numbers_is_refused():
    refused(check_with("22_recent_vowel", **_vowel_answer(sharp=5)), "declare the sharpness as a sympy symbol s")


def _parked(answer, d: int, value=5):
    """The answer with its scale baked in (s = `value`) and s parked on a second query row that meets an all-zero
    key row."""
    W_Q = np.asarray(sympy.Matrix(answer["W_Q"].tolist()).subs(s, value), dtype=object)
    W_Q = np.vstack([W_Q, [s] + [0] * (d - 1)])
    W_K = np.vstack([np.asarray(answer["W_K"].tolist(), dtype=float), np.zeros(d)])
    return dict(W_Q=W_Q, W_K=W_K)


def test_22_a_sharpness_symbol_parked_on_a_dead_entry_is_refused():
    refused(
        check_with("22_recent_vowel", **_parked(_vowel_answer(), 18)),
        "with s at 0, so s does not control the attention the targets depend on",
    )


def test_22_too_little_sharpness_fails_on_a_close_earlier_vowel():
    f = only_failure(check_with("22_recent_vowel", params={"s": 1})).failure
    assert f.tokens == ["a", "a"] and "puts only 0.731 there" in summary_of(f.explanation)
    assert "attends most to the right key" in hint_of(f.explanation) and "your sharpness symbol" in hint_of(
        f.explanation
    )


# --- 23: look back as far as the token says -------------------------------------------------------------------
def _look_back(tilt=-1, curve=-0.5, sharp=s):
    """The reference's shape: key j gives (j, curve·j²), query i holding d gives s·(i + tilt·d, 1); with
    curve=None, the first row alone: s·(i + tilt·d)·j."""
    ns = namespace("23_look_back")
    resid, blank = ns["resid"], ns["blank"]
    rows = 1 if curve is None else 2
    W_Q, W_K = blank(rows, resid), blank(rows, resid)
    for i in range(ns["N_CTX"]):
        W_Q[0, f"pos:{i}"], W_K[0, f"pos:{i}"] = sharp * i, i
        if curve is not None:
            W_K[1, f"pos:{i}"] = curve * i * i
    for d in ns["DIGITS"]:
        W_Q[0, f"tok:{d}"] = tilt * sharp * int(d)
        if curve is not None:
            W_Q[1, f"tok:{d}"] = sharp
    return dict(W_Q=W_Q, W_K=W_K)


def _tent():
    """Another mechanism: a table, one row per key position (W_K the identity on pos:*). Query i's row j holds a
    bump that falls by ½, 1½, 2½ and then 3½ per step back from i (linear past three steps, no parabola), and
    digit d tilts it by −d·j: the top of the bump moves back to where its slope meets the tilt, d steps."""
    ns = namespace("23_look_back")
    resid, blank, n = ns["resid"], ns["blank"], ns["N_CTX"]
    W_Q, W_K = blank(n, resid), blank(n, resid)
    for j in range(n):
        W_K[j, f"pos:{j}"] = 1
        for d in ns["DIGITS"]:
            W_Q[j, f"tok:{d}"] = -s * int(d) * j
        for i in range(j, n):
            W_Q[j, f"pos:{i}"] = -s * sum(min(m, 3) + sympy.Rational(1, 2) for m in range(i - j))
    return dict(W_Q=W_Q, W_K=W_K)


def test_23_the_worked_behaviour_is_what_the_spec_and_the_reference_do():
    ns = namespace("23_look_back")
    assert ns["look_back"](list("1021321")) == [0, 1, 0, 2, 1, 3, 5]
    points = [i - int(d) for i, d in enumerate("1021321")]
    assert "    points  " + "".join(f"{p:<8}".replace("-", "−") for p in points).rstrip() in ns["__doc__"]
    assert "    key     " + "".join(f"{k:<8}" for k in ns["look_back"](list("1021321"))).rstrip() in ns["__doc__"]
    assert ns["look_back"](list("3" * 16)) == [0, 0, 0, 0, *range(1, 13)]
    assert "keys are 0, 0, 0, 0, 1, 2, … 12" in " ".join(ns["__doc__"].split())
    pattern = solution("23_look_back").model().run(["1021321"]).pattern(0, 0)[0]
    assert [int(np.argmax(row)) for row in pattern] == [0, 1, 0, 2, 1, 3, 5]


def test_23_another_mechanism_passes_a_table_with_a_tent_not_a_parabola():
    result = check_with("23_look_back", **_tent(), params={"s": 10})
    assert result.status == "solved", [(t.label, t.status, words.said(t)) for t in result.targets]


def test_23_a_tilt_the_wrong_way_looks_forward_and_the_mask_leaves_the_query_itself():
    f = only_failure(check_with("23_look_back", **_look_back(tilt=1))).failure
    assert f.tokens == ["0", "1"]  # the 1 at position 1 must look back to 0
    assert "its largest weight, 1.000, is on key 1 '1'" in summary_of(f.explanation)
    assert "pos:* favour key 1 by 15" in hint_of(f.explanation)


def test_23_a_pointer_as_a_number_is_a_product_not_a_match():
    f = only_failure(check_with("23_look_back", **_look_back(curve=None))).failure  # s·(i − d)·j: no top inside
    assert f.tokens == ["0", "1"]  # i − d = 0: every key scores 0
    said = hint_of(f.explanation)
    assert "query at position 1 ('1') is exactly zero: W_Q reads tok:1 and pos:1 there" in said
    assert "they cancel at this position" in said and "reads nothing" not in said


def test_23_a_parabola_without_its_half_has_its_top_half_way_back():
    f = only_failure(check_with("23_look_back", **_look_back(curve=-1))).failure  # top at (i − d)/2
    assert f.tokens == ["0", "0"] and "puts only 0.500 there" in summary_of(f.explanation)  # keys 0 and 1 tie
    said = hint_of(f.explanation)
    assert "indistinguishable keys" in said and "W_K reads pos:*, yet with this query both keys score the same" in said


def test_23_too_little_sharpness_says_by_how_much():
    f = only_failure(check_with("23_look_back", params={"s": 2})).failure
    assert f.tokens == ["0", "0"] and "puts only 0.731 there" in summary_of(f.explanation)
    assert "attends most to the right key" in hint_of(f.explanation) and "your sharpness symbol" in hint_of(
        f.explanation
    )


def test_23_a_sharpness_symbol_parked_on_a_dead_entry_is_refused():
    refused(
        check_with("23_look_back", **_parked(_look_back(), 20, value=10)),
        "with s at 0, so s does not control the attention the targets depend on",
    )


# --- 24: every letter of the other kind -------------------------------------------------------------------------
def _other(rows, keys):
    """A head with one query row and one key row per pairing: rows [(vowel, consonant, bos) of W_Q], keys likewise."""
    return dict(W_Q=[[s * q for q in row] for row in rows], W_K=keys)


REF_Q = [(0, 1, 0), (1, 0, 0), (1, 1, 0)]
REF_K = [(2, 0, 0), (0, 2, 0), (0, 0, 1)]


def test_24_the_worked_behaviour_is_what_the_spec_and_the_reference_do():
    ns = namespace("24_other_kind")
    attempt = solution("24_other_kind")
    trace = attempt.model().run(["bacde"])
    keys = ns["other_kind"](trace.ids)[0]
    bos = ns["bos_when_none"](trace.ids)[0]
    labels = ["BOS", *"bacde"]
    for q in range(1, 6):
        wanted = [k for k in range(6) if keys[q, k]] or [int(bos[q])]
        line = f"    {q} {labels[q]}      " + ", ".join(f"{k} {labels[k]}" for k in wanted)
        assert line in ns["__doc__"], line
        pattern = trace.pattern(0, 0)[0, q]
        assert all(pattern[k] >= 0.99 / len(wanted) for k in wanted)


def test_24_matching_the_same_kind_is_puzzle_09s_head_not_this_one():
    answer = _other([(1, 0, 0), (0, 1, 0), (1, 1, 0)], REF_K)
    f = only_failure(check_with("24_other_kind", **answer)).failure
    assert f.tokens == ["a", "b"]
    assert "the target is key 1 'a'" in summary_of(f.explanation) and "is on key 2 'b'" in summary_of(f.explanation)
    assert "consonant favours key 2 by 20" in hint_of(f.explanation)


def test_24_without_a_score_for_bos_a_lone_kind_spreads_over_itself():
    f = only_failure(check_with("24_other_kind", **_other(REF_Q, [(2, 0, 0), (0, 2, 0), (0, 0, 0)]))).failure
    assert f.tokens == ["a"]  # BOS and the letter itself tie
    assert "the target is key 0 '<bos>', but head 0.0 puts only 0.500 there" in summary_of(f.explanation)
    assert "indistinguishable keys" in hint_of(f.explanation)  # a tie, never "sharpen"


def test_24_bos_above_the_other_kind_takes_the_attention():
    f = only_failure(check_with("24_other_kind", **_other(REF_Q, [(2, 0, 0), (0, 2, 0), (0, 0, 3)]))).failure
    assert f.tokens == ["a", "b"] and "its largest weight, 1.000, is on key 0 '<bos>'" in summary_of(f.explanation)
    assert "bos favours key 0 by 30" in hint_of(f.explanation)


def test_24_a_vowel_query_that_asks_for_nothing_settles_on_bos():
    f = only_failure(check_with("24_other_kind", **_other([(0, 1, 0), (0, 0, 0), (1, 0, 0)], REF_K))).failure
    assert f.tokens == ["b", "a"]  # the vowel query meets only the BOS row
    assert "the target is key 1 'b'" in summary_of(f.explanation) and "is on key 0 '<bos>'" in summary_of(f.explanation)


def test_24_a_sharpness_symbol_parked_on_a_dead_entry_is_refused():
    answer = dict(W_Q=[[0, 10, 0], [10, 0, 0], [10, 10, 0], [s, 0, 0]], W_K=[*REF_K, (0, 0, 0)])
    refused(
        check_with("24_other_kind", **answer), "with s at 0, so s does not control the attention the targets depend on"
    )


def test_24_too_little_sharpness_leaks_to_bos_and_the_same_kind():
    f = only_failure(check_with("24_other_kind", params={"s": 2})).failure
    assert "puts only 0.867 there (needs ≥ 0.99)" in summary_of(f.explanation)
    assert "sharpen the pattern" in hint_of(f.explanation) and "your sharpness symbol" in hint_of(f.explanation)


# --- 25: an MLP that tells whether two numbers are equal --------------------------------------------------------
def test_25_the_worked_behaviour_is_what_the_spec_and_the_reference_do():
    ns = namespace("25_equal_mlp")
    tokens = "00 12 22 31 33".split()
    eq = [row[3] for row in ns["spec"](tokens)]
    assert eq == [1, 0, 1, 0, 1]
    assert "    eq    " + "".join(f"{v:5d}" for v in eq) in ns["__doc__"]
    written = solution("25_equal_mlp").model().run([tokens]).layers[0].mlp_out[0]
    assert np.allclose(written[:, 3], eq)


def _equal(units, writes):
    return dict(W_in=np.array(units, dtype=float), W_out=np.array([[0] * len(writes)] * 3 + [writes], dtype=float))


def test_25_one_threshold_finds_a_corner_but_not_the_middle():
    f = only_failure(check_with("25_equal_mlp", **_equal([[-1, -1, 1, 0], [1, 1, -5, 0]], [1, 1]))).failure
    assert f.tokens in (["11"], ["22"]) and "is eq 1, yours is 0 (error 1 > tolerance 0.1)" in summary_of(f.explanation)


def test_25_falling_with_the_distance_without_stopping_goes_negative():
    f = only_failure(
        check_with("25_equal_mlp", **_equal([[0, 0, 1, 0], [1, -1, 0, 0], [-1, 1, 0, 0]], [1, -1, -1]))
    ).failure
    x, y = (int(c) for c in f.tokens[0])
    assert abs(x - y) >= 2
    assert f"'{f.tokens[0]}' the expected output of the MLP of layer 0 is 0, yours is eq -1" in summary_of(
        f.explanation
    )


def test_25_a_bump_on_one_side_only_misses_y_above_x():
    f = only_failure(
        check_with("25_equal_mlp", **_equal([[0, 0, 1, 0], [1, -1, 0, 0], [1, -1, -1, 0]], [1, -1, 1]))
    ).failure
    x, y = (int(c) for c in f.tokens[0])
    assert y > x
    assert f"'{f.tokens[0]}' the expected output of the MLP of layer 0 is 0, yours is eq 1" in summary_of(f.explanation)


def test_25_a_sum_that_adds_x_and_y_is_the_wrong_algorithm():
    f = only_failure(check_with("25_equal_mlp", **_equal([[1, 1, -1, 0]], [1]))).failure  # relu(x + y − 1)
    assert f.tokens == ["00"] and "hidden units W_in x are [-1]" in hint_of(f.explanation)


def test_25_an_mlp_that_writes_into_one_is_refused():
    answer = solution("25_equal_mlp").answer
    W_out = np.array(answer.W_out, dtype=float)
    W_out[2, 0] = 0.5
    result = check_with("25_equal_mlp", W_out=W_out)  # the target reads `one` too: it fails, and the leak is named
    hint = hint_of(only_failure(result).failure.explanation)
    assert "Note: mlp 0 writes into one (0.5), but this puzzle lets it write only into eq" in hint


# --- 26: modular addition by Fourier features ------------------------------------------------------------------
P = 5
w = 2 * np.pi / P


def _row(values, width: int = 6) -> str:
    return "  ".join(f"{v:{width}.3f}" for v in values)


def test_26_the_worked_numbers_are_true():
    doc = namespace("26_modular_addition")["__doc__"]
    assert "    tok:cos  " + _row(np.cos(w * np.arange(P))).lstrip() in doc
    assert "    tok:sin  " + _row(np.sin(w * np.arange(P))).replace("-0.000", " 0.000").lstrip() in doc
    a, b = 1, 2
    logits = [np.cos(w * (c - a)) + np.cos(w * (c - b)) for c in range(P)]
    assert "    logit    " + _row(logits, 7).lstrip() in doc
    top = np.flatnonzero(np.isclose(logits, max(logits)))
    assert list(top) == [1, 2] and "(top: 1 and 2, not 3)" in doc
    # the model does what the table says: the additive readout at s = 1, run on "1 2"
    attempt = solution("26_modular_addition")
    for name, value in _additive_readout().items():
        setattr(attempt.answer, name, value)
    attempt.answer.params = {"s": 1}
    assert np.allclose(attempt.model().run(["12"]).logits[0, 1], logits)


def test_26_no_additive_readout_can_add_summed_over_all_pairs():
    """The worksheet's argument, on random readouts: Σ over a, b of logit(a + b) equals Σ of logit(a + b + 1)."""
    rng = np.random.default_rng(0)
    feats = np.stack([np.cos(w * np.arange(P)), np.sin(w * np.arange(P))], 1)  # [P, 2]
    for _ in range(20):
        A, B = rng.normal(size=(P, 2)), rng.normal(size=(P, 2))  # W_U's rows on prev: and on tok:
        logit = lambda a, b, c: A[c % P] @ feats[a] + B[c % P] @ feats[b]  # noqa: E731
        right = sum(logit(a, b, a + b) for a in range(P) for b in range(P))
        shifted = sum(logit(a, b, a + b + 1) for a in range(P) for b in range(P))
        assert right == pytest.approx(shifted)


def _zeros_mlp():
    return dict(W_in=np.zeros((1, 7)), W_out=np.zeros((7, 1)))


def _additive_readout():
    rows = [[s * np.cos(w * c), s * np.sin(w * c), 0, s * np.cos(w * c), s * np.sin(w * c), 0, 0] for c in range(P)]
    return dict(W_U=rows, **_zeros_mlp())


def _answer():
    ns = namespace("26_modular_addition")
    W_in = np.array(ns["W_in"].values, dtype=float)
    W_out = np.array(ns["W_out"].values, dtype=float)
    return W_in, W_out, ns


def test_26_adding_a_and_bs_features_predicts_a_or_b_not_their_sum():
    f = only_failure(check_with("26_modular_addition", **_additive_readout())).failure
    a, b = (int(t) for t in f.tokens)
    top = f.explanation.per_position.top[1]
    assert int(top) in (a, b) and int(top) != (a + b) % P
    assert f"after position 1 '{b}' the expected next token has log-prob" in summary_of(f.explanation)
    assert "compare what your MLP writes into sum:cos and sum:sin" in hint_of(f.explanation)


def test_26_reading_only_b_is_a_positional_shortcut():
    rows = [[s * np.cos(w * c), s * np.sin(w * c), 0, 0, 0, 0, 0] for c in range(P)]
    f = only_failure(check_with("26_modular_addition", W_U=rows, **_zeros_mlp())).failure
    assert f.explanation.per_position.top[1] == f.tokens[1]  # its top guess is b itself


def test_26_the_cos_identity_alone_cannot_tell_c_from_minus_c():
    W_in, W_out, ns = _answer()
    W_out[list(ns["resid"].labels).index("sum:sin")] = 0  # sum:sin never written
    f = only_failure(check_with("26_modular_addition", W_in=W_in, W_out=W_out)).failure
    assert (int(f.tokens[0]) + int(f.tokens[1])) % P != 0  # only c = 0 is its own mirror
    assert f.explanation.per_position.top[1] != f.explanation.per_position.expected[1] and "sum:sin" in hint_of(
        f.explanation
    )


def test_26_the_wrong_sign_in_the_identity_computes_a_minus_b():
    W_in, W_out, ns = _answer()
    labels = list(ns["resid"].labels)
    units = [u for u in range(W_in.shape[0]) if W_in[u, labels.index("prev:sin")] and W_in[u, labels.index("tok:sin")]]
    W_out[:, units] *= -1  # + sin wa sin wb: cos(w(a − b))
    f = only_failure(check_with("26_modular_addition", W_in=W_in, W_out=W_out)).failure
    a, b = (int(t) for t in f.tokens)
    assert (a + b) % P != (a - b) % P
    assert f.explanation.per_position.top[1] == str((a - b) % P)  # its top guess is a − b


def test_26_a_readout_scale_baked_into_the_numbers_is_refused():
    rows = [[0, 0, 0, 0, 0, 10 * np.cos(w * c), 10 * np.sin(w * c)] for c in range(P)]
    refused(check_with("26_modular_addition", W_U=rows), "declare the sharpness as a sympy symbol s")


def test_26_a_sharpness_that_moves_every_logit_alike_is_dead():
    rows = [[0, 0, s, 0, 0, 10 * np.cos(w * c), 10 * np.sin(w * c)] for c in range(P)]  # s · one: a constant shift
    refused(check_with("26_modular_addition", W_U=rows), "with s at 0, so s does not control")


def test_26_an_mlp_that_writes_outside_sum_is_refused():
    W_in, W_out, ns = _answer()
    W_out[list(ns["resid"].labels).index("prev:cos"), 0] = 0.5
    refused(
        check_with("26_modular_addition", W_in=W_in, W_out=W_out), "mlp 0 writes into prev:cos (0.5)", "only into sum:*"
    )


def test_26_too_little_sharpness_leaves_the_answer_below_the_bar():
    f = only_failure(check_with("26_modular_addition", params={"s": 3})).failure
    assert (
        f.explanation.per_position.expected[1] == f.explanation.per_position.top[1]
    )  # the right top guess, not sure enough
    assert "make the prediction surer (raise your sharpness symbol s)" in hint_of(f.explanation)


# --- 27: copy two tokens at once through four dimensions --------------------------------------------------------
γ = sympy.Symbol("γ")
THETA = 2 * sympy.pi / 5


def _columns(values: dict[str, list], outs: list[dict[str, object]]) -> dict:
    """An answer for 27: `values[t]` is token t's value (one number per value dimension), `outs[k]` what value
    dimension k writes into out:* (direction → weight, times γ)."""
    ns = namespace("27_split_copy")
    resid, blank = ns["resid"], ns["blank"]
    W_V, W_O = blank(len(outs), resid), blank(resid, len(outs))
    for t, value in values.items():
        for k, v in enumerate(value):
            W_V[k, f"tok:{t}"] = v
    for k, out in enumerate(outs):
        for direction, v in out.items():
            W_O[direction, k] = γ * v
    return dict(W_V=W_V, W_O=W_O)


def _one_hot_but_e(e: float) -> dict:
    """a … d each raise their own logit through their own value dimension; e's value is `e` in all four."""
    values = {t: [int(t == u) for u in "abcd"] for t in "abcd"} | {"e": [e] * 4}
    return _columns(values, [{f"out:{t}": 1} for t in "abcd"])


def _pentagon() -> dict:
    """Puzzle 11's construction: token k's value is the pentagon's corner k, written back as every token's corner."""
    corners = {t: [sympy.cos(k * THETA), sympy.sin(k * THETA)] for k, t in enumerate("abcde")}
    return _columns(corners, [{f"out:{t}": c[d] for t, c in corners.items()} for d in range(2)])


def _by_label(result) -> dict[str, object]:
    """The failing targets, by their letter, and for (b) the position: '(a)', '(b)1', '(b)2', '(c)', '(d)'."""
    return {
        t.label[:3] + "".join(n for n in "12" if f"i − {n}" in t.label): t
        for t in result.targets
        if t.status == "failed"
    }


def test_27_the_worked_behaviour_is_what_the_specs_and_the_pattern_give():
    ns = namespace("27_split_copy")
    doc, tokens = ns["__doc__"], list("abbce")
    assert np.allclose(ns["last_two"](4), [[1, 0, 0, 0], [1, 0, 0, 0], [0.5, 0.5, 0, 0], [0, 0.5, 0.5, 0]])
    assert ns["one_token"](tokens) == [None, "a", None, "b", None]
    assert ns["nearer"](tokens) == [None, None, "b", None, "c"]
    assert ns["farther"](tokens) == [None, None, "a", None, "b"]
    for line in (
        "    0 a        itself           —",
        "    1 b        0 a              a              (≥ 0.905)",
        "    2 b        ½ a, ½ b         a and b        (≥ 0.449 each)",
        "    3 c        ½ b, ½ b         b              (≥ 0.905)",
        "    4 e        ½ b, ½ c         b and c        (≥ 0.449 each)",
    ):
        assert line in doc
    assert round(np.exp(-0.1), 3) == 0.905 and round(np.exp(-0.8), 3) == 0.449  # what the log-prob bounds stand for
    W_U = np.array(ns["W_U"].values, dtype=float)  # the table: token t read from out:t alone
    assert np.array_equal(W_U, np.hstack([np.zeros((5, 5)), np.eye(5)]))
    trace = solution("27_split_copy").model().run(["abbce"])
    probs = np.exp(trace.logits[0] - np.log(np.exp(trace.logits[0]).sum(-1, keepdims=True)))
    assert probs[1, 0] > 0.905 and probs[3, 1] > 0.905
    assert min(probs[2, 0], probs[2, 1], probs[4, 1], probs[4, 2]) > 0.449


def test_27_puzzle_11s_pentagon_averages_a_and_c_into_b():
    """The shortcut from the chapter: five tokens on a pentagon in two value dimensions copy one token at a time (its
    OV circuit scores 1 and raises each token most) but the average of a's and c's corners is b's direction."""
    failed = _by_label(check_with("27_split_copy", **_pentagon()))
    assert set(failed) == {"(b)1", "(b)2"}, set(failed)
    f = failed["(b)1"].failure
    assert f.tokens == list("aca")
    assert "after position 2 your model prefers 'b' (0.865) to the expected 'c' (0.067)" in hint_of(f.explanation)


def test_27_four_one_hot_dimensions_leave_e_with_nothing():
    failed = _by_label(check_with("27_split_copy", **_one_hot_but_e(0)))
    assert set(failed) == {"(c)", "(a)", "(b)1", "(b)2"}, set(failed)
    from test_wrong_curriculum_a import report_text

    assert "(wrong: e → (tie))" in report_text(failed["(c)"])
    hint = hint_of(failed["(a)"].failure.explanation)
    assert "cannot tell the expected 'e' from 'a' and 3 more: a tie, each 0.200" in hint


def test_27_an_e_that_lowers_the_others_too_far_wins_every_pair_it_is_in():
    failed = _by_label(check_with("27_split_copy", **_one_hot_but_e(-3)))
    assert set(failed) == {"(b)1", "(b)2"}, set(failed)  # alone, every token is right; e beside a is not
    f = failed["(b)1"].failure
    assert f.tokens == list("eaa") and "your model prefers 'e' (1.000) to the expected 'a'" in hint_of(f.explanation)


def test_27_an_e_that_lowers_the_others_too_little_loses_every_pair_it_is_in():
    failed = _by_label(check_with("27_split_copy", **_one_hot_but_e(sympy.Rational(-1, 2))))
    assert set(failed) == {"(b)1", "(b)2"}, set(failed)
    f = failed["(b)2"].failure
    assert f.tokens == list("eaa") and "your model prefers 'a'" in hint_of(f.explanation)


def test_27_a_value_of_five_dimensions_is_refused_by_its_width():
    """The other shortcut: one value dimension per token copies everything, and is what (d) forbids."""
    answer = _columns({t: [int(t == u) for u in "abcde"] for t in "abcde"}, [{f"out:{t}": 1} for t in "abcde"])
    result = check_with("27_split_copy", **answer)
    failed = _by_label(result)
    assert set(failed) == {"(d)"}, set(failed)
    from test_wrong_curriculum_a import report_text

    assert "W_V of head 0.0 has shape (5, 10): a value of 5 dimensions, at most 4 allowed" in report_text(failed["(d)"])


def test_27_a_negative_copy_suppresses_what_it_attends_to():
    values = {t: [int(t == u) for u in "abcd"] for t in "abcd"} | {"e": [-1] * 4}
    answer = _columns(values, [{f"out:{t}": -1} for t in "abcd"])  # puzzle 13's sign
    failed = _by_label(check_with("27_split_copy", **answer))
    assert {"(c)", "(a)"} <= set(failed)
    from test_wrong_curriculum_a import report_text

    assert "copying score Σλ/Σ|λ| of W_U W_OV W_E is -1.000 (needs ≥ 0.9)" in report_text(failed["(c)"])


def test_27_too_little_sharpness_ties_the_two_but_not_surely():
    failed = _by_label(check_with("27_split_copy", params={"γ": 4}))
    assert set(failed) == {"(b)1", "(b)2"}  # the circuit is right; the three others keep too much
    hint = hint_of(failed["(b)1"].failure.explanation)
    # the tie is what (b) asks for, so the report names the tokens outside it, never "no sharpness can" break it
    assert "the expected 'b' shares the top with 'a' (0.416 each), as it may, but 'c' and 2 more keep 0.169" in hint
    assert "raise your sharpness symbol γ" in hint and "no sharpness can" not in hint


def test_27_a_sharpness_baked_into_the_numbers_is_refused():
    answer = _one_hot_but_e(-1)
    answer["W_O"] = np.zeros((10, 4))
    for k in range(4):
        answer["W_O"][5 + k, k] = 12  # out:a … out:d, γ = 12 written as a number
    refused(check_with("27_split_copy", **answer), "declare the sharpness as a sympy symbol γ")


def test_27_a_head_that_writes_back_into_the_embedding_is_refused():
    answer = _one_hot_but_e(-1)
    answer["W_O"]["tok:e", 0] = 1
    refused(check_with("27_split_copy", **answer), "head 0.0 writes into tok:e (1)", "only into out:*")


def test_27_a_value_width_is_validated_when_built_and_names_a_missing_head_as_the_puzzles():
    from circuits import ValueWidth

    with pytest.raises(CircuitError, match=r"^ValueWidth\('narrow'\): most is 0 \(int\); it needs a whole number ≥ 1"):
        ValueWidth("narrow", most=0)
    attempt = solution("27_split_copy")
    with pytest.raises(CircuitError, match="the model has no head 0.1: a mistake in the puzzle's targets"):
        ValueWidth("narrow", head=1, most=4).run(attempt.answer, attempt.model())


def test_27_two_pentagons_the_regular_simplex_also_pass():
    """Another mechanism: the pentagon at frequencies 1 and 2 in the four dimensions, written back the same way. Its
    full OV circuit is (5/2)(I − J/5): every column one-hot up to a shift, as the reference's, by Fourier."""
    corners = {
        t: [sympy.cos(k * THETA), sympy.sin(k * THETA), sympy.cos(2 * k * THETA), sympy.sin(2 * k * THETA)]
        for k, t in enumerate("abcde")
    }
    answer = _columns(corners, [{f"out:{t}": c[d] for t, c in corners.items()} for d in range(4)])
    result = check_with("27_split_copy", **answer)
    assert result.status == "solved", [(t.label, t.status, words.said(t)) for t in result.targets]


def test_27_a_W_O_that_lowers_e_also_passes():
    """Another mechanism: each value dimension raises its token and lowers e; e's value, −2/5 in all four, then
    raises e by 8/5 and lowers a … d by 2/5, the same lead, and every pair with e ties."""
    values = {t: [int(t == u) for u in "abcd"] for t in "abcd"} | {"e": [sympy.Rational(-2, 5)] * 4}
    answer = _columns(values, [{f"out:{t}": 1, "out:e": -1} for t in "abcd"])
    result = check_with("27_split_copy", **answer)
    assert result.status == "solved", [(t.label, t.status, words.said(t)) for t in result.targets]


# --- 28: what followed your predecessor before ----------------------------------------------------------------
def _match(q_side="prev", k_side="prev", bos=sympy.Rational(1, 2), diag=11):
    """Head 1.0: a query reading `q_side`:x against a key reading `k_side`:x; every query against BOS at `bos`;
    the query's own position against its key (−1) on the first `diag` positions."""
    ns = namespace("28_same_predecessor")
    resid, blank = ns["resid"], ns["blank"]
    W_Q, W_K = blank(16, resid), blank(16, resid)
    for k, t in enumerate("abcd"):
        W_Q[k, f"{q_side}:{t}"], W_K[k, f"{k_side}:{t}"] = s, 1
    W_K[4, "bos"] = 1
    for i in range(11):
        W_Q[4, f"pos:{i}"] = s * bos
        if i < diag:
            W_Q[5 + i, f"pos:{i}"], W_K[5 + i, f"pos:{i}"] = s, -1
    return dict(W_Q1=W_Q, W_K1=W_K)


def test_28_the_worked_behaviour_is_what_the_spec_and_the_reference_do():
    ns = namespace("28_same_predecessor")
    doc = ns["__doc__"]
    keys = ns["same_predecessor"](list("aabab"))
    assert keys == [[-1], [-1], [1], [-1], [1, 2]]  # letter indices; BOS is −1
    labels = ["BOS", *"aabab"]
    pattern = solution("28_same_predecessor").model().run(["aabab"]).pattern(1, 0)[0]
    for q in range(1, 6):
        wanted = [k + 1 for k in keys[q - 1]]  # positions
        attends = ", ".join(f"{k} {labels[k]}" for k in wanted)
        pred = "BOS" if q == 1 else f"{q - 1} {labels[q - 1]}"
        assert re.search(rf"^    {q} {labels[q]}      {pred} +{attends}", doc, flags=re.M), (q, attends)
        assert pattern[q, wanted].sum() >= 0.9
    # the induction head the worksheet contrasts: at 5 b, the letters whose predecessor is b: 4 a
    assert [k for k in range(2, 6) if labels[k - 1] == "b"] == [4] and "at 5 b it would attend to 4 a" in doc


def test_28_another_mechanism_passes_ramps_instead_of_one_hot_self_exclusion():
    """Keys score 12 per match minus their position; BOS scores 12.5 minus the query's position: between the
    query's own match and its latest earlier one. Three rows, no diagonal."""
    ns = namespace("28_same_predecessor")
    resid, blank = ns["resid"], ns["blank"]
    W_Q, W_K = blank(6, resid), blank(6, resid)
    for k, t in enumerate("abcd"):
        W_Q[k, f"prev:{t}"], W_K[k, f"prev:{t}"] = s, 12
    for i in range(11):
        W_Q[4, f"pos:{i}"], W_K[4, f"pos:{i}"] = s, -i
        W_Q[5, f"pos:{i}"] = s * (sympy.Rational(25, 2) - i)
    W_K[5, "bos"] = 1
    assert check_with("28_same_predecessor", W_Q1=W_Q, W_K1=W_K, params={"s": 10}).status == "solved"


def test_28_without_self_exclusion_every_query_finds_itself():
    f = only_failure(check_with("28_same_predecessor", **_match(diag=0))).failure
    assert f.tokens == ["a", "a"]
    assert "the target is key 0 '<bos>', but head 1.0 puts only 0.000 there" in summary_of(f.explanation)
    assert "is on key 2 'a'" in summary_of(f.explanation) and "prev:* favour key 2 by 20" in hint_of(f.explanation)


def test_28_an_induction_head_asks_for_the_query_itself_not_its_predecessor():
    f = only_failure(check_with("28_same_predecessor", **_match(q_side="tok"))).failure
    assert f.tokens == ["a", "a", "b"]  # at 3 b the target is 2 a (it followed the a at 1); nothing followed a b
    assert "the target is key 2 'a', but head 1.0 puts only 0.000 there" in summary_of(f.explanation)


def test_28_a_key_on_content_finds_the_earlier_copy_not_what_followed_it():
    f = only_failure(check_with("28_same_predecessor", **_match(k_side="tok"))).failure
    assert f.tokens == ["a", "a"]  # at 2 a, whose predecessor is the a at 1: key 1 holds an a, but follows BOS
    assert "is on key 1 'a'" in summary_of(f.explanation) and "tok:* favour key 1 by 20" in hint_of(f.explanation)


def test_28_bos_above_a_match_takes_the_attention():
    f = only_failure(check_with("28_same_predecessor", **_match(bos=sympy.Rational(3, 2)))).failure
    assert f.tokens == ["a", "a", "a"] and "its largest weight, 1.000, is on key 0 '<bos>'" in summary_of(f.explanation)
    assert "bos favours key 0 by 30" in hint_of(f.explanation)


def test_28_without_a_score_for_bos_a_query_with_no_match_spreads_out():
    f = only_failure(check_with("28_same_predecessor", **_match(bos=0))).failure
    assert f.tokens == ["a", "a"] and "puts only 0.333 there" in summary_of(f.explanation)
    assert "indistinguishable keys" in hint_of(f.explanation)  # a tie, never "sharpen"


def test_28_self_exclusion_that_stops_short_fails_late_in_the_context():
    f = only_failure(check_with("28_same_predecessor", **_match(diag=6))).failure
    assert f.tokens == list("aaaaaa")  # query 6, the first without its own −1, ties with its matches
    assert "the targets are keys 2, 3, 4, 5, but head 1.0 puts only 0.800 on them together" in summary_of(f.explanation)


def test_28_a_layer_0_that_writes_nothing_leaves_no_predecessor_to_match():
    ns = namespace("28_same_predecessor")
    f = only_failure(check_with("28_same_predecessor", W_O0=ns["blank"](ns["resid"], 4))).failure
    assert f.tokens == ["a", "a", "a"]
    assert "the target is key 2 'a', but head 1.0 puts only 0.000 there" in summary_of(f.explanation)
    hint = " ".join(hint_of(f.explanation).split())  # the empty prev:* is the cause, not head 1.0's score on bos
    assert (
        "W_Q1 and W_K1 read prev:*, which nothing before layer 1 writes, whatever the input (head 0.0 writes nothing "
        "there), so no key differs there: look first at W_V0 and W_O0 of head 0.0"
    ) in hint, hint


def test_28_a_layer_0_that_writes_outside_prev_is_refused():
    ns = namespace("28_same_predecessor")
    W_O0 = np.array(ns["W_O0"].values, dtype=object)
    W_O0[list(ns["resid"].labels).index("tok:a"), 0] = 1
    refused(check_with("28_same_predecessor", W_O0=W_O0), "head 0.0 writes into tok:a (1)", "only into prev:*")


def test_28_a_sharpness_symbol_parked_on_a_dead_entry_is_refused():
    answer = _match()
    W_Q = np.asarray(sympy.Matrix(np.array(answer["W_Q1"].values, dtype=object).tolist()).subs(s, 20), dtype=object)
    W_Q = np.vstack([W_Q, [s] + [0] * 19])
    W_K = np.vstack([np.array(answer["W_K1"].values, dtype=float), np.zeros(20)])
    refused(
        check_with("28_same_predecessor", W_Q1=W_Q, W_K1=W_K),
        "with s at 0, so s does not control the attention the targets depend on",
    )


def test_28_too_little_sharpness_leaks_from_bos():
    f = only_failure(check_with("28_same_predecessor", params={"s": 3})).failure
    assert "puts only 0.691 there (needs ≥ 0.9)" in summary_of(f.explanation)
    assert "sharpen the pattern" in hint_of(f.explanation) and "your sharpness symbol s" in hint_of(f.explanation)


# --- 29: the smaller digits before, when a digit is a number ---------------------------------------------------
STEM_29 = "29_smaller_by_value"
COLUMNS_29 = ["value", "one", "bos"] + [f"free:{k}" for k in range(5)]


def _row29(**entries):
    """A row over value, one, bos, free:0 … free:4 (free_k= names free:k)."""
    return [entries.get(c.replace(":", "_"), 0) for c in COLUMNS_29]


def _ramps():
    """Three units relu(x − 1), relu(x − 2), relu(x − 3) written into free:0 … free:2, no one-hot code. With one and
    value they span every function of a digit 0 … 4, so the head can still make any table: for query x, key y
    scores −s·relu(y − x + 1) (0 for y < x, ≤ −s from y = x on), and −s·(y + 1) for x = 0; BOS scores 0."""
    W_in = [_row29(value=1, one=-k) for k in (1, 2, 3)]
    W_out = [[0, 0, 0]] * 3 + [[int(k == u) for u in range(3)] for k in range(3)] + [[0, 0, 0]] * 2
    W_Q = [
        _row29(one=s, value=-s, free_0=s),  # [x = 0], against the key's one
        _row29(one=s, free_0=-s, free_1=s),  # [x ≤ 1], against its value
        _row29(free_0=s, free_1=-2 * s, free_2=s),  # [x = 2], against relu(y − 1)
        _row29(free_1=s, free_2=-2 * s),  # [x = 3], against relu(y − 2)
        _row29(free_2=s),  # [x = 4], against relu(y − 3)
    ]
    W_K = [_row29(one=-1), _row29(value=-1), _row29(free_0=-1), _row29(free_1=-1), _row29(free_2=-1)]
    return dict(W_in=W_in, W_out=W_out, W_Q=W_Q, W_K=W_K)


def _thermometer():
    """Four units relu(x), relu(x − 1), relu(x − 2), relu(x − 3) made into free:k−1 = [x ≥ k], k = 1 … 4; the head
    scores [y < x] = Σ_k [x ≥ k]·[y = k − 1], with [y = k − 1] = [y ≥ k − 1] − [y ≥ k] ([y ≥ 0] is one)."""
    W_in = [_row29(value=1, one=-k) for k in range(4)]
    W_out = [[0] * 4] * 3 + [[1, -1, 0, 0], [0, 1, -1, 0], [0, 0, 1, -1], [0, 0, 0, 1], [0] * 4]
    at_least = ["one"] + [f"free_{k}" for k in range(4)]  # [y ≥ 0] … [y ≥ 4]
    W_Q = [_row29(**{f"free_{k}": s}) for k in range(4)] + [_row29(one=s)]
    W_K = [_row29(**{at_least[k]: 1, at_least[k + 1]: -1}) for k in range(4)] + [_row29(bos=1)]
    return dict(W_in=W_in, W_out=W_out, W_Q=W_Q, W_K=W_K)


def test_29_the_worked_behaviour_is_what_the_spec_and_the_reference_do():
    from fractions import Fraction

    ns = namespace(STEM_29)
    digits = list("20313")
    counts, results = ns["smaller_before"](digits), ns["spec"](digits)
    assert counts == [0, 0, 2, 1, 3]
    tokens = ["<bos>", *digits]
    trace = solution(STEM_29).model().run(["20313"])
    keys, pattern = ns["picked"](trace.ids)[0], trace.pattern(1, 0)[0]
    label = lambda k: "0 BOS" if k == 0 else f"{k} '{tokens[k]}'"  # noqa: E731
    for q in range(1, 6):
        wanted = list(np.flatnonzero(keys[q]))
        assert len(wanted) == counts[q - 1] + 1
        result = str(Fraction(results[q - 1][0]).limit_denominator(10))
        line = f"    {label(q)}    " + ", ".join(map(label, wanted))
        assert line in ns["__doc__"] and ns["__doc__"].split(line)[1].split()[:2] == [str(counts[q - 1]), result], q
        assert all(pattern[q, k] >= 0.99 / len(wanted) for k in wanted)
    assert np.allclose(trace.z(1, 0)[0, 1:, 0], [r[0] for r in results], atol=1e-3)


def test_29_the_embedding_is_the_worksheets_table():
    ns = namespace(STEM_29)
    W_E = np.array(ns["W_E"].values, dtype=float)
    assert W_E.shape == (8, 6) and list(ns["resid"].labels) == COLUMNS_29
    assert W_E[:3].tolist() == [[0, 0, 1, 2, 3, 4], [0, 1, 1, 1, 1, 1], [1, 0, 0, 0, 0, 0]] and not W_E[3:].any()
    assert (
        "    value       0    0  1  2  3  4" in ns["__doc__"] and "    one         0    1  1  1  1  1" in ns["__doc__"]
    )


def test_29_three_ramps_are_enough_the_features_need_not_be_one_hot():
    assert check_with(STEM_29, **_ramps()).status == "solved"


def test_29_a_thermometer_code_works_too():
    assert check_with(STEM_29, **_thermometer()).status == "solved"


def test_29_smaller_or_equal_counts_the_digit_itself():
    ns = namespace(STEM_29)
    W_Q = [[c if k - 3 != r else (s if r < 4 else c) for k, c in enumerate(row)] for r, row in enumerate(ns["W_Q"])]
    f = only_failure(check_with(STEM_29, W_Q=W_Q)).failure  # each key row y is read by the query y as well
    assert f.tokens == ["0"] and "puts only 0.500 there" in summary_of(f.explanation)
    assert "indistinguishable keys: key 1 and the target key 0 both score 20" in hint_of(f.explanation)


def test_29_without_a_score_for_bos_a_zero_spreads_over_everything():
    ns = namespace(STEM_29)
    f = only_failure(check_with(STEM_29, W_Q=ns["W_Q"][:4] + [_row29()])).failure
    assert f.tokens == ["0"] and "puts only 0.500 there" in summary_of(f.explanation)
    assert "query at position 1 ('0') is exactly zero" in hint_of(f.explanation)


def test_29_an_mlp_that_writes_into_value_is_refused():
    W_out = [[0, 0, 1, -2, 1]] + namespace(STEM_29)["W_out"][1:]  # free:2's code into value too
    refused(check_with(STEM_29, W_out=W_out), "mlp 0 writes into value (2)", "only into free:*")


def test_29_a_sharpness_symbol_parked_on_a_dead_entry_is_refused():
    ns = namespace(STEM_29)
    W_Q = [[c.subs(s, 20) if hasattr(c, "subs") else c for c in row] for row in ns["W_Q"]] + [_row29(bos=s)]
    refused(
        check_with(STEM_29, W_Q=W_Q, W_K=ns["W_K"] + [_row29()]),
        "with s at 0, so s does not control the attention the targets depend on",
    )


def test_29_too_little_sharpness_leaks_onto_the_digit_itself():
    f = only_failure(check_with(STEM_29, params={"s": 3})).failure
    assert f.tokens == ["0"] and "puts only 0.953 there (needs ≥ 0.99)" in summary_of(f.explanation)
    assert "sharpen the pattern" in hint_of(f.explanation) and "your sharpness symbol s" in hint_of(f.explanation)


# --- difficulty and minutes ------------------------------------------------------------------------------------
def test_every_shipped_puzzle_has_a_level_and_the_loader_attaches_it(tmp_path):
    levels = tomllib.loads((curriculum.HOME / "levels.toml").read_text(encoding="utf-8"))
    assert sorted(levels) == STEMS
    for stem in STEMS:
        assert curriculum.level(stem) == (levels[stem]["difficulty"], levels[stem]["minutes"])
    puzzle = load(shipped("puzzles", "26_modular_addition", tmp_path)).puzzle
    assert (puzzle.difficulty, puzzle.minutes) == (3, 60)


@pytest.mark.parametrize(
    "field, value, said",
    [
        ("difficulty", 4, "difficulty = 4; it must be 1, 2 or 3"),
        ("difficulty", "2", "difficulty = '2'; it must be 1, 2 or 3"),
        ("difficulty", True, "difficulty = True"),
        ("minutes", 0, "minutes = 0; it must be a whole number of minutes ≥ 1"),
        ("minutes", 2.5, "minutes = 2.5"),
    ],
)
def test_a_bad_level_is_refused_when_the_puzzle_is_built(field, value, said):
    import dataclasses

    good = solution("03_uniform").puzzle
    with pytest.raises(CircuitError, match=re.escape(f"puzzle 'uniform': {said}")):
        dataclasses.replace(good, **{field: value})


def test_a_bad_levels_file_is_one_line_naming_the_entry(tmp_path, monkeypatch):
    (tmp_path / "levels.toml").write_text("[03_uniform]\ndifficulty = 5\nminutes = 5\n", encoding="utf-8")
    monkeypatch.setattr(curriculum, "HOME", tmp_path)
    curriculum._level_table.cache_clear()
    try:
        with pytest.raises(CircuitError, match=r"levels.toml: \[03_uniform\]: difficulty = 5"):
            curriculum.level("03_uniform")
        (tmp_path / "levels.toml").write_text("[03_uniform]\nstars = 2\n", encoding="utf-8")
        curriculum._level_table.cache_clear()
        with pytest.raises(CircuitError, match="only difficulty and minutes belong here"):
            curriculum.level("03_uniform")
    finally:
        curriculum._level_table.cache_clear()


def test_a_puzzle_file_may_declare_its_own_level_and_list_shows_it(tmp_path):
    from circuits.display.render import to_text
    from circuits.display.report import summary_table

    text = (SOLUTIONS / "03_uniform.py").read_text(encoding="utf-8")
    mine = tmp_path / "93_own.py"
    mine.write_text(
        text.replace("number=3,", "number=93, difficulty=3, minutes=7,").replace('name="uniform"', 'name="own"'),
        encoding="utf-8",
    )
    own = check(load(mine), n_random=200, property_examples=10, margins=False)
    ref = check(solution("22_recent_vowel"), n_random=200, property_examples=10, margins=False)
    shown = to_text(summary_table([own, ref]), width=80)
    assert max(len(line) for line in shown.splitlines()) <= 80
    assert re.search(r"93_own\s+│ solved\s+│.*\n│ ★★★ 7m\s+│ 1/1 target ", shown)  # the level under the name
    assert re.search(r"22_recent_vowel\s+│ solved\s+│.*\n│ ★★☆ 20m\s+│ 1/1 target ", shown)


def test_the_readme_table_gives_every_puzzle_its_level():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| (\d\d) \| `\w+` \| ([★☆]{3} \d+m) \|", readme, flags=re.M))
    for stem in STEMS:
        d, m = curriculum.level(stem)
        assert rows.get(stem[:2]) == "★" * d + "☆" * (3 - d) + f" {m}m", stem
