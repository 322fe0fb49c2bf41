"""The audit's equivalence rules (circuits/audit/equivalence.py): each spares a planted mutant that changes nothing,
and refuses its near miss, an edit that looks alike but changes what some input computes."""

import numpy as np
import pytest
from helpers import solution

from circuits import MLP, Basis, Head, Layer, Model, Vocab
from circuits.audit.equivalence import Reach, same_on, spared

RESID = ["a", "b", "bos", "pos:0", "pos:1", "pos:2", "pos:3", "seen"]  # d_model = 8; seen: written by head 0.0
N_CTX = 4
BATCH = [list(w) for w in ("a", "ab", "ba", "bb", "aab", "aba", "abb", "bab", "bba", "bbb", "aaa")]


def matrix(rows: int, entries: dict) -> np.ndarray:
    """A [rows, d_model] matrix with the given (row, direction) entries."""
    m = np.zeros((rows, len(RESID)))
    for (r, d), v in entries.items():
        m[r, RESID.index(d)] = v
    return m


def model(q0=None, k0=None, v0=None, o0=None, q1=None, k1=None, w_in=None, bos=True, window=None, mask="causal"):
    """Two layers over tokens a, b (after BOS at position 0 when `bos`): head 0.0 attends to a's and writes `seen`,
    head 1.0 reads it; an MLP in layer 1 writes `seen` too. Each matrix can be replaced to plant an edit."""
    vocab = Vocab.chars_of("ab", bos="<bos>" if bos else None)
    W_E = np.zeros((len(RESID), len(vocab)))
    for t in vocab.tokens:
        W_E[RESID.index("bos" if t == "<bos>" else t), vocab.id(t)] = 1
    W_pos = np.zeros((len(RESID), N_CTX))
    for p in range(N_CTX):
        W_pos[RESID.index(f"pos:{p}"), p] = 1
    W_O = matrix(1, {(0, "seen"): 1}).T if o0 is None else o0  # [d_model, 1]
    head0 = Head(
        W_Q=matrix(2, {(0, "a"): 1, (0, "b"): 1}) if q0 is None else q0,
        W_K=matrix(2, {(0, "a"): 4}) if k0 is None else k0,
        W_V=matrix(1, {(0, "a"): 1}) if v0 is None else v0,
        W_O=W_O,
        window=window,
        mask=mask,
    )
    head1 = Head(
        W_Q=matrix(1, {(0, "a"): 1}) if q1 is None else q1,
        W_K=matrix(1, {(0, "seen"): 3}) if k1 is None else k1,
        W_V=matrix(1, {(0, "b"): 1}),
        W_O=matrix(1, {(0, "b"): 1}).T,
    )
    mlp = MLP(W_in=matrix(1, {(0, "b"): 1}) if w_in is None else w_in, W_out=matrix(1, {(0, "seen"): 1}).T)
    return Model(vocab, W_E, W_pos, layers=[Layer([head0]), Layer([head1], mlp=mlp)], residual=Basis(RESID))


def judged(mutant: Model, reference: Model | None = None):
    """The rules that spare `mutant` against `reference` (the plain model, else), confirmed on every input of 1 to
    3 letters when spared: a rule that spares must leave every pattern, the residual stream and the logits alone."""
    reference = reference or model()
    rules = spared(reference, mutant, Reach(reference, N_CTX))
    if rules is not None:
        assert same_on(reference, mutant, BATCH), f"{rules}: spared, but not the same on the inputs"
    return rules


def differs(mutant: Model, reference: Model | None = None) -> bool:
    """The near miss is really not equivalent: some input's pattern, residual stream or logits change."""
    return not same_on(reference or model(), mutant, BATCH)


def with_entry(base: np.ndarray, entries: dict) -> np.ndarray:
    out = base.copy()
    for (r, d), v in entries.items():
        out[r, RESID.index(d)] = v
    return out


Q0 = matrix(2, {(0, "a"): 1, (0, "b"): 1})
K0 = matrix(2, {(0, "a"): 4})


# --- 1. BOS-only query rows --------------------------------------------------------------------------------------
def test_a_query_read_only_bos_makes_is_spared_by_the_bos_only_query_rule():
    """bos is 1 at position 0 only, whose query sees one key (itself): any score it adds changes no pattern."""
    assert judged(model(q0=with_entry(Q0, {(0, "bos"): 5}))) == ("BOS-only query",)
    assert judged(model(q0=with_entry(Q0, {(1, "pos:0"): 5}), k0=with_entry(K0, {(1, "b"): 1}))) == ("BOS-only query",)


def test_near_miss_a_query_read_every_letter_makes_is_not_spared():
    mutant = model(q0=with_entry(Q0, {(0, "a"): -3}))  # a's query now avoids a's
    assert judged(mutant) is None and differs(mutant)


def test_near_miss_the_bos_query_of_a_bidirectional_head_sees_every_key_and_is_not_spared():
    reference = model(mask="bidirectional")
    mutant = model(q0=with_entry(Q0, {(0, "bos"): 5}), mask="bidirectional")
    assert judged(mutant, reference) is None and differs(mutant, reference)


# --- 2. entries the mask (or a window) hides -------------------------------------------------------------------
def test_a_query_at_position_1_reading_keys_at_position_2_is_spared_as_masked():
    mutant = model(q0=with_entry(Q0, {(1, "pos:1"): 5}), k0=with_entry(K0, {(1, "pos:2"): 1}))
    assert judged(mutant) == ("masked",)


def test_a_key_the_window_hides_is_spared_as_masked_and_without_the_window_it_is_not():
    edit = dict(q0=with_entry(Q0, {(1, "pos:3"): 5}), k0=with_entry(K0, {(1, "pos:1"): 1}))
    assert judged(model(window=2, **edit), model(window=2)) == ("masked",)  # 3 − 1 = 2: outside a window of 2
    mutant = model(**edit)  # the causal mask alone shows key 1 to query 3
    assert judged(mutant) is None and differs(mutant)


def test_near_miss_a_key_before_its_query_is_seen_and_not_spared():
    mutant = model(q0=with_entry(Q0, {(1, "pos:2"): 5}), k0=with_entry(K0, {(1, "pos:1"): 1}))
    assert judged(mutant) is None and differs(mutant)


# --- 3. directions nothing writes before that layer ------------------------------------------------------------
def test_reads_of_a_direction_nothing_has_written_yet_are_spared():
    """seen is written by head 0.0 and layer 1's MLP: head 0.0 and the MLP itself read 0 there."""
    assert judged(model(v0=matrix(1, {(0, "a"): 1, (0, "seen"): 1}))) == ("nothing writes",)
    assert judged(model(q0=with_entry(Q0, {(0, "seen"): 2}))) == ("nothing writes",)
    assert judged(model(k0=with_entry(K0, {(0, "seen"): 2}))) == ("nothing writes",)


def test_near_miss_the_same_read_after_a_head_has_written_it_is_not_spared():
    """Layer 1's MLP reads seen after head 0.0 wrote it (and head 1.0's query likewise)."""
    w_in = matrix(1, {(0, "b"): 1, (0, "seen"): 2})
    assert judged(model(w_in=w_in)) is None and differs(model(w_in=w_in))
    q1 = matrix(1, {(0, "a"): 1, (0, "seen"): 2})
    assert judged(model(q1=q1)) is None and differs(model(q1=q1))


# --- 4. directions always on together --------------------------------------------------------------------------
def swapped(m: np.ndarray, a: str, b: str) -> np.ndarray:
    out = m.copy()
    i, j = RESID.index(a), RESID.index(b)
    out[:, [i, j]] = out[:, [j, i]]
    return out


def test_a_swap_of_bos_and_pos_0_is_spared_as_always_together():
    """BOS stands at position 0 and nowhere else: bos and pos:0 are equal on every residual vector."""
    k = matrix(2, {(0, "a"): 4, (1, "bos"): 2})
    q = with_entry(Q0, {(1, "a"): 1})
    reference = model(q0=q, k0=k)
    assert judged(model(q0=q, k0=swapped(k, "bos", "pos:0")), reference) == ("always together",)


def test_near_miss_an_intervention_that_zeroes_bos_alone_parts_it_from_pos_0_and_the_swap_is_not_spared():
    """A Depends target zeroing what the embedding writes into bos makes bos 0 where pos:0 is 1: not equal there."""
    k = matrix(2, {(0, "a"): 4, (1, "bos"): 2})
    q = with_entry(Q0, {(1, "a"): 1})
    reference, mutant = model(q0=q, k0=k), model(q0=q, k0=swapped(k, "bos", "pos:0"))
    apart = [np.array([d == "bos" for d in RESID])]
    assert spared(reference, mutant, Reach(reference, N_CTX, apart)) is None
    assert spared(reference, mutant, Reach(reference, N_CTX)) == ("always together",)


def test_near_miss_without_bos_position_0_holds_any_letter_and_the_swap_is_not_spared():
    k = matrix(2, {(0, "a"): 4, (1, "a"): 2})
    q = with_entry(Q0, {(1, "a"): 1})
    reference = model(q0=q, k0=k, bos=False)
    mutant = model(q0=q, k0=swapped(k, "a", "pos:0"), bos=False)  # a is also at positions 1–3; pos:0 is not
    assert judged(mutant, reference) is None and differs(mutant, reference)


def test_near_miss_a_value_read_is_judged_on_the_values_themselves_not_through_w_o():
    """A head whose W_O is zero still has values a target can read (HeadZ): a change of them is never spared."""
    silent = np.zeros((len(RESID), 1))
    reference, mutant = model(o0=silent), model(v0=matrix(1, {(0, "b"): 1}), o0=silent)
    assert judged(mutant, reference) is None


# --- the product the model uses, unchanged ---------------------------------------------------------------------
def test_a_query_row_against_an_all_zero_key_row_leaves_the_scores_and_is_spared():
    assert judged(model(q0=with_entry(Q0, {(1, "a"): 7}))) == ("product unchanged",)


def test_an_edit_of_what_a_head_writes_is_never_spared():
    """Even a write into a direction nothing reads: writes change the residual stream, which the rules take as given."""
    assert judged(model(o0=matrix(1, {(0, "seen"): 1, (0, "pos:3"): 1}).T)) is None


# --- the audit: rules before the allow-list, said per rule -----------------------------------------------------
@pytest.fixture(scope="module")
def audit_09():
    from circuits.audit.author import run

    return run(solution("09_duplicate_token"))


def test_the_audit_spares_09s_equivalent_edits_by_rule_and_says_so_per_rule(audit_09):
    from circuits.display.json import audit_json
    from circuits.display.words import audit_lines

    r = audit_09.result
    rules = dict(r.spared)
    assert rules["W_Q[5, pos:0] 0 → s"] == "BOS-only query"
    assert rules["W_Q[6, pos:1] 0 → s"] == "masked"
    assert rules["W_K columns bos ↔ pos:0"] == "always together"
    assert not r.survived and r.kill_rate == 1.0
    lines = audit_lines(audit_09)
    assert "spared by rule: 13 (10 masked, 1 BOS-only query, 1 always together, 1 sharper)" in lines
    assert not any("pos:1] 0 → s" in line for line in lines)  # one line per rule, not per mutant
    assert all(len(line) <= 80 for line in lines)
    assert "  spared: W_Q[6, pos:1] 0 → s (masked)" in audit_lines(audit_09, verbose=True)
    said = audit_json(audit_09)
    assert said["spared_by_rule"] == {"masked": 10, "BOS-only query": 1, "always together": 1, "sharper": 1}
    assert {"mutant": "W_K columns bos ↔ pos:0", "rules": "always together"} in said["spared"]


def test_every_mutant_the_rules_spare_in_09_computes_what_the_reference_does_on_a_thousand_inputs(audit_09):
    """The rules' proof, checked on the audit's random inputs, the worked examples and every small input."""
    import copy

    from circuits.audit.mutants import mutants
    from circuits.checking.plan import Plan

    attempt = solution("09_duplicate_token")
    plan = Plan.of(attempt.puzzle, 1000)
    reference = attempt.model()
    batch = plan.examples + plan.sample + plan.small(reference, attempt.puzzle.targets).inputs
    names = {n for n, rule in audit_09.result.spared if rule != "sharper"}  # s × 10 is sharper, not the same
    for m in mutants(copy.copy(attempt)):
        if m.name in names:
            assert same_on(reference, attempt.model(m.answer), batch), m.name


def test_the_directions_a_puzzles_interventions_patch_are_kept_apart():
    """21's Depends targets patch what heads write into some directions: those masks reach the rules."""
    from circuits.audit.equivalence import interventions

    attempt = solution("21_ioi_mini")
    reference = attempt.model()
    masks = interventions(attempt.puzzle, reference)
    assert masks and all(m.shape == (reference.d_model,) and m.any() and not m.all() for m in masks)
    assert interventions(solution("09_duplicate_token").puzzle, reference) == []  # no intervention in 09


def test_the_puzzles_own_sharpness_scaled_up_is_spared_as_sharper_and_scaled_down_is_not(audit_09):
    """`s × 10` is an answer 09's worksheet asks for (every answer must hold at 3×–100× its s): never a wrong
    circuit, spared by the rule "sharper"; `s × 0.1` is killed; a matrix named as the sharpness is no symbol."""
    import types

    from circuits.audit.run import sharper

    r = audit_09.result
    assert dict(r.spared)["s × 10"] == "sharper" and "s × 0.1" in r.killed
    assert sharper(solution("09_duplicate_token"), "s × 10") and not sharper(solution("09_duplicate_token"), "s × 0.1")
    named_matrix = types.SimpleNamespace(puzzle=solution("01_consonants").puzzle)  # sharpness=["W_Q"], an answer name
    assert not sharper(named_matrix, "W_Q × 10") and not sharper(named_matrix, "whole answer × 10")


def test_every_line_of_a_verbose_audit_fits_80_columns():
    """`circuits audit -v`: a long path, a long mechanism label and its interventions, long allow-list reasons and
    spared names each wrap (a word is never broken); before, these lines ran to 211 columns (06's reasons)."""
    from circuits.audit.author import AuthorAudit
    from circuits.audit.run import Audit
    from circuits.display.words import audit_lines

    why = "heads 0.1 and 0.2 read positions only, so their pattern is the same on every input, " * 3
    result = Audit(
        "06_induction_pointer",
        killed=["W_Q[0, tok:a] × −1"],
        allowed=[("W_Q_b[2, cos:1] → 0", why)],
        spared=[("W_Q_b[2, cos:1] → 0 " + "and more " * 10, "masked, BOS-only query, always together")],
    )
    audit = AuthorAudit(
        "/home/learner/courses/interpretability/solutions/06_induction_pointer.py",
        result,
        stale=[f"W_Q[{i}, tok:a]: × −1" for i in range(12)],
        mechanisms=[("(f) head 1.0's query reads the copy's position from head 0.3's scratch v:* " * 2, "x" * 10)],
    )
    lines = audit_lines(audit, verbose=True)
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    text = " ".join(" ".join(lines).split())
    assert " ".join(why.split()) in text and "W_Q[11, tok:a]: × −1" in text  # all said, nothing dropped
    assert lines[1] == "  /home/learner/courses/interpretability/solutions/06_induction_pointer.py"  # whole
