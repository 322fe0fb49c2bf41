"""The reviewed allow-lists of mutation testing: per puzzle, the mutants that may pass and why each is not a wrong circuit.

A mutant may pass only if this list says why: the edit is multiplied by a zero (exactly equivalent),
or the check covers every input the model can take and the edited answer meets the worksheet on all
of them (another correct answer, not a missed bug). Read by tests/test_mutants.py and `circuits audit`;
a puzzle outside this project lists its own as ALLOWED_MUTANTS in its reference solution.
"""

SCALED_UP = "more sharpness only raises attention on the targets (lower bounds); the values it writes are unchanged"
WHOLE_CONTEXT = ("the heads read positions only and every length up to n_ctx is checked, so passing means the "
                 "pattern is right at every position the model has: another correct answer")

POSITION_ONLY = ("heads 0.1 and 0.2 read positions only, so their pattern is the same on every input, and inputs "
                 "of every length up to n_ctx = 16 are checked: passing means right at every query and key, "
                 "another correct answer")
POINTER = ("head 1.0's pattern is a function of the copied position and the query's position only, and the "
           "check covers every (copy, query) pair (the Copies family): another correct answer")

ALLOWED: dict[str, list[tuple[str, str]]] = {
    "02_first_consonant": [
        ("W_Q[0, 2] 0 → 1", "the query reads `first`, set only at position 0, whose one visible key gets all the "
                           "attention whatever its score"),
    ],
    "03_uniform": [
        ("W_Q[[]0, *] 0 → 1", "W_K is all zero, so every score stays 0 and the pattern stays uniform"),
        ("W_K[[]0, *] 0 → 1", "W_Q is all zero, so every score stays 0 and the pattern stays uniform"),
    ],
    "04_previous_token": [
        ("whole answer × 10", SCALED_UP),
        ("s × 10", SCALED_UP),
        *((name, WHOLE_CONTEXT) for name in [
            "W_Q_self[1, sin:1] 0 → s", "W_K_self[3, sin:0] 0 → 1", "W_Q_prev[0, sin:0] × −1", "W_Q_prev[0, sin:0] → 0",
            "W_Q_prev[1, cos:0] × −1", "W_Q_prev[1, cos:0] → 0", "W_Q_prev[1, sin:1] 0 → s*cos(pi/32)",
            "W_K_prev[3, sin:0] 0 → 1"]),
    ],
    "06_induction_pointer": [
        ("s × 10", SCALED_UP),
        ("W_[QKV]_[abcde][[]*, v:*] 0 → *", "layer 0 reads v:, which only head 0.3 (layer 0) writes: zero at its input"),
        ("W_[QK]_[bc][[]*, [cs][oi][sn]:*", POSITION_ONLY),
        ("W_Q_a[[]*, [cs][oi][sn]:[123]] 0 → s", ("adds s·(a position number, |·| ≤ 0.8) to every key holding the "
                                                "row's token alike: those keys still tie, and a match still leads the "
                                                "rest by ≥ 0.2·s = 12, so ≤ 15e^−12 of the attention leaves it")),
        *((f"W_Q_f[[]{r}, {d}] → 0", POINTER) for r, d in ((0, "v:1"), (1, "v:0"), (2, "v:2"), (2, "v:3"),
                                                            (3, "v:2"), (3, "v:3"))),
        ("W_Q_f[[]*, [cs][oi][sn]:*] 0 → *", POINTER),
        ("W_Q_f[[]*, v:[4567]] 0 → *", POINTER),
        ("W_K_f[[]*, [cs][oi][sn]:*", POINTER),
        ("W_K_f[[]*, v:[4567]] 0 → 1", ("moves each key's score by ≤ 0.8·s × 0.4 = 0.32·s, below half the 0.8·s by "
                                        "which the key after the copy leads (1.64 vs 0.84): it keeps ≥ 1 − 15e^−9.6")),
    ],
    "07_induction_k_composition": [
        ("whole answer × 10", SCALED_UP),
        ("s × 10", SCALED_UP),
        ("W_[QKV]1[[]*, prev:*] 0 → *", "layer 0 reads prev:, which only layer 0 itself writes: zero at its input"),
        ("W_Q[12][[]*, bos] 0 → *", "only the BOS query reads bos, and BOS sees one key, which gets all the attention"),
        ("W_O1[[]bos, *] 0 → 1", "layer 1 reads tok: (W_Q2, values) and prev: (W_K2) only: bos is never read"),
        ("W_O1[[][cs][oi][sn]:*, *] 0 → 1", "layer 1 reads tok: (W_Q2, values) and prev: (W_K2) only: positions are never read"),
        *((name, WHOLE_CONTEXT) for name in [
            "W_Q1[0, sin:0] × −1", "W_Q1[0, sin:0] → 0", "W_Q1[1, cos:0] → 0", "W_Q1[2, cos:1] → 0",
            "W_Q1[2, sin:1] → 0", "W_Q1[3, cos:1] → 0", "W_Q1[3, sin:1] → 0",
            "W_Q1[1, cos:1] 0 → s*sqrt(sqrt(2)/4 + 1/2)", "W_K1[2, sin:1] 0 → 1", "W_K1[0, bos] 0 → 1"]),
        ("W_Q2[[]0, sin:1] 0 → s", "adds at most 0.8·s to keys after an a, below the s a match scores: over ≤ 15 keys "
                                  "the match keeps ≥ 1/(1 + 15e^−6) = 0.96 ≥ 0.9"),
        ("W_Q2[[]3, cos:1] 0 → s", "adds at most 0.8·s to keys after a d, below the s a match scores: over ≤ 15 keys "
                                  "the match keeps ≥ 0.96 ≥ 0.9"),
    ],
    "08_induction_repeated": [
        ("whole answer × 10", "scores × 100 and logits × 1000 only where out: is set: the flat first half stays flat "
                              "(BOS writes nothing), the second half only gets surer of the right letter"),
        ("s × 10", SCALED_UP),
        ("γ × 10", "logits × 10 only where out: is set: flat stays flat, a right prediction only gets surer"),
        ("W_[QKV][[]*, out:*] 0 → *", "head 1.0 reads out:, which only head 1.0 itself writes: zero at its input"),
        ("W_Q[[]*, bos] 0 → *", "only the BOS query reads bos; BOS sees one key, and nothing is predicted from BOS"),
        ("W_O[[]tok:*, *] 0 → 1", "W_U reads out: only, and layer 1 is the last: tok: is never read after it"),
        ("W_O[[]prev:*, *] 0 → 1", "W_U reads out: only, and layer 1 is the last: prev: is never read after it"),
        ("W_O[[]bos, *] 0 → 1", "W_U reads out: only, and layer 1 is the last: bos is never read after it"),
        ("W_U[[]z, bos] 0 → γ", "bos is 1 only at BOS, whose prediction is never scored (no head writes bos)"),
    ],
}


def allowed_for(attempt) -> list[tuple[str, str]]:
    """The puzzle's reviewed equivalents: this module's list for its id, and its file's own ALLOWED_MUTANTS."""
    return [*ALLOWED.get(attempt.puzzle.id, ()), *(tuple(x) for x in getattr(attempt, "allowed_mutants", ()))]
