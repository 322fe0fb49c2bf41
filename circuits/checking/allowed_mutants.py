"""The reviewed allow-lists of mutation testing: per puzzle, the mutants that may pass and why each is not a wrong
circuit.

A mutant may pass only if this list says why: the edit is multiplied by a zero (exactly equivalent),
or the check covers every input the model can take and the edited answer meets the worksheet on all
of them (another correct answer, not a missed bug). Read by tests/test_mutants.py and `circuits audit`;
a puzzle outside this project lists its own as ALLOWED_MUTANTS in its reference solution.
"""

SCALED_UP = "more sharpness only raises attention on the targets (lower bounds); the values it writes are unchanged"
WHOLE_CONTEXT = (
    "the heads read positions only and every length up to n_ctx is checked, so passing means the "
    "pattern is right at every position the model has: another correct answer"
)

POSITION_ONLY = (
    "heads 0.1 and 0.2 read positions only, so their pattern is the same on every input, and inputs "
    "of every length up to n_ctx = 16 are checked: passing means right at every query and key, "
    "another correct answer"
)
POINTER = (
    "head 1.0's pattern is a function of the copied position and the query's position only, and the "
    "check covers every (copy, query) pair (the Copies family): another correct answer"
)

ALLOWED: dict[str, list[tuple[str, str]]] = {
    "03_uniform": [
        ("W_Q[[]0, *] 0 → 1", "W_K is all zero, so every score stays 0 and the pattern stays uniform"),
        ("W_K[[]0, *] 0 → 1", "W_Q is all zero, so every score stays 0 and the pattern stays uniform"),
    ],
    "04_previous_token": [
        ("whole answer × 10", SCALED_UP),
        ("s × 10", SCALED_UP),
        *(
            (name, WHOLE_CONTEXT)
            for name in [
                "W_Q_self[1, sin:1] 0 → s",
                "W_K_self[3, sin:0] 0 → 1",
                "W_Q_prev[0, sin:0] × −1",
                "W_Q_prev[0, sin:0] → 0",
                "W_Q_prev[1, cos:0] × −1",
                "W_Q_prev[1, cos:0] → 0",
                "W_Q_prev[1, sin:1] 0 → s*cos(pi/32)",
                "W_K_prev[3, sin:0] 0 → 1",
            ]
        ),
    ],
    "06_induction_pointer": [
        ("s × 10", SCALED_UP),
        ("W_[QK]_[bc][[]*, [cs][oi][sn]:*", POSITION_ONLY),
        *(
            (f"W_Q_f[[]{r}, {d}] → 0", POINTER)
            for r, d in ((0, "v:1"), (1, "v:0"), (2, "v:2"), (2, "v:3"), (3, "v:2"), (3, "v:3"))
        ),
        ("W_K_f[[]*, [cs][oi][sn]:*", POINTER),
    ],
    "07_induction_k_composition": [
        ("whole answer × 10", SCALED_UP),
        ("s × 10", SCALED_UP),
        *(
            (name, WHOLE_CONTEXT)
            for name in [
                "W_Q1[0, sin:0] × −1",
                "W_Q1[0, sin:0] → 0",
                "W_Q1[1, cos:0] → 0",
                "W_Q1[2, cos:1] → 0",
                "W_Q1[2, sin:1] → 0",
                "W_Q1[3, cos:1] → 0",
                "W_Q1[3, sin:1] → 0",
                "W_Q1[1, cos:1] 0 → s*sqrt(sqrt(2)/4 + 1/2)",
                "W_K1[2, sin:1] 0 → 1",
            ]
        ),
    ],
    "08_induction_repeated": [
        (
            "W_[OU][[]*, :] + 0.25 (tolerance probe)",
            (
                "reviewed, accepted: 08's targets are the seed's measurement, "
                "mean log-probs within bands, and a bias of a quarter in one row "
                "stays inside them; the puzzle promises the measurement, not exact "
                "logits"
            ),
        ),
        (
            "whole answer × 10",
            "scores × 100 and logits × 1000 only where out: is set: the flat first half stays flat "
            "(BOS writes nothing), the second half only gets surer of the right letter",
        ),
        ("s × 10", SCALED_UP),
        ("γ × 10", "logits × 10 only where out: is set: flat stays flat, a right prediction only gets surer"),
    ],
}


# ── curriculum A (puzzles 09–15): kept in one block to ease merging (moved here from tests/test_mutants.py) ───────────
BOS_QUERY_ONLY = "only the BOS query reads bos; BOS sees one key (itself), which gets all the attention"
ALLOWED_CURRICULUM_A: dict[str, list[tuple[str, str]]] = {
    "09_duplicate_token": [
        ("whole answer × 10", SCALED_UP),
        ("s × 10", SCALED_UP),
        ("W_Q[[]5, pos:0] 0 → s", "pos:0 is BOS's position, and BOS sees one key (itself)"),
        *(
            (f"W_Q[[]{n + 5}, pos:{n}] 0 → s", "the row's key reads pos:n+1, after the query at n: masked, never seen")
            for n in range(1, 11)
        ),
        ("W_K columns bos ↔ pos:0", "bos and pos:0 are both 1 at position 0 (BOS) and 0 everywhere else"),
    ],
    "10_seen_before": [
        ("s × 10", SCALED_UP),
    ],
    "11_copying_head": [
        (
            "W_[VO][[]*, :] + 0.25 (tolerance probe)",
            (
                "reviewed, accepted: the task is a copying score ≥ 0.9 and the "
                "attended token predicted; a bias of a quarter in one row keeps "
                "both, and the worksheet asks no more"
            ),
        ),
        ("whole answer × 10", "logits × 100: the attended token, already the top guess, only gets surer"),
        ("γ × 10", "logits × 10: the attended token, already the top guess, only gets surer"),
        *(
            (
                f"W_V[[]0, tok:{t}] → 0",
                (
                    f"{t} is written as (0, ±.951)γ, still nearest its own corner: {t} keeps the "
                    "top logit, by .345γ: log-prob −0.031 ≥ −0.1, copying score 1.0. The "
                    "logits depend on the attended token alone (5 cases, every one checked): "
                    "another correct answer"
                ),
            )
            for t in "be"
        ),
    ],
    "12_successor_head": [
        (
            "W_O[[]out:*, :] + 0.25 (tolerance probe)",
            (
                "reviewed, accepted: the task is each digit's successor raised "
                "most and predicted; a bias of a quarter in one row of W_O keeps "
                "both, and the worksheet asks no more"
            ),
        ),
        ("whole answer × 10", "logits × 100: the successor, already the top guess, only gets surer"),
        ("γ × 10", "logits × 10: the successor, already the top guess, only gets surer"),
    ],
    "13_copy_suppression": [
        ("s × 10", SCALED_UP),
    ],
    "14_skip_trigram": [
        (
            "W_[VO][12][[]*, :] + 0.25 (tolerance probe)",
            (
                "reviewed, accepted: the targets are log-prob bands on the "
                "completions and the heads' attention; a bias of a quarter "
                "in one row stays inside the bands"
            ),
        ),
        ("whole answer × 10", "scores × 100 and logits × 100: the right keys and the right completion only get surer"),
        ("s × 10", SCALED_UP),
        ("γ × 10", "logits × 10 where a head attends to keep: the right completion only gets surer"),
        (
            "W_V[12][[]0, tok:*] 0 → 1",
            (
                "(a) and (b) hold each head on keep or BOS (≥ 0.9; the reference ≥ 0.9995, "
                "which these edits do not change): another word's value is weighted by "
                "≤ 5e-4, moving a logit by ≤ 0.005"
            ),
        ),
    ],
    "15_q_composition": [
        ("s × 10", SCALED_UP),
    ],
}
ALLOWED.update(ALLOWED_CURRICULUM_A)

# --- curriculum B (puzzles 16-21): kept apart to ease merging (moved here from tests/test_mutants.py) -----------------
IOI_BOS_QUERY = (
    "the edit changes only the scores of the query at position 0, BOS (pos:0 is BOS's alone, and row 4's "
    "query is −s·pos:0), and the BOS query sees one key, itself: equivalent on every input"
)
IOI_LATER_KEY = (
    "row 4 + i of head 0.0 reads key pos:i; the edit gives it the query at position i − 5, which cannot "
    "see position i (causal mask): equivalent on every input"
)
IOI_FILLER_KEY = (
    "rows 5–15 of head 0.0 carry the query −s·pos:i, so the 1 lowers keys holding this filler by s for "
    "the query at position i: a filler is never head 0.0's target (an earlier copy of a name, or BOS), so "
    "the attention on the target only rises, on every input"
)
ALLOWED_B: dict[str, list[tuple[str, str]]] = {
    "17_kv_memory": [
        (
            "W_in rows 0 ↔ 1",
            "units 0 and 1 (Ada Lovelace, Alan Turing) both write city:London: swapping their keys "
            "stores the same two facts",
        ),
    ],
    "18_histogram": [
        ("s × 10", "a larger s only shrinks what the unpicked keys leak (e^−s of a picked key's weight)"),
    ],
    "20_find_min": [
        ("whole answer × 10", SCALED_UP),
        ("s × 10", SCALED_UP),
    ],
    "21_ioi_mini": [
        ("W_[QK]0 columns bos ↔ pos:0", "BOS always stands at position 0: bos and pos:0 are the same on every input"),
        (
            "W_Q0[[]4, tok:and] 0 → s",
            "row 4 meets key pos:0, which is BOS: 'and' (whose target is BOS) only gains on it",
        ),
        ("W_Q0[[]*, pos:0] *", IOI_BOS_QUERY),
        ("W_K0[[]4, *", IOI_BOS_QUERY),
        *((f"W_Q0[{10 + k}, pos:{1 + k}] 0 → s", IOI_LATER_KEY) for k in range(6)),
        *((f"W_K0[{row}, tok:{f}] 0 → 1", IOI_FILLER_KEY) for row, f in ((5, "then"), (6, "gave"), (7, "to"))),
        (
            "W_Q1[[]0, *] 0 → s",
            "W_K1 reads dup only, so W_Q1's one row only sets how much 'to' prefers a key with dup: "
            "at 'to' an added entry reads 0 (another tok:, bos, pos:0–5, s:, out:), ≈ 0 (dup) or "
            "its own position (×2: sharper); no other query has a target",
        ),
        *(
            (f"W_Q2[[]*, {d}] 0 → *", "head 2.0 has a target only at 'to', at position 6–11, where this direction is 0")
            for d in ("tok:[ABCD]??", "tok:and", "tok:then", "tok:gave")
        ),
        (
            "W_K2[[][1-4], *] 0 → 1",
            "rows 1–4 meet the query −2s·s:x, non-zero at 'to' only in the subject's row: the "
            "1 lowers by 2s keys that are never the IO (a filler, BOS, positions other than 1 "
            "and 3, the second S via dup; out: is 0 at layer 2)",
        ),
        ("whole answer × 10", SCALED_UP),
        ("s × 10", SCALED_UP),
    ],
}
ALLOWED.update(ALLOWED_B)


def allowed_for(attempt) -> list[tuple[str, str]]:
    """The puzzle's reviewed equivalents: this module's list for its id, and its file's own ALLOWED_MUTANTS."""
    return [*ALLOWED.get(attempt.puzzle.id, ()), *(tuple(x) for x in getattr(attempt, "allowed_mutants", ()))]


# --- puzzles that ask for invention (issue 28: challenges 22–25, capstone 26) -----------------------------------
EVERY_PAIR = (
    "the model takes two tokens (n_ctx = 2), nothing is asked after one, and every one of the 25 pairs is "
    "checked: passing means the readout peaks at (a + b) mod 5 after every input the model can take, "
    "another correct answer (the |x + y| − |x − y| products leave the logits slack)"
)
SHARPER_ROW = (
    "every query already reads 1 · s from its token, and pos:i is 1 at position i only: the edit doubles "
    "that one query, so its row of scores keeps its ranking and only gets sharper"
)
DIGIT_0 = (
    "a 0 points at the query itself, the latest key it sees: any score that rises with the key's position "
    "finds it, and the edit leaves digit 0's scores rising in j (s·i·j and more), the other digits' untouched"
)
ALLOWED_INVENTION: dict[str, list[tuple[str, str]]] = {
    "22_recent_vowel": [
        ("W_Q[[]0, pos:*] 0 → s", SHARPER_ROW),
        ("whole answer × 10", SCALED_UP),
        ("s × 10", SCALED_UP),
    ],
    "23_look_back": [
        *((name, DIGIT_0) for name in ("W_Q[[]1, tok:0]: × −1", "W_Q[[]1, tok:0]: → 0", "W_Q[[]0, tok:0]: 0 → 15*s")),
        ("W_Q[[]1, pos:0]: 0 → 15*s", "only query 0 reads pos:0, and it sees one key, key 0: nothing to tell apart"),
        (
            "W_K[[]0, pos:0]: 0 → -112.5",
            "key 0 is the target only where the pointer reaches the start or past it (i − d ≤ 0); there the edit "
            "adds −112.5·s·(i − d) ≥ 0 to key 0, which already led, and elsewhere key 0 only sinks further",
        ),
        ("whole answer × 10", SCALED_UP),
        ("s × 10", SCALED_UP),
    ],
    "24_other_kind": [
        ("W_Q[[]2, 2] 0 → s", "only the BOS query reads bos, and BOS sees one key and has no target"),
        ("whole answer × 10", SCALED_UP),
        ("s × 10", SCALED_UP),
    ],
    "25_equal_mlp": [
        ("W_in[[]*, 3] 0 → 1", "the MLP reads eq, which only the MLP itself writes: zero at its input"),
        ("W_in rows 1 ↔ 2", "units 1 and 2 write the same column of W_out (−1 into eq): swapping them changes nothing"),
        ("W_in rows 3 ↔ 4", "units 3 and 4 write the same column of W_out (+1 into eq): swapping them changes nothing"),
        ("W_in columns 0 ↔ 1", "swapping x and y swaps units 1 ↔ 2 and 3 ↔ 4, which write alike: x = y is symmetric"),
    ],
    "26_modular_addition": [
        (
            "W_in rows * ↔ *",
            "the two units swapped (relu(±(x + y)) or relu(±(x − y)) of one product) have equal "
            "columns of W_out: exactly the same MLP",
        ),
        *((name, EVERY_PAIR) for name in ("W_U[[]*, 5] → 0", "s × 10")),
    ],
    "29_smaller_by_value": [
        ("W_Q[[]*, 2] 0 → s", "only the BOS query reads bos, and BOS sees one key and has no target"),
        ("W_in[[]*, [3-7]] 0 → *", "the MLP reads free:*, which only the MLP itself writes: zero at its input"),
        (
            "W_in[[]*, 2] 0 → -*",
            "a unit that reads bos with a negative weight: bos is 1 only at BOS, whose value and one are 0, so the "
            "unit stays silent there as before; at a digit bos is 0",
        ),
        ("s × 10", SCALED_UP),
    ],
}
ALLOWED.update(ALLOWED_INVENTION)

# --- challenges for the OV and composition chapters (issue 28: puzzles 27 and 28) ----------------------------------
ALIKE = (
    "head 1.0's query and key read prev:* alike, so relabelling the letters in prev:* or flipping one's sign on "
    "both sides leaves every match (a product of the two) unchanged: another correct answer"
)
FIRST_LETTER = (
    "query 1, the first letter, sees only BOS and itself, and reads no prev:* (its predecessor is BOS): "
    "its own key scores −s, so BOS keeps a lead of at least s/2 under this edit"
)
ALLOWED_CHALLENGES_A: dict[str, list[tuple[str, str]]] = {
    "27_split_copy": [
        (
            "whole answer × 10",
            "logits × 100: each column stays one-hot up to a shift, the ties exact, the rest further back",
        ),
        ("γ × 10", "logits × 10: each column stays one-hot up to a shift, the ties exact, the rest further back"),
        ("W_V[[]*, out:*] 0 → 1", "the head reads out:, which only the head itself writes: zero at its input"),
    ],
    "28_same_predecessor": [
        *(
            (name, ALIKE)
            for name in (
                "W_V0[[]*, tok:*] × −1",
                "W_O0[[]prev:*, *] × −1",
                "W_V0 rows * ↔ *",
                "W_V0 columns tok:* ↔ tok:*",
                "W_O0 rows prev:* ↔ prev:*",
                "W_O0 columns * ↔ *",
            )
        ),
        ("W_V0[[]*, prev:*] 0 → 1", "head 0.0 reads prev:, which only head 0.0 itself writes: zero at its input"),
        ("W_V0[[]*, pos:10] 0 → 1", "head 0.0 reads position 10 only from a query at position 11, past n_ctx = 11"),
        ("W_Q1[[]*, bos] 0 → s", BOS_QUERY_ONLY),
        ("W_Q1[[]*, pos:0] *", "pos:0 is 1 at BOS only; BOS sees one key (itself), which gets all the attention"),
        ("W_K1[[]5, *", "row 5's query reads pos:0, set at BOS only; BOS sees one key (itself), which gets all of it"),
        ("W_Q1 columns bos ↔ pos:0", "bos and pos:0 are both 1 at BOS and 0 everywhere else: the same column"),
        ("W_K1 columns bos ↔ pos:0", "bos and pos:0 are both 1 at BOS and 0 everywhere else: the same column"),
        *(
            (name, FIRST_LETTER)
            for name in ("W_Q1[[]4, pos:1] *", "W_Q1[[]5, pos:1] 0 → s", "W_Q1[[]6, pos:1] → 0", "W_K1[[]6, pos:1] → 0")
        ),
        (
            "W_Q1[[]6, pos:2] 0 → s",
            "key 1, the first letter, is never a target (its predecessor is BOS): the edit "
            "only lowers it further for query 2",
        ),
        (
            "W_Q1[[]15, prev:*] 0 → s",
            "key 10 is visible only to query 10, for which it is the query itself, already "
            "below BOS: the edit only lowers it further",
        ),
        *(
            (
                f"W_K1[[]{5 + i}, pos:{i + 1}] 0 → 1",
                f"row {5 + i}'s query reads pos:{i}; the key at position {i + 1} is after it, behind the causal mask",
            )
            for i in range(1, 10)
        ),
        ("s × 10", SCALED_UP),
    ],
}
ALLOWED.update(ALLOWED_CHALLENGES_A)
