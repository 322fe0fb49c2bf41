"""The reviewed allow-lists of mutation testing: per puzzle, the mutants that may pass and why each is not a wrong
circuit.

A mutant may pass only if this list says why: the edit is multiplied by a zero (exactly equivalent),
or the check covers every input the model can take and the edited answer meets the worksheet on all
of them (another correct answer, not a missed bug). Read by tests/test_mutants.py and `circuits audit`;
a puzzle outside this project lists its own as ALLOWED_MUTANTS in its reference solution. A mutant that one of the
audit's rules proves equivalent (audit/equivalence.py: a BOS-only query, a masked entry, a direction nothing
writes, directions always on together) needs no entry: the audit spares it before it reads this list.
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
    "04_previous_token": [
        ("whole answer × 10", SCALED_UP),
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
        ("W_[QK]_[bc][[]*, [cs][oi][sn]:*", POSITION_ONLY),
        *(
            (f"W_Q_f[[]{r}, {d}] → 0", POINTER)
            for r, d in ((0, "v:1"), (1, "v:0"), (2, "v:2"), (2, "v:3"), (3, "v:2"), (3, "v:3"))
        ),
        ("W_K_f[[]*, [cs][oi][sn]:*", POINTER),
    ],
    "07_induction_k_composition": [
        ("whole answer × 10", SCALED_UP),
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
    ],
}


# ── curriculum A (puzzles 09–15): kept in one block to ease merging (moved here from tests/test_mutants.py) ───────────
ALLOWED_CURRICULUM_A: dict[str, list[tuple[str, str]]] = {
    "09_duplicate_token": [
        ("whole answer × 10", SCALED_UP),
    ],
    "10_seen_before": [],
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
    ],
    "13_copy_suppression": [],
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
        (
            "W_V[12][[]0, tok:*] 0 → 1",
            (
                "(a) and (b) hold each head on keep or BOS (≥ 0.9; the reference ≥ 0.9995, "
                "which these edits do not change): another word's value is weighted by "
                "≤ 5e-4, moving a logit by ≤ 0.005"
            ),
        ),
    ],
    "15_q_composition": [],
}
ALLOWED.update(ALLOWED_CURRICULUM_A)

# --- curriculum B (puzzles 16-21): kept apart to ease merging (moved here from tests/test_mutants.py) -----------------
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
    "18_histogram": [],
    "20_find_min": [
        ("whole answer × 10", SCALED_UP),
    ],
    "21_ioi_mini": [
        (
            "W_Q0[[]4, tok:and] 0 → s",
            "row 4 meets key pos:0, which is BOS: 'and' (whose target is BOS) only gains on it",
        ),
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
    ],
    "23_look_back": [
        *((name, DIGIT_0) for name in ("W_Q[[]1, tok:0]: × −1", "W_Q[[]1, tok:0]: → 0", "W_Q[[]0, tok:0]: 0 → 15*s")),
        (
            "W_K[[]0, pos:0]: 0 → -112.5",
            "key 0 is the target only where the pointer reaches the start or past it (i − d ≤ 0); there the edit "
            "adds −112.5·s·(i − d) ≥ 0 to key 0, which already led, and elsewhere key 0 only sinks further",
        ),
        ("whole answer × 10", SCALED_UP),
    ],
    "24_other_kind": [
        ("whole answer × 10", SCALED_UP),
    ],
    "25_equal_mlp": [
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
        ("W_U[[]*, 5] → 0", EVERY_PAIR),
    ],
    "29_smaller_by_value": [
        (
            "W_in[[]*, 2] 0 → -*",
            "a unit that reads bos with a negative weight: bos is 1 only at BOS, whose value and one are 0, so the "
            "unit stays silent there as before; at a digit bos is 0",
        ),
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
        ("W_V0[[]*, pos:10] 0 → 1", "head 0.0 reads position 10 only from a query at position 11, past n_ctx = 11"),
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
    ],
}
ALLOWED.update(ALLOWED_CHALLENGES_A)
