"""Mutation testing: the checker rejects every small wrong edit of every reference answer.

A mutant may pass only if the reviewed allow-list (circuits/checking/allowed_mutants.py, which `circuits audit`
reads too) says why it is not a wrong circuit: the edit is
multiplied by a zero (exactly equivalent), or the check covers every input the model can take and
the edited answer meets the worksheet on all of them (another correct answer, not a missed bug).
A mutant that passes for any other reason means a target is too loose: tighten the target.
"""

import time

import pytest
from conftest import MUTATION_AUDITS
from helpers import solution

from circuits.checking.allowed_mutants import ALLOWED, POINTER, allowed_for
from circuits.checking.mutants import audit, matches, mutants, rejects

PUZZLES = ["00_attention", "01_consonants", "02_first_consonant", "03_uniform", "04_previous_token",
           "05_virtual_head", "06_induction_pointer", "07_induction_k_composition", "08_induction_repeated"]


# ── curriculum A (puzzles 09–15): kept in one block to ease merging ─────────────────────────────────────
BOS_QUERY_ONLY = "only the BOS query reads bos; BOS sees one key (itself), which gets all the attention"
ALLOWED_CURRICULUM_A: dict[str, list[tuple[str, str]]] = {
    "09_duplicate_token": [
        ("whole answer × 10", SCALED_UP),
        ("s × 10", SCALED_UP),
        ("W_Q[[]*, bos] 0 → s", BOS_QUERY_ONLY),
        ("W_Q[[]5, pos:0] 0 → s", "pos:0 is BOS's position, and BOS sees one key (itself)"),
        *((f"W_Q[[]{n + 5}, pos:{n}] 0 → s", "the row's key reads pos:n+1, after the query at n: masked, never seen")
          for n in range(1, 11)),
        ("W_K columns bos ↔ pos:0", "bos and pos:0 are both 1 at position 0 (BOS) and 0 everywhere else"),
    ],
    "10_seen_before": [
        ("s × 10", SCALED_UP),
        ("W_Q[[]*, bos] 0 → s", BOS_QUERY_ONLY),
        ("W_[QKV][[]*, seen] 0 → *", "head 1.0 reads seen, which only head 1.0 itself writes: zero at its input"),
        *((f"W_O[[]{d}, 0] 0 → 1", f"layer 1 is the last and the check reads seen only: {d} is never read after it")
          for d in ("tok:*", "prev:*", "bos")),
    ],
    "11_copying_head": [
        ("whole answer × 10", "logits × 100: the attended token, already the top guess, only gets surer"),
        ("γ × 10", "logits × 10: the attended token, already the top guess, only gets surer"),
        ("W_V[[]*, out:*] 0 → 1", "the head reads out:, which only the head itself writes: zero at its input"),
        ("W_O[[]tok:*, *] 0 → γ", "W_U reads out: only, and the head is the last layer: tok: is never read after it"),
        *((f"W_V[[]0, tok:{t}] → 0", (f"{t} is written as (0, ±.951)γ, still nearest its own corner: {t} keeps the "
                                      "top logit, by .345γ: log-prob −0.031 ≥ −0.1, copying score 1.0. The "
                                      "logits depend on the attended token alone (5 cases, every one checked): "
                                      "another correct answer")) for t in "be"),
    ],
    "12_successor_head": [
        ("whole answer × 10", "logits × 100: the successor, already the top guess, only gets surer"),
        ("γ × 10", "logits × 10: the successor, already the top guess, only gets surer"),
        ("W_V[[]*, out:*] 0 → 1", "the head reads out:, which only the head itself writes: zero at its input"),
        ("W_O[[]mod:*, *] 0 → *", "W_U reads out: only, and the head is the last layer: mod: is never read after it"),
    ],
    "13_copy_suppression": [
        ("s × 10", SCALED_UP),
        ("W_Q[[]*, bos] 0 → s", BOS_QUERY_ONLY),
        *((f"W_O[[]{d}, *] 0 → -1", f"W_U and the check read pred: only, and the head is the last layer: {d} is "
                                     "never read after it") for d in ("tok:*", "bos")),
    ],
    "14_skip_trigram": [
        ("whole answer × 10", "scores × 100 and logits × 100: the right keys and the right completion only get surer"),
        ("s × 10", SCALED_UP),
        ("γ × 10", "logits × 10 where a head attends to keep: the right completion only gets surer"),
        ("W_[QKV][12][[]*, out:*] 0 → *", "layer 0 reads out:, which only layer 0 itself writes: zero at its input"),
        ("W_Q[12][[]1, bos] 0 → s", BOS_QUERY_ONLY),
        ("W_O[12][[]tok:*, 0] 0 → γ", "W_U reads out: only, and layer 0 is the last: tok: is never read after it"),
        ("W_O[12][[]bos, 0] 0 → γ", "W_U reads out: only, and layer 0 is the last: bos is never read after it"),
        ("W_V[12][[]0, tok:*] 0 → 1", ("(a) and (b) hold each head on keep or BOS (≥ 0.9; the reference ≥ 0.9995, "
                                      "which these edits do not change): another word's value is weighted by "
                                      "≤ 5e-4, moving a logit by ≤ 0.005")),
    ],
    "15_q_composition": [
        ("s × 10", SCALED_UP),
        ("W_V0[[]*, first:*] 0 → 1", "layer 0 reads first:, which only layer 0 itself writes: zero at its input"),
        ("W_K1[[]*, first:*] 0 → 1", ("first: holds the same value at every position (head 0.0 attends to position "
                                     "0 from all of them): every key gains the same score, which the softmax ignores")),
        *((f"W_O0[[]{d}, *] 0 → 1", (f"head 0.0 writes the same {d} at every position: every key of head 1.0 gains "
                                     "the same score (s or −s/2), which the softmax ignores; (a) reads first: only"))
          for d in ("tok:*", "start")),
        ("W_Q1[[]4, start] 0 → s", "only the query at position 0 reads start, and it sees one key (itself)"),
    ],
}
ALLOWED.update(ALLOWED_CURRICULUM_A)
PUZZLES += ["09_duplicate_token", "10_seen_before", "11_copying_head", "12_successor_head", "13_copy_suppression",
            "14_skip_trigram", "15_q_composition"]


@pytest.mark.parametrize("stem", PUZZLES)
def test_the_checker_kills_every_non_equivalent_mutant(stem, request):
    attempt = solution(stem)
    result = audit(attempt, allowed_for(attempt))
    request.config.stash[MUTATION_AUDITS].append(result)
    print(f"\n{result.describe()}")
    for name, why in result.allowed:
        print(f"  allowed: {name}: {why}")
    assert not result.survived, f"{stem}: these wrong answers pass the checker: {result.survived}"
    stale = [p for p, _ in ALLOWED.get(stem, ()) if not any(matches(n, p) for n, _ in result.allowed)]
    assert not stale, f"{stem}: allow-list entries that no surviving mutant needs (remove them): {stale}"


@pytest.mark.parametrize("stem", ["01_consonants", "08_induction_repeated"])
def test_mutants_cover_every_non_zero_entry(stem):
    attempt = solution(stem)
    names = {m.name for m in mutants(attempt)}
    from circuits.model.weights import raw_array as _raw

    for matrix in attempt.puzzle.answer:
        raw = _raw(getattr(attempt.answer, matrix))
        nonzero = sum(1 for x in raw.flat if not x == 0)
        assert sum(1 for n in names if n.startswith(f"{matrix}[") and n.endswith("× −1")) == nonzero


def test_the_fast_check_is_fast():
    start = time.perf_counter()
    audit(solution("01_consonants"))
    assert time.perf_counter() - start < 10


def test_06_allowed_pointer_edits_hold_at_every_copy_and_query():
    """The POINTER reason, checked: every allowed edit of head 1.0 attends right for each copy m < query q ≤ 15."""
    import copy

    from circuits.checking.checker import evaluate

    attempt = solution("06_induction_pointer")
    f = next(t for t in attempt.puzzle.targets if t.label.startswith("(f)"))
    filler = "bcd"
    batch = [[("a" if i in (m, q) else filler[i % 3]) for i in range(q + 1)] for q in range(1, 16) for m in range(q)]
    pointer = [p for p, why in ALLOWED["06_induction_pointer"] if why == POINTER]
    edits = [m for m in mutants(attempt) if any(matches(m.name, p) for p in pointer) and not rejects(attempt, m.answer)]
    assert len(edits) >= 20  # the ones the checker lets through
    for m in edits:
        trial = copy.copy(attempt)
        trial.answer = m.answer
        ok, worst = evaluate(trial.model(), [f], batch)
        assert ok.all(), f"{m.name}: head 1.0 misses the key after the copy, worst {worst.min():.3f}"
