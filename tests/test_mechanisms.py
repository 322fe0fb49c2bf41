"""Mechanisms checked by intervention (Depends, issue #35): where a worksheet requires a mechanism, a shortcut
that passes every behaviour target fails, on the shortest input, with one line a learner reads; every reference
passes; and the patched forward pass is the plain one when nothing is patched, and moves the reader when it is.

Wrong answers start from the reference (loaded once per module) and change what a learner hunting a shortcut
would change; each is checked through the checker (its key line, as tests/test_misconceptions.py reads it) or,
where the result must not depend on other guarantees (declared reads), through the mechanism target alone.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
import sympy
from helpers import wrong

from circuits import Attention, Depends, blank, explain
from circuits.checking.checker import check_mechanism, context
from circuits.display import words
from circuits.display.report import failure_line
from circuits.errors import CircuitError
from circuits.explain import check
from circuits.targets.depends import Unbroken, Unfollowed

s = sympy.Symbol("s")
MECHANISMS = {"21_ioi_mini": 2, "07_induction_k_composition": 1, "15_q_composition": 1, "13_copy_suppression": 1}
TOL = 1e-12  # a patch of nothing changes nothing: the patched run is the plain one to this absolute tolerance


def mechanisms(attempt) -> list:
    return [t for t in attempt.puzzle.targets if t.kind == "mechanism"]


def alone(attempt, n: int = 0):
    """The n-th mechanism target's result on `attempt`, checked on its own (no other target, no guarantee)."""
    with context():
        return check_mechanism(mechanisms(attempt)[n], attempt, attempt.model())


def said(result) -> str:
    return explain.words(result.failure.finding)


def key_line(result) -> str:
    """The first failing target's one line, as a report prints it."""
    bad = [t for t in result.targets if t.status in ("failed", "error")]
    assert bad, f"the wrong answer passed: {[(t.label, t.status) for t in result.targets]}"
    return failure_line(bad[0]) if bad[0].status == "failed" else words.said(bad[0])


def checked(attempt):
    return check(attempt, n_random=2000, margins=False)


# ── the edits: shortcuts a learner might hunt for ─────────────────────────────────────────────────────────
def latest_name(name_weight=10, ramp=4):
    """21: head 1.0 from 'to' to the latest name by position (names, plus a ramp over positions): never reads dup."""

    def edit(a, g):
        Q, K = blank(1, g["resid"]), blank(1, g["resid"])
        Q[0, "tok:to"] = s
        for n in g["NAMES"]:
            K[0, f"tok:{n}"] = name_weight
        for i in range(g["N_CTX"]):
            K[0, f"pos:{i}"] = sympy.Rational(i, ramp)
        a.W_Q1, a.W_K1 = Q, K

    return edit


def late_name(a, g):
    """21: head 1.0 to the one name at position 4 or later: the template's S2, never read from dup."""
    Q, K = blank(1, g["resid"]), blank(1, g["resid"])
    Q[0, "tok:to"] = s
    for n in g["NAMES"]:
        K[0, f"tok:{n}"] = 1
    for i in range(4, g["N_CTX"]):
        K[0, f"pos:{i}"] = 1
    a.W_Q1, a.W_K1 = Q, K


def dup_with_a_backup(a, g):
    """21: head 1.0 reads dup (6) but also the latest name (3 + a ramp): zeroing dup still finds S2."""
    Q, K = blank(1, g["resid"]), blank(1, g["resid"])
    Q[0, "tok:to"] = s
    K[0, "dup"] = 6
    for n in g["NAMES"]:
        K[0, f"tok:{n}"] = 3
    for i in range(g["N_CTX"]):
        K[0, f"pos:{i}"] = sympy.Rational(i, 4)
    a.W_Q1, a.W_K1 = Q, K


def first_name_is_io(a, g):
    """21: head 2.0 prefers the name at position 1 (+s) besides inhibiting s:: IO-first sentences need no s:."""
    a.W_K2[0, "pos:1"] = 1


def query_on_token(a, g):
    """13: the query reads the current token t and asks for NEXT[t] itself, never the prediction pred:*."""
    Q = blank(6, g["resid"])
    for k, y in enumerate(g["TOKENS"]):
        t = next(t for t in g["TOKENS"] if g["NEXT"][t] == y)
        Q[k, f"tok:{t}"], Q[5, f"tok:{t}"] = s, s / 2
    a.W_Q = Q


def hedged_query(a, g):
    """13: half the query from pred:*, half from the current token through NEXT: a patch splits the attention."""
    Q = blank(6, g["resid"])
    for k, y in enumerate(g["TOKENS"]):
        t = next(t for t in g["TOKENS"] if g["NEXT"][t] == y)
        Q[k, f"pred:{y}"], Q[k, f"tok:{t}"] = s / 2, s / 2
        Q[5, f"pred:{y}"] = s / 2
    a.W_Q = Q


def token_backup(a, g):
    """13: the reference's query plus a backup from the current token at a quarter strength: a patch outweighs it,
    but zeroing pred:* still finds the copies."""
    for k, y in enumerate(g["TOKENS"]):
        t = next(t for t in g["TOKENS"] if g["NEXT"][t] == y)
        a.W_Q[k, f"tok:{t}"] = s / 4


def bos_sink_on_token(a, g):
    """13 (right, not wrong): the BOS row reads the current token, not pred:*; a default on BOS is no shortcut."""
    for t in g["TOKENS"]:
        a.W_Q[5, f"pred:{t}"], a.W_Q[5, f"tok:{t}"] = 0, s / 2


def keys_on_token(a, g):
    """07: the induction head's keys read the token itself, not prev:*: a duplicate-token head."""
    K = blank(4, g["resid"])
    for k, t in enumerate("abcd"):
        K[k, f"tok:{t}"] = 1
    a.W_K2 = K


def keys_shifted(a, g):
    """07: keys read prev:* one letter off (prev:b for a …)."""
    K = blank(4, g["resid"])
    for k, t in enumerate("abcd"):
        K[k, f"prev:{'abcd'[(k + 1) % 4]}"] = 1
    a.W_K2 = K


def query_on_prev(a, g):
    """07: the query reads prev:* too (same predecessor, puzzle 28), not the current token."""
    Q = blank(4, g["resid"])
    for k, t in enumerate("abcd"):
        Q[k, f"prev:{t}"] = s
    a.W_Q2 = Q


def keys_on_position(a, g):
    """07: the keys read the position pairs as the previous-token head's query does: one back, whatever is there."""
    a.W_Q2, a.W_K2 = copy.deepcopy(a.W_Q1), copy.deepcopy(a.W_K1)


def first_on_keys(a, g):
    """15: first:* read by the keys (K-composition) instead of the query: every key holds the same first:*."""
    a.W_Q1, a.W_K1 = a.W_K1, a.W_Q1


def query_on_current(a, g):
    """15: the query reads the current token, not first:*: a duplicate-token head."""
    Q = blank(5, g["resid"])
    for k, t in enumerate("abcd"):
        Q[k, f"tok:{t}"], Q[4, f"tok:{t}"] = s, s
    a.W_Q1 = Q


def first_shifted(a, g):
    """15: the query asks for the letter after the first one (first:a → b …)."""
    Q = blank(5, g["resid"])
    for k, t in enumerate("abcd"):
        Q[(k + 1) % 4, f"first:{t}"], Q[4, f"first:{t}"] = s, s
    a.W_Q1 = Q


def away_from_first(a, g):
    """15: the query asks away from the first token (−s): the repeats score lowest."""
    for k, t in enumerate("abcd"):
        a.W_Q1[k, f"first:{t}"] = -s


def head_0_copies_itself(a, g):
    """15: head 0.0 copies its own position's token... through a fixed pattern to position 0: W_V0 reads start."""
    a.W_V0 = blank(4, g["resid"])
    for k in range(4):
        a.W_V0[k, "start"] = 1


# ── the brief's shortcut: 21's head 1.0 by position ──────────────────────────────────────────────────────────
def test_21_latest_name_by_position_passes_every_behaviour_target_and_fails_the_mechanism(reference):
    result = checked(wrong(reference("21_ioi_mini"), latest_name()))
    assert [t.status for t in result.targets if t.kind == "behaviour"] == ["passed"] * 4
    assert key_line(result) == (
        "✗ head 1.0 finds S2 by what head 0.0 wrote into dup (patched and zeroed): on 'Ann and Bob then Bob gave to', "
        "head 1.0's attention does not depend on dup: with head 0.0's write into dup taken from 'Cat and Bob Bob "
        "then gave to', it still attends to key 5 'Bob' (1.00) at query 7 'to', but the patch points to key 4 "
        "'then' (0.00 there, needs ≥ 0.9)"
    )


def test_21_the_intervention_target_alone_rejects_the_positional_head(reference):
    """Checked alone (no behaviour target, no declared-reads guarantee), the mechanism target fails it."""
    result = alone(wrong(reference("21_ioi_mini"), latest_name()))
    assert result.status == "failed" and isinstance(result.failure.finding, Unfollowed)
    assert result.failure.tokens == "Ann and Bob then Bob gave to".split()
    assert "it still attends to key 5 'Bob' (1.00) at query 7 'to', but the patch points to key 4" in said(result)


@pytest.mark.parametrize(
    "edit, n, expect",
    [
        (
            late_name,
            0,
            "with head 0.0's write into dup taken from 'Cat and Bob Bob then gave to', it still attends to key 5 'Bob'",
        ),
        (
            dup_with_a_backup,
            0,
            "with head 0.0's write into dup zeroed, it still puts 1.00 on its target key 5 'Bob' at "
            "query 7 'to' (zeroing must leave it below 0.9)",
        ),
        (
            first_name_is_io,
            1,
            "with head 1.0's write into s:* zeroed, it still puts 1.00 on its target key 1 'Cat' at query 6 'to'",
        ),
    ],
    ids=["a name at position 4 or later", "dup with a positional backup", "the first name as the IO"],
)
def test_21_shortcuts_that_pass_every_sentence_fail_the_mechanism(reference, edit, n, expect):
    trial = wrong(reference("21_ioi_mini"), edit)
    result = checked(trial)
    assert [t.status for t in result.targets if t.kind == "behaviour"] == ["passed"] * 4  # a true shortcut
    line = key_line(result)
    assert expect in line, line
    assert expect in said(alone(trial, n))


@pytest.mark.parametrize(
    "edit, expect",
    [
        (
            latest_name(name_weight=1, ramp=20),
            "at query 6 'to' the target is key 4 'Ann', but head 1.0 puts only 0.705",
        ),
        (lambda a, g: setattr(a, "W_K1", blank(1, g["resid"])), "head 1.0 puts only"),
    ],
    ids=["a ramp that outweighs the names", "head 1.0 reading nothing"],
)
def test_21_clumsier_shortcuts_fail_on_a_sentence(reference, edit, expect):
    line = key_line(checked(wrong(reference("21_ioi_mini"), edit)))
    assert expect in line, line


# ── 13: the query on pred:* ──────────────────────────────────────────────────────────────────────────────
def test_13_a_query_on_the_current_token_passes_the_behaviour_and_fails_the_mechanism(reference):
    result = checked(wrong(reference("13_copy_suppression"), query_on_token))
    assert [t.status for t in result.targets] == ["passed", "passed", "failed"]
    assert key_line(result) == (
        "✗ (c) what head 0.0 looks for follows the prediction pred:* (patched and zeroed): on 'a', head 0.0's "
        "attention does not depend on pred:*: with the embedding's write into pred:* taken from 'e', it still attends "
        "to key 0 '<bos>' (1.00) at query 1 'a', but the patch points to key 1 'a' (0.00 there, needs ≥ 0.9)"
    )


@pytest.mark.parametrize(
    "edit, expect",
    [
        (hedged_query, "with the embedding's write into pred:* taken from"),
        (token_backup, "with the embedding's write into pred:* zeroed, it still puts"),
        (lambda a, g: setattr(a, "params", {"s": 3}), "(a) pred:* after the head"),
        (
            lambda a, g: [a.W_Q.__setitem__((k, f"pred:{t}"), 0) for k, t in enumerate(g["TOKENS"])],
            "(a) pred:* after the head",
        ),
        (lambda a, g: a.W_K.__setitem__((5, "bos"), 0), "(a) pred:* after the head"),
    ],
    ids=["half from the token", "a backup from the token", "too little sharpness", "only the BOS row", "no BOS key"],
)
def test_13_wrong_queries_fail(reference, edit, expect):
    line = key_line(checked(wrong(reference("13_copy_suppression"), edit)))
    assert expect in line, line


def test_13_a_bos_default_that_reads_the_token_is_not_a_shortcut(reference):
    """A default on BOS is what a head does when it finds nothing; zeroing never asks it to lose BOS. (Every target
    passes; the declared reads still refuse the token read, which the reference's query does not make.)"""
    result = checked(wrong(reference("13_copy_suppression"), bos_sink_on_token))
    assert result.status == "error" and "W_Q reads tok:" in words.said(result)
    assert all(t.error is result.error for t in result.targets)  # every target passed: only the reads refuse it


# ── 07 and 15: the composition ──────────────────────────────────────────────────────────────────────────
@pytest.mark.parametrize(
    "edit",
    [
        keys_on_token,
        keys_shifted,
        query_on_prev,
        keys_on_position,
        lambda a, g: setattr(a, "W_O1", blank(g["resid"], 4)),
    ],
    ids=["keys on the token", "keys one letter off", "a query on prev", "keys on position", "head 0.0 writing nothing"],
)
def test_07_wrong_induction_heads_fail_and_the_mechanism_target_alone_too(reference, edit):
    trial = wrong(reference("07_induction_k_composition"), edit)
    assert checked(trial).status == "failing"
    assert alone(trial).status == "failed", "the mechanism target alone rejects it too"


@pytest.mark.parametrize(
    "edit",
    [first_on_keys, query_on_current, first_shifted, away_from_first, head_0_copies_itself],
    ids=[
        "first:* on the keys",
        "a query on the token",
        "one letter off",
        "away from the first token",
        "head 0.0 copying start",
    ],
)
def test_15_wrong_query_compositions_fail(reference, edit):
    trial = wrong(reference("15_q_composition"), edit)
    assert checked(trial).status == "failing"


def test_15_the_mechanism_target_alone_names_the_query_that_ignores_first(reference):
    result = alone(wrong(reference("15_q_composition"), query_on_current))
    assert result.status == "failed"
    assert "head 1.0's attention does not depend on first:*: with head 0.0's write into first:* taken from" in said(
        result
    )


# ── every reference passes, and says what it tried ───────────────────────────────────────────────────────────
@pytest.mark.parametrize("stem", sorted(MECHANISMS))
def test_each_reference_passes_its_mechanisms(reference, stem):
    attempt = reference(stem)
    assert len(mechanisms(attempt)) == MECHANISMS[stem]
    for n in range(MECHANISMS[stem]):
        result = alone(attempt, n)
        assert result.status == "passed", said(result)
        tried = result.interventions
        assert tried.patched >= 100 and tried.zeroed >= 50 and tried.queries > tried.patched
        assert f"{tried.patched:,} patches" in explain.words(tried)


# ── the patched forward pass ─────────────────────────────────────────────────────────────────────────────
@pytest.mark.parametrize(
    "stem, layer, part",
    [
        ("21_ioi_mini", -1, "attn"),
        ("21_ioi_mini", 0, "attn"),
        ("21_ioi_mini", 1, "mlp"),
        ("16_xor_mlp", 0, "attn"),
        ("16_xor_mlp", 0, "mlp"),
        ("19_balanced_parens", 0, "attn"),
    ],
)
def test_a_patch_of_nothing_is_the_plain_forward_pass(reference, stem, layer, part):
    """source == base: the writer's write minus itself is zero, and every later array is the plain run's."""
    attempt = reference(stem)
    model = attempt.model()
    inputs = attempt.puzzle.inputs.sample(40, seed=1)
    batch = [t for t in inputs if len(t) == len(inputs[0])] * 2
    plain = model.run(batch)
    edited = model.run_edited(plain, np.zeros_like(plain.resid_final), layer, part)
    for l in range(model.n_layers):
        for name in ("resid_post", "pattern"):
            a, b = getattr(plain.layers[l], name), getattr(edited.layers[l], name)
            if a is not None:
                assert np.allclose(a, b, rtol=0, atol=TOL, equal_nan=True), (l, name)
    if plain.logits is not None:
        assert np.abs(plain.logits - edited.logits).max() <= TOL


def test_an_edit_of_the_wrong_shape_or_place_is_one_line(reference):
    model = reference("21_ioi_mini").model()
    trace = model.run(["Ann and Bob then Bob gave to".split()])
    for delta, layer, part, said_ in [
        (np.zeros((1, 8, 3)), 0, "attn", "delta has shape (1, 8, 3); it needs"),
        (np.zeros((1, 8, 30)), 3, "attn", "no residual stream at layer 3"),
        (np.zeros((1, 8, 30)), 0, "mid", "part 'mid'"),
    ]:
        with pytest.raises(CircuitError) as e:
            model.run_edited(trace, delta, layer, part)
        assert said_ in str(e.value) and "\n" not in str(e.value)


def test_the_patch_moves_the_reader_where_the_source_points(reference):
    """21: dup taken from a sentence whose S2 is at 4 moves head 1.0 from its own S2 (5) to key 4."""
    attempt = reference("21_ioi_mini")
    model, target = attempt.model(), mechanisms(attempt)[0]
    base, source = "Ann and Bob then Bob gave to".split(), "Ann and Bob Bob then gave to".split()
    trace = model.run([base, source])
    wrote = target.contribution(trace) * target.directions(model)  # [2, T, d_model]: dup only
    assert np.flatnonzero(np.abs(wrote).sum((0, 1))).tolist() == [model.residual.labels.index("dup")]
    plain = model.run_edited(trace, wrote[[0]] - wrote[[0]], 0, "attn", rows=[0]).pattern(1, 0)[0, -1]
    moved = model.run_edited(trace, wrote[[1]] - wrote[[0]], 0, "attn", rows=[0]).pattern(1, 0)[0, -1]
    assert plain[5] > 0.99 and moved[4] > 0.99
    assert target.follows(base, source) == [None] * 6 + [3]  # key 3 in token positions: 4 with BOS


# ── a mechanism target is checked when it is made and when it runs ─────────────────────────────────────────
def test_a_depends_target_refuses_a_wrong_declaration_in_one_line(reference):
    follows = lambda b, s_: [None] * len(b)  # noqa: E731
    for kwargs, said_ in [
        (dict(reader=(1, 0), writer="head 0", into=["dup"]), 'writer is \'head 0\'; it needs "head L.H", "mlp L"'),
        (dict(reader="head 9", writer="head 0.0", into="dup"), "into is the string 'dup'"),
        (dict(reader=[1, 0], writer="head 0.0", into=["dup"]), "reader is [1, 0]; it needs an Attention target's"),
    ]:
        with pytest.raises(CircuitError) as e:
            Depends(follows=follows, **kwargs)
        assert said_ in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    "target, said_",
    [
        (
            Depends("no such label", "head 0.0", ["dup"], lambda b, s_: [None] * len(b)),
            "Depends: reader 'no such label' is the label of no Attention target of the puzzle",
        ),
        (
            Depends((1, 0), "head 0.0", ["nowhere:*"], lambda b, s_: [None] * len(b)),
            "Depends: into names 'nowhere:*', which is no direction of the residual stream",
        ),
        (
            Depends((0, 0), "head 1.0", ["s:*"], lambda b, s_: [None] * len(b)),
            "Depends: head 0.0 reads before head 1.0 writes",
        ),
        (Depends((1, 0), "head 0.0", ["dup"], lambda b, s_: [None] * len(b)), "checks nothing"),
        (
            Depends((1, 0), "head 0.0", ["dup"], lambda b, s_: [None] * (len(b) - 1) + [len(b) if b != s_ else None]),
            "Depends: follows('Cat', 'Bob')[0] is 1, needs a key position 0..0",
        ),
    ],
    ids=["unknown reader", "unknown direction", "reader before writer", "vacuous", "a key after the query"],
)
def test_a_puzzles_mistake_in_a_depends_target_is_one_error_line(reference, target, said_):
    attempt = reference("21_ioi_mini")
    with context():
        result = check_mechanism(target, attempt, attempt.model())
    assert result.status == "error" and said_ in str(result.error) and "\n" not in str(result.error)


def test_follows_is_validated_on_the_worked_examples(reference):
    from circuits.checking.validate import validate

    attempt = reference("21_ioi_mini")
    bad = Depends((1, 0), "head 0.0", ["dup"], lambda b, s_: [None])
    puzzle = copy.copy(attempt.puzzle)
    puzzle.targets = [*attempt.puzzle.targets, bad]
    with pytest.raises(CircuitError) as e:
        validate(puzzle, attempt.puzzle.build.__globals__, "21_ioi_mini.py")
    assert "targets[6] (Depends): follows(" in str(e.value) and "returned 1 entries for 7 tokens" in str(e.value)


def test_the_reader_may_be_named_by_its_attention_target(reference):
    attempt = reference("21_ioi_mini")
    label = next(t.label for t in attempt.puzzle.targets if isinstance(t, Attention) and t.layer == 1)
    named = Depends(label, "head 0.0", ["dup"], mechanisms(attempt)[0].follows)
    with context():
        assert check_mechanism(named, attempt, attempt.model()).status == "passed"
        assert (
            check_mechanism(named, wrong(attempt, latest_name()), wrong(attempt, latest_name()).model()).status
            == "failed"
        )


def test_bos_in_follows_needs_a_model_with_bos(reference):
    attempt = reference("15_q_composition")  # no BOS token
    target = Depends((1, 0), "head 0.0", ["first:*"], lambda b, s_: [None if b == s_ else -1 for _ in b])
    with context():
        result = check_mechanism(target, attempt, attempt.model())
    assert result.status == "error" and "follows gives −1 (BOS), but the model has no BOS token" in str(result.error)


# ── 06 (f), 10 and 28: the other mechanisms ──────────────────────────────────────────────────────────────
def query_on_own_position(a, g):
    """06 (f): the query also reads its own position (cos:2): with v:* zeroed it still finds a copy just before."""
    a.W_Q_f[0, "cos:2"] = g["s"] * sympy.sqrt(sympy.sqrt(2) / 4 + sympy.Rational(1, 2))


def query_from_the_far_pairs(a, g):
    """06 (f): the query reads the copied pairs 2 and 3 (v:4 … v:7), turned by pairs 0 and 1's angles."""
    a.W_Q_f = g["rotate"](g["SCRATCH"][4:], +1, g["s"])


def query_unturned(a, g):
    """06 (f): the copied position not turned forward: head 1.0 attends to the copy itself."""
    a.W_Q_f = g["rotate"](g["SCRATCH"][:4], 0, g["s"])


def keys_on_the_scratch(a, g):
    """06 (f): the keys read the scratch too, not their own position."""
    a.W_K_f = g["project"](g["SCRATCH"][:4])


def scratch_shifted(a, g):
    """06 (e): head 0.3 writes cos:i into v:2i+1 and sin:i into v:2i (swapped)."""
    a.W_O_e = g["project"]([g["SCRATCH"][k ^ 1] for k in range(8)]).T


def prev_keys_on_token(a, g):
    """10: keys on the token itself, not prev:*: every token finds itself."""
    K = blank(5, g["resid"])
    for k, t in enumerate("abcd"):
        K[k, f"tok:{t}"] = 1
    K[4, "bos"] = 1
    a.W_K = K


def prev_keys_shifted(a, g):
    """10: keys read prev:* one letter off."""
    for k, t in enumerate("abcd"):
        a.W_K[k, f"prev:{t}"], a.W_K[k, f"prev:{'abcd'[(k + 1) % 4]}"] = 0, 1


def query_on_prev_10(a, g):
    """10: the query reads prev:* (same predecessor), not the token."""
    for k, t in enumerate("abcd"):
        a.W_Q[k, f"tok:{t}"], a.W_Q[k, f"prev:{t}"] = 0, s


def bos_like_a_match_10(a, g):
    """10: the BOS row at s, not s/2: a copy ties with BOS."""
    for t in "abcd":
        a.W_Q[4, f"tok:{t}"] = s


def no_bos_row_10(a, g):
    """10: no BOS row: a new token spreads its attention over every key."""
    a.W_K[4, "bos"] = 0


def query_on_token_28(a, g):
    """28: the query reads the token, not its predecessor: an induction head (puzzle 07)."""
    for k, t in enumerate("abcd"):
        a.W_Q1[k, f"prev:{t}"], a.W_Q1[k, f"tok:{t}"] = 0, s


def keys_on_token_28(a, g):
    """28: the keys read the token, not its predecessor."""
    for k, t in enumerate("abcd"):
        a.W_K1[k, f"prev:{t}"], a.W_K1[k, f"tok:{t}"] = 0, 1


def keys_shifted_28(a, g):
    """28: keys read prev:* one letter off, the query does not."""
    for k, t in enumerate("abcd"):
        a.W_K1[k, f"prev:{t}"], a.W_K1[k, f"prev:{'abcd'[(k + 1) % 4]}"] = 0, 1


def head_0_copies_bos_28(a, g):
    """28: head 0.0 copies nothing but BOS-ness into prev:a."""
    a.W_V0 = blank(4, g["resid"])
    a.W_V0[0, "bos"] = 1


def bos_like_a_match_28(a, g):
    """28: the BOS row at s: a letter that followed the predecessor before ties with BOS."""
    for i in range(g["N_CTX"]):
        a.W_Q1[4, f"pos:{i}"] = s


@pytest.mark.parametrize(
    "stem, edit",
    [
        ("06_induction_pointer", query_on_own_position),
        ("06_induction_pointer", query_from_the_far_pairs),
        ("06_induction_pointer", query_unturned),
        ("06_induction_pointer", keys_on_the_scratch),
        ("06_induction_pointer", scratch_shifted),
        ("10_seen_before", prev_keys_on_token),
        ("10_seen_before", prev_keys_shifted),
        ("10_seen_before", query_on_prev_10),
        ("10_seen_before", bos_like_a_match_10),
        ("10_seen_before", no_bos_row_10),
        ("28_same_predecessor", query_on_token_28),
        ("28_same_predecessor", keys_on_token_28),
        ("28_same_predecessor", keys_shifted_28),
        ("28_same_predecessor", head_0_copies_bos_28),
        ("28_same_predecessor", bos_like_a_match_28),
    ],
    ids=lambda x: x if isinstance(x, str) else x.__name__,
)
def test_wrong_answers_to_the_other_mechanism_puzzles_fail(reference, stem, edit):
    assert checked(wrong(reference(stem), edit)).status == "failing"


def test_06_a_query_that_also_reads_its_own_position_fails_only_the_mechanism(reference):
    """An edit the audit once allowed (every (copy, query) pair passes (f)): zeroing v:* shows the query's own
    position alone finds a copy right before it."""
    trial = wrong(reference("06_induction_pointer"), query_on_own_position)
    result = alone(trial)
    assert result.status == "failed" and isinstance(result.failure.finding, Unbroken)
    assert "with head 0.3's write into v:* zeroed, it still puts 1.00 on its target key 3 'b' at query 3 'b'" in said(
        result
    )
