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


# ── curriculum A (puzzles 09–15); their allow-lists are in circuits/checking/allowed_mutants.py ──────────
PUZZLES += ["09_duplicate_token", "10_seen_before", "11_copying_head", "12_successor_head", "13_copy_suppression",
            "14_skip_trigram", "15_q_composition"]

# --- curriculum B (puzzles 16-21): its allow-list and puzzles, kept apart to ease merging ----------------------
IOI_TEMPLATE = ("head 0.0's rows 4–15 only say 'not myself' (query pos:i against key pos:i), and a repeated name "
                "stands only at positions 4–9: this edit moves scores only where no repeated name stands, at keys the "
                "query cannot see (later positions), or toward BOS for a query whose target is BOS; every sentence "
                "of the template (the puzzle's whole input space, 144) is checked: another correct answer")
ALLOWED_B: dict[str, list[tuple[str, str]]] = {
    "16_xor_mlp": [
        ("W_in[[]*, 3] 0 → *", "the MLP reads xor, which only the MLP itself writes: zero at its input"),
    ],
    "17_kv_memory": [
        ("W_in[[]*, city:*] 0 → *", "the MLP reads city:, which only the MLP itself writes: zero at its input"),
        ("W_in rows 0 ↔ 1", "units 0 and 1 (Ada Lovelace, Alan Turing) both write city:London: swapping their keys "
                            "stores the same two facts"),
    ],
    "18_histogram": [
        ("W_Q[[]*, 4] 0 → s", "only the BOS query reads bos, and BOS sees one key; nothing is asked at BOS"),
        ("s × 10", "a larger s only shrinks what the unpicked keys leak (e^−s of a picked key's weight)"),
    ],
    "20_find_min": [
        ("W_Q[[]0, [02]] 0 → s", "the query becomes s·(1 + its value or position) ≥ s, a positive factor on all of "
                                "its scores: the same order, only sharper"),
        ("W_K[[]0, 1] 0 → -1", "adds the same −s to every key's score, which the softmax ignores"),
        ("whole answer × 10", SCALED_UP),
        ("s × 10", SCALED_UP),
    ],
    "19_balanced_parens": [
        ("W_V0[[]0, [3456]] 0 → *", "head 0.0 reads bal/neg/ever/balanced, which only later stages write: zero there"),
        ("W_in0[[]*, [456]] 0 → *", "MLP 0 reads neg/ever/balanced, which only it and later stages write: zero there"),
        ("W_V1[[]0, [56]] 0 → *", "head 1.0 reads ever/balanced, which only later stages write: zero there"),
        ("W_in1[[]0, 6] 0 → *", "MLP 1 reads balanced, which only it writes: zero at its input"),
        ("W_in1[[]0, 0] 0 → -420", "a prefix that ends in ( is never balanced (the balance was −1 just before, or is "
                                  "now > 0): pushing the unit down there changes nothing"),
        ("W_in1[[]0, 4] 0 → -420", "neg = 1 only where ever ≥ 1/(i + 1) already holds the unit at 0"),
        ("W_in1 columns 1 ↔ 2", "close replaces one as the unit's +1: every non-empty balanced prefix ends in ), and "
                                "where close is 0 the −420·ever or −20·bal term already holds the unit at 0"),
    ],
    "21_ioi_mini": [
        *((f"W_[QK]{h}[[]*, {d}:*] 0 → *", f"head {h}.0 reads {d}:, which only later heads write: zero at its input")
          for h, d in ((0, "s"), (0, "out"), (1, "s"), (1, "out"), (2, "out"))),
        ("W_[QK]0[[]*, dup] 0 → *", "head 0.0 reads dup, which only head 0.0 itself writes: zero at its input"),
        ("W_[QK]0 columns bos ↔ pos:0", "BOS always stands at position 0: bos and pos:0 are the same on every input"),
        ("W_Q0[[]8, bos] 0 → s", "only the BOS query reads bos, and BOS sees one key"),
        ("W_Q0[[]4, tok:and] 0 → s", "row 4 meets key pos:0, which is BOS: 'and' (whose target is BOS) only gains on it"),
        *((pattern, IOI_TEMPLATE) for pattern in (
            "W_[QK]0[[]*, pos:*", "W_[QK]0 rows 14 ↔ 15", "W_[QK]0 columns pos:1[01] ↔ *",
            "W_K0[[]3, pos:10] 0 → 1", "W_K0[[][4-7], tok:*] 0 → 1")),
        ("W_Q1[[]0, *] 0 → s", "W_K1 reads dup only, so W_Q1's one row only sets how much 'to' prefers a key with dup: "
                              "at 'to' an added entry reads 0 (another tok:, bos, pos:0–5, s:, out:), ≈ 0 (dup) or "
                              "its own position (×2: sharper); no other query has a target"),
        *((f"W_Q2[[]*, {d}] 0 → *", "head 2.0 has a target only at 'to', at position 6–11, where this direction is 0 "
                                    "(dup: ≈ e^−10, as 'to' attends to BOS in head 0.0)")
          for d in ("tok:[ABCD]??", "tok:and", "tok:then", "tok:gave", "bos", "pos:[0-5]", "dup")),
        ("W_K2[[][1-4], *] 0 → 1", "rows 1–4 meet the query −2s·s:x, non-zero at 'to' only in the subject's row: the "
                                  "1 lowers by 2s keys that are never the IO (a filler, BOS, positions other than 1 "
                                  "and 3, the second S via dup; out: is 0 at layer 2)"),
        ("W_K2[[]0, pos:1] 0 → 1", "raises key 1 by s: as the IO it only gains; as the first S it scores s − 2s + s = "
                                  "0, still s below the IO"),
        ("whole answer × 10", SCALED_UP),
        ("s × 10", SCALED_UP),
    ],
}
ALLOWED.update(ALLOWED_B)
PUZZLES += ["16_xor_mlp", "17_kv_memory", "18_histogram", "19_balanced_parens", "20_find_min", "21_ioi_mini"]


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
