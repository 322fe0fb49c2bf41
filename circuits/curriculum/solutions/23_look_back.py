"""Puzzle 23 · Challenge: look back as far as the token says

Challenge for the chapter on positions and induction (puzzles 04–08). There, a head looked
a fixed distance back, or one step past a position another head had found. Here the
distance is written in the query's own token. The worksheet gives the behaviour, the givens
and the constraints; the mechanism is yours.

Tokens are the digits 0, 1, 2 and 3 (one-hot tok:0 … tok:3); the position embedding is
one-hot, pos:0 … pos:15 (d_model = 4 + 16 = 20). A digit d at position i is a pointer to
position i − d: a 0 points at itself, a 3 three places back. A pointer that reaches back
past the start stops at position 0.

Write one head, W_Q and W_K (d_head × 20, d_head of your choice), raw dot-product scores
with a causal mask, that at every position i puts ≥ 0.9 of its attention on the position
its digit points to, max(i − d, 0), for every string of 1 to 16 digits (the whole context,
n_ctx = 16): checked on every string of 1 to 6 digits and on random strings of up to 16.
Its value is given: the head's result is the digit it attends to. Multiply W_Q by a
sharpness symbol `s`, bound in `params`.

The behaviour, for "1021321":

    query   0 '1'   1 '0'   2 '2'   3 '1'   4 '3'   5 '2'   6 '1'
    points  −1      1       0       2       1       3       5
    key     0       1       0       2       1       3       5

(query 0's pointer reaches past the start, so it stops at 0). On "3333333333333333" the
keys are 0, 0, 0, 0, 1, 2, … 12: the same digit, the same distance back, at every length.

The same position must look 0, 1, 2 or 3 places back, depending on nothing but its digit.
"""

import sympy

from circuits import Attention, Basis, blank, Head, Inputs, Model, Puzzle, Uniform, Vocab
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
DIGITS = "0123"
N_CTX = 16
vocab = Vocab.chars_of(DIGITS)
resid = Basis([f"tok:{d}" for d in DIGITS] + [f"pos:{i}" for i in range(N_CTX)])  # d_model = 20
W_E = blank(resid, vocab.tokens)  # [20, 4]
for d in DIGITS:
    W_E[f"tok:{d}", d] = 1
W_pos = blank(resid, N_CTX)  # [20, 16]
for i in range(N_CTX):
    W_pos[f"pos:{i}", i] = 1
W_V = blank(len(DIGITS), resid)  # [4, 20], given: the result is the attended digit, one-hot
for k, d in enumerate(DIGITS):
    W_V[k, f"tok:{d}"] = 1
s = sympy.Symbol("s")  # the sharpness


def look_back(digits: list[str]) -> list[int]:
    """The target, in plain Python: query i attends to i − d (d its digit), or to 0 if that is before the start."""
    return [max(i - int(d), 0) for i, d in enumerate(digits)]


def build(answer) -> Model:
    head = Head(W_Q=answer.W_Q, W_K=answer.W_K, W_V=W_V)
    return Model(vocab, W_E, W_pos=W_pos, layers=[[head]], name="look_back", params=answer.params)


puzzle = Puzzle(
    number=23,
    name="look_back",
    title="Challenge: look back as far as the token says",
    answer=["W_Q", "W_K"],
    build=build,
    targets=[Attention(0, 0, look_back, per_input=True,
                       description="head 0.0 puts ≥ 0.9 of its attention on position max(i − d, 0), d the digit at i")],
    inputs=Inputs(vocab.tokens, min_len=1, max_len=N_CTX, families=[Uniform()]),
    examples=["1021321", "3333333333333333", "0000000000000000", "0123012301230123", "3210321032103210"],
    sharpness=["s"],
    reads={},  # the mechanism is yours: each matrix may read any direction
    source="issue 37: a challenge whose mechanism the positions chapter did not walk through",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# A query's vector is a sum, its digit's part plus its position's part, so the score of key j
# is (something of d and j) + (something of i and j). Complete the square:
# −(j − (i − d))² / 2 = (i − d)·j − j²/2 + (a constant of the query). The key gives (j, −j²/2),
# the query (i − d, 1), both times s: a parabola in j whose top is at i − d, its neighbours
# s/2 below; past the start it falls all the way, so the top visible key is 0.
W_Q = blank(2, resid)
W_K = blank(2, resid)
for i in range(N_CTX):
    W_Q[0, f"pos:{i}"] = s * i
    W_K[0, f"pos:{i}"] = i
    W_K[1, f"pos:{i}"] = -i * i / 2
for d in DIGITS:
    W_Q[0, f"tok:{d}"] = -s * int(d)
    W_Q[1, f"tok:{d}"] = s
params = {"s": 10}


# ── stub: what `circuits reset` restores below the answer line ─────────────────────────
# # W_Q, W_K: (d_head, 20), d_head of your choice; write W_Q with the symbol s.
# # blank(d_head, resid) gives a zero matrix you can fill by name: W_K[0, "pos:3"] = 1.
# W_Q = FILL_ME_IN("(d_head, 20)")
# W_K = FILL_ME_IN("(d_head, 20)")
